// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: completion queues.  One ring format for user and kernel
 * consumers (struct swiwarp_cqe, see the ABI header).  The kernel is the
 * only producer; user space or swiwarp_poll_cq() consume.
 */

#include <linux/vmalloc.h>

#include <rdma/uverbs_ioctl.h>

#include "swiwarp.h"

static atomic_t swiwarp_cq_ids = ATOMIC_INIT(0);

static const enum ib_wc_status swiwarp_wc_status_map[SWIWARP_WC_MAX] = {
	[SWIWARP_WC_SUCCESS] = IB_WC_SUCCESS,
	[SWIWARP_WC_LOC_LEN_ERR] = IB_WC_LOC_LEN_ERR,
	[SWIWARP_WC_LOC_QP_OP_ERR] = IB_WC_LOC_QP_OP_ERR,
	[SWIWARP_WC_LOC_PROT_ERR] = IB_WC_LOC_PROT_ERR,
	[SWIWARP_WC_WR_FLUSH_ERR] = IB_WC_WR_FLUSH_ERR,
	[SWIWARP_WC_BAD_RESP_ERR] = IB_WC_BAD_RESP_ERR,
	[SWIWARP_WC_LOC_ACCESS_ERR] = IB_WC_LOC_ACCESS_ERR,
	[SWIWARP_WC_REM_INV_REQ_ERR] = IB_WC_REM_INV_REQ_ERR,
	[SWIWARP_WC_REM_ACCESS_ERR] = IB_WC_REM_ACCESS_ERR,
	[SWIWARP_WC_REM_OP_ERR] = IB_WC_REM_OP_ERR,
	[SWIWARP_WC_GENERAL_ERR] = IB_WC_GENERAL_ERR,
};

static const enum ib_wc_opcode swiwarp_wc_op_map[SWIWARP_OP_MAX] = {
	[SWIWARP_OP_WRITE] = IB_WC_RDMA_WRITE,
	[SWIWARP_OP_READ] = IB_WC_RDMA_READ,
	[SWIWARP_OP_SEND] = IB_WC_SEND,
	[SWIWARP_OP_SEND_INV] = IB_WC_SEND,
	[SWIWARP_OP_RECV] = IB_WC_RECV,
	[SWIWARP_OP_READ_LOCAL_INV] = IB_WC_RDMA_READ,
	[SWIWARP_OP_REG_MR] = IB_WC_REG_MR,
	[SWIWARP_OP_LOCAL_INV] = IB_WC_LOCAL_INV,
	[SWIWARP_OP_WRITE_IMM] = IB_WC_RDMA_WRITE,
	[SWIWARP_OP_RECV_RDMA_IMM] = IB_WC_RECV_RDMA_WITH_IMM,
	[SWIWARP_OP_ATOMIC_CS] = IB_WC_COMP_SWAP,
	[SWIWARP_OP_ATOMIC_FA] = IB_WC_FETCH_ADD,
	[SWIWARP_OP_SEND_IMM] = IB_WC_SEND,
};

/*
 * Publish one CQE and raise a completion event if the consumer armed the
 * CQ for it.  Returns -ENOSPC on overflow.  Any context.
 */
int swiwarp_cq_push(struct swiwarp_cq *cq, const struct swiwarp_cqe *cqe,
		    bool solicited)
{
	struct swiwarp_cqe *slot;
	unsigned long flags;
	bool event = false;
	u32 armed;

	spin_lock_irqsave(&cq->lock, flags);
	slot = &cq->queue[cq->cq_put & (cq->num_cqe - 1)];
	if (swiwarp_flags_acquire(&slot->flags) & SWIWARP_CQE_VALID) {
		spin_unlock_irqrestore(&cq->lock, flags);
		return -ENOSPC;
	}
	slot->id = cqe->id;
	slot->opcode = cqe->opcode;
	slot->status = cqe->status;
	slot->bytes = cqe->bytes;
	slot->qp_id = cqe->qp_id;
	slot->inv_stag = cqe->inv_stag;
	slot->imm_data = cqe->imm_data;
	slot->reserved = 0;
	swiwarp_flags_release(&slot->flags, cqe->flags | SWIWARP_CQE_VALID);
	cq->cq_put++;
	/* The consumer made room: a later overflow is reported again. */
	if (unlikely(test_bit(0, &cq->overflow)))
		clear_bit(0, &cq->overflow);

	/*
	 * Full barrier between publishing the CQE and reading the arming
	 * word: pairs with the consumer's arm-then-poll sequence.
	 */
	smp_mb();
	armed = READ_ONCE(cq->ctrl->notify);
	if ((armed & SWIWARP_NOTIFY_NEXT_COMPLETION) ||
	    ((armed & SWIWARP_NOTIFY_SOLICITED) &&
	     (solicited || cqe->status != SWIWARP_WC_SUCCESS)))
		event = xchg(&cq->ctrl->notify, SWIWARP_NOTIFY_NOT) != 0;
	spin_unlock_irqrestore(&cq->lock, flags);

	if (event && cq->base.comp_handler)
		cq->base.comp_handler(&cq->base, cq->base.cq_context);
	return 0;
}

