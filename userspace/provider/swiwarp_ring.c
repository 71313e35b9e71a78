// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * swiwarp_ring.c - post and poll on the rings shared with swiwarp.ko.
 *
 * Ownership of every slot is its 16-bit flags word (see swiwarp-abi.h):
 * the producer fills a free slot and publishes it with a store-release of
 * flags|VALID; the consumer loads flags with a load-acquire and hands the
 * slot back by storing 0 with a store-release.  Indices are private and
 * free-running; slot = index & (num - 1).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "swiwarp_ring.h"

_Static_assert(sizeof(struct swiwarp_sge) == sizeof(struct ibv_sge),
	       "swiwarp_sge must mirror ibv_sge");
_Static_assert(offsetof(struct swiwarp_sge, addr) ==
			       offsetof(struct ibv_sge, addr) &&
		       offsetof(struct swiwarp_sge, length) ==
			       offsetof(struct ibv_sge, length) &&
		       offsetof(struct swiwarp_sge, lkey) ==
			       offsetof(struct ibv_sge, lkey),
	       "swiwarp_sge field offsets must mirror ibv_sge");

/* Send flags this device implements. */
#define SWR_SEND_FLAGS                                                         \
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |             \
	 IBV_SEND_INLINE)

static inline uint16_t load_acquire16(const uint16_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_release16(uint16_t *p, uint16_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

int swr_wr_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		return SWIWARP_OP_WRITE;
	case IBV_WR_RDMA_READ:
		return SWIWARP_OP_READ;
	case IBV_WR_SEND:
		return SWIWARP_OP_SEND;
	case IBV_WR_SEND_WITH_INV:
		return SWIWARP_OP_SEND_INV;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return SWIWARP_OP_WRITE_IMM; /* build_sqe checks the peer */
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return SWIWARP_OP_ATOMIC_CS; /* ditto */
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return SWIWARP_OP_ATOMIC_FA; /* ditto */
	case IBV_WR_SEND_WITH_IMM:
		return SWIWARP_OP_SEND_IMM; /* ditto */
	default:
		/* MW bind, LOCAL_INV, TSO: no */
		return -1;
	}
}

/* Copy the gathered payload of wr into the SQE's inline area. */
static int fill_inline(struct swiwarp_sqe *sqe, const struct ibv_send_wr *wr,
		       uint32_t max_inline)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		total += wr->sg_list[i].length;
		if (total > max_inline || total > SWIWARP_MAX_INLINE)
			return EINVAL;
	}
	total = 0;
	for (i = 0; i < wr->num_sge; i++) {
		uint32_t len = wr->sg_list[i].length;

		if (len)
			memcpy(sqe->inline_data + total,
			       (const void *)(uintptr_t)wr->sg_list[i].addr,
			       len);
		total += len;
	}
	sqe->inline_len = (uint32_t)total;
	sqe->num_sge = 0;
	return 0;
}

