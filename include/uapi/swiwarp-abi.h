/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/*
 * swiwarp: user/kernel ABI between swiwarp.ko and the libibverbs provider
 * libswiwarp.
 *
 * This header is the complete contract.  It is included by the kernel
 * module (via <linux/types.h> from the kernel tree) and by the provider
 * (via <linux/types.h> from linux-libc-dev).  Every structure that is
 * exchanged or shared has an explicit layout: fixed-width fields, explicit
 * padding, 64-bit fields declared __aligned_u64, and a size assertion at
 * the end of this file.
 *
 * Overview
 * --------
 * Slow path: the standard uverbs commands (ibv_cmd_*) with the driver
 * udata structures below.  Fast path: shared-memory rings mapped with
 * mmap() on the uverbs command fd, at the offsets ("keys") returned in the
 * create responses.  There is one ring per SQ, RQ, SRQ and CQ.
 *
 * Rings
 * -----
 * - Every ring has a power-of-two number of entries (num_sqe, num_rqe,
 *   num_cqe in the create responses; the kernel rounds the requested
 *   sizes up).  Slot of a free-running index i is i & (num - 1).
 * - Producer and consumer each keep their own free-running 32-bit index in
 *   private memory.  No index is shared.  Ownership of a slot is carried
 *   only by the VALID bit in the entry's flags word:
 *     producer: waits until the slot's VALID bit is clear (else: ring
 *               full), writes every other field, then stores flags with
 *               VALID set using a store-release (C11:
 *               atomic_store_explicit(..., memory_order_release); kernel:
 *               smp_store_release()).
 *     consumer: loads flags with a load-acquire; if VALID is set it owns
 *               the slot, copies what it needs, then stores flags = 0
 *               with a store-release, which hands the slot back.
 *   The flags words are 16 bits wide and naturally aligned, so a single
 *   16-bit atomic access is used on both sides.
 * - SQ and RQ/SRQ: user space produces, the kernel consumes.  The kernel
 *   copies an SQE/RQE into private memory when it starts working on it and
 *   releases the slot at that moment, so a slot may be reused before the
 *   work request has completed.  Completion is reported through the CQ.
 * - CQ: the kernel produces, user space consumes.  If the kernel finds the
 *   slot at its producer index still VALID, the CQ has overflowed: the
 *   kernel raises IB_EVENT_CQ_ERR and moves the affected QP to ERROR.
 *
 * SQ doorbell protocol (SQ control word, struct swiwarp_sq_ctrl)
 * -------------------------------------------------------------
 * The SQ mapping holds the SQE array followed, at byte offset
 * num_sqe * sizeof(struct swiwarp_sqe), by struct swiwarp_sq_ctrl.
 * The kernel owns its flags word; user space only reads it.
 *
 * The kernel sets SWIWARP_SQ_CTRL_TX_ACTIVE while its TX engine is
 * draining the SQ.  When the engine finds no VALID SQE at its consumer
 * index it goes idle as follows:
 *     K1: clear TX_ACTIVE
 *     K2: full memory barrier (smp_mb())
 *     K3: re-load flags of the SQE at the consumer index; if VALID, set
 *         TX_ACTIVE again and keep draining.
 * User space, after publishing one or more SQEs:
 *     U1: store-release of the SQE flags with VALID (as above)
 *     U2: full memory barrier (atomic_thread_fence(memory_order_seq_cst))
 *     U3: load sq_ctrl.flags; if TX_ACTIVE is clear, ring the doorbell.
 * Because both sides store, then fence, then load the other side's word,
 * at least one of them observes the other's store: either user space sees
 * TX_ACTIVE clear and rings, or the kernel sees the new SQE in K3.  A WQE
 * posted during the transition is therefore never stranded.  Ringing the
 * doorbell when it is not needed is always harmless.
 *
 * The doorbell is a write() on the uverbs command fd of the legacy
 * IB_USER_VERBS_CMD_POST_SEND command with zero work requests:
 *     struct ib_uverbs_cmd_hdr: command = IB_USER_VERBS_CMD_POST_SEND,
 *         in_words  = (sizeof(hdr) + sizeof(struct ib_uverbs_post_send)) / 4,
 *         out_words = sizeof(struct ib_uverbs_post_send_resp) / 4
 *     struct ib_uverbs_post_send: response = address of a
 *         struct ib_uverbs_post_send_resp, qp_handle = ibv_qp->handle,
 *         wr_count = 0, sge_count = 0,
 *         wqe_size = sizeof(struct ib_uverbs_send_wr)
 * The kernel answers a doorbell on a QP that is not yet in RTS with
 * success and does nothing: SQEs posted before the connection is
 * established are picked up when the QP enters RTS.  In ERROR state every
 * VALID SQE is completed with SWIWARP_WC_WR_FLUSH_ERR.  The kernel refuses
 * (-EINVAL) a POST_SEND with work requests on a user QP.
 *
 * The receive side has no doorbell: the kernel looks at the RQ/SRQ when a
 * message arrives.
 *
 * CQ notification protocol (CQ control word, struct swiwarp_cq_ctrl)
 * ------------------------------------------------------------------
 * The CQ mapping holds the CQE array followed, at byte offset
 * num_cqe * sizeof(struct swiwarp_cqe), by struct swiwarp_cq_ctrl.
 * ibv_req_notify_cq() is a store, no system call:
 *     solicited_only = 1: notify = SWIWARP_NOTIFY_SOLICITED
 *     solicited_only = 0: notify = SWIWARP_NOTIFY_SOLICITED |
 *                                  SWIWARP_NOTIFY_NEXT_COMPLETION
 * stored with a store-release (32-bit atomic).  After publishing a CQE the
 * kernel executes a full barrier and then atomically exchanges notify
 * with 0 if the CQE matches the armed condition (NEXT_COMPLETION: any
 * CQE; SOLICITED: a CQE with SWIWARP_CQE_SOLICITED or an error status),
 * and raises one completion event.  Arming is thus consumed by exactly one
 * event.  As with every verbs provider, a consumer must poll the CQ again
 * after arming to catch completions that raced with the arming.
 *
 * mmap
 * ----
 * Each *_key in a create response is the offset to pass to mmap() on the
 * uverbs command fd; the matching *_mmap_len is the length to map (a
 * multiple of the page size).  Map with PROT_READ | PROT_WRITE, MAP_SHARED.
 * A key equal to SWIWARP_INVALID_MMAP_KEY means "no ring" (for instance
 * the RQ of a QP attached to an SRQ).
 */

