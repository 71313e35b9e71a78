/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * swiwarp: software iWARP RNIC -- core definitions shared by all parts of
 * the module.
 */

#ifndef SWIWARP_H
#define SWIWARP_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/sock.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>

#include "../include/uapi/swiwarp-abi.h"
#include "swiwarp_compat.h"

#define SWIWARP_VENDOR_ID	0x535749	/* "SWI" */
#define SWIWARP_VENDOR_PART	1
#define SWIWARP_MAX_QP		16384
#define SWIWARP_MAX_QP_WR	8192
#define SWIWARP_MAX_CQ		16384
/*
 * 2^18 CQEs (8 MiB of vmalloc'ed ring) per CQ: libfabric's ofi_rxm, under
 * Open MPI's ofi MTL, sizes its verbs CQ as (tx + rx queue size) x universe
 * size = 256 x 1024 with the 1.17 defaults (Documentation/mpi.md).
 */
#define SWIWARP_MAX_CQE		262144
#define SWIWARP_MAX_PD		65536
#define SWIWARP_MAX_MR		65536
#define SWIWARP_MAX_SRQ		4096
#define SWIWARP_MAX_SRQ_WR	8192
#define SWIWARP_MAX_ORD		32
#define SWIWARP_MAX_IRD		32
#define SWIWARP_MAX_SGE_RD	1
#define SWIWARP_MAX_FR_PAGES	256
#define SWIWARP_MAX_MSG		0x80000000U
#define SWIWARP_MAX_PDATA	512	/* MPA private data, RFC 5044 */
#define SWIWARP_TX_BURST	64	/* TX engine steps (2 per FPDU) per worker run */

/* Module parameters (swiwarp_main.c) */
enum swiwarp_crc_policy {
	SWIWARP_CRC_REFUSE = 0,		/* never use CRC, reject peers wanting it */
	SWIWARP_CRC_ACCEPT = 1,		/* do not ask, use if the peer asks */
	SWIWARP_CRC_REQUEST = 2,	/* ask for CRC, accept either way */
};

/* RTR kind queued for the TX engine (initiator, MPA v2 peer-to-peer) */
#define SWIWARP_RTR_WRITE	0x1
#define SWIWARP_RTR_READ	0x2
#define SWIWARP_RTR_SEND	0x4

/*
 * swiwarp_fault.c: allocation failures on demand, in kernels with fault
 * injection (/sys/kernel/debug/fail_swiwarp_alloc/).  Every allocation of
 * swiwarp's own goes through swiwarp_alloc(), so a test can fail each of
 * them, in any context, without touching the rest of the kernel.
 */
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool swiwarp_fail_alloc(void);
void swiwarp_fault_init(void);
void swiwarp_fault_exit(void);
#else
static inline bool swiwarp_fail_alloc(void)
{
	return false;
}

static inline void swiwarp_fault_init(void)
{
}

static inline void swiwarp_fault_exit(void)
{
}
#endif
#define swiwarp_alloc(allocation) (swiwarp_fail_alloc() ? NULL : (allocation))

/* swiwarp_crc.c: MPA CRC32c with the crypto API's crc32c */
int swiwarp_crc_init(void);
void swiwarp_crc_exit(void);
u32 swiwarp_crc32c(u32 crc, const void *data, unsigned int len);

extern int swiwarp_mpa_crc;
extern int swiwarp_mpa_rev;
extern bool swiwarp_peer_to_peer;
extern int swiwarp_rtr_type;
extern int swiwarp_mpa_timeout_ms;
extern bool swiwarp_markers;

/*
 * Device counters, reported through the RDMA core's hw-stats ops
 * (swiwarp_stats.c): rdma statistic show link swiwarpN/1, and
 * /sys/class/infiniband/swiwarpN/ports/1/hw_counters/.  Meaning of each:
 * Documentation/kernel.md, "Counters".  The order is the order shown.
 */
