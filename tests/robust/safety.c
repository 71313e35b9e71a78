// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * robust-safety: the memory-safety defects of issue 15, a regression case
 * each (80-robust-neg runs them on guest 2, tests/robust/neg-guest.sh):
 *
 *   robust-safety connfail|cqflush|mraccess|qpfail|qpbind|qpreuse|qpreset|ringstate ADDR
 *
 * connfail ADDR: rdma_connect to ADDR (the subnet's broadcast address:
 *   rdma_cm resolves it, TCP's connect() refuses it at once with
 *   ENETUNREACH), many times.  The synchronous failure used to free the
 *   endpoint before unlocking it (seen with slub_debug poisoning).
 * cqflush: (run unprivileged) a QP with a full RQ and then a full SQ
 *   flushed into a 1-entry CQ.  One CQ error event per overflow, not one
 *   per lost completion; the QP ends in ERROR.
 * mraccess ADDR: a loopback connection on ADDR; a receive buffer and a
 *   Read sink in an MR registered without IBV_ACCESS_LOCAL_WRITE must
 *   complete with a local protection error and stay unwritten.
 * qpfail ADDR: QP creations that fail at their last step (the driver's
 *   response goes to an unwritable page) while another process keeps
 *   calling rdma_connect with the QP number they are given; the failed
 *   QP must never be found, the error path must leave nothing behind.
 * qpbind, qpreuse and qpreset are told at their code below.
 * ringstate ADDR: not a defect but the tool that found where one was not:
 *   the ring state each QP and CQ reports (rdma res show qp/cq -dd),
 *   checked against the work requests a loopback pair posted and polled.
 *
 * Each prints PASS:/FAIL: lines robust.neg.safety.* (the names they had as
 * "robust-neg safety CASE").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/ib_user_verbs.h>

#include "iwarp/rdmap.h"
#include "neg-common.h"
#include "qpterm.h"

#define SAFE_PORT 7178
#define SAFE_ROUNDS 40

static int safe_connfail(const char *addr)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo *ai = lab_getai(addr, SAFE_PORT, false);
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { 4, 4, 1, 1, 0 } };
	int i, failed = 0, unreach = 0, connected = 0, other = 0;
	char why[200] = "";
	struct rdma_cm_event *ev;

	if (!ch || !ai) {
		printf("FAIL: robust.neg.safety.connfail [no channel/address %s]\n", addr);
		return 1;
	}
	for (i = 0; i < SAFE_ROUNDS; i++) {
		struct rdma_cm_id *id = lab_resolved_id(ch, ai->ai_dst_addr, EVENT_MS, why, sizeof(why));
		struct ibv_pd *pd;
		struct ibv_cq *cq;
		int rc, err;

		if (!id)
			break;
		pd = ibv_alloc_pd(id->verbs);
		cq = pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
		qa.send_cq = qa.recv_cq = cq;
		if (!cq || rdma_create_qp(id, pd, &qa)) {
			snprintf(why, sizeof(why), "verbs setup: %s", strerror(errno));
			rdma_destroy_id(id);
			break;
		}
		rc = rdma_connect(id, &cp);
		err = errno;
		if (rc) {
			failed++;
			unreach += err == ENETUNREACH;
		} else if ((ev = get_event(ch, 10000))) {
			/* an asynchronous failure is fine too, success is not */
			if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
				connected++;
			else
				failed++;
			rdma_ack_cm_event(ev);
		} else {
			other++;
		}
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
		ibv_destroy_cq(cq);
		ibv_dealloc_pd(pd);
	}
	rdma_freeaddrinfo(ai);
	rdma_destroy_event_channel(ch);
	printf("neg: safety.connfail: %d connects to %s: %d failed (%d at once with ENETUNREACH), %d connected, %d no answer\n",
	       i, addr, failed, unreach, connected, other);
	if (i < SAFE_ROUNDS) {
		printf("FAIL: robust.neg.safety.connfail [round %d: %s]\n", i, why);
		return 1;
	}
	if (connected || other || !unreach) {
		printf("FAIL: robust.neg.safety.connfail [want every connect to fail, some at once: %d failed, %d at once, %d connected, %d unanswered]\n",
		       failed, unreach, connected, other);
		return 1;
	}
	printf("PASS: robust.neg.safety.connfail (%d synchronous connect failures)\n", unreach);
	return 0;
}

static int safe_cqflush(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = l && l[0] ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 1, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { 256, 256, 1, 1, 0 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr qi;
	struct ibv_qp *qp;
	struct ibv_wc wc[8];
	int i, n, err1 = 0, err2 = 0, fatal = 0, other = 0, got1 = 0, got2 = 0, fails = 0;
	long long t0;

	qa.send_cq = qa.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp) {
		printf("FAIL: robust.neg.safety.cqflush [verbs setup (uid %d): %s]\n", (int)getuid(),
		       strerror(errno));
		return 1;
	}
	n = (int)qa.cap.max_recv_wr;
	for (i = 0; i < n; i++) {
		struct ibv_recv_wr wr = { .wr_id = 1000 + i }, *bad;

		if (ibv_post_recv(qp, &wr, &bad))
			break;
	}
	/* every posted receive is flushed into a CQ of cq->cqe entries */
	t0 = now_ms();
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE)) {
		printf("FAIL: robust.neg.safety.cqflush [modify_qp(ERR): %s]\n", strerror(errno));
		return 1;
	}
	lab_async_events(ctx, 2000, &err1, &fatal, &other);
	while ((i = ibv_poll_cq(cq, 8, wc)) > 0)
		got1 += i;
	printf("neg: safety.cqflush: %d receives flushed into a CQ of %d: %d CQ error events, %d completions (%lld ms)\n",
	       n, cq->cqe, err1, got1, now_ms() - t0);
	if (err1 != 1) {
		printf("FAIL: robust.neg.safety.cqflush.rq [%d CQ error events for one overflow, want 1]\n",
		       err1);
		fails++;
	} else {
		printf("PASS: robust.neg.safety.cqflush.rq (%d receives, CQ of %d: 1 event)\n", n,
		       cq->cqe);
	}
	/* the CQ is empty again: Sends posted in ERROR flush into it */
	n = (int)qa.cap.max_send_wr;
	for (i = 0; i < n; i++) {
		struct ibv_send_wr wr = { .wr_id = 5000 + i, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		if (ibv_post_send(qp, &wr, &bad))
			break;
	}
	lab_async_events(ctx, 2000, &err2, &fatal, &other);
	while ((i = ibv_poll_cq(cq, 8, wc)) > 0)
		got2 += i;
	printf("neg: safety.cqflush: %d Sends posted in ERROR: %d CQ error events, %d completions; %d fatal QP events, %d others\n",
	       n, err2, got2, fatal, other);
	if (err2 > 1 || fatal > 1) {
		printf("FAIL: robust.neg.safety.cqflush.sq [%d CQ error events for one overflow, %d fatal QP events]\n",
		       err2, fatal);
		fails++;
	} else {
		printf("PASS: robust.neg.safety.cqflush.sq (%d Sends: %d event)\n", n, err2);
	}
	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &qi) || a.qp_state != IBV_QPS_ERR) {
		printf("FAIL: robust.neg.safety.cqflush.state [QP state %d after the overflow, want ERR]\n",
		       a.qp_state);
		fails++;
	}
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(l);
	return fails != 0;
}

/* A connected loopback pair on one device: c (client side), s (accepted). */
struct lpair {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid, *c, *s;
	struct ibv_pd *pd;
	struct ibv_cq *ccq, *scq;
};

