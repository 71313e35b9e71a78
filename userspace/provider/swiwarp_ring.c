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

/*
 * The WQE encoders.  Both ways of posting (ibv_post_send's chains and the
 * ibv_wr_* calls of struct ibv_qp_ex) build an SQE from the same three
 * steps, so the two APIs cannot disagree on what the ring receives:
 *   sqe_encode_hdr()   opcode, wr_id and the opcode's own fields;
 *   sqe_encode_sges() or sqe_encode_inline() (once per buffer): the data;
 *   sqe_encode_flags() the per-opcode data rules, then the flags word.
 * Each returns 0 or an errno; the slot is written but never published on
 * error, so whatever was left in it is harmless.
 */
static int sqe_encode_hdr(const struct swr_sq *sq, struct swiwarp_sqe *sqe,
			  const struct ibv_send_wr *wr)
{
	int op = swr_wr_opcode(wr->opcode);

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

	sqe->id = wr->wr_id;
	sqe->opcode = (uint8_t)op;
	sqe->rkey = 0;
	sqe->raddr = 0;
	sqe->inv_stag = 0;
	sqe->inline_len = 0;
	sqe->num_sge = 0;

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
		/* after sge[0], which sqe_encode_sges() fills */
		sqe->atomic.compare_add = wr->wr.atomic.compare_add;
		sqe->atomic.swap = wr->wr.atomic.swap;
		break;
	}
	return 0;
}

/* Gather list: copied as is (swiwarp_sge mirrors ibv_sge). */
static int sqe_encode_sges(const struct swr_sq *sq, struct swiwarp_sqe *sqe,
			   const struct ibv_sge *sg_list, size_t num_sge)
{
	if (num_sge > sq->max_sge || num_sge > SWIWARP_MAX_SGE ||
	    (num_sge && !sg_list))
		return EINVAL;
	if (num_sge)
		memcpy(sqe->sge, sg_list, num_sge * sizeof(struct ibv_sge));
	sqe->num_sge = (uint8_t)num_sge;
	sqe->inline_len = 0;
	return 0;
}

/*
 * Inline data: append one buffer behind what the SQE already holds.  The
 * sum is checked in 64 bits before anything is copied, so lengths that
 * would wrap a 32-bit total cannot slip past the limits.  Call after
 * sqe_encode_hdr(), which sets the opcode.
 */
static int sqe_encode_inline(const struct swr_sq *sq, struct swiwarp_sqe *sqe,
			     const void *addr, uint64_t len)
{
	uint64_t total = (uint64_t)sqe->inline_len + len;

	/* Not even read for opcodes that cannot carry it. */
	if (sqe->opcode == SWIWARP_OP_READ ||
	    sqe->opcode == SWIWARP_OP_ATOMIC_CS ||
	    sqe->opcode == SWIWARP_OP_ATOMIC_FA)
		return EINVAL;
	if (total > sq->max_inline || total > SWIWARP_MAX_INLINE)
		return EINVAL;
	if (len)
		memcpy(sqe->inline_data + sqe->inline_len, addr, (size_t)len);
	sqe->inline_len = (uint32_t)total;
	sqe->num_sge = 0;
	return 0;
}

/*
 * Check what only the whole WQE tells (send flags, the data an opcode
 * allows) and compute its flags word.  IBV_SEND_INLINE in send_flags says
 * the data went through sqe_encode_inline().
 */
static int sqe_encode_flags(const struct swr_sq *sq,
			    const struct swiwarp_sqe *sqe,
			    unsigned int send_flags, uint16_t *flags_out)
{
	uint8_t op = sqe->opcode;
	uint16_t flags = SWIWARP_WQE_VALID;

	if (send_flags & ~(unsigned int)SWR_SEND_FLAGS)
		return EINVAL;
	if (op == SWIWARP_OP_READ &&
	    (sqe->num_sge > 1 || (send_flags & IBV_SEND_INLINE)))
		return EINVAL;
	/* Atomics: exactly one sink SGE for the original value, no inline. */
	if ((op == SWIWARP_OP_ATOMIC_CS || op == SWIWARP_OP_ATOMIC_FA) &&
	    (sqe->num_sge != 1 || (send_flags & IBV_SEND_INLINE)))
		return EINVAL;

	if ((send_flags & IBV_SEND_SIGNALED) || sq->sig_all)
		flags |= SWIWARP_WQE_SIGNALED;
	if (send_flags & IBV_SEND_FENCE)
		flags |= SWIWARP_WQE_FENCE;
	if ((send_flags & IBV_SEND_SOLICITED) &&
	    (op == SWIWARP_OP_SEND || op == SWIWARP_OP_SEND_INV ||
	     op == SWIWARP_OP_WRITE_IMM || op == SWIWARP_OP_SEND_IMM))
		flags |= SWIWARP_WQE_SOLICITED;
	if (send_flags & IBV_SEND_INLINE)
		flags |= SWIWARP_WQE_INLINE;
	*flags_out = flags;
	return 0;
}