enum swiwarp_stat {
	SWIWARP_STAT_TX_FPDUS,
	SWIWARP_STAT_TX_PAYLOAD_BYTES,
	SWIWARP_STAT_RX_FPDUS,
	SWIWARP_STAT_RX_PAYLOAD_BYTES,
	SWIWARP_STAT_RX_CRC_ERRORS,
	SWIWARP_STAT_TX_TERM_RDMAP,
	SWIWARP_STAT_TX_TERM_DDP,
	SWIWARP_STAT_TX_TERM_MPA,
	SWIWARP_STAT_RX_TERM_RDMAP,
	SWIWARP_STAT_RX_TERM_DDP,
	SWIWARP_STAT_RX_TERM_MPA,
	SWIWARP_STAT_ZC_WQES,
	SWIWARP_STAT_ZC_FPDUS,
	SWIWARP_STAT_ZC_BYTES,
	SWIWARP_STAT_ZC_COPIED,
	SWIWARP_STAT_DOORBELLS,
	SWIWARP_STAT_MPA_FAILURES,
	SWIWARP_STAT_COUNT
};

/*
 * Per-CPU, one set per device: the FPDU paths of different QPs run on
 * different CPUs at the same time (TX workers, softirq RX), and a shared
 * atomic would bounce one cache line between them on every FPDU.  A
 * this_cpu_add() is one instruction, safe against preemption and
 * interrupts; a read sums the CPUs (swiwarp_get_hw_stats()).  Per-QP
 * counters would lose the counts of every destroyed QP unless folded into
 * the device at destroy time; per-CPU ones need no such step.
 */
struct swiwarp_stats {
	u64 v[SWIWARP_STAT_COUNT];
};

struct swiwarp_dev {
	struct ib_device base;
	struct swiwarp_stats __percpu *stats;
	struct net_device *netdev;	/* reference held (dev_hold) */
	enum ib_port_state port_state;
	spinlock_t mac_lock;		/* mac: read with swiwarp_dev_mac() */
	u8 mac[ETH_ALEN];		/* the GID: the netdev's MAC */
	struct xarray qp_xa;		/* qp_num -> qp */
	struct xarray mem_xa;		/* stag index -> mem */
	u32 mem_next;			/* cyclic allocation cursor */
	atomic_t num_qp, num_cq, num_pd, num_mr, num_srq, num_ctx;
	struct work_struct netdev_down;
	bool netdev_gone;		/* unregistered or moved: no new listens */
};

struct swiwarp_ucontext {
	struct ib_ucontext base;
};

struct swiwarp_pd {
	struct ib_pd base;
};

/*
 * The memory of a CQ, SRQ, SQ or RQ ring.  A user's ring is charged to its
 * creator's locked memory (mm->pinned_vm against RLIMIT_MEMLOCK, as pinned
 * MRs are) until the object and its mmap entry let go of it.  Pages a
 * process still maps after that stay with the mapping, uncharged (no
 * vm_ops of ours may outlive the module: Documentation/kernel.md).
 */
struct swiwarp_ring {
	struct kref ref;
	void *addr;			/* vmalloc_user() memory */
	unsigned long npages;
	struct mm_struct *mm;		/* charged to; NULL: a kernel ring */
};

struct swiwarp_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	struct swiwarp_ring *ring;	/* holds a reference */
};

/* ---------------------------------------------------------------- memory */
enum swiwarp_mem_type {
	SWIWARP_MEM_UMEM,	/* pinned user pages */
	SWIWARP_MEM_KVA,	/* DMA MR: any kernel virtual address */
	SWIWARP_MEM_PBL,	/* fast-register MR: page list of kernel VAs */
};

struct swiwarp_mem {
	struct kref ref;
	struct rcu_head rcu;
	struct work_struct free_work;	/* last put in atomic context */
	struct swiwarp_dev *sdev;
	void *pd;		/* identity only, never dereferenced */
	u32 stag;
	bool valid;		/* READ_ONCE/WRITE_ONCE */
	bool is_frmr;
	enum swiwarp_mem_type type;
	int access;		/* IB_ACCESS_* */
	u64 va;
	u64 len;
	/* SWIWARP_MEM_UMEM */
	struct ib_umem *umem;
	struct page **pages;
	unsigned long npages;
	unsigned int pg_off;	/* offset of va in pages[0] */
	/* SWIWARP_MEM_PBL: the page list in use, set by IB_WR_REG_MR */
	u64 *pbl;
	unsigned int pbl_max;
	unsigned int pbl_num;
	unsigned int pbl_pgsz;
	/* the one map_mr_sg fills, for the next IB_WR_REG_MR */
	u64 *pbl_next;
	unsigned int pbl_next_num;
	unsigned int pbl_next_pgsz;
};

