// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The owner and directory side of the control protocol: create, join, seg,
// close, lookup, enroll and open_region requests, answered from this node's
// BufferTable.
#pragma once

#include "buffers.hpp"
#include "proto.hpp"

#include <functional>
#include <memory>

namespace dpi::detail
{

class Conn;

class Server
{
public:
	// `any_pd` gives a protection domain for requests made by this process
	// itself (no connection), or nullptr if there is none yet.
	Server(BufferTable &table, const ClusterSpec &spec, int node_id, std::function<ibv_pd *()> any_pd)
	    : table_(table), spec_(spec), node_id_(node_id), any_pd_(std::move(any_pd))
	{
	}

	// Serves request `m` from `c` (nullptr: from this process).  Returns the
	// reply, or a message of type 0 when none is due; errors are thrown as
	// dpi::Error for the caller to turn into an error reply.
	proto::Msg serve(const std::shared_ptr<Conn> &c, const proto::Msg &m);

private:
	proto::Msg create(const std::shared_ptr<Conn> &c, const proto::Msg &m, const std::string &name);
	proto::Msg join(const std::shared_ptr<Conn> &c, const proto::Msg &m, const std::string &name);
	proto::Msg join_log(const std::shared_ptr<Conn> &c, const proto::Msg &m, const std::shared_ptr<Buffer> &b,
	                    const BufferTable::LogGrant &g);
	proto::Msg segment(const std::shared_ptr<Conn> &c, const proto::Msg &m);

	BufferTable &table_;
	const ClusterSpec &spec_;
	const int node_id_;
	std::function<ibv_pd *()> any_pd_;
};

} // namespace dpi::detail
