// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * swiwarp.c - libibverbs provider for the swiwarp software iWARP device.
 *
 * Slow-path verbs are thin wrappers around libibverbs' ibv_cmd_* helpers
 * carrying the udata of swiwarp-abi.h.  The fast path (post_send,
 * post_recv, post_srq_recv, poll_cq, req_notify_cq) works on rings mapped
 * from the kernel and lives in swiwarp_ring.c; the only system call it can
 * make is the send doorbell, and only when the kernel's TX engine is idle.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pabi34.h"
#include "swiwarp-abi.h"
#include "swiwarp_ring.h"

#define container_of(ptr, type, member)                                        \
	((type *)((char *)(ptr)-offsetof(type, member)))

struct swi_device {
	struct pabi34_device vdev;
};

struct swi_context {
	struct verbs_context vctx; /* must be first */
	uint32_t dev_id;
	uint32_t max_sge;
	uint32_t max_inline;
	unsigned int stag_key; /* next low STag byte proposed by reg_mr */
};

struct swi_cq {
	struct pabi34_cq vcq;
	pthread_spinlock_t lock;
	struct swr_cq ring;
	void *map;
	size_t map_len;
	uint32_t id;
};

struct swi_srq {
	struct pabi34_srq vsrq;
	pthread_spinlock_t lock;
	struct swr_rq ring;
	void *map;
	size_t map_len;
};

struct swi_qp {
	struct pabi34_qp vqp;
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	struct swr_sq sq;
	struct swr_rq rq;
	void *sq_map;
	size_t sq_map_len;
	void *rq_map;
	size_t rq_map_len;
	struct swi_srq *srq;
	struct pabi34_cmd_post_send db; /* prebuilt doorbell */
	struct ib_uverbs_post_send_resp db_resp;
};

/* Command/response buffers: core struct, then our udata, no gap. */
struct swi_cmd_get_context {
	struct pabi34_cmd_get_context ibv;
	struct swiwarp_ureq_alloc_ctx drv;
};
struct swi_resp_get_context {
	struct ib_uverbs_get_context_resp ibv;
	struct swiwarp_uresp_alloc_ctx drv;
};
struct swi_cmd_create_cq {
	struct pabi34_cmd_create_cq ibv;
	struct swiwarp_ureq_create_cq drv;
};
struct swi_resp_create_cq {
	struct ib_uverbs_create_cq_resp ibv;
	struct swiwarp_uresp_create_cq drv;
};
struct swi_cmd_create_qp {
	struct pabi34_cmd_create_qp ibv;
	struct swiwarp_ureq_create_qp drv;
};
struct swi_resp_create_qp {
	struct ib_uverbs_create_qp_resp ibv;
	struct swiwarp_uresp_create_qp drv;
};
struct swi_cmd_create_srq {
	struct pabi34_cmd_create_srq ibv;
	struct swiwarp_ureq_create_srq drv;
};
struct swi_resp_create_srq {
	struct ib_uverbs_create_srq_resp ibv;
	struct swiwarp_uresp_create_srq drv;
};
struct swi_cmd_reg_mr {
	struct pabi34_cmd_reg_mr ibv;
	struct swiwarp_ureq_reg_mr drv;
};
struct swi_resp_reg_mr {
	struct ib_uverbs_reg_mr_resp ibv;
	struct swiwarp_uresp_reg_mr drv;
};

#define SWI_UDATA_FOLLOWS(type, core)                                          \
	_Static_assert(offsetof(type, drv) == sizeof(core),                    \
		       #type ": udata must follow the core struct")
SWI_UDATA_FOLLOWS(struct swi_cmd_get_context, struct pabi34_cmd_get_context);
SWI_UDATA_FOLLOWS(struct swi_resp_get_context,
		  struct ib_uverbs_get_context_resp);
SWI_UDATA_FOLLOWS(struct swi_cmd_create_cq, struct pabi34_cmd_create_cq);
SWI_UDATA_FOLLOWS(struct swi_resp_create_cq, struct ib_uverbs_create_cq_resp);
SWI_UDATA_FOLLOWS(struct swi_cmd_create_qp, struct pabi34_cmd_create_qp);
SWI_UDATA_FOLLOWS(struct swi_resp_create_qp, struct ib_uverbs_create_qp_resp);
SWI_UDATA_FOLLOWS(struct swi_cmd_create_srq, struct pabi34_cmd_create_srq);
SWI_UDATA_FOLLOWS(struct swi_resp_create_srq, struct ib_uverbs_create_srq_resp);
SWI_UDATA_FOLLOWS(struct swi_cmd_reg_mr, struct pabi34_cmd_reg_mr);
SWI_UDATA_FOLLOWS(struct swi_resp_reg_mr, struct ib_uverbs_reg_mr_resp);

static inline struct swi_context *to_sctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct swi_context, vctx.context);
}

