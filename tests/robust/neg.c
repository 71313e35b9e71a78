// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * robust-neg: negative tests over rdma_cm/verbs (issue 3's list), one
 * connection per case:
 *
 *   robust-neg server ADDR PORT NCONN [big]   target side
 *   robust-neg client ADDR PORT [big]         initiator side, all cases
 *   robust-neg count [big]                    number of connections
 *
 * The client names its case in the connect private data; the server sets
 * the connection up for it (how many receives, which MRs) and returns the
 * MRs (address, rkey, length) in the accept private data.  Both print
 * PASS:/FAIL: lines: robust.neg.<case> from the client and
 * robust.neg.<case>.server from the server.
 *
 * Where a case must make the target send a Terminate, the server checks
 * that its device's counter of Terminates sent for the expected layer
 * (tx_term_rdmap/ddp/mpa) rose by one and the others did not, and the
 * client the same of its Terminates received (rx_term_*): hwctr.h.  The
 * counters do not say type and code: those come from the QP itself, which
 * reports the Terminate it sent and the one it received as driver details
 * of rdma res show qp -dd (qpterm.h), checked against RFC 5040 §7 /
 * RFC 5041 §7.  NEG_NOTERM=1 skips both (for upstream siw, which has
 * neither).
 *
 * "big" adds a 1 GiB MR on both sides to the MR-size case (the guests need
 * about 2 GiB of memory).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "neg-common.h"
#include "hwctr.h"
#include "qpterm.h"

#define TGT (1024 * 1024)	/* target buffer */
#define GOOD 0x22
#define MAGIC 0x4e454721U
#define NMR 8
#define GIB (1024UL * 1024 * 1024)

struct mrd {
	uint64_t addr;
	uint32_t rkey, len;
};

struct ninfo {
	uint32_t magic, nmr;
	struct mrd mr[NMR];
};

/* what the server must see for a case */
struct scase {
	const char *name;
	int nrecv;		/* receives posted (-1: none at all) */
	uint32_t recv_len;
	int term_l, term_t, term_c;	/* Terminate the target must send, -1 none */
	int term_c2;		/* an alternative code (-1: none) */
};

static const struct scase scases[] = {
	{ "empty_rq", -1, 0, 1, 2, 2, -1 },	/* DDP, untagged, MSN: no buffer */
	{ "small_rq", 1, 16, 1, 2, 5, -1 },	/* DDP, untagged, message too long */
	{ "flush_local", 8, PG, -1, -1, -1, -1 },
	{ "flush_peer", 8, PG, -1, -1, -1, -1 },
	{ "unsig_read", 4, PG, -1, -1, -1, -1 },
	{ "pipeline_16k", 4, PG, -1, -1, -1, -1 },
	{ "inval_write", 4, PG, 1, 1, 0, -1 },	/* DDP, tagged, invalid STag */
	{ "inval_read", 4, PG, 0, 1, 0, -1 },	/* RDMAP, protection, invalid STag */
	{ "mr_sizes", 4, PG, -1, -1, -1, -1 },
	{ "sq_full", 4, PG, -1, -1, -1, -1 },
	{ "rq_full", 4, PG, -1, -1, -1, -1 },
	{ "cq_overflow", 4, PG, -1, -1, -1, -1 },
};

#define NCASES (int)(sizeof(scases) / sizeof(scases[0]))

static bool big, noterm;

/* NEG_SKIP=case,case: cases not run (known bugs that take the guest down) */
static bool skipped(const char *name)
{
	const char *l = getenv("NEG_SKIP"), *p;
	size_t n = strlen(name);

	for (p = l; p && (p = strstr(p, name)); p += n)
		if ((p == l || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return true;
	return false;
}

static const uint64_t mr_sizes[] = { 1, 4095, 4097, 65537, 16 * 1024 * 1024 + 3, GIB };
#define NSIZES(b) ((b) ? 6 : 5)
/* byte offset of MR i inside its mapping (unaligned starts on purpose) */
static uint64_t mr_off(int i)
{
	return i == 2 ? 1 : i == 4 ? 4093 : 0;
}

static const struct scase *find_case(const char *name)
{
	int i;

	for (i = 0; i < NCASES; i++)
		if (!strcmp(scases[i].name, name))
			return &scases[i];
	return NULL;
}

static int term_check(struct ibv_qp *qp, const struct term_ctr *tc, int sent,
		      const struct scase *sc, char *why, size_t wl)
{
	int l, t, c, r;

	if (noterm || sc->term_l < 0)
		return 0;
	r = qp_term_find(qp, sent, 3000, &l, &t, &c);
	if (r < 0) {
		snprintf(why, wl, "cannot run rdma res show qp");
		return 1;
	}
	if (!r) {
		snprintf(why, wl, "QP %u reports no Terminate %s (rdma res show qp -dd)",
			 qp->qp_num, sent ? "sent" : "received");
		return 1;
	}
	if (l != sc->term_l || t != sc->term_t || (c != sc->term_c && c != sc->term_c2)) {
		snprintf(why, wl, "Terminate %s layer %d type %d code %d, want %d/%d/%d",
			 sent ? "sent" : "received", l, t, c, sc->term_l, sc->term_t, sc->term_c);
		return 1;
	}
	printf("neg: %s: Terminate %s layer %d type %d code %d as expected\n", sc->name,
	       sent ? "sent" : "received", l, t, c);
	return term_ctr_check(tc, sc->term_l, 3000, why, wl);
}

/* ---- server ---------------------------------------------------------- */

struct sconn {
	const struct scase *sc;
	struct rdma_cm_id *id;
	struct ibv_mr *mr_tgt, *mr_rx, *mr_victim, *mr_victim2;
	struct term_ctr tc;
	int rx_posted, rx_done, rx_flushed, rx_other, rx_err_status;
	bool dereg_done;
};

static uint8_t *tgt_region;	/* canary PG | TGT | canary PG */
static uint8_t *sz_map[6], *sz_p[6];	/* MR-size case: mapping, MR start */
static struct ibv_mr *sz_mr[6];
static uint8_t *victim;		/* canary PG | PG | canary PG */
static uint8_t rxbuf[9][PG];	/* 8 receive buffers, then the reply */
#define txbuf rxbuf[8]

static int canaries_ok(const uint8_t *r, size_t inner)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < PG; i++)
		bad += (r[i] != CANARY) + (r[PG + inner + i] != CANARY);
	return bad;
}

