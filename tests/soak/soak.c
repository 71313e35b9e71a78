// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * swiwarp-soak: a verified load generator over rdma_cm + verbs.
 *
 *   swiwarp-soak server ADDR PORT [-q NQP] [-w STALL_S]
 *   swiwarp-soak client ADDR PORT [-q NQP] [-t SECS] [-s SEED] [-w STALL_S] [-F]
 *
 * The client opens NQP connections (one RC QP each, one shared CQ) and keeps
 * every QP busy for SECS seconds with a random mix of
 *   - Sends (header + payload drawn from a keyed generator), verified by the
 *     server byte for byte;
 *   - RDMA Writes into the server's per-QP write area, each followed by a
 *     "check" Send; iWARP places a Write before a later Send completes at
 *     the sink, so the server verifies the written bytes on that Send;
 *   - RDMA Reads of random ranges of the server's per-QP read area (filled
 *     with a keyed pattern), verified by the client.
 * Flow control: the server keeps R receives posted per QP and answers every
 * Send with an ack Send carrying the credit back, so the client never sends
 * into an empty receive queue.  At the end every QP sends BYE with its
 * counts and the server checks they match what it verified.
 *
 * -F (fault mode, for tests/suites/81-faults.sh): the run is expected to be
 * cut by a fault.  On the first error the client stops posting, waits until
 * every outstanding WR has completed (error completions are the QP flush),
 * prints how long the error took to arrive and how many WRs were flushed,
 * tears everything down and exits 3.  Without a fault it exits 0.
 *
 * SIGUSR1 ends the client's run early, exactly as if SECS were up (BYE,
 * verify): a test can keep the traffic going for as long as it needs it
 * (a long SECS) and stop it when its fault step is done, instead of
 * guessing a SECS that outlasts the step on a guest of unknown speed.
 *
 * Exit status: 0 all data verified; 1 verification failed or protocol
 * error; 2 setup failed; 3 fault seen and handled (-F); 4 stall (no progress
 * for STALL_S seconds).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "../robust/lab-verbs.h"

#define MAXQP 1024
#define CREDITS 8		/* receives the server keeps posted per QP */
#define SLOT 8192		/* Send payload / Write slot size */
#define RSRC (64 * 1024)	/* read source per QP */
#define RMAX (16 * 1024)	/* longest Read */
#define NREAD 4			/* Reads in flight per QP (<= ORD) */
#define MAGIC 0x534f414bU	/* "SOAK" */

enum { OP_SEND = 1, OP_CHECK_WRITE, OP_ACK, OP_BYE, OP_BYE_ACK };

struct hdr {
	uint32_t magic, op, credit, seq, len, ok;
	uint64_t a, b;		/* BYE: sends, writes / BYE_ACK: verified counts */
};

struct info {			/* in the server's accept private data */
	uint32_t magic, idx;
	uint64_t waddr, raddr;
	uint32_t wkey, rkey;
};

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* byte o of the stream named key */
static inline uint8_t pat(uint64_t key, uint64_t o)
{
	return (uint8_t)(mix(key ^ ((o >> 3) * 0x100000001b3ULL)) >> ((o & 7) * 8));
}

static void fill(uint8_t *p, uint64_t key, uint64_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(key, off + i);
}

/* index of the first wrong byte, or -1 */
static long check(const uint8_t *p, uint64_t key, uint64_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(key, off + i))
			return (long)i;
	return -1;
}

static uint64_t key_of(uint32_t qp, uint32_t seq, uint32_t kind)
{
	return ((uint64_t)kind << 56) ^ ((uint64_t)qp << 32) ^ seq;
}

#define RKEY_KIND 7

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
	rng_state = mix(rng_state);
	return n ? (uint32_t)(rng_state % n) : 0;
}

static int stall_s = 60;
static bool fault_mode;
static volatile sig_atomic_t stop_asked;	/* SIGUSR1 */

static void ask_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