/* Validate wr and write it into sqe, except the flags word. */
static int build_sqe(const struct swr_sq *sq, struct swiwarp_sqe *sqe,
		     const struct ibv_send_wr *wr, uint16_t *flags_out)
{
	int op = swr_wr_opcode(wr->opcode);
	uint16_t flags = SWIWARP_WQE_VALID;
	int ret;

	/*
	 * Immediate Data (Write or Send with Immediate; RFC 7306 has no
	 * Send with Immediate, swiwarp peers agree on one) and atomics go
	 * only to a peer that announced RFC 7306 (the kernel's peer_caps
	 * word): the post fails here, nothing is sent.
	 */
	if ((op == SWIWARP_OP_WRITE_IMM || op == SWIWARP_OP_SEND_IMM ||
	     op == SWIWARP_OP_ATOMIC_CS || op == SWIWARP_OP_ATOMIC_FA) &&
	    !(__atomic_load_n(&sq->ctrl->peer_caps, __ATOMIC_ACQUIRE) &
	      SWIWARP_PEER_RFC7306))
		return EOPNOTSUPP;
	if (op < 0)
		return EINVAL;
	if (wr->send_flags & ~(unsigned int)SWR_SEND_FLAGS)
		return EINVAL;
	if (wr->num_sge < 0 || (wr->num_sge > 0 && !wr->sg_list))
		return EINVAL;
	if (op == SWIWARP_OP_READ &&
	    (wr->num_sge > 1 || (wr->send_flags & IBV_SEND_INLINE)))
		return EINVAL;
	/* Atomics: exactly one sink SGE for the original value, no inline. */
	if ((op == SWIWARP_OP_ATOMIC_CS || op == SWIWARP_OP_ATOMIC_FA) &&
	    (wr->num_sge != 1 || (wr->send_flags & IBV_SEND_INLINE)))
		return EINVAL;

	if ((wr->send_flags & IBV_SEND_SIGNALED) || sq->sig_all)
		flags |= SWIWARP_WQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_FENCE)
		flags |= SWIWARP_WQE_FENCE;
	if ((wr->send_flags & IBV_SEND_SOLICITED) &&
	    (op == SWIWARP_OP_SEND || op == SWIWARP_OP_SEND_INV ||
	     op == SWIWARP_OP_WRITE_IMM || op == SWIWARP_OP_SEND_IMM))
		flags |= SWIWARP_WQE_SOLICITED;

	sqe->id = wr->wr_id;
	sqe->opcode = (uint8_t)op;
	sqe->rkey = 0;
	sqe->raddr = 0;
	sqe->inv_stag = 0;
	sqe->inline_len = 0;

	switch (op) {
	case SWIWARP_OP_WRITE:
	case SWIWARP_OP_READ:
		sqe->rkey = wr->wr.rdma.rkey;
		sqe->raddr = wr->wr.rdma.remote_addr;
		break;
	case SWIWARP_OP_WRITE_IMM:
		sqe->rkey = wr->wr.rdma.rkey;
		sqe->raddr = wr->wr.rdma.remote_addr;
		sqe->imm_data =
			wr->imm_data; /* network order, passed through */
		break;
	case SWIWARP_OP_SEND_INV:
		sqe->inv_stag = wr->invalidate_rkey;
		break;
	case SWIWARP_OP_SEND_IMM:
		sqe->imm_data = wr->imm_data; /* network order, as is */
		break;
	case SWIWARP_OP_ATOMIC_CS:
	case SWIWARP_OP_ATOMIC_FA:
		sqe->rkey = wr->wr.atomic.rkey;
		sqe->raddr = wr->wr.atomic.remote_addr;
		/* after sge[0], which the SGE copy below fills */
		sqe->atomic.compare_add = wr->wr.atomic.compare_add;
		sqe->atomic.swap = wr->wr.atomic.swap;
		break;
	}

	if (wr->send_flags & IBV_SEND_INLINE) {
		ret = fill_inline(sqe, wr, sq->max_inline);
		if (ret)
			return ret;
		flags |= SWIWARP_WQE_INLINE;
	} else {
		if ((uint32_t)wr->num_sge > sq->max_sge ||
		    wr->num_sge > SWIWARP_MAX_SGE)
			return EINVAL;
		if (wr->num_sge)
			memcpy(sqe->sge, wr->sg_list,
			       (size_t)wr->num_sge * sizeof(struct ibv_sge));
		sqe->num_sge = (uint8_t)wr->num_sge;
	}
	*flags_out = flags;
	return 0;
}

int swr_sq_post(struct swr_sq *sq, struct ibv_send_wr *wr,
		struct ibv_send_wr **bad_wr, unsigned int *posted)
{
	unsigned int n = 0;
	int ret = 0;

	for (; wr; wr = wr->next) {
		struct swiwarp_sqe *sqe = &sq->ring[sq->prod & (sq->num - 1)];
		uint16_t flags;

		if (load_acquire16(&sqe->flags) & SWIWARP_WQE_VALID) {
			ret = ENOMEM; /* the kernel has not taken it yet */
			break;
		}
		ret = build_sqe(sq, sqe, wr, &flags);
		if (ret)
			break;
		store_release16(&sqe->flags, flags);
		sq->prod++;
		n++;
	}
	if (ret && bad_wr)
		*bad_wr = wr;
	if (posted)
		*posted = n;
	return ret;
}

bool swr_sq_need_doorbell(const struct swr_sq *sq)
{
	/* U2: order our VALID stores before the load of the kernel's word. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* U3 */
	return !(__atomic_load_n(&sq->ctrl->flags, __ATOMIC_RELAXED) &
		 SWIWARP_SQ_CTRL_TX_ACTIVE);
}

int swr_rq_post(struct swr_rq *rq, struct ibv_recv_wr *wr,
		struct ibv_recv_wr **bad_wr)
{
	int ret = 0;

	for (; wr; wr = wr->next) {
		struct swiwarp_rqe *rqe = &rq->ring[rq->prod & (rq->num - 1)];

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge ||
		    wr->num_sge > SWIWARP_MAX_SGE ||
		    (wr->num_sge > 0 && !wr->sg_list)) {
			ret = EINVAL;
			break;
		}
		if (load_acquire16(&rqe->flags) & SWIWARP_WQE_VALID) {
			ret = ENOMEM;
			break;
		}
		rqe->id = wr->wr_id;
		rqe->num_sge = (uint8_t)wr->num_sge;
		if (wr->num_sge)
			memcpy(rqe->sge, wr->sg_list,
			       (size_t)wr->num_sge * sizeof(struct ibv_sge));
		store_release16(&rqe->flags, SWIWARP_WQE_VALID);
		rq->prod++;
	}
	if (ret && bad_wr)
		*bad_wr = wr;
	return ret;
}