static void server_fill(void)
{
	size_t i;

	memset(tgt_region, CANARY, TGT + 2 * PG);
	for (i = 0; i < TGT; i++)
		tgt_region[PG + i] = (uint8_t)(i * 7 + 3);
	memset(victim, CANARY, 3 * PG);
	memset(victim + PG, 0x11, PG);
}

static void server_finish(struct sconn *s, struct ibv_cq *cq)
{
	const struct scase *sc = s->sc;
	struct ibv_wc wc;
	char why[256] = "";
	int bad = 0, i;
	long long end = now_ms() + 3000;

	/* collect what is left of the receives: a dead QP flushes them all */
	while (s->rx_done < s->rx_posted && now_ms() < end) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n <= 0) {
			usleep(1000);
			continue;
		}
		if (wc.wr_id >= 100 && wc.wr_id < 100 + 8) {
			s->rx_done++;
			if (wc.status == IBV_WC_WR_FLUSH_ERR)
				s->rx_flushed++;
			else if (wc.status != IBV_WC_SUCCESS) {
				s->rx_other++;
				s->rx_err_status = wc.status;
			}
		}
	}
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
	if (s->rx_done != s->rx_posted) {
		snprintf(why, sizeof(why), "%d of %d receives never completed (not flushed)",
			 s->rx_posted - s->rx_done, s->rx_posted);
		bad = 1;
	}
	if (!bad && (i = canaries_ok(tgt_region, TGT))) {
		snprintf(why, sizeof(why), "%d canary bytes around the target changed", i);
		bad = 1;
	}
	if (!bad && !strcmp(sc->name, "flush_peer") && s->rx_flushed != 8) {
		snprintf(why, sizeof(why), "peer left: %d of 8 receives flushed", s->rx_flushed);
		bad = 1;
	}
	if (!bad && !strcmp(sc->name, "small_rq") &&
	    (s->rx_other != 1 || s->rx_err_status != IBV_WC_LOC_LEN_ERR)) {
		snprintf(why, sizeof(why), "16-byte receive: %d error completions, status %s (want local length error)",
			 s->rx_other, ibv_wc_status_str(s->rx_err_status));
		bad = 1;
	}
	if (!bad && !strncmp(sc->name, "inval_", 6)) {
		int evil = 0, other = 0;

		if ((i = canaries_ok(victim, PG))) {
			snprintf(why, sizeof(why), "%d canary bytes around the victim changed", i);
			bad = 1;
		}
		for (i = 0; i < PG; i++) {
			evil += victim[PG + i] == EVIL;
			other += victim[PG + i] != GOOD;
		}
		if (!bad && (evil || other)) {
			snprintf(why, sizeof(why), "victim: %d bytes of the Write through the dead STag, %d not the control pattern",
				 evil, other);
			bad = 1;
		}
		if (!bad && !s->dereg_done) {
			snprintf(why, sizeof(why), "the client never asked to deregister");
			bad = 1;
		}
	}
	if (!bad && !strcmp(sc->name, "mr_sizes")) {
		for (i = 0; i < NSIZES(big) && !bad; i++) {
			uint8_t *p = sz_p[i];
			uint64_t len = mr_sizes[i];

			if (p[0] != (uint8_t)(len == 1 ? 0x80 + i : 0x40 + i) || p[len - 1] != (uint8_t)(0x80 + i) ||
			    (len > 2 && p[1] != 0) || (len > 2 && p[len - 2] != 0) ||
			    (mr_off(i) && p[-1] != CANARY) || p[len] != CANARY) {
				snprintf(why, sizeof(why), "MR of %llu bytes: first/last byte %02x/%02x, neighbours %02x %02x",
					 (unsigned long long)len, p[0], p[len - 1],
					 mr_off(i) ? p[-1] : 0, p[len]);
				bad = 1;
			}
		}
	}
	if (!bad)
		bad = term_check(s->id->qp, &s->tc, 1, sc, why, sizeof(why));
	if (bad)
		printf("FAIL: robust.neg.%s.server [%s]\n", sc->name, why);
	else
		printf("PASS: robust.neg.%s.server\n", sc->name);
	fflush(stdout);
	if (s->id->qp)
		rdma_destroy_qp(s->id);
	rdma_destroy_id(s->id);
	ibv_dereg_mr(s->mr_tgt);
	ibv_dereg_mr(s->mr_rx);
	if (s->mr_victim)
		ibv_dereg_mr(s->mr_victim);
	if (s->mr_victim2)
		ibv_dereg_mr(s->mr_victim2);
	memset(s, 0, sizeof(*s));
}

