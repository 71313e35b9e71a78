// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * atomic-verify: RFC 7306 remote atomics between two swiwarp endpoints,
 * and their refusal toward a peer without RFC 7306.
 *
 *   atomic-verify -s ADDR [-p PORT] [-q QPS] [-t ITERS] [-w SWAPS] [-n]
 *   atomic-verify -c ADDR [-p PORT] [-q QPS] [-t ITERS] [-w SWAPS] [-n]
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
 *      bounds, STag not associated with the stream; the suite checks
 *      the codes in the server's kernel log), so the bad Atomic must
 *      complete with exactly IBV_WC_REM_ACCESS_ERR and the good one
 *      behind it with IBV_WC_WR_FLUSH_ERR.  Server: the counters and
 *      every other octet of the region and of its guard pages are
 *      unchanged (the good one was not performed either).
 * With -n (one end is not RFC 7306, e.g. upstream siw): one connection;
 * each end posts a Fetch-and-Add and a Compare-and-Swap, which must fail
 * in ibv_post_send (EOPNOTSUPP on swiwarp, any error elsewhere), then the
 * client's Send must reach the server: no Terminate was caused.
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

#define PAGE 4096u
#define MAXQP 16
#define WINDOW 8		/* Fetch-and-Adds outstanding per QP */
#define RD 8			/* ORD/IRD asked for */
#define TIMEOUT_S 60
#define FILL 0x5a
#define NNEG 4

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
	char why[200];
};

static int failures;
static int iters = 200;
static int nqp = 4;
static int swaps = 50;		/* successful Compare-and-Swaps per QP */

static void result(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s ", ok ? "ok" : "BAD");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!ok)
		failures++;
}

static char *port_str(const char *base, int k)
{
	static char buf[8][16];
	static int n;
	char *p = buf[n++ % 8];

	snprintf(p, 16, "%d", atoi(base) + k);
	return p;
}

/* Busy-poll one completion; 0 on timeout. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = now() + TIMEOUT_S;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			die("poll_cq: %d", n);
		if (n == 1)
			return 1;
		if (now() > end)
			return 0;
		usleep(20);
	}
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
	return ibv_post_send(c->cm.id->qp, &wr, &bad);
}

/* A completion of an Atomic that must have succeeded; 0 if it did not. */
static int atomic_done(struct conn *c, struct ibv_wc *wc,
		       enum ibv_wc_opcode want)
{
	if (!poll_one(c->cq, wc)) {
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
		result(c[i].failures == -1, "QP %d: %d fetch-adds, %d swaps%s%s",
		       i, iters, swaps, c[i].why[0] ? ": " : "",
		       c[i].why);
	}
	qsort(all, (size_t)nqp * iters, sizeof(*all), cmp_u64);
	for (i = 1; i < nqp * iters; i++)
		if (all[i] == all[i - 1])
			dup++;
	result(!dup, "%d fetch-add originals all different (%d duplicates, range %llu..%llu)",
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
		int rc, k;

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
			result(0, "%s: post failed locally: %s", neg_name[i],
			       strerror(rc));
			conn_free(&n);
			continue;
		}
		for (k = 0; k < 2; k++) {
			if (!poll_one(n.cq, &wc)) {
				result(0, "%s: completion %d: none in %d s",
				       neg_name[i], k + 1, TIMEOUT_S);
				break;
			}
			result(wc.wr_id == (uint64_t)k && wc.status == want[k],
			       "%s: %s Fetch-and-Add: wr_id %llu %s (want %s)",
			       neg_name[i], k ? "the good" : "the bad",
			       (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status),
			       ibv_wc_status_str(want[k]));
		}
		conn_free(&n);
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
	struct conn c[MAXQP + NNEG] = {};
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
	for (i = nqp + NNEG - 1; i >= 0; i--)
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
	result(v1 == want1,
	       "fetch-add counter %llu = %d QPs x %d + %llu local CPU adds",
	       (unsigned long long)v1, nqp, iters,
	       (unsigned long long)local_adds);
	result(v2 == want2, "compare-and-swap counter %llu, want %llu",
	       (unsigned long long)v2, (unsigned long long)want2);

	for (i = nqp; i < nqp + NNEG; i++) {
		server_conn(&c[i], buf + PAGE, IBV_ACCESS_REMOTE_ATOMIC);
		conn_free(&c[i]);
	}
	result(ctr[0] == v1 && ctr[1] == v2 && !region_changed(buf),
	       "after the bad requests: counters %llu %llu, %d other octets of the region and its guard pages changed",
	       (unsigned long long)ctr[0], (unsigned long long)ctr[1],
	       region_changed(buf));
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
			result(rc == EOPNOTSUPP, "%s: %s post refused: %s", dev,
			       k ? "compare-and-swap" : "fetch-add",
			       rc ? strerror(rc) : "posted");
		else
			result(rc != 0, "%s: %s post refused: %s", dev,
			       k ? "compare-and-swap" : "fetch-add",
			       rc ? strerror(rc) : "posted");
	}
	if (srv) {
		result(poll_one(c.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		       wc.opcode == IBV_WC_RECV,
		       "the client's Send arrived after the refused atomics");
	} else {
		sge.length = 8;
		swr.sg_list = &sge;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		if (ibv_post_send(c.cm.id->qp, &swr, &sbad))
			die("post_send: %s", strerror(errno));
		result(poll_one(c.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		       wc.opcode == IBV_WC_SEND,
		       "a Send after the refused atomics");
	}
	conn_free(&c);
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7581";
	int srv = -1, neg = 0, opt;

	while ((opt = getopt(argc, argv, "s:c:p:q:t:w:n")) != -1) {
		switch (opt) {
		case 's':
			srv = 1;
			addr = optarg;
			break;
		case 'c':
			srv = 0;
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
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
		default:
			srv = -1;
			break;
		}
	}
	if (srv < 0 || !addr || nqp < 1 || nqp > MAXQP || iters < 1 ||
	    swaps < 1) {
		fprintf(stderr,
			"usage: %s -s ADDR | -c ADDR [-p PORT] [-q QPS 1-%d] [-t ITERS] [-w SWAPS] [-n]\n",
			argv[0], MAXQP);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (neg)
		return refused(addr, port, srv);
	return srv ? server(addr, port) : client(addr, port);
}