static inline struct swi_cq *to_scq(struct ibv_cq *cq)
{
	return container_of(cq, struct swi_cq, vcq.cq);
}

static inline struct swi_qp *to_sqp(struct ibv_qp *qp)
{
	return container_of(qp, struct swi_qp, vqp.qp);
}

static inline struct swi_srq *to_ssrq(struct ibv_srq *srq)
{
	return container_of(srq, struct swi_srq, vsrq.srq);
}

/* Map a ring, checking that the kernel's length covers what we touch. */
static void *map_ring(int fd, uint64_t key, uint64_t len, size_t need)
{
	void *p;

	if (key == SWIWARP_INVALID_MMAP_KEY || len < need ||
	    len > (uint64_t)SIZE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)key);
	return p == MAP_FAILED ? NULL : p;
}

/* ----------------------------------------------------------------------
 * Device and port
 */
static int swi_query_device(struct ibv_context *ctx,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32),
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int swi_query_port(struct ibv_context *ctx, uint8_t port,
			  struct ibv_port_attr *attr)
{
	struct pabi34_cmd_query_port cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

/* ----------------------------------------------------------------------
 * Protection domains and memory regions
 */
static struct ibv_pd *swi_alloc_pd(struct ibv_context *ctx)
{
	struct pabi34_cmd_alloc_pd cmd;
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_alloc_pd(ctx, pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return pd;
}

static int swi_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

static struct ibv_mr *swi_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				 uint64_t hca_va, int access)
{
	struct swi_context *sctx = to_sctx(pd->context);
	struct swi_cmd_reg_mr cmd;
	struct swi_resp_reg_mr resp;
	struct pabi34_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	cmd.drv.stag_key = (uint8_t)__atomic_fetch_add(&sctx->stag_key, 1,
						       __ATOMIC_RELAXED);
	ret = ibv_cmd_reg_mr(pd, addr, len, hca_va, access, vmr, &cmd.ibv,
			     sizeof(cmd), &resp.ibv, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int swi_dereg_mr(struct pabi34_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

/* ----------------------------------------------------------------------
 * Completion queues
 */
static struct ibv_cq *swi_create_cq(struct ibv_context *ctx, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector)
{
	struct swi_cmd_create_cq cmd;
	struct swi_resp_create_cq resp;
	struct swi_cq *cq;
	size_t need;
	int ret;

	if (cqe < 1) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd.ibv, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	if (!swr_is_pow2(resp.drv.num_cqe) || resp.drv.num_cqe > (1u << 24)) {
		ret = EPROTO;
		goto err_destroy;
	}
	need = (size_t)resp.drv.num_cqe * sizeof(struct swiwarp_cqe) +
	       sizeof(struct swiwarp_cq_ctrl);
	cq->map = map_ring(ctx->cmd_fd, resp.drv.cq_key, resp.drv.cq_mmap_len,
			   need);
	if (!cq->map) {
		ret = errno;
		goto err_destroy;
	}
	cq->map_len = resp.drv.cq_mmap_len;
	cq->id = resp.drv.cq_id;
	cq->ring.ring = cq->map;
	cq->ring.num = resp.drv.num_cqe;
	cq->ring.ctrl =
		(struct swiwarp_cq_ctrl *)(cq->ring.ring + resp.drv.num_cqe);
	cq->ring.cons = 0;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
	free(cq);
	errno = ret;
	return NULL;
}

static int swi_destroy_cq(struct ibv_cq *ibcq)
{
	struct swi_cq *cq = to_scq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (ret)
		return ret;
	munmap(cq->map, cq->map_len);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

static int swi_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct swi_cq *cq = to_scq(ibcq);
	int ret;

	pthread_spin_lock(&cq->lock);
	ret = swr_cq_poll(&cq->ring, n, wc);
	pthread_spin_unlock(&cq->lock);
	return ret;
}

static int swi_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	swr_cq_arm(&to_scq(ibcq)->ring, solicited_only);
	return 0;
}

/* ----------------------------------------------------------------------
 * Shared receive queues
 */
static struct ibv_srq *swi_create_srq(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr)
{
	struct swi_context *sctx = to_sctx(pd->context);
	struct swi_cmd_create_srq cmd;
	struct swi_resp_create_srq resp;
	struct swi_srq *srq;
	int ret;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv,
				 sizeof(cmd), &resp.ibv, sizeof(resp));
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	if (!swr_is_pow2(resp.drv.num_rqe) || resp.drv.num_rqe > (1u << 24)) {
		ret = EPROTO;
		goto err_destroy;
	}
	srq->map = map_ring(
		pd->context->cmd_fd, resp.drv.srq_key, resp.drv.srq_mmap_len,
		(size_t)resp.drv.num_rqe * sizeof(struct swiwarp_rqe));
	if (!srq->map) {
		ret = errno;
		goto err_destroy;
	}
	srq->map_len = resp.drv.srq_mmap_len;
	srq->ring.ring = srq->map;
	srq->ring.num = resp.drv.num_rqe;
	srq->ring.max_sge = attr->attr.max_sge;
	if (srq->ring.max_sge > sctx->max_sge)
		srq->ring.max_sge = sctx->max_sge;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
	free(srq);
	errno = ret;
	return NULL;
}

static int swi_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int mask)
{
	struct pabi34_cmd_modify_srq cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_modify_srq(srq, attr, mask, &cmd, sizeof(cmd));
}

static int swi_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct pabi34_cmd_query_srq cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

static int swi_destroy_srq(struct ibv_srq *ibsrq)
{
	struct swi_srq *srq = to_ssrq(ibsrq);
	int ret = ibv_cmd_destroy_srq(ibsrq);

	if (ret)
		return ret;
	munmap(srq->map, srq->map_len);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

static int swi_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr)
{
	struct swi_srq *srq = to_ssrq(ibsrq);
	int ret;

	pthread_spin_lock(&srq->lock);
	ret = swr_rq_post(&srq->ring, wr, bad_wr);
	pthread_spin_unlock(&srq->lock);
	return ret;
}

/* ----------------------------------------------------------------------
 * Queue pairs
 */

/*
 * Both creation verbs: the kernel command (ibv_create_qp's legacy one, or
 * ibv_create_qp_ex's, which also fills in the verbs_qp wrapper), then the
 * rings.  The granted capabilities are written back into attr->cap.
 */
static struct swi_qp *swi_qp_create(struct ibv_context *ctx,
				    struct ibv_qp_init_attr_ex *attr, bool ex)
{
	struct swi_context *sctx = to_sctx(ctx);
	int fd = ctx->cmd_fd;
	struct swi_cmd_create_qp cmd;
	struct swi_resp_create_qp resp;
	struct swi_qp *qp;
	size_t need;
	int ret;

