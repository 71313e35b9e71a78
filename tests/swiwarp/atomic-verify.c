// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * atomic-verify: RFC 7306 remote atomics between two swiwarp endpoints,
 * and their refusal toward a peer without RFC 7306.
 *
 *   atomic-verify -s ADDR [-p PORT] [-q QPS] [-t ITERS] [-w SWAPS] [-n] [-X]
 *   atomic-verify -c ADDR [-p PORT] [-q QPS] [-t ITERS] [-w SWAPS] [-n] [-X]
 *   atomic-verify -s ADDR -b [-p PORT]
 *
 * Both ends must be given the same -q, -t and -w.  Without -n:
 *   1. QPS connections (ports PORT .. PORT+QPS-1), one client thread
 *      each.  Every thread posts ITERS Fetch-and-Adds of 1 on one
 *      counter (up to WINDOW outstanding), then Compare-and-Swaps on a
 *      second counter until SWAPS (default 50) of its swaps succeeded
 *      (each CAS compares with the value it believes current, learns
 *      the real one from a failed one).  Meanwhile a server thread adds 1 to the first
 *      counter with the CPU's own atomic instruction, again and again.
 *      Client: every completion is a success with the right opcode, and
 *      the QPS x ITERS original values the Fetch-and-Adds returned are
 *      all different (no two saw the same value: atomic against each
 *      other and the local CPU).  Server, once all clients are gone:
 *      counter 1 = QPS x ITERS + its own additions, counter 2 = QPS x
 *      SWAPS.
 *   2. Four more connections, one bad Atomic each, followed by a good
 *      Fetch-and-Add: a misaligned target (TO + 4), an STag registered
 *      without REMOTE_ATOMIC, a target just past the end of the region,
 *      the region registered with REMOTE_ATOMIC in another PD than the
 *      QP's.  The responder answers the bad one with a Terminate (RDMAP
 *      remote protection error: base or bounds, access rights, base or
 *      bounds, STag not associated with the stream; the client checks
 *      the one its QP received, qpterm.h), so the bad Atomic must
 *      complete with exactly IBV_WC_REM_ACCESS_ERR and the good one
 *      behind it with IBV_WC_WR_FLUSH_ERR.  Server: the counters and
 *      every other octet of the region and of its guard pages are
 *      unchanged (the good one was not performed either).
 *   3. One more connection, ordering (RFC 5040 ordering with the Atomics
 *      queued like Read Requests): each end in turn, the client first,
 *      posts back to back on the other end's page, without waiting:
 *      a Write of X to word 0, a Fetch-and-Add of 5 on word 0, a Read of
 *      word 0, a Read of word 1, a Compare-and-Swap on word 1 (I0 -> I1),
 *      a Fetch-and-Add of 1 on word 1, a Write of Z to word 1 with
 *      IBV_SEND_FENCE, a Read of word 1.  Checks: the Fetch-and-Add saw
 *      the Write before it (original X), the Read after it saw its
 *      result (X + 5), the Read before the Compare-and-Swap saw the old
 *      value (I0), the Compare-and-Swap swapped (original I0), the
 *      Fetch-and-Add behind it saw I1, the last Read saw the fenced
 *      Write (Z); the page's owner then finds X + 5 and Z in its words.
 *      Each end is requester once, so both directions (on the pair, the
 *      6.1 and the 6.12 module as responder) are covered.
 * With -n (one end is not RFC 7306, e.g. upstream siw): one connection;
 * each end posts a Fetch-and-Add and a Compare-and-Swap, which must fail
 * in ibv_post_send (EOPNOTSUPP on swiwarp, any error elsewhere), then the
 * client's Send must reach the server: no Terminate was caused.
 * With -b (bait, server only): an honest responder for tools/hostile's
 * verbs.* cases, which need a real target with IBV_ACCESS_REMOTE_ATOMIC
 * (rping's buffers have none).  It serves connections on PORT one after
 * the other until it is killed: each gets a fresh page whose first word
 * (the counter) is 0, registered with REMOTE_ATOMIC, struct srv_info in
 * the accept private data (host byte order, addr and rkey first) and
 * BAIT_RD Reads and Atomics outstanding each way (the IRD its MPA v2
 * Reply announces).  It prints one line per connection: the counter and
 * how many other octets of the page and its guard pages changed (must
 * be 0), and does not judge: the peer does.
 *
 * With -X the same steps and checks, but the QPs are made with
 * rdma_create_qp_ex() and IBV_QP_INIT_ATTR_SEND_OPS_FLAGS and every Atomic,
 * Write, Read and Send is posted through the ibv_wr_* API of the QP's
 * ibv_qp_ex (vcm_post_send() in verify-cm.c; step 3's sequence is one
 * ibv_wr_start() .. ibv_wr_complete() batch).
 *
 * Output: "ok ..." / "BAD ..." lines, then PASSED or FAILED; exit 0 only
 * if every check was ok.  Built by build_data_verify (suite-lib.sh):
 * cc -O2 -pthread -o atomic-verify atomic-verify.c verify-cm.c -lrdmacm -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "verify-cm.h"
#include "../robust/qpterm.h"

#define PAGE 4096u
#define MAXQP 16
#define WINDOW 8		/* Fetch-and-Adds outstanding per QP */
#define RD 8			/* ORD/IRD asked for */
#define TIMEOUT_S 60
#define FILL 0x5a
#define NNEG 4
#define BAIT_RD 4		/* -b: the IRD a hostile flood must exceed */
#define ORDX 0x0123456789abcdefull	/* the Write before the Atomic */
#define ORDI0 0x00000000c0ffee00ull	/* word 1 as its owner sets it */
#define ORDI1 0x1111222233334444ull	/* what the Compare-and-Swap swaps in */
#define ORDZ 0x7a7a5b5b3c3c1d1dull	/* the fenced Write after the Atomic */

struct srv_info {
	uint64_t addr;		/* the region: counter 1, counter 2, pattern */
	uint32_t rkey;		/* with REMOTE_ATOMIC */
	uint32_t rkey_noatomic;	/* the same region without it */
	uint32_t len;
	uint32_t rkey_otherpd;	/* the region, REMOTE_ATOMIC, another PD */
};

struct conn {
	struct vcm cm;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;	/* client: the sinks; server: the region */
	struct ibv_mr *mr2;	/* server: region without REMOTE_ATOMIC */
	struct ibv_pd *pd2;	/* server: a PD the QP is not in */
	struct ibv_mr *mr3;	/* server: region in pd2, REMOTE_ATOMIC */
	uint64_t *sink;
	struct srv_info si;
	int idx;
	uint64_t *orig;		/* client: ITERS originals of this QP */
	int failures;
	int recvd;		/* ordering: receives polled early */
	char why[200];
};

static int failures;
static int iters = 200;
static int nqp = 4;
static int swaps = 50;		/* successful Compare-and-Swaps per QP */

static char *port_str(const char *base, int k)
{
	static char buf[8][16];
	static int n;
	char *p = buf[n++ % 8];

	snprintf(p, 16, "%d", atoi(base) + k);
	return p;
}

static void conn_qp(struct conn *c, int recvs)
{
	struct ibv_context *verbs = c->cm.id->verbs;

	c->pd = ibv_alloc_pd(verbs);
	if (!c->pd)
		die("alloc_pd");
	c->cq = ibv_create_cq(verbs, 64, NULL, NULL, 0);
	if (!c->cq)
		die("create_cq");
	vcm_create_qp(&c->cm, c->pd, c->cq, c->cq, WINDOW + 4, recvs, 1);
}

/* Post one Atomic whose original value goes to sink slot 'slot'. */
static int post_atomic(struct conn *c, enum ibv_wr_opcode op, uint64_t raddr,
		       uint32_t rkey, uint64_t cmp_add, uint64_t swap,
		       int slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)&c->sink[slot],
			       .length = 8, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return vcm_post_send(c->cm.id->qp, &wr, &bad);
}