static void lpair_close(struct lpair *p)
{
	lab_pair_cm_close(p->ch, p->lid, p->c, p->s, 500);
	if (p->ccq)
		ibv_destroy_cq(p->ccq);
	if (p->scq)
		ibv_destroy_cq(p->scq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
	memset(p, 0, sizeof(*p));
}

/* lpair_open's server side: its QP (same device, PD and sizes as the client's), then srv_pre. */
struct lpair_server {
	struct lpair *p;
	int (*pre)(void *, struct lpair *);
	void *arg;
};

static int lpair_server_side(void *arg, struct rdma_cm_id *s)
{
	struct lpair_server *srv = arg;
	struct lpair *p = srv->p;
	struct ibv_qp_init_attr qa = lab_rc_qp_attr(p->scq, 16, 16);

	if (s->verbs != p->c->verbs || rdma_create_qp(s, p->pd, &qa))
		return -1;
	return srv->pre && srv->pre(srv->arg, p) ? -1 : 0;
}

/*
 * Connect p->c to a listener on addr; before the server side accepts,
 * srv_pre(arg, p) may post its receives.
 */
static int lpair_open(struct lpair *p, const char *addr, int port,
		      int (*srv_pre)(void *, struct lpair *), void *arg, char *why, size_t wl)
{
	struct lpair_server srv = { p, srv_pre, arg };
	struct ibv_qp_init_attr qa;

	memset(p, 0, sizeof(*p));
	why[0] = 0;
	if (lab_loop_listen(addr, port, EVENT_MS, &p->ch, &p->lid, &p->c, why, wl))
		return 1;
	p->pd = ibv_alloc_pd(p->c->verbs);
	p->ccq = p->pd ? ibv_create_cq(p->c->verbs, 64, NULL, NULL, 0) : NULL;
	p->scq = p->ccq ? ibv_create_cq(p->c->verbs, 64, NULL, NULL, 0) : NULL;
	qa = lab_rc_qp_attr(p->ccq, 16, 16);
	if (!p->scq || rdma_create_qp(p->c, p->pd, &qa)) {
		snprintf(why, wl, "client verbs: %s", strerror(errno));
		return 1;
	}
	return lab_loop_accept(p->ch, p->c, &p->s, lpair_server_side, &srv, EVENT_MS, why, wl) ? 1 : 0;
}

static uint8_t *ro_buf;
static struct ibv_mr *ro_mr;

static int ro_post_recv(void *arg, struct lpair *p)
{
	(void)arg;
	ro_mr = ibv_reg_mr(p->pd, ro_buf, PG, 0);	/* no local write */
	return !ro_mr || recv1(p->s->qp, 1, ro_buf, PG, ro_mr->lkey);
}

static bool all_bytes(const uint8_t *b, size_t n, uint8_t v)
{
	while (n--)
		if (*b++ != v)
			return false;
	return true;
}

/*
 * One mraccess sub-case on a fresh loopback pair: read_sink false, the
 * client Sends 64 bytes into the server's receive buffer ro_buf; true, the
 * client Reads a page into ro_buf.  ro_mr (ro_buf's MR) has no local write
 * either way, so the completion must be a local protection error and ro_buf
 * must keep its canary.  The pause before the Read's check is for a late
 * write that would come after its completion.
 */
static int mr_ro_case(const char *addr, bool read_sink, uint8_t *src)
{
	const char *name = read_sink ? "mr_ro_read" : "mr_ro_recv";
	const char *what = read_sink ? "Read into a read-only MR" : "receive in a read-only MR";
	struct ibv_mr *smr = NULL;
	struct lpair p;
	struct ibv_wc wc;
	char why[200] = "";
	int fails = 0, st, err;
	bool kept;

	memset(ro_buf, CANARY, PG);
	ro_mr = NULL;
	if (lpair_open(&p, addr, SAFE_PORT, read_sink ? NULL : ro_post_recv, NULL, why,
		       sizeof(why))) {
		printf("FAIL: robust.neg.safety.%s [setup: %s]\n", name, why);
		fails++;
		goto out;
	}
	smr = ibv_reg_mr(p.pd, src, 2 * PG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (read_sink)
		ro_mr = ibv_reg_mr(p.pd, ro_buf, PG, 0);
	if (!smr || !ro_mr)
		err = errno ? errno : ENOMEM;
	else if (read_sink)
		err = post1(p.c->qp, 3, IBV_WR_RDMA_READ, ro_buf, PG, ro_mr->lkey, (uintptr_t)src,
			    smr->rkey, IBV_SEND_SIGNALED);
	else
		err = post1(p.c->qp, 2, IBV_WR_SEND, src, 64, smr->lkey, 0, 0, IBV_SEND_SIGNALED);
	if (err) {
		printf("FAIL: robust.neg.safety.%s [setup/post: %s]\n", name, strerror(err));
		fails++;
	} else {
		/* the receive completes on the server's CQ, the Read on the client's */
		st = wait_wc(read_sink ? p.ccq : p.scq, 20000, &wc);
		if (read_sink)
			usleep(200000);
		kept = all_bytes(ro_buf, PG, CANARY);
		printf("neg: safety.%s: %s: %s, buffer %s\n", name, what,
		       st >= 0 ? ibv_wc_status_str(st) : "no completion",
		       kept ? "untouched" : "WRITTEN");
		if (st != IBV_WC_LOC_PROT_ERR || !kept) {
			printf("FAIL: robust.neg.safety.%s [%s: %s, buffer %s; want local protection error, untouched]\n",
			       name, what, st >= 0 ? ibv_wc_status_str(st) : "no completion",
			       kept ? "untouched" : "written");
			fails++;
		} else {
			printf("PASS: robust.neg.safety.%s\n", name);
		}
	}
out:
	if (smr)
		ibv_dereg_mr(smr);
	if (ro_mr)
		ibv_dereg_mr(ro_mr);
	ro_mr = NULL;
	lpair_close(&p);
	return fails;
}

static int safe_mraccess(const char *addr)
{
	uint8_t *src = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fails;

	ro_buf = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED || ro_buf == MAP_FAILED)
		return 1;
	memset(src, EVIL, 2 * PG);
	fails = mr_ro_case(addr, false, src);
	fails += mr_ro_case(addr, true, src);
	munmap(src, 2 * PG);
	munmap(ro_buf, PG);
	return fails != 0;
}

/*
 * ringstate: what rdma res show qp/cq -dd say about a loopback pair's rings
 * (swiwarp_stats.c), step by step: 5 receives posted on the server before
 * it accepts, 3 Sends from the client, their completions polled on the
 * client and not yet on the server, then polled there too.  The answers
 * must follow the work requests exactly (nothing else runs on the pair).
 */
struct ring_want {
	const char *obj, *name;
	unsigned long want;
};

static int ring_check(struct ibv_context *ctx, const char *step, const struct ring_want *w,
		      int n, int wait_ms)
{
	unsigned long got[8];
	int i, bad, waited = 0;

	for (;;) {
		bad = 0;
		for (i = 0; i < n; i++)
			if (res_driver_sum(ctx, w[i].obj, w[i].name, &got[i]) < 1 ||
			    got[i] != w[i].want)
				bad++;
		if (!bad || waited >= wait_ms)
			break;
		usleep(100000);
		waited += 100;
	}
	for (i = 0; i < n; i++)
		printf("neg: safety.ringstate: %s: %s %s %lu (want %lu)\n", step, w[i].obj,
		       w[i].name, got[i], w[i].want);
	if (bad) {
		printf("FAIL: robust.neg.safety.ringstate.%s [%d of %d ring states wrong, see above]\n",
		       step, bad, n);
		return 1;
	}
	printf("PASS: robust.neg.safety.ringstate.%s\n", step);
	return 0;
}

static uint8_t ring_buf[PG];
static struct ibv_mr *ring_mr;

static int ring_post_recvs(void *arg, struct lpair *p)
{
	int i;

	(void)arg;
	ring_mr = ibv_reg_mr(p->pd, ring_buf, sizeof(ring_buf), IBV_ACCESS_LOCAL_WRITE);
	for (i = 0; ring_mr && i < 5; i++)
		if (recv1(p->s->qp, 10 + i, ring_buf + i * 64, 64, ring_mr->lkey))
			return 1;
	return !ring_mr;
}

static int safe_ringstate(const char *addr)
{
	static const struct ring_want posted[] = {
		{ "qp", "rq_posted", 5 }, { "qp", "rq_get", 0 }, { "qp", "sq_get", 0 },
		{ "cq", "cq_put", 0 },
	};
	static const struct ring_want sent[] = {
		{ "qp", "rq_posted", 2 }, { "qp", "rq_get", 3 }, { "qp", "sq_get", 3 },
		{ "qp", "sq_posted", 0 }, { "cq", "cq_put", 6 }, { "cq", "cq_unpolled", 3 },
	};
	static const struct ring_want polled[] = {
		{ "cq", "cq_unpolled", 0 }, { "cq", "cq_put", 6 },
	};
	struct lpair p;
	struct ibv_wc wc;
	char why[200] = "";
	int fails = 0, i, err = 0;

	ring_mr = NULL;
	if (lpair_open(&p, addr, SAFE_PORT, ring_post_recvs, NULL, why, sizeof(why))) {
		printf("FAIL: robust.neg.safety.ringstate [setup: %s]\n", why);
		fails++;
		goto out;
	}
	fails += ring_check(p.c->verbs, "posted", posted, 4, 2000);
	for (i = 0; i < 3 && !err; i++)
		err = post1(p.c->qp, 20 + i, IBV_WR_SEND, ring_buf, 64, ring_mr->lkey, 0, 0,
			    IBV_SEND_SIGNALED);
	for (i = 0; i < 3 && !err; i++)
		if (wait_wc(p.ccq, 20000, &wc) != IBV_WC_SUCCESS)
			err = EIO;
	if (err) {
		printf("FAIL: robust.neg.safety.ringstate [3 Sends: %s]\n", strerror(err));
		fails++;
		goto out;
	}
	/* the server's receive completions may still be on their way */
	fails += ring_check(p.c->verbs, "sent", sent, 6, 5000);
	for (i = 0; i < 3 && !err; i++)
		if (wait_wc(p.scq, 20000, &wc) != IBV_WC_SUCCESS)
			err = EIO;
	if (err) {
		printf("FAIL: robust.neg.safety.ringstate [3 receives did not complete]\n");
		fails++;
		goto out;
	}
	fails += ring_check(p.c->verbs, "polled", polled, 2, 0);
out:
	if (ring_mr)
		ibv_dereg_mr(ring_mr);
	ring_mr = NULL;
	lpair_close(&p);
	return fails != 0;
}

/* Size of swiwarp's create_qp response (include/uapi/swiwarp-abi.h). */
#define SWIWARP_URESP_QP 48

/*
 * CREATE_QP through the raw write() ABI, with the response at resp: the
 * core's part (32 bytes) fits, the driver's part (its udata) follows.
 * Returns 0 or the errno.
 */
static int raw_create_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq, void *resp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_qp cmd;
	} req;

	memset(&req, 0, sizeof(req));
	req.hdr.command = IB_USER_VERBS_CMD_CREATE_QP;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = (sizeof(struct ib_uverbs_create_qp_resp) + SWIWARP_URESP_QP) / 4;
	req.cmd.response = (uintptr_t)resp;
	req.cmd.pd_handle = pd->handle;
	req.cmd.send_cq_handle = cq->handle;
	req.cmd.recv_cq_handle = cq->handle;
	req.cmd.max_send_wr = 4;
	req.cmd.max_recv_wr = 4;
	req.cmd.max_send_sge = 1;
	req.cmd.max_recv_sge = 1;
	req.cmd.qp_type = IBV_QPT_RC;
	return write(ctx->cmd_fd, &req, sizeof(req)) == (ssize_t)sizeof(req) ? 0 : errno;
}