#ifndef SWIWARP_ABI_H
#define SWIWARP_ABI_H

#include <linux/types.h>

/* Version checked by libibverbs (match_min/max_abi_version). */
#define SWIWARP_ABI_VERSION 1

/*
 * Private driver id: ib_device_ops.driver_id in the kernel, the id in the
 * provider's VERBS_DRIVER_ID() match entry and the id passed to
 * verbs_init_and_alloc_context().  Far outside enum rdma_driver_id.
 */
#define SWIWARP_DRIVER_ID 0x5357

/* rdma link type: rdma link add NAME type swiwarp netdev DEV */
#define SWIWARP_LINK_TYPE "swiwarp"

/* Per-work-request limits. */
#define SWIWARP_MAX_SGE 6
/* Inline data overlay the SGE array of an SQE. */
#define SWIWARP_MAX_INLINE (SWIWARP_MAX_SGE * 16)

#define SWIWARP_INVALID_MMAP_KEY (~(__u64)0)

/* ---------------------------------------------------------------------
 * udata: alloc_ucontext
 */
struct swiwarp_ureq_alloc_ctx {
	__aligned_u64 reserved;		/* must be zero (may be omitted) */
};

struct swiwarp_uresp_alloc_ctx {
	__u32 dev_id;			/* instance number of the device */
	__u32 abi_version;		/* SWIWARP_ABI_VERSION */
	__u32 max_sge;			/* SWIWARP_MAX_SGE */
	__u32 max_inline;		/* SWIWARP_MAX_INLINE */
	__u16 sqe_size;			/* sizeof(struct swiwarp_sqe) */
	__u16 rqe_size;			/* sizeof(struct swiwarp_rqe) */
	__u16 cqe_size;			/* sizeof(struct swiwarp_cqe) */
	__u16 reserved0;
	__aligned_u64 reserved1;
};

/* ---------------------------------------------------------------------
 * udata: create_cq
 */
struct swiwarp_ureq_create_cq {
	__aligned_u64 reserved;		/* must be zero (may be omitted) */
};

struct swiwarp_uresp_create_cq {
	__u32 cq_id;
	__u32 num_cqe;			/* ring entries, power of two */
	__aligned_u64 cq_key;		/* mmap offset: CQEs + cq_ctrl */
	__aligned_u64 cq_mmap_len;
};