/* A completion of an Atomic that must have succeeded; 0 if it did not. */
static int atomic_done(struct conn *c, struct ibv_wc *wc,
		       enum ibv_wc_opcode want)
{
	if (!vcm_poll_one(c->cq, wc, TIMEOUT_S)) {
		snprintf(c->why, sizeof(c->why), "QP %d: no completion in %d s",
			 c->idx, TIMEOUT_S);
		return 0;
	}
	if (wc->status != IBV_WC_SUCCESS || wc->opcode != want) {
		snprintf(c->why, sizeof(c->why),
			 "QP %d: completion %s, opcode %d (want %d)", c->idx,
			 ibv_wc_status_str(wc->status), wc->opcode, want);
		return 0;
	}
	return 1;
}

/* Client thread: the Fetch-and-Adds, then the Compare-and-Swaps. */
static void *hammer(void *arg)
{
	struct conn *c = arg;
	uint64_t a1 = c->si.addr, a2 = c->si.addr + 8, cur = 0;
	int posted = 0, done = 0, ok = 0, tries = 0;
	struct ibv_wc wc;

	while (done < iters) {
		while (posted < iters && posted - done < WINDOW) {
			if (post_atomic(c, IBV_WR_ATOMIC_FETCH_AND_ADD, a1,
					c->si.rkey, 1, 0, posted % WINDOW)) {
				snprintf(c->why, sizeof(c->why),
					 "QP %d: post fetch-add: %s", c->idx,
					 strerror(errno));
				return NULL;
			}
			posted++;
		}
		if (!atomic_done(c, &wc, IBV_WC_FETCH_ADD))
			return NULL;
		/* completions come in order: wr_id is done % WINDOW */
		if ((int)wc.wr_id != done % WINDOW) {
			snprintf(c->why, sizeof(c->why),
				 "QP %d: completion %d out of order", c->idx,
				 done);
			return NULL;
		}
		c->orig[done++] = c->sink[wc.wr_id];
	}
	while (ok < swaps) {
		if (++tries > 100000) {
			snprintf(c->why, sizeof(c->why),
				 "QP %d: no progress with compare-and-swap",
				 c->idx);
			return NULL;
		}
		if (post_atomic(c, IBV_WR_ATOMIC_CMP_AND_SWP, a2, c->si.rkey,
				cur, cur + 1, 0)) {
			snprintf(c->why, sizeof(c->why),
				 "QP %d: post compare-and-swap: %s", c->idx,
				 strerror(errno));
			return NULL;
		}
		if (!atomic_done(c, &wc, IBV_WC_COMP_SWAP))
			return NULL;
		if (c->sink[0] == cur) {
			ok++;
			cur++;
		} else {
			cur = c->sink[0];
		}
	}
	c->failures = -1;	/* all done */
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void client_conn(struct conn *c, const char *addr, const char *port)
{
	vcm_resolve(&c->cm, addr, port);
	conn_qp(c, 1);
	c->sink = aligned_alloc(64, WINDOW * 8);
	if (!c->sink)
		die("no memory");
	c->mr = ibv_reg_mr(c->pd, c->sink, WINDOW * 8, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		die("reg_mr: %s", strerror(errno));
	vcm_connect(&c->cm, &c->si, sizeof(c->si), RD);
}

static void conn_free(struct conn *c)
{
	vcm_close(&c->cm);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->mr2)
		ibv_dereg_mr(c->mr2);
	if (c->mr3)
		ibv_dereg_mr(c->mr3);
	if (c->pd2)
		ibv_dealloc_pd(c->pd2);
	ibv_destroy_cq(c->cq);
	ibv_dealloc_pd(c->pd);
}

static const char *const neg_name[NNEG] = {
	"misaligned target (TO + 4)",
	"STag without REMOTE_ATOMIC",
	"target past the end of the region",
	"region of another PD",
};

/*
 * The Terminate each bad request draws: RDMAP (layer 0) remote protection
 * error (type 1) with this code (RFC 5040 section 7.1): base or bounds,
 * access rights, base or bounds, STag not associated with the stream.
 */
static const int neg_term_code[NNEG] = { 0x01, 0x02, 0x01, 0x03 };

/* Post one WR of the ordering sequence (local page offset loff, len). */
static void ord_post(struct conn *c, enum ibv_wr_opcode op, uint32_t loff,
		     uint32_t len, uint64_t raddr, uint32_t rkey,
		     uint64_t cmp_add, uint64_t swap, unsigned int flags, int id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->sink + loff,
			       .length = len, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uint64_t)id, .sg_list = &sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED | flags };
	struct ibv_send_wr *bad;
	int rc;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	rc = vcm_post_send(c->cm.id->qp, &wr, &bad);
	if (rc)
		die("ordering: post %d: %s", id, strerror(rc));
}