/* Validate wr and write it into sqe, except the flags word. */
static int build_sqe(const struct swr_sq *sq, struct swiwarp_sqe *sqe,
		     const struct ibv_send_wr *wr, uint16_t *flags_out)
{
	int ret;
	int i;

	ret = sqe_encode_hdr(sq, sqe, wr);
	if (ret)
		return ret;
	if (wr->num_sge < 0 || (wr->num_sge > 0 && !wr->sg_list))
		return EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE) {
		for (i = 0; i < wr->num_sge && !ret; i++)
			ret = sqe_encode_inline(
				sq, sqe,
				(const void *)(uintptr_t)wr->sg_list[i].addr,
				wr->sg_list[i].length);
	} else {
		ret = sqe_encode_sges(sq, sqe, wr->sg_list,
				      (size_t)wr->num_sge);
	}
	if (ret)
		return ret;
	return sqe_encode_flags(sq, sqe, wr->send_flags, flags_out);
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

uint64_t swr_send_op_flag(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		return IBV_QP_EX_WITH_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	case IBV_WR_SEND:
		return IBV_QP_EX_WITH_SEND;
	case IBV_WR_SEND_WITH_IMM:
		return IBV_QP_EX_WITH_SEND_WITH_IMM;
	case IBV_WR_RDMA_READ:
		return IBV_QP_EX_WITH_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	case IBV_WR_SEND_WITH_INV:
		return IBV_QP_EX_WITH_SEND_WITH_INV;
	default:
		return 0;
	}
}

/* Only the first error of a batch counts; later calls do nothing. */
void swr_sq_wr_fail(struct swr_sq *sq, int err)
{
	if (!sq->stage_err)
		sq->stage_err = err;
}

static void wr_reset(struct swr_sq *sq)
{
	sq->stage_end = sq->prod;
	sq->cur = NULL;
	sq->cur_flags = 0;
	sq->stage_err = 0;
}

/* The WQE under construction is complete: check it, keep its flags. */
static void wr_finish_cur(struct swr_sq *sq)
{
	uint16_t flags;
	int ret;

	if (!sq->cur)
		return;
	ret = sqe_encode_flags(sq, sq->cur, sq->cur_flags, &flags);
	if (ret) {
		swr_sq_wr_fail(sq, ret);
	} else {
		sq->staged[sq->stage_end & (sq->num - 1)] = flags;
		sq->stage_end++;
	}
	sq->cur = NULL;
}

void swr_sq_wr_start(struct swr_sq *sq)
{
	wr_reset(sq);
}

void swr_sq_wr_build(struct swr_sq *sq, const struct ibv_send_wr *wr)
{
	struct swiwarp_sqe *sqe;
	int ret;

	wr_finish_cur(sq);
	if (sq->stage_err)
		return;
	if (!(sq->send_ops & swr_send_op_flag(wr->opcode))) {
		swr_sq_wr_fail(sq, EINVAL);
		return;
	}
	/*
	 * Staged slots are not VALID yet, so the VALID test alone would let
	 * a batch longer than the ring wrap onto its own first WQE.
	 */
	sqe = &sq->ring[sq->stage_end & (sq->num - 1)];
	if (sq->stage_end - sq->prod >= sq->num ||
	    (load_acquire16(&sqe->flags) & SWIWARP_WQE_VALID)) {
		swr_sq_wr_fail(sq, ENOMEM);
		return;
	}
	ret = sqe_encode_hdr(sq, sqe, wr);
	if (ret) {
		swr_sq_wr_fail(sq, ret);
		return;
	}
	sq->cur = sqe;
	/* Inline is chosen by the data setter, as ibv_wr_post(3) has it. */
	sq->cur_flags = wr->send_flags & ~(unsigned int)IBV_SEND_INLINE;
}

void swr_sq_wr_sge_list(struct swr_sq *sq, const struct ibv_sge *sg_list,
			size_t num_sge)
{
	int ret;

	if (sq->stage_err)
		return;
	if (!sq->cur) {
		swr_sq_wr_fail(sq, EINVAL);
		return;
	}
	ret = sqe_encode_sges(sq, sq->cur, sg_list, num_sge);
	if (ret)
		swr_sq_wr_fail(sq, ret);
	sq->cur_flags &= ~(unsigned int)IBV_SEND_INLINE;
}

void swr_sq_wr_inline_list(struct swr_sq *sq, const struct ibv_data_buf *buf,
			   size_t num_buf)
{
	size_t i;
	int ret = 0;

	if (sq->stage_err)
		return;
	if (!sq->cur || (num_buf && !buf)) {
		swr_sq_wr_fail(sq, EINVAL);
		return;
	}
	sq->cur->inline_len = 0; /* a second setter replaces the data */
	for (i = 0; i < num_buf && !ret; i++)
		ret = sqe_encode_inline(sq, sq->cur, buf[i].addr,
					buf[i].length);
	if (ret)
		swr_sq_wr_fail(sq, ret);
	sq->cur_flags |= IBV_SEND_INLINE;
}

int swr_sq_wr_complete(struct swr_sq *sq, unsigned int *posted)
{
	unsigned int n = 0;
	int ret;

	wr_finish_cur(sq);
	ret = sq->stage_err;
	if (!ret) {
		/* In ring order, so the kernel may start on the first
		 * while the later ones are still being published. */
		for (; sq->prod != sq->stage_end; sq->prod++, n++) {
			uint32_t slot = sq->prod & (sq->num - 1);

			store_release16(&sq->ring[slot].flags,
					sq->staged[slot]);
		}
	}
	wr_reset(sq);
	if (posted)
		*posted = n;
	return ret;
}

void swr_sq_wr_abort(struct swr_sq *sq)
{
	wr_reset(sq);
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