/* Child: rdma_connect with QP numbers qpn..qpn+3 until stop; how often
 * rdma_cm found a QP there (the connect then fails with ENETUNREACH). */
static int qp_guesser(const char *bcast, uint32_t qpn, int seconds)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo *ai = lab_getai(bcast, SAFE_PORT, false);
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_id *id;
	long long end = now_ms() + seconds * 1000LL;
	int tries = 0, found = 0, other = 0;
	char why[200];

	id = ch && ai ? lab_resolved_id(ch, ai->ai_dst_addr, EVENT_MS, why, sizeof(why)) : NULL;
	if (!id) {
		printf("neg: safety.qpfail: guesser setup failed\n");
		return 255;
	}
	while (now_ms() < end) {
		cp.qp_num = qpn + (tries & 3);
		tries++;
		if (!rdma_connect(id, &cp)) {
			found++;	/* cannot connect to a broadcast address */
			break;
		}
		if (errno == ENETUNREACH)
			found++;
		else if (errno != EINVAL)
			other++;
	}
	printf("neg: safety.qpfail: guesser: %d connects with QP numbers %u..%u: %d found a QP, %d other errors\n",
	       tries, qpn, qpn + 3, found, other);
	return found ? 1 : other ? 2 : 0;
}

static int safe_qpfail(const char *bcast)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = l && l[0] ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { 4, 4, 1, 1, 0 } };
	uint8_t *pg = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i, n = 0, efault = 0, created = 0, other = 0, st = -1, fails = 0;
	uint32_t qpn, qpn2;
	struct ibv_qp *qp;
	long long end;
	pid_t pid;

	qa.send_cq = qa.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp || pg == MAP_FAILED) {
		printf("FAIL: robust.neg.safety.qpfail [verbs setup: %s]\n", strerror(errno));
		return 1;
	}
	/* QP numbers are the lowest free: the failing creates get this one */
	qpn = qp->qp_num;
	ibv_destroy_qp(qp);
	/* response: the core's 32 bytes end the first page, the driver's
	 * 48 bytes fall into the second, which cannot be written */
	mprotect(pg + PG, PG, PROT_NONE);
	i = raw_create_qp(ctx, pd, cq, pg);
	if (i) {
		printf("FAIL: robust.neg.safety.qpfail [raw CREATE_QP with a good response buffer: %s]\n",
		       strerror(i));
		return 1;
	}
	/* (its handle stays with the context until it is closed) */
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(qp_guesser(bcast, qpn + 1, 6));
	end = now_ms() + 5000;
	while (now_ms() < end) {
		i = raw_create_qp(ctx, pd, cq, pg + PG - sizeof(struct ib_uverbs_create_qp_resp));
		n++;
		if (!i)
			created++;
		else if (i == EFAULT)
			efault++;
		else
			other++;
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	printf("neg: safety.qpfail: %d creates with an unwritable driver response: %d EFAULT, %d created, %d other errors; guesser exit %d\n",
	       n, efault, created, other, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	if (efault != n) {
		printf("FAIL: robust.neg.safety.qpfail.error [%d of %d creates failed with EFAULT (%d succeeded)]\n",
		       efault, n, created);
		fails++;
	} else {
		printf("PASS: robust.neg.safety.qpfail.error (%d failed creates)\n", n);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("FAIL: robust.neg.safety.qpfail.hidden [rdma_connect found a QP whose creation failed (guesser exit %d)]\n",
		       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		fails++;
	} else {
		printf("PASS: robust.neg.safety.qpfail.hidden\n");
	}
	/* nothing kept: the next QP gets the number the failures had */
	qp = ibv_create_qp(pd, &qa);
	qpn2 = qp ? qp->qp_num : 0;
	if (!qp || qpn2 != qpn + 1) {
		printf("FAIL: robust.neg.safety.qpfail.after [next QP: %s, number %u, want %u]\n",
		       qp ? "created" : strerror(errno), qpn2, qpn + 1);
		fails++;
	} else {
		printf("PASS: robust.neg.safety.qpfail.after\n");
	}
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(l);
	return fails != 0;
}

/*
 * qpbind ADDR: rdma_cm takes the QP number of rdma_connect() and
 * rdma_accept() from its caller (conn_param.qp_num) and swiwarp looks it
 * up device-wide.  A QP created by one user (the victim, uid 65534) must
 * not be bound by another (the thief, uid 65533): the thief's connect and
 * accept with that number fail with EPERM and leave the victim's QP in
 * the state it had, while the same user's connection with QPs of its own is
 * established (so the EPERM is the owner check, not a broken path).  Run
 * as root: each side is a child that drops to its uid.
 */
#define QPBIND_VICTIM 65534
#define QPBIND_THIEF 65533
#define QPBIND_PORT 7195	/* 7195 closed, 7196 the accept, 7197 the control */

static int drop_to(uid_t uid)
{
	return setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid) ? -1 : 0;
}

/* Victim: a QP of its own, its number to wfd; after a byte on rfd, its state. */
static int qpbind_victim(int wfd, int rfd)
{
	struct ibv_device **l;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { 4, 4, 1, 1, 0 } }, ia;
	struct ibv_qp_attr a = { 0 };
	enum ibv_qp_state before;
	uint32_t qpn = 0;
	char c;

	if (!drop_to(QPBIND_VICTIM)) {
		l = ibv_get_device_list(NULL);
		ctx = l && l[0] ? ibv_open_device(l[0]) : NULL;
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		cq = pd ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
		qa.send_cq = qa.recv_cq = cq;
		qp = cq ? ibv_create_qp(pd, &qa) : NULL;
	}
	if (!qp)
		printf("neg: safety.qpbind: victim setup (uid %d): %s\n", (int)getuid(), strerror(errno));
	if (qp && ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		qp = NULL;
	before = a.qp_state;
	qpn = qp ? qp->qp_num : 0;
	fflush(stdout);
	if (write(wfd, &qpn, sizeof(qpn)) != sizeof(qpn) || !qp)
		return 2;
	if (read(rfd, &c, 1) < 0 || ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return 2;
	printf("neg: safety.qpbind: victim QP %u in state %d before the thief, %d after\n", qpn,
	       before, a.qp_state);
	return a.qp_state == before ? 0 : 1;
}

/* Thief: connect and accept with the victim's QP number vqpn. */
static int qpbind_thief(const char *addr, uint32_t vqpn)
{
	/* ucma refuses a file opened by other credentials: drop first */
	int dropped = drop_to(QPBIND_THIEF);
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo *ca = lab_getai(addr, QPBIND_PORT, false);
	struct rdma_addrinfo *la = lab_getai(addr, QPBIND_PORT + 1, true);
	struct rdma_addrinfo *ca2 = lab_getai(addr, QPBIND_PORT + 1, false);
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { 4, 4, 1, 1, 0 } };
	struct rdma_cm_id *id, *lid = NULL, *s = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct rdma_cm_event *ev;
	struct lpair lp;
	char why[200] = "";
	int r, e, fails = 0;

	if (dropped || !ch || !ca || !la || !ca2) {
		printf("FAIL: robust.neg.safety.qpbind [thief setup (uid %d): %s]\n", (int)getuid(),
		       strerror(errno));
		return 1;
	}
	/* rdma_connect naming the victim's QP (to a closed port) */
	id = lab_resolved_id(ch, ca->ai_dst_addr, EVENT_MS, why, sizeof(why));
	if (!id) {
		printf("FAIL: robust.neg.safety.qpbind.connect [%s]\n", why);
		return 1;
	}
	cp.qp_num = vqpn;
	r = rdma_connect(id, &cp);
	e = errno;
	if (!r || e != EPERM) {
		printf("FAIL: robust.neg.safety.qpbind.connect [rdma_connect as uid %d with uid %d's QP %u: %s, want EPERM]\n",
		       QPBIND_THIEF, QPBIND_VICTIM, vqpn, r ? strerror(e) : "it went through");
		fails++;
		while ((ev = get_event(ch, 3000)))
			rdma_ack_cm_event(ev);
	} else {
		printf("PASS: robust.neg.safety.qpbind.connect\n");
	}
	rdma_destroy_id(id);

	/* rdma_accept naming the victim's QP, for a connect from a QP of our own */
	id = NULL;
	if (lab_listen(ch, la->ai_src_addr, 4, &lid)) {
		snprintf(why, sizeof(why), "listen: %s", strerror(errno));
		goto accept_done;
	}
	id = lab_resolved_id(ch, ca2->ai_dst_addr, EVENT_MS, why, sizeof(why));
	pd = id ? ibv_alloc_pd(id->verbs) : NULL;
	cq = pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
	qa.send_cq = qa.recv_cq = cq;
	cp.qp_num = 0;
	if (!cq || rdma_create_qp(id, pd, &qa) || rdma_connect(id, &cp)) {
		if (!why[0])
			snprintf(why, sizeof(why), "active side: %s", strerror(errno));
		goto accept_done;
	}
	s = lab_connect_request(ch, EVENT_MS, why, sizeof(why));
	if (!s)
		goto accept_done;
	cp.qp_num = vqpn;
	r = rdma_accept(s, &cp);
	e = errno;
	if (!r || e != EPERM)
		snprintf(why, sizeof(why), "rdma_accept as uid %d with uid %d's QP %u: %s, want EPERM",
			 QPBIND_THIEF, QPBIND_VICTIM, vqpn, r ? strerror(e) : "it went through");
	/* the active side hears of it (reset or reject) */
	while ((ev = get_event(ch, 3000)))
		rdma_ack_cm_event(ev);
accept_done:
	if (why[0]) {
		printf("FAIL: robust.neg.safety.qpbind.accept [%s]\n", why);
		fails++;
	} else {
		printf("PASS: robust.neg.safety.qpbind.accept\n");
	}
	if (s)
		rdma_destroy_id(s);
	if (id) {
		if (id->qp)
			rdma_destroy_qp(id);
		rdma_destroy_id(id);
	}
	if (lid)
		rdma_destroy_id(lid);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);

	/* the same user, its own QPs: connected and accepted */
	why[0] = 0;
	if (lpair_open(&lp, addr, QPBIND_PORT + 2, NULL, NULL, why, sizeof(why))) {
		printf("FAIL: robust.neg.safety.qpbind.own [uid %d with its own QPs: %s]\n",
		       QPBIND_THIEF, why);
		fails++;
	} else {
		printf("PASS: robust.neg.safety.qpbind.own\n");
	}
	lpair_close(&lp);
	rdma_freeaddrinfo(ca);
	rdma_freeaddrinfo(la);
	rdma_freeaddrinfo(ca2);
	rdma_destroy_event_channel(ch);
	return fails != 0;
}