	if (!attr->send_cq || !attr->recv_cq) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->qp_type != IBV_QPT_RC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	if (ex)
		ret = ibv_cmd_create_qp_ex(ctx, &qp->vqp, attr, &cmd.ibv,
					   sizeof(cmd), &resp.ibv,
					   sizeof(resp));
	else
		ret = ibv_cmd_create_qp(
			attr->pd, &qp->vqp.qp, (struct ibv_qp_init_attr *)attr,
			&cmd.ibv, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}

	if (!swr_is_pow2(resp.drv.num_sqe) || resp.drv.num_sqe > (1u << 24) ||
	    (!attr->srq && (!swr_is_pow2(resp.drv.num_rqe) ||
			    resp.drv.num_rqe > (1u << 24)))) {
		ret = EPROTO;
		goto err_destroy;
	}
	need = (size_t)resp.drv.num_sqe * sizeof(struct swiwarp_sqe) +
	       sizeof(struct swiwarp_sq_ctrl);
	qp->sq_map = map_ring(fd, resp.drv.sq_key, resp.drv.sq_mmap_len, need);
	if (!qp->sq_map) {
		ret = errno;
		goto err_destroy;
	}
	qp->sq_map_len = resp.drv.sq_mmap_len;
	qp->sq.ring = qp->sq_map;
	qp->sq.num = resp.drv.num_sqe;
	qp->sq.ctrl =
		(struct swiwarp_sq_ctrl *)(qp->sq.ring + resp.drv.num_sqe);
	/*
	 * Granted capabilities: libibverbs writes them back into attr->cap
	 * (on its ioctl path the legacy response struct is not filled in, so
	 * resp.ibv must not be read).  Never trust them beyond the device
	 * limits.
	 */
	qp->sq.max_sge = attr->cap.max_send_sge;
	if (qp->sq.max_sge > sctx->max_sge)
		qp->sq.max_sge = sctx->max_sge;
	qp->sq.max_inline = resp.drv.max_inline;
	if (qp->sq.max_inline > sctx->max_inline)
		qp->sq.max_inline = sctx->max_inline;
	qp->sq.sig_all = attr->sq_sig_all != 0;

