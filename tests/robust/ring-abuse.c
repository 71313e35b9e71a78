// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * robust-ring-abuse: an unprivileged attacker on swiwarp's raw ring ABI
 * (issue 15, item 3).  Run as nobody without capabilities, with only
 * /dev/infiniband open to it.
 *
 *   robust-ring-abuse sqe|rqe|race|cq|state|storm ADDR
 *
 * The rings are found without the provider's private structs: a CQ or QP
 * is created through libibverbs (the provider maps its rings) and the
 * mappings of /dev/infiniband/uverbs* in /proc/self/maps are diffed before
 * and after; the kernel rounds ring sizes up to a power of two
 * (include/uapi/swiwarp-abi.h), so the requested sizes are chosen so that
 * the SQ and RQ mappings have different lengths.  The rings found are then
 * written directly: SQEs and RQEs are forged in place, the SQ doorbell is
 * rung with a zero-WR POST_SEND written to the command fd, and the
 * provider's own post calls are never used on an abused QP.
 *
 * sqe ADDR: a loopback connection on ADDR per forged SQE (opcodes out of
 *   range or kernel-only, too many SGEs, too much inline data, SGE
 *   lengths past 32 bits, bad/foreign/read-only lkeys, a wrapping raddr,
 *   bad atomics, unknown flag bits, a VALID slot ahead of the kernel's
 *   consumer index); each must end in the status the kernel's validation
 *   gives (or a remote error), the QP in ERROR, and a flush after.
 * rqe ADDR: forged RQEs on the passive side, then a Send into them.
 * race ADDR: a thread rewrites posted SQEs while another posts Writes.
 * cq ADDR: VALID forged on CQ slots, garbage in cq_ctrl/sq_ctrl.
 * state ADDR: QP state ping-pong on a connected QP while posting.
 * storm ADDR: rdma_connect to ADDR (the broadcast address: fails at once)
 *   from several threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
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
#include <rdma/ib_user_verbs.h>

#include "swiwarp-abi.h"
#include "lab-verbs.h"

#define PG 4096
#define EVENT_MS 20000
#define PORT 7179
#define BUF (4 * PG)
/* Client QP: SQ 64 (12 KiB mapping), RQ 16 (4 KiB); server: SQ 16, RQ 64. */
#define C_SQ 64
#define C_RQ 16
#define S_SQ 16
#define S_RQ 64

static const char *addr;
static int fails;

static void fail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: robust.neg.ring.%s [", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("]\n");
	fflush(stdout);
	fails++;
}

static void pass(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pass(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("PASS: robust.neg.ring.%s (", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(")\n");
	fflush(stdout);
}

/* ---- finding the rings ------------------------------------------------ */

struct span {
	unsigned long lo, hi, off;
};

/* The mappings of the uverbs device in this process. */
static int uverbs_maps(struct span *s, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx %*s %lx", &s[n].lo, &s[n].hi, &s[n].off) == 3)
			n++;
	}
	fclose(f);
	return n;
}

struct snap {
	struct span s[64];
	int n;
};

static void snap_take(struct snap *b)
{
	b->n = uverbs_maps(b->s, 64);
}

/* Mappings in now that were not in before: up to max into out. */
static int snap_new(const struct snap *before, struct span *out, int max)
{
	struct snap now;
	int i, j, k = 0;

	snap_take(&now);
	for (i = 0; i < now.n; i++) {
		bool old = false;

		for (j = 0; j < before->n; j++)
			old |= before->s[j].lo == now.s[i].lo;
		if (!old && k < max)
			out[k++] = now.s[i];
	}
	return k;
}

static unsigned long pgup(unsigned long n)
{
	return (n + PG - 1) & ~(unsigned long)(PG - 1);
}

static uint32_t pow2up(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

struct qrings {
	struct swiwarp_sqe *sq;
	struct swiwarp_sq_ctrl *sq_ctrl;
	struct swiwarp_rqe *rq;
	uint32_t nsq, nrq, sq_put, rq_put;
};

struct crings {
	struct swiwarp_cqe *cq;
	struct swiwarp_cq_ctrl *ctrl;
	uint32_t n;
};

/* Two new mappings of a QP with nsq/nrq requested: which is which. */
static int find_qp_rings(const struct snap *before, uint32_t nsq, uint32_t nrq, struct qrings *r,
			 char *why, size_t wl)
{
	struct span s[4];
	unsigned long sql, rql;
	int n = snap_new(before, s, 4), i;

	memset(r, 0, sizeof(*r));
	r->nsq = pow2up(nsq);
	r->nrq = pow2up(nrq);
	sql = pgup(r->nsq * sizeof(struct swiwarp_sqe) + sizeof(struct swiwarp_sq_ctrl));
	rql = pgup(r->nrq * sizeof(struct swiwarp_rqe));
	if (n != 2) {
		snprintf(why, wl, "%d new uverbs mappings after create_qp, want 2", n);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		unsigned long len = s[i].hi - s[i].lo;

		if (len == sql && !r->sq) {
			r->sq = (struct swiwarp_sqe *)s[i].lo;
			r->sq_ctrl = (struct swiwarp_sq_ctrl *)(r->sq + r->nsq);
		} else if (len == rql && !r->rq) {
			r->rq = (struct swiwarp_rqe *)s[i].lo;
		}
	}
	if (!r->sq || !r->rq) {
		snprintf(why, wl, "mappings of %lu and %lu bytes, want SQ %lu and RQ %lu",
			 s[0].hi - s[0].lo, s[1].hi - s[1].lo, sql, rql);
		return -1;
	}
	return 0;
}

static int find_cq_ring(const struct snap *before, int cqe, struct crings *r, char *why, size_t wl)
{
	struct span s[2];
	int n = snap_new(before, s, 2);

	r->n = pow2up((uint32_t)cqe);
	if (n != 1 || s[0].hi - s[0].lo !=
			      pgup(r->n * sizeof(struct swiwarp_cqe) + sizeof(struct swiwarp_cq_ctrl))) {
		snprintf(why, wl, "%d new mappings after create_cq (%lu bytes)", n,
			 n ? s[0].hi - s[0].lo : 0);
		return -1;
	}
	r->cq = (struct swiwarp_cqe *)s[0].lo;
	r->ctrl = (struct swiwarp_cq_ctrl *)(r->cq + r->n);
	return 0;
}

/* ---- raw posting ------------------------------------------------------ */

static uint16_t flags_load(uint16_t *f)
{
	return atomic_load_explicit((_Atomic uint16_t *)f, memory_order_acquire);
}

static void flags_store(uint16_t *f, uint16_t v)
{
	atomic_store_explicit((_Atomic uint16_t *)f, v, memory_order_release);
}

/* The zero-WR POST_SEND of the ABI's doorbell protocol. */
static int doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send core;
	} cmd;
	struct ib_uverbs_post_send_resp resp;

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core.response = (uintptr_t)&resp;
	cmd.core.qp_handle = qp->handle;
	cmd.core.wqe_size = sizeof(struct ib_uverbs_send_wr);
	atomic_thread_fence(memory_order_seq_cst);
	return write(qp->context->cmd_fd, &cmd, sizeof(cmd)) == sizeof(cmd) ? 0 : -1;
}