/* ---------------------------------------------------------------------
 * udata: create_qp
 */
struct swiwarp_ureq_create_qp {
	__aligned_u64 reserved;		/* must be zero (may be omitted) */
};

struct swiwarp_uresp_create_qp {
	__u32 qp_id;			/* equals ibv_qp->qp_num */
	__u32 num_sqe;			/* SQ ring entries, power of two */
	__u32 num_rqe;			/* RQ ring entries (0 with an SRQ) */
	__u32 max_inline;		/* granted inline size */
	__aligned_u64 sq_key;		/* mmap offset: SQEs + sq_ctrl */
	__aligned_u64 sq_mmap_len;
	__aligned_u64 rq_key;		/* mmap offset: RQEs */
	__aligned_u64 rq_mmap_len;
};

/* ---------------------------------------------------------------------
 * udata: create_srq
 */
struct swiwarp_ureq_create_srq {
	__aligned_u64 reserved;		/* must be zero (may be omitted) */
};

struct swiwarp_uresp_create_srq {
	__u32 srq_id;
	__u32 num_rqe;			/* ring entries, power of two */
	__aligned_u64 srq_key;		/* mmap offset: RQEs */
	__aligned_u64 srq_mmap_len;
};

/* ---------------------------------------------------------------------
 * udata: reg_mr
 */
struct swiwarp_ureq_reg_mr {
	__u8 stag_key;			/* low 8 bits of the STag chosen by user */
	__u8 reserved[7];
};

struct swiwarp_uresp_reg_mr {
	__u32 stag;			/* lkey == rkey */
	__u32 reserved;
};

/* ---------------------------------------------------------------------
 * Work request opcodes (SQE opcode, CQE opcode).
 */
enum swiwarp_opcode {
	SWIWARP_OP_WRITE = 0,		/* RDMA Write */
	SWIWARP_OP_READ = 1,		/* RDMA Read, single sink SGE */
	SWIWARP_OP_SEND = 2,		/* Send (SOLICITED flag: Send with SE) */
	SWIWARP_OP_SEND_INV = 3,	/* Send with Invalidate, stag in inv_stag */
	SWIWARP_OP_RECV = 4,		/* CQE only: receive completion */
	/* Kernel consumers only; never valid in a user SQE. */
	SWIWARP_OP_READ_LOCAL_INV = 5,
	SWIWARP_OP_REG_MR = 6,
	SWIWARP_OP_LOCAL_INV = 7,
	/*
	 * RFC 7306 (added in ABI 1 without a version bump: an older kernel
	 * never sets SWIWARP_PEER_RFC7306, so a newer provider never posts
	 * it there; an older provider never sees the CQE opcode).
	 * WRITE_IMM: RDMA Write, then an Immediate Data message carrying
	 * imm_data; only on a QP whose sq_ctrl.peer_caps has
	 * SWIWARP_PEER_RFC7306 (SOLICITED flag: Immediate Data with SE).
	 */
	SWIWARP_OP_WRITE_IMM = 8,
	SWIWARP_OP_RECV_RDMA_IMM = 9,	/* CQE only: Immediate Data received */
	/*
	 * RFC 7306 Atomic Request (same ABI rule as WRITE_IMM: only on a QP
	 * whose sq_ctrl.peer_caps has SWIWARP_PEER_RFC7306).  64-bit target
	 * at rkey/raddr (8-byte aligned); the original value lands in the 8
	 * octets of atomic.sink (num_sge 1); CQE opcode as the SQE's.
	 */
	SWIWARP_OP_ATOMIC_CS = 10,	/* compare_add == target: swap in */
	SWIWARP_OP_ATOMIC_FA = 11,	/* target += compare_add */
	/*
	 * Send with Immediate Data (added like WRITE_IMM, same ABI rule:
	 * only on a QP whose sq_ctrl.peer_caps has SWIWARP_PEER_RFC7306).
	 * As SEND, imm_data the 32-bit value in network order; on the wire
	 * an Immediate Data message flagged "a Send follows" and the Send
	 * (with SE if SOLICITED).  The receiver's CQE is RECV with
	 * SWIWARP_CQE_IMM.
	 */
	SWIWARP_OP_SEND_IMM = 12,
	SWIWARP_OP_MAX
};