static int safe_qpbind(const char *addr)
{
	int to_thief[2], to_victim[2], st = -1, fails = 0;
	uint32_t vqpn = 0;
	pid_t victim, thief;
	char c = 1;

	if (pipe(to_thief) || pipe(to_victim)) {
		printf("FAIL: robust.neg.safety.qpbind [pipe: %s]\n", strerror(errno));
		return 1;
	}
	fflush(stdout);
	victim = fork();
	if (victim == 0)
		_exit(qpbind_victim(to_thief[1], to_victim[0]));
	if (victim < 0 || read(to_thief[0], &vqpn, sizeof(vqpn)) != sizeof(vqpn) || !vqpn) {
		printf("FAIL: robust.neg.safety.qpbind [the victim made no QP]\n");
		fails++;
	} else {
		thief = fork();
		if (thief == 0)
			_exit(qpbind_thief(addr, vqpn));
		if (thief < 0 || waitpid(thief, &st, 0) < 0 || !WIFEXITED(st))
			printf("FAIL: robust.neg.safety.qpbind [thief: no exit status]\n");
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fails++;
	}
	if (write(to_victim[1], &c, 1) != 1 || victim < 0 || waitpid(victim, &st, 0) < 0) {
		printf("FAIL: robust.neg.safety.qpbind.victim [no exit status]\n");
		return 1;
	}
	if (vqpn && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		printf("PASS: robust.neg.safety.qpbind.victim (QP %u unchanged)\n", vqpn);
	} else if (vqpn) {
		printf("FAIL: robust.neg.safety.qpbind.victim [uid %d's QP %u: %s]\n", QPBIND_VICTIM,
		       vqpn, WIFEXITED(st) && WEXITSTATUS(st) == 1 ? "its state changed" : "no state");
		fails++;
	}
	return fails != 0;
}

