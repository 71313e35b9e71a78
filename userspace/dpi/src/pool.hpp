// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The connection pool: one protection domain per device, every live
// connection (outgoing and accepted), and the outgoing one per peer node.
// Connections are long-lived because setting one up is expensive (the thesis
// measured 200 ms to the first byte, T:1281).
#pragma once

#include "conn.hpp"
#include <dpi-internal/verbs.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace dpi::detail
{

class ConnPool
{
public:
	using Connector = std::function<std::shared_ptr<Conn>()>;

	// The protection domain for device `ctx`, allocated on first use.
	ibv_pd *pd_for(ibv_context *ctx);
	// Some protection domain, or nullptr before any device was used.
	[[nodiscard]] ibv_pd *any_pd() const;
	// The live outgoing connection to `node`, or a new one from `connect`.
	// One connection attempt at a time.
	std::shared_ptr<Conn> to(int node, const Connector &connect);
	// Tracks `c` (its completions are served by the progress thread).
	void add(const std::shared_ptr<Conn> &c);
	// The tracked connection at `c`, or nullptr if it is gone.
	[[nodiscard]] std::shared_ptr<Conn> find(const Conn *c) const;
	// Stops tracking every connection and returns them.
	std::vector<std::shared_ptr<Conn>> take_all();
	// Frees the protection domains; every connection must be torn down.
	void release_pds();

private:
	mutable std::mutex mu_;
	std::mutex connect_mu_;
	std::map<ibv_context *, PdPtr> pds_;
	std::map<int, std::shared_ptr<Conn>> out_;
	std::vector<std::shared_ptr<Conn>> all_;
};

} // namespace dpi::detail
