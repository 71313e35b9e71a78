// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "server.hpp"

#include "conn.hpp"

#include <cerrno>

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
	if (o.kind == BufferKind::append) {
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