/*
 * qpreuse ADDR: one QP through two connections (issue 17).  rdma_cm binds
 * a connection to any QP of the caller by number (conn_param.qp_num), so
 * a consumer may keep its QP when a connection dies: modify it to RESET
 * and INIT and connect it again.  Nothing the TX engine held for the old
 * connection may show on the new one.
 *
 * First connection: to a plain TCP listener of ours (a child) that answers
 * the MPA Request and then reads nothing.  We post signalled one-FPDU
 * Sends until they stop completing: the TX engine then holds an FPDU
 * that ends a message, not (or not all) pushed.  The listener resets the connection; the
 * QP goes to ERROR and flushes.  Second connection: RESET, INIT, connect
 * to a swiwarp listener with peer_to_peer=1, so that the first FPDU on it
 * is the RTR, not one of a work request.  No completion of the first
 * connection may come back (.stale), Send, Write and Read data must
 * arrive intact (.data).  Then the consumer asks for a Terminate (modify
 * to SQE): the peer must receive RDMAP / local catastrophic / code 0x00
 * (RFC 5040 section 7: type 0 is one error, whatever the code; code 0 is
 * what we send for it everywhere) (.sqe_term).
 */
#define QPREUSE_PORT 7199	/* 7199 the silent TCP listener, 7200 swiwarp */
#define QPREUSE_MSG 1024	/* one FPDU on any MTU the lab uses */
#define QPREUSE_MAXPOST 20000
#define QPREUSE_NEW (1ULL << 40)	/* wr_id of the second connection's WRs */
#define QPREUSE_P2P "/sys/module/swiwarp/parameters/peer_to_peer"

/* Child: accept one connection, answer its MPA Request (rev 1, C as asked),
 * read nothing more; reset it once a byte comes on rfd. */
static int qpreuse_silent(const char *addr, int port, int wfd, int rfd)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct linger lg = { 1, 0 };
	int one = 1, small = 4096, ls, fd = -1;
	uint8_t req[20], rep[20];
	size_t got = 0;
	char c = 0;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	/* a small window: our side's socket buffer fills the sooner */
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(ls, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) ||
	    inet_pton(AF_INET, addr, &sin.sin_addr) != 1 ||
	    bind(ls, (struct sockaddr *)&sin, sizeof(sin)) || listen(ls, 1))
		c = 1;
	if (write(wfd, &c, 1) != 1 || c)
		return 1;
	fd = accept(ls, NULL, NULL);
	while (fd >= 0 && got < sizeof(req)) {
		ssize_t n = read(fd, req + got, sizeof(req) - got);

		if (n <= 0)
			return 1;
		got += (size_t)n;
	}
	if (fd < 0 || memcmp(req, "MPA ID Req Frame", 16))
		return 1;
	/* private data of the Request (rev 2: the IRD/ORD word) is left
	 * unread in the socket with everything that follows */
	memcpy(rep, "MPA ID Rep Frame", 16);
	rep[16] = req[16] & 0x40;	/* C echoed (RFC 5044), no markers */
	rep[17] = 1;			/* rev 1: no RFC 6581 word to answer */
	rep[18] = rep[19] = 0;
	if (write(fd, rep, sizeof(rep)) != sizeof(rep))
		return 1;
	if (read(rfd, &c, 1) != 1)
		return 1;
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
	close(ls);
	return 0;
}

static int qpreuse_p2p(const char *val, char *old, size_t ol)
{
	FILE *f = fopen(QPREUSE_P2P, "r+");
	int rc = -1;

	if (!f)
		return -1;
	if (old && fgets(old, (int)ol, f))
		old[strcspn(old, "\n")] = 0;
	rewind(f);
	if (fputs(val, f) >= 0)
		rc = 0;
	if (fclose(f))
		rc = -1;
	return rc;
}

/* Completions on cq within ms: first connection's counted in *old, the
 * second's checked against want (status success) into *ok. */
static void qpreuse_poll(struct ibv_cq *cq, int ms, int *old, uint64_t *old_id, int *old_st,
			 int *ok, int *bad)
{
	long long end = now_ms() + ms;
	struct ibv_wc wc;

	while (now_ms() < end) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n <= 0) {
			usleep(1000);
			continue;
		}
		if (wc.wr_id < QPREUSE_NEW) {
			if (!(*old)++) {
				*old_id = wc.wr_id;
				*old_st = wc.status;
			}
		} else if (wc.status == IBV_WC_SUCCESS) {
			(*ok)++;
		} else {
			(*bad)++;
		}
	}
}

/*
 * The rig of qpreuse and qpreset: one QP of ours through two connections.
 * The first goes to the silent listener (a child, on port), which resets
 * it when woken (reuse_rig_wake()); the second to an rdma_cm listener of
 * ours on port + 1 (reuse_second()), on the same address.
 */
struct reuse_rig {
	struct rdma_event_channel *ch;
	struct rdma_addrinfo *silent, *la, *ca;
	struct rdma_cm_id *id, *lid, *s;	/* ours, the listener, its side */
	int to_child[2], from_child[2];
	pid_t pid;
	/* the case's verbs objects, all freed by reuse_rig_close() */
	struct ibv_pd *pd;
	struct ibv_cq *cq, *rcq, *scq;	/* our QP's send and receive CQs, its side's */
	struct ibv_qp *qp;		/* ours, of ibv_create_qp: it outlives the ids */
	struct ibv_mr *mr, *smr;
	uint8_t *buf, *sbuf;
};