/*
 * The page of the ordering connection, as uint64_t words: 0 and 1 the
 * targets the peer works on, 8.. the sinks of our own sequence, 16 and
 * 17 the Write sources, 32.. a receive buffer.
 */
#define OW_SINK 8
#define OW_SRC 16
#define OW_RECV 32

/* Our sequence on the peer's page at raddr/rkey (who: for the messages). */
static void ord_sequence(struct conn *c, uint64_t raddr, uint32_t rkey,
			 const char *who)
{
	static const enum ibv_wc_opcode want[8] = {
		IBV_WC_RDMA_WRITE, IBV_WC_FETCH_ADD, IBV_WC_RDMA_READ,
		IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD,
		IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
	};
	uint64_t *w = c->sink, *r = w + OW_SINK;
	struct ibv_wc wc;
	int k, bad = 0;

	for (k = 0; k < 8; k++)
		r[k] = 0;
	w[OW_SRC] = ORDX;
	w[OW_SRC + 1] = ORDZ;
	ord_post(c, IBV_WR_RDMA_WRITE, OW_SRC * 8, 8, raddr, rkey, 0, 0, 0, 0);
	ord_post(c, IBV_WR_ATOMIC_FETCH_AND_ADD, (OW_SINK + 1) * 8, 8, raddr,
		 rkey, 5, 0, 0, 1);
	ord_post(c, IBV_WR_RDMA_READ, (OW_SINK + 2) * 8, 8, raddr, rkey, 0, 0,
		 0, 2);
	ord_post(c, IBV_WR_RDMA_READ, (OW_SINK + 3) * 8, 8, raddr + 8, rkey, 0,
		 0, 0, 3);
	ord_post(c, IBV_WR_ATOMIC_CMP_AND_SWP, (OW_SINK + 4) * 8, 8, raddr + 8,
		 rkey, ORDI0, ORDI1, 0, 4);
	ord_post(c, IBV_WR_ATOMIC_FETCH_AND_ADD, (OW_SINK + 5) * 8, 8,
		 raddr + 8, rkey, 1, 0, 0, 5);
	ord_post(c, IBV_WR_RDMA_WRITE, (OW_SRC + 1) * 8, 8, raddr + 8, rkey, 0,
		 0, IBV_SEND_FENCE, 6);
	ord_post(c, IBV_WR_RDMA_READ, (OW_SINK + 7) * 8, 8, raddr + 8, rkey, 0,
		 0, 0, 7);
	for (k = 0; k < 8; k++) {
		if (!vcm_poll_one(c->cq, &wc, TIMEOUT_S))
			die("ordering (%s): completion %d: none in %d s", who,
			    k, TIMEOUT_S);
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)k ||
		    wc.opcode != want[k]) {
			vcm_result(&failures, 0, "ordering (%s): completion %d: wr_id %llu %s opcode %d (want %d)",
			       who, k, (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status), wc.opcode,
			       want[k]);
			bad++;
		}
	}
	if (bad)
		return;
	vcm_result(&failures, r[1] == ORDX,
	       "ordering (%s): write-then-atomic: the Fetch-and-Add saw the Write before it (%#llx, want %#llx)",
	       who, (unsigned long long)r[1], (unsigned long long)ORDX);
	vcm_result(&failures, r[2] == ORDX + 5,
	       "ordering (%s): atomic-then-read: the Read behind the Fetch-and-Add saw its result (%#llx, want %#llx)",
	       who, (unsigned long long)r[2], (unsigned long long)(ORDX + 5));
	vcm_result(&failures, r[3] == ORDI0 && r[4] == ORDI0,
	       "ordering (%s): read-then-atomic: the Read before the Compare-and-Swap saw the old value (%#llx), the Compare-and-Swap swapped (original %#llx, want %#llx for both)",
	       who, (unsigned long long)r[3], (unsigned long long)r[4],
	       (unsigned long long)ORDI0);
	vcm_result(&failures, r[5] == ORDI1,
	       "ordering (%s): atomic-then-atomic: the Fetch-and-Add saw the swap before it (%#llx, want %#llx)",
	       who, (unsigned long long)r[5], (unsigned long long)ORDI1);
	vcm_result(&failures, r[7] == ORDZ,
	       "ordering (%s): atomic-then-fenced-write-then-read: the last Read saw the fenced Write (%#llx, want %#llx)",
	       who, (unsigned long long)r[7], (unsigned long long)ORDZ);
}