/* Scatter/gather element: same layout as struct ibv_sge. */
struct swiwarp_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* SQE flags. */
#define SWIWARP_WQE_VALID	(1 << 0)	/* slot owned by the kernel */
#define SWIWARP_WQE_SIGNALED	(1 << 1)	/* generate a CQE on success */
#define SWIWARP_WQE_SOLICITED	(1 << 2)	/* Send/Immediate Data with SE */
#define SWIWARP_WQE_FENCE	(1 << 3)	/* wait for prior READs */
#define SWIWARP_WQE_INLINE	(1 << 4)	/* data in inline_data[] */

/*
 * Send queue entry, 128 bytes.
 * WRITE:      rkey/raddr = remote sink, sge[] = local source
 * READ:       rkey/raddr = remote source, sge[0] = local sink (num_sge 1)
 * SEND:       sge[] = local source
 * SEND_INV:   as SEND, inv_stag = remote STag to invalidate
 * WRITE_IMM:  as WRITE, imm_data = the 32-bit immediate value exactly as
 *             in ibv_send_wr.imm_data (network byte order, opaque)
 * SEND_IMM:   as SEND, imm_data as for WRITE_IMM
 * ATOMIC_CS/ATOMIC_FA: rkey/raddr = remote 64-bit target, atomic.sink =
 *             local 8-octet sink for the original value (num_sge 1),
 *             atomic.compare_add / atomic.swap as in ibv_send_wr.wr.atomic
 * With SWIWARP_WQE_INLINE, num_sge is 0 and the first inline_len bytes of
 * inline_data[] are the payload (inline_len <= max_inline).
 */
struct swiwarp_sqe {
	__aligned_u64 id;		/* wr_id */
	__u16 flags;			/* SWIWARP_WQE_* */
	__u8 num_sge;
	__u8 opcode;			/* enum swiwarp_opcode */
	__u32 rkey;
	__aligned_u64 raddr;
	union {
		__u32 inv_stag;		/* SEND_INV */
		__u32 imm_data;		/* WRITE_IMM, SEND_IMM: net order */
	};
	__u32 inline_len;		/* with SWIWARP_WQE_INLINE */
	union {
		struct swiwarp_sge sge[SWIWARP_MAX_SGE];
		__u8 inline_data[SWIWARP_MAX_INLINE];
		struct {
			struct swiwarp_sge sink;	/* overlays sge[0] */
			__aligned_u64 compare_add;
			__aligned_u64 swap;
		} atomic;			/* ATOMIC_CS, ATOMIC_FA */
	};
};

/* Receive queue entry (RQ and SRQ), 112 bytes. Flags: only VALID. */
struct swiwarp_rqe {
	__aligned_u64 id;		/* wr_id */
	__u16 flags;			/* SWIWARP_WQE_VALID */
	__u8 num_sge;
	__u8 reserved0;
	__u32 reserved1;
	struct swiwarp_sge sge[SWIWARP_MAX_SGE];
};

/* SQ control word, follows the SQE array in the SQ mapping. */
#define SWIWARP_SQ_CTRL_TX_ACTIVE (1U << 0)

/*
 * peer_caps: what the connected peer implements, written by the kernel
 * (store-release) before the QP enters RTS for a connection, before the
 * consumer is told the connection is up; 0 while not connected.
 * SWIWARP_PEER_RFC7306: the peer announced RFC 7306 in its MPA Request
 * or Reply (Documentation/protocol.md); without it the provider fails
 * IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND_WITH_IMM and the atomics with
 * EOPNOTSUPP and the kernel completes such an SQE with
 * SWIWARP_WC_LOC_QP_OP_ERR: nothing reaches the wire.
 */
#define SWIWARP_PEER_RFC7306 (1U << 0)

struct swiwarp_sq_ctrl {
	__u32 flags;			/* written by the kernel only */
	__u32 peer_caps;		/* SWIWARP_PEER_*, kernel-written */
	__aligned_u64 reserved1[7];	/* pad to 64 bytes */
};

/* ---------------------------------------------------------------------
 * Completion queue
 */
enum swiwarp_wc_status {
	SWIWARP_WC_SUCCESS = 0,
	SWIWARP_WC_LOC_LEN_ERR = 1,
	SWIWARP_WC_LOC_QP_OP_ERR = 2,
	SWIWARP_WC_LOC_PROT_ERR = 3,
	SWIWARP_WC_WR_FLUSH_ERR = 4,
	SWIWARP_WC_BAD_RESP_ERR = 5,
	SWIWARP_WC_LOC_ACCESS_ERR = 6,
	SWIWARP_WC_REM_INV_REQ_ERR = 7,
	SWIWARP_WC_REM_ACCESS_ERR = 8,
	SWIWARP_WC_REM_OP_ERR = 9,
	SWIWARP_WC_GENERAL_ERR = 10,
	SWIWARP_WC_MAX
};

