// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Allocation failures injected into every verbs call that reaches swiwarp
 * (issue 15 item 4), one fault point at a time.
 *
 *   robust-failnth ADDR PORT [SITE...]
 *
 * A kernel with CONFIG_FAULT_INJECTION (the debug lab kernel,
 * tools/debug-kernel.sh) has /proc/thread-self/fail-nth: writing N makes
 * the N-th fault point this thread passes fail (a slab allocation through
 * failslab, a page allocation through fail_page_alloc, as far as their
 * debugfs knobs let them take part: neg-guest.sh sets them), and reading
 * it back gives 0 once that failure was injected.  For each SITE (a verbs
 * or rdma_cm call: opening the device, a PD, CQ, SRQ, QP, MR, a connect,
 * an accept, a posted Send) this program runs the call with N = 1, 2, ...
 * until a run no longer reaches the N-th point.  So every allocation on
 * the call's path fails once, in uverbs, the RDMA core and swiwarp alike,
 * and each time:
 *   - the call fails with an errno or succeeds anyway (a fallback), and
 *     never hangs (connect and accept: a terminal CM event on both ends
 *     within 10 s);
 *   - what it created can be destroyed;
 *   - the device still works afterwards (a CQ and an MR can be made);
 * while the lab fails the boot on any kernel report (KASAN, lockdep,
 * sleeping in atomic) and, at its end, on any kmemleak object from the
 * RDMA stack (tests/lab/guest-run.sh).  A call that fails although
 * nothing was injected is a FAIL, so a site that is broken outright
 * cannot pass as "failed cleanly".
 *
 * Output: PASS/FAIL/SKIP lines robust.neg.failnth.SITE with the number of
 * fault points and the errnos seen.  Exit 0, or 1 after a FAIL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "lab-verbs.h"

/* More fault points than any of these calls has: a run that never ends. */
#define FAILNTH_MAX 400
#define CM_WAIT_MS 10000

static int failnth_fd = -1;
static int failures;

static void result(bool ok, const char *site, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("%s: robust.neg.failnth.%s %s\n", ok ? "PASS" : "FAIL", site, buf);
	fflush(stdout);
	if (!ok)
		failures++;
}

static void failnth_set(unsigned int n)
{
	char s[16];
	int l = snprintf(s, sizeof(s), "%u", n);

	if (pwrite(failnth_fd, s, (size_t)l, 0) != l) {
		perror("fail-nth write");
		exit(2);
	}
}

/* Still armed (the N-th point was not reached) or not; disarms it. */
static bool failnth_pending(void)
{
	char s[16] = "";
	ssize_t l = pread(failnth_fd, s, sizeof(s) - 1, 0);

	if (l <= 0) {
		perror("fail-nth read");
		exit(2);
	}
	failnth_set(0);
	return atoi(s) != 0;
}

/* What every site works with, made before the fault window opens. */
struct env {
	const char *addr;
	int port;
	struct ibv_device *dev;
	struct ibv_context *ctx;	/* one of cm_ctxs */
	struct ibv_context **cm_ctxs;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;
	size_t len;
	/* connect/accept/post: a listener and its channel */
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid;
};

/*
 * One call under test.  call() makes the object(s) and returns 0 or an
 * errno, with fail-nth armed around it; a site whose call happens in the
 * middle of other work (connect, accept, post) has armed() instead, which
 * arms fail-nth itself around that call only and says whether the fault
 * was injected there; -1 from it means nothing ended (a hang).  undo()
 * destroys what was made and returns 0 or an errno.
 */
struct site {
	const char *name;
	int (*call)(struct env *e, void **obj);
	int (*armed)(struct env *e, unsigned int n, bool *injected, void **obj);
	int (*undo)(struct env *e, void *obj);
};

static int err_or(int fallback)
{
	return errno ? errno : fallback;
}

static int run_open(struct env *e, void **obj)
{
	errno = 0;
	*obj = ibv_open_device(e->dev);
	return *obj ? 0 : err_or(EIO);
}

static int undo_open(struct env *e, void *obj)
{
	(void)e;
	return ibv_close_device(obj);
}

static int run_pd(struct env *e, void **obj)
{
	errno = 0;
	*obj = ibv_alloc_pd(e->ctx);
	return *obj ? 0 : err_or(EIO);
}

static int undo_pd(struct env *e, void *obj)
{
	(void)e;
	return ibv_dealloc_pd(obj);
}

static int run_cq(struct env *e, void **obj)
{
	errno = 0;
	*obj = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	return *obj ? 0 : err_or(EIO);
}