struct swiwarp_mr {
	struct ib_mr base;
	struct swiwarp_mem *mem;
};

/* --------------------------------------------------------------- queues */
struct swiwarp_cq {
	struct ib_cq base;
	spinlock_t lock;		/* producer side and kernel poll */
	struct swiwarp_cqe *queue;
	struct swiwarp_cq_ctrl *ctrl;
	u32 num_cqe;
	u32 cq_put;
	u32 cq_get;			/* kernel consumers only */
	u32 id;
	bool user;
	/* bit 0: overflow reported, until a completion fits again */
	unsigned long overflow;
	struct swiwarp_ring *ring;	/* queue and ctrl */
	struct rdma_user_mmap_entry *entry;
};

struct swiwarp_srq {
	struct ib_srq base;
	spinlock_t lock;		/* consumer index, limit */
	struct swiwarp_rqe *queue;
	u32 num_rqe;
	u32 rq_get;
	u32 rq_put;			/* kernel consumers only */
	u32 limit;			/* 0: not armed */
	u32 id;
	bool user;
	struct swiwarp_ring *ring;	/* queue */
	struct rdma_user_mmap_entry *entry;
};

enum swiwarp_qp_state {
	SWIWARP_QP_IDLE,
	SWIWARP_QP_RTR,
	SWIWARP_QP_RTS,
	SWIWARP_QP_CLOSING,
	SWIWARP_QP_TERMINATE,
	SWIWARP_QP_ERROR,
};

/* A work request being executed (copied out of its ring). */
struct swiwarp_wqe {
	struct swiwarp_sqe sqe;
	struct swiwarp_mem *mem[SWIWARP_MAX_SGE];	/* references */
	u32 bytes;			/* total message length */
	u32 processed;			/* bytes sent / placed so far */
	struct ib_mr *reg_mr;		/* SWIWARP_OP_REG_MR */
	int status;			/* enum swiwarp_wc_status */
	bool active;
	bool imm_sent;			/* SEND_IMM: its Immediate Data is out */
	bool write_sent;		/* WRITE_IMM: its Write's last FPDU is out */
};

/*
 * Inbound RDMA Read Request, or with atomic an RFC 7306 Atomic Request
 * (the two share queue 1 and the IRD resources), queued for the TX
 * engine: it answers them strictly in arrival order.
 */
struct swiwarp_irq_entry {
	u32 sink_stag;
	u64 sink_to;
	u32 src_stag;			/* Atomic: the target's STag */
	u64 src_to;			/* Atomic: the target's TO */
	u32 len;
	bool valid;
	bool atomic;
	u8 aop;				/* enum iwarp_atomic_opcode */
	u32 req_id;
	u64 add_swap;
	u64 add_swap_mask;
	u64 compare;
	u64 compare_mask;
};

/* Outbound RDMA Read or Atomic Request awaiting its response. */
struct swiwarp_orq_entry {
	struct swiwarp_wqe wqe;
	u32 req_id;			/* Atomic: our Request Identifier */
	u32 msn;			/* its request's queue-1 MSN */
	/*
	 * Set when the peer's Terminate named this request: the status it
	 * completes with instead of WR_FLUSH_ERR (swiwarp_rx_term_blame()).
	 */
	u8 term_status;
	bool valid;
};

/* One piece of the FPDU being sent: kernel memory or a page. */
struct swiwarp_tx_frag {
	struct page *page;		/* NULL: kva */
	void *kva;
	u32 off;			/* in page */
	u32 len;
};

#define SWIWARP_TX_FRAGS	(65536 / PAGE_SIZE + 4)

struct swiwarp_zc;

/*
 * The TX engine's phase: what the message in tx.wqe is, while
 * tx.wqe.active.  SQ -> READ_REQ when a Read or Atomic moves to the ORQ
 * before its Request is built; IRQ -> READ_RESP when a Read Response
 * starts; back to SQ when the last FPDU is pushed, on a flush and on a
 * failure (swiwarp_qp_tx.c).
 */