/* Start the silent listener and resolve the first connection's id. */
static int reuse_rig_open(struct reuse_rig *r, const char *addr, int port, char *why, size_t wl)
{
	char b = 0;

	memset(r, 0, sizeof(*r));
	r->to_child[0] = r->to_child[1] = r->from_child[0] = r->from_child[1] = -1;
	r->pid = -1;
	r->ch = rdma_create_event_channel();
	r->silent = lab_getai(addr, port, false);
	r->la = lab_getai(addr, port + 1, true);
	r->ca = lab_getai(addr, port + 1, false);
	if (!r->ch || !r->silent || !r->la || !r->ca || pipe(r->to_child) ||
	    pipe(r->from_child)) {
		snprintf(why, wl, "setup: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	r->pid = fork();
	if (r->pid == 0)
		_exit(qpreuse_silent(addr, port, r->from_child[1], r->to_child[0]));
	if (r->pid < 0 || read(r->from_child[0], &b, 1) != 1 || b) {
		snprintf(why, wl, "the silent listener did not start");
		return -1;
	}
	r->id = lab_resolved_id(r->ch, r->silent->ai_dst_addr, EVENT_MS, why, wl);
	return r->id ? 0 : -1;
}

/* The first connection, of the QP cp->qp_num, to the silent listener. */
static int reuse_first(struct reuse_rig *r, struct rdma_conn_param *cp, char *why, size_t wl)
{
	struct rdma_cm_event *ev;

	if (rdma_connect(r->id, cp)) {
		snprintf(why, wl, "connect to the silent listener: %s", strerror(errno));
		return -1;
	}
	ev = get_event(r->ch, EVENT_MS);
	if (!ev || ev->event != RDMA_CM_EVENT_ESTABLISHED) {
		snprintf(why, wl, "first connection: %s", ev ? rdma_event_str(ev->event) : "no event");
		if (ev)
			rdma_ack_cm_event(ev);
		return -1;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

/* The silent listener resets the first connection. */
static int reuse_rig_wake(struct reuse_rig *r)
{
	char b = 0;

	return write(r->to_child[1], &b, 1) == 1 ? 0 : -1;
}

/* Our end of the reset: DISCONNECTED (or nothing for 5 s); the id goes. */
static void reuse_first_gone(struct reuse_rig *r)
{
	struct rdma_cm_event *ev;

	while ((ev = get_event(r->ch, 5000))) {
		enum rdma_cm_event_type e = ev->event;

		rdma_ack_cm_event(ev);
		if (e == RDMA_CM_EVENT_DISCONNECTED)
			break;
	}
	rdma_destroy_id(r->id);
	r->id = NULL;
}

/* RESET, once the CM has let go of the socket (on its own time), and INIT. */
static int reuse_reset_init(struct ibv_qp *qp, int access, char *why, size_t wl)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
	int resets = 0;

	while (ibv_modify_qp(qp, &at, IBV_QP_STATE) && resets++ < 100)
		usleep(50000);
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = access;
	if (resets > 100 || ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_ACCESS_FLAGS)) {
		snprintf(why, wl, "RESET/INIT after the reset: %s (%d tries)", strerror(errno),
			 resets);
		return -1;
	}
	return 0;
}

/*
 * The second connection: the QP cp->qp_num to our listener, whose side
 * gets a QP of qa on pd and, before the accept, the receives post_recvs
 * posts (0 or -1 with errno).  Both ends ESTABLISHED.
 */
static int reuse_second(struct reuse_rig *r, struct ibv_pd *pd, struct ibv_qp_init_attr *qa,
			struct rdma_conn_param *cp, int (*post_recvs)(struct ibv_qp *, void *),
			void *arg, char *why, size_t wl)
{
	if (lab_listen(r->ch, r->la->ai_src_addr, 4, &r->lid)) {
		snprintf(why, wl, "listen: %s", strerror(errno));
		return -1;
	}
	r->id = lab_resolved_id(r->ch, r->ca->ai_dst_addr, EVENT_MS, why, wl);
	if (!r->id)
		return -1;
	if (rdma_connect(r->id, cp)) {
		snprintf(why, wl, "second connect: %s", strerror(errno));
		return -1;
	}
	r->s = lab_connect_request(r->ch, EVENT_MS, why, wl);
	if (!r->s)
		return -1;
	if (rdma_create_qp(r->s, pd, qa) || post_recvs(r->s->qp, arg) || rdma_accept(r->s, cp)) {
		snprintf(why, wl, "server side: %s", strerror(errno));
		return -1;
	}
	return lab_wait_established(r->ch, 2, EVENT_MS, why, wl);
}

/* The child (gone already unless the case failed early), the ids, the verbs objects. */
static void reuse_rig_close(struct reuse_rig *r)
{
	int st, i;

	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, &st, 0);
	}
	lab_pair_cm_close(r->ch, r->lid, r->id, r->s, 500);
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->smr)
		ibv_dereg_mr(r->smr);
	if (r->scq)
		ibv_destroy_cq(r->scq);
	if (r->rcq && r->rcq != r->cq)
		ibv_destroy_cq(r->rcq);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->ch)
		rdma_destroy_event_channel(r->ch);
	free(r->buf);
	free(r->sbuf);
	for (i = 0; i < 2; i++) {
		if (r->to_child[i] >= 0)
			close(r->to_child[i]);
		if (r->from_child[i] >= 0)
			close(r->from_child[i]);
	}
}

struct qpreuse_recv {
	uint8_t *buf;
	uint32_t lkey;
};

/* qpreuse's server side: one receive of a page for the Send. */
static int qpreuse_recvs(struct ibv_qp *qp, void *arg)
{
	struct qpreuse_recv *rv = arg;

	return recv1(qp, QPREUSE_NEW, rv->buf, PG, rv->lkey) ? -1 : 0;
}