/* Slot i of the SQ: the fields of e (flags last, with VALID). */
static void sq_put_at(struct qrings *r, uint32_t i, const struct swiwarp_sqe *e)
{
	struct swiwarp_sqe *s = &r->sq[i & (r->nsq - 1)];
	uint16_t f = e->flags;

	memcpy((char *)s + 16, (const char *)e + 16, sizeof(*e) - 16);
	s->id = e->id;
	s->num_sge = e->num_sge;
	s->opcode = e->opcode;
	s->rkey = e->rkey;
	flags_store(&s->flags, f | SWIWARP_WQE_VALID);
}

/* Next SQ slot if free (1), else 0. */
static int sq_post(struct qrings *r, const struct swiwarp_sqe *e)
{
	if (flags_load(&r->sq[r->sq_put & (r->nsq - 1)].flags) & SWIWARP_WQE_VALID)
		return 0;
	sq_put_at(r, r->sq_put++, e);
	return 1;
}

static void rq_post(struct qrings *r, const struct swiwarp_rqe *e)
{
	struct swiwarp_rqe *s = &r->rq[r->rq_put++ & (r->nrq - 1)];

	s->id = e->id;
	s->num_sge = e->num_sge;
	memcpy(s->sge, e->sge, sizeof(s->sge));
	flags_store(&s->flags, SWIWARP_WQE_VALID);
}

/* ---- a loopback connection --------------------------------------------- */

struct conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid, *c, *s;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *ccq, *scq;
	struct crings ccr, scr;
	struct qrings cr, sr;
	/* client: src (local read/write), ro (no local write); server: dst */
	uint8_t *src, *dst, *ro, *other;
	struct ibv_mr *src_mr, *dst_mr, *ro_mr, *other_mr;
	uint32_t max_inline;
};

static void conn_close(struct conn *p)
{
	lab_pair_cm_close(p->ch, p->lid, p->c, p->s, 300);
	if (p->src_mr)
		ibv_dereg_mr(p->src_mr);
	if (p->dst_mr)
		ibv_dereg_mr(p->dst_mr);
	if (p->ro_mr)
		ibv_dereg_mr(p->ro_mr);
	if (p->other_mr)
		ibv_dereg_mr(p->other_mr);
	if (p->ccq)
		ibv_destroy_cq(p->ccq);
	if (p->scq)
		ibv_destroy_cq(p->scq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->pd2)
		ibv_dealloc_pd(p->pd2);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
	free(p->src);
	free(p->dst);
	free(p->ro);
	free(p->other);
	memset(p, 0, sizeof(*p));
}

/*
 * conn_open's server side: its QP on the client's device and PD, its rings
 * found, then pre(p) (it may post receives) before the accept.
 */
struct conn_server {
	struct conn *p;
	void (*pre)(struct conn *);
	char *why;	/* conn_open's, which lab_loop_accept keeps if set */
	size_t wl;
};

static int conn_server_side(void *arg, struct rdma_cm_id *s)
{
	struct conn_server *srv = arg;
	struct conn *p = srv->p;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .send_cq = p->scq, .recv_cq = p->scq };
	struct snap sn;

	qa.cap = (struct ibv_qp_cap){ S_SQ, S_RQ, SWIWARP_MAX_SGE, SWIWARP_MAX_SGE, 0 };
	snap_take(&sn);
	if (s->verbs != p->ctx || rdma_create_qp(s, p->pd, &qa) ||
	    find_qp_rings(&sn, S_SQ, S_RQ, &p->sr, srv->why, srv->wl))
		return -1;
	if (srv->pre)
		srv->pre(p);
	return 0;
}

/*
 * A connected pair on one device; pre(p) runs on the server side before
 * the accept (it may post receives).  Returns 0, or -1 with why set.
 */