/* Post a receive of 16 octets into the page's receive words. */
static void ord_recv(struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(c->sink + OW_RECV),
			       .length = 16, .lkey = c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 0x7ec, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(c->cm.id->qp, &wr, &bad))
		die("post_recv: %s", strerror(errno));
}

/*
 * Wait for the peer's Send; its info in the receive words.  (One CQ for
 * both queues: ord_send_info() may have polled it already.)
 */
static void ord_wait_send(struct conn *c, const char *what)
{
	struct ibv_wc wc;

	if (c->recvd) {
		c->recvd--;
		return;
	}
	if (!vcm_poll_one(c->cq, &wc, TIMEOUT_S) || wc.status != IBV_WC_SUCCESS ||
	    wc.opcode != IBV_WC_RECV)
		die("ordering: %s: no good receive", what);
}

/* Send our page's address and rkey (also says "my sequence is done"). */
static void ord_send_info(struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(c->sink + OW_RECV + 2),
			       .length = 16, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x5e, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	c->sink[OW_RECV + 2] = (uintptr_t)c->sink;
	c->sink[OW_RECV + 3] = c->mr->rkey;
	if (vcm_post_send(c->cm.id->qp, &wr, &bad))
		die("post_send: %s", strerror(errno));
	for (;;) {
		if (!vcm_poll_one(c->cq, &wc, TIMEOUT_S) || wc.status != IBV_WC_SUCCESS)
			die("ordering: send: no good completion");
		if (wc.opcode == IBV_WC_SEND)
			return;
		if (wc.opcode != IBV_WC_RECV)
			die("ordering: send: completion opcode %d", wc.opcode);
		c->recvd++;
	}
}

