// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp_kapi: a lab-only test of an RDMA device through the kernel verbs
 * API, used the way the kernel's storage ULPs use it (issue 14, item 4).
 *
 * It knows nothing of swiwarp: it connects a client and a server QP with the
 * kernel RDMA CM to one IPv4 address (a device connecting to itself), so the
 * same module runs on swiwarp and on upstream siw.  Writing "A.B.C.D" (or
 * "A.B.C.D:PORT") to <debugfs>/swiwarp_kapi/run runs every case; the write
 * returns when they are done and <debugfs>/swiwarp_kapi/results then holds
 * one "PASS: name", "FAIL: name [why]" or "SKIP: name why" line per case.
 * Documentation/ulp.md, "The kernel verbs API test module".
 *
 * Memory of both ends is in this kernel, so every case compares what landed
 * with what was sent byte for byte, and checks the state of each MR after
 * its invalidation: an access through an invalidated key must fail with the
 * status the verbs specify (which takes the connection down: the case then
 * connects again), and a new registration with ib_update_fast_reg_key() must
 * work.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rw.h>

#define KAPI_TMO		(60 * HZ)
#define KAPI_CM_TMO_MS		5000
#define KAPI_CONNECT_TRIES	3
#define KAPI_NRECV		16
#define KAPI_RECV_SZ		256
#define KAPI_MAX_PAGES		4096
#define KAPI_RW_CTXS		4
#define KAPI_RESULTS_SZ		(64 * 1024)
#define KAPI_DEFAULT_PORT	20886

/* What a completion handler saw. */
struct kapi_wait {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
	bool softirq;		/* ran in softirq context */
	bool wq;		/* ran in a workqueue worker, not in interrupt */
};

struct kapi_recv {
	struct kapi_wait w;
	u64 dma;
};

/* Pages behind one fast-register MR, mapped through a scatterlist. */
struct kapi_buf {
	struct ib_mr *mr;
	struct page **pages;
	struct scatterlist *sgl;
	int npages;
	int nmapped;		/* entries DMA-mapped in sgl, 0 if none */
	u8 key;
};

enum kapi_cq_kind {
	KAPI_CQ_SOFTIRQ,	/* ib_alloc_cq(IB_POLL_SOFTIRQ) */
	KAPI_CQ_WORKQUEUE,	/* ib_alloc_cq(IB_POLL_WORKQUEUE) */
	KAPI_CQ_POOL_SOFTIRQ,	/* ib_cq_pool_get(IB_POLL_SOFTIRQ) */
	KAPI_CQ_POOL_WORKQUEUE,	/* ib_cq_pool_get(IB_POLL_WORKQUEUE) */
};

#define KAPI_CQE 256

struct kapi_end {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	void *rbuf;			/* KAPI_NRECV receive buffers */
	u64 rbuf_dma;
	struct kapi_recv recv[KAPI_NRECV];
	int next_recv;			/* the receive the next Send lands in */
	struct completion ev;
	enum rdma_cm_event_type last;
	int ev_status;
};

struct kapi {
	struct sockaddr_in addr;
	struct ib_device *dev;
	struct rdma_cm_id *listen;
	struct kapi_end cli, srv;
	enum kapi_cq_kind kind;
	bool connected;
	bool broken;
	int max_pages;
	/* client: src (data source, Send payloads), chk (Read sink) */
	struct kapi_buf src, chk;
	/* server: dst (the peer's Write target and Read source), rw pages */
	struct kapi_buf dst, rwb;
	char *res;
	size_t res_len;
	int passed, failed;
	unsigned long t0;	/* jiffies at the start of the current case */
	/* Reads through an invalidated rkey: how many, how many not failed
	 * with IB_WC_REM_ACCESS_ERR, the first of those.
	 */
	int stale_n, stale_bad;
	char stale_why[160];
	/* Writes with Immediate: how many receives, how many whose byte_len
	 * was not the Write's length, how many of those not 0, the first of
	 * them (the first not 0 if any).
	 */
	int imm_len_n, imm_len_bad, imm_len_other;
	char imm_len_why[160];
};

static DEFINE_MUTEX(kapi_lock);
static char *kapi_results;
static size_t kapi_results_len;
static struct dentry *kapi_dir;

static __printf(2, 3) void kapi_out(struct kapi *k, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (k->res_len >= KAPI_RESULTS_SZ - 1)
		return;
	va_start(ap, fmt);
	n = vscnprintf(k->res + k->res_len, KAPI_RESULTS_SZ - k->res_len, fmt, ap);
	va_end(ap);
	k->res_len += n;
}

/* How long the case took, as a comment line before its result. */
static void kapi_time(struct kapi *k, const char *name)
{
	kapi_out(k, "# %s: %u ms\n", name, jiffies_to_msecs(jiffies - k->t0));
	k->t0 = jiffies;
}

static void kapi_pass(struct kapi *k, const char *name)
{
	kapi_time(k, name);
	kapi_out(k, "PASS: %s\n", name);
	k->passed++;
}

/* A FAIL (counted) or SKIP line with its reason, as the lab reads them. */
static __printf(4, 0) void kapi_vreport(struct kapi *k, bool failed,
					const char *name, const char *fmt,
					va_list ap)
{
	char why[200];

	vscnprintf(why, sizeof(why), fmt, ap);
	kapi_time(k, name);
	if (failed) {
		kapi_out(k, "FAIL: %s [%s]\n", name, why);
		k->failed++;
	} else {
		kapi_out(k, "SKIP: %s %s\n", name, why);
	}
}

static __printf(3, 4) void kapi_fail(struct kapi *k, const char *name,
				     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kapi_vreport(k, true, name, fmt, ap);
	va_end(ap);
}

static __printf(3, 4) void kapi_skip(struct kapi *k, const char *name,
				     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kapi_vreport(k, false, name, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------ completions */

static void kapi_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kapi_wait *w = container_of(wc->wr_cqe, struct kapi_wait, cqe);

	w->wc = *wc;
	w->softirq = in_serving_softirq();
	w->wq = !in_interrupt() && (current->flags & PF_WQ_WORKER);
	complete(&w->done);
}

static void kapi_wait_init(struct kapi_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->cqe.done = kapi_done;
	init_completion(&w->done);
}

/*
 * Wait for a completion.  On a timeout the QPs are drained (flushing the
 * WR), so no completion can reach *w after the caller's frame is gone.
 */
static int kapi_wait_wc(struct kapi *k, struct kapi_wait *w)
{
	if (wait_for_completion_timeout(&w->done, KAPI_TMO))
		return 0;
	if (k->cli.qp)
		ib_drain_qp(k->cli.qp);
	if (k->srv.qp)
		ib_drain_qp(k->srv.qp);
	wait_for_completion(&w->done);
	return -ETIMEDOUT;
}

static int kapi_post_wait(struct kapi *k, struct kapi_end *e,
			  struct ib_send_wr *wr, struct kapi_wait *w)
{
	int ret;

	kapi_wait_init(w);
	wr->wr_cqe = &w->cqe;
	wr->send_flags |= IB_SEND_SIGNALED;
	ret = ib_post_send(e->qp, wr, NULL);
	if (ret)
		return ret;
	return kapi_wait_wc(k, w);
}

/* Post a send-queue WR and wait for its successful completion. */
static int kapi_do(struct kapi *k, struct kapi_end *e, struct ib_send_wr *wr,
		   char *why, size_t len)
{
	struct kapi_wait w;
	int ret;

	ret = kapi_post_wait(k, e, wr, &w);
	if (ret) {
		scnprintf(why, len, "opcode %d: post/wait %d", wr->opcode, ret);
		return ret;
	}
	if (w.wc.status != IB_WC_SUCCESS) {
		scnprintf(why, len, "opcode %d: %s", wr->opcode,
			  ib_wc_status_msg(w.wc.status));
		return -EIO;
	}
	return 0;
}

static int kapi_post_recv(struct kapi_end *e, int i)
{
	struct kapi_recv *r = &e->recv[i];
	struct ib_recv_wr wr = {};
	struct ib_sge sge;

	kapi_wait_init(&r->w);
	sge.addr = r->dma;
	sge.length = KAPI_RECV_SZ;
	sge.lkey = e->pd->local_dma_lkey;
	wr.wr_cqe = &r->w.cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ib_post_recv(e->qp, &wr, NULL);
}

/* Wait for the next receive of @e; its slot in *@slot. */
static int kapi_next_recv(struct kapi *k, struct kapi_end *e, int *slot)
{
	int i = e->next_recv;
	int ret;

	if (i >= KAPI_NRECV)
		return -ENOSPC;
	e->next_recv++;
	*slot = i;
	ret = kapi_wait_wc(k, &e->recv[i].w);
	if (ret)
		return ret;
	ib_dma_sync_single_for_cpu(k->dev, e->recv[i].dma, KAPI_RECV_SZ,
				   DMA_FROM_DEVICE);
	return 0;
}

/* ------------------------------------------------------------------ buffers */

static void kapi_buf_unmap(struct kapi *k, struct kapi_buf *b)
{
	if (b->nmapped) {
		ib_dma_unmap_sg(k->dev, b->sgl, b->nmapped, DMA_BIDIRECTIONAL);
		b->nmapped = 0;
	}
}

static void kapi_buf_free(struct kapi *k, struct kapi_buf *b)
{
	int i;

	kapi_buf_unmap(k, b);
	if (b->mr)
		ib_dereg_mr(b->mr);
	b->mr = NULL;
	for (i = 0; b->pages && i < b->npages; i++)
		if (b->pages[i])
			__free_page(b->pages[i]);
	kvfree(b->pages);
	kvfree(b->sgl);
	b->pages = NULL;
	b->sgl = NULL;
}

static int kapi_buf_alloc(struct kapi *k, struct kapi_buf *b, struct ib_pd *pd,
			  int npages, bool mr)
{
	int i;

	b->npages = npages;
	b->pages = kvcalloc(npages, sizeof(*b->pages), GFP_KERNEL);
	b->sgl = kvcalloc(npages, sizeof(*b->sgl), GFP_KERNEL);
	if (!b->pages || !b->sgl)
		return -ENOMEM;
	for (i = 0; i < npages; i++) {
		b->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!b->pages[i])
			return -ENOMEM;
	}
	if (!mr)
		return 0;
	b->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, k->max_pages);
	if (IS_ERR(b->mr)) {
		int ret = PTR_ERR(b->mr);

		b->mr = NULL;
		return ret;
	}
	b->key = ib_inc_rkey(b->mr->rkey) & 0xff;
	return 0;
}