static int undo_cq(struct env *e, void *obj)
{
	(void)e;
	return ibv_destroy_cq(obj);
}

static int run_srq(struct env *e, void **obj)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 64, .max_sge = 2 } };

	errno = 0;
	*obj = ibv_create_srq(e->pd, &a);
	return *obj ? 0 : err_or(EIO);
}

static int undo_srq(struct env *e, void *obj)
{
	(void)e;
	return ibv_destroy_srq(obj);
}

static struct ibv_qp_init_attr qp_attr(struct env *e)
{
	struct ibv_qp_init_attr a = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
	};
	return a;
}

static int run_qp(struct env *e, void **obj)
{
	struct ibv_qp_init_attr a = qp_attr(e);

	errno = 0;
	*obj = ibv_create_qp(e->pd, &a);
	return *obj ? 0 : err_or(EIO);
}

static int undo_qp(struct env *e, void *obj)
{
	(void)e;
	return ibv_destroy_qp(obj);
}

static int run_mr(struct env *e, void **obj)
{
	errno = 0;
	*obj = ibv_reg_mr(e->pd, e->buf, e->len,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ);
	return *obj ? 0 : err_or(EIO);
}

static int undo_mr(struct env *e, void *obj)
{
	(void)e;
	return ibv_dereg_mr(obj);
}

/* ------------------------------------------------- a loopback connection */

/*
 * The two ends of one loopback connection: the active id on a channel of
 * its own, the accepted one on the listener's.  Each connect carries its
 * serial number in the private data, so a request left over from an
 * earlier (failed) run is refused instead of being taken for this one.
 */
struct pair {
	struct rdma_event_channel *cch;
	struct rdma_cm_id *c, *s;
	bool c_up, s_up;	/* ESTABLISHED seen */
	bool c_end, s_end;	/* a terminal event (error, reject, disconnect) */
	int fault_at;		/* 1: connect, 2: accept; 0: none */
	unsigned int fault_n;	/* fail-nth for the call under test */
	bool injected;		/* the fault was injected in that call */
	int rc;			/* errno of the call under test */
	uint32_t serial;
};

static uint32_t pair_serial;
/* Why the last set-up before an armed call failed, for its FAIL line. */
static char setup_why[200];

static bool cm_terminal(enum rdma_cm_event_type t)
{
	return t == RDMA_CM_EVENT_CONNECT_ERROR || t == RDMA_CM_EVENT_UNREACHABLE ||
	       t == RDMA_CM_EVENT_REJECTED || t == RDMA_CM_EVENT_DISCONNECTED ||
	       t == RDMA_CM_EVENT_DEVICE_REMOVAL;
}

static int pair_qp(struct env *e, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = qp_attr(e);

	return rdma_create_qp(id, e->pd, &a) ? err_or(EIO) : 0;
}

/* A connect request on the listener's channel: ours, or a leftover. */
static void pair_request(struct env *e, struct pair *p, struct rdma_cm_event *ev)
{
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_id *s = ev->id;
	uint32_t serial = 0;

	if (ev->param.conn.private_data && ev->param.conn.private_data_len >= sizeof(serial))
		memcpy(&serial, ev->param.conn.private_data, sizeof(serial));
	rdma_ack_cm_event(ev);
	if (p->s || serial != p->serial) {
		rdma_reject(s, NULL, 0);
		rdma_destroy_id(s);
		return;
	}
	p->s = s;
	if (pair_qp(e, s)) {
		rdma_reject(s, NULL, 0);
		p->s_end = true;
		return;
	}
	if (p->fault_at == 2)
		failnth_set(p->fault_n);
	p->rc = rdma_accept(s, &cp) ? err_or(EIO) : 0;
	if (p->fault_at == 2)
		p->injected = !failnth_pending();
	if (p->rc) {
		/* librdmacm's rule after a failed accept: reject (or destroy) */
		rdma_reject(s, NULL, 0);
		p->s_end = true;
	}
}

static void pair_event(struct pair *p, struct rdma_cm_event *ev)
{
	bool up = ev->event == RDMA_CM_EVENT_ESTABLISHED;
	bool end = cm_terminal(ev->event);

	if (ev->id == p->c) {
		p->c_up |= up;
		p->c_end |= end;
	} else if (p->s && ev->id == p->s) {
		p->s_up |= up;
		p->s_end |= end;
	}
	rdma_ack_cm_event(ev);
}

static bool pair_settled(const struct pair *p)
{
	if (p->c_up && p->s_up)
		return true;
	/* the active end has ended, and the passive one too if it exists */
	return p->c_end && (!p->s || p->s_end || p->s_up);
}