	if (attr->srq) {
		qp->srq = to_ssrq(attr->srq);
	} else {
		qp->rq_map = map_ring(fd, resp.drv.rq_key, resp.drv.rq_mmap_len,
				      (size_t)resp.drv.num_rqe *
					      sizeof(struct swiwarp_rqe));
		if (!qp->rq_map) {
			ret = errno;
			goto err_unmap_sq;
		}
		qp->rq_map_len = resp.drv.rq_mmap_len;
		qp->rq.ring = qp->rq_map;
		qp->rq.num = resp.drv.num_rqe;
		qp->rq.max_sge = attr->cap.max_recv_sge;
		if (qp->rq.max_sge > sctx->max_sge)
			qp->rq.max_sge = sctx->max_sge;
	}

	/* The doorbell request, built once (see swiwarp-abi.h). */
	qp->db.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	qp->db.hdr.in_words = sizeof(qp->db) / 4;
	qp->db.hdr.out_words = sizeof(qp->db_resp) / 4;
	qp->db.core.response = (uintptr_t)&qp->db_resp;
	qp->db.core.qp_handle = qp->vqp.qp.handle;
	qp->db.core.wr_count = 0;
	qp->db.core.sge_count = 0;
	qp->db.core.wqe_size = sizeof(struct ib_uverbs_send_wr);

	attr->cap.max_inline_data = qp->sq.max_inline;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	return qp;

err_unmap_sq:
	munmap(qp->sq_map, qp->sq_map_len);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
	free(qp);
	errno = ret;
	return NULL;
}

static struct ibv_qp *swi_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ax;
	struct swi_qp *qp;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	memset(&ax, 0, sizeof(ax));
	ax.qp_context = attr->qp_context;
	ax.send_cq = attr->send_cq;
	ax.recv_cq = attr->recv_cq;
	ax.srq = attr->srq;
	ax.cap = attr->cap;
	ax.qp_type = attr->qp_type;
	ax.sq_sig_all = attr->sq_sig_all;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	ax.pd = pd;
	qp = swi_qp_create(pd->context, &ax, false);
	if (!qp)
		return NULL;
	attr->cap = ax.cap;
	return &qp->vqp.qp;
}

/* ----------------------------------------------------------------------
 * Extended post-send (struct ibv_qp_ex, ibv_wr_post(3)).  The ops only
 * describe each WR to swiwarp_ring.c, which encodes it with the same
 * helpers as post_send and publishes the batch at wr_complete.
 */
static inline struct swi_qp *to_sqpx(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct swi_qp, vqp.qp_ex);
}

/* Ring the doorbell; 0 or an errno.  The SQEs stay in the ring either way. */
static int swi_doorbell(struct swi_qp *qp)
{
	if (write(qp->vqp.qp.context->cmd_fd, &qp->db, sizeof(qp->db)) ==
	    (ssize_t)sizeof(qp->db))
		return 0;
	return errno ? errno : EIO;
}

/* The critical section of ibv_wr_post(3) is the SQ lock of post_send. */
static void swi_wr_start(struct ibv_qp_ex *qpx)
{
	struct swi_qp *qp = to_sqpx(qpx);

	pthread_spin_lock(&qp->sq_lock);
	swr_sq_wr_start(&qp->sq);
}

static int swi_wr_complete(struct ibv_qp_ex *qpx)
{
	struct swi_qp *qp = to_sqpx(qpx);
	unsigned int posted;
	int ret;

	ret = swr_sq_wr_complete(&qp->sq, &posted);
	pthread_spin_unlock(&qp->sq_lock);
	if (posted && swr_sq_need_doorbell(&qp->sq))
		ret = swi_doorbell(qp);
	return ret;
}