static u8 *kapi_page(struct kapi_buf *b, int i)
{
	return page_address(b->pages[i]);
}

/* A pattern no two pages share and no earlier run left behind. */
static void kapi_fill(struct kapi_buf *b, int first, int n, u32 seed)
{
	int i, j;

	for (i = 0; i < n; i++) {
		u32 *p = (u32 *)kapi_page(b, first + i);
		u32 x = seed * 2654435761U + (first + i) * 40503U + 1;

		for (j = 0; j < PAGE_SIZE / 4; j++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			p[j] = x;
		}
	}
}

static void kapi_zero(struct kapi_buf *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		memset(kapi_page(b, i), 0, PAGE_SIZE);
}

/*
 * Map pages rot, rot+1, ... (modulo the buffer's size) of @b, n of them, into
 * a scatterlist, DMA-map it and ib_map_mr_sg() it into the buffer's MR with
 * a new key.
 */
static int kapi_buf_map(struct kapi *k, struct kapi_buf *b, int n, int rot,
			char *why, size_t len)
{
	int i, cnt, ret;

	kapi_buf_unmap(k, b);
	sg_init_table(b->sgl, n);
	for (i = 0; i < n; i++)
		sg_set_page(&b->sgl[i], b->pages[(rot + i) % b->npages],
			    PAGE_SIZE, 0);
	cnt = ib_dma_map_sg(k->dev, b->sgl, n, DMA_BIDIRECTIONAL);
	if (!cnt) {
		scnprintf(why, len, "ib_dma_map_sg of %d pages failed", n);
		return -EIO;
	}
	b->nmapped = n;
	ib_update_fast_reg_key(b->mr, ++b->key);
	ret = ib_map_mr_sg(b->mr, b->sgl, cnt, NULL, PAGE_SIZE);
	if (ret != cnt) {
		scnprintf(why, len, "ib_map_mr_sg mapped %d of %d", ret, cnt);
		return ret < 0 ? ret : -EIO;
	}
	if (b->mr->length != (u64)n * PAGE_SIZE) {
		scnprintf(why, len, "MR length %llu for %d pages", b->mr->length, n);
		return -EIO;
	}
	return 0;
}

/* Map and register (IB_WR_REG_MR on @e) n pages of @b. */
static int kapi_reg(struct kapi *k, struct kapi_end *e, struct kapi_buf *b,
		    int n, int rot, int access, char *why, size_t len)
{
	struct ib_reg_wr wr = {};
	int ret;

	ret = kapi_buf_map(k, b, n, rot, why, len);
	if (ret)
		return ret;
	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = b->mr;
	wr.key = b->mr->rkey;
	wr.access = access;
	return kapi_do(k, e, &wr.wr, why, len);
}

static int kapi_local_inv(struct kapi *k, struct kapi_end *e, u32 key,
			  char *why, size_t len)
{
	struct ib_send_wr wr = {};

	wr.opcode = IB_WR_LOCAL_INV;
	wr.ex.invalidate_rkey = key;
	return kapi_do(k, e, &wr, why, len);
}

/* An RDMA Write or Read of @b's MR (the whole registration) on @e. */
static void kapi_rdma_wr(struct ib_rdma_wr *wr, struct ib_sge *sge,
			 enum ib_wr_opcode op, struct kapi_buf *b, u64 raddr,
			 u32 rkey)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = b->mr->iova;
	sge->length = b->mr->length;
	sge->lkey = b->mr->lkey;
	wr->wr.opcode = op;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = 1;
	wr->remote_addr = raddr;
	wr->rkey = rkey;
}