static int server(const char *addr, const char *port, int nconn)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo *ai = lab_getai(addr, atoi(port), true);
	struct rdma_cm_id *lid;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct sconn s = { 0 };
	int done = 0, i;
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	if (!ch || !ai || lab_listen(ch, ai->ai_src_addr, 4, &lid)) {
		perror("neg server: listen");
		return 2;
	}
	tgt_region = mmap(NULL, TGT + 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	victim = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tgt_region == MAP_FAILED || victim == MAP_FAILED)
		return 2;
	/* bound to an address, the listener knows its device */
	pd = lid->verbs ? ibv_alloc_pd(lid->verbs) : NULL;
	cq = pd ? ibv_create_cq(lid->verbs, 256, NULL, NULL, 0) : NULL;
	if (!cq) {
		perror("neg server: pd/cq");
		return 2;
	}
	/* MR-size case: registered up front (1 GiB takes ~30 s under TCG) */
	for (i = 0; i < NSIZES(big); i++) {
		long long t = now_ms();
		uint8_t *p;

		sz_map[i] = mmap(NULL, mr_sizes[i] + 2 * PG, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (sz_map[i] == MAP_FAILED)
			return 2;
		p = sz_p[i] = sz_map[i] + mr_off(i);
		if (mr_off(i))
			p[-1] = CANARY;
		p[mr_sizes[i]] = CANARY;
		sz_mr[i] = ibv_reg_mr(pd, p, mr_sizes[i], rw);
		if (!sz_mr[i]) {
			printf("FAIL: robust.neg.mr_sizes.reg [reg_mr of %llu bytes: %s]\n",
			       (unsigned long long)mr_sizes[i], strerror(errno));
			return 2;
		}
		printf("neg server: registered %llu bytes in %lld ms\n",
		       (unsigned long long)mr_sizes[i], now_ms() - t);
	}
	printf("neg server: listening on %s:%s\n", addr, port);
	while (done < nconn) {
		struct rdma_cm_event *ev = get_event(ch, s.id ? 5 : 120000);
		enum rdma_cm_event_type type;
		struct rdma_cm_id *id;

		if (!ev) {
			struct ibv_wc wc;

			if (!s.id) {
				printf("FAIL: robust.neg.server [no CM event for 120 s after %d of %d connections]\n",
				       done, nconn);
				return 1;
			}
			/* serve the running connection: receives, DEREG requests */
			while (ibv_poll_cq(cq, 1, &wc) > 0) {
				if (wc.wr_id < 100 || wc.wr_id >= 108)
					continue;
				s.rx_done++;
				if (wc.status == IBV_WC_WR_FLUSH_ERR) {
					s.rx_flushed++;
					continue;
				}
				if (wc.status != IBV_WC_SUCCESS) {
					s.rx_other++;
					s.rx_err_status = wc.status;
					continue;
				}
				if (wc.byte_len >= 5 && !memcmp(rxbuf[wc.wr_id - 100], "DEREG", 5) &&
				    s.mr_victim) {
					struct mrd *m = (struct mrd *)txbuf;

					/* invalidate the STag, then register the same
					 * memory again: the old STag must stay dead */
					ibv_dereg_mr(s.mr_victim);
					s.mr_victim = NULL;
					s.mr_victim2 = ibv_reg_mr(pd, victim + PG, PG, rw);
					s.dereg_done = true;
					m->addr = (uintptr_t)victim + PG;
					m->rkey = s.mr_victim2 ? s.mr_victim2->rkey : 0;
					m->len = PG;
					post1(s.id->qp, 1, IBV_WR_SEND, txbuf, sizeof(*m),
					      s.mr_rx->lkey, 0, 0, IBV_SEND_SIGNALED);
				}
			}
			continue;
		}
		type = ev->event;
		id = ev->id;
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct ibv_qp_init_attr qa = { 0 };
			struct ninfo inf = { .magic = MAGIC };
			struct rdma_conn_param cp = { .responder_resources = 16, .initiator_depth = 16,
						      .private_data = &inf,
						      .private_data_len = sizeof(inf) };
			char name[40] = "";
			size_t pl = ev->param.conn.private_data_len;
			int i;

			if (pl)
				memcpy(name, ev->param.conn.private_data,
				       pl < sizeof(name) - 1 ? pl : sizeof(name) - 1);
			rdma_ack_cm_event(ev);
			if (s.id || !find_case(name)) {
				printf("neg server: rejecting '%s'\n", name);
				rdma_reject(id, NULL, 0);
				continue;
			}
			s.sc = find_case(name);
			s.id = id;
			term_ctr_open(&s.tc, id->verbs, 1);
			server_fill();
			s.mr_tgt = ibv_reg_mr(pd, tgt_region + PG, TGT, rw);
			s.mr_rx = ibv_reg_mr(pd, rxbuf, sizeof(rxbuf), IBV_ACCESS_LOCAL_WRITE);
			if (!s.mr_tgt || !s.mr_rx) {
				perror("neg server: reg_mr");
				return 2;
			}
			inf.mr[0] = (struct mrd){ (uintptr_t)tgt_region + PG, s.mr_tgt->rkey, TGT };
			inf.nmr = 1;
			if (!strncmp(name, "inval_", 6)) {
				s.mr_victim = ibv_reg_mr(pd, victim + PG, PG, rw);
				if (!s.mr_victim)
					return 2;
				inf.mr[1] = (struct mrd){ (uintptr_t)victim + PG, s.mr_victim->rkey, PG };
				inf.nmr = 2;
			}
			if (!strcmp(name, "mr_sizes")) {
				for (i = 0; i < NSIZES(big); i++)
					inf.mr[1 + i] = (struct mrd){ (uintptr_t)sz_p[i], sz_mr[i]->rkey,
								     (uint32_t)(mr_sizes[i] > UINT32_MAX ? 0 : mr_sizes[i]) };
				inf.nmr = 1 + NSIZES(big);
			}
			qa = lab_rc_qp_attr(cq, 16, 8);
			if (rdma_create_qp(id, pd, &qa)) {
				printf("FAIL: robust.neg.%s.server [create_qp: %s]\n", name, strerror(errno));
				return 2;
			}
			for (i = 0; i < s.sc->nrecv; i++)
				if (!recv1(id->qp, 100 + i, rxbuf[i], s.sc->recv_len, s.mr_rx->lkey))
					s.rx_posted++;
			if (rdma_accept(id, &cp)) {
				/* the client gave up already: judge and go on */
				printf("neg server: %s: accept: %s\n", name, strerror(errno));
				server_finish(&s, cq);
				done++;
			}
			continue;
		}
		rdma_ack_cm_event(ev);
		if ((type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_CONNECT_ERROR ||
		     type == RDMA_CM_EVENT_UNREACHABLE) && s.id && id == s.id) {
			server_finish(&s, cq);
			done++;
		}
	}
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	return 0;
}

/* ---- client ---------------------------------------------------------- */

struct cctx {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* 2 MiB, registered */
	struct ninfo inf;
	struct term_ctr tc;
};

#define CBUF (2 * TGT)