static int conn_open(struct conn *p, int cqe, void (*pre)(struct conn *), char *why, size_t wl)
{
	static int port_off;
	int port = PORT + (port_off++ % 16);
	struct conn_server srv = { p, pre, why, wl };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC };
	struct snap sn;

	memset(p, 0, sizeof(*p));
	why[0] = 0;
	if (lab_loop_listen(addr, port, EVENT_MS, &p->ch, &p->lid, &p->c, why, wl))
		return -1;
	p->ctx = p->c->verbs;
	p->pd = ibv_alloc_pd(p->ctx);
	p->pd2 = ibv_alloc_pd(p->ctx);
	p->src = aligned_alloc(PG, BUF);
	p->dst = aligned_alloc(PG, BUF);
	p->ro = aligned_alloc(PG, BUF);
	p->other = aligned_alloc(PG, BUF);
	if (!p->pd || !p->pd2 || !p->src || !p->dst || !p->ro || !p->other) {
		snprintf(why, wl, "pd/buffers: %s", strerror(errno));
		return -1;
	}
	memset(p->src, 0x5a, BUF);
	memset(p->dst, 0, BUF);
	memset(p->ro, 0xc3, BUF);
	memset(p->other, 0x3c, BUF);
	p->src_mr = ibv_reg_mr(p->pd, p->src, BUF, IBV_ACCESS_LOCAL_WRITE);
	p->dst_mr = ibv_reg_mr(p->pd, p->dst, BUF,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	p->ro_mr = ibv_reg_mr(p->pd, p->ro, BUF, 0);
	p->other_mr = ibv_reg_mr(p->pd2, p->other, BUF, IBV_ACCESS_LOCAL_WRITE);
	if (!p->src_mr || !p->dst_mr || !p->ro_mr || !p->other_mr) {
		snprintf(why, wl, "reg_mr: %s", strerror(errno));
		return -1;
	}
	snap_take(&sn);
	p->ccq = ibv_create_cq(p->ctx, cqe, NULL, NULL, 0);
	if (!p->ccq || find_cq_ring(&sn, cqe, &p->ccr, why, wl))
		goto verbs_failed;
	snap_take(&sn);
	p->scq = ibv_create_cq(p->ctx, 64, NULL, NULL, 0);
	if (!p->scq || find_cq_ring(&sn, 64, &p->scr, why, wl))
		goto verbs_failed;
	qa.send_cq = qa.recv_cq = p->ccq;
	qa.cap = (struct ibv_qp_cap){ C_SQ, C_RQ, SWIWARP_MAX_SGE, SWIWARP_MAX_SGE, 64 };
	snap_take(&sn);
	if (rdma_create_qp(p->c, p->pd, &qa) || find_qp_rings(&sn, C_SQ, C_RQ, &p->cr, why, wl))
		goto verbs_failed;
	p->max_inline = qa.cap.max_inline_data;
	return lab_loop_accept(p->ch, p->c, &p->s, conn_server_side, &srv, EVENT_MS, why, wl);
verbs_failed:
	if (!why[0])
		snprintf(why, wl, "verbs: %s", strerror(errno));
	return -1;
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) ? -1 : (int)a.qp_state;
}

/* Wait up to ms for qp to reach ERROR. */
static bool wait_err(struct ibv_qp *qp, int ms)
{
	long long end = now_ms() + ms;

	do {
		if (qp_state(qp) == IBV_QPS_ERR)
			return true;
		usleep(20000);
	} while (now_ms() < end);
	return false;
}

static const char *st_str(int st)
{
	return st < 0 ? "no completion" : ibv_wc_status_str((enum ibv_wc_status)st);
}

/* A valid signaled Write of len bytes from src to dst at off. */
static struct swiwarp_sqe good_write(struct conn *p, uint64_t id, uint32_t len, uint32_t off)
{
	struct swiwarp_sqe e = { .id = id, .flags = SWIWARP_WQE_SIGNALED, .num_sge = 1,
				 .opcode = SWIWARP_OP_WRITE };

	e.rkey = p->dst_mr->rkey;
	e.raddr = (uintptr_t)p->dst + off;
	e.sge[0] = (struct swiwarp_sge){ (uintptr_t)p->src, len, p->src_mr->lkey };
	return e;
}

/* A kernel CQE status as the verbs status it stands for. */
static int kstatus(unsigned int s)
{
	static const int map[SWIWARP_WC_MAX] = {
		[SWIWARP_WC_SUCCESS] = IBV_WC_SUCCESS,
		[SWIWARP_WC_LOC_LEN_ERR] = IBV_WC_LOC_LEN_ERR,
		[SWIWARP_WC_LOC_QP_OP_ERR] = IBV_WC_LOC_QP_OP_ERR,
		[SWIWARP_WC_LOC_PROT_ERR] = IBV_WC_LOC_PROT_ERR,
		[SWIWARP_WC_WR_FLUSH_ERR] = IBV_WC_WR_FLUSH_ERR,
		[SWIWARP_WC_BAD_RESP_ERR] = IBV_WC_BAD_RESP_ERR,
		[SWIWARP_WC_LOC_ACCESS_ERR] = IBV_WC_LOC_ACCESS_ERR,
		[SWIWARP_WC_REM_INV_REQ_ERR] = IBV_WC_REM_INV_REQ_ERR,
		[SWIWARP_WC_REM_ACCESS_ERR] = IBV_WC_REM_ACCESS_ERR,
		[SWIWARP_WC_REM_OP_ERR] = IBV_WC_REM_OP_ERR,
		[SWIWARP_WC_GENERAL_ERR] = IBV_WC_GENERAL_ERR,
	};

	return s < SWIWARP_WC_MAX ? map[s] : IBV_WC_GENERAL_ERR;
}

/* ---- sqe: forged send queue entries -------------------------------------- */

enum { ANY_ERR = -2 };

struct sqe_case {
	const char *name;
	int want;	/* wc status, or ANY_ERR: any error status */
	void (*forge)(struct conn *p, struct swiwarp_sqe *e);
	bool need_caps;	/* the status depends on the peer's RFC 7306 */
};

static void f_op_max(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->opcode = SWIWARP_OP_MAX;
}

static void f_op_255(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->opcode = 255;
}

static void f_op_recv(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->opcode = SWIWARP_OP_RECV;
}

static void f_op_recv_imm(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->opcode = SWIWARP_OP_RECV_RDMA_IMM;
}

static void f_read_local_inv(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->opcode = SWIWARP_OP_READ_LOCAL_INV;
	e->inv_stag = p->src_mr->lkey;
}

/* A fast-register whose "ib_mr pointer" is an address of our choosing. */
static void f_reg_mr(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->opcode = SWIWARP_OP_REG_MR;
	e->raddr = 0xffff888000000000ULL;
	e->inv_stag = 0xffffffff;
}