/* The n pages of @a (from page 0) equal those of @b from page rot on. */
static int kapi_cmp(struct kapi_buf *a, struct kapi_buf *b, int n, int rot,
		    char *why, size_t len)
{
	int i;

	for (i = 0; i < n; i++) {
		const u8 *x = kapi_page(a, i);
		const u8 *y = kapi_page(b, (rot + i) % b->npages);

		if (memcmp(x, y, PAGE_SIZE)) {
			int j = 0;

			while (x[j] == y[j])
				j++;
			scnprintf(why, len, "data differ at page %d of %d, byte %d",
				  i, n, j);
			return -EIO;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- the CM */

static int kapi_cm_cli(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kapi *k = id->context;

	k->cli.last = ev->event;
	k->cli.ev_status = ev->status;
	complete(&k->cli.ev);
	return 0;
}

static int kapi_end_qp(struct kapi *k, struct kapi_end *e, struct rdma_cm_id *id);
static void kapi_end_down(struct kapi *k, struct kapi_end *e);

static int kapi_cm_srv(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kapi *k = id->context;
	struct rdma_conn_param param = {};
	int ret;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (k->srv.id || id->device != k->dev) {
			pr_info("swiwarp_kapi: unexpected connect request\n");
			return -EINVAL;	/* the CM destroys this id */
		}
		k->srv.id = id;
		ret = kapi_end_qp(k, &k->srv, id);
		if (!ret) {
			param.responder_resources = ev->param.conn.responder_resources;
			param.initiator_depth = ev->param.conn.initiator_depth;
			ret = rdma_accept(id, &param);
		}
		if (ret) {
			pr_info("swiwarp_kapi: server QP or accept: %d\n", ret);
			kapi_end_down(k, &k->srv);
			k->srv.id = NULL;	/* the CM destroys it */
		}
		return ret;
	}
	if (id == k->listen)
		return 0;
	k->srv.last = ev->event;
	k->srv.ev_status = ev->status;
	complete(&k->srv.ev);
	return 0;
}

static int kapi_cm_wait(struct kapi_end *e, enum rdma_cm_event_type want,
			char *why, size_t len)
{
	if (!wait_for_completion_timeout(&e->ev, KAPI_TMO)) {
		scnprintf(why, len, "no %s event", rdma_event_msg(want));
		return -ETIMEDOUT;
	}
	reinit_completion(&e->ev);
	if (e->last != want) {
		scnprintf(why, len, "%s (status %d) where %s was due",
			  rdma_event_msg(e->last), e->ev_status,
			  rdma_event_msg(want));
		return -EIO;
	}
	return 0;
}

static int kapi_cq_get(struct kapi *k, struct kapi_end *e)
{
	switch (k->kind) {
	case KAPI_CQ_SOFTIRQ:
		e->cq = ib_alloc_cq(k->dev, e, KAPI_CQE, 0, IB_POLL_SOFTIRQ);
		break;
	case KAPI_CQ_WORKQUEUE:
		e->cq = ib_alloc_cq(k->dev, e, KAPI_CQE, 0, IB_POLL_WORKQUEUE);
		break;
	case KAPI_CQ_POOL_SOFTIRQ:
		e->cq = ib_cq_pool_get(k->dev, KAPI_CQE, -1, IB_POLL_SOFTIRQ);
		break;
	case KAPI_CQ_POOL_WORKQUEUE:
		e->cq = ib_cq_pool_get(k->dev, KAPI_CQE, -1, IB_POLL_WORKQUEUE);
		break;
	}
	if (IS_ERR(e->cq)) {
		int ret = PTR_ERR(e->cq);

		e->cq = NULL;
		return ret;
	}
	return 0;
}

static void kapi_cq_put(struct kapi *k, struct kapi_end *e)
{
	if (!e->cq)
		return;
	if (k->kind == KAPI_CQ_POOL_SOFTIRQ || k->kind == KAPI_CQ_POOL_WORKQUEUE)
		ib_cq_pool_put(e->cq, KAPI_CQE);
	else
		ib_free_cq(e->cq);
	e->cq = NULL;
}

/* CQ and QP of one end on @id, every receive posted. */
static int kapi_end_qp(struct kapi *k, struct kapi_end *e, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	int i, ret;

	ret = kapi_cq_get(k, e);
	if (ret)
		return ret;
	attr.send_cq = e->cq;
	attr.recv_cq = e->cq;
	attr.qp_type = IB_QPT_RC;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.cap.max_send_wr = 128;
	attr.cap.max_recv_wr = KAPI_NRECV + 1;	/* + ib_drain_rq's */
	/* rdma_rw's Writes: as many SGEs as the device has, as nvmet does */
	attr.cap.max_send_sge = min_t(u32, k->dev->attrs.max_send_sge, 16);
	attr.cap.max_recv_sge = 1;
	attr.port_num = id->port_num;
	attr.cap.max_rdma_ctxs = KAPI_RW_CTXS;
	ret = rdma_create_qp(id, e->pd, &attr);
	if (ret) {
		kapi_cq_put(k, e);
		return ret;
	}
	e->qp = id->qp;
	e->next_recv = 0;
	for (i = 0; i < KAPI_NRECV; i++) {
		ret = kapi_post_recv(e, i);
		if (ret)
			return ret;
	}
	return 0;
}

static void kapi_end_down(struct kapi *k, struct kapi_end *e)
{
	if (e->qp) {
		ib_drain_qp(e->qp);
		rdma_destroy_qp(e->id);
		e->qp = NULL;
	}
	kapi_cq_put(k, e);
}

static void kapi_disconnect(struct kapi *k)
{
	if (k->cli.id && k->connected)
		rdma_disconnect(k->cli.id);
	kapi_end_down(k, &k->cli);
	kapi_end_down(k, &k->srv);
	if (k->srv.id)
		rdma_destroy_id(k->srv.id);
	k->srv.id = NULL;
	if (k->cli.id)
		rdma_destroy_id(k->cli.id);
	k->cli.id = NULL;
	k->connected = false;
}

static int kapi_recv_bufs(struct kapi *k, struct kapi_end *e)
{
	int i;

	e->rbuf = kzalloc(KAPI_NRECV * KAPI_RECV_SZ, GFP_KERNEL);
	if (!e->rbuf)
		return -ENOMEM;
	e->rbuf_dma = ib_dma_map_single(k->dev, e->rbuf, KAPI_NRECV * KAPI_RECV_SZ,
					DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(k->dev, e->rbuf_dma)) {
		kfree(e->rbuf);
		e->rbuf = NULL;
		return -EIO;
	}
	for (i = 0; i < KAPI_NRECV; i++)
		e->recv[i].dma = e->rbuf_dma + i * KAPI_RECV_SZ;
	return 0;
}

/* Device-wide things, once the first address resolution named the device. */
static int kapi_dev_setup(struct kapi *k, char *why, size_t len)
{
	int ret;

	k->dev = k->cli.id->device;
	k->max_pages = min_t(int, k->dev->attrs.max_fast_reg_page_list_len,
			     KAPI_MAX_PAGES);
	kapi_out(k, "# device %s, max_fast_reg_page_list_len %u\n",
		 dev_name(&k->dev->dev), k->dev->attrs.max_fast_reg_page_list_len);
	if (k->max_pages < 1) {
		scnprintf(why, len, "no fast registration");
		return -EOPNOTSUPP;
	}
	k->cli.pd = ib_alloc_pd(k->dev, 0);
	if (IS_ERR(k->cli.pd))
		goto pd_err;
	k->srv.pd = ib_alloc_pd(k->dev, 0);
	if (IS_ERR(k->srv.pd))
		goto pd_err;
	ret = kapi_buf_alloc(k, &k->src, k->cli.pd, k->max_pages, true) ?:
	      kapi_buf_alloc(k, &k->chk, k->cli.pd, k->max_pages, true) ?:
	      kapi_buf_alloc(k, &k->dst, k->srv.pd, k->max_pages, true) ?:
	      kapi_buf_alloc(k, &k->rwb, k->srv.pd, k->max_pages, false) ?:
	      kapi_recv_bufs(k, &k->cli) ?:
	      kapi_recv_bufs(k, &k->srv);
	if (ret)
		scnprintf(why, len, "buffers/MRs: %d", ret);
	return ret;
pd_err:
	ret = PTR_ERR(IS_ERR(k->cli.pd) ? k->cli.pd : k->srv.pd);
	if (IS_ERR(k->cli.pd))
		k->cli.pd = NULL;
	else
		k->srv.pd = NULL;
	scnprintf(why, len, "ib_alloc_pd: %d", ret);
	return ret;
}

/* Connect a client QP to the server through the RDMA CM, CQs of @kind. */
static int kapi_connect_once(struct kapi *k, enum kapi_cq_kind kind, char *why,
			     size_t len)
{
	struct rdma_conn_param param = {};
	int ret;

	k->kind = kind;
	reinit_completion(&k->cli.ev);
	reinit_completion(&k->srv.ev);
	k->cli.id = rdma_create_id(&init_net, kapi_cm_cli, k, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(k->cli.id)) {
		ret = PTR_ERR(k->cli.id);
		k->cli.id = NULL;
		scnprintf(why, len, "rdma_create_id: %d", ret);
		return ret;
	}
	ret = rdma_resolve_addr(k->cli.id, NULL, (struct sockaddr *)&k->addr,
				KAPI_CM_TMO_MS);
	if (ret) {
		scnprintf(why, len, "rdma_resolve_addr: %d", ret);
		goto err;
	}
	ret = kapi_cm_wait(&k->cli, RDMA_CM_EVENT_ADDR_RESOLVED, why, len);
	if (ret)
		goto err;
	ret = rdma_resolve_route(k->cli.id, KAPI_CM_TMO_MS);
	if (ret) {
		scnprintf(why, len, "rdma_resolve_route: %d", ret);
		goto err;
	}
	ret = kapi_cm_wait(&k->cli, RDMA_CM_EVENT_ROUTE_RESOLVED, why, len);
	if (ret)
		goto err;
	if (!k->dev) {
		ret = kapi_dev_setup(k, why, len);
		if (ret)
			goto err;
	} else if (k->cli.id->device != k->dev) {
		scnprintf(why, len, "the address moved to another device");
		ret = -ENODEV;
		goto err;
	}
	ret = kapi_end_qp(k, &k->cli, k->cli.id);
	if (ret) {
		scnprintf(why, len, "client QP: %d", ret);
		goto err;
	}
	param.initiator_depth = min_t(int, 8, k->dev->attrs.max_qp_init_rd_atom);
	param.responder_resources = min_t(int, 8, k->dev->attrs.max_qp_rd_atom);
	param.retry_count = 7;
	ret = rdma_connect(k->cli.id, &param);
	if (ret) {
		scnprintf(why, len, "rdma_connect: %d", ret);
		goto err;
	}
	ret = kapi_cm_wait(&k->cli, RDMA_CM_EVENT_ESTABLISHED, why, len);
	if (ret)
		goto err;
	k->connected = true;
	ret = kapi_cm_wait(&k->srv, RDMA_CM_EVENT_ESTABLISHED, why, len);
	if (ret)
		goto err;
	return 0;
err:
	kapi_disconnect(k);
	return ret;
}

/*
 * kapi_connect_once, again when the device could not bind the port
 * rdma_cm chose: rdma_cm picks it knowing only its own ports, and a device
 * that binds it with plain SO_REUSEADDR (upstream siw) fails with
 * EADDRINUSE while another TCP socket without it holds that port
 * (Documentation/robustness.md, known bug 6).  Each clash is reported on a
 * CLASH: line, which the lab counts as a failure on every device but siw.
 */
static int kapi_connect(struct kapi *k, enum kapi_cq_kind kind, char *why,
			size_t len)
{
	int tries = KAPI_CONNECT_TRIES, ret;

	for (;;) {
		ret = kapi_connect_once(k, kind, why, len);
		if (ret != -EADDRINUSE || !--tries)
			return ret;
		kapi_out(k, "CLASH: bind-clash [%s]\n", why);
		why[0] = '\0';
	}
}

static int kapi_reconnect(struct kapi *k, char *why, size_t len)
{
	kapi_disconnect(k);
	return kapi_connect(k, k->kind, why, len);
}

/* A new MR for @b: the old one may be left valid by a failed case. */
static int kapi_buf_new_mr(struct kapi *k, struct kapi_buf *b, struct ib_pd *pd)
{
	kapi_buf_unmap(k, b);
	ib_dereg_mr(b->mr);
	b->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, k->max_pages);
	if (IS_ERR(b->mr)) {
		int ret = PTR_ERR(b->mr);

		b->mr = NULL;
		return ret;
	}
	return 0;
}

/*
 * After a failed case: disconnect and start the next case with fresh MRs,
 * so one failure does not become many.
 */
static void kapi_reset(struct kapi *k)
{
	kapi_disconnect(k);
	if (k->src.mr && kapi_buf_new_mr(k, &k->src, k->cli.pd))
		k->broken = true;
	if (k->chk.mr && kapi_buf_new_mr(k, &k->chk, k->cli.pd))
		k->broken = true;
	if (k->dst.mr && kapi_buf_new_mr(k, &k->dst, k->srv.pd))
		k->broken = true;
}

/*
 * The end of a case, reached with ret 0 and no reason in @why when every
 * check held: PASS.  Otherwise (an error, or a reason: some checks fail
 * with ret still 0) start the next case afresh (kapi_reset) and FAIL
 * with the reason.
 */
static void kapi_case_end(struct kapi *k, const char *name, int ret,
			  const char *why)
{
	if (!ret && !why[0]) {
		kapi_pass(k, name);
		return;
	}
	kapi_reset(k);
	kapi_fail(k, name, "%s", why);
}

/* The connection every case but cq/ and drain-qp/ runs on. */
static int kapi_ensure(struct kapi *k, char *why, size_t len)
{
	if (k->broken) {
		scnprintf(why, len, "an earlier failure left no MRs");
		return -EIO;
	}
	if (k->connected)
		return 0;
	return kapi_connect(k, KAPI_CQ_SOFTIRQ, why, len);
}

/* --------------------------------------------------------------- the cases */

#define KAPI_REMOTE (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
		     IB_ACCESS_REMOTE_READ)
#define KAPI_SINK (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE)

/*
 * An RDMA Read from (@raddr, @rkey), a key that must be invalid, into one
 * page of @sink: the Read must fail and change nothing, or the case fails.
 * Its status must be IB_WC_REM_ACCESS_ERR (the responder's Terminate names
 * an invalid STag); that is counted for a case of its own,
 * stale-key/rem-access-err, so a device that reports another error (siw
 * flushes the Read) still runs every other check.  The connection is gone
 * after it; connect again.
 */
static int kapi_stale_remote(struct kapi *k, struct kapi_end *e,
			     struct kapi_buf *sink, u64 raddr, u32 rkey,
			     char *why, size_t len)
{
	struct kapi_wait w;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	int ret;

	ret = kapi_reg(k, e, sink, 1, 0, KAPI_SINK, why, len);
	if (ret)
		return ret;
	memset(kapi_page(sink, 0), 0x5a, PAGE_SIZE);
	kapi_rdma_wr(&wr, &sge, IB_WR_RDMA_READ, sink, raddr, rkey);
	ret = kapi_post_wait(k, e, &wr.wr, &w);
	if (ret) {
		scnprintf(why, len, "stale-key Read: post/wait %d", ret);
		return ret;
	}
	if (w.wc.status == IB_WC_SUCCESS) {
		scnprintf(why, len, "a Read with invalidated key 0x%x succeeded", rkey);
		ret = -EIO;
	} else if (w.wc.status != IB_WC_REM_ACCESS_ERR && !k->stale_bad++) {
		scnprintf(k->stale_why, sizeof(k->stale_why),
			  "first: a Read with invalidated key 0x%x: %s, not %s",
			  rkey, ib_wc_status_msg(w.wc.status),
			  ib_wc_status_msg(IB_WC_REM_ACCESS_ERR));
	}
	k->stale_n++;
	if (!ret && memchr_inv(kapi_page(sink, 0), 0x5a, PAGE_SIZE)) {
		scnprintf(why, len, "a Read with an invalid key placed data");
		ret = -EIO;
	}
	if (ret)
		return ret;
	/* A new QP; the sink's registration outlived the old one. */
	return kapi_reconnect(k, why, len) ?:
	       kapi_local_inv(k, e, sink->mr->lkey, why, len);
}

/*
 * One size of case 1: the server registers n pages (dst), the client Writes
 * n pages into them and Reads them back (its own MRs src and chk, fast
 * registered too), both compared; the server's LOCAL_INV ends it.
 */