enum swiwarp_tx_phase {
	SWIWARP_TX_SQ,		/* an SQ WQE completed by TX, or none */
	SWIWARP_TX_READ_REQ,	/* Read/Atomic Request: its ORQ entry owns
				 * the memory and the completion
				 */
	SWIWARP_TX_READ_RESP,	/* Read Response to the IRQ's head */
};

/* What is done once tx.buf is pushed in full. */
enum swiwarp_tx_fpdu {
	SWIWARP_TX_FPDU_PLAIN,	/* nothing: an FPDU mid-message, an RTR */
	SWIWARP_TX_FPDU_LAST,	/* the end of tx.wqe: it is done */
	SWIWARP_TX_FPDU_TERM,	/* our Terminate: the QP goes to ERROR */
};

struct swiwarp_tx {
	u8 *buf;			/* one FPDU being sent */
	/*
	 * With MPA markers on TX (RFC 5044): the FPDU is built unmarked in
	 * buf, copied with markers into mbuf, and the two are swapped.
	 * mk_pos counts the octets sent since the first FPDU (the marker
	 * origin), so mk_pos mod 512 places the next marker.
	 */
	u8 *mbuf;
	u32 mk_pos;
	u32 buf_len;			/* octets of the whole FPDU */
	u32 buf_sent;
	u32 payload;			/* of them DDP payload (counters) */
	/* the FPDU as pieces; nfrag == 0: all of it is in buf */
	struct swiwarp_tx_frag frag[SWIWARP_TX_FRAGS];
	u32 nfrag;
	u8 trailer[8];			/* pad + CRC of a zero-copy FPDU */
	/*
	 * Zero-copy Send/Write (swiwarp_zcopy.c): zc tracks the active WQE
	 * while TCP references its pages; ubuf is set while buf's page
	 * pieces go out with MSG_ZEROCOPY.  zc_ring holds the retired WQEs
	 * whose completion waits, in SQ order (at most num_sqe; each keeps
	 * its SQ slot).  slot is the SQ index of wqe, still owned by the
	 * kernel while slot_held.
	 */
	struct swiwarp_zc *zc;
	struct ubuf_info *ubuf;
	struct swiwarp_zc **zc_ring;
	u32 zc_put;
	u32 zc_get;
	u32 slot;
	bool slot_held;
	bool zc_want;			/* wqe is to be sent zero-copy */
	bool copy_pages;		/* TCP copies all pieces of this FPDU */
	u32 msn[4];			/* last MSN sent per untagged queue */
	u32 req_id;			/* Request Identifier of an Atomic */
	enum swiwarp_tx_phase phase;	/* what wqe below is */
	enum swiwarp_tx_fpdu fpdu;	/* what pushing buf completes */
	bool more;			/* more FPDUs of the WQE follow */
	int rtr_pending;		/* SWIWARP_RTR_* to send first */
	struct swiwarp_wqe wqe;		/* SQ WQE or Read Response */
	struct swiwarp_irq_entry rresp;
	/* Terminate request, under orq_lock */
	bool term_pending;
	u8 term_layer_etype;
	u8 term_ecode;
	u8 term_hdr[20];
	u32 term_hdr_len;
	u16 term_seg_len;	/* the offending DDP Segment's length */
	/* RFC 5040 R bit: a copy of the refused Read Request's 28 octets */
	u8 term_rreq[28];
	bool term_rreq_valid;
};

enum swiwarp_rx_state {
	SWIWARP_RX_HDR,
	SWIWARP_RX_DATA,
	SWIWARP_RX_TRAILER,
	SWIWARP_RX_ERROR,
};