static void f_local_inv(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->opcode = SWIWARP_OP_LOCAL_INV;
	e->inv_stag = p->dst_mr->rkey;
}

static void f_sge7(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->num_sge = SWIWARP_MAX_SGE + 1;
}

static void f_sge255(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->num_sge = 255;
}

static void f_inline(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->flags |= SWIWARP_WQE_INLINE;
	e->num_sge = 0;
	e->inline_len = p->max_inline + 1;
}

static void f_inline_huge(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->flags |= SWIWARP_WQE_INLINE;
	e->num_sge = 0;
	e->inline_len = 0xffffffff;
}

/* Six SGEs of 2^31 - 1 bytes each in a 16 KiB MR (sum past 2^32). */
static void f_sge_sum(struct conn *p, struct swiwarp_sqe *e)
{
	int i;

	*e = good_write(p, 1, 64, 0);
	e->num_sge = SWIWARP_MAX_SGE;
	for (i = 0; i < SWIWARP_MAX_SGE; i++)
		e->sge[i] = (struct swiwarp_sge){ (uintptr_t)p->src, 0x7fffffff, p->src_mr->lkey };
}

/* Two SGEs inside the MR whose lengths sum to 2^32 + 64 when not checked. */
static void f_sge_wrap(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->num_sge = 2;
	e->sge[0] = (struct swiwarp_sge){ (uintptr_t)p->src, 64, p->src_mr->lkey };
	e->sge[1] = (struct swiwarp_sge){ (uintptr_t)p->src + 64, 0xffffffff, p->src_mr->lkey };
}

static void f_lkey_none(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->sge[0].lkey = 0xdeadbe00 | (p->src_mr->lkey & 0xff);
}

static void f_lkey_pd(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->sge[0] = (struct swiwarp_sge){ (uintptr_t)p->other, 64, p->other_mr->lkey };
}

/* A Read whose sink MR has no local write access. */
static void f_lkey_access(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->opcode = SWIWARP_OP_READ;
	e->sge[0] = (struct swiwarp_sge){ (uintptr_t)p->ro, 64, p->ro_mr->lkey };
}

/* A Read of a remote range that wraps past 2^64. */
static void f_raddr_wrap(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 4096, 0);
	e->opcode = SWIWARP_OP_READ;
	e->raddr = 0xfffffffffffff800ULL;
}

static void f_atomic_nosge(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 8, 0);
	e->opcode = SWIWARP_OP_ATOMIC_FA;
	e->num_sge = 0;
	e->atomic.compare_add = 1;
}

static void f_atomic_unaligned(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 8, 0);
	e->opcode = SWIWARP_OP_ATOMIC_FA;
	e->raddr = (uintptr_t)p->dst + 3;
	e->atomic.sink = (struct swiwarp_sge){ (uintptr_t)p->src, 8, p->src_mr->lkey };
	e->atomic.compare_add = 1;
}

static void f_flags(struct conn *p, struct swiwarp_sqe *e)
{
	*e = good_write(p, 1, 64, 0);
	e->flags |= 0xffe0;
}

static const struct sqe_case sqe_cases[] = {
	{ "op_max", IBV_WC_LOC_QP_OP_ERR, f_op_max, false },
	{ "op_255", IBV_WC_LOC_QP_OP_ERR, f_op_255, false },
	{ "op_recv", IBV_WC_LOC_QP_OP_ERR, f_op_recv, false },
	{ "op_recv_imm", IBV_WC_LOC_QP_OP_ERR, f_op_recv_imm, false },
	{ "op_read_local_inv", IBV_WC_LOC_QP_OP_ERR, f_read_local_inv, false },
	{ "op_reg_mr", IBV_WC_LOC_QP_OP_ERR, f_reg_mr, false },
	{ "op_local_inv", IBV_WC_LOC_QP_OP_ERR, f_local_inv, false },
	{ "num_sge7", IBV_WC_LOC_QP_OP_ERR, f_sge7, false },
	{ "num_sge255", IBV_WC_LOC_QP_OP_ERR, f_sge255, false },
	{ "inline_over", IBV_WC_LOC_LEN_ERR, f_inline, false },
	{ "inline_huge", IBV_WC_LOC_LEN_ERR, f_inline_huge, false },
	{ "sge_sum", IBV_WC_LOC_PROT_ERR, f_sge_sum, false },
	{ "sge_wrap", IBV_WC_LOC_PROT_ERR, f_sge_wrap, false },
	{ "lkey_none", IBV_WC_LOC_PROT_ERR, f_lkey_none, false },
	{ "lkey_other_pd", IBV_WC_LOC_PROT_ERR, f_lkey_pd, false },
	{ "lkey_no_write", IBV_WC_LOC_PROT_ERR, f_lkey_access, false },
	{ "raddr_wrap", ANY_ERR, f_raddr_wrap, false },
	{ "atomic_nosge", IBV_WC_LOC_QP_OP_ERR, f_atomic_nosge, false },
	{ "atomic_unaligned", ANY_ERR, f_atomic_unaligned, true },
};

/* After an error the QP is in ERROR and flushes what comes next. */
static void check_flush(struct conn *p, const char *name, char *why, size_t wl)
{
	struct swiwarp_sqe e = good_write(p, 99, 64, 0);
	struct ibv_wc wc;
	int st;

	if (!wait_err(p->c->qp, 3000)) {
		snprintf(why, wl, "QP state %d after the error, want ERR", qp_state(p->c->qp));
		return;
	}
	if (!sq_post(&p->cr, &e) || doorbell(p->c->qp)) {
		snprintf(why, wl, "post after the error: %s", strerror(errno));
		return;
	}
	/* drain any completion still queued before the flush of id 99 */
	do
		st = lab_wait_wc(p->ccq, 5000, &wc, 1000);
	while (st >= 0 && wc.wr_id != 99);
	if (st != IBV_WC_WR_FLUSH_ERR)
		snprintf(why, wl, "%s: SQE posted in ERROR completed %s, want flush", name, st_str(st));
}