static int kapi_fr_size(struct kapi *k, int n, char *why, size_t len)
{
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	int ret;

	kapi_zero(&k->dst, min(n + 1, k->max_pages));
	kapi_zero(&k->chk, n);
	ret = kapi_reg(k, &k->srv, &k->dst, n, 0, KAPI_REMOTE, why, len) ?:
	      kapi_reg(k, &k->cli, &k->src, n, n, IB_ACCESS_LOCAL_WRITE, why, len) ?:
	      kapi_reg(k, &k->cli, &k->chk, n, 0, KAPI_SINK, why, len);
	if (ret)
		return ret;
	kapi_rdma_wr(&wr, &sge, IB_WR_RDMA_WRITE, &k->src, k->dst.mr->iova,
		     k->dst.mr->rkey);
	ret = kapi_do(k, &k->cli, &wr.wr, why, len);
	if (ret)
		return ret;
	/* Ordered after the Write: when it completes, the Write was placed. */
	kapi_rdma_wr(&wr, &sge, IB_WR_RDMA_READ, &k->chk, k->dst.mr->iova,
		     k->dst.mr->rkey);
	ret = kapi_do(k, &k->cli, &wr.wr, why, len);
	if (ret)
		return ret;
	ret = kapi_cmp(&k->dst, &k->src, n, n, why, len);
	if (ret)
		return ret;
	if (n < k->max_pages && memchr_inv(kapi_page(&k->dst, n), 0, PAGE_SIZE)) {
		scnprintf(why, len, "the Write went past its %d pages", n);
		return -EIO;
	}
	ret = kapi_cmp(&k->chk, &k->src, n, n, why, len);
	if (ret)
		return ret;
	return kapi_local_inv(k, &k->srv, k->dst.mr->rkey, why, len) ?:
	       kapi_local_inv(k, &k->cli, k->src.mr->lkey, why, len) ?:
	       kapi_local_inv(k, &k->cli, k->chk.mr->lkey, why, len);
}

/*
 * Case 1: page lists of every size from 1 to max_fast_reg_page_list_len
 * (up to KAPI_MAX_PAGES); after the LOCAL_INV of sizes 1 and the largest,
 * the invalidated rkey must be refused, and the next registration (with
 * the key bumped) must work.
 */
static void kapi_case_fastreg(struct kapi *k)
{
	const char *name = "fastreg/page-lists";
	char why[200] = "";
	int n, ret = 0;

	kapi_fill(&k->src, 0, k->max_pages, 1);
	ret = kapi_ensure(k, why, sizeof(why));
	for (n = 1; !ret && n <= k->max_pages; n++) {
		ret = kapi_fr_size(k, n, why, sizeof(why));
		if (ret)
			break;
		if (n == 1 || n == k->max_pages) {
			ret = kapi_stale_remote(k, &k->cli, &k->chk,
						k->dst.mr->iova, k->dst.mr->rkey, why, sizeof(why));
			if (ret)
				break;
		}
	}
	if (ret) {
		kapi_reset(k);
		kapi_fail(k, name, "%d pages: %s", n, why);
		return;
	}
	/* The first size again, on the MR the largest one used. */
	ret = kapi_fr_size(k, 1, why, sizeof(why));
	if (ret) {
		kapi_reset(k);
		kapi_fail(k, name, "re-registration after the stale-key check: %s", why);
		return;
	}
	kapi_out(k, "# fastreg/page-lists: every size 1..%d pages\n", k->max_pages);
	kapi_pass(k, name);
}

/*
 * The client Reads the n pages of the server's dst (both registered) into
 * chk, compares them, and both MRs are invalidated locally.
 */
static int kapi_read_back(struct kapi *k, int n, char *why, size_t len)
{
	struct ib_rdma_wr wr;
	struct ib_sge sge;

	kapi_rdma_wr(&wr, &sge, IB_WR_RDMA_READ, &k->chk, k->dst.mr->iova,
		     k->dst.mr->rkey);
	return kapi_do(k, &k->cli, &wr.wr, why, len) ?:
	       kapi_cmp(&k->chk, &k->dst, n, 0, why, len) ?:
	       kapi_local_inv(k, &k->cli, k->chk.mr->lkey, why, len) ?:
	       kapi_local_inv(k, &k->srv, k->dst.mr->rkey, why, len);
}

/*
 * Case 2a: RDMA Read with Local Invalidate.  The client reads n pages of the
 * server's dst into chk with IB_WR_RDMA_READ_WITH_INV; chk's key must then
 * be invalid: a local access through it fails (IB_WC_LOC_PROT_ERR) and
 * places nothing, and a new registration of chk, without a LOCAL_INV,
 * works.
 */
static void kapi_case_read_inv(struct kapi *k, int n)
{
	char name[64], why[200] = "";
	struct kapi_wait w;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	u32 key;
	int ret;

	snprintf(name, sizeof(name), "read-with-inv/%d-pages", n);
	kapi_fill(&k->dst, 0, n, 2 + n);
	kapi_zero(&k->chk, n);
	ret = kapi_ensure(k, why, sizeof(why)) ?:
	      kapi_reg(k, &k->srv, &k->dst, n, 0, KAPI_REMOTE, why, sizeof(why)) ?:
	      kapi_reg(k, &k->cli, &k->chk, n, 0, KAPI_SINK, why, sizeof(why));
	if (ret)
		goto fail;
	key = k->chk.mr->lkey;
	kapi_rdma_wr(&wr, &sge, IB_WR_RDMA_READ_WITH_INV, &k->chk,
		     k->dst.mr->iova, k->dst.mr->rkey);
	wr.wr.ex.invalidate_rkey = key;
	ret = kapi_do(k, &k->cli, &wr.wr, why, sizeof(why)) ?:
	      kapi_cmp(&k->chk, &k->dst, n, 0, why, sizeof(why));
	if (ret)
		goto fail;
	/* A Read into the invalidated sink must fail locally. */
	kapi_zero(&k->chk, n);
	kapi_rdma_wr(&wr, &sge, IB_WR_RDMA_READ, &k->chk, k->dst.mr->iova,
		     k->dst.mr->rkey);
	ret = kapi_post_wait(k, &k->cli, &wr.wr, &w);
	if (ret) {
		scnprintf(why, sizeof(why), "Read into the invalidated sink: post/wait %d", ret);
		goto fail;
	}
	if (w.wc.status != IB_WC_LOC_PROT_ERR) {
		scnprintf(why, sizeof(why), "Read into the invalidated sink: %s, not %s",
			  ib_wc_status_msg(w.wc.status),
			  ib_wc_status_msg(IB_WC_LOC_PROT_ERR));
		ret = -EIO;
		kapi_reconnect(k, why, sizeof(why));
		goto fail;
	}
	if (memchr_inv(kapi_page(&k->chk, 0), 0, PAGE_SIZE)) {
		scnprintf(why, sizeof(why), "a Read into an invalid sink placed data");
		ret = -EIO;
		kapi_reconnect(k, why, sizeof(why));
		goto fail;
	}
	ret = kapi_reconnect(k, why, sizeof(why));
	if (ret)
		goto fail;
	/* Registered again (the key bumped) without a LOCAL_INV: works. */
	ret = kapi_reg(k, &k->cli, &k->chk, n, 0, KAPI_SINK, why, sizeof(why));
	if (ret)
		goto fail;
	ret = kapi_read_back(k, n, why, sizeof(why));
	if (ret)
		goto fail;
fail:
	kapi_case_end(k, name, ret, why);
}

/*
 * Check a receive that carried a Send with Invalidate of @rkey, @bytes
 * long, the payload the first bytes of page 0 of @b.
 */
static int kapi_check_inv_recv(struct kapi *k, struct kapi_end *e, u32 rkey,
			       struct kapi_buf *b, u32 bytes, char *why,
			       size_t len)
{
	struct ib_wc *wc;
	int slot, ret;

	ret = kapi_next_recv(k, e, &slot);
	if (ret) {
		scnprintf(why, len, "receive: %d", ret);
		return ret;
	}
	wc = &e->recv[slot].w.wc;
	if (wc->status != IB_WC_SUCCESS || wc->opcode != IB_WC_RECV) {
		scnprintf(why, len, "receive: %s, opcode %d",
			  ib_wc_status_msg(wc->status), wc->opcode);
		return -EIO;
	}
	if (!(wc->wc_flags & IB_WC_WITH_INVALIDATE) || wc->ex.invalidate_rkey != rkey) {
		scnprintf(why, len, "receive: wc_flags 0x%x, invalidate_rkey 0x%x, want 0x%x",
			  wc->wc_flags, wc->ex.invalidate_rkey, rkey);
		return -EIO;
	}
	if (wc->byte_len != bytes ||
	    memcmp((u8 *)e->rbuf + slot * KAPI_RECV_SZ, kapi_page(b, 0), bytes)) {
		scnprintf(why, len, "receive: %u bytes, want %u, or payload differs",
			  wc->byte_len, bytes);
		return -EIO;
	}
	return 0;
}

/* A Send with Invalidate of @rkey from @e, payload page 0 of @b (registered). */
static int kapi_send_inv(struct kapi *k, struct kapi_end *e, struct kapi_buf *b,
			 u32 bytes, u32 rkey, char *why, size_t len)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = b->mr->iova;
	sge.length = bytes;
	sge.lkey = b->mr->lkey;
	wr.opcode = IB_WR_SEND_WITH_INV;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.ex.invalidate_rkey = rkey;
	return kapi_do(k, e, &wr, why, len);
}

/*
 * Case 2b: Send with Invalidate.  The client's Send invalidates the
 * server's dst (n pages): the receive reports it (IB_WC_WITH_INVALIDATE and
 * the key), a Read through the key then fails with a remote access error,
 * and dst registered again works.
 */
static void kapi_case_send_inv(struct kapi *k, int n)
{
	char name[64], why[200] = "";
	u32 rkey;
	u64 iova;
	int ret;

	snprintf(name, sizeof(name), "send-with-inv/%d-pages", n);
	kapi_fill(&k->src, 0, 1, 3 + n);
	kapi_fill(&k->dst, 0, n, 4 + n);
	ret = kapi_ensure(k, why, sizeof(why)) ?:
	      kapi_reg(k, &k->srv, &k->dst, n, 0, KAPI_REMOTE, why, sizeof(why)) ?:
	      kapi_reg(k, &k->cli, &k->src, 1, 0, IB_ACCESS_LOCAL_WRITE, why, sizeof(why));
	if (ret)
		goto fail;
	rkey = k->dst.mr->rkey;
	iova = k->dst.mr->iova;
	ret = kapi_send_inv(k, &k->cli, &k->src, 200, rkey, why, sizeof(why)) ?:
	      kapi_check_inv_recv(k, &k->srv, rkey, &k->src, 200, why, sizeof(why)) ?:
	      kapi_local_inv(k, &k->cli, k->src.mr->lkey, why, sizeof(why)) ?:
	      kapi_stale_remote(k, &k->cli, &k->chk, iova, rkey, why, sizeof(why));
	if (ret)
		goto fail;
	/* dst again, with a new key: the client's Read works. */
	kapi_zero(&k->chk, n);
	ret = kapi_reg(k, &k->srv, &k->dst, n, 0, KAPI_REMOTE, why, sizeof(why)) ?:
	      kapi_reg(k, &k->cli, &k->chk, n, 0, KAPI_SINK, why, sizeof(why));
	if (ret)
		goto fail;
	ret = kapi_read_back(k, n, why, sizeof(why));
	if (ret)
		goto fail;
fail:
	kapi_case_end(k, name, ret, why);
}