static int safe_qpreuse(const char *addr)
{
	struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4 };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { 256, 16, 1, 1, 0 } };
	struct ibv_qp_attr at = { 0 };
	struct reuse_rig r;
	struct qpreuse_recv rv;
	int fails = 0, i, fr;
	int posted = 0, done = 0, ok = 0, flushed = 0, other = 0;
	int old = 0, old_st = 0, nok = 0, nbad = 0, l, t, c, rl, rt, rc;
	uint64_t old_id = 0;
	char why[200] = "", p2p_old[8] = "";
	bool p2p_set = false;
	long long quiet;

	if (reuse_rig_open(&r, addr, QPREUSE_PORT, why, sizeof(why)))
		goto stall_fail;
	r.buf = calloc(4, PG);
	r.sbuf = calloc(4, PG);
	r.pd = ibv_alloc_pd(r.id->verbs);
	r.cq = r.pd ? ibv_create_cq(r.id->verbs, 512, NULL, NULL, 0) : NULL;
	r.scq = r.cq ? ibv_create_cq(r.id->verbs, 64, NULL, NULL, 0) : NULL;
	qa.send_cq = qa.recv_cq = r.cq;
	/* a QP of our own, not rdma_create_qp's: it outlives the id */
	r.qp = r.scq ? ibv_create_qp(r.pd, &qa) : NULL;
	r.mr = r.qp && r.buf ? ibv_reg_mr(r.pd, r.buf, 4 * PG, IBV_ACCESS_LOCAL_WRITE) : NULL;
	r.smr = r.mr && r.sbuf ? ibv_reg_mr(r.pd, r.sbuf, 4 * PG, IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	if (!r.smr) {
		snprintf(why, sizeof(why), "verbs setup: %s", strerror(errno));
		goto stall_fail;
	}
	cp.qp_num = r.qp->qp_num;
	if (reuse_first(&r, &cp, why, sizeof(why)))
		goto stall_fail;
	/* Sends until none completes for 2 s: TCP took all it will take */
	quiet = now_ms();
	while (now_ms() - quiet < 2000 && posted < QPREUSE_MAXPOST) {
		struct ibv_wc wc;

		if (posted - done < (int)qa.cap.max_send_wr &&
		    !post1(r.qp, 1000 + posted, IBV_WR_SEND, r.buf, QPREUSE_MSG, r.mr->lkey, 0, 0,
			   IBV_SEND_SIGNALED))
			posted++;
		while (ibv_poll_cq(r.cq, 1, &wc) == 1) {
			done++;
			ok += wc.status == IBV_WC_SUCCESS;
			quiet = now_ms();
		}
		if (posted - done >= (int)qa.cap.max_send_wr)
			usleep(1000);
	}
	if (posted == done || posted >= QPREUSE_MAXPOST) {
		snprintf(why, sizeof(why), "the TX engine never stalled (%d Sends posted, %d done)",
			 posted, done);
		goto stall_fail;
	}
	printf("neg: safety.qpreuse: %d Sends of %d B: %d completed, %d stalled behind a full socket\n",
	       posted, QPREUSE_MSG, ok, posted - done);
	printf("PASS: robust.neg.safety.qpreuse.stall\n");
	/* the listener resets the connection under the stalled TX engine */
	if (reuse_rig_wake(&r)) {
		snprintf(why, sizeof(why), "cannot wake the silent listener");
		goto fail;
	}
	quiet = now_ms();
	while (done < posted && now_ms() - quiet < 30000) {
		struct ibv_wc wc;

		if (ibv_poll_cq(r.cq, 1, &wc) == 1) {
			done++;
			flushed += wc.status == IBV_WC_WR_FLUSH_ERR;
			other += wc.status != IBV_WC_WR_FLUSH_ERR && wc.status != IBV_WC_SUCCESS;
		} else {
			usleep(1000);
		}
	}
	reuse_first_gone(&r);
	printf("neg: safety.qpreuse: after the reset: %d flushed, %d other errors, %d of %d Sends completed\n",
	       flushed, other, done, posted);
	if (done < posted) {
		snprintf(why, sizeof(why), "%d Sends never completed after the reset", posted - done);
		goto fail;
	}
	if (reuse_reset_init(r.qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, why,
			     sizeof(why)))
		goto fail;
	/* second connection, the RTR first */
	if (qpreuse_p2p("Y", p2p_old, sizeof(p2p_old))) {
		snprintf(why, sizeof(why), "%s: %s", QPREUSE_P2P, strerror(errno));
		goto fail;
	}
	p2p_set = true;
	qa.send_cq = qa.recv_cq = r.scq;
	rv.buf = r.sbuf;
	rv.lkey = r.smr->lkey;
	if (reuse_second(&r, r.pd, &qa, &cp, qpreuse_recvs, &rv, why, sizeof(why)))
		goto fail;
	/* the RTR went first; whatever of the old connection it stirs comes now */
	qpreuse_poll(r.cq, 500, &old, &old_id, &old_st, &nok, &nbad);
	for (i = 0; i < 3 * PG; i++)
		r.buf[i] = (uint8_t)(i * 7 + 1);
	for (i = 0; i < 4 * PG; i++)
		r.sbuf[i] = (uint8_t)(i * 13 + 5);
	/* Send into r.sbuf[0..PG), Write into r.sbuf[PG..2PG), Read r.sbuf[2PG..3PG) */
	if (post1(r.qp, QPREUSE_NEW + 1, IBV_WR_SEND, r.buf, PG, r.mr->lkey, 0, 0, IBV_SEND_SIGNALED) ||
	    post1(r.qp, QPREUSE_NEW + 2, IBV_WR_RDMA_WRITE, r.buf + PG, PG, r.mr->lkey,
		  (uintptr_t)r.sbuf + PG, r.smr->rkey, IBV_SEND_SIGNALED) ||
	    post1(r.qp, QPREUSE_NEW + 3, IBV_WR_RDMA_READ, r.buf + 3 * PG, PG, r.mr->lkey,
		  (uintptr_t)r.sbuf + 2 * PG, r.smr->rkey, IBV_SEND_SIGNALED)) {
		snprintf(why, sizeof(why), "post on the second connection: %s", strerror(errno));
		goto fail;
	}
	{
		uint8_t want[PG];

		for (i = 0; i < PG; i++)
			want[i] = (uint8_t)((2 * PG + i) * 13 + 5);
		qpreuse_poll(r.cq, 3000, &old, &old_id, &old_st, &nok, &nbad);
		if (old) {
			printf("FAIL: robust.neg.safety.qpreuse.stale [%d completions of the first connection on the second, the first wr_id %llu status %s]\n",
			       old, (unsigned long long)old_id,
			       ibv_wc_status_str((enum ibv_wc_status)old_st));
			fails++;
		} else {
			printf("PASS: robust.neg.safety.qpreuse.stale\n");
		}
		if (nok != 3 || nbad || wait_wc(r.scq, 3000, &(struct ibv_wc){ 0 }) ||
		    memcmp(r.sbuf, r.buf, PG) || memcmp(r.sbuf + PG, r.buf + PG, PG) ||
		    memcmp(r.buf + 3 * PG, want, PG)) {
			printf("FAIL: robust.neg.safety.qpreuse.data [%d of 3 WRs succeeded, %d failed; Send %s, Write %s, Read %s]\n",
			       nok, nbad, memcmp(r.sbuf, r.buf, PG) ? "differs" : "ok",
			       memcmp(r.sbuf + PG, r.buf + PG, PG) ? "differs" : "ok",
			       memcmp(r.buf + 3 * PG, want, PG) ? "differs" : "ok");
			fails++;
		} else {
			printf("PASS: robust.neg.safety.qpreuse.data (Send, Write, Read of %d B)\n", PG);
		}
	}
	/* the consumer's Terminate: what our QP sent is what its peer received */
	at.qp_state = IBV_QPS_SQE;
	if (ibv_modify_qp(r.qp, &at, IBV_QP_STATE)) {
		printf("FAIL: robust.neg.safety.qpreuse.sqe_term [modify to SQE: %s]\n",
		       strerror(errno));
		fails++;
	} else if ((fr = qp_term_find(r.s->qp, 0, 5000, &rl, &rt, &rc)) != 1 ||
		   qp_term_find(r.qp, 1, 0, &l, &t, &c) != 1) {
		printf("FAIL: robust.neg.safety.qpreuse.sqe_term [%s reports no Terminate %s (rdma res show qp -dd)]\n",
		       fr != 1 ? "the peer's QP" : "our QP", fr != 1 ? "received" : "sent");
		fails++;
	} else if (l != IWARP_TERM_LAYER_RDMAP || t != IWARP_TERM_RDMAP_ETYPE_CATASTROPHIC ||
		   c != IWARP_TERM_RDMAP_CATASTROPHIC || rl != l || rt != t || rc != c) {
		printf("FAIL: robust.neg.safety.qpreuse.sqe_term [Terminate sent layer %d type %d code 0x%02x, received %d/%d/0x%02x; want RDMAP %d / local catastrophic %d / 0x%02x]\n",
		       l, t, c, rl, rt, rc, IWARP_TERM_LAYER_RDMAP,
		       IWARP_TERM_RDMAP_ETYPE_CATASTROPHIC, IWARP_TERM_RDMAP_CATASTROPHIC);
		fails++;
	} else {
		printf("PASS: robust.neg.safety.qpreuse.sqe_term (layer %d type %d code 0x%02x)\n", l,
		       t, c);
	}
	goto out;

stall_fail:
	printf("FAIL: robust.neg.safety.qpreuse.stall [%s]\n", why);
	fails++;
	goto out;
fail:
	printf("FAIL: robust.neg.safety.qpreuse [%s]\n", why);
	fails++;
out:
	if (p2p_set && qpreuse_p2p(p2p_old[0] ? p2p_old : "N", NULL, 0))
		printf("neg: safety.qpreuse: could not restore %s to %s\n", QPREUSE_P2P, p2p_old);
	reuse_rig_close(&r);
	return fails != 0;
}

/*
 * qpreset ADDR: a reset QP keeps nothing of its connection's SQ (issue 15,
 * "unfetched SQ carry-over").  The flush of ERROR completes the posted
 * WQEs, but it stops at a full CQ, and it runs in the TX worker, which a
 * quick RESET can beat; whatever it left posted must not go out on the
 * QP's next connection, perhaps to another peer.
 *
 * First connection: to the silent listener (qpreuse), the QP's send CQ
 * small.  QPRESET_POST unsignalled Sends of QPRESET_MSG octets stall
 * behind the full socket, most never fetched; the listener resets the
 * connection, and the flush overflows the CQ (seen: IBV_EVENT_CQ_ERR, or
 * the case cannot show anything: .overflow).  RESET, INIT, and a second
 * connection to a listener of ours whose QP has receives posted: nothing
 * of the first connection may reach it (.leftover), and a Send of the
 * second must, intact (.data).
 */
#define QPRESET_PORT 7201	/* 7201 the silent TCP listener, 7202 swiwarp */
#define QPRESET_POST 64
#define QPRESET_MSG 65536
#define QPRESET_RECVS 8
#define QPRESET_OLD 0x4f	/* the first connection's payload */