struct swiwarp_rx {
	enum swiwarp_rx_state state;
	u8 hdr[96];			/* MPA length + DDP/RDMAP header */
	u32 hdr_need;
	u32 hdr_have;
	u32 fpdu_len;			/* MPA ULPDU length */
	u32 data_left;			/* payload bytes left in this FPDU */
	u32 pad;
	u8 trailer[8];
	u32 trailer_have;
	u32 crc;			/* running CRC register of this FPDU */
	u8 opcode;
	bool tagged;
	bool last;
	bool first_done;		/* first FPDU seen (RTR) */
	bool rtr_send;			/* P2P responder: a Send RTR is due */
	bool rtr_skip;			/* this segment is that RTR */
	/* current segment */
	u32 stag;
	u64 to;
	u32 msn;
	u32 seg_mo;
	u32 inv_stag;
	u32 imm_data;			/* Immediate Data: verbs imm, net order */
	/*
	 * Send with Immediate (swiwarp convention, IWARP_IMM_FLAG_SEND_FOLLOWS):
	 * imm_pending from the flagged Immediate Data message until the
	 * first segment of the Send that must follow it; then imm_send
	 * until that Send completes with imm_data.
	 */
	bool imm_pending;
	bool imm_send;
	/*
	 * A Write with Immediate is an RDMA Write followed by an Immediate
	 * Data message (RFC 7306), which carries no length.  The receive it
	 * completes reports the Write's length, as the verbs' "bytes
	 * transferred": write_len counts the Write message being received,
	 * write_done_len is the length of the last complete one while no
	 * untagged message followed it.  (Our sender frames one zero-length
	 * Write for a zero-length Write with Immediate, so a Write before
	 * it is never counted as its own.)
	 */
	u32 write_len;
	u32 write_done_len;
	/* untagged (Send) message being received */
	u32 msn_next[4];		/* next expected MSN per queue (0-3) */
	/* the Atomic Request or Response being received (RFC 7306) */
	struct swiwarp_irq_entry areq;
	u32 aresp_id;
	u64 aresp_value;
	struct swiwarp_wqe rwqe;
	bool rwqe_active;
	u32 mo;				/* bytes of the message so far */
	/* tagged placement */
	struct swiwarp_mem *tmem;	/* cached Write target */
	struct swiwarp_orq_entry *rresp;	/* Read Response target */
	/*
	 * MPA markers on RX: mk_pos counts the octets received since the
	 * first FPDU (marker origin); mk collects the marker being read;
	 * mk_seen counts the markers inside the current FPDU.  A marker
	 * that sits inside the header or in front of the CRC field is kept
	 * in mk_save until the CRC of those octets is computed: mk_hdr_at
	 * is its position in hdr plus one (0: none), mk_trailer says it
	 * follows the pad.
	 */
	u32 mk_pos;
	u32 mk_seen;
	u32 mk_hdr_at;
	bool mk_trailer;
	u8 mk[4];
	u8 mk_save[4];
};

struct swiwarp_cep;

struct swiwarp_qp {
	struct ib_qp base;
	struct swiwarp_dev *sdev;
	struct kref ref;
	struct completion freed;
	struct rw_semaphore state_lock;
	enum swiwarp_qp_state state;
	u32 id;
	bool user;
	kuid_t owner;			/* user QPs: the creator's effective uid */
	bool sig_all;
	/*
	 * bit 0: a completion of this QP did not fit into its CQ; the TX
	 * engine moves the QP to ERROR (cleared for a new connection)
	 */
	unsigned long cq_overflow;

	struct swiwarp_cq *scq;
	struct swiwarp_cq *rcq;
	struct swiwarp_srq *srq;

	/* send queue */
	spinlock_t sq_lock;		/* kernel post_send; TX fetch */
	struct swiwarp_sqe *sendq;
	struct swiwarp_sq_ctrl *sq_ctrl;
	u32 num_sqe;
	u32 sq_get;
	u32 sq_put;			/* kernel consumers only */
	struct swiwarp_ring *sq_ring;	/* sendq and sq_ctrl */
	struct rdma_user_mmap_entry *sq_entry;
	u32 max_inline;

	/* receive queue (unused with an SRQ) */
	spinlock_t rq_lock;		/* kernel post_recv producer */
	struct swiwarp_rqe *recvq;
	u32 num_rqe;
	u32 rq_get;
	u32 rq_put;			/* kernel consumers only */
	struct swiwarp_ring *rq_ring;	/* recvq */
	struct rdma_user_mmap_entry *rq_entry;