/* One rdma_rw transfer of n pages on the server: rwb <-> the client's src. */
static int kapi_rw_once(struct kapi *k, int n, enum dma_data_direction dir,
			u32 *mr_key, char *why, size_t len)
{
	struct rdma_rw_ctx ctx;
	struct kapi_wait w;
	struct scatterlist *sgl = k->rwb.sgl;
	u32 port = k->srv.id->port_num;
	int i, ret, used = k->srv.qp->mrs_used;
	bool with_mr;

	sg_init_table(sgl, n);
	for (i = 0; i < n; i++)
		sg_set_page(&sgl[i], k->rwb.pages[i], PAGE_SIZE, 0);
	ret = rdma_rw_ctx_init(&ctx, k->srv.qp, port, sgl, n, 0,
			       k->src.mr->iova, k->src.mr->rkey, dir);
	if (ret < 0) {
		scnprintf(why, len, "rdma_rw_ctx_init: %d", ret);
		return ret;
	}
	/* The context's kind is private to the RDMA core: an MR taken from
	 * the QP's pool tells that it registers memory (ctx.reg is valid).
	 */
	with_mr = k->srv.qp->mrs_used > used;
	if (dir == DMA_FROM_DEVICE && rdma_protocol_iwarp(k->dev, port) &&
	    !with_mr) {
		scnprintf(why, len, "rdma_rw read without an MR on iWARP");
		rdma_rw_ctx_destroy(&ctx, k->srv.qp, port, sgl, n, dir);
		return -EIO;
	}
	if (mr_key)
		*mr_key = 0;
	kapi_wait_init(&w);
	ret = rdma_rw_ctx_post(&ctx, k->srv.qp, port, &w.cqe, NULL);
	if (!ret) {
		ret = kapi_wait_wc(k, &w);
		if (!ret && w.wc.status != IB_WC_SUCCESS) {
			scnprintf(why, len, "rdma_rw %s: %s",
				  dir == DMA_FROM_DEVICE ? "read" : "write",
				  ib_wc_status_msg(w.wc.status));
			ret = -EIO;
		} else if (ret) {
			scnprintf(why, len, "rdma_rw: wait %d", ret);
		}
	} else {
		scnprintf(why, len, "rdma_rw_ctx_post: %d", ret);
	}
	/* With Read with Invalidate, the MR's key after the post: read it now. */
	if (mr_key && with_mr)
		*mr_key = ctx.reg[0].mr->lkey;
	rdma_rw_ctx_destroy(&ctx, k->srv.qp, port, sgl, n, dir);
	return ret;
}

/*
 * Case 3: the rdma_rw API as nvmet-rdma drives it.  The client (the "host")
 * registers n pages of src; the server (the "target") moves them with
 * rdma_rw_ctx_init/post/destroy, more times than it has rdma_rw contexts,
 * so the pool's MRs are used again (on iWARP a Read registers the sink and
 * invalidates it with RDMA Read with Local Invalidate; an MR left valid
 * could not be registered again), then answers with a Send with
 * Invalidate of the client's key, as an NVMe response does.  The client
 * checks the data and the receive; a Read through its invalidated key must
 * then fail.  For reads, the last rdma_rw MR must be invalid too: a local
 * access through its key fails.
 */
static void kapi_case_rw(struct kapi *k, int n, enum dma_data_direction dir)
{
	bool rd = dir == DMA_FROM_DEVICE;
	char name[64], why[200] = "";
	int i, ret, rounds = 2 * KAPI_RW_CTXS + 1;
	struct kapi_wait w;
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	u32 mr_key = 0, rkey;
	u64 iova;

	snprintf(name, sizeof(name), "rdma-rw/%s-%d-pages", rd ? "read" : "write", n);
	ret = kapi_ensure(k, why, sizeof(why));
	if (ret)
		goto fail;
	for (i = 0; i < rounds; i++) {
		if (rd) {
			kapi_fill(&k->src, 0, n, 10 * n + i);
			kapi_zero(&k->rwb, n);
		} else {
			kapi_zero(&k->src, n);
			kapi_fill(&k->rwb, 0, n, 10 * n + i);
		}
		ret = kapi_reg(k, &k->cli, &k->src, n, 0, KAPI_REMOTE, why, sizeof(why));
		if (ret)
			goto fail;
		rkey = k->src.mr->rkey;
		iova = k->src.mr->iova;
		ret = kapi_rw_once(k, n, dir, &mr_key, why, sizeof(why));
		if (ret)
			goto fail_round;
		/* The response: a Send with Invalidate of the client's key. */
		ret = kapi_reg(k, &k->srv, &k->dst, 1, 0, IB_ACCESS_LOCAL_WRITE,
			       why, sizeof(why)) ?:
		      kapi_send_inv(k, &k->srv, &k->dst, 64, rkey, why, sizeof(why)) ?:
		      kapi_local_inv(k, &k->srv, k->dst.mr->lkey, why, sizeof(why)) ?:
		      kapi_check_inv_recv(k, &k->cli, rkey, &k->dst, 64, why, sizeof(why)) ?:
		      kapi_cmp(&k->rwb, &k->src, n, 0, why, sizeof(why));
		if (ret)
			goto fail_round;
	}
	if (rd && mr_key) {
		/* The rdma_rw MR was invalidated by the Read: a local use fails. */
		struct kapi_buf fake = {};
		struct ib_mr mr = {};

		mr.iova = sg_dma_address(k->rwb.sgl);
		mr.length = PAGE_SIZE;
		mr.lkey = mr_key;
		fake.mr = &mr;
		ret = kapi_reg(k, &k->cli, &k->src, 1, 0, KAPI_REMOTE, why, sizeof(why));
		if (ret)
			goto fail;
		kapi_rdma_wr(&wr, &sge, IB_WR_RDMA_READ, &fake, k->src.mr->iova,
			     k->src.mr->rkey);
		ret = kapi_post_wait(k, &k->srv, &wr.wr, &w);
		if (!ret && w.wc.status != IB_WC_LOC_PROT_ERR) {
			scnprintf(why, sizeof(why),
				  "Read into the rdma_rw MR (key 0x%x) after its Read with Invalidate: %s, not %s",
				  mr_key, ib_wc_status_msg(w.wc.status),
				  ib_wc_status_msg(IB_WC_LOC_PROT_ERR));
			ret = -EIO;
		}
		if (ret) {
			kapi_reconnect(k, why, sizeof(why));
			goto fail;
		}
		ret = kapi_reconnect(k, why, sizeof(why)) ?:
		      kapi_local_inv(k, &k->cli, k->src.mr->rkey, why, sizeof(why));
		if (ret)
			goto fail;
	}
	/* The client's src was invalidated by the server's Send: refused. */
	ret = kapi_stale_remote(k, &k->srv, &k->dst, iova, rkey, why, sizeof(why));
	if (ret)
		goto fail;
	kapi_pass(k, name);
	return;
fail_round:
	kapi_reset(k);
	kapi_fail(k, name, "round %d: %s", i, why);
	return;
fail:
	kapi_reset(k);
	kapi_fail(k, name, "%s", why);
}

/*
 * Case 4: one connection per kind of CQ: Sends both ways and an rdma_rw
 * read, every completion seen through ib_cqe.done in the context the CQ
 * promises (softirq, or a workqueue worker).
 */
static void kapi_case_cq(struct kapi *k, enum kapi_cq_kind kind,
			 const char *kname)
{
	struct kapi_wait *seen[3];
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	struct kapi_wait w;
	char name[64], why[200] = "";
	int slot, ret, i;
	u32 mr_key;

	snprintf(name, sizeof(name), "cq/%s", kname);
	ret = k->broken ? -EIO : kapi_connect(k, kind, why, sizeof(why));
	if (ret)
		goto fail;
	kapi_fill(&k->src, 0, 2, 20 + kind);
	kapi_fill(&k->dst, 0, 1, 30 + kind);
	ret = kapi_reg(k, &k->cli, &k->src, 2, 0, KAPI_REMOTE, why, sizeof(why)) ?:
	      kapi_reg(k, &k->srv, &k->dst, 1, 0, IB_ACCESS_LOCAL_WRITE, why, sizeof(why));
	if (ret)
		goto fail;
	sge.addr = k->src.mr->iova;
	sge.length = 100;
	sge.lkey = k->src.mr->lkey;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = kapi_post_wait(k, &k->cli, &wr, &w);
	if (ret || w.wc.status != IB_WC_SUCCESS) {
		scnprintf(why, sizeof(why), "client Send: %d %s", ret,
			  ib_wc_status_msg(w.wc.status));
		goto fail;
	}
	ret = kapi_next_recv(k, &k->srv, &slot);
	if (ret || k->srv.recv[slot].w.wc.status != IB_WC_SUCCESS ||
	    k->srv.recv[slot].w.wc.byte_len != 100 ||
	    memcmp((u8 *)k->srv.rbuf + slot * KAPI_RECV_SZ, kapi_page(&k->src, 0), 100)) {
		scnprintf(why, sizeof(why), "server receive: %d or data differ", ret);
		ret = -EIO;
		goto fail;
	}
	seen[0] = &w;
	seen[1] = &k->srv.recv[slot].w;
	ret = kapi_rw_once(k, 2, DMA_FROM_DEVICE, &mr_key, why, sizeof(why)) ?:
	      kapi_cmp(&k->rwb, &k->src, 2, 0, why, sizeof(why)) ?:
	      kapi_send_inv(k, &k->srv, &k->dst, 64, k->src.mr->rkey, why, sizeof(why)) ?:
	      kapi_check_inv_recv(k, &k->cli, k->src.mr->rkey, &k->dst, 64, why, sizeof(why));
	if (ret)
		goto fail;
	seen[2] = &k->cli.recv[k->cli.next_recv - 1].w;
	for (i = 0; i < ARRAY_SIZE(seen); i++) {
		bool soft = kind == KAPI_CQ_SOFTIRQ || kind == KAPI_CQ_POOL_SOFTIRQ;

		if (soft ? !seen[i]->softirq : !seen[i]->wq) {
			scnprintf(why, sizeof(why), "completion %d ran %s, not in %s", i,
				  seen[i]->softirq ? "in softirq" :
				  seen[i]->wq ? "in a workqueue" : "elsewhere",
				  soft ? "softirq" : "a workqueue");
			ret = -EIO;
			goto fail;
		}
	}
	ret = kapi_local_inv(k, &k->srv, k->dst.mr->lkey, why, sizeof(why));
	if (ret)
		goto fail;
	kapi_disconnect(k);
fail:
	kapi_case_end(k, name, ret, why);
}