/*
 * Resolve, connect and accept, until both ends are up or each has ended
 * (or CM_WAIT_MS is over); the call under test (fault_at) runs with
 * fail-nth armed.  Returns 0 when both are up, the errno of the call under
 * test or ECONNREFUSED for a connection that ended without one, EAGAIN if
 * the set-up before the armed call failed, -1 if it hung.
 */
static int pair_make(struct env *e, struct pair *p)
{
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7 };
	struct rdma_addrinfo *ai;
	struct rdma_cm_event *ev;
	long long end;
	char why[160];

	p->serial = ++pair_serial;
	cp.private_data = &p->serial;
	cp.private_data_len = sizeof(p->serial);
	p->cch = rdma_create_event_channel();
	ai = lab_getai(e->addr, e->port, false);
	if (!p->cch || !ai) {
		snprintf(setup_why, sizeof(setup_why), "event channel or address of %s:%d: %s",
			 e->addr, e->port, strerror(errno));
		return EAGAIN;
	}
	p->c = lab_resolved_id(p->cch, ai->ai_dst_addr, CM_WAIT_MS, why, sizeof(why));
	rdma_freeaddrinfo(ai);
	if (!p->c) {
		snprintf(setup_why, sizeof(setup_why), "resolving %s: %s", e->addr, why);
		return EAGAIN;
	}
	if (pair_qp(e, p->c)) {
		snprintf(setup_why, sizeof(setup_why), "the active QP: %s", strerror(errno));
		return EAGAIN;
	}
	if (p->fault_at == 1)
		failnth_set(p->fault_n);
	p->rc = rdma_connect(p->c, &cp) ? err_or(EIO) : 0;
	if (p->fault_at == 1)
		p->injected = !failnth_pending();
	p->c_end = p->rc != 0;
	for (end = now_ms() + CM_WAIT_MS; now_ms() < end && !pair_settled(p);) {
		ev = get_event(e->ch, 50);
		if (ev && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			pair_request(e, p, ev);
		else if (ev)
			pair_event(p, ev);
		ev = get_event(p->cch, 50);
		if (ev)
			pair_event(p, ev);
	}
	if (p->c_up && p->s_up)
		return 0;
	if (!pair_settled(p))
		return -1;
	return p->rc ? p->rc : ECONNREFUSED;
}

/* Take down both ends; leftover requests on the listener are refused. */
static int pair_undo(struct env *e, void *obj)
{
	struct pair *p = obj;
	struct rdma_cm_event *ev;
	long long end;
	int rc = 0;

	if (!p)
		return 0;
	if (p->c && p->c_up)
		rdma_disconnect(p->c);
	if (p->s && p->s_up)
		rdma_disconnect(p->s);
	for (end = now_ms() + 300; now_ms() < end;) {
		ev = get_event(e->ch, 50);
		if (ev && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			pair_request(e, p, ev);	/* p->s is set or the serial is old */
		else if (ev)
			rdma_ack_cm_event(ev);
		ev = p->cch ? get_event(p->cch, 50) : NULL;
		if (ev)
			rdma_ack_cm_event(ev);
	}
	if (p->c) {
		if (p->c->qp)
			rdma_destroy_qp(p->c);
		if (rdma_destroy_id(p->c))
			rc = err_or(EIO);
	}
	if (p->s) {
		if (p->s->qp)
			rdma_destroy_qp(p->s);
		if (rdma_destroy_id(p->s))
			rc = err_or(EIO);
	}
	if (p->cch)
		rdma_destroy_event_channel(p->cch);
	free(p);
	return rc;
}

static int armed_cm(struct env *e, unsigned int n, bool *injected, void **obj, int at)
{
	struct pair *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return ENOMEM;
	p->fault_at = at;
	p->fault_n = n;
	*obj = p;
	rc = pair_make(e, p);
	*injected = p->injected;
	return rc;
}

static int armed_connect(struct env *e, unsigned int n, bool *injected, void **obj)
{
	return armed_cm(e, n, injected, obj, 1);
}

static int armed_accept(struct env *e, unsigned int n, bool *injected, void **obj)
{
	return armed_cm(e, n, injected, obj, 2);
}

/*
 * A Send and its Receive on a fresh connection, fail-nth armed around
 * ibv_post_send only (the provider writes the SQ ring and rings the
 * doorbell: the syscall, and the TX work it may do inline, are what is
 * under test).  Both completions must come, successful or not.
 */
static int armed_post(struct env *e, unsigned int n, bool *injected, void **obj)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = 64 };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc;
	struct pair *p;
	int rc, good = 0, bad = 0;
	bool sent = false;

	rc = armed_cm(e, 0, injected, obj, 0);
	p = *obj;
	*injected = false;
	if (rc) {
		if (rc != -1 && rc != EAGAIN)
			snprintf(setup_why, sizeof(setup_why), "the connection: %s", strerror(rc));
		return rc == -1 ? -1 : EAGAIN;
	}
	sge.lkey = e->mr->lkey;
	while (ibv_poll_cq(e->cq, 1, &wc) > 0)
		;
	if (ibv_post_recv(p->s->qp, &rwr, &rbad)) {
		snprintf(setup_why, sizeof(setup_why), "post_recv: %s", strerror(errno));
		return EAGAIN;
	}
	failnth_set(n);
	rc = ibv_post_send(p->c->qp, &swr, &sbad) ? err_or(EIO) : 0;
	*injected = !failnth_pending();
	if (rc)
		return rc;	/* refused: nothing to wait for */
	/*
	 * Not injected: the Send and the Receive both succeed.  Injected: the
	 * Send completes, successfully or not (its Receive may then never
	 * come: the QP that failed need not be the receiving one).
	 */
	for (long long end = now_ms() + CM_WAIT_MS; now_ms() < end;) {
		if (lab_wait_wc(e->cq, 200, &wc, 1000) < 0)
			continue;
		if (wc.status != IBV_WC_SUCCESS)
			bad++;
		else
			good++;
		if (wc.wr_id == 1)
			sent = true;
		if (*injected ? sent : good + bad == 2)
			break;
	}
	if (!sent)
		return -1;
	return *injected || (!bad && good == 2) ? 0 : EIO;
}