static int cconnect(struct cctx *x, struct rdma_addrinfo *ai, const char *name, int cqe,
		    int sq, int rq, char *why, size_t wl)
{
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_conn_param cp = { .responder_resources = 16, .initiator_depth = 16,
				      .retry_count = 7, .private_data = name,
				      .private_data_len = (uint8_t)(strlen(name) + 1) };

	memset(x, 0, sizeof(*x));
	x->ch = rdma_create_event_channel();
	if (!x->ch || rdma_create_id(x->ch, &x->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(x->id, NULL, ai->ai_dst_addr, 5000) ||
	    !(ev = get_event(x->ch, EVENT_MS)) || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED) {
		snprintf(why, wl, "resolve_addr");
		return 1;
	}
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(x->id, 5000) || !(ev = get_event(x->ch, EVENT_MS)) ||
	    ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		snprintf(why, wl, "resolve_route");
		return 1;
	}
	rdma_ack_cm_event(ev);
	x->pd = ibv_alloc_pd(x->id->verbs);
	x->cq = x->pd ? ibv_create_cq(x->id->verbs, cqe, NULL, NULL, 0) : NULL;
	x->buf = mmap(NULL, CBUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	x->mr = x->cq && x->buf != MAP_FAILED ? ibv_reg_mr(x->pd, x->buf, CBUF, IBV_ACCESS_LOCAL_WRITE) :
		NULL;
	qa = lab_rc_qp_attr(x->cq, sq, rq);
	if (!x->mr || rdma_create_qp(x->id, x->pd, &qa)) {
		snprintf(why, wl, "verbs setup: %s", strerror(errno));
		return 1;
	}
	x->qp = x->id->qp;
	term_ctr_open(&x->tc, x->id->verbs, 0);
	if (rdma_connect(x->id, &cp)) {
		snprintf(why, wl, "connect: %s", strerror(errno));
		return 1;
	}
	ev = get_event(x->ch, EVENT_MS);
	if (!ev || ev->event != RDMA_CM_EVENT_ESTABLISHED ||
	    ev->param.conn.private_data_len < sizeof(x->inf)) {
		snprintf(why, wl, "not established (%s)", ev ? rdma_event_str(ev->event) : "timeout");
		if (ev)
			rdma_ack_cm_event(ev);
		return 1;
	}
	memcpy(&x->inf, ev->param.conn.private_data, sizeof(x->inf));
	rdma_ack_cm_event(ev);
	if (x->inf.magic != MAGIC) {
		snprintf(why, wl, "bad server info");
		return 1;
	}
	return 0;
}

static void cclose(struct cctx *x)
{
	struct rdma_cm_event *ev;

	if (x->id) {
		rdma_disconnect(x->id);
		ev = get_event(x->ch, 3000);
		if (ev)
			rdma_ack_cm_event(ev);
		if (x->id->qp)
			rdma_destroy_qp(x->id);
	}
	if (x->mr)
		ibv_dereg_mr(x->mr);
	if (x->cq)
		ibv_destroy_cq(x->cq);
	if (x->pd)
		ibv_dealloc_pd(x->pd);
	if (x->id)
		rdma_destroy_id(x->id);
	if (x->buf && x->buf != MAP_FAILED)
		munmap(x->buf, CBUF);
	if (x->ch)
		rdma_destroy_event_channel(x->ch);
}

/* A Send into a receive queue that cannot take it: the target must send a
 * Terminate, and the initiator's QP must die (its later Read fails). */
static int c_no_buffer(struct cctx *x, const struct scase *sc, char *why, size_t wl)
{
	struct ibv_wc wc;
	int st1, st2 = -2;

	memset(x->buf, GOOD, 64);
	if (post1(x->qp, 1, IBV_WR_SEND, x->buf, 64, x->mr->lkey, 0, 0, IBV_SEND_SIGNALED)) {
		snprintf(why, wl, "post_send: %s", strerror(errno));
		return 1;
	}
	st1 = wait_wc(x->cq, EVENT_MS, &wc);
	if (st1 == IBV_WC_SUCCESS) {
		if (post1(x->qp, 2, IBV_WR_RDMA_READ, x->buf + PG, 8, x->mr->lkey,
			  x->inf.mr[0].addr, x->inf.mr[0].rkey, IBV_SEND_SIGNALED | IBV_SEND_FENCE))
			st2 = -3;	/* refused: the QP is already in error */
		else
			st2 = wait_wc(x->cq, EVENT_MS, &wc);
	}
	if (st1 == -1 || st2 == -1) {
		snprintf(why, wl, "no completion within %d ms (hang)", EVENT_MS);
		return 1;
	}
	if (st1 == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS) {
		snprintf(why, wl, "Send without a fitting receive and the Read behind it both succeeded");
		return 1;
	}
	printf("neg: %s: send %s, read behind it %s\n", sc->name,
	       st1 >= 0 ? ibv_wc_status_str(st1) : "none",
	       st2 >= 0 ? ibv_wc_status_str(st2) : st2 == -3 ? "refused by post" : "not run");
	return term_check(x->qp, &x->tc, 0, sc, why, wl);
}

/* QP error flush, local: every posted WR comes back, receives flushed. */
static int c_flush_local(struct cctx *x, char *why, size_t wl)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	int i, got = 0, rflush = 0, sdone = 0, post_after;
	long long end;

	for (i = 0; i < 8; i++)
		if (recv1(x->qp, 100 + i, x->buf + i * PG, PG, x->mr->lkey)) {
			snprintf(why, wl, "post_recv %d: %s", i, strerror(errno));
			return 1;
		}
	for (i = 0; i < 4; i++)
		if (post1(x->qp, 200 + i, IBV_WR_RDMA_READ, x->buf + TGT / 2 + i * (TGT / 8),
			  TGT / 8, x->mr->lkey, x->inf.mr[0].addr + i * (TGT / 8),
			  x->inf.mr[0].rkey, IBV_SEND_SIGNALED)) {
			snprintf(why, wl, "post_send %d: %s", i, strerror(errno));
			return 1;
		}
	if (ibv_modify_qp(x->qp, &a, IBV_QP_STATE)) {
		snprintf(why, wl, "modify_qp(ERR): %s", strerror(errno));
		return 1;
	}
	post_after = post1(x->qp, 300, IBV_WR_RDMA_READ, x->buf, 8, x->mr->lkey,
			   x->inf.mr[0].addr, x->inf.mr[0].rkey, IBV_SEND_SIGNALED);
	end = now_ms() + EVENT_MS;
	while (now_ms() < end && got < 12 + !post_after) {
		if (ibv_poll_cq(x->cq, 1, &wc) != 1) {
			usleep(1000);
			continue;
		}
		got++;
		printf("neg: flush_local: completion wr_id %llu %s\n", (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status));
		if (wc.wr_id >= 100 && wc.wr_id < 108)
			rflush += wc.status == IBV_WC_WR_FLUSH_ERR;
		else if (wc.wr_id >= 200 && wc.wr_id < 204)
			sdone += wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_WR_FLUSH_ERR;
		else if (wc.wr_id == 300 && wc.status != IBV_WC_WR_FLUSH_ERR) {
			snprintf(why, wl, "Read posted in ERR state completed with %s",
				 ibv_wc_status_str(wc.status));
			return 1;
		}
	}
	if (got != 12 + !post_after || rflush != 8 || sdone != 4) {
		snprintf(why, wl, "after modify to ERR: %d of %d completions, %d of 8 receives flushed, %d of 4 Reads done or flushed",
			 got, 12 + !post_after, rflush, sdone);
		return 1;
	}
	usleep(300000);
	if (ibv_poll_cq(x->cq, 1, &wc) != 0) {
		snprintf(why, wl, "extra completion after the flush: wr_id %llu %s",
			 (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
		return 1;
	}
	printf("neg: flush_local: 8 receives flushed, 4 Reads completed, Read posted in ERR %s\n",
	       post_after ? "refused by post" : "flushed");
	return 0;
}

/* An unsignaled Read is done when a later signaled WR completes. */
static int c_unsig_read(struct cctx *x, char *why, size_t wl)
{
	struct ibv_wc wc;
	int i, st, n;

	memset(x->buf, 0, 2 * 65536);
	if (post1(x->qp, 1, IBV_WR_RDMA_READ, x->buf, 65536, x->mr->lkey, x->inf.mr[0].addr,
		  x->inf.mr[0].rkey, 0) ||
	    post1(x->qp, 2, IBV_WR_RDMA_READ, x->buf + 65536, 100, x->mr->lkey,
		  x->inf.mr[0].addr + 65536, x->inf.mr[0].rkey, IBV_SEND_SIGNALED)) {
		snprintf(why, wl, "post: %s", strerror(errno));
		return 1;
	}
	st = wait_wc(x->cq, EVENT_MS, &wc);
	if (st != IBV_WC_SUCCESS || wc.wr_id != 2) {
		snprintf(why, wl, "first completion: status %d wr_id %llu (want the signaled Read 2)", st,
			 (unsigned long long)wc.wr_id);
		return 1;
	}
	for (i = 0; i < 65536 + 100; i++)
		if (x->buf[i] != (uint8_t)(i * 7 + 3)) {
			snprintf(why, wl, "byte %d wrong after the signaled Read completed", i);
			return 1;
		}
	usleep(200000);
	n = ibv_poll_cq(x->cq, 1, &wc);
	if (n) {
		snprintf(why, wl, "the unsignaled Read produced a completion");
		return 1;
	}
	return 0;
}

/* 16384 unsignaled Writes back to back (every 2048th signaled so the
 * SQ can be reused), then one Read of everything. */
static int c_pipeline(struct cctx *x, char *why, size_t wl)
{
	const int total = 16384, chunk = 64;	/* 16384 * 64 B = 1 MiB */
	struct ibv_wc wc;
	int posted = 0, signaled_out = 0, i, st;
	long long end = now_ms() + lab_scaled_ms(120000), t0 = now_ms();

	for (i = 0; i < total; i++)
		memset(x->buf + (size_t)i * chunk, (uint8_t)(i ^ (i >> 8)), chunk);
	while (posted < total) {
		unsigned int fl = (posted % 2048 == 2047) ? IBV_SEND_SIGNALED : 0;

		if (now_ms() > end) {
			snprintf(why, wl, "only %d of %d Writes posted in 120 s", posted, total);
			return 1;
		}
		if (post1(x->qp, 1000 + posted, IBV_WR_RDMA_WRITE, x->buf + (size_t)posted * chunk,
			  chunk, x->mr->lkey, x->inf.mr[0].addr + (size_t)posted * chunk,
			  x->inf.mr[0].rkey, fl)) {
			if (errno != ENOMEM) {
				snprintf(why, wl, "post %d: %s", posted, strerror(errno));
				return 1;
			}
			/* SQ full: wait for a signaled one */
			st = wait_wc(x->cq, 30000, &wc);
			if (st != IBV_WC_SUCCESS) {
				snprintf(why, wl, "SQ full at %d and no good completion (%d)", posted, st);
				return 1;
			}
			signaled_out--;
			continue;
		}
		signaled_out += fl != 0;
		posted++;
	}
	while (signaled_out > 0) {
		st = wait_wc(x->cq, 30000, &wc);
		if (st != IBV_WC_SUCCESS) {
			snprintf(why, wl, "signaled Write failed or missing (%d)", st);
			return 1;
		}
		signaled_out--;
	}
	memset(x->buf + TGT, 0, TGT);
	if (post1(x->qp, 2, IBV_WR_RDMA_READ, x->buf + TGT, TGT, x->mr->lkey, x->inf.mr[0].addr,
		  x->inf.mr[0].rkey, IBV_SEND_SIGNALED) ||
	    wait_wc(x->cq, 60000, &wc) != IBV_WC_SUCCESS) {
		snprintf(why, wl, "Read back failed");
		return 1;
	}
	if (memcmp(x->buf, x->buf + TGT, TGT)) {
		for (i = 0; i < TGT && x->buf[i] == x->buf[TGT + i]; i++)
			;
		snprintf(why, wl, "target differs at byte %d (Write %d)", i, i / chunk);
		return 1;
	}
	printf("neg: pipeline_16k: 16384 Writes (8 signaled) + Read of 1 MiB verified in %lld ms\n",
	       now_ms() - t0);
	return 0;
}

/* An invalidated (deregistered) STag stays dead, also after the same
 * memory is registered again. */
static int c_inval(struct cctx *x, bool write, char *why, size_t wl)
{
	struct ibv_wc wc;
	struct mrd old = x->inf.mr[1], *nw = (struct mrd *)(x->buf + 3 * PG);
	int st1, st2 = -2;

	/* control: the live STag works */
	memset(x->buf, GOOD, PG);
	if (recv1(x->qp, 100, nw, sizeof(*nw), x->mr->lkey) ||
	    post1(x->qp, 1, IBV_WR_RDMA_WRITE, x->buf, PG, x->mr->lkey, old.addr, old.rkey,
		  IBV_SEND_SIGNALED) || wait_wc(x->cq, EVENT_MS, &wc) != IBV_WC_SUCCESS ||
	    post1(x->qp, 2, IBV_WR_RDMA_READ, x->buf + PG, PG, x->mr->lkey, old.addr, old.rkey,
		  IBV_SEND_SIGNALED) || wait_wc(x->cq, EVENT_MS, &wc) != IBV_WC_SUCCESS ||
	    memcmp(x->buf, x->buf + PG, PG)) {
		snprintf(why, wl, "control Write/Read through the live STag failed");
		return 1;
	}
	memcpy(x->buf + 2 * PG, "DEREG", 5);
	if (post1(x->qp, 3, IBV_WR_SEND, x->buf + 2 * PG, 5, x->mr->lkey, 0, 0, IBV_SEND_SIGNALED)) {
		snprintf(why, wl, "DEREG exchange: post Send: %s", strerror(errno));
		return 1;
	}
	/*
	 * Two completions on the one CQ: our Send (3) and the server's reply
	 * (Recv 100).  Verbs does not order the send and receive queues'
	 * completions against each other: the reply may complete first.
	 */
	for (int got = 0; got != 3;) {
		st1 = wait_wc(x->cq, EVENT_MS, &wc);
		if (st1 != IBV_WC_SUCCESS) {
			snprintf(why, wl, "DEREG exchange: %s %s (have%s%s)",
				 st1 == -1 ? "no completion within" : "completion failed:",
				 st1 == -1 ? "60 s" : ibv_wc_status_str(wc.status),
				 got & 1 ? " Send" : "", got & 2 ? " reply" : "");
			return 1;
		}
		if (wc.wr_id == 3)
			got |= 1;
		else if (wc.wr_id == 100)
			got |= 2;
		else {
			snprintf(why, wl, "DEREG exchange: unexpected completion wr_id %llu",
				 (unsigned long long)wc.wr_id);
			return 1;
		}
	}
	if (nw->rkey == old.rkey) {
		snprintf(why, wl, "re-registration handed out the dead STag 0x%x again", old.rkey);
		return 1;
	}
	memset(x->buf, EVIL, PG);
	memset(x->buf + PG, 0, PG);
	if (post1(x->qp, 4, write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, x->buf + (write ? 0 : PG),
		  PG, x->mr->lkey, old.addr, old.rkey, IBV_SEND_SIGNALED)) {
		snprintf(why, wl, "post through the dead STag refused locally: %s", strerror(errno));
		return 1;
	}
	st1 = wait_wc(x->cq, EVENT_MS, &wc);
	if (st1 == IBV_WC_SUCCESS) {
		if (post1(x->qp, 5, IBV_WR_RDMA_READ, x->buf + 2 * PG, 8, x->mr->lkey,
			  x->inf.mr[0].addr, x->inf.mr[0].rkey, IBV_SEND_SIGNALED | IBV_SEND_FENCE))
			st2 = -3;
		else
			st2 = wait_wc(x->cq, EVENT_MS, &wc);
	}
	if (st1 == -1 || st2 == -1) {
		snprintf(why, wl, "no completion within %d ms", EVENT_MS);
		return 1;
	}
	if (st1 == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS) {
		snprintf(why, wl, "%s through the dead STag 0x%x succeeded", write ? "Write" : "Read",
			 old.rkey);
		return 1;
	}
	if (!write && st1 == IBV_WC_SUCCESS) {
		snprintf(why, wl, "Read through the dead STag completed successfully");
		return 1;
	}
	printf("neg: inval_%s: op %s, fence %s\n", write ? "write" : "read",
	       st1 >= 0 ? ibv_wc_status_str(st1) : "none",
	       st2 >= 0 ? ibv_wc_status_str(st2) : st2 == -3 ? "refused" : "not run");
	return term_check(x->qp, &x->tc, 0, find_case(write ? "inval_write" : "inval_read"), why,
			  wl);
}

/* MRs from 1 byte to 1 GiB: first and last byte of each, both ways. */
static int c_mr_sizes(struct cctx *x, char *why, size_t wl)
{
	struct ibv_wc wc;
	struct ibv_mr *lbig = NULL;
	uint8_t *lmap = NULL;
	int i;

	if (x->inf.nmr != 1 + (uint32_t)NSIZES(big)) {
		snprintf(why, wl, "server offered %u MRs, want %d", x->inf.nmr, 1 + NSIZES(big));
		return 1;
	}
	if (big) {
		long long t = now_ms();

		lmap = mmap(NULL, GIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		lbig = lmap != MAP_FAILED ? ibv_reg_mr(x->pd, lmap, GIB, IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (!lbig) {
			snprintf(why, wl, "local reg_mr of 1 GiB: %s", strerror(errno));
			return 1;
		}
		printf("neg: mr_sizes: local 1 GiB registered in %lld ms\n", now_ms() - t);
	}
	for (i = 0; i < NSIZES(big); i++) {
		const struct mrd *m = &x->inf.mr[1 + i];
		uint64_t len = mr_sizes[i];
		uint8_t *src = x->buf, *dst = x->buf + PG;
		uint32_t lkey = x->mr->lkey;

		if (m->len != (len > UINT32_MAX ? 0 : len)) {
			snprintf(why, wl, "MR %d: length %u, want %llu", i, m->len,
				 (unsigned long long)len);
			return 1;
		}
		if (lbig && len == GIB) {	/* the 1 GiB sink/source at both ends */
			src = lmap + GIB - 2;
			dst = lmap;
			lkey = lbig->lkey;
		}
		src[0] = (uint8_t)(0x40 + i);
		src[1] = (uint8_t)(0x80 + i);
		/* first byte, last byte, then read both back */
		if (post1(x->qp, 1, IBV_WR_RDMA_WRITE, src, 1, lkey, m->addr, m->rkey,
			  IBV_SEND_SIGNALED) || wait_wc(x->cq, EVENT_MS, &wc) != IBV_WC_SUCCESS ||
		    post1(x->qp, 2, IBV_WR_RDMA_WRITE, src + 1, 1, lkey, m->addr + len - 1, m->rkey,
			  IBV_SEND_SIGNALED) || wait_wc(x->cq, EVENT_MS, &wc) != IBV_WC_SUCCESS) {
			snprintf(why, wl, "Write to MR of %llu bytes failed", (unsigned long long)len);
			return 1;
		}
		dst[0] = dst[1] = 0;
		if (post1(x->qp, 3, IBV_WR_RDMA_READ, dst, 1, lkey, m->addr, m->rkey,
			  IBV_SEND_SIGNALED) || wait_wc(x->cq, EVENT_MS, &wc) != IBV_WC_SUCCESS ||
		    post1(x->qp, 4, IBV_WR_RDMA_READ, dst + 1, 1, lkey, m->addr + len - 1, m->rkey,
			  IBV_SEND_SIGNALED) || wait_wc(x->cq, EVENT_MS, &wc) != IBV_WC_SUCCESS) {
			snprintf(why, wl, "Read from MR of %llu bytes failed", (unsigned long long)len);
			return 1;
		}
		if (dst[0] != (uint8_t)(len == 1 ? 0x80 + i : 0x40 + i) || dst[1] != (uint8_t)(0x80 + i)) {
			snprintf(why, wl, "MR of %llu bytes read back %02x %02x", (unsigned long long)len,
				 dst[0], dst[1]);
			return 1;
		}
		printf("neg: mr_sizes: %llu bytes ok\n", (unsigned long long)len);
	}
	if (lbig)
		ibv_dereg_mr(lbig);
	if (lmap)
		munmap(lmap, GIB);
	return 0;
}

/* The SQ ring takes as many WRs as it has slots and says ENOMEM after;
 * what it took still completes. */
static int c_sq_full(struct cctx *x, char *why, size_t wl)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_send_wr wr[256], *bad = NULL;
	struct ibv_sge sge[256];
	struct ibv_wc wc;
	int i, n, rc, cap, got = 0;

	if (ibv_query_qp(x->qp, &a, IBV_QP_CAP, &ia)) {
		snprintf(why, wl, "query_qp: %s", strerror(errno));
		return 1;
	}
	cap = (int)ia.cap.max_send_wr;
	n = cap * 2 + 8 > 256 ? 256 : cap * 2 + 8;
	for (i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)x->buf + i * 64, 64, x->mr->lkey };
		wr[i] = (struct ibv_send_wr){ .wr_id = 500 + i, .sg_list = &sge[i], .num_sge = 1,
					      .opcode = IBV_WR_RDMA_WRITE,
					      .send_flags = IBV_SEND_SIGNALED,
					      .next = i + 1 < n ? &wr[i + 1] : NULL };
		wr[i].wr.rdma.remote_addr = x->inf.mr[0].addr + i * 64;
		wr[i].wr.rdma.rkey = x->inf.mr[0].rkey;
	}
	rc = ibv_post_send(x->qp, wr, &bad);
	if (rc != ENOMEM || !bad) {
		snprintf(why, wl, "posting %d WRs on an SQ of %d returned %d (%s), want ENOMEM", n, cap,
			 rc, rc ? strerror(rc) : "accepted all");
		return 1;
	}
	if (bad - wr < cap) {
		snprintf(why, wl, "SQ of %d refused WR %d", cap, (int)(bad - wr));
		return 1;
	}
	while (got < bad - wr && wait_wc(x->cq, EVENT_MS, &wc) == IBV_WC_SUCCESS)
		got++;
	if (got != bad - wr) {
		snprintf(why, wl, "%d of %d accepted WRs completed", got, (int)(bad - wr));
		return 1;
	}
	printf("neg: sq_full: SQ cap %d took %d WRs, ENOMEM on the next, all %d completed\n", cap,
	       (int)(bad - wr), got);
	return 0;
}

static int c_rq_full(struct cctx *x, char *why, size_t wl)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int i, cap, rc = 0;

	if (ibv_query_qp(x->qp, &a, IBV_QP_CAP, &ia))
		return 1;
	cap = (int)ia.cap.max_recv_wr;
	for (i = 0; i < 4 * cap + 8; i++) {
		rc = recv1(x->qp, 600 + i, x->buf + (i % 64) * 64, 64, x->mr->lkey);
		if (rc)
			break;
	}
	if (rc != ENOMEM || i < cap) {
		snprintf(why, wl, "RQ of %d: post %d returned %d (%s), want ENOMEM after >= %d", cap,
			 i, rc, strerror(rc), cap);
		return 1;
	}
	printf("neg: rq_full: RQ cap %d took %d receives, then ENOMEM\n", cap, i);
	return 0;
}