/*
 * Case 5: ib_drain_qp() with every receive still posted on both ends: it
 * returns, and each receive completed once with
 * IB_WC_WR_FLUSH_ERR.
 */
static void kapi_case_drain(struct kapi *k)
{
	const char *name = "drain-qp/outstanding-receives";
	char why[200] = "";
	int ret, i, n = 0;
	struct kapi_end *e[2] = { &k->cli, &k->srv };
	int j;

	ret = k->broken ? -EIO : kapi_connect(k, KAPI_CQ_SOFTIRQ, why, sizeof(why));
	if (ret)
		goto fail;
	for (j = 0; j < 2; j++) {
		ib_drain_qp(e[j]->qp);
		for (i = 0; i < KAPI_NRECV; i++) {
			struct kapi_wait *w = &e[j]->recv[i].w;

			if (!completion_done(&w->done)) {
				scnprintf(why, sizeof(why),
					  "%s receive %d not completed when ib_drain_qp returned",
					  j ? "server" : "client", i);
				ret = -EIO;
			} else if (w->wc.status != IB_WC_WR_FLUSH_ERR) {
				scnprintf(why, sizeof(why), "%s receive %d: %s",
					  j ? "server" : "client", i,
					  ib_wc_status_msg(w->wc.status));
				ret = -EIO;
			} else {
				n++;
			}
		}
	}
	kapi_disconnect(k);
	if (ret)
		goto fail;
	kapi_out(k, "# drain-qp: %d receives flushed\n", n);
fail:
	kapi_case_end(k, name, ret, why);
}

/* ------------------------------------------- RFC 7306: immediate, atomics */

#define KAPI_ATOMIC (KAPI_REMOTE | IB_ACCESS_REMOTE_ATOMIC)
/* Where the Write with Immediate lands in dst, and the atomics' target. */
#define KAPI_IMM_OFF		64
/* A zero-length Write with Immediate follows a plain Write of these. */
#define KAPI_IMM_PRE_OFF	2048
#define KAPI_IMM_PRE_LEN	100
#define KAPI_ATOMIC_OFF		1024
/* The atomics' sink in chk: its 8 octets and the ones around them. */
#define KAPI_SINK_OFF		16
#define KAPI_SINK_FILL		0xa5

/*
 * The RFC 7306 cases run only on a device that offers atomics: no device
 * attribute tells a kernel ULP about Immediate Data on iWARP, and the
 * two come together here (swiwarp negotiates both in its MPA exchange,
 * upstream siw has neither: IB_ATOMIC_NONE).  Nothing is posted on the
 * others: upstream siw's post_send (6.1) writes the wr_id (the ULP's
 * wr_cqe) and the signalled flag into the SQ slot before it refuses an
 * opcode it does not know, and leaves them there, so a later flush
 * completes that slot with a wr_cqe long gone (seen in the lab: an oops
 * in __ib_process_cq).  On a device that offers them every refusal is a
 * failure: for swiwarp it means the MPA exchange did not negotiate RFC
 * 7306 (its Res bits, set on every connection, kernel consumers' too:
 * Documentation/kernel.md, "Immediate Data").
 */
static bool kapi_7306_skip(struct kapi *k, const char *name)
{
	if (k->dev->attrs.atomic_cap != IB_ATOMIC_NONE)
		return false;
	kapi_skip(k, name, "the device has atomic_cap IB_ATOMIC_NONE: no RFC 7306");
	return true;
}

/* Post @wr on @e and wait for its completion with @want. */
static int kapi_do_op(struct kapi *k, struct kapi_end *e, struct ib_send_wr *wr,
		      enum ib_wc_opcode want, char *why, size_t len)
{
	struct kapi_wait w;
	int ret;

	ret = kapi_post_wait(k, e, wr, &w);
	if (ret) {
		scnprintf(why, len, "opcode %d: post/wait %d", wr->opcode, ret);
		return ret;
	}
	if (w.wc.status != IB_WC_SUCCESS || w.wc.opcode != want) {
		scnprintf(why, len, "opcode %d: %s, wc opcode %d, want %d",
			  wr->opcode, ib_wc_status_msg(w.wc.status),
			  w.wc.opcode, want);
		return -EIO;
	}
	return 0;
}

/*
 * The server's next receive, for the cases with immediate data: it must
 * complete successfully as @opcode, flagged IB_WC_WITH_IMM, carrying @val
 * (sent in network order, compared as such).  Its ring slot in *slot.
 */
static int kapi_imm_recv(struct kapi *k, enum ib_wc_opcode opcode, u32 val,
			 int *slot, char *why, size_t len)
{
	struct ib_wc *wc;
	int ret;

	ret = kapi_next_recv(k, &k->srv, slot);
	if (ret) {
		scnprintf(why, len, "server receive: %d", ret);
		return ret;
	}
	wc = &k->srv.recv[*slot].w.wc;
	if (wc->status != IB_WC_SUCCESS || wc->opcode != opcode ||
	    !(wc->wc_flags & IB_WC_WITH_IMM)) {
		scnprintf(why, len, "receive: %s, opcode %d (want %d), wc_flags 0x%x",
			  ib_wc_status_msg(wc->status), wc->opcode, opcode,
			  wc->wc_flags);
		return -EIO;
	}
	if (wc->ex.imm_data != cpu_to_be32(val)) {
		scnprintf(why, len, "imm_data 0x%08x (host order), posted 0x%08x",
			  be32_to_cpu(wc->ex.imm_data), val);
		return -EIO;
	}
	return 0;
}

/*
 * Case 6a: RDMA Write with Immediate, @bytes long (0: no Write data, the
 * Immediate Data alone).  The client Writes the first @bytes of src into
 * the server's dst at KAPI_IMM_OFF; the server's receive must complete
 * with IB_WC_RECV_RDMA_WITH_IMM, IB_WC_WITH_IMM and the value exactly as
 * posted (ex.imm_data is __be32 on both sides: the octets travel as they
 * are, so the receiver's be32_to_cpu() gives the sender's number), and
 * the data must be in dst, nothing around it touched, when the receive
 * completes.  byte_len is counted for a case of its own,
 * write-imm/byte-len: the verbs define it as the bytes transferred,
 * which for a Write with Immediate is the Write's length
 * (ibv_poll_cq(3); rxe reports that).  The zero-length one comes right
 * after a plain Write of KAPI_IMM_PRE_LEN bytes at KAPI_IMM_PRE_OFF, on
 * the same stream: its byte_len must be 0, not that Write's length.
 */
static void kapi_case_write_imm(struct kapi *k, u32 bytes)
{
	const u32 val = 0x7306a1b2 ^ bytes;
	char name[64], why[200] = "";
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct ib_wc *wc;
	u8 *d;
	int slot, ret;

	snprintf(name, sizeof(name), "write-imm/%u-bytes", bytes);
	if (kapi_7306_skip(k, name))
		return;
	kapi_fill(&k->src, 0, 1, 40 + bytes);
	kapi_zero(&k->dst, 1);
	ret = kapi_ensure(k, why, sizeof(why)) ?:
	      kapi_reg(k, &k->srv, &k->dst, 1, 0, KAPI_REMOTE, why, sizeof(why)) ?:
	      kapi_reg(k, &k->cli, &k->src, 1, 0, IB_ACCESS_LOCAL_WRITE, why, sizeof(why));
	if (ret)
		goto fail;
	if (!bytes) {
		kapi_rdma_wr(&wr, &sge, IB_WR_RDMA_WRITE, &k->src,
			     k->dst.mr->iova + KAPI_IMM_PRE_OFF, k->dst.mr->rkey);
		sge.length = KAPI_IMM_PRE_LEN;
		ret = kapi_do_op(k, &k->cli, &wr.wr, IB_WC_RDMA_WRITE, why, sizeof(why));
		if (ret)
			goto fail;
	}
	kapi_rdma_wr(&wr, &sge, IB_WR_RDMA_WRITE_WITH_IMM, &k->src,
		     k->dst.mr->iova + KAPI_IMM_OFF, k->dst.mr->rkey);
	sge.length = bytes;
	wr.wr.num_sge = bytes ? 1 : 0;
	wr.wr.ex.imm_data = cpu_to_be32(val);
	ret = kapi_do_op(k, &k->cli, &wr.wr, IB_WC_RDMA_WRITE, why, sizeof(why));
	if (ret)
		goto fail;
	ret = kapi_imm_recv(k, IB_WC_RECV_RDMA_WITH_IMM, val, &slot, why, sizeof(why));
	if (ret)
		goto fail;
	wc = &k->srv.recv[slot].w.wc;
	k->imm_len_n++;
	if (wc->byte_len != bytes) {
		/* The first wrong one, or the first wrong one that is not 0. */
		bool first = !k->imm_len_bad++;
		bool other = wc->byte_len && !k->imm_len_other++;

		if (first || other)
			scnprintf(k->imm_len_why, sizeof(k->imm_len_why),
				  "byte_len %u, not %u (the Write's length)",
				  wc->byte_len, bytes);
	}
	d = kapi_page(&k->dst, 0);
	if (memcmp(d + KAPI_IMM_OFF, kapi_page(&k->src, 0), bytes)) {
		scnprintf(why, sizeof(why), "the Write's data is not in dst at the receive");
		ret = -EIO;
		goto fail;
	}
	if (!bytes &&
	    (memcmp(d + KAPI_IMM_PRE_OFF, kapi_page(&k->src, 0), KAPI_IMM_PRE_LEN) ||
	     memchr_inv(d, 0, KAPI_IMM_PRE_OFF) ||
	     memchr_inv(d + KAPI_IMM_PRE_OFF + KAPI_IMM_PRE_LEN, 0,
			PAGE_SIZE - KAPI_IMM_PRE_OFF - KAPI_IMM_PRE_LEN))) {
		scnprintf(why, sizeof(why),
			  "dst does not hold the plain Write before it, and nothing else");
		ret = -EIO;
		goto fail;
	}
	if (bytes &&
	    (memchr_inv(d, 0, KAPI_IMM_OFF) ||
	     memchr_inv(d + KAPI_IMM_OFF + bytes, 0,
			PAGE_SIZE - KAPI_IMM_OFF - bytes))) {
		scnprintf(why, sizeof(why), "the Write touched dst outside its %u bytes",
			  bytes);
		ret = -EIO;
		goto fail;
	}
	ret = kapi_local_inv(k, &k->srv, k->dst.mr->rkey, why, sizeof(why)) ?:
	      kapi_local_inv(k, &k->cli, k->src.mr->lkey, why, sizeof(why));
	if (ret)
		goto fail;
fail:
	kapi_case_end(k, name, ret, why);
}

