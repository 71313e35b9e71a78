// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The rdma_cm side of the runtime: listening on this node's address,
// connecting to a peer, and the CM events of established connections.
//
// An outgoing connection is set up on a private event channel, so that the
// caller can wait for its events with a deadline, and then migrated to the
// runtime's channel, where the progress thread sees its later events.
#include "runtime.hpp"

#include <dpi-internal/calibration.hpp>

#include <cerrno>
#include <cstring>
#include <poll.h>

namespace dpi::detail
{

namespace
{

// Identifies a libdpi peer in the connect request's private data.
struct ConnPriv {
	uint32_t magic;
	int32_t node;
};

// Waits on a private event channel for one event on a connecting id.
rdma_cm_event_type wait_cm(rdma_event_channel *ch, Deadline deadline, int &status)
{
	for (;;) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
		if (left <= 0)
			return static_cast<rdma_cm_event_type>(-1);
		pollfd p{ch->fd, POLLIN, 0};
		int r = ::poll(&p, 1, static_cast<int>(left));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		rdma_cm_event *ev = nullptr;
		if (rdma_get_cm_event(ch, &ev))
			continue;
		auto t = ev->event;
		status = ev->status;
		rdma_ack_cm_event(ev);
		return t;
	}
}

// A new rdma_cm id in the TCP port space (the one iWARP uses), owned.
CmIdPtr create_tcp_id(rdma_event_channel *ch)
{
	rdma_cm_id *raw = nullptr;
	if (rdma_create_id(ch, &raw, nullptr, RDMA_PS_TCP))
		fail_sys("rdma_create_id", errno);
	return CmIdPtr(raw);
}

// host:port resolved for rdma_cm, as a local address to bind to (passive)
// or a peer to reach; throws Error(errc, what) when it does not resolve.
AddrInfoPtr resolve_tcp(const std::string &host, uint16_t port, bool passive, Errc errc, const std::string &what)
{
	rdma_addrinfo hints{};
	rdma_addrinfo *res = nullptr;
	hints.ai_flags = passive ? RAI_PASSIVE : 0;
	hints.ai_port_space = RDMA_PS_TCP;
	std::string service = std::to_string(port);
	int rc = rdma_getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
	AddrInfoPtr info(res);
	if (rc || !info)
		throw Error(errc, what);
	return info;
}

} // namespace

void Runtime::listen(const NodeAddress &me)
{
	listen_id_ = create_tcp_id(ech_.get());
	AddrInfoPtr info =
	        resolve_tcp(me.host, me.port, true, Errc::spec_error, "cannot resolve own address " + me.host);
	if (rdma_bind_addr(listen_id_.get(), info->ai_src_addr))
		fail_sys("cannot bind " + node_desc(me) + " (is another process running as node " +
		                 std::to_string(me.id) + "?)",
		         errno);
	info.reset();
	if (!listen_id_->verbs)
		throw Error(Errc::system,
		            node_desc(me) + ": address " + me.host + " is not on an RDMA device (rdma link show?)");
	std::string dev = ibv_get_device_name(listen_id_->verbs->device);
	if (!me.device.empty() && me.device != dev)
		throw Error(Errc::spec_error,
		            node_desc(me) + " is on RDMA device " + dev + ", the spec says " + me.device);
	if (rdma_listen(listen_id_.get(), 64))
		fail_sys("rdma_listen on " + node_desc(me), errno);
	measure(pool_.pd_for(listen_id_->verbs));
}