static void run_sqe_case(const struct sqe_case *k)
{
	struct conn p;
	struct swiwarp_sqe e;
	struct swiwarp_cqe cqe;
	struct ibv_wc wc;
	char why[256], name[64];
	int st, pst;
	bool caps;

	snprintf(name, sizeof(name), "sqe.%s", k->name);
	if (conn_open(&p, 64, NULL, why, sizeof(why))) {
		fail(name, "setup: %s", why);
		conn_close(&p);
		return;
	}
	caps = p.cr.sq_ctrl->peer_caps & SWIWARP_PEER_RFC7306;
	k->forge(&p, &e);
	if (!sq_post(&p.cr, &e) || doorbell(p.c->qp)) {
		fail(name, "post: %s", strerror(errno));
		conn_close(&p);
		return;
	}
	pst = lab_wait_wc(p.ccq, 10000, &wc, 1000);
	/*
	 * The kernel's own status is in the CQE (slot 0, still readable after
	 * the provider consumed it).  The provider reports a CQE whose opcode
	 * it does not know (the forged one, echoed by the kernel) as
	 * IBV_WC_GENERAL_ERR with vendor_err 0x100 | opcode instead.
	 */
	cqe = p.ccr.cq[0];
	st = pst < 0 ? -1 : kstatus(cqe.status);
	printf("ring: sqe.%s: kernel CQE status %s (CQE opcode %u), provider %s vendor_err 0x%x (peer RFC 7306: %s)\n",
	       k->name, st_str(st), cqe.opcode, st_str(pst), pst < 0 ? 0 : wc.vendor_err,
	       caps ? "yes" : "no");
	why[0] = 0;
	if (pst < 0)
		snprintf(why, sizeof(why), "no completion");
	else if (wc.wr_id != 1 || cqe.id != 1)
		snprintf(why, sizeof(why), "completion for wr_id %llu (CQE %llu), want 1",
			 (unsigned long long)wc.wr_id, (unsigned long long)cqe.id);
	else if (pst != st && !(pst == IBV_WC_GENERAL_ERR && wc.vendor_err == (0x100u | cqe.opcode)))
		snprintf(why, sizeof(why), "provider status %s for kernel status %s", st_str(pst),
			 st_str(st));
	else if (k->need_caps && !caps && st != IBV_WC_LOC_QP_OP_ERR)
		snprintf(why, sizeof(why), "%s without RFC 7306, want local QP operation error",
			 st_str(st));
	else if (k->want == ANY_ERR && st == IBV_WC_SUCCESS)
		snprintf(why, sizeof(why), "success, want an error");
	else if (k->want != ANY_ERR && st != k->want)
		snprintf(why, sizeof(why), "%s, want %s", st_str(st), st_str(k->want));
	if (!why[0])
		check_flush(&p, k->name, why, sizeof(why));
	if (!why[0] && (p.dst[0] != 0 || p.dst[3] != 0))
		snprintf(why, sizeof(why), "the target buffer was written");
	if (!why[0] && p.ro[0] != 0xc3)
		snprintf(why, sizeof(why), "the read-only sink was written");
	if (why[0])
		fail(name, "%s", why);
	else
		pass(name, "kernel status %s, then ERROR and flush", st_str(st));
	conn_close(&p);
}

/* Unknown flag bits: ignored, the Write goes through with its data. */
static void run_sqe_flags(void)
{
	struct conn p;
	struct swiwarp_sqe e;
	struct ibv_wc wc;
	char why[256];
	int st, i;

	if (conn_open(&p, 64, NULL, why, sizeof(why))) {
		fail("sqe.flags_unknown", "setup: %s", why);
		conn_close(&p);
		return;
	}
	f_flags(&p, &e);
	if (!sq_post(&p.cr, &e) || doorbell(p.c->qp)) {
		fail("sqe.flags_unknown", "post: %s", strerror(errno));
		conn_close(&p);
		return;
	}
	st = lab_wait_wc(p.ccq, 10000, &wc, 1000);
	for (i = 0; i < 64 && p.dst[i] == 0x5a; i++)
		;
	printf("ring: sqe.flags_unknown: %s, %d of 64 bytes written\n", st_str(st), i);
	if (st == IBV_WC_SUCCESS && (i != 64 || p.dst[64] != 0))
		fail("sqe.flags_unknown", "success but %d of 64 bytes arrived", i);
	else if (st < 0)
		fail("sqe.flags_unknown", "no completion");
	else
		pass("sqe.flags_unknown", "%s", st_str(st));
	conn_close(&p);
}

/*
 * Index forging: a VALID slot 5 ahead of the kernel's consumer index is
 * not taken; once slots 0..4 are filled all six complete in order.
 */
static void run_sqe_index(void)
{
	struct conn p;
	struct swiwarp_sqe e;
	struct ibv_wc wc;
	char why[256] = "";
	int st, i;

	if (conn_open(&p, 64, NULL, why, sizeof(why))) {
		fail("sqe.index_ahead", "setup: %s", why);
		conn_close(&p);
		return;
	}
	e = good_write(&p, 105, 64, 5 * 64);
	sq_put_at(&p.cr, 5, &e);
	doorbell(p.c->qp);
	st = lab_wait_wc(p.ccq, 1000, &wc, 1000);
	if (st >= 0) {
		snprintf(why, sizeof(why), "slot 5 completed (%s) with slots 0-4 empty", st_str(st));
	} else if (p.dst[5 * 64] != 0) {
		snprintf(why, sizeof(why), "slot 5's Write reached the target out of order");
	} else {
		for (i = 0; i < 5; i++) {
			e = good_write(&p, 100 + i, 64, i * 64);
			sq_put_at(&p.cr, i, &e);
		}
		p.cr.sq_put = 6;
		doorbell(p.c->qp);
		for (i = 0; i < 6 && !why[0]; i++) {
			st = lab_wait_wc(p.ccq, 10000, &wc, 1000);
			if (st != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)(100 + i))
				snprintf(why, sizeof(why), "completion %d: %s wr_id %llu, want success %d",
					 i, st_str(st), st < 0 ? 0ULL : (unsigned long long)wc.wr_id,
					 100 + i);
		}
		for (i = 0; i < 6 * 64 && !why[0]; i++)
			if (p.dst[i] != 0x5a)
				snprintf(why, sizeof(why), "target byte %d not written", i);
	}
	if (why[0])
		fail("sqe.index_ahead", "%s", why);
	else
		pass("sqe.index_ahead", "slot 5 waited for 0-4, then 6 Writes in order");
	conn_close(&p);
}