/* Our page after the peer's sequence: word 0 = X + 5, word 1 = Z. */
static void ord_check_page(struct conn *c, const char *who)
{
	uint64_t w0 = __atomic_load_n(&c->sink[0], __ATOMIC_SEQ_CST);
	uint64_t w1 = __atomic_load_n(&c->sink[1], __ATOMIC_SEQ_CST);

	vcm_result(&failures, w0 == ORDX + 5 && w1 == ORDZ,
	       "ordering (%s): the target words hold %#llx %#llx (want %#llx %#llx)",
	       who, (unsigned long long)w0, (unsigned long long)w1,
	       (unsigned long long)(ORDX + 5), (unsigned long long)ORDZ);
}

/* Phase 3: the ordering connection, index nqp + NNEG. */
static void ordering(struct conn *c, int srv, const char *addr,
		     const char *port)
{
	double t0 = now();

	if (srv)
		vcm_take_request(&c->cm);
	else
		vcm_resolve(&c->cm, addr, port);
	conn_qp(c, 2);
	c->sink = aligned_alloc(PAGE, PAGE);
	if (!c->sink)
		die("no memory");
	memset(c->sink, 0, PAGE);
	c->sink[1] = ORDI0;
	c->mr = ibv_reg_mr(c->pd, c->sink, PAGE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!c->mr)
		die("reg_mr: %s", strerror(errno));
	ord_recv(c);
	if (srv) {
		c->si.addr = (uintptr_t)c->sink;
		c->si.rkey = c->mr->rkey;
		c->si.len = PAGE;
		vcm_accept(&c->cm, &c->si, sizeof(c->si), RD);
		/* the client's sequence, then its page */
		ord_wait_send(c, "the client's page");
		ord_check_page(c, "client requester, server responder");
		ord_recv(c);
		ord_sequence(c, c->sink[OW_RECV], (uint32_t)c->sink[OW_RECV + 1],
			     "server requester, client responder");
		ord_send_info(c);
		ord_wait_send(c, "the client's last word");
	} else {
		vcm_connect(&c->cm, &c->si, sizeof(c->si), RD);
		ord_sequence(c, c->si.addr, c->si.rkey,
			     "client requester, server responder");
		ord_send_info(c);
		ord_wait_send(c, "the server's done");
		ord_check_page(c, "server requester, client responder");
		ord_send_info(c);
	}
	conn_free(c);
	free(c->sink);
	printf("time ordering phase: %.2f s\n", now() - t0);
}

static int client(const char *addr, const char *port)
{
	struct conn c[MAXQP] = {};
	pthread_t th[MAXQP];
	uint64_t *all;
	int i, dup = 0;

	all = calloc((size_t)nqp * iters, sizeof(*all));
	if (!all)
		die("no memory");
	for (i = 0; i < nqp; i++) {
		c[i].idx = i;
		c[i].orig = all + (size_t)i * iters;
		client_conn(&c[i], addr, port_str(port, i));
	}
	for (i = 0; i < nqp; i++)
		if (pthread_create(&th[i], NULL, hammer, &c[i]))
			die("pthread_create");
	for (i = 0; i < nqp; i++) {
		pthread_join(th[i], NULL);
		vcm_result(&failures, c[i].failures == -1, "QP %d: %d fetch-adds, %d swaps%s%s",
		       i, iters, swaps, c[i].why[0] ? ": " : "",
		       c[i].why);
	}
	qsort(all, (size_t)nqp * iters, sizeof(*all), cmp_u64);
	for (i = 1; i < nqp * iters; i++)
		if (all[i] == all[i - 1])
			dup++;
	vcm_result(&failures, !dup, "%d fetch-add originals all different (%d duplicates, range %llu..%llu)",
	       nqp * iters, dup, (unsigned long long)all[0],
	       (unsigned long long)all[nqp * iters - 1]);
	for (i = 0; i < nqp; i++)
		conn_free(&c[i]);
	free(all);

	/*
	 * The bad ones, each on a connection of its own, a good Fetch-and-Add
	 * on counter 1 right behind: the bad one completes with the error the
	 * Terminate reports, the good one is flushed.
	 */
	for (i = 0; i < NNEG; i++) {
		struct conn n = { .idx = nqp + i };
		static const enum ibv_wc_status want[2] = {
			IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR
		};
		uint64_t raddr;
		uint32_t rkey;
		struct ibv_wc wc;
		int rc, k, l, t, code;

		client_conn(&n, addr, port_str(port, nqp + i));
		raddr = n.si.addr + (i == 0 ? 4 : i == 2 ? n.si.len : 0);
		rkey = i == 1 ? n.si.rkey_noatomic :
			i == 3 ? n.si.rkey_otherpd : n.si.rkey;
		rc = post_atomic(&n, IBV_WR_ATOMIC_FETCH_AND_ADD, raddr, rkey,
				 1, 0, 0);
		if (!rc)
			rc = post_atomic(&n, IBV_WR_ATOMIC_FETCH_AND_ADD,
					 n.si.addr, n.si.rkey, 1, 0, 1);
		if (rc) {
			vcm_result(&failures, 0, "%s: post failed locally: %s", neg_name[i],
			       strerror(rc));
			conn_free(&n);
			continue;
		}
		for (k = 0; k < 2; k++) {
			if (!vcm_poll_one(n.cq, &wc, TIMEOUT_S)) {
				vcm_result(&failures, 0, "%s: completion %d: none in %d s",
				       neg_name[i], k + 1, TIMEOUT_S);
				break;
			}
			vcm_result(&failures, wc.wr_id == (uint64_t)k && wc.status == want[k],
			       "%s: %s Fetch-and-Add: wr_id %llu %s (want %s)",
			       neg_name[i], k ? "the good" : "the bad",
			       (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status),
			       ibv_wc_status_str(want[k]));
		}
		/* what our QP received, as swiwarp reports it (qpterm.h) */
		rc = qp_term_find(n.cm.id->qp, 0, 3000, &l, &t, &code);
		vcm_result(&failures, rc == 1 && l == 0 && t == 1 && code == neg_term_code[i],
		       "%s: Terminate received: %slayer %d type %d code 0x%02x (want 0/1/0x%02x)",
		       neg_name[i], rc == 1 ? "" : "none reported by rdma res show qp -dd, ",
		       rc == 1 ? l : -1, rc == 1 ? t : -1, rc == 1 ? code : 0,
		       neg_term_code[i]);
		conn_free(&n);
	}
	{
		struct conn o = { .idx = nqp + NNEG };

		ordering(&o, 0, addr, port_str(port, nqp + NNEG));
	}
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}