std::shared_ptr<Conn> Runtime::connect(const NodeAddress &a)
{
	auto c = make_conn(a.id, node_desc(a));
	auto deadline = deadline_after(opts_.connect_timeout);
	EventChannelPtr ch(rdma_create_event_channel());
	if (!ch)
		fail_sys("rdma_create_event_channel", errno);
	try {
		// declared after ch: destroyed before it if anything throws
		CmIdPtr cid = create_tcp_id(ch.get());
		AddrInfoPtr info =
		        resolve_tcp(a.host, a.port, false, Errc::unreachable, c->desc() + ": cannot resolve " + a.host);
		int rc = rdma_resolve_addr(cid.get(), nullptr, info->ai_dst_addr, 2000);
		int err = errno;
		info.reset();
		if (rc)
			throw Error(Errc::unreachable, c->desc() + ": rdma_resolve_addr: " + std::strerror(err));
		int status = 0;
		auto t = wait_cm(ch.get(), deadline, status);
		if (t != RDMA_CM_EVENT_ADDR_RESOLVED)
			throw Error(Errc::unreachable,
			            c->desc() + ": address resolution failed (" +
			                    (static_cast<int>(t) < 0 ? std::string("timeout") : rdma_event_str(t)) +
			                    "); no RDMA device routes there?");
		if (rdma_resolve_route(cid.get(), 2000))
			throw Error(Errc::unreachable, c->desc() + ": rdma_resolve_route: " + std::strerror(errno));
		t = wait_cm(ch.get(), deadline, status);
		if (t != RDMA_CM_EVENT_ROUTE_RESOLVED)
			throw Error(Errc::unreachable, c->desc() + ": route resolution failed");
		std::string dev = ibv_get_device_name(cid->verbs->device);
		if (!a.device.empty() && a.device != dev)
			throw Error(Errc::spec_error, c->desc() + " is reached through RDMA device " + dev +
			                                      ", the spec says " + a.device);
		ibv_pd *pd = pool_.pd_for(cid->verbs);
		c->open(std::move(cid), pd);
		ConnPriv priv{proto::magic, opts_.node_id};
		rdma_conn_param p{};
		p.private_data = &priv;
		p.private_data_len = sizeof priv;
		p.responder_resources = c->rd_atom();
		p.initiator_depth = c->rd_atom();
		p.retry_count = 7;
		p.rnr_retry_count = 7;
		if (rdma_connect(c->cm_id(), &p))
			throw Error(Errc::unreachable, c->desc() + ": rdma_connect: " + std::strerror(errno));
		t = wait_cm(ch.get(), deadline, status);
		if (t != RDMA_CM_EVENT_ESTABLISHED) {
			std::string why = static_cast<int>(t) < 0       ? "timed out"
			                  : t == RDMA_CM_EVENT_REJECTED ? "refused (is a dpi node running there?)"
			                                                : rdma_event_str(t);
			throw Error(Errc::unreachable, c->desc() + ": connection " + why);
		}
		if (rdma_migrate_id(c->cm_id(), ech_.get()))
			fail_sys("rdma_migrate_id", errno);
	} catch (...) {
		c->teardown(); // its id goes before the private channel
		throw;
	}
	ch.reset();
	c->set_up();
	pool_.add(c);
	progress_.watch(*c);
	debug("conn ", ptr(c.get()), " to ", c->desc(), " established, qp ", std::to_string(c->cm_id()->qp->qp_num));
	measure(c->pd());
	return c;
}

// Returns an id to destroy once the event is acknowledged.
CmIdPtr Runtime::handle_cm(rdma_cm_event *ev)
{
	auto *c = static_cast<Conn *>(ev->id->context);
	debug("cm event ", rdma_event_str(ev->event), " status ", std::to_string(ev->status), " conn ", ptr(c));
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST: return accept(ev);
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c)
			c->set_up();
		return nullptr;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (c) {
			c->mark_dead("peer disconnected");
			rdma_disconnect(ev->id);
		}
		return nullptr;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (c)
			c->mark_dead(rdma_event_str(ev->event));
		return nullptr;
	default: return nullptr;
	}
}

// A connect request: a libdpi peer gets a connection, anything else a reject.
CmIdPtr Runtime::accept(rdma_cm_event *ev)
{
	ConnPriv priv{};
	if (ev->param.conn.private_data && ev->param.conn.private_data_len >= sizeof priv)
		std::memcpy(&priv, ev->param.conn.private_data, sizeof priv);
	if (priv.magic != proto::magic) {
		rdma_reject(ev->id, nullptr, 0);
		return CmIdPtr(ev->id);
	}
	auto nc = make_conn(priv.node,
	                    priv.node >= 0 ? "node " + std::to_string(priv.node) : std::string("an anonymous client"));
	try {
		ibv_pd *pd = pool_.pd_for(ev->id->verbs);
		nc->open(CmIdPtr(ev->id), pd); // the id is the connection's from here on
		rdma_conn_param p{};
		p.responder_resources = std::min<uint8_t>(nc->rd_atom(), ev->param.conn.initiator_depth);
		p.initiator_depth = std::min<uint8_t>(nc->rd_atom(), ev->param.conn.responder_resources);
		p.retry_count = 7;
		p.rnr_retry_count = 7;
		if (rdma_accept(ev->id, &p))
			fail_sys("rdma_accept", errno);
		pool_.add(nc);
		progress_.watch(*nc);
	} catch (const std::exception &) {
		CmIdPtr id = nc->teardown();
		if (!id) // open() threw before taking it
			id.reset(ev->id);
		rdma_reject(id.get(), nullptr, 0);
		return id;
	}
	return nullptr;
}

} // namespace dpi::detail
