/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Small helpers shared by the lab's verbs test programs (the C files of
 * tests/robust/, tests/soak/soak.c): a monotonic clock in milliseconds, an
 * rdma_cm event wait and a completion wait that give up after a timeout, so
 * a test whose peer never answers reports it instead of hanging; an rdma_cm
 * address lookup, a listener, a resolved id, one-SGE posts and a count of
 * async events.
 */
#ifndef SWIWARP_TESTS_LAB_VERBS_H
#define SWIWARP_TESTS_LAB_VERBS_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <rdma/rdma_cma.h>

static inline long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The waits below are written for Debian's kernels.  A debug kernel (KASAN,
 * lockdep, kmemleak) runs several times slower under TCG, and the lab says
 * how much in LAB_SLOWDOWN (tests/lab/lab); a wait for something that must
 * come is that much longer there, so slowness is not taken for a hang.
 */
static inline int lab_scaled_ms(int ms)
{
	static int scale;

	if (!scale) {
		const char *s = getenv("LAB_SLOWDOWN");

		scale = s ? atoi(s) : 1;
		if (scale < 1 || scale > 20)
			scale = 1;
	}
	return ms > INT_MAX / scale ? INT_MAX : ms * scale;
}

/* The next CM event on ch, or NULL if none arrives within ms (scaled). */
static inline struct rdma_cm_event *get_event(struct rdma_event_channel *ch,
					      int ms)
{
	struct rdma_cm_event *ev;
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	if (poll(&p, 1, ms < 0 ? ms : lab_scaled_ms(ms)) <= 0)
		return NULL;
	if (rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

/*
 * Polls cq every poll_us microseconds for one completion, for at most ms
 * (scaled).  Returns its status (wc filled in), or -1 on a poll error or
 * timeout.
 */
static inline int lab_wait_wc(struct ibv_cq *cq, int ms, struct ibv_wc *wc,
			      unsigned int poll_us)
{
	long long end = now_ms() + lab_scaled_ms(ms);

	while (now_ms() < end) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return -1;
		if (n == 1)
			return (int)wc->status;
		usleep(poll_us);
	}
	return -1;
}

/* An RC QP's attributes: one CQ for both queues, one SGE per WR. */
static inline struct ibv_qp_init_attr lab_rc_qp_attr(struct ibv_cq *cq, uint32_t sq, uint32_t rq)
{
	return (struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = sq, .max_recv_wr = rq, .max_send_sge = 1, .max_recv_sge = 1 },
	};
}

/* rdma_getaddrinfo of addr:port for RDMA_PS_TCP (NULL on failure). */
static inline struct rdma_addrinfo *lab_getai(const char *addr, int port, bool passive)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai = NULL;
	char ps[16];

	hints.ai_flags = passive ? RAI_PASSIVE : 0;
	snprintf(ps, sizeof(ps), "%d", port);
	if (rdma_getaddrinfo(addr, ps, &hints, &ai))
		return NULL;
	return ai;
}

/*
 * A listener on ch bound to src: 0, or -1 with errno set.  *lid is left
 * set when the id was made and a later step failed, so the caller's usual
 * clean-up destroys it.
 */
static inline int lab_listen(struct rdma_event_channel *ch, struct sockaddr *src, int backlog,
			     struct rdma_cm_id **lid)
{
	*lid = NULL;
	if (rdma_create_id(ch, lid, NULL, RDMA_PS_TCP) || rdma_bind_addr(*lid, src) ||
	    rdma_listen(*lid, backlog))
		return -1;
	return 0;
}

/*
 * One send WR with one SGE (raddr/rkey for RDMA Write and Read).  Returns
 * 0 or the error, which is also left in errno: providers return it, and
 * errno may be stale.
 */
static inline int post1(struct ibv_qp *qp, uint64_t id, enum ibv_wr_opcode op, void *buf,
			uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey,
			unsigned int flags)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = flags }, *bad;
	int rc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	rc = ibv_post_send(qp, &wr, &bad);
	if (rc)
		errno = rc;
	return rc;
}

/* One receive WR with one SGE; errors as post1(). */
static inline int recv1(struct ibv_qp *qp, uint64_t id, void *buf, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = ibv_post_recv(qp, &wr, &bad);

	if (rc)
		errno = rc;
	return rc;
}

/* A resolved, not yet connected id on ch (NULL on failure, why set). */
static inline struct rdma_cm_id *lab_resolved_id(struct rdma_event_channel *ch,
						 struct sockaddr *dst, int ms, char *why,
						 size_t wl)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		snprintf(why, wl, "create_id: %s", strerror(errno));
		return NULL;
	}
	if (rdma_resolve_addr(id, NULL, dst, 5000) || !(ev = get_event(ch, ms)) ||
	    ev->event != RDMA_CM_EVENT_ADDR_RESOLVED) {
		snprintf(why, wl, "resolve_addr: %s", strerror(errno));
		rdma_destroy_id(id);
		return NULL;
	}
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, 5000) || !(ev = get_event(ch, ms)) ||
	    ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		snprintf(why, wl, "resolve_route: %s", strerror(errno));
		rdma_destroy_id(id);
		return NULL;
	}
	rdma_ack_cm_event(ev);
	return id;
}

/*
 * The next event on ch, within ms, must be a connect request: the new
 * id it carries (acknowledged), or NULL with why saying what came
 * instead (another event, or a timeout).
 */