static int do_sqe(void)
{
	size_t i;

	for (i = 0; i < sizeof(sqe_cases) / sizeof(sqe_cases[0]); i++)
		run_sqe_case(&sqe_cases[i]);
	run_sqe_flags();
	run_sqe_index();
	return fails != 0;
}

/* ---- rqe: forged receive queue entries ---------------------------------- */

static int rqe_mode;

static void pre_rqe(struct conn *p)
{
	struct swiwarp_rqe r = { .id = 7, .num_sge = 1 };

	r.sge[0] = (struct swiwarp_sge){ (uintptr_t)p->dst, BUF, p->dst_mr->lkey };
	if (rqe_mode == 0)
		r.num_sge = SWIWARP_MAX_SGE + 1;
	else if (rqe_mode == 1)
		r.num_sge = 255;
	else if (rqe_mode == 2)
		r.sge[0].lkey = 0xdeadbe00 | (p->dst_mr->lkey & 0xff);
	else
		r.sge[0] = (struct swiwarp_sge){ (uintptr_t)p->ro, BUF, p->ro_mr->lkey };
	rq_post(&p->sr, &r);
}

static int do_rqe(void)
{
	static const struct {
		const char *name;
		int want;
	} k[] = {
		{ "num_sge7", IBV_WC_LOC_QP_OP_ERR },
		{ "num_sge255", IBV_WC_LOC_QP_OP_ERR },
		{ "lkey_none", IBV_WC_LOC_PROT_ERR },
		{ "lkey_no_write", IBV_WC_LOC_PROT_ERR },
	};
	size_t i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct conn p;
		struct swiwarp_sqe e;
		struct ibv_wc wc, cwc;
		char why[256], name[64];
		int st, cst;

		snprintf(name, sizeof(name), "rqe.%s", k[i].name);
		rqe_mode = (int)i;
		if (conn_open(&p, 64, pre_rqe, why, sizeof(why))) {
			fail(name, "setup: %s", why);
			conn_close(&p);
			continue;
		}
		e = good_write(&p, 1, 256, 0);
		e.opcode = SWIWARP_OP_SEND;
		e.rkey = 0;
		e.raddr = 0;
		sq_post(&p.cr, &e);
		doorbell(p.c->qp);
		st = lab_wait_wc(p.scq, 10000, &wc, 1000);
		cst = lab_wait_wc(p.ccq, 10000, &cwc, 1000);
		printf("ring: rqe.%s: receive %s, Send %s\n", k[i].name, st_str(st), st_str(cst));
		why[0] = 0;
		if (st != k[i].want)
			snprintf(why, sizeof(why), "receive %s, want %s", st_str(st), st_str(k[i].want));
		else if (!wait_err(p.s->qp, 3000))
			snprintf(why, sizeof(why), "receiving QP in state %d, want ERR",
				 qp_state(p.s->qp));
		else if (!wait_err(p.c->qp, 5000))
			snprintf(why, sizeof(why), "sending QP in state %d after the Terminate, want ERR",
				 qp_state(p.c->qp));
		else if (p.dst[0] != 0 || p.ro[0] != 0xc3)
			snprintf(why, sizeof(why), "a receive buffer was written");
		if (why[0])
			fail(name, "%s", why);
		else
			pass(name, "receive %s, Send %s, both QPs in ERROR", st_str(st), st_str(cst));
		conn_close(&p);
	}
	return fails != 0;
}

/* ---- race: rewriting posted SQEs ------------------------------------------ */

struct racer {
	struct qrings *r;
	uint32_t good_lkey;
	atomic_bool stop;
	unsigned long writes;
};

static void *race_thread(void *arg)
{
	struct racer *x = arg;
	static const uint8_t ops[] = { SWIWARP_OP_WRITE, 255, SWIWARP_OP_READ_LOCAL_INV,
				       SWIWARP_OP_REG_MR, SWIWARP_OP_LOCAL_INV };
	unsigned int seed = 12345;

	while (!atomic_load(&x->stop)) {
		volatile struct swiwarp_sqe *s = &x->r->sq[rand_r(&seed) & (x->r->nsq - 1)];
		unsigned int v = rand_r(&seed);

		switch (v % 5) {
		case 0:
			s->num_sge = (uint8_t)(v >> 8);
			break;
		case 1:
			s->sge[(v >> 8) % SWIWARP_MAX_SGE].length = (uint32_t)rand_r(&seed) << 1;
			break;
		case 2:
			s->opcode = ops[(v >> 8) % sizeof(ops)];
			break;
		case 3:
			s->sge[0].lkey = (v >> 8) & 1 ? x->good_lkey : (uint32_t)rand_r(&seed);
			break;
		default:
			/* never the flags word: VALID stays the poster's */
			s->rkey = (v >> 8) & 1 ? s->rkey : (uint32_t)rand_r(&seed);
			break;
		}
		x->writes++;
	}
	return NULL;
}