int swiwarp_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct swiwarp_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int i;

	spin_lock_irqsave(&cq->lock, flags);
	for (i = 0; i < num; i++) {
		struct swiwarp_cqe *c =
			&cq->queue[cq->cq_get & (cq->num_cqe - 1)];
		u16 f = swiwarp_flags_acquire(&c->flags);
		struct swiwarp_qp *qp;

		if (!(f & SWIWARP_CQE_VALID))
			break;
		memset(&wc[i], 0, sizeof(wc[i]));
		wc[i].wr_id = c->id;
		wc[i].status = c->status < SWIWARP_WC_MAX ?
			swiwarp_wc_status_map[c->status] : IB_WC_GENERAL_ERR;
		wc[i].opcode = c->opcode < SWIWARP_OP_MAX ?
			swiwarp_wc_op_map[c->opcode] : IB_WC_SEND;
		wc[i].byte_len = c->bytes;
		qp = xa_load(&to_sdev(ibcq->device)->qp_xa, c->qp_id);
		wc[i].qp = qp ? &qp->base : NULL;
		if (f & SWIWARP_CQE_INVALIDATED) {
			wc[i].wc_flags |= IB_WC_WITH_INVALIDATE;
			wc[i].ex.invalidate_rkey = c->inv_stag;
		}
		if (f & SWIWARP_CQE_IMM) {
			wc[i].wc_flags |= IB_WC_WITH_IMM;
			/* kept in network byte order all the way */
			wc[i].ex.imm_data = (__force __be32)c->imm_data;
		}
		swiwarp_flags_release(&c->flags, 0);
		cq->cq_get++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return i;
}

int swiwarp_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct swiwarp_cq *cq = to_scq(ibcq);
	u32 v = SWIWARP_NOTIFY_SOLICITED;

	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_NEXT_COMP)
		v |= SWIWARP_NOTIFY_NEXT_COMPLETION;
	/* Arm, then make sure later loads of CQEs see new entries. */
	smp_store_release(&cq->ctrl->notify, v);
	/* pairs with the full barrier in swiwarp_cq_push() */
	smp_mb();

	if (flags & IB_CQ_REPORT_MISSED_EVENTS) {
		struct swiwarp_cqe *c =
			&cq->queue[READ_ONCE(cq->cq_get) & (cq->num_cqe - 1)];

		return (swiwarp_flags_acquire(&c->flags) & SWIWARP_CQE_VALID) ?
			1 : 0;
	}
	return 0;
}

int swiwarp_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata)
{
	struct swiwarp_dev *sdev = to_sdev(ibcq->device);
	struct swiwarp_cq *cq = to_scq(ibcq);
	struct swiwarp_uresp_create_cq uresp = {};
	size_t size;
	int rv;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SWIWARP_MAX_CQE)
		return -EINVAL;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_cq) > SWIWARP_MAX_CQ) {
		rv = -ENOMEM;
		goto err_cnt;
	}

	spin_lock_init(&cq->lock);
	cq->num_cqe = roundup_pow_of_two(attr->cqe);
	cq->id = atomic_inc_return(&swiwarp_cq_ids);
	cq->user = !!udata;
	size = cq->num_cqe * sizeof(struct swiwarp_cqe) +
		sizeof(struct swiwarp_cq_ctrl);
	rv = swiwarp_ring_create(udata, size, &cq->ring, &cq->entry,
				 &uresp.cq_key, &uresp.cq_mmap_len);
	if (rv)
		goto err_cnt;
	cq->queue = cq->ring->addr;
	cq->ctrl = (struct swiwarp_cq_ctrl *)&cq->queue[cq->num_cqe];
	ibcq->cqe = cq->num_cqe;

	if (udata) {
		uresp.cq_id = cq->id;
		uresp.num_cqe = cq->num_cqe;
		rv = ib_copy_to_udata(udata, &uresp,
				      min(sizeof(uresp), udata->outlen));
		if (rv)
			goto err_ring;
	}
	return 0;

err_ring:
	swiwarp_ring_destroy(&cq->ring, &cq->entry);
	cq->queue = NULL;
err_cnt:
	atomic_dec(&sdev->num_cq);
	return rv;
}

int swiwarp_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct swiwarp_cq *cq = to_scq(ibcq);

	/* User mappings keep their own ring references. */
	swiwarp_ring_destroy(&cq->ring, &cq->entry);
	atomic_dec(&to_sdev(ibcq->device)->num_cq);
	return 0;
}