	/* negotiated by the CM */
	u32 ord;
	u32 ird;
	bool crc;
	bool peer_rfc7306;		/* peer takes RFC 7306 Immediate/Atomics */
	bool large_fpdu;		/* send FPDUs longer than a segment */
	bool tx_markers;		/* insert MPA markers into our FPDUs */
	bool rx_markers;		/* the peer inserts MPA markers */
	u32 mss;

	/* RDMA Read state, protected by orq_lock */
	spinlock_t orq_lock;		/* ORQ, IRQ, Terminate request */
	struct swiwarp_orq_entry *orq;
	u32 orq_size, orq_put, orq_get;
	struct swiwarp_irq_entry *irq;
	u32 irq_size, irq_put, irq_get;

	/* transport */
	struct socket *sock;		/* reference owned by the cep */
	struct swiwarp_cep *cep;
	struct work_struct tx_work;
	struct mutex tx_lock;		/* serialises TX with teardown */
	struct swiwarp_tx tx;
	struct swiwarp_rx rx;		/* softirq, under sk_callback_lock */
	spinlock_t rx_lock;		/* RX context, RQ consumer, cep */
	bool rx_suspended;
	bool term_sent;
	/*
	 * The Terminate sent and the one received on the current connection,
	 * as rdma res show qp -dd shows them: SWIWARP_TERM_SEEN | layer and
	 * type << 8 | code, 0 for none.  One word each, so that a reader
	 * without the writer's lock never sees half a Terminate.  A nonzero
	 * term_rx_seen is also how the QP knows the peer ended the stream.
	 */
	u32 term_tx_seen;
	u32 term_rx_seen;
	bool tx_hold;			/* responder: no FPDU before the peer's */
	/* zero-copy WQEs whose pages TCP still holds, under swiwarp_zc_lock */
	atomic_t zc_inflight;
};

/* ------------------------------------------------------------- helpers */
static inline struct swiwarp_dev *to_sdev(struct ib_device *d)
{
	return container_of(d, struct swiwarp_dev, base);
}

static inline struct swiwarp_qp *to_sqp(struct ib_qp *q)
{
	return container_of(q, struct swiwarp_qp, base);
}

static inline struct swiwarp_cq *to_scq(struct ib_cq *c)
{
	return container_of(c, struct swiwarp_cq, base);
}

static inline struct swiwarp_srq *to_ssrq(struct ib_srq *s)
{
	return container_of(s, struct swiwarp_srq, base);
}

static inline struct swiwarp_mr *to_smr(struct ib_mr *m)
{
	return container_of(m, struct swiwarp_mr, base);
}

static inline struct swiwarp_mmap_entry *
to_smmap(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct swiwarp_mmap_entry, rdma);
}

/*
 * Ring slot ownership (include/uapi/swiwarp-abi.h): the acquire load of a
 * flags word pairs with the release store of the other side, so the
 * entry's other fields are read only after they were written.
 */
static inline u16 swiwarp_flags_acquire(u16 *flags)
{
	/* pairs with swiwarp_flags_release() or the user's release store */
	return smp_load_acquire(flags);
}

/* Hand a slot to the other side after all other fields were written. */
static inline void swiwarp_flags_release(u16 *flags, u16 val)
{
	/* pairs with swiwarp_flags_acquire() or the user's acquire load */
	smp_store_release(flags, val);
}

/* RFC 7306 Atomic SQE opcodes: outstanding in the ORQ like Reads. */
static inline bool swiwarp_op_is_atomic(u8 opcode)
{
	return opcode == SWIWARP_OP_ATOMIC_CS || opcode == SWIWARP_OP_ATOMIC_FA;
}

static inline void swiwarp_qp_get(struct swiwarp_qp *qp)
{
	kref_get(&qp->ref);
}

void swiwarp_qp_release(struct kref *ref);

static inline void swiwarp_qp_put(struct swiwarp_qp *qp)
{
	kref_put(&qp->ref, swiwarp_qp_release);
}

/* swiwarp_main.c */
extern struct workqueue_struct *swiwarp_tx_wq;

/* swiwarp_stats.c */
static inline void swiwarp_stat_add(struct swiwarp_dev *sdev,
				    enum swiwarp_stat s, u64 n)
{
	this_cpu_add(sdev->stats->v[s], n);
}