static inline struct rdma_cm_id *lab_connect_request(struct rdma_event_channel *ch, int ms,
						     char *why, size_t wl)
{
	struct rdma_cm_event *ev = get_event(ch, ms);
	struct rdma_cm_id *id;

	if (!ev || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		snprintf(why, wl, "no connect request (%s)",
			 ev ? rdma_event_str(ev->event) : "timeout");
		if (ev)
			rdma_ack_cm_event(ev);
		return NULL;
	}
	id = ev->id;
	rdma_ack_cm_event(ev);
	return id;
}

/*
 * Wait for n RDMA_CM_EVENT_ESTABLISHED on ch (2 for both ends of a pair on
 * one channel): 0, or -1 with why ("event X" for any other event, "not
 * established" when none came within ms).
 */
static inline int lab_wait_established(struct rdma_event_channel *ch, int n, int ms, char *why,
				       size_t wl)
{
	struct rdma_cm_event *ev;
	int est = 0;

	while (est < n && (ev = get_event(ch, ms))) {
		bool ok = ev->event == RDMA_CM_EVENT_ESTABLISHED;

		if (!ok)
			snprintf(why, wl, "event %s", rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		if (!ok)
			return -1;
		est++;
	}
	if (est < n) {
		snprintf(why, wl, "not established");
		return -1;
	}
	return 0;
}

/*
 * A loopback connection on one device is made in two halves around the
 * caller's own verbs objects.  The first: a new event channel *ch, a
 * listener *lid on addr:port and a client id *c resolved to it.  0, or -1
 * with why set; what was made is left for lab_pair_cm_close().
 */
static inline int lab_loop_listen(const char *addr, int port, int ms,
				  struct rdma_event_channel **ch, struct rdma_cm_id **lid,
				  struct rdma_cm_id **c, char *why, size_t wl)
{
	struct rdma_addrinfo *la = lab_getai(addr, port, true), *ca = lab_getai(addr, port, false);
	int rc = -1;

	*ch = rdma_create_event_channel();
	if (!*ch || !la || !ca || lab_listen(*ch, la->ai_src_addr, 4, lid))
		snprintf(why, wl, "listen on %s:%d: %s", addr, port, strerror(errno));
	else if ((*c = lab_resolved_id(*ch, ca->ai_dst_addr, ms, why, wl)))
		rc = 0;
	if (la)
		rdma_freeaddrinfo(la);
	if (ca)
		rdma_freeaddrinfo(ca);
	return rc;
}

/*
 * The second half, once the client id c has its QP: connect (4 Reads in
 * flight each way), take the request as *s, let server_side(arg, *s) make
 * the server's QP and post what must be there before the accept, accept,
 * and wait for both ends' ESTABLISHED.  0, or -1 with why set.
 */
static inline int lab_loop_accept(struct rdma_event_channel *ch, struct rdma_cm_id *c,
				  struct rdma_cm_id **s, int (*server_side)(void *, struct rdma_cm_id *),
				  void *arg, int ms, char *why, size_t wl)
{
	struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4 };

	if (rdma_connect(c, &cp)) {
		snprintf(why, wl, "connect: %s", strerror(errno));
		return -1;
	}
	*s = lab_connect_request(ch, ms, why, wl);
	if (!*s)
		return -1;
	if (server_side && server_side(arg, *s)) {
		if (!why[0])
			snprintf(why, wl, "server side: %s", strerror(errno));
		return -1;
	}
	if (rdma_accept(*s, &cp)) {
		snprintf(why, wl, "accept: %s", strerror(errno));
		return -1;
	}
	return lab_wait_established(ch, 2, ms, why, wl);
}

/* Async events of ctx within ms: counts of CQ errors, fatal QP errors, others. */
static inline void lab_async_events(struct ibv_context *ctx, int ms, int *cq_err,
				    int *qp_fatal, int *other)
{
	struct ibv_async_event ae;
	long long end = now_ms() + ms;

	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (now_ms() < end) {
		if (ibv_get_async_event(ctx, &ae)) {
			usleep(10000);
			continue;
		}
		if (ae.event_type == IBV_EVENT_CQ_ERR)
			(*cq_err)++;
		else if (ae.event_type == IBV_EVENT_QP_FATAL)
			(*qp_fatal)++;
		else
			(*other)++;
		ibv_ack_async_event(&ae);
	}
}

/*
 * End a loopback pair of connected ids on ch: disconnect c (client) and
 * s (accepted), take what events come within drain_ms, destroy their QPs,
 * the ids and the listener lid.  Any of them may be NULL (a half-made
 * pair); the caller frees its CQs, PD and MRs afterwards.
 */
static inline void lab_pair_cm_close(struct rdma_event_channel *ch, struct rdma_cm_id *lid,
				     struct rdma_cm_id *c, struct rdma_cm_id *s, int drain_ms)
{
	struct rdma_cm_event *ev;

	if (c)
		rdma_disconnect(c);
	if (s)
		rdma_disconnect(s);
	while (ch && (ev = get_event(ch, drain_ms)))
		rdma_ack_cm_event(ev);
	if (c) {
		if (c->qp)
			rdma_destroy_qp(c);
		rdma_destroy_id(c);
	}
	if (s) {
		if (s->qp)
			rdma_destroy_qp(s);
		rdma_destroy_id(s);
	}
	if (lid)
		rdma_destroy_id(lid);
}

#endif