#define WRID(qp, kind, slot) (((uint64_t)(qp) << 32) | ((uint64_t)(kind) << 24) | (slot))
#define WR_QP(w) ((uint32_t)((w) >> 32))
#define WR_KIND(w) ((uint32_t)((w) >> 24) & 0xff)
#define WR_SLOT(w) ((uint32_t)(w) & 0xffffff)
enum { K_RECV = 1, K_SEND, K_WRITE, K_READ };

/* ---- server ---------------------------------------------------------- */

struct sconn {
	struct rdma_cm_id *id;
	uint32_t idx;
	uint8_t *w, *r, *rx, *tx;	/* write area, read source, CREDITS rx, CREDITS tx */
	uint64_t sends, writes, bad;
	bool bye, gone;
};

static int server(const char *addr, const char *port, int nqp)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo *ai = lab_getai(addr, atoi(port), true);
	struct rdma_cm_id *lid;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	struct sconn *c = calloc(nqp, sizeof(*c));
	size_t per = 2 * CREDITS * SLOT + RSRC + 2 * CREDITS * SLOT, size = per * nqp;
	uint8_t *region;
	int n = 0, gone = 0, byes = 0, bad = 0, early = 0, i;
	bool removed = false;
	long long last = now_ms();
	uint64_t tot_s = 0, tot_w = 0;

	if (!ch || !c || !ai || lab_listen(ch, ai->ai_src_addr, 128, &lid)) {
		perror("soak server: listen");
		return 2;
	}
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return 2;
	printf("soak server: listening on %s:%s for %d QPs\n", addr, port, nqp);
	while (gone < nqp) {
		struct rdma_cm_event *ev;
		struct ibv_wc wc[32];
		int k;

		if (now_ms() - last > stall_s * 1000LL) {
			printf("soak server: STALL: no progress for %d s (%d connected, %d BYEs, %d gone)\n",
			       stall_s, n, byes, gone);
			return 4;
		}
		ev = get_event(ch, cq ? 0 : 200);
		if (ev) {
			enum rdma_cm_event_type t = ev->event;
			struct rdma_cm_id *id = ev->id;

			last = now_ms();
			if (t == RDMA_CM_EVENT_DEVICE_REMOVAL) {
				/* the device is going away: let go of everything */
				rdma_ack_cm_event(ev);
				printf("soak server: DEVICE_REMOVAL: releasing all QPs\n");
				removed = true;
				break;
			}
			if (t == RDMA_CM_EVENT_CONNECT_REQUEST) {
				struct ibv_qp_init_attr qa = { 0 };
				struct info inf = { MAGIC, 0, 0, 0, 0, 0 };
				struct rdma_conn_param cp = { .responder_resources = NREAD,
							      .initiator_depth = NREAD,
							      .private_data = &inf,
							      .private_data_len = sizeof(inf) };
				struct sconn *s;

				rdma_ack_cm_event(ev);
				if (n >= nqp) {
					rdma_reject(id, NULL, 0);
					continue;
				}
				if (!pd) {
					pd = ibv_alloc_pd(id->verbs);
					cq = pd ? ibv_create_cq(id->verbs, nqp * (CREDITS * 3 + 4), NULL,
								NULL, 0) : NULL;
					mr = pd ? ibv_reg_mr(pd, region, size,
							     IBV_ACCESS_LOCAL_WRITE |
								     IBV_ACCESS_REMOTE_WRITE |
								     IBV_ACCESS_REMOTE_READ) : NULL;
					if (!mr) {
						perror("soak server: pd/cq/mr");
						return 2;
					}
				}
				s = &c[n];
				s->idx = n;
				s->id = id;
				s->w = region + per * n;
				s->r = s->w + CREDITS * SLOT;
				s->rx = s->r + RSRC;
				s->tx = s->rx + CREDITS * SLOT;
				memset(s->w, 0, CREDITS * SLOT);
				fill(s->r, key_of(n, 0, RKEY_KIND), 0, RSRC);
				id->context = s;
				qa.send_cq = cq;
				qa.recv_cq = cq;
				qa.qp_type = IBV_QPT_RC;
				qa.cap.max_send_wr = CREDITS * 2;
				qa.cap.max_recv_wr = CREDITS;
				qa.cap.max_send_sge = 1;
				qa.cap.max_recv_sge = 1;
				if (rdma_create_qp(id, pd, &qa)) {
					perror("soak server: create_qp");
					return 2;
				}
				for (i = 0; i < CREDITS; i++)
					if (recv1(id->qp, WRID(n, K_RECV, i), s->rx + i * SLOT, SLOT,
						  mr->lkey)) {
						perror("soak server: post_recv");
						return 2;
					}
				inf.idx = n;
				inf.waddr = (uintptr_t)s->w;
				inf.raddr = (uintptr_t)s->r;
				inf.wkey = mr->rkey;
				inf.rkey = mr->rkey;
				if (rdma_accept(id, &cp)) {
					perror("soak server: accept");
					return 2;
				}
				n++;
			} else if (t == RDMA_CM_EVENT_DISCONNECTED || t == RDMA_CM_EVENT_CONNECT_ERROR ||
				   t == RDMA_CM_EVENT_UNREACHABLE || t == RDMA_CM_EVENT_REJECTED) {
				struct sconn *s = id->context;

				rdma_ack_cm_event(ev);
				if (s && !s->gone) {
					s->gone = true;
					gone++;
					if (!s->bye) {
						printf("soak server: QP %u: %s before BYE\n", s->idx,
						       rdma_event_str(t));
						early++;
					}
					rdma_destroy_qp(id);
					rdma_destroy_id(id);
				}
			} else {
				rdma_ack_cm_event(ev);
			}
			continue;
		}
		if (!cq) {
			continue;
		}
		k = ibv_poll_cq(cq, 32, wc);
		if (k < 0)
			return 2;
		if (k == 0) {
			struct pollfd p = { .fd = ch->fd, .events = POLLIN };

			poll(&p, 1, 1);
			continue;
		}
		last = now_ms();
		for (i = 0; i < k; i++) {
			uint32_t q = WR_QP(wc[i].wr_id), sl = WR_SLOT(wc[i].wr_id);
			struct sconn *s = &c[q];
			struct hdr *h, *a;
			long e = -1;

			if (q >= (uint32_t)n || s->gone)
				continue;
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (!s->bye && !s->gone) {
					printf("soak server: QP %u: %s completion %s\n", q,
					       WR_KIND(wc[i].wr_id) == K_RECV ? "recv" : "send",
					       ibv_wc_status_str(wc[i].status));
					bad += !fault_mode && wc[i].status != IBV_WC_WR_FLUSH_ERR;
				}
				continue;
			}
			if (WR_KIND(wc[i].wr_id) != K_RECV)
				continue;
			h = (struct hdr *)(s->rx + sl * SLOT);
			a = (struct hdr *)(s->tx + sl * SLOT);
			memset(a, 0, sizeof(*a));
			a->magic = MAGIC;
			a->op = OP_ACK;
			a->credit = h->credit;
			a->seq = h->seq;
			a->ok = 1;
			if (wc[i].byte_len < sizeof(*h) || h->magic != MAGIC ||
			    h->credit >= CREDITS) {
				printf("soak server: QP %u: bad message (%u bytes)\n", q, wc[i].byte_len);
				s->bad++;
				a->ok = 0;
			} else if (h->op == OP_SEND) {
				if (wc[i].byte_len != sizeof(*h) + h->len)
					e = 0x7fffffff;
				else
					e = check(s->rx + sl * SLOT + sizeof(*h), key_of(q, h->seq, 1),
						  0, h->len);
				s->sends++;
			} else if (h->op == OP_CHECK_WRITE) {
				e = h->len > SLOT ? 0x7fffffff :
					check(s->w + h->credit * SLOT, key_of(q, h->seq, 2), 0, h->len);
				s->writes++;
			} else if (h->op == OP_BYE) {
				s->bye = true;
				byes++;
				a->op = OP_BYE_ACK;
				a->a = s->sends;
				a->b = s->writes;
				if (h->a != s->sends || h->b != s->writes || s->bad) {
					printf("soak server: QP %u: BYE says %llu sends %llu writes, verified %llu/%llu, %llu bad\n",
					       q, (unsigned long long)h->a, (unsigned long long)h->b,
					       (unsigned long long)s->sends,
					       (unsigned long long)s->writes,
					       (unsigned long long)s->bad);
					a->ok = 0;
					bad++;
				}
				tot_s += s->sends;
				tot_w += s->writes;
			}
			if (e >= 0) {
				printf("soak server: QP %u seq %u op %u len %u: byte %ld wrong\n", q,
				       h->seq, h->op, h->len, e);
				s->bad++;
				a->ok = 0;
			}
			if (recv1(s->id->qp, WRID(q, K_RECV, sl), s->rx + sl * SLOT, SLOT,
				  mr->lkey) ||
			    post1(s->id->qp, WRID(q, K_SEND, sl), IBV_WR_SEND, a, sizeof(*a),
				  mr->lkey, 0, 0, IBV_SEND_SIGNALED)) {
				printf("soak server: QP %u: repost failed: %s\n", q, strerror(errno));
				bad++;
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (c[i].gone)
			continue;
		early += !c[i].bye;
		rdma_destroy_qp(c[i].id);
		rdma_destroy_id(c[i].id);
	}
	printf("soak server: %d QPs done, %d BYEs, verified %llu sends %llu writes, %d problems, %d cut early\n",
	       n, byes, (unsigned long long)tot_s, (unsigned long long)tot_w, bad, early);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	if (bad || ((early || removed) && !fault_mode))
		return 1;
	return early || removed ? 3 : 0;
}

