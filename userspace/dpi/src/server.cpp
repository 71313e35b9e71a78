// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "server.hpp"

#include "conn.hpp"

#include <array>
#include <cerrno>
#include <cstring>

namespace dpi::detail
{

using proto::Msg;
using proto::Type;

Msg Server::serve(const std::shared_ptr<Conn> &c, const Msg &m)
{
	auto t = static_cast<Type>(m.type);
	std::string name = m.get_text();
	switch (t) {
	case Type::create: return create(c, m, name);
	case Type::join: return join(c, m, name);
	case Type::seg:
	case Type::commit:
	case Type::room:
	case Type::close: return segment(c, m);
	case Type::lookup: {
		auto owner = table_.directory_owner(name);
		if (!owner)
			throw Error(Errc::unknown_buffer, "no buffer '" + name + "' in the directory (node " +
			                                          std::to_string(node_id_) + ")");
		Msg r = proto::make(Type::lookup_reply, m.req_id);
		r.node = *owner;
		return r;
	}
	case Type::enroll: {
		if (!spec_.find(m.node))
			throw Error(Errc::invalid_argument, "enroll of unknown node " + std::to_string(m.node));
		table_.enroll(name, m.node);
		return proto::make(Type::enrolled, m.req_id);
	}
	case Type::open_region: {
		auto info = table_.open_region(name, c->pd());
		Msg r = proto::make(Type::region_info, m.req_id);
		r.addr = info.addr;
		r.rkey = info.rkey;
		r.region_size = info.size;
		return r;
	}
	default: throw Error(Errc::protocol, c->desc() + " sent unknown message type " + std::to_string(m.type));
	}
}

Msg Server::create(const std::shared_ptr<Conn> &c, const Msg &m, const std::string &name)
{
	if (name.empty() || name.size() > proto::name_max)
		throw Error(Errc::invalid_argument,
		            "buffer name must be 1.." + std::to_string(proto::name_max) + " bytes");
	BufferOptions o;
	o.kind = static_cast<BufferKind>(m.kind);
	o.segment_size = m.seg_size;
	o.segments = m.nseg;
	o.region_size = m.region_size;
	o.append_mode = static_cast<AppendMode>(m.len);
	if (o.kind == BufferKind::append) {
		if (m.len > static_cast<uint64_t>(AppendMode::automatic))
			throw Error(Errc::invalid_argument, "unknown append mode " + std::to_string(m.len));
		if (o.append_mode != AppendMode::rings && o.segment_size * o.segments < 128)
			throw Error(Errc::invalid_argument, "a shared log needs segment_size * segments >= 128");
		if (o.segment_size < 64 || o.segment_size > (1ULL << 30) || o.segment_size % 8)
			throw Error(Errc::invalid_argument, "segment size " + std::to_string(o.segment_size) +
			                                            " must be a multiple of 8 in 64..1 GiB");
		if (o.segments < 1 || o.segments > 512)
			throw Error(Errc::invalid_argument, "segments per source must be 1..512");
	} else if (o.kind == BufferKind::region) {
		if (o.region_size == 0 || o.region_size > (16ULL << 30))
			throw Error(Errc::invalid_argument, "region size must be 1 byte..16 GiB");
	} else {
		throw Error(Errc::invalid_argument, "unknown buffer kind " + std::to_string(m.kind));
	}
	ibv_pd *pd = nullptr;
	if (o.kind == BufferKind::region)
		pd = c ? c->pd() : any_pd_();
	auto made = table_.create(name, o, pd);
	Msg r = proto::make(Type::created, m.req_id);
	r.handle = made.handle;
	if (made.existed)
		r.flags = proto::flag_existed;
	return r;
}

Msg Server::join(const std::shared_ptr<Conn> &c, const Msg &m, const std::string &name)
{
	auto b = table_.append_buffer(name);
	// AppendMode::automatic means rings: measured, the shared log was never
	// ahead across appender counts at one chunk size, and this choice is made
	// before any chunk size is known (Documentation/benchmarks-dpi.md,
	// "Shared log against rings").
	bool want_log = !(m.flags & proto::flag_rings) && b->opts.append_mode == AppendMode::shared;
	std::string why;
	if (want_log && c && !c->atomics())
		why = "the owner's device " + c->device() + " has no remote atomics";
	else if (want_log && c) {
		if (auto g = table_.share_log(*b, c->pd(), why))
			return join_log(c, m, b, *g);
	}
	auto r = std::make_shared<Ring>(b->opts.segment_size, b->opts.segments);
	size_t bytes = b->opts.segment_size * b->opts.segments;
	r->mem = alloc_touched(bytes);
	r->mr.reset(ibv_reg_mr(c->pd(), r->mem.get(), bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
	if (!r->mr)
		fail_sys("ibv_reg_mr (ring of '" + name + "')", errno);
	c->reserve_recvs(b->opts.segments + 2);
	r->node = c->peer();
	r->conn = c;
	table_.add_ring(*b, r);
	c->add_hosted(r);
	Msg rep = proto::make(Type::joined, m.req_id);
	rep.handle = b->id;
	rep.ring = r->id;
	rep.addr = reinterpret_cast<uint64_t>(r->mem.get());
	rep.rkey = r->mr->rkey;
	rep.seg_size = b->opts.segment_size;
	rep.nseg = b->opts.segments;
	if (b->opts.append_mode == AppendMode::shared && !(m.flags & proto::flag_rings))
		rep.set_text(why);
	return rep;
}

Msg Server::join_log(const std::shared_ptr<Conn> &c, const Msg &m, const std::shared_ptr<Buffer> &b,
                     const BufferTable::LogGrant &g)
{
	auto r = std::make_shared<Ring>(b->opts.segment_size, 1);
	r->shared = true;
	r->buffer = b;
	// its commits, one room request, a sync and close
	c->reserve_recvs(shared::commit_window + 3);
	r->node = c->peer();
	r->conn = c;
	table_.add_ring(*b, r);
	c->add_hosted(r);
	Msg rep = proto::make(Type::joined, m.req_id);
	rep.flags = proto::flag_shared;
	rep.handle = b->id;
	rep.ring = r->id;
	rep.addr = g.addr;
	rep.rkey = g.rkey;
	rep.seg_size = g.capacity;
	rep.len = shared::max_record(g.capacity, b->opts.segment_size);
	rep.seq = g.ctl_addr;
	rep.region_size = g.ctl_rkey;
	rep.nseg = 0;
	return rep;
}

Msg Server::segment(const std::shared_ptr<Conn> &c, const Msg &m)
{
	auto t = static_cast<Type>(m.type);
	std::shared_ptr<Ring> r = c->hosted(m.ring);
	if (!r)
		throw Error(Errc::protocol, c->desc() + " used unknown ring " + std::to_string(m.ring));
	if (t == Type::close) {
		table_.close_ring(*r);
		return proto::make(Type::closed, m.req_id);
	}
	if (t == Type::room) {
		auto at = table_.room(*r, c, m.req_id, m.len);
		if (!at)
			return Msg{}; // answered by the consumer once it got there
		Msg rep = proto::make(Type::room_ok, m.req_id);
		rep.seq = *at;
		return rep;
	}
	if (t == Type::seg && m.seq != UINT64_MAX && r->shared)
		throw Error(Errc::protocol, c->desc() + " sent a seg for a shared-log source");
	if (t == Type::commit && !r->shared)
		throw Error(Errc::protocol, c->desc() + " sent a commit for a ring source");
	if (t == Type::commit) {
		if (m.len < 1 || m.len > shared::commit_batch)
			throw Error(Errc::protocol, c->desc() + " committed " + std::to_string(m.len) + " ranges");
		std::array<shared::Packed, shared::commit_batch> p{};
		std::memcpy(p.data(), m.text, sizeof(p));
		if (std::string err = table_.commit(*r, p.data(), m.len, c->desc()); !err.empty())
			throw Error(Errc::protocol, err);
		if (m.flags & proto::flag_ack)
			return proto::make(Type::seg_ack, m.req_id);
		return Msg{};
	}
	if (m.seq == UINT64_MAX) {
		// a sync: everything before it on this connection was processed
		table_.notify();
	} else if (std::string err = table_.announce(*r, m.seq, m.len, c->desc()); !err.empty()) {
		throw Error(Errc::protocol, err);
	}
	if (m.flags & proto::flag_ack)
		return proto::make(Type::seg_ack, m.req_id);
	return Msg{};
}

} // namespace dpi::detail