static volatile int stop_local;
static uint64_t local_adds;

/* The server's own CPU adds to counter 1 while the clients do. */
static void *local_adder(void *arg)
{
	uint64_t *ctr = arg;

	while (!__atomic_load_n(&stop_local, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(ctr, 1, __ATOMIC_SEQ_CST);
		local_adds++;
		usleep(500);
	}
	return NULL;
}

/* The next connection on c (vcm_listen() done), the region its MRs. */
static void server_conn(struct conn *c, uint8_t *region, int access)
{
	vcm_take_request(&c->cm);
	conn_qp(c, 1);
	c->mr = ibv_reg_mr(c->pd, region, PAGE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			   access);
	c->mr2 = ibv_reg_mr(c->pd, region, PAGE,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	c->pd2 = ibv_alloc_pd(c->cm.id->verbs);
	if (!c->pd2)
		die("alloc_pd");
	c->mr3 = ibv_reg_mr(c->pd2, region, PAGE,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC);
	if (!c->mr || !c->mr2 || !c->mr3)
		die("reg_mr: %s", strerror(errno));
	c->si.addr = (uintptr_t)region;
	c->si.rkey = c->mr->rkey;
	c->si.rkey_noatomic = c->mr2->rkey;
	c->si.rkey_otherpd = c->mr3->rkey;
	c->si.len = PAGE;
	vcm_accept(&c->cm, &c->si, sizeof(c->si), RD);
}

/* Octets of the three pages other than the two counters that changed. */
static int region_changed(const uint8_t *buf)
{
	int n = 0;

	for (uint32_t i = 0; i < 3 * PAGE; i++)
		if ((i < PAGE || i >= PAGE + 16) && buf[i] != FILL)
			n++;
	return n;
}

static int server(const char *addr, const char *port)
{
	struct conn c[MAXQP + NNEG + 1] = {};
	uint8_t *buf = aligned_alloc(PAGE, 3 * PAGE);
	uint64_t *ctr, want1, want2, v1, v2;
	pthread_t lt;
	int i;

	if (!buf)
		die("no memory");
	/* guard page, the region, guard page */
	memset(buf, FILL, 3 * PAGE);
	ctr = (uint64_t *)(buf + PAGE);
	ctr[0] = 0;
	ctr[1] = 0;
	/* All ports listen before the first client connects. */
	for (i = nqp + NNEG; i >= 0; i--)
		vcm_listen(&c[i].cm, addr, port_str(port, i));
	for (i = 0; i < nqp; i++)
		server_conn(&c[i], buf + PAGE, IBV_ACCESS_REMOTE_ATOMIC);
	if (pthread_create(&lt, NULL, local_adder, &ctr[0]))
		die("pthread_create");
	for (i = 0; i < nqp; i++)
		conn_free(&c[i]);
	__atomic_store_n(&stop_local, 1, __ATOMIC_RELEASE);
	pthread_join(lt, NULL);
	want1 = (uint64_t)nqp * iters + local_adds;
	want2 = (uint64_t)nqp * swaps;
	v1 = __atomic_load_n(&ctr[0], __ATOMIC_SEQ_CST);
	v2 = __atomic_load_n(&ctr[1], __ATOMIC_SEQ_CST);
	vcm_result(&failures, v1 == want1,
	       "fetch-add counter %llu = %d QPs x %d + %llu local CPU adds",
	       (unsigned long long)v1, nqp, iters,
	       (unsigned long long)local_adds);
	vcm_result(&failures, v2 == want2, "compare-and-swap counter %llu, want %llu",
	       (unsigned long long)v2, (unsigned long long)want2);

	for (i = nqp; i < nqp + NNEG; i++) {
		server_conn(&c[i], buf + PAGE, IBV_ACCESS_REMOTE_ATOMIC);
		conn_free(&c[i]);
	}
	vcm_result(&failures, ctr[0] == v1 && ctr[1] == v2 && !region_changed(buf),
	       "after the bad requests: counters %llu %llu, %d other octets of the region and its guard pages changed",
	       (unsigned long long)ctr[0], (unsigned long long)ctr[1],
	       region_changed(buf));
	ordering(&c[nqp + NNEG], 1, addr, NULL);
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}

/* -n: Atomics must fail at the post; then a Send client -> server. */
static int refused(const char *addr, const char *port, int srv)
{
	struct conn c = {};
	const char *dev;
	uint8_t *mem = aligned_alloc(PAGE, PAGE);
	struct ibv_sge sge;
	struct ibv_send_wr swr = {}, *sbad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_wc wc;
	int k;

	if (!mem)
		die("no memory");
	memset(mem, 0, PAGE);
	if (srv)
		vcm_listen_one(&c.cm, addr, port);
	else
		vcm_resolve(&c.cm, addr, port);
	conn_qp(&c, 2);
	c.mr = ibv_reg_mr(c.pd, mem, PAGE,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!c.mr)
		die("reg_mr: %s", strerror(errno));
	c.sink = (uint64_t *)mem;
	sge = (struct ibv_sge){ .addr = (uintptr_t)mem + 64, .length = 64,
				.lkey = c.mr->lkey };
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	if (ibv_post_recv(c.cm.id->qp, &rwr, &rbad))
		die("post_recv: %s", strerror(errno));
	c.si.addr = (uintptr_t)mem;
	c.si.rkey = c.mr->rkey;
	if (srv)
		vcm_accept(&c.cm, &c.si, sizeof(c.si), RD);
	else
		vcm_connect(&c.cm, &c.si, sizeof(c.si), RD);
	dev = ibv_get_device_name(c.cm.id->verbs->device);
	for (k = 0; k < 2; k++) {
		enum ibv_wr_opcode op = k ? IBV_WR_ATOMIC_CMP_AND_SWP :
					    IBV_WR_ATOMIC_FETCH_AND_ADD;
		int rc = post_atomic(&c, op, c.si.addr, c.si.rkey, 1, 2, 0);

		if (strncmp(dev, "swiwarp", 7) == 0)
			vcm_result(&failures, rc == EOPNOTSUPP, "%s: %s post refused: %s", dev,
			       k ? "compare-and-swap" : "fetch-add",
			       rc ? strerror(rc) : "posted");
		else
			vcm_result(&failures, rc != 0, "%s: %s post refused: %s", dev,
			       k ? "compare-and-swap" : "fetch-add",
			       rc ? strerror(rc) : "posted");
	}
	if (srv) {
		vcm_result(&failures, vcm_poll_one(c.cq, &wc, TIMEOUT_S) && wc.status == IBV_WC_SUCCESS &&
		       wc.opcode == IBV_WC_RECV,
		       "the client's Send arrived after the refused atomics");
	} else {
		sge.length = 8;
		swr.sg_list = &sge;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		if (vcm_post_send(c.cm.id->qp, &swr, &sbad))
			die("post_send: %s", strerror(errno));
		vcm_result(&failures, vcm_poll_one(c.cq, &wc, TIMEOUT_S) && wc.status == IBV_WC_SUCCESS &&
		       wc.opcode == IBV_WC_SEND,
		       "a Send after the refused atomics");
	}
	conn_free(&c);
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}

/* -b: one bait connection, its page between two guard pages. */
struct bait {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct srv_info si;
	int n;
};

static void bait_free(struct bait *b)
{
	uint64_t ctr = *(uint64_t *)(b->buf + PAGE);
	int changed = 0;

	for (uint32_t i = 0; i < 3 * PAGE; i++)
		if ((i < PAGE || i >= PAGE + 8) && b->buf[i] != FILL)
			changed++;
	printf("bait %d: counter %llu, %d other octets changed\n", b->n,
	       (unsigned long long)ctr, changed);
	rdma_destroy_qp(b->id);
	ibv_dereg_mr(b->mr);
	ibv_destroy_cq(b->cq);
	ibv_dealloc_pd(b->pd);
	rdma_destroy_id(b->id);
	free(b->buf);
	free(b);
}

/*
 * A connection request: QP, page and MR, accept.  Events for it arrive
 * on the listener's channel; whatever ends it (a disconnect after the
 * peer's Terminate or ours, a refused accept) frees it.
 */
static void bait_request(struct rdma_cm_id *id, int n)
{
	struct bait *b = calloc(1, sizeof(*b));
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param cp = {
		.responder_resources = BAIT_RD,
		.initiator_depth = BAIT_RD,
	};

	if (!b)
		die("no memory");
	b->id = id;
	b->n = n;
	b->buf = aligned_alloc(PAGE, 3 * PAGE);
	b->pd = ibv_alloc_pd(id->verbs);
	b->cq = b->pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
	if (!b->buf || !b->cq)
		die("bait %d: no memory, PD or CQ", n);
	memset(b->buf, FILL, 3 * PAGE);
	*(uint64_t *)(b->buf + PAGE) = 0;
	qa.send_cq = b->cq;
	qa.recv_cq = b->cq;
	b->mr = ibv_reg_mr(b->pd, b->buf + PAGE, PAGE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!b->mr || rdma_create_qp(id, b->pd, &qa))
		die("bait %d: reg_mr or create_qp: %s", n, strerror(errno));
	b->si.addr = (uintptr_t)(b->buf + PAGE);
	b->si.rkey = b->mr->rkey;
	b->si.len = PAGE;
	cp.private_data = &b->si;
	cp.private_data_len = sizeof(b->si);
	id->context = b;
	if (rdma_accept(id, &cp)) {
		printf("bait %d: accept: %s\n", n, strerror(errno));
		bait_free(b);
	}
}

static int bait_serve(const char *addr, const char *port)
{
	struct vcm cm = {};
	int n = 0;

	vcm_listen(&cm, addr, port);
	printf("bait: listening on %s:%s, IRD %d\n", addr, port, BAIT_RD);
	for (;;) {
		struct rdma_cm_event *ev;
		struct rdma_cm_id *id;

		if (rdma_get_cm_event(cm.ch, &ev))
			die("rdma_get_cm_event: %s", strerror(errno));
		id = ev->id;
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			rdma_ack_cm_event(ev);
			bait_request(id, ++n);
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			rdma_ack_cm_event(ev);
			break;
		default:
			/* disconnected, or the connection failed: done */
			printf("bait: %s\n", rdma_event_str(ev->event));
			rdma_ack_cm_event(ev);
			if (id != cm.lid && id->context)
				bait_free(id->context);
			break;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct vcm_args a = { .role = -1, .port = "7581" };
	int neg = 0, baiting = 0, opt;

	while ((opt = getopt(argc, argv, "s:c:p:q:t:w:nXb")) != -1) {
		if (vcm_common_opt(&a, opt, optarg))
			continue;
		switch (opt) {
		case 'q':
			nqp = atoi(optarg);
			break;
		case 't':
			iters = atoi(optarg);
			break;
		case 'w':
			swaps = atoi(optarg);
			break;
		case 'n':
			neg = 1;
			break;
		case 'X':
			vcm_wr_api = 1;
			break;
		case 'b':
			baiting = 1;
			break;
		default:
			a.role = -1;
			break;
		}
	}
	if (a.role < 0 || !a.addr || nqp < 1 || nqp > MAXQP || iters < 1 ||
	    swaps < 1 || (baiting && a.role != 1)) {
		fprintf(stderr,
			"usage: %s -s ADDR | -c ADDR [-p PORT] [-q QPS 1-%d] [-t ITERS] [-w SWAPS] [-n] [-X]\n"
			"       %s -s ADDR -b [-p PORT]\n",
			argv[0], MAXQP, argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (baiting)
		return bait_serve(a.addr, a.port);
	if (vcm_wr_api)
		printf("posting with ibv_wr_* (ibv_qp_ex)\n");
	if (neg)
		return refused(a.addr, a.port, a.role);
	return a.role ? server(a.addr, a.port) : client(a.addr, a.port);
}