/* CQE flags. */
#define SWIWARP_CQE_VALID	(1 << 0)	/* slot owned by user space */
#define SWIWARP_CQE_SOLICITED	(1 << 1)	/* received Send had SE set */
#define SWIWARP_CQE_INVALIDATED	(1 << 2)	/* inv_stag was invalidated */
#define SWIWARP_CQE_IMM		(1 << 3)	/* imm_data is valid */

/* Completion queue entry, 32 bytes. */
struct swiwarp_cqe {
	__aligned_u64 id;		/* wr_id */
	__u16 flags;			/* SWIWARP_CQE_* */
	__u8 opcode;			/* enum swiwarp_opcode */
	__u8 status;			/* enum swiwarp_wc_status */
	__u32 bytes;			/* byte_len (receives, reads) */
	__u32 qp_id;			/* qp_num */
	__u32 inv_stag;			/* with SWIWARP_CQE_INVALIDATED */
	__u32 imm_data;			/* with SWIWARP_CQE_IMM, network order */
	__u32 reserved;
};

/* CQ control word, follows the CQE array in the CQ mapping. */
#define SWIWARP_NOTIFY_NOT		0
#define SWIWARP_NOTIFY_SOLICITED	(1U << 0)
#define SWIWARP_NOTIFY_NEXT_COMPLETION	(1U << 1)

struct swiwarp_cq_ctrl {
	__u32 notify;			/* armed by user, consumed by kernel */
	__u32 reserved0;
	__aligned_u64 reserved1[7];	/* pad to 64 bytes */
};

/* ---------------------------------------------------------------------
 * Layout checks (the shared layout must never change silently).
 */
#if defined(__KERNEL__)
#include <linux/build_bug.h>
#elif !defined(__cplusplus)
#include <assert.h>
#endif
#define SWIWARP_ABI_ASSERT(cond, msg) static_assert(cond, msg)

SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_sge) == 16, "sge size");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_sqe) == 128, "sqe size");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_rqe) == 112, "rqe size");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_cqe) == 32, "cqe size");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_sq_ctrl) == 64, "sq_ctrl size");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_cq_ctrl) == 64, "cq_ctrl size");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_ureq_alloc_ctx) == 8, "ureq ctx");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_uresp_alloc_ctx) == 32, "uresp ctx");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_ureq_create_cq) == 8, "ureq cq");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_uresp_create_cq) == 24, "uresp cq");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_ureq_create_qp) == 8, "ureq qp");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_uresp_create_qp) == 48, "uresp qp");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_ureq_create_srq) == 8, "ureq srq");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_uresp_create_srq) == 24, "uresp srq");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_ureq_reg_mr) == 8, "ureq mr");
SWIWARP_ABI_ASSERT(sizeof(struct swiwarp_uresp_reg_mr) == 8, "uresp mr");
SWIWARP_ABI_ASSERT(__builtin_offsetof(struct swiwarp_sqe, sge) == 32,
		   "sqe sge offset");
SWIWARP_ABI_ASSERT(__builtin_offsetof(struct swiwarp_rqe, sge) == 16,
		   "rqe sge offset");
SWIWARP_ABI_ASSERT(__builtin_offsetof(struct swiwarp_sqe, imm_data) == 24,
		   "sqe imm_data overlays inv_stag");
SWIWARP_ABI_ASSERT(__builtin_offsetof(struct swiwarp_sqe, atomic.sink) ==
		   __builtin_offsetof(struct swiwarp_sqe, sge),
		   "sqe atomic sink overlays sge[0]");
SWIWARP_ABI_ASSERT(__builtin_offsetof(struct swiwarp_sqe, atomic.swap) == 56,
		   "sqe atomic operands inside sge[1]");
SWIWARP_ABI_ASSERT(__builtin_offsetof(struct swiwarp_cqe, imm_data) == 24,
		   "cqe imm_data offset");
SWIWARP_ABI_ASSERT(__builtin_offsetof(struct swiwarp_sq_ctrl, peer_caps) == 4,
		   "sq_ctrl peer_caps offset");

#undef SWIWARP_ABI_ASSERT

#endif /* SWIWARP_ABI_H */