/*
 * Case 6b: Send with Immediate, @bytes of src: the server's receive
 * completes with IB_WC_RECV, IB_WC_WITH_IMM, the value as posted and
 * byte_len the Send's length, the payload in its buffer.
 */
static void kapi_case_send_imm(struct kapi *k, u32 bytes)
{
	const u32 val = 0x5e0d7306 ^ bytes;
	char name[64], why[200] = "";
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	struct ib_wc *wc;
	int slot, ret;

	snprintf(name, sizeof(name), "send-imm/%u-bytes", bytes);
	if (kapi_7306_skip(k, name))
		return;
	kapi_fill(&k->src, 0, 1, 50 + bytes);
	ret = kapi_ensure(k, why, sizeof(why)) ?:
	      kapi_reg(k, &k->cli, &k->src, 1, 0, IB_ACCESS_LOCAL_WRITE, why, sizeof(why));
	if (ret)
		goto fail;
	sge.addr = k->src.mr->iova;
	sge.length = bytes;
	sge.lkey = k->src.mr->lkey;
	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.ex.imm_data = cpu_to_be32(val);
	ret = kapi_do_op(k, &k->cli, &wr, IB_WC_SEND, why, sizeof(why));
	if (ret)
		goto fail;
	ret = kapi_imm_recv(k, IB_WC_RECV, val, &slot, why, sizeof(why));
	if (ret)
		goto fail;
	wc = &k->srv.recv[slot].w.wc;
	if (wc->byte_len != bytes ||
	    memcmp((u8 *)k->srv.rbuf + slot * KAPI_RECV_SZ, kapi_page(&k->src, 0), bytes)) {
		scnprintf(why, sizeof(why), "receive: %u bytes, want %u, or payload differs",
			  wc->byte_len, bytes);
		ret = -EIO;
		goto fail;
	}
	ret = kapi_local_inv(k, &k->cli, k->src.mr->lkey, why, sizeof(why));
	if (ret)
		goto fail;
fail:
	kapi_case_end(k, name, ret, why);
}

/* The 64-bit atomic target in the server's dst. */
static u64 *kapi_target(struct kapi *k)
{
	return (u64 *)(kapi_page(&k->dst, 0) + KAPI_ATOMIC_OFF);
}

/* The atomics' sink in the client's chk. */
static u64 *kapi_sink(struct kapi *k)
{
	return (u64 *)(kapi_page(&k->chk, 0) + KAPI_SINK_OFF);
}

/*
 * Set up an atomic case: dst (1 page, a pattern, the target set to @init)
 * registered on the server with @access, chk (the sink, KAPI_SINK_FILL)
 * on the client.  rwb's page 0 gets the same page, to check later that
 * nothing but the target changed.
 */
static int kapi_atomic_setup(struct kapi *k, int access, u64 init, u32 seed,
			     char *why, size_t len)
{
	int ret;

	kapi_fill(&k->dst, 0, 1, seed);
	kapi_fill(&k->rwb, 0, 1, seed);
	WRITE_ONCE(*kapi_target(k), init);
	memcpy(kapi_page(&k->rwb, 0) + KAPI_ATOMIC_OFF, &init, sizeof(init));
	memset(kapi_page(&k->chk, 0), KAPI_SINK_FILL, PAGE_SIZE);
	ret = kapi_ensure(k, why, len) ?:
	      kapi_reg(k, &k->srv, &k->dst, 1, 0, access, why, len) ?:
	      kapi_reg(k, &k->cli, &k->chk, 1, 0, KAPI_SINK, why, len);
	return ret;
}

/*
 * Post one atomic from the client on the target (at dst's iova + @off)
 * into the sink; its completion in *@wc.
 */
static int kapi_atomic(struct kapi *k, enum ib_wr_opcode op, u64 off,
		       u64 compare_add, u64 swap, struct ib_wc *wc)
{
	struct ib_atomic_wr wr = {};
	struct kapi_wait w;
	struct ib_sge sge;
	int ret;

	memset(kapi_sink(k), KAPI_SINK_FILL, 8);
	sge.addr = k->chk.mr->iova + KAPI_SINK_OFF;
	sge.length = 8;
	sge.lkey = k->chk.mr->lkey;
	wr.wr.opcode = op;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = k->dst.mr->iova + off;
	wr.rkey = k->dst.mr->rkey;
	wr.compare_add = compare_add;
	wr.swap = swap;
	ret = kapi_post_wait(k, &k->cli, &wr.wr, &w);
	*wc = w.wc;
	return ret;
}

/*
 * One atomic that must succeed: completion @want, the original value
 * @orig in the sink (in host byte order, as the kernel's atomics return
 * it: rxe and swiwarp), the target then @now; nothing else in dst or
 * around the sink changed.
 */
static int kapi_atomic_ok(struct kapi *k, enum ib_wr_opcode op,
			  enum ib_wc_opcode want, u64 compare_add, u64 swap,
			  u64 orig, u64 now, char *why, size_t len)
{
	u8 *s = kapi_page(&k->chk, 0);
	u8 *d = kapi_page(&k->dst, 0);
	u8 *p = kapi_page(&k->rwb, 0);
	struct ib_wc wc;
	int ret;

	ret = kapi_atomic(k, op, KAPI_ATOMIC_OFF, compare_add, swap, &wc);
	if (ret) {
		scnprintf(why, len, "opcode %d: post/wait %d", op, ret);
		return ret;
	}
	if (wc.status != IB_WC_SUCCESS || wc.opcode != want) {
		scnprintf(why, len, "opcode %d: %s, wc opcode %d, want %d", op,
			  ib_wc_status_msg(wc.status), wc.opcode, want);
		return -EIO;
	}
	if (READ_ONCE(*kapi_sink(k)) != orig) {
		scnprintf(why, len, "opcode %d: returned 0x%016llx, the original was 0x%016llx",
			  op, READ_ONCE(*kapi_sink(k)), orig);
		return -EIO;
	}
	if (READ_ONCE(*kapi_target(k)) != now) {
		scnprintf(why, len, "opcode %d: target 0x%016llx after, want 0x%016llx",
			  op, READ_ONCE(*kapi_target(k)), now);
		return -EIO;
	}
	if (memchr_inv(s, KAPI_SINK_FILL, KAPI_SINK_OFF) ||
	    memchr_inv(s + KAPI_SINK_OFF + 8, KAPI_SINK_FILL,
		       PAGE_SIZE - KAPI_SINK_OFF - 8)) {
		scnprintf(why, len, "opcode %d: the sink changed outside its 8 octets", op);
		return -EIO;
	}
	if (memcmp(d, p, KAPI_ATOMIC_OFF) ||
	    memcmp(d + KAPI_ATOMIC_OFF + 8, p + KAPI_ATOMIC_OFF + 8,
		   PAGE_SIZE - KAPI_ATOMIC_OFF - 8)) {
		scnprintf(why, len, "opcode %d: dst changed outside the target", op);
		return -EIO;
	}
	return 0;
}

/* Invalidate the atomic cases' MRs: dst on the server, chk on the client. */
static int kapi_atomic_done(struct kapi *k, char *why, size_t len)
{
	return kapi_local_inv(k, &k->srv, k->dst.mr->rkey, why, len) ?:
	       kapi_local_inv(k, &k->cli, k->chk.mr->lkey, why, len);
}

/* One atomic of a case below and what it must do (kapi_atomic_ok). */
struct kapi_atomic_step {
	enum ib_wr_opcode op;
	enum ib_wc_opcode want;
	u64 compare_add, swap, orig, now;
	const char *what;	/* added to the reason when the step fails */
};

/*
 * An atomic case: the target set to @init in an MR with
 * IB_ACCESS_REMOTE_ATOMIC, then each of @steps in turn, then the MRs
 * invalidated.
 */
static void kapi_atomic_case(struct kapi *k, const char *name, u64 init,
			     u32 seed, const struct kapi_atomic_step *steps,
			     size_t n)
{
	char why[200] = "";
	size_t i;
	int ret;

	if (kapi_7306_skip(k, name))
		return;
	ret = kapi_atomic_setup(k, KAPI_ATOMIC, init, seed, why, sizeof(why));
	for (i = 0; !ret && i < n; i++) {
		ret = kapi_atomic_ok(k, steps[i].op, steps[i].want,
				     steps[i].compare_add, steps[i].swap,
				     steps[i].orig, steps[i].now, why, sizeof(why));
		if (ret && steps[i].what)
			strlcat(why, steps[i].what, sizeof(why));
	}
	if (!ret)
		ret = kapi_atomic_done(k, why, sizeof(why));
	kapi_case_end(k, name, ret, why);
}

/*
 * Case 7a: Fetch-and-Add on a 64-bit aligned target in the server's dst:
 * twice, each returning the value before it; the second add carries out
 * of the low 32 bits and wraps the 64.
 */