/* More completions than the CQ holds: the app must hear about it (one CQ
 * error event for the overflow, not one per lost completion), the QP goes
 * to ERROR (no further completions silently lost), nothing may hang or
 * crash. */
static int c_cq_overflow(struct cctx *x, char *why, size_t wl)
{
	struct ibv_async_event ae;
	struct ibv_context *ctx = x->id->verbs;
	int cqe = x->cq->cqe, i, n = cqe + 16, got = 0, cq_err = 0, fatal = 0;
	long long end;
	struct ibv_wc wc;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	long long t_end = now_ms() + 10000;

	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	for (i = 0; i < n; i++)
		if (post1(x->qp, 700 + i, IBV_WR_RDMA_WRITE, x->buf + i * 8, 8, x->mr->lkey,
			  x->inf.mr[0].addr + i * 8, x->inf.mr[0].rkey, IBV_SEND_SIGNALED)) {
			if (errno == ENOMEM && now_ms() < t_end) {
				usleep(10000);	/* the ring is full, not the CQ */
				i--;
				continue;
			}
			/* the QP may be in ERROR already (the overflow): the
			 * events below judge */
			printf("neg: cq_overflow: post %d: %s\n", i, strerror(errno));
			break;
		}
	/* the first CQ error event, then one more second for further ones */
	end = now_ms() + 10000;
	while (now_ms() < end) {
		if (!ibv_get_async_event(ctx, &ae)) {
			printf("neg: cq_overflow: async event %s\n", ibv_event_type_str(ae.event_type));
			if (ae.event_type == IBV_EVENT_CQ_ERR && !cq_err++)
				end = now_ms() + 1000;
			fatal += ae.event_type == IBV_EVENT_QP_FATAL;
			ibv_ack_async_event(&ae);
			continue;
		}
		usleep(10000);
	}
	while (ibv_poll_cq(x->cq, 1, &wc) == 1)
		got++;
	if (!cq_err) {
		snprintf(why, wl, "%d signaled WRs on a CQ of %d: no IBV_EVENT_CQ_ERR within 10 s (%d polled)",
			 n, cqe, got);
		return 1;
	}
	if (cq_err > 1) {
		snprintf(why, wl, "%d signaled WRs on a CQ of %d: %d CQ error events, want one per overflow",
			 n, cqe, cq_err);
		return 1;
	}
	if (ibv_query_qp(x->qp, &qa, IBV_QP_STATE, &qi) || qa.qp_state != IBV_QPS_ERR) {
		snprintf(why, wl, "QP state %d after its CQ overflowed, want ERR (%d fatal QP events)",
			 qa.qp_state, fatal);
		return 1;
	}
	printf("neg: cq_overflow: %d WRs on a CQ of %d: 1 CQ error event, %d fatal QP events, QP in ERR, %d completions polled\n",
	       n, cqe, fatal, got);
	return 0;
}