/* ------------------------------------------------------------ the sites */

static const struct site sites[] = {
	{ "open", run_open, NULL, undo_open },
	{ "pd", run_pd, NULL, undo_pd },
	{ "cq", run_cq, NULL, undo_cq },
	{ "srq", run_srq, NULL, undo_srq },
	{ "qp", run_qp, NULL, undo_qp },
	{ "mr", run_mr, NULL, undo_mr },
	{ "connect", NULL, armed_connect, pair_undo },
	{ "accept", NULL, armed_accept, pair_undo },
	{ "post", NULL, armed_post, pair_undo },
};

static int site_once(const struct site *st, struct env *e, unsigned int n, bool *injected,
		     void **obj)
{
	int rc;

	*obj = NULL;
	if (st->armed)
		return st->armed(e, n, injected, obj);
	failnth_set(n);
	rc = st->call(e, obj);
	*injected = !failnth_pending();
	return rc;
}

/* The device still works: a CQ and an MR can be made and destroyed. */
static bool device_usable(struct env *e)
{
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 8, NULL, NULL, 0);
	struct ibv_mr *mr = ibv_reg_mr(e->pd, e->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	bool ok = cq && mr;

	if (mr)
		ok &= !ibv_dereg_mr(mr);
	if (cq)
		ok &= !ibv_destroy_cq(cq);
	return ok;
}

/* errnos seen, as "ENOMEM x3 EIO x1" */
struct errs {
	int code[8];
	int count[8];
	int n;
};

static void errs_add(struct errs *x, int code)
{
	int i;

	for (i = 0; i < x->n && x->code[i] != code; i++)
		;
	if (i == x->n) {
		if (x->n == 8)
			return;
		x->code[x->n++] = code;
	}
	x->count[i]++;
}

static const char *errs_str(const struct errs *x, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (int i = 0; i < x->n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s x%d", i ? " " : "",
				      strerrorname_np(x->code[i]) ?: "?", x->count[i]);
	return buf;
}

/* A call that failed made nothing, and the verbs destroy calls take no NULL. */
static int site_undo(const struct site *st, struct env *e, void *obj)
{
	return obj ? st->undo(e, obj) : 0;
}