static void swi_wr_abort(struct ibv_qp_ex *qpx)
{
	struct swi_qp *qp = to_sqpx(qpx);

	swr_sq_wr_abort(&qp->sq);
	pthread_spin_unlock(&qp->sq_lock);
}

/* wr_id and wr_flags are read when a WR is started, as libibverbs says. */
static void swi_wr_build(struct ibv_qp_ex *qpx, struct ibv_send_wr *wr)
{
	wr->wr_id = qpx->wr_id;
	wr->send_flags = qpx->wr_flags;
	swr_sq_wr_build(&to_sqpx(qpx)->sq, wr);
}

static void swi_wr_send(struct ibv_qp_ex *qpx)
{
	struct ibv_send_wr wr = {.opcode = IBV_WR_SEND};

	swi_wr_build(qpx, &wr);
}

static void swi_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct ibv_send_wr wr = {.opcode = IBV_WR_SEND_WITH_IMM,
				 .imm_data = imm_data};

	swi_wr_build(qpx, &wr);
}

static void swi_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct ibv_send_wr wr = {.opcode = IBV_WR_SEND_WITH_INV,
				 .invalidate_rkey = invalidate_rkey};

	swi_wr_build(qpx, &wr);
}

static void swi_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
			uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct ibv_send_wr wr = {.opcode = op, .imm_data = imm_data};

	wr.wr.rdma.rkey = rkey;
	wr.wr.rdma.remote_addr = remote_addr;
	swi_wr_build(qpx, &wr);
}

static void swi_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	swi_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void swi_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t remote_addr, __be32 imm_data)
{
	swi_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		    imm_data);
}

static void swi_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			     uint64_t remote_addr)
{
	swi_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void swi_wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
			  uint32_t rkey, uint64_t remote_addr,
			  uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr wr = {.opcode = op};

	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.remote_addr = remote_addr;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	swi_wr_build(qpx, &wr);
}

static void swi_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t remote_addr, uint64_t compare,
				  uint64_t swap)
{
	swi_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		      compare, swap);
}

static void swi_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t remote_addr, uint64_t add)
{
	swi_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add,
		      0);
}

static void swi_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
			   uint32_t length)
{
	struct ibv_sge sge = {.addr = addr, .length = length, .lkey = lkey};

	swr_sq_wr_sge_list(&to_sqpx(qpx)->sq, &sge, 1);
}

static void swi_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				const struct ibv_sge *sg_list)
{
	swr_sq_wr_sge_list(&to_sqpx(qpx)->sq, sg_list, num_sge);
}

static void swi_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				   size_t length)
{
	struct ibv_data_buf buf = {.addr = addr, .length = length};

	swr_sq_wr_inline_list(&to_sqpx(qpx)->sq, &buf, 1);
}

static void swi_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
					const struct ibv_data_buf *buf_list)
{
	swr_sq_wr_inline_list(&to_sqpx(qpx)->sq, buf_list, num_buf);
}

/*
 * What the ring cannot do (create_qp_ex refuses their send_ops_flags):
 * filled in anyway, so a stray call fails the batch instead of jumping
 * through a NULL pointer.
 */
static void swi_wr_unsupported(struct ibv_qp_ex *qpx)
{
	swr_sq_wr_fail(&to_sqpx(qpx)->sq, EOPNOTSUPP);
}

static void swi_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	(void)invalidate_rkey;
	swi_wr_unsupported(qpx);
}

static void swi_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			   uint32_t rkey,
			   const struct ibv_mw_bind_info *bind_info)
{
	(void)mw;
	(void)rkey;
	(void)bind_info;
	swi_wr_unsupported(qpx);
}

static void swi_wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz,
			    uint16_t mss)
{
	(void)hdr;
	(void)hdr_sz;
	(void)mss;
	swi_wr_unsupported(qpx);
}

static void swi_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			       uint32_t remote_qpn, uint32_t remote_qkey)
{
	(void)ah;
	(void)remote_qpn;
	(void)remote_qkey;
	swi_wr_unsupported(qpx);
}

static void swi_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	(void)remote_srqn;
	swi_wr_unsupported(qpx);
}