enum ibv_wc_opcode swr_wc_opcode(uint8_t op, bool *known)
{
	*known = true;
	switch (op) {
	case SWIWARP_OP_WRITE:
	case SWIWARP_OP_WRITE_IMM:
		return IBV_WC_RDMA_WRITE;
	case SWIWARP_OP_RECV_RDMA_IMM:
		return IBV_WC_RECV_RDMA_WITH_IMM;
	case SWIWARP_OP_READ:
	case SWIWARP_OP_READ_LOCAL_INV:
		return IBV_WC_RDMA_READ;
	case SWIWARP_OP_SEND:
	case SWIWARP_OP_SEND_INV:
	case SWIWARP_OP_SEND_IMM:
		return IBV_WC_SEND;
	case SWIWARP_OP_RECV:
		return IBV_WC_RECV;
	case SWIWARP_OP_ATOMIC_CS:
		return IBV_WC_COMP_SWAP;
	case SWIWARP_OP_ATOMIC_FA:
		return IBV_WC_FETCH_ADD;
	case SWIWARP_OP_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default:
		*known = false;
		return IBV_WC_SEND;
	}
}

enum ibv_wc_status swr_wc_status(uint8_t status)
{
	switch (status) {
	case SWIWARP_WC_SUCCESS:
		return IBV_WC_SUCCESS;
	case SWIWARP_WC_LOC_LEN_ERR:
		return IBV_WC_LOC_LEN_ERR;
	case SWIWARP_WC_LOC_QP_OP_ERR:
		return IBV_WC_LOC_QP_OP_ERR;
	case SWIWARP_WC_LOC_PROT_ERR:
		return IBV_WC_LOC_PROT_ERR;
	case SWIWARP_WC_WR_FLUSH_ERR:
		return IBV_WC_WR_FLUSH_ERR;
	case SWIWARP_WC_BAD_RESP_ERR:
		return IBV_WC_BAD_RESP_ERR;
	case SWIWARP_WC_LOC_ACCESS_ERR:
		return IBV_WC_LOC_ACCESS_ERR;
	case SWIWARP_WC_REM_INV_REQ_ERR:
		return IBV_WC_REM_INV_REQ_ERR;
	case SWIWARP_WC_REM_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case SWIWARP_WC_REM_OP_ERR:
		return IBV_WC_REM_OP_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

static void fill_wc(struct ibv_wc *wc, const struct swiwarp_cqe *cqe,
		    uint16_t flags)
{
	bool known;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->id;
	wc->status = swr_wc_status(cqe->status);
	wc->opcode = swr_wc_opcode(cqe->opcode, &known);
	if (cqe->status != SWIWARP_WC_SUCCESS)
		wc->vendor_err = cqe->status;
	if (!known) {
		/* A CQE this provider cannot interpret is reported as an
		 * error rather than guessed at. */
		wc->status = IBV_WC_GENERAL_ERR;
		wc->vendor_err = 0x100u | cqe->opcode;
	}
	wc->byte_len = cqe->bytes;
	wc->qp_num = cqe->qp_id;
	if (flags & SWIWARP_CQE_INVALIDATED) {
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = cqe->inv_stag;
	}
	if (flags & SWIWARP_CQE_IMM) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = cqe->imm_data;
	}
}

int swr_cq_poll(struct swr_cq *cq, int n, struct ibv_wc *wc)
{
	int i;

	if (n < 0 || (n > 0 && !wc))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct swiwarp_cqe *cqe = &cq->ring[cq->cons & (cq->num - 1)];
		uint16_t flags = load_acquire16(&cqe->flags);

		if (!(flags & SWIWARP_CQE_VALID))
			break;
		fill_wc(&wc[i], cqe, flags);
		store_release16(&cqe->flags, 0); /* hand the slot back */
		cq->cons++;
	}
	return i;
}

void swr_cq_arm(struct swr_cq *cq, int solicited_only)
{
	uint32_t v = SWIWARP_NOTIFY_SOLICITED;

	if (!solicited_only)
		v |= SWIWARP_NOTIFY_NEXT_COMPLETION;
	__atomic_store_n(&cq->ctrl->notify, v, __ATOMIC_RELEASE);
}
