// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// libdpi runtime.  Data path of an append buffer (see Documentation/dpi.md
// for the why):
//  * every source owns a private ring of N segments in the owner's memory;
//  * records are staged by memcpy into a pre-registered block (or, at or
//    above the measured critical size, registered in place) and RDMA-written
//    into the current segment, unsignaled;
//  * a sealed segment is announced by a `seg` Send on the same connection.
//    RC ordering makes the owner see the Send only after the Writes before it
//    were placed, so no footer polling, atomics or immediate data are needed;
//  * the consumer frees a segment with a `credit` Send back to the source;
//    a source without credit blocks: backpressure, never overwrite.
//
// Files: conn (one connection), pool (connections and PDs), cm (rdma_cm),
// progress (the progress thread), buffers and server (what this node hosts
// and the protocol that serves it), calibration (the critical size),
// appender, consumer and region (the user-facing objects).
#include "runtime.hpp"

#include "appender.hpp"
#include "consumer.hpp"
#include "region.hpp"

#include <dpi-internal/calibration.hpp>

#include <cerrno>
#include <cstdlib>

namespace dpi::detail
{

using proto::Msg;
using proto::Type;

Runtime::Runtime(Options o)
    : opts_(std::move(o)), table_(opts_.node_id),
      server_(table_, opts_.spec, opts_.node_id, [this] { return pool_.any_pd(); })
{
}

void Runtime::init()
{
	if (opts_.node_id >= 0)
		(void)opts_.spec.at(opts_.node_id);
	if (const char *cs = std::getenv("DPI_CRITICAL_SIZE"); cs && *cs && opts_.critical_size == 0)
		opts_.critical_size = std::strtoull(cs, nullptr, 0);
	critical_ = opts_.critical_size;

	ech_.reset(rdma_create_event_channel());
	if (!ech_)
		fail_sys("rdma_create_event_channel (is rdma_ucm loaded?)", errno);
	progress_.open(ech_.get());
	if (opts_.node_id >= 0)
		listen(opts_.spec.at(opts_.node_id));
	progress_.start([this](rdma_cm_event *ev) { return handle_cm(ev); },
	                [this](const Conn *c) { return pool_.find(c); },
	                [this](const std::shared_ptr<Conn> &c, const Msg &m) { dispatch(c, m); });
}

void Runtime::measure(ibv_pd *pd)
{
	std::lock_guard<std::mutex> g(crit_mu_);
	if (critical_)
		return;
	critical_ = critical_from(measure_costs(pd, kMeasureRounds));
}

size_t Runtime::critical_size()
{
	{
		std::lock_guard<std::mutex> g(crit_mu_);
		if (critical_)
			return critical_;
	}
	if (ibv_pd *pd = pool_.any_pd()) {
		measure(pd);
	} else { // anonymous client before any connection: use the first device
		int n = 0;
		DeviceListPtr list(ibv_get_device_list(&n));
		if (!list || n == 0)
			throw Error(Errc::system, "no RDMA device to measure the critical size on");
		ContextPtr ctx(ibv_open_device(list.get()[0]));
		list.reset();
		if (!ctx)
			fail_sys("ibv_open_device", errno);
		PdPtr tmp(ibv_alloc_pd(ctx.get()));
		if (tmp)
			measure(tmp.get());
	}
	std::lock_guard<std::mutex> g(crit_mu_);
	return critical_;
}

std::shared_ptr<Conn> Runtime::make_conn(int peer, std::string desc)
{
	return std::make_shared<Conn>(
	        counters_, [this](Conn &c) { conn_died(c); }, peer, std::move(desc));
}

// A request to `node` through the pool.  A connection that dies before the
// peer ever answered on it is replaced once: seen on siw right after the
// peer restarted, where a fresh connection can fail before its first
// message arrives.  Every request type is safe to repeat then, because the
// peer never processed it or dropped what it made with the connection.
Msg Runtime::call(int node, const Msg &m, std::shared_ptr<Conn> *used)
{
	const NodeAddress &a = opts_.spec.at(node);
	for (int attempt = 0;; ++attempt) {
		auto c = pool_.to(node, [&] { return connect(a); });
		try {
			Msg r = c->request(m, op_timeout());
			if (used)
				*used = c;
			return r;
		} catch (const Error &e) {
			if (e.code() != Errc::connection_lost || c->received() != 0 || attempt > 0)
				throw;
			debug("fresh connection to node ", std::to_string(node), " failed (", e.detail(),
			      "); retrying once");
		}
	}
}

void Runtime::conn_died(Conn &c)
{
	// A source that vanishes without closing aborts its rings; its flushed
	// segments stay consumable.
	table_.abort_open(c.hosted_rings(), "source " + c.desc() + " disconnected before closing (" + c.why() +
	                                            "); data it had not flushed is lost");
}

void Runtime::dispatch(const std::shared_ptr<Conn> &c, const Msg &m)
{
	auto t = static_cast<Type>(m.type);
	debug("conn ", ptr(c.get()), " got type ", std::to_string(m.type), " req ", std::to_string(m.req_id),
	      " status ", std::to_string(m.status));
	switch (t) {
	case Type::created:
	case Type::joined:
	case Type::seg_ack:
	case Type::closed:
	case Type::lookup_reply:
	case Type::enrolled:
	case Type::region_info:
	case Type::room_ok: c->complete(m); return;
	case Type::credit: c->add_credits(m.ring, m.len); return;
	default: break;
	}
	Msg reply = proto::make(Type::closed, m.req_id);
	try {
		reply = server_.serve(c, m);
	} catch (const Error &e) {
		reply.status = static_cast<int32_t>(e.code());
		reply.set_text(e.detail());
	}
	if (reply.type != 0 && m.req_id != 0)
		c->send_msg(reply);
}

void Runtime::create_buffer(const std::string &name, int owner, const BufferOptions &o)
{
	if (name.empty() || name.size() > proto::name_max)
		throw Error(Errc::invalid_argument,
		            "buffer name must be 1.." + std::to_string(proto::name_max) + " bytes");
	if (!opts_.spec.find(owner))
		throw Error(Errc::invalid_argument,
		            "owner node " + std::to_string(owner) + " is not in the cluster spec");
	Msg m = proto::make(Type::create);
	m.set_text(name);
	m.kind = static_cast<uint32_t>(o.kind);
	m.seg_size = o.segment_size;
	m.nseg = o.segments;
	m.region_size = o.region_size;
	m.len = static_cast<uint64_t>(o.append_mode);
	if (owner == opts_.node_id)
		(void)server_.serve(nullptr, m);
	else
		call(owner, m);
	Msg e = proto::make(Type::enroll);
	e.set_text(name);
	e.node = owner;
	int dir = opts_.spec.directory_node();
	if (dir == opts_.node_id)
		server_.serve(nullptr, e);
	else
		call(dir, e);
	table_.remember_owner(name, owner);
}

int Runtime::lookup(const std::string &name)
{
	if (auto owner = table_.cached_owner(name))
		return *owner;
	Msg m = proto::make(Type::lookup);
	m.set_text(name);
	int dir = opts_.spec.directory_node();
	Msg r = dir == opts_.node_id ? server_.serve(nullptr, m) : call(dir, m);
	table_.remember_owner(name, r.node);
	return r.node;
}

std::unique_ptr<Appender> Runtime::appender(const std::string &name)
{
	return make_appender(std::static_pointer_cast<Runtime>(shared_from_this()), name);
}

std::unique_ptr<Consumer> Runtime::consumer(const std::string &name, std::chrono::milliseconds wait)
{
	if (opts_.node_id < 0)
		throw Error(Errc::not_local,
		            "an anonymous client hosts no buffers; consume '" + name + "' on its owner");
	auto b = table_.claim_consumer(name, wait);
	return make_consumer(std::static_pointer_cast<Runtime>(shared_from_this()), std::move(b));
}

std::unique_ptr<Region> Runtime::region(const std::string &name)
{
	return make_region(std::static_pointer_cast<Runtime>(shared_from_this()), name);
}

void Runtime::shutdown()
{
	if (shut_)
		return;
	shut_ = true;
	progress_.stop();
	auto conns = pool_.take_all();
	for (auto &c : conns)
		if (c->cm_id() && c->up() && !c->dead())
			rdma_disconnect(c->cm_id());
	table_.clear(); // rings/regions deregister here; conns still hold rings
	for (auto &c : conns) {
		c->end("DPI runtime shut down");
		c->teardown(); // the returned id is destroyed here
	}
	listen_id_.reset();
	pool_.release_pds();
	ech_.reset();
	progress_.close();
}

} // namespace dpi::detail

namespace dpi
{

std::shared_ptr<Node> Node::start(Options opts)
{
	auto rt = std::make_shared<detail::Runtime>(std::move(opts));
	rt->init();
	return rt;
}

} // namespace dpi