static void swi_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t remote_addr, const void *atomic_wr)
{
	(void)rkey;
	(void)remote_addr;
	(void)atomic_wr;
	swi_wr_unsupported(qpx);
}

static void swi_qp_ex_init(struct ibv_qp_ex *qpx)
{
	qpx->wr_start = swi_wr_start;
	qpx->wr_complete = swi_wr_complete;
	qpx->wr_abort = swi_wr_abort;
	qpx->wr_send = swi_wr_send;
	qpx->wr_send_imm = swi_wr_send_imm;
	qpx->wr_send_inv = swi_wr_send_inv;
	qpx->wr_rdma_write = swi_wr_rdma_write;
	qpx->wr_rdma_write_imm = swi_wr_rdma_write_imm;
	qpx->wr_rdma_read = swi_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = swi_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = swi_wr_atomic_fetch_add;
	qpx->wr_set_sge = swi_wr_set_sge;
	qpx->wr_set_sge_list = swi_wr_set_sge_list;
	qpx->wr_set_inline_data = swi_wr_set_inline_data;
	qpx->wr_set_inline_data_list = swi_wr_set_inline_data_list;
	qpx->wr_local_inv = swi_wr_local_inv;
	qpx->wr_bind_mw = swi_wr_bind_mw;
	qpx->wr_send_tso = swi_wr_send_tso;
	qpx->wr_set_ud_addr = swi_wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = swi_wr_set_xrc_srqn;
	qpx->wr_atomic_write = swi_wr_atomic_write;
}

static int swi_destroy_qp(struct ibv_qp *ibqp);

/*
 * ibv_create_qp_ex(): a PD, and optionally the send_ops_flags of the
 * ibv_wr_* API; anything else we do not implement.
 */
static struct ibv_qp *swi_create_qp_ex(struct ibv_context *ctx,
				       struct ibv_qp_init_attr_ex *attr)
{
	bool wr_api;
	struct swi_qp *qp;

	if (!attr || !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	wr_api = attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	if (wr_api && (attr->send_ops_flags & ~(uint64_t)SWR_SEND_OPS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = swi_qp_create(ctx, attr, true);
	if (!qp || !wr_api)
		return qp ? &qp->vqp.qp : NULL;

	qp->sq.staged = calloc(qp->sq.num, sizeof(*qp->sq.staged));
	if (!qp->sq.staged) {
		swi_destroy_qp(&qp->vqp.qp);
		errno = ENOMEM;
		return NULL;
	}
	qp->sq.send_ops = attr->send_ops_flags;
	swi_qp_ex_init(&qp->vqp.qp_ex);
	qp->vqp.comp_mask |= PABI34_QP_EX;
	return &qp->vqp.qp;
}

static int swi_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct pabi34_cmd_modify_qp cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
}

static int swi_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			struct ibv_qp_init_attr *init_attr)
{
	struct pabi34_cmd_query_qp cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_qp(qp, attr, mask, init_attr, &cmd, sizeof(cmd));
}

static int swi_destroy_qp(struct ibv_qp *ibqp)
{
	struct swi_qp *qp = to_sqp(ibqp);
	int ret = ibv_cmd_destroy_qp(ibqp);

	if (ret)
		return ret;
	munmap(qp->sq_map, qp->sq_map_len);
	if (qp->rq_map)
		munmap(qp->rq_map, qp->rq_map_len);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp->sq.staged);
	free(qp);
	return 0;
}

static int swi_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr)
{
	struct swi_qp *qp = to_sqp(ibqp);
	unsigned int posted;
	int ret, err;

	pthread_spin_lock(&qp->sq_lock);
	ret = swr_sq_post(&qp->sq, wr, bad_wr, &posted);
	pthread_spin_unlock(&qp->sq_lock);

	if (posted && swr_sq_need_doorbell(&qp->sq)) {
		err = swi_doorbell(qp);
		/* The SQEs stay in the ring; report the failure against the
		 * first request of this call. */
		if (err && !ret) {
			ret = err;
			if (bad_wr)
				*bad_wr = wr;
		}
	}
	return ret;
}

static int swi_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	struct swi_qp *qp = to_sqp(ibqp);
	int ret;

	if (qp->srq) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL; /* receives go to the SRQ */
	}
	pthread_spin_lock(&qp->rq_lock);
	ret = swr_rq_post(&qp->rq, wr, bad_wr);
	pthread_spin_unlock(&qp->rq_lock);
	return ret;
}