static void kapi_case_fetch_add(struct kapi *k)
{
	const u64 a = 0x0123456789abcdefULL, add1 = 0x1000000000000001ULL;
	const u64 add2 = 0xf0000000ffffffffULL;
	const struct kapi_atomic_step steps[] = {
		{ IB_WR_ATOMIC_FETCH_AND_ADD, IB_WC_FETCH_ADD, add1, 0,
		  a, a + add1, NULL },
		{ IB_WR_ATOMIC_FETCH_AND_ADD, IB_WC_FETCH_ADD, add2, 0,
		  a + add1, a + add1 + add2, " (the carrying add)" },
	};

	kapi_atomic_case(k, "atomic/fetch-add", a, 60, steps, ARRAY_SIZE(steps));
}

/*
 * Case 7b: Compare-and-Swap on the same kind of target: a matching compare
 * swaps (returns the old value), a non-matching one (the old value again,
 * now stale) returns the current value and leaves it.
 */
static void kapi_case_cmp_swap(struct kapi *k)
{
	const u64 a = 0xfedcba9876543210ULL, b = 0x1122334455667788ULL;
	const u64 c = 0x8877665544332211ULL;
	const struct kapi_atomic_step steps[] = {
		{ IB_WR_ATOMIC_CMP_AND_SWP, IB_WC_COMP_SWAP, a, b, a, b, NULL },
		{ IB_WR_ATOMIC_CMP_AND_SWP, IB_WC_COMP_SWAP, a, c, b, b,
		  " (non-matching compare)" },
	};

	kapi_atomic_case(k, "atomic/cmp-swap", a, 61, steps, ARRAY_SIZE(steps));
}

/*
 * Case 7c: a Fetch-and-Add on an MR registered without
 * IB_ACCESS_REMOTE_ATOMIC (remote read and write only).  It must complete
 * (not hang: each wait gives up after KAPI_TMO and drains the QPs) with
 * IB_WC_REM_ACCESS_ERR: the responder finds the key valid but without
 * the right, an access violation in both verbs families (IB: an rkey
 * violation NAK, "remote access error"; iWARP: a Terminate with the
 * RDMAP remote protection error "access rights violation", RFC 5040
 * 7.2/7.4; RFC 7306 registered no codes of its own).  The target and the
 * sink stay as they were.  The connection is gone after it: connect again.
 */
static void kapi_case_atomic_no_right(struct kapi *k)
{
	const char *name = "atomic/no-remote-atomic-right";
	const u64 a = 0x0f1e2d3c4b5a6978ULL;
	char why[200] = "";
	struct ib_wc wc;
	int ret;

	if (kapi_7306_skip(k, name))
		return;
	ret = kapi_atomic_setup(k, KAPI_REMOTE, a, 62, why, sizeof(why));
	if (ret)
		goto fail;
	ret = kapi_atomic(k, IB_WR_ATOMIC_FETCH_AND_ADD, KAPI_ATOMIC_OFF, 1, 0, &wc);
	if (ret) {
		scnprintf(why, sizeof(why), "post/wait %d%s", ret,
			  ret == -ETIMEDOUT ? " (no completion: a hang)" : "");
		goto fail;
	}
	if (wc.status != IB_WC_REM_ACCESS_ERR) {
		scnprintf(why, sizeof(why), "%s, not %s", ib_wc_status_msg(wc.status),
			  ib_wc_status_msg(IB_WC_REM_ACCESS_ERR));
		ret = -EIO;
		goto fail;
	}
	if (READ_ONCE(*kapi_target(k)) != a ||
	    memcmp(kapi_page(&k->dst, 0), kapi_page(&k->rwb, 0), PAGE_SIZE)) {
		scnprintf(why, sizeof(why), "the refused atomic changed dst (target 0x%016llx)",
			  READ_ONCE(*kapi_target(k)));
		ret = -EIO;
		goto fail;
	}
	if (memchr_inv(kapi_page(&k->chk, 0), KAPI_SINK_FILL, PAGE_SIZE)) {
		scnprintf(why, sizeof(why), "the refused atomic wrote the sink");
		ret = -EIO;
		goto fail;
	}
	ret = kapi_reconnect(k, why, sizeof(why)) ?:
	      kapi_atomic_done(k, why, sizeof(why));
	if (ret)
		goto fail;
fail:
	kapi_case_end(k, name, ret, why);
}

static void kapi_cleanup(struct kapi *k)
{
	int j;

	kapi_disconnect(k);
	if (k->listen)
		rdma_destroy_id(k->listen);
	k->listen = NULL;
	if (!k->dev)
		return;
	kapi_buf_free(k, &k->src);
	kapi_buf_free(k, &k->chk);
	kapi_buf_free(k, &k->dst);
	kapi_buf_free(k, &k->rwb);
	for (j = 0; j < 2; j++) {
		struct kapi_end *e = j ? &k->srv : &k->cli;

		if (e->rbuf) {
			ib_dma_unmap_single(k->dev, e->rbuf_dma,
					    KAPI_NRECV * KAPI_RECV_SZ, DMA_FROM_DEVICE);
			kfree(e->rbuf);
		}
		if (e->pd)
			ib_dealloc_pd(e->pd);
	}
}

static void kapi_run(struct kapi *k)
{
	static const int sizes[] = { 1, 2, 33 };
	char why[200] = "";
	int ret, i;

	init_completion(&k->cli.ev);
	init_completion(&k->srv.ev);
	k->t0 = jiffies;
	k->listen = rdma_create_id(&init_net, kapi_cm_srv, k, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(k->listen)) {
		kapi_fail(k, "setup", "rdma_create_id: %ld", PTR_ERR(k->listen));
		k->listen = NULL;
		return;
	}
	ret = rdma_bind_addr(k->listen, (struct sockaddr *)&k->addr);
	if (!ret)
		ret = rdma_listen(k->listen, 4);
	if (ret) {
		kapi_fail(k, "setup", "bind/listen %pISpc: %d", &k->addr, ret);
		goto out;
	}
	ret = kapi_connect(k, KAPI_CQ_SOFTIRQ, why, sizeof(why));
	if (ret) {
		kapi_fail(k, "setup", "connect to %pISpc: %s", &k->addr, why);
		goto out;
	}
	kapi_pass(k, "setup");

	kapi_case_fastreg(k);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		kapi_case_read_inv(k, sizes[i]);
	kapi_case_read_inv(k, k->max_pages);
	kapi_case_send_inv(k, 1);
	kapi_case_send_inv(k, k->max_pages);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		kapi_case_rw(k, sizes[i], DMA_FROM_DEVICE);
		kapi_case_rw(k, sizes[i], DMA_TO_DEVICE);
	}
	kapi_case_rw(k, k->max_pages, DMA_FROM_DEVICE);
	kapi_case_rw(k, k->max_pages, DMA_TO_DEVICE);
	kapi_case_write_imm(k, 3000);
	kapi_case_write_imm(k, 0);
	kapi_case_send_imm(k, 200);
	kapi_case_fetch_add(k);
	kapi_case_cmp_swap(k);
	kapi_case_atomic_no_right(k);
	kapi_disconnect(k);

	kapi_case_cq(k, KAPI_CQ_SOFTIRQ, "alloc-softirq");
	kapi_case_cq(k, KAPI_CQ_WORKQUEUE, "alloc-workqueue");
	kapi_case_cq(k, KAPI_CQ_POOL_SOFTIRQ, "pool-softirq");
	kapi_case_cq(k, KAPI_CQ_POOL_WORKQUEUE, "pool-workqueue");
	kapi_case_drain(k);
	if (!k->stale_n)
		kapi_fail(k, "stale-key/rem-access-err", "no Read through an invalidated key ran");
	else if (k->stale_bad)
		kapi_fail(k, "stale-key/rem-access-err", "%d of %d: %s", k->stale_bad,
			  k->stale_n, k->stale_why);
	else
		kapi_pass(k, "stale-key/rem-access-err");
	if (!k->imm_len_n)
		kapi_skip(k, "write-imm/byte-len", "no Write with Immediate completed");
	else if (k->imm_len_bad)
		kapi_fail(k, "write-imm/byte-len", "%d of %d: %s", k->imm_len_bad,
			  k->imm_len_n, k->imm_len_why);
	else
		kapi_pass(k, "write-imm/byte-len");
out:
	kapi_cleanup(k);
}

/* ---------------------------------------------------------------- debugfs */

static ssize_t kapi_run_write(struct file *f, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char buf[64], *colon;
	struct kapi *k;
	u16 port = KAPI_DEFAULT_PORT;
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = 0;
	strim(buf);
	colon = strchr(buf, ':');
	if (colon) {
		*colon = 0;
		if (kstrtou16(colon + 1, 10, &port) || !port)
			return -EINVAL;
	}
	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return -ENOMEM;
	k->addr.sin_family = AF_INET;
	k->addr.sin_port = htons(port);
	if (!in4_pton(buf, -1, (u8 *)&k->addr.sin_addr.s_addr, -1, NULL)) {
		kfree(k);
		return -EINVAL;
	}
	k->res = kvzalloc(KAPI_RESULTS_SZ, GFP_KERNEL);
	if (!k->res) {
		kfree(k);
		return -ENOMEM;
	}
	mutex_lock(&kapi_lock);
	kapi_run(k);
	kapi_out(k, "# %d passed, %d failed\n", k->passed, k->failed);
	kvfree(kapi_results);
	kapi_results = k->res;
	kapi_results_len = k->res_len;
	mutex_unlock(&kapi_lock);
	ret = count;
	kfree(k);
	return ret;
}

static ssize_t kapi_results_read(struct file *f, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&kapi_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, kapi_results,
				      kapi_results_len);
	mutex_unlock(&kapi_lock);
	return ret;
}

static const struct file_operations kapi_run_fops = {
	.owner = THIS_MODULE,
	.write = kapi_run_write,
	.llseek = noop_llseek,
};

static const struct file_operations kapi_results_fops = {
	.owner = THIS_MODULE,
	.read = kapi_results_read,
	.llseek = default_llseek,
};

static int __init kapi_init(void)
{
	kapi_dir = debugfs_create_dir("swiwarp_kapi", NULL);
	debugfs_create_file("run", 0200, kapi_dir, NULL, &kapi_run_fops);
	debugfs_create_file("results", 0400, kapi_dir, NULL, &kapi_results_fops);
	return 0;
}

static void __exit kapi_exit(void)
{
	debugfs_remove_recursive(kapi_dir);
	kvfree(kapi_results);
}

module_init(kapi_init);
module_exit(kapi_exit);
MODULE_DESCRIPTION("swiwarp lab test: the kernel verbs API as ULPs use it");
MODULE_AUTHOR("swiwarp developers");
MODULE_LICENSE("Dual BSD/GPL");