/* ---- client ---------------------------------------------------------- */

struct cconn {
	struct rdma_cm_id *id;
	struct info inf;
	uint8_t *tx, *rx, *wsrc, *rd;	/* CREDITS tx, CREDITS rx, CREDITS write src, NREAD read */
	uint32_t seq, free_credits, credit_mask, reads_out, read_off[NREAD], read_len[NREAD];
	uint32_t read_mask;
	int outstanding;		/* signaled WRs posted, not completed */
	/* a credit is free again once its Send (and Write) completed and its
	 * ack came back; a Read slot once its Read completed */
	int8_t cr_pend[CREDITS];
	uint8_t rd_busy[NREAD];
	uint8_t sq_pend[CREDITS];	/* diagnostics: 1 Send, 2 Write not completed */
	uint64_t sends, writes, reads, bytes;
	bool bye_sent, bye_done;
};

/* FLUSH INCOMPLETE: which WRs of which QP never completed, and QP states */
static void missing(struct cconn *c, int nqp)
{
	static const char *const st[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	int i, j;

	for (i = 0; i < nqp; i++) {
		struct cconn *s = &c[i];
		struct ibv_qp_attr a = { 0 };
		struct ibv_qp_init_attr ia;
		char buf[256];
		int n = 0;

		if (!s->outstanding)
			continue;
		if (ibv_query_qp(s->id->qp, &a, IBV_QP_STATE, &ia))
			a.qp_state = (enum ibv_qp_state)-1;
		for (j = 0; j < CREDITS && n < 200; j++) {
			if (s->sq_pend[j] & 2)
				n += snprintf(buf + n, sizeof(buf) - n, " write%d", j);
			if (s->sq_pend[j] & 1)
				n += snprintf(buf + n, sizeof(buf) - n, " send%d", j);
		}
		for (j = 0; j < NREAD && n < 200; j++)
			if (s->rd_busy[j])
				n += snprintf(buf + n, sizeof(buf) - n, " read%d", j);
		printf("soak client: QP %d (qpn %u, state %s): %d outstanding:%s\n", i,
		       s->id->qp->qp_num,
		       a.qp_state <= IBV_QPS_ERR ? st[a.qp_state] : "?", s->outstanding,
		       n ? buf : " (none tracked)");
	}
	fflush(stdout);
}

static int client(const char *addr, const char *port, int nqp, int secs)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *ai;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	struct cconn *c = calloc(nqp, sizeof(*c));
	size_t per = 3 * CREDITS * SLOT + NREAD * RMAX, size = per * nqp;
	uint8_t *region = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i, bad = 0, done = 0;
	long long t0, end, last, err_at = 0, last_ok = 0;
	uint64_t sends = 0, writes = 0, reads = 0, bytes = 0, flushed = 0;
	char first_err[160] = "";
	bool removed = false;

	if (!ch || !c || region == MAP_FAILED || rdma_getaddrinfo(addr, port, &hints, &ai)) {
		perror("soak client: setup");
		return 2;
	}
	for (i = 0; i < nqp; i++) {
		struct cconn *s = &c[i];
		struct rdma_cm_event *ev;
		struct ibv_qp_init_attr qa = { 0 };
		struct rdma_conn_param cp = { .responder_resources = NREAD,
					      .initiator_depth = NREAD, .retry_count = 7 };
		int j;

		if (rdma_create_id(ch, &s->id, s, RDMA_PS_TCP) ||
		    rdma_resolve_addr(s->id, NULL, ai->ai_dst_addr, 5000) ||
		    !(ev = get_event(ch, 15000)) || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED) {
			printf("soak client: QP %d: resolve_addr failed\n", i);
			return 2;
		}
		rdma_ack_cm_event(ev);
		if (rdma_resolve_route(s->id, 5000) || !(ev = get_event(ch, 15000)) ||
		    ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED) {
			printf("soak client: QP %d: resolve_route failed\n", i);
			return 2;
		}
		rdma_ack_cm_event(ev);
		if (!pd) {
			pd = ibv_alloc_pd(s->id->verbs);
			cq = pd ? ibv_create_cq(s->id->verbs, nqp * (CREDITS * 3 + NREAD + 4), NULL,
						NULL, 0) : NULL;
			mr = pd ? ibv_reg_mr(pd, region, size, IBV_ACCESS_LOCAL_WRITE) : NULL;
			if (!mr) {
				perror("soak client: pd/cq/mr");
				return 2;
			}
		}
		s->tx = region + per * i;
		s->rx = s->tx + CREDITS * SLOT;
		s->wsrc = s->rx + CREDITS * SLOT;
		s->rd = s->wsrc + CREDITS * SLOT;
		qa.send_cq = cq;
		qa.recv_cq = cq;
		qa.qp_type = IBV_QPT_RC;
		qa.cap.max_send_wr = CREDITS * 2 + NREAD + 2;
		qa.cap.max_recv_wr = CREDITS;
		qa.cap.max_send_sge = 1;
		qa.cap.max_recv_sge = 1;
		if (rdma_create_qp(s->id, pd, &qa)) {
			printf("soak client: QP %d: create_qp: %s\n", i, strerror(errno));
			return 2;
		}
		for (j = 0; j < CREDITS; j++)
			if (recv1(s->id->qp, WRID(i, K_RECV, j), s->rx + j * SLOT, SLOT,
				  mr->lkey))
				return 2;
		s->outstanding = 0;
		if (rdma_connect(s->id, &cp)) {
			printf("soak client: QP %d: connect: %s\n", i, strerror(errno));
			return 2;
		}
		ev = get_event(ch, 30000);
		if (!ev || ev->event != RDMA_CM_EVENT_ESTABLISHED ||
		    ev->param.conn.private_data_len < sizeof(s->inf)) {
			printf("soak client: QP %d: not established (%s, %u bytes private data)\n", i,
			       ev ? rdma_event_str(ev->event) : "timeout",
			       ev ? ev->param.conn.private_data_len : 0);
			return 2;
		}
		memcpy(&s->inf, ev->param.conn.private_data, sizeof(s->inf));
		rdma_ack_cm_event(ev);
		if (s->inf.magic != MAGIC) {
			printf("soak client: QP %d: bad private data\n", i);
			return 2;
		}
		s->free_credits = CREDITS;
		s->credit_mask = (1U << CREDITS) - 1;
		s->read_mask = (1U << NREAD) - 1;
	}
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	printf("soak client: %d QPs connected, running %d s\n", nqp, secs);
	fflush(stdout);
	t0 = now_ms();
	end = t0 + secs * 1000LL;
	last = t0;
	while (done < nqp) {
		struct ibv_wc wc[64];
		struct rdma_cm_event *ev;
		bool stop = now_ms() >= end || err_at || stop_asked;
		int k;

		if (stop_asked == 1) {	/* once; the log shows when it came */
			stop_asked = 2;
			printf("soak client: SIGUSR1 after %.1f s, ending the run\n",
			       (now_ms() - t0) / 1000.0);
		}

		/* post work */
		for (i = 0; i < nqp && !err_at; i++) {
			struct cconn *s = &c[i];
			int guard = 4;

			while (guard-- > 0) {
				uint32_t kind = rnd(3), cr;
				struct hdr *h;
				int rc;

				if (stop) {
					if (s->bye_sent || s->free_credits != CREDITS || s->reads_out)
						break;
					kind = 9;
				}
				if (kind == 2) {	/* Read */
					uint32_t sl, off, len;

					if (!s->read_mask)
						break;
					sl = __builtin_ctz(s->read_mask);
					len = 1 + rnd(RMAX);
					off = rnd(RSRC - len + 1);
					memset(s->rd + sl * RMAX, 0, len);
					if (post1(s->id->qp, WRID(i, K_READ, sl), IBV_WR_RDMA_READ,
						  s->rd + sl * RMAX, len, mr->lkey,
						  s->inf.raddr + off, s->inf.rkey, IBV_SEND_SIGNALED))
						goto post_err;
					s->read_mask &= ~(1U << sl);
					s->rd_busy[sl] = 1;
					s->read_off[sl] = off;
					s->read_len[sl] = len;
					s->reads_out++;
					s->outstanding++;
					continue;
				}
				if (!s->credit_mask)
					break;
				cr = __builtin_ctz(s->credit_mask);
				h = (struct hdr *)(s->tx + cr * SLOT);
				memset(h, 0, sizeof(*h));
				h->magic = MAGIC;
				h->credit = cr;
				h->seq = ++s->seq;
				if (kind == 9) {
					h->op = OP_BYE;
					h->a = s->sends;
					h->b = s->writes;
					s->bye_sent = true;
				} else if (kind == 0) {
					h->op = OP_SEND;
					h->len = rnd(SLOT - sizeof(*h) + 1);
					fill(s->tx + cr * SLOT + sizeof(*h), key_of(i, h->seq, 1), 0,
					     h->len);
				} else {
					h->op = OP_CHECK_WRITE;
					h->len = 1 + rnd(SLOT);
					fill(s->wsrc + cr * SLOT, key_of(i, h->seq, 2), 0, h->len);
					if (post1(s->id->qp, WRID(i, K_WRITE, cr),
						  IBV_WR_RDMA_WRITE, s->wsrc + cr * SLOT, h->len,
						  mr->lkey, s->inf.waddr + cr * SLOT,
						  s->inf.wkey, IBV_SEND_SIGNALED))
						goto post_err;
					s->outstanding++;
					s->sq_pend[cr] |= 2;
				}
				rc = post1(s->id->qp, WRID(i, K_SEND, cr), IBV_WR_SEND, h,
					   sizeof(*h) + (h->op == OP_SEND ? h->len : 0),
					   mr->lkey, 0, 0, IBV_SEND_SIGNALED);
				if (rc)
					goto post_err;
				s->outstanding++;
				s->sq_pend[cr] |= 1;
				s->credit_mask &= ~(1U << cr);
				s->free_credits--;
				s->cr_pend[cr] = h->op == OP_CHECK_WRITE ? 3 : 2;
				if (h->op == OP_SEND) {
					s->sends++;
					s->bytes += h->len;
				} else if (h->op == OP_CHECK_WRITE) {
					s->writes++;
					s->bytes += h->len;
				}
				continue;
post_err:
				if (!err_at) {
					err_at = now_ms();
					snprintf(first_err, sizeof(first_err), "QP %d post: %s", i,
						 strerror(errno));
				}
				break;
			}
		}
		while ((ev = get_event(ch, 0))) {
			struct cconn *s = ev->id->context;

			if ((ev->event == RDMA_CM_EVENT_DISCONNECTED ||
			     ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) && s && !s->bye_done && !err_at) {
				err_at = now_ms();
				snprintf(first_err, sizeof(first_err), "QP %d: %s", (int)(s - c),
					 rdma_event_str(ev->event));
			}
			removed |= ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL;
			rdma_ack_cm_event(ev);
		}
		k = ibv_poll_cq(cq, 64, wc);
		if (k < 0) {
			printf("soak client: poll_cq failed\n");
			return 1;
		}
		if (k == 0) {
			if (err_at) {
				int left = 0;

				for (i = 0; i < nqp; i++)
					left += c[i].outstanding;
				if (left <= 0 || removed)
					break;
				if (now_ms() - err_at > 60000) {
					printf("soak client: first error after %.1f s (%.1f s after the last good completion): %s\n",
					       (err_at - t0) / 1000.0,
					       last_ok ? (err_at - last_ok) / 1000.0 : 0.0, first_err);
					printf("soak client: FLUSH INCOMPLETE: %d WRs never completed 60 s after the error\n",
					       left);
					missing(c, nqp);
					return 4;
				}
			} else if (now_ms() - last > stall_s * 1000LL) {
				printf("soak client: STALL: no completion for %d s\n", stall_s);
				return 4;
			}
			usleep(200);
			continue;
		}
		last = now_ms();
		for (int j = 0; j < k; j++) {
			uint32_t q = WR_QP(wc[j].wr_id), kind = WR_KIND(wc[j].wr_id);
			uint32_t sl = WR_SLOT(wc[j].wr_id);
			struct cconn *s = &c[q];

			if (q >= (uint32_t)nqp)
				continue;
			if (kind != K_RECV)
				s->outstanding--;
			if (kind == K_SEND || kind == K_WRITE) {
				if (sl < CREDITS)
					s->sq_pend[sl] &= ~(kind == K_SEND ? 1 : 2);
				if (sl >= CREDITS || s->cr_pend[sl] <= 0) {
					printf("soak client: QP %u: DUPLICATE completion: %s slot %u status %s\n",
					       q, kind == K_SEND ? "send" : "write", sl,
					       ibv_wc_status_str(wc[j].status));
					bad++;
				} else if (--s->cr_pend[sl] == 0) {
					s->credit_mask |= 1U << sl;
					s->free_credits++;
				}
			} else if (kind == K_READ) {
				if (sl >= NREAD || !s->rd_busy[sl]) {
					printf("soak client: QP %u: DUPLICATE completion: read slot %u status %s\n",
					       q, sl, ibv_wc_status_str(wc[j].status));
					bad++;
					continue;
				}
				s->rd_busy[sl] = 0;
			}
			if (wc[j].status == IBV_WC_SUCCESS && !err_at)
				last_ok = now_ms();
			if (wc[j].status != IBV_WC_SUCCESS) {
				if (!err_at) {
					err_at = now_ms();
					snprintf(first_err, sizeof(first_err),
						 "QP %u: %s completion %s", q,
						 kind == K_RECV ? "recv" : kind == K_READ ? "read" :
						 kind == K_WRITE ? "write" : "send",
						 ibv_wc_status_str(wc[j].status));
				}
				if (wc[j].status == IBV_WC_WR_FLUSH_ERR)
					flushed++;
				continue;
			}
			if (kind == K_READ) {
				long e = check(s->rd + sl * RMAX, key_of(q, 0, RKEY_KIND),
					       s->read_off[sl], s->read_len[sl]);

				if (e >= 0 || wc[j].byte_len != s->read_len[sl]) {
					printf("soak client: QP %u: Read off %u len %u (got %u): byte %ld wrong\n",
					       q, s->read_off[sl], s->read_len[sl], wc[j].byte_len,
					       e);
					bad++;
				}
				s->read_mask |= 1U << sl;
				s->reads_out--;
				s->reads++;
				s->bytes += s->read_len[sl];
			} else if (kind == K_RECV) {
				struct hdr *h = (struct hdr *)(s->rx + sl * SLOT);

				if (h->magic != MAGIC || h->credit >= CREDITS ||
				    s->cr_pend[h->credit] <= 0) {
					printf("soak client: QP %u: bad ack\n", q);
					bad++;
				} else {
					if (--s->cr_pend[h->credit] == 0) {
						s->credit_mask |= 1U << h->credit;
						s->free_credits++;
					}
					if (!h->ok) {
						printf("soak client: QP %u: server reports seq %u bad\n",
						       q, h->seq);
						bad++;
					}
					if (h->op == OP_BYE_ACK) {
						s->bye_done = true;
						done++;
					}
				}
				if (!s->bye_done &&
				    recv1(s->id->qp, WRID(q, K_RECV, sl), s->rx + sl * SLOT,
					  SLOT, mr->lkey) && !err_at) {
					err_at = now_ms();
					snprintf(first_err, sizeof(first_err), "QP %u: post_recv: %s",
						 q, strerror(errno));
				}
			}
		}
	}
	for (i = 0; i < nqp; i++) {
		sends += c[i].sends;
		writes += c[i].writes;
		reads += c[i].reads;
		bytes += c[i].bytes;
	}
	printf("soak client: %d QPs, %.1f s: %llu sends, %llu writes, %llu reads verified, %.1f MB, %d bad\n",
	       nqp, (now_ms() - t0) / 1000.0, (unsigned long long)sends,
	       (unsigned long long)writes, (unsigned long long)reads, bytes / 1e6, bad);
	if (err_at)
		printf("soak client: ERROR after %.1f s (%.1f s after the last good completion): %s; all outstanding WRs completed, %llu with flush status\n",
		       (err_at - t0) / 1000.0, last_ok ? (err_at - last_ok) / 1000.0 : 0.0,
		       first_err, (unsigned long long)flushed);
	fflush(stdout);
	for (i = 0; i < nqp; i++)
		rdma_disconnect(c[i].id);
	{
		/* let the DISCONNECTED events arrive (at most 5 s) */
		long long until = now_ms() + 5000;
		struct rdma_cm_event *ev;
		int disc = 0;

		while (disc < nqp && now_ms() < until) {
			ev = get_event(ch, 100);
			if (!ev)
				continue;
			disc += ev->event == RDMA_CM_EVENT_DISCONNECTED;
			rdma_ack_cm_event(ev);
		}
	}
	for (i = 0; i < nqp; i++) {
		rdma_destroy_qp(c[i].id);
		rdma_destroy_id(c[i].id);
	}
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(ch);
	rdma_freeaddrinfo(ai);
	if (bad)
		return 1;
	if (err_at)
		return fault_mode ? 3 : 1;
	return 0;
}

int main(int argc, char **argv)
{
	int nqp = 64, secs = 60, opt;
	uint64_t seed = 20261122;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* no SA_RESTART needed: the run loop only polls with timeout 0 */
	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = ask_stop }, NULL);
	if (argc < 4) {
		fprintf(stderr, "usage: swiwarp-soak server|client ADDR PORT [-q NQP] [-t SECS] "
				"[-s SEED] [-w STALL_S] [-F]\n");
		return 2;
	}
	optind = 4;
	while ((opt = getopt(argc, argv, "q:t:s:w:F")) != -1) {
		switch (opt) {
		case 'q': nqp = atoi(optarg); break;
		case 't': secs = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'w': stall_s = atoi(optarg); break;
		case 'F': fault_mode = true; break;
		default: return 2;
		}
	}
	if (nqp < 1 || nqp > MAXQP)
		return 2;
	rng_state = seed;
	if (!strcmp(argv[1], "server"))
		return server(argv[2], argv[3], nqp);
	if (!strcmp(argv[1], "client"))
		return client(argv[2], argv[3], nqp, secs);
	return 2;
}