/* ----------------------------------------------------------------------
 * Context and device
 */
static void swi_free_context(struct ibv_context *ctx)
{
	struct swi_context *sctx = to_sctx(ctx);

	verbs_uninit_context(&sctx->vctx);
	free(sctx);
}

static const struct pabi34_context_ops swi_ctx_ops = {
	.alloc_pd = swi_alloc_pd,
	.create_cq = swi_create_cq,
	.create_qp = swi_create_qp,
	.create_qp_ex = swi_create_qp_ex,
	.create_srq = swi_create_srq,
	.dealloc_pd = swi_dealloc_pd,
	.dereg_mr = swi_dereg_mr,
	.destroy_cq = swi_destroy_cq,
	.destroy_qp = swi_destroy_qp,
	.destroy_srq = swi_destroy_srq,
	.free_context = swi_free_context,
	.modify_qp = swi_modify_qp,
	.modify_srq = swi_modify_srq,
	.poll_cq = swi_poll_cq,
	.post_recv = swi_post_recv,
	.post_send = swi_post_send,
	.post_srq_recv = swi_post_srq_recv,
	.query_device_ex = swi_query_device,
	.query_port = swi_query_port,
	.query_qp = swi_query_qp,
	.query_srq = swi_query_srq,
	.reg_mr = swi_reg_mr,
	.req_notify_cq = swi_req_notify_cq,
};

static struct verbs_context *swi_alloc_context(struct ibv_device *ibdev,
					       int cmd_fd, void *private_data)
{
	struct swi_cmd_get_context cmd;
	struct swi_resp_get_context resp;
	struct swi_context *sctx;
	int ret;

	(void)private_data;
	sctx = _verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(*sctx),
		(struct verbs_context *)offsetof(struct swi_context, vctx),
		SWIWARP_DRIVER_ID);
	if (!sctx)
		return NULL;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_get_context(&sctx->vctx, &cmd.ibv, sizeof(cmd), &resp.ibv,
				  sizeof(resp));
	if (ret)
		goto err;
	/* Refuse a kernel whose ring formats differ from ours. */
	if (resp.drv.abi_version != SWIWARP_ABI_VERSION ||
	    resp.drv.sqe_size != sizeof(struct swiwarp_sqe) ||
	    resp.drv.rqe_size != sizeof(struct swiwarp_rqe) ||
	    resp.drv.cqe_size != sizeof(struct swiwarp_cqe)) {
		ret = EPROTO;
		goto err;
	}
	sctx->dev_id = resp.drv.dev_id;
	sctx->max_sge = resp.drv.max_sge < SWIWARP_MAX_SGE ? resp.drv.max_sge
							   : SWIWARP_MAX_SGE;
	sctx->max_inline = resp.drv.max_inline < SWIWARP_MAX_INLINE
				   ? resp.drv.max_inline
				   : SWIWARP_MAX_INLINE;
	sctx->stag_key = (unsigned int)getpid();
	verbs_set_ops(&sctx->vctx, &swi_ctx_ops);
	return &sctx->vctx;

err:
	verbs_uninit_context(&sctx->vctx);
	free(sctx);
	errno = ret;
	return NULL;
}

static struct pabi34_device *
swi_alloc_device(struct pabi34_sysfs_dev *sysfs_dev)
{
	struct swi_device *dev;

	(void)sysfs_dev;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->vdev;
}

static void swi_uninit_device(struct pabi34_device *vdev)
{
	free(container_of(vdev, struct swi_device, vdev));
}

static const struct pabi34_match_ent swi_match_table[] = {
	{.u.driver_id = SWIWARP_DRIVER_ID, .kind = PABI34_MATCH_DRIVER_ID},
	{.kind = PABI34_MATCH_END},
};

static const struct pabi34_device_ops swi_device_ops = {
	.name = "swiwarp",
	.match_min_abi_version = SWIWARP_ABI_VERSION,
	.match_max_abi_version = SWIWARP_ABI_VERSION,
	.match_table = swi_match_table,
	.alloc_device = swi_alloc_device,
	.uninit_device = swi_uninit_device,
	.alloc_context = swi_alloc_context,
};

static void __attribute__((constructor)) swi_register(void)
{
	verbs_register_driver_34(&swi_device_ops);
}