static void site_run(const struct site *st, struct env *e)
{
	unsigned int n;
	int tolerated = 0, rc, urc;
	struct errs errs = { 0 };
	char eb[200];
	bool injected;
	void *obj;
	long long t0 = now_ms();

	for (n = 1; n <= FAILNTH_MAX; n++) {
		rc = site_once(st, e, n, &injected, &obj);
		if (rc == -1) {
			result(false, st->name, "fault point %u: nothing ended within %d ms (hang)",
			       n, CM_WAIT_MS);
			site_undo(st, e, obj);
			return;
		}
		if (rc == EAGAIN && !injected) {
			result(false, st->name, "fault point %u: the set-up before the call failed (%s)",
			       n, setup_why);
			site_undo(st, e, obj);
			return;
		}
		urc = site_undo(st, e, obj);
		if (!injected) {
			/* fewer than n points: this run had none, so it must succeed */
			if (rc)
				result(false, st->name, "failed without a fault (%s) after %u points",
				       strerror(rc), n - 1);
			else if (urc)
				result(false, st->name, "destroy failed without a fault (%s)",
				       strerror(urc));
			else
				result(true, st->name,
				       "(%u fault points, each failed once: errors %s, succeeded anyway %d; %lld ms)",
				       n - 1, errs.n ? errs_str(&errs, eb, sizeof(eb)) : "none",
				       tolerated, now_ms() - t0);
			return;
		}
		if (rc)
			errs_add(&errs, rc);
		else
			tolerated++;
		if (urc) {
			result(false, st->name, "fault point %u: destroying what was made failed: %s",
			       n, strerror(urc));
			return;
		}
		if (!device_usable(e)) {
			result(false, st->name, "fault point %u: the device is unusable afterwards", n);
			return;
		}
	}
	result(false, st->name, "more than %d fault points: a run that never ends", FAILNTH_MAX);
}

static int env_open(struct env *e, const char *devname)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct rdma_addrinfo *ai;

	for (int i = 0; list && list[i]; i++)
		if (!devname || !strcmp(ibv_get_device_name(list[i]), devname))
			e->dev = e->dev ? e->dev : list[i];
	if (!e->dev)
		return fprintf(stderr, "failnth: no RDMA device %s\n", devname ?: ""), -1;
	e->len = 256 * 1024;
	e->buf = aligned_alloc(4096, e->len);
	/*
	 * librdmacm's own context of the device: rdma_create_qp() wants the
	 * PD of the context its ids are bound to (EINVAL otherwise).
	 */
	e->cm_ctxs = rdma_get_devices(NULL);
	for (int i = 0; e->cm_ctxs && e->cm_ctxs[i]; i++)
		if (!strcmp(ibv_get_device_name(e->cm_ctxs[i]->device),
			    ibv_get_device_name(e->dev)))
			e->ctx = e->cm_ctxs[i];
	e->pd = e->ctx ? ibv_alloc_pd(e->ctx) : NULL;
	e->cq = e->pd ? ibv_create_cq(e->ctx, 256, NULL, NULL, 0) : NULL;
	e->mr = e->cq && e->buf ? ibv_reg_mr(e->pd, e->buf, e->len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!e->mr)
		return fprintf(stderr, "failnth: device set-up failed: %s\n", strerror(errno)), -1;
	memset(e->buf, 0x5a, e->len);
	e->ch = rdma_create_event_channel();
	ai = lab_getai(e->addr, e->port, true);
	if (!e->ch || !ai || lab_listen(e->ch, ai->ai_src_addr, 8, &e->lid))
		return fprintf(stderr, "failnth: listen on %s:%d: %s\n", e->addr, e->port,
			       strerror(errno)), -1;
	rdma_freeaddrinfo(ai);
	return 0;
}

int main(int argc, char **argv)
{
	struct env e = { 0 };
	int i, j, ran = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s ADDR PORT [SITE...]\n", argv[0]);
		return 2;
	}
	e.addr = argv[1];
	e.port = atoi(argv[2]);
	failnth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (failnth_fd < 0) {
		printf("SKIP: robust.neg.failnth (no /proc/thread-self/fail-nth: a kernel without CONFIG_FAULT_INJECTION)\n");
		return 0;
	}
	if (env_open(&e, getenv("FAILNTH_DEV")))
		return 2;
	for (i = 0; i < (int)(sizeof(sites) / sizeof(sites[0])); i++) {
		bool want = argc == 3;

		for (j = 3; j < argc; j++)
			want |= !strcmp(argv[j], sites[i].name);
		if (!want)
			continue;
		site_run(&sites[i], &e);
		ran++;
	}
	if (!ran) {
		fprintf(stderr, "failnth: no such site\n");
		return 2;
	}
	rdma_destroy_id(e.lid);
	rdma_destroy_event_channel(e.ch);
	ibv_dereg_mr(e.mr);
	ibv_destroy_cq(e.cq);
	ibv_dealloc_pd(e.pd);
	rdma_free_devices(e.cm_ctxs);
	free(e.buf);
	return failures ? 1 : 0;
}