static inline void swiwarp_stat_inc(struct swiwarp_dev *sdev,
				    enum swiwarp_stat s)
{
	this_cpu_inc(sdev->stats->v[s]);
}

#define SWIWARP_TERM_SEEN BIT(16)
void swiwarp_stat_term(struct swiwarp_qp *qp, bool sent, u8 layer_etype,
		       u8 ecode);
int swiwarp_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int swiwarp_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int swiwarp_stats_alloc(struct swiwarp_dev *sdev);
void swiwarp_stats_free(struct swiwarp_dev *sdev);
struct rdma_hw_stats *swiwarp_alloc_hw_port_stats(struct ib_device *ibdev,
						  u32 port);
int swiwarp_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			 u32 port, int index);

/* swiwarp_mem.c */
int swiwarp_mem_add(struct swiwarp_dev *sdev, struct swiwarp_mem *mem,
		    u8 key);
void swiwarp_mem_remove(struct swiwarp_mem *mem);
struct swiwarp_mem *swiwarp_mem_get(struct swiwarp_dev *sdev, u32 stag);
void swiwarp_mem_put(struct swiwarp_mem *mem);
int swiwarp_mem_check(struct swiwarp_mem *mem, void *pd, int access,
		      u64 va, u64 len);
typedef int (*swiwarp_chunk_fn)(void *kva, u32 len, void *arg);
int swiwarp_mem_walk(struct swiwarp_mem *mem, u64 va, u32 len,
		     swiwarp_chunk_fn fn, void *arg);
int swiwarp_mem_copy(struct swiwarp_mem *mem, u64 va, void *buf, u32 len,
		     bool to_mem);
/* An RFC 7306 atomic operation on one 64-bit target. */
struct swiwarp_atomic_op {
	u8 aop;				/* enum iwarp_atomic_opcode */
	u64 add_swap;
	u64 add_swap_mask;
	u64 compare;
	u64 compare_mask;
	u64 orig;			/* out: the target's original value */
};

int swiwarp_mem_atomic(struct swiwarp_mem *mem, u64 va,
		       struct swiwarp_atomic_op *op);
int swiwarp_mem_umem_init(struct swiwarp_mem *mem, struct ib_umem *umem);
int swiwarp_mem_invalidate(struct swiwarp_dev *sdev, void *pd, u32 stag,
			   bool remote);
int swiwarp_mem_fast_reg(struct ib_mr *ibmr, void *pd, u8 key, int access);
int swiwarp_wqe_check_sgl(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe,
			  int access);
int swiwarp_sgl_walk(struct swiwarp_wqe *wqe, u32 off, u32 n,
		     swiwarp_chunk_fn fn, void *arg);
int swiwarp_sgl_gather(struct swiwarp_wqe *wqe, u32 off, u32 n, void *buf);

/* swiwarp_cq.c */
int swiwarp_cq_push(struct swiwarp_cq *cq, const struct swiwarp_cqe *cqe,
		    bool solicited);
int swiwarp_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int swiwarp_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int swiwarp_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata);
int swiwarp_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);

/* swiwarp_verbs.c */
int swiwarp_ring_create(struct ib_udata *udata, size_t size,
			struct swiwarp_ring **ring,
			struct rdma_user_mmap_entry **entry, u64 *key,
			u64 *mmap_len);
void swiwarp_ring_destroy(struct swiwarp_ring **ring,
			  struct rdma_user_mmap_entry **entry);

/*
 * What the CM negotiated for a connection, handed to the QP with its
 * socket when it moves to RTS (swiwarp_qp_enter_rts()).
 */
struct swiwarp_conn_params {
	struct socket *sock;
	struct swiwarp_cep *cep;
	u32 ord;
	u32 ird;
	int rtr;		/* SWIWARP_RTR_* to send first; 0: none */
	bool crc;
	bool peer_rfc7306;
	bool large_fpdu;	/* both ends announced it (mpa.h) */
	bool tx_markers;
	bool rx_markers;
	bool rtr_send;		/* P2P responder: the peer's RTR is a Send */
	bool tx_hold;		/* responder: no FPDU before the peer's */
};

