/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * swiwarp_ring.h - the user-space side of the swiwarp shared rings.
 *
 * This is the whole fast path of the provider, kept free of libibverbs
 * device plumbing so that it can be unit-tested on in-memory rings: it
 * needs only the public verbs structs (ibv_send_wr, ibv_recv_wr, ibv_wc)
 * and the ring formats of include/uapi/swiwarp-abi.h.
 *
 * None of these functions locks or makes a system call.  Callers serialise
 * producers of one queue (and consumers of one CQ) themselves.
 */
#ifndef SWIWARP_RING_H
#define SWIWARP_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "swiwarp-abi.h"

/* Send queue: user space produces SQEs, the kernel consumes them. */
struct swr_sq {
	struct swiwarp_sqe *ring;
	struct swiwarp_sq_ctrl *ctrl; /* kernel-written TX_ACTIVE, peer_caps */
	uint32_t num;		      /* entries, power of two */
	uint32_t prod;		      /* free-running producer index */
	uint32_t max_sge;	      /* granted max_send_sge */
	uint32_t max_inline;	      /* granted max_inline_data */
	bool sig_all;		      /* QP created with sq_sig_all */

	/*
	 * The ibv_wr_* batch of struct ibv_qp_ex (swr_sq_wr_*() below):
	 * SQEs are built in the free slots from prod on, their flags words
	 * kept in staged[] and stored, VALID, only at swr_sq_wr_complete().
	 */
	uint64_t send_ops;	 /* IBV_QP_EX_WITH_* the QP was made for */
	uint16_t *staged;	 /* num entries, by slot; NULL: no batches */
	uint32_t stage_end;	 /* free-running index past the last built */
	struct swiwarp_sqe *cur; /* SQE being built, NULL between WRs */
	unsigned int cur_flags;	 /* its IBV_SEND_*; INLINE: inline data */
	int stage_err;		 /* first error of the batch, 0 if none */
};

/* The IBV_QP_EX_WITH_* operations the ring implements. */
#define SWR_SEND_OPS                                                           \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |      \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |                  \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |        \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV)

/* Receive queue or shared receive queue: same protocol, RQEs. */
struct swr_rq {
	struct swiwarp_rqe *ring;
	uint32_t num;
	uint32_t prod;
	uint32_t max_sge;
};

/* Completion queue: the kernel produces CQEs, user space consumes. */
struct swr_cq {
	struct swiwarp_cqe *ring;
	struct swiwarp_cq_ctrl *ctrl; /* user-armed notify word */
	uint32_t num;
	uint32_t cons; /* free-running consumer index */
};

/* True if n is a non-zero power of two. */
static inline bool swr_is_pow2(uint32_t n)
{
	return n && !(n & (n - 1));
}

/*
 * Post a chain of send work requests.  On success returns 0 and sets
 * *posted to the number of SQEs published.  On failure returns an errno
 * (EINVAL: bad opcode, flags, SGE count or inline length; EOPNOTSUPP:
 * Send with Immediate, or Write with Immediate toward a peer without
 * RFC 7306; ENOMEM: SQ full), sets *bad_wr to the first request not posted, and *posted to the
 * number published before it (those stay posted, as verbs requires).
 */
int swr_sq_post(struct swr_sq *sq, struct ibv_send_wr *wr,
		struct ibv_send_wr **bad_wr, unsigned int *posted);

/*
 * The ibv_wr_* batch (see ibv_wr_post(3)).  swr_sq_wr_start() opens it;
 * swr_sq_wr_build() starts a WQE from wr's opcode, wr_id, send_flags and
 * the opcode's fields (wr's sg_list, num_sge and next are ignored); the
 * data setters fill the WQE started last.  Nothing becomes visible to the
 * kernel before swr_sq_wr_complete(), which publishes every WQE of the
 * batch in order and returns 0 with *posted set, or, if any call of the
 * batch failed, publishes none and returns that first errno: EINVAL (an
 * opcode not in send_ops, a setter with no WQE, bad send flags, too many
 * SGEs, inline data too long, data the opcode does not allow),
 * EOPNOTSUPP (Immediate Data or an atomic toward a peer without RFC 7306,
 * or what swr_sq_wr_fail() was given), ENOMEM (SQ full).
 * swr_sq_wr_abort() drops the batch.  sq->staged must be set.
 */
void swr_sq_wr_start(struct swr_sq *sq);
void swr_sq_wr_build(struct swr_sq *sq, const struct ibv_send_wr *wr);
void swr_sq_wr_sge_list(struct swr_sq *sq, const struct ibv_sge *sg_list,
			size_t num_sge);
void swr_sq_wr_inline_list(struct swr_sq *sq, const struct ibv_data_buf *buf,
			   size_t num_buf);
void swr_sq_wr_fail(struct swr_sq *sq, int err);
int swr_sq_wr_complete(struct swr_sq *sq, unsigned int *posted);
void swr_sq_wr_abort(struct swr_sq *sq);

/*
 * The doorbell decision (steps U2/U3 of the protocol in swiwarp-abi.h):
 * call after publishing at least one SQE.  Returns true if the kernel's TX
 * engine is idle and the doorbell must be rung.
 */
bool swr_sq_need_doorbell(const struct swr_sq *sq);

/* Post a chain of receive work requests to an RQ or SRQ (no doorbell). */
int swr_rq_post(struct swr_rq *rq, struct ibv_recv_wr *wr,
		struct ibv_recv_wr **bad_wr);

/* Reap up to n completions into wc[]; returns how many (0 if empty). */
int swr_cq_poll(struct swr_cq *cq, int n, struct ibv_wc *wc);

/* Arm the CQ for one completion event (no system call). */
void swr_cq_arm(struct swr_cq *cq, int solicited_only);

/* Translation helpers, exposed for tests. */
int swr_wr_opcode(enum ibv_wr_opcode op);
uint64_t swr_send_op_flag(enum ibv_wr_opcode op);
enum ibv_wc_opcode swr_wc_opcode(uint8_t op, bool *known);
enum ibv_wc_status swr_wc_status(uint8_t status);

#endif /* SWIWARP_RING_H */