static int do_race(int secs)
{
	long long end = 0;
	unsigned long ok = 0, err = 0, conns = 0, posted = 0;
	char why[256] = "";

	while ((!end || now_ms() < end) && !why[0]) {
		struct conn p;
		struct racer x = { 0 };
		pthread_t t;
		bool dead = false;
		uint64_t id = 0;

		if (conn_open(&p, 64, NULL, why, sizeof(why))) {
			conn_close(&p);
			break;
		}
		conns++;
		/*
		 * SECS of racing, counted from the first connection: on the
		 * debug kernel setting it up took longer than the whole
		 * window, and nothing was posted (session 32).
		 */
		if (!end)
			end = now_ms() + secs * 1000LL;
		x.r = &p.cr;
		x.good_lkey = p.src_mr->lkey;
		pthread_create(&t, NULL, race_thread, &x);
		while (!dead && now_ms() < end && !why[0]) {
			struct swiwarp_sqe e = good_write(&p, ++id, 1024, 0);
			struct ibv_wc wc;
			int st, i;

			memset(p.dst, 0, BUF);
			if (!sq_post(&p.cr, &e)) {
				snprintf(why, sizeof(why), "SQ slot still VALID with nothing outstanding");
				break;
			}
			doorbell(p.c->qp);
			posted++;
			st = lab_wait_wc(p.ccq, 10000, &wc, 100);
			if (st < 0) {
				snprintf(why, sizeof(why), "no completion for a posted SQE");
				break;
			}
			if (st == IBV_WC_SUCCESS) {
				ok++;
				/* only source bytes, only inside the target MR */
				for (i = 0; i < BUF; i++)
					if (p.dst[i] != 0 && p.dst[i] != 0x5a) {
						snprintf(why, sizeof(why),
							 "success with byte %d = 0x%02x in the target", i,
							 p.dst[i]);
						break;
					}
			} else {
				err++;
				dead = true;
				if (st != IBV_WC_LOC_QP_OP_ERR && st != IBV_WC_LOC_PROT_ERR &&
				    st != IBV_WC_LOC_LEN_ERR && st != IBV_WC_WR_FLUSH_ERR &&
				    st != IBV_WC_REM_ACCESS_ERR && st != IBV_WC_REM_OP_ERR &&
				    st != IBV_WC_REM_INV_REQ_ERR && st != IBV_WC_GENERAL_ERR)
					snprintf(why, sizeof(why), "completion status %s", st_str(st));
			}
		}
		atomic_store(&x.stop, true);
		pthread_join(t, NULL);
		conn_close(&p);
	}
	printf("ring: race: %lu SQEs posted over %lu connections: %lu succeeded, %lu errors\n",
	       posted, conns, ok, err);
	if (why[0])
		fail("race", "%s", why);
	else if (!posted)
		fail("race", "nothing posted");
	else
		pass("race", "%lu posted in %d s: %lu success with source data only, %lu errors",
		     posted, secs, ok, err);
	return fails != 0;
}

/* ---- cq: scribbling on the CQ and the control words ------------------------- */

static int do_cq(void)
{
	struct conn p;
	struct swiwarp_sqe e;
	char why[256] = "";
	int cq_err = 0, fatal = 0, other = 0, cq_err2 = 0, i, n = 0;
	uint32_t j;

	if (conn_open(&p, 4, NULL, why, sizeof(why))) {
		fail("cq.overflow", "setup: %s", why);
		conn_close(&p);
		return 1;
	}
	/* garbage where the kernel keeps its words */
	atomic_store_explicit((_Atomic uint32_t *)&p.ccr.ctrl->notify, 0xffffffff,
			      memory_order_release);
	memset(p.ccr.ctrl->reserved1, 0xff, sizeof(p.ccr.ctrl->reserved1));
	p.cr.sq_ctrl->flags = 0xffffffff;
	p.cr.sq_ctrl->peer_caps = 0xffffffff;
	/* every CQ slot marked as if user space had not consumed it */
	for (j = 0; j < p.ccr.n; j++) {
		memset(&p.ccr.cq[j], 0xee, sizeof(p.ccr.cq[j]));
		flags_store(&p.ccr.cq[j].flags, SWIWARP_CQE_VALID);
	}
	e = good_write(&p, 1, 64, 0);
	sq_post(&p.cr, &e);
	doorbell(p.c->qp);
	lab_async_events(p.ctx, 2000, &cq_err, &fatal, &other);
	printf("ring: cq: Write into a CQ with every slot forged VALID: %d CQ error events, %d fatal QP events, %d others, QP state %d, target %s\n",
	       cq_err, fatal, other, qp_state(p.c->qp), p.dst[0] == 0x5a ? "written" : "not written");
	if (cq_err != 1)
		fail("cq.overflow", "%d CQ error events, want 1", cq_err);
	else if (!wait_err(p.c->qp, 3000))
		fail("cq.overflow", "QP state %d after the overflow, want ERR", qp_state(p.c->qp));
	else
		pass("cq.overflow", "1 CQ error event, QP in ERROR");
	/* more SQEs flushed into the forged full CQ: bounded events */
	for (i = 0; i < C_SQ; i++) {
		e = good_write(&p, 10 + i, 64, 0);
		n += sq_post(&p.cr, &e);
	}
	doorbell(p.c->qp);
	lab_async_events(p.ctx, 2000, &cq_err2, &fatal, &other);
	printf("ring: cq: %d SQEs flushed into the forged full CQ: %d more CQ error events\n", n,
	       cq_err2);
	if (cq_err2 > 1)
		fail("cq.flush_bounded", "%d CQ error events for %d flushed SQEs, want at most 1",
		     cq_err2, n);
	else
		pass("cq.flush_bounded", "%d SQEs, %d events", n, cq_err2);
	conn_close(&p);
	return fails != 0;
}

/* ---- state: QP state ping-pong while posting ---------------------------- */

struct poster {
	struct conn *p;
	atomic_bool stop;
	unsigned long posted, rings, cqes;
};

