// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The runtime behind dpi::Node: it wires the connection pool, the CM
// handling, the progress thread, the server side and the calibration
// together, and hands out appenders, consumers and regions.
#pragma once

#include "buffers.hpp"
#include "conn.hpp"
#include "counters.hpp"
#include "pool.hpp"
#include "progress.hpp"
#include "server.hpp"
#include <dpi-internal/verbs.hpp>

#include <dpi/dpi.hpp>

#include <memory>
#include <mutex>

namespace dpi::detail
{

class Runtime final : public Node
{
public:
	explicit Runtime(Options o);
	Runtime(const Runtime &) = delete;
	Runtime &operator=(const Runtime &) = delete;
	~Runtime() override { shutdown(); }

	void init();

	// dpi::Node
	[[nodiscard]] int id() const noexcept override { return opts_.node_id; }
	[[nodiscard]] const ClusterSpec &spec() const noexcept override { return opts_.spec; }
	size_t critical_size() override;
	[[nodiscard]] Stats stats() const override { return counters_.snapshot(); }
	void create_buffer(const std::string &name, int owner, const BufferOptions &opts) override;
	int lookup(const std::string &name) override;
	std::unique_ptr<Appender> appender(const std::string &name) override;
	std::unique_ptr<Consumer> consumer(const std::string &name, std::chrono::milliseconds wait) override;
	std::unique_ptr<Region> region(const std::string &name) override;
	void shutdown() override;

	// For appenders, consumers and regions.
	[[nodiscard]] std::chrono::milliseconds op_timeout() const { return opts_.op_timeout; }
	Counters &counters() noexcept { return counters_; }
	BufferTable &table() noexcept { return table_; }
	// A request to `node` through the pool (see runtime.cpp for the retry);
	// `used` receives the connection that answered.
	proto::Msg call(int node, const proto::Msg &m, std::shared_ptr<Conn> *used = nullptr);

private:
	std::shared_ptr<Conn> make_conn(int peer, std::string desc);
	void measure(ibv_pd *pd);
	void dispatch(const std::shared_ptr<Conn> &c, const proto::Msg &m);
	void conn_died(Conn &c);
	// cm.cpp: the rdma_cm side
	void listen(const NodeAddress &me);
	std::shared_ptr<Conn> connect(const NodeAddress &a);
	CmIdPtr handle_cm(rdma_cm_event *ev);
	CmIdPtr accept(rdma_cm_event *ev);

	Options opts_;
	Counters counters_;
	BufferTable table_;
	Server server_;
	std::mutex crit_mu_;
	size_t critical_ = 0;

	// Released in reverse order by shutdown(): connections, the listener,
	// the protection domains, then the event channel they all used.
	EventChannelPtr ech_;
	ConnPool pool_;
	CmIdPtr listen_id_;
	Progress progress_;
	bool shut_ = false;
};

} // namespace dpi::detail
