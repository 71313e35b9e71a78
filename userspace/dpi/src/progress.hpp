// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The progress thread: one epoll loop over the rdma_cm event channel and
// every connection's receive completion channel.  It handles CM events and
// received messages; appenders and other callers poll their own send CQs.
#pragma once

#include "conn.hpp"
#include "proto.hpp"
#include <dpi-internal/verbs.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

namespace dpi::detail
{

class Progress
{
public:
	// Handles one CM event; returns an id to destroy once it is acknowledged.
	using CmHandler = std::function<CmIdPtr(rdma_cm_event *)>;
	// The live connection at this address, or nullptr.
	using ConnFinder = std::function<std::shared_ptr<Conn>(const Conn *)>;
	using Dispatch = std::function<void(const std::shared_ptr<Conn> &, const proto::Msg &)>;

	Progress() = default;
	Progress(const Progress &) = delete;
	Progress &operator=(const Progress &) = delete;
	~Progress();

	// Sets up the loop on `ech` (made non-blocking).
	void open(rdma_event_channel *ech);
	void start(CmHandler on_cm, ConnFinder find, Dispatch dispatch);
	// Adds `c`'s receive completions to the loop.
	void watch(Conn &c) const;
	// Stops and joins the thread.
	void stop();
	// Closes the loop's descriptors (after stop()).
	void close();

private:
	void run();

	rdma_event_channel *ech_ = nullptr;
	int epfd_ = -1;
	int stopfd_ = -1;
	CmHandler on_cm_;
	ConnFinder find_;
	Dispatch dispatch_;
	std::thread thread_;
	std::atomic<bool> stopping_{false};
};

} // namespace dpi::detail