/* swiwarp_qp.c */
void swiwarp_qp_state_init(struct swiwarp_qp *qp);
int swiwarp_qp_enter_rts(struct swiwarp_qp *qp,
			 const struct swiwarp_conn_params *c);
void swiwarp_qp_terminate_sent(struct swiwarp_qp *qp);
int swiwarp_qp_modify_state(struct swiwarp_qp *qp,
			    enum swiwarp_qp_state next);
void swiwarp_qp_error(struct swiwarp_qp *qp);
void swiwarp_qp_flush(struct swiwarp_qp *qp);
int swiwarp_qp_complete_sq(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe,
			   int status);
int swiwarp_qp_complete_rq(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe,
			   int status, u32 bytes, u32 inv_stag, bool se);
int swiwarp_qp_complete_imm(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe,
			    u32 bytes, u32 imm_data, bool se);
int swiwarp_qp_complete_recv_imm(struct swiwarp_qp *qp,
				 struct swiwarp_wqe *wqe, u32 bytes,
				 u32 imm_data, bool se);
bool swiwarp_rq_fetch(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe);
void swiwarp_wqe_put_mem(struct swiwarp_wqe *wqe);
void swiwarp_qp_free_rd(struct swiwarp_qp *qp);
void swiwarp_qp_event(struct swiwarp_qp *qp, enum ib_event_type type);

/* swiwarp_qp_tx.c */
void swiwarp_tx_work(struct work_struct *w);
void swiwarp_sq_kick(struct swiwarp_qp *qp);
void swiwarp_sq_kick_direct(struct swiwarp_qp *qp);
int swiwarp_tx_init(struct swiwarp_qp *qp);
void swiwarp_tx_free(struct swiwarp_qp *qp);
void swiwarp_tx_reset(struct swiwarp_qp *qp);
void swiwarp_tx_discard(struct swiwarp_qp *qp);
u8 *swiwarp_tx_alloc_buf(void);
u32 swiwarp_tx_frag_bvec(struct bio_vec *bv, const struct swiwarp_tx_frag *f);
void swiwarp_send_terminate(struct swiwarp_qp *qp, u8 layer_type, u8 ecode,
			    const u8 *seg, u32 ddp_hdr_len);
void swiwarp_send_terminate_rreq(struct swiwarp_qp *qp, u8 layer_type,
				 u8 ecode, const u8 *seg, u32 ddp_hdr_len,
				 const u8 *rreq);
int swiwarp_tx_rtr(struct swiwarp_qp *qp, int rtr);

/* swiwarp_zcopy.c (what TX alone uses: swiwarp_zcopy.h) */
bool swiwarp_tx_zc_inflight(struct swiwarp_qp *qp);

/* swiwarp_qp_rx.c */
int swiwarp_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
		     unsigned int off, size_t len);
void swiwarp_rx_reset(struct swiwarp_qp *qp);
void swiwarp_rx_cleanup(struct swiwarp_qp *qp);

/* swiwarp_cm.c */
int swiwarp_cm_init(void);
void swiwarp_cm_dev_cleanup(struct swiwarp_dev *sdev);
void swiwarp_cm_netdev_gone(struct swiwarp_dev *sdev);
void swiwarp_dev_mac(struct swiwarp_dev *sdev, u8 *mac);
void swiwarp_cm_exit(void);
int swiwarp_connect(struct iw_cm_id *id, struct iw_cm_conn_param *p);
int swiwarp_accept(struct iw_cm_id *id, struct iw_cm_conn_param *p);
int swiwarp_reject(struct iw_cm_id *id, const void *pdata, u8 plen);
int swiwarp_create_listen(struct iw_cm_id *id, int backlog);
int swiwarp_destroy_listen(struct iw_cm_id *id);
void swiwarp_cm_qp_drop(struct swiwarp_qp *qp, bool abort);
void swiwarp_cm_qp_drop_locked(struct swiwarp_qp *qp);
void swiwarp_cm_rtr_received(struct swiwarp_qp *qp);
void swiwarp_qp_llp_data_ready(struct sock *sk);
void swiwarp_qp_llp_write_space(struct sock *sk);

#endif /* SWIWARP_H */