static int client(const char *addr, const char *port)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	int i, fails = 0;

	if (rdma_getaddrinfo(addr, port, &hints, &ai)) {
		perror("neg client: getaddrinfo");
		return 2;
	}
	for (i = 0; i < NCASES; i++) {
		const struct scase *sc = &scases[i];
		struct cctx x;

		if (skipped(sc->name)) {
			printf("SKIP: robust.neg.%s (NEG_SKIP: known bug, see tests/known-bugs)\n",
			       sc->name);
			continue;
		}
		{
		char why[300] = "";
		int cqe = 256, sq = 64, rq = 16, rc;
		long long t0 = now_ms();

		if (!strcmp(sc->name, "pipeline_16k"))
			sq = 8192;
		if (!strcmp(sc->name, "cq_overflow")) {
			cqe = 8;
			sq = 128;
		}
		rc = cconnect(&x, ai, sc->name, cqe, sq, rq, why, sizeof(why));
		if (!rc) {
			if (!strcmp(sc->name, "empty_rq") || !strcmp(sc->name, "small_rq"))
				rc = c_no_buffer(&x, sc, why, sizeof(why));
			else if (!strcmp(sc->name, "flush_local"))
				rc = c_flush_local(&x, why, sizeof(why));
			else if (!strcmp(sc->name, "flush_peer"))
				rc = 0;	/* the server judges: we just leave */
			else if (!strcmp(sc->name, "unsig_read"))
				rc = c_unsig_read(&x, why, sizeof(why));
			else if (!strcmp(sc->name, "pipeline_16k"))
				rc = c_pipeline(&x, why, sizeof(why));
			else if (!strcmp(sc->name, "inval_write"))
				rc = c_inval(&x, true, why, sizeof(why));
			else if (!strcmp(sc->name, "inval_read"))
				rc = c_inval(&x, false, why, sizeof(why));
			else if (!strcmp(sc->name, "mr_sizes"))
				rc = c_mr_sizes(&x, why, sizeof(why));
			else if (!strcmp(sc->name, "sq_full"))
				rc = c_sq_full(&x, why, sizeof(why));
			else if (!strcmp(sc->name, "rq_full"))
				rc = c_rq_full(&x, why, sizeof(why));
			else if (!strcmp(sc->name, "cq_overflow"))
				rc = c_cq_overflow(&x, why, sizeof(why));
		}
		cclose(&x);
		if (rc)
			printf("FAIL: robust.neg.%s [%s]\n", sc->name, why);
		else
			printf("PASS: robust.neg.%s (%lld ms)\n", sc->name, now_ms() - t0);
		fflush(stdout);
		fails += rc != 0;
		usleep(300000);
		}
	}
	rdma_freeaddrinfo(ai);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	noterm = getenv("NEG_NOTERM") && !strcmp(getenv("NEG_NOTERM"), "1");
	if (argc >= 2 && !strcmp(argv[1], "count")) {
		int i, n = 0;

		for (i = 0; i < NCASES; i++)
			n += !skipped(scases[i].name);
		printf("%d\n", n);
		return 0;
	}
	if (argc >= 5 && !strcmp(argv[1], "server")) {
		big = argc > 5 && !strcmp(argv[5], "big");
		return server(argv[2], argv[3], atoi(argv[4]));
	}
	if (argc >= 4 && !strcmp(argv[1], "client")) {
		big = argc > 4 && !strcmp(argv[4], "big");
		return client(argv[2], argv[3]);
	}
	fprintf(stderr, "usage: robust-neg server ADDR PORT NCONN [big] | client ADDR PORT [big] | count\n");
	return 2;
}