static void *post_thread(void *arg)
{
	struct poster *x = arg;
	struct ibv_wc wc[16];
	uint64_t id = 0;

	while (!atomic_load(&x->stop)) {
		struct swiwarp_sqe e = good_write(x->p, ++id, 64, 0);
		int n;

		x->posted += sq_post(&x->p->cr, &e);
		if (!doorbell(x->p->c->qp))
			x->rings++;
		while ((n = ibv_poll_cq(x->p->ccq, 16, wc)) > 0)
			x->cqes += n;
	}
	return NULL;
}

static int do_state(int secs)
{
	static const enum ibv_qp_state seq[] = { IBV_QPS_ERR, IBV_QPS_RESET, IBV_QPS_INIT,
						 IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
						 IBV_QPS_ERR };
	struct conn p;
	struct poster x = { 0 };
	pthread_t t;
	char why[256];
	long long end;
	unsigned long mods = 0, ok = 0, refused = 0, k = 0;
	int final;

	if (conn_open(&p, 64, NULL, why, sizeof(why))) {
		fail("state", "setup: %s", why);
		conn_close(&p);
		return 1;
	}
	x.p = &p;
	pthread_create(&t, NULL, post_thread, &x);
	end = now_ms() + secs * 1000LL;
	while (now_ms() < end) {
		struct ibv_qp_attr a = { .qp_state = seq[k++ % (sizeof(seq) / sizeof(seq[0]))] };

		mods++;
		if (ibv_modify_qp(p.c->qp, &a, IBV_QP_STATE))
			refused++;
		else
			ok++;
	}
	atomic_store(&x.stop, true);
	pthread_join(t, NULL);
	final = qp_state(p.c->qp);
	printf("ring: state: %lu modifies (%lu accepted, %lu refused) while %lu SQEs posted, %lu doorbells, %lu completions; final state %d\n",
	       mods, ok, refused, x.posted, x.rings, x.cqes, final);
	if (final < 0)
		fail("state", "query_qp after the ping-pong: %s", strerror(errno));
	else if (!ok)
		fail("state", "no modify accepted");
	else
		pass("state", "%lu modifies, %lu SQEs, %lu completions", mods, x.posted, x.cqes);
	conn_close(&p);
	return fails != 0;
}

/* ---- storm: connects that fail at once, from several threads -------------- */

#define STORM_THREADS 4
#define STORM_ROUNDS 10

struct stormer {
	int fail_now, fail_later, connected, other;
	char why[128];
};

static void *storm_thread(void *arg)
{
	struct stormer *x = arg;
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo *ai = lab_getai(addr, PORT + 20, false);
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { 4, 4, 1, 1, 0 } };
	struct rdma_cm_event *ev;
	int i;

	if (!ch || !ai) {
		snprintf(x->why, sizeof(x->why), "no channel/address");
		return NULL;
	}
	for (i = 0; i < STORM_ROUNDS; i++) {
		struct rdma_cm_id *id;
		struct ibv_pd *pd = NULL;
		struct ibv_cq *cq = NULL;

		id = lab_resolved_id(ch, ai->ai_dst_addr, EVENT_MS, x->why, sizeof(x->why));
		if (!id)
			break;
		pd = ibv_alloc_pd(id->verbs);
		cq = pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
		qa.send_cq = qa.recv_cq = cq;
		if (!cq || rdma_create_qp(id, pd, &qa)) {
			snprintf(x->why, sizeof(x->why), "verbs: %s", strerror(errno));
			rdma_destroy_id(id);
			if (cq)
				ibv_destroy_cq(cq);
			if (pd)
				ibv_dealloc_pd(pd);
			break;
		}
		if (rdma_connect(id, &cp)) {
			x->fail_now++;
		} else if ((ev = get_event(ch, 10000))) {
			if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
				x->connected++;
			else
				x->fail_later++;
			rdma_ack_cm_event(ev);
		} else {
			x->other++;
		}
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
		ibv_destroy_cq(cq);
		ibv_dealloc_pd(pd);
	}
	rdma_freeaddrinfo(ai);
	rdma_destroy_event_channel(ch);
	return NULL;
}

static int do_storm(void)
{
	struct stormer x[STORM_THREADS] = { 0 };
	pthread_t t[STORM_THREADS];
	int i, now = 0, later = 0, conn = 0, other = 0;
	long long t0 = now_ms();
	const char *why = NULL;

	for (i = 0; i < STORM_THREADS; i++)
		pthread_create(&t[i], NULL, storm_thread, &x[i]);
	for (i = 0; i < STORM_THREADS; i++) {
		pthread_join(t[i], NULL);
		now += x[i].fail_now;
		later += x[i].fail_later;
		conn += x[i].connected;
		other += x[i].other;
		if (x[i].why[0])
			why = x[i].why;
	}
	printf("ring: storm: %d threads x %d connects to %s: %d failed at once, %d later, %d connected, %d unanswered (%lld ms)\n",
	       STORM_THREADS, STORM_ROUNDS, addr, now, later, conn, other, now_ms() - t0);
	if (why)
		fail("storm", "%s", why);
	else if (conn || other || !now || now + later != STORM_THREADS * STORM_ROUNDS)
		fail("storm", "want every connect to fail, some at once: %d at once, %d later, %d connected, %d unanswered",
		     now, later, conn, other);
	else
		pass("storm", "%d connects failed, %d at once", now + later, now);
	return fails != 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: robust-ring-abuse sqe|rqe|race|cq|state|storm ADDR [SECONDS]\n");
		return 2;
	}
	addr = argv[2];
	if (!strcmp(argv[1], "sqe"))
		return do_sqe();
	if (!strcmp(argv[1], "rqe"))
		return do_rqe();
	if (!strcmp(argv[1], "race"))
		return do_race(argc > 3 ? atoi(argv[3]) : 3);
	if (!strcmp(argv[1], "cq"))
		return do_cq();
	if (!strcmp(argv[1], "state"))
		return do_state(argc > 3 ? atoi(argv[3]) : 3);
	if (!strcmp(argv[1], "storm"))
		return do_storm();
	fprintf(stderr, "robust-ring-abuse: unknown case %s\n", argv[1]);
	return 2;
}