struct qpreset_recv {
	uint8_t *buf;
	uint32_t lkey;
};

/* qpreset's server side: a receive of QPRESET_MSG in each slot of buf. */
static int qpreset_recvs(struct ibv_qp *qp, void *arg)
{
	struct qpreset_recv *rv = arg;
	int i;

	for (i = 0; i < QPRESET_RECVS; i++)
		if (recv1(qp, i, rv->buf + (size_t)i * QPRESET_MSG, QPRESET_MSG, rv->lkey))
			return -1;
	return 0;
}

static int safe_qpreset(const char *addr)
{
	struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4 };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { QPRESET_POST, QPRESET_RECVS, 1, 1, 0 } };
	struct reuse_rig r;
	struct qpreset_recv rv;
	struct ibv_wc wc;
	int fails = 0, i, j, posted = 0, cqes = 0, leftover = 0, other = 0;
	int cq_err = 0, fatal = 0, async_other = 0;
	char why[200] = "";

	if (reuse_rig_open(&r, addr, QPRESET_PORT, why, sizeof(why)))
		goto fail;
	r.buf = malloc(QPRESET_MSG);
	r.sbuf = calloc(QPRESET_RECVS, QPRESET_MSG);
	r.pd = ibv_alloc_pd(r.id->verbs);
	/* the send CQ: far fewer entries than Sends, so the flush overflows it */
	r.cq = r.pd ? ibv_create_cq(r.id->verbs, 4, NULL, NULL, 0) : NULL;
	r.rcq = r.cq ? ibv_create_cq(r.id->verbs, 16, NULL, NULL, 0) : NULL;
	r.scq = r.rcq ? ibv_create_cq(r.id->verbs, 64, NULL, NULL, 0) : NULL;
	qa.send_cq = r.cq;
	qa.recv_cq = r.rcq;
	/* a QP of our own, not rdma_create_qp's: it outlives the id */
	r.qp = r.scq ? ibv_create_qp(r.pd, &qa) : NULL;
	r.mr = r.qp && r.buf ? ibv_reg_mr(r.pd, r.buf, QPRESET_MSG, IBV_ACCESS_LOCAL_WRITE) : NULL;
	r.smr = r.mr && r.sbuf ? ibv_reg_mr(r.pd, r.sbuf, QPRESET_RECVS * QPRESET_MSG,
				      IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!r.smr) {
		snprintf(why, sizeof(why), "verbs setup: %s", strerror(errno));
		goto fail;
	}
	if (r.cq->cqe >= QPRESET_POST / 2) {
		snprintf(why, sizeof(why), "a send CQ of %d entries: the flush would not overflow it",
			 r.cq->cqe);
		goto fail;
	}
	cp.qp_num = r.qp->qp_num;
	if (reuse_first(&r, &cp, why, sizeof(why)))
		goto fail;
	memset(r.buf, QPRESET_OLD, QPRESET_MSG);
	for (; posted < QPRESET_POST; posted++)
		if (post1(r.qp, posted, IBV_WR_SEND, r.buf, QPRESET_MSG, r.mr->lkey, 0, 0, 0)) {
			snprintf(why, sizeof(why), "Send %d of the first connection: %s", posted,
				 strerror(errno));
			goto fail;
		}
	/* the TX engine stalls behind the listener's window; then the reset */
	usleep(500000);
	if (reuse_rig_wake(&r)) {
		snprintf(why, sizeof(why), "cannot wake the silent listener");
		goto fail;
	}
	lab_async_events(r.pd->context, lab_scaled_ms(3000), &cq_err, &fatal, &async_other);
	if (!cq_err) {
		printf("FAIL: robust.neg.safety.qpreset.overflow [no CQ overflow: %d Sends flushed into a CQ of %d without one; the case shows nothing]\n",
		       QPRESET_POST, r.cq->cqe);
		fails++;
	} else {
		printf("PASS: robust.neg.safety.qpreset.overflow (CQ of %d, %d Sends posted)\n",
		       r.cq->cqe, QPRESET_POST);
	}
	while (ibv_poll_cq(r.cq, 1, &wc) == 1)
		cqes++;
	printf("neg: safety.qpreset: %d completions fitted into the send CQ\n", cqes);
	reuse_first_gone(&r);
	if (reuse_reset_init(r.qp, 0, why, sizeof(why)))
		goto fail;
	while (ibv_poll_cq(r.cq, 1, &wc) == 1)
		;	/* a reset QP's CQEs are the consumer's to discard */
	/* second connection: to a QP of ours with every receive posted */
	qa.send_cq = qa.recv_cq = r.scq;
	rv.buf = r.sbuf;
	rv.lkey = r.smr->lkey;
	if (reuse_second(&r, r.pd, &qa, &cp, qpreset_recvs, &rv, why, sizeof(why)))
		goto fail;
	/* the first connection's Sends would go out now, before any of ours */
	{
		long long end = now_ms() + lab_scaled_ms(2000);

		while (now_ms() < end) {
			if (ibv_poll_cq(r.scq, 1, &wc) != 1) {
				usleep(1000);
				continue;
			}
			if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV)
				leftover++;
			else
				other++;
		}
	}
	if (leftover || other) {
		printf("FAIL: robust.neg.safety.qpreset.leftover [%d Sends of the first connection arrived on the second, %d other completions at the server]\n",
		       leftover, other);
		fails++;
	} else {
		printf("PASS: robust.neg.safety.qpreset.leftover (none of %d)\n", QPRESET_POST);
	}
	/* the second connection's own Send, into the first free receive */
	i = leftover < QPRESET_RECVS ? leftover : QPRESET_RECVS - 1;
	for (j = 0; j < PG; j++)
		r.buf[j] = (uint8_t)(j * 11 + 3);
	if (leftover >= QPRESET_RECVS || post1(r.qp, QPRESET_POST, IBV_WR_SEND, r.buf, PG, r.mr->lkey,
					       0, 0, IBV_SEND_SIGNALED) ||
	    wait_wc(r.cq, lab_scaled_ms(3000), &wc) || wc.status != IBV_WC_SUCCESS ||
	    wait_wc(r.scq, lab_scaled_ms(3000), &wc) || wc.status != IBV_WC_SUCCESS ||
	    wc.byte_len != PG || memcmp(r.sbuf + (size_t)i * QPRESET_MSG, r.buf, PG)) {
		printf("FAIL: robust.neg.safety.qpreset.data [the second connection's Send did not arrive intact]\n");
		fails++;
	} else {
		printf("PASS: robust.neg.safety.qpreset.data (%d B)\n", PG);
	}
	goto out;

fail:
	printf("FAIL: robust.neg.safety.qpreset [%s]\n", why);
	fails++;
out:
	reuse_rig_close(&r);
	return fails != 0;
}

static int safety(const char *what, const char *addr)
{
	if (!strcmp(what, "connfail"))
		return safe_connfail(addr);
	if (!strcmp(what, "cqflush"))
		return safe_cqflush();
	if (!strcmp(what, "mraccess"))
		return safe_mraccess(addr);
	if (!strcmp(what, "qpfail"))
		return safe_qpfail(addr);
	if (!strcmp(what, "qpbind"))
		return safe_qpbind(addr);
	if (!strcmp(what, "qpreuse"))
		return safe_qpreuse(addr);
	if (!strcmp(what, "qpreset"))
		return safe_qpreset(addr);
	if (!strcmp(what, "ringstate"))
		return safe_ringstate(addr);
	fprintf(stderr, "robust-safety: unknown case %s\n", what);
	return 2;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3)
		return safety(argv[1], argv[2]);
	fprintf(stderr, "usage: robust-safety connfail|cqflush|mraccess|qpfail|qpbind|qpreuse|qpreset|ringstate ADDR\n");
	return 2;
}
