// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: zero-copy TX, the lifetime of user pages that TCP references.
 *
 * A zero-copy Send or Write (zcopy_tx_min) hands its pages to TCP with
 * MSG_ZEROCOPY and a ubuf_info of its own (struct swiwarp_zc); it
 * completes only when TCP dropped the last reference to those pages, i.e.
 * after the peer acknowledged the data and no retransmission can read the
 * buffer any more.  Until then it waits in tx.zc_ring, and so does every
 * later WQE, so that completions stay in SQ order; each waiting WQE keeps
 * its SQ slot, so the consumer can never have more work requests
 * outstanding than the SQ holds.  Read Responses may reference the pages
 * of their source region too (zcopy_rresp); they complete nothing here.
 *
 * The TX engine (swiwarp_qp_tx.c) calls in through swiwarp_zcopy.h under
 * the QP's tx_lock; only the ubuf_info callback runs in other contexts.
 */

#include <linux/module.h>
#include <linux/slab.h>
#include <net/sock.h>

#include "swiwarp.h"
#include "swiwarp_zcopy.h"

/*
 * Zero-copy Read Responses: the payload of a Read Response FPDU is handed
 * to TCP as references to the pinned pages of the source region instead
 * of being copied into the FPDU buffer.  Only without MPA CRC: the owner
 * of the source region knows nothing of a peer's Read and may change the
 * memory at any time, and TCP reads the pages when it transmits (and
 * again when it retransmits), after the CRC was computed; the peer would
 * see a CRC error and terminate the connection (libdpi hit it, session
 * 15).  Without CRC a concurrent change gives torn data, as on any RNIC.
 */
static bool zcopy_rresp = true;
module_param(zcopy_rresp, bool, 0644);
MODULE_PARM_DESC(zcopy_rresp,
		 "send Read Response payload from the registered user pages without copying, on connections without MPA CRC (default 1)");

/*
 * Zero-copy Sends and Writes of at least this many octets (0: never;
 * 16384 is the value tested).  Smaller ones are copied: a zero-copy WQE
 * completes only when its data is acknowledged, which adds the peer's
 * delayed ACK to its latency.  Off by default until the whole lab (siw
 * interop matrix, robustness suites) has passed with it, see
 * Documentation/kernel.md.
 */
static unsigned int zcopy_tx_min;
module_param(zcopy_tx_min, uint, 0644);
MODULE_PARM_DESC(zcopy_tx_min,
		 "send Sends and Writes of at least this many bytes from the registered user pages without copying, e.g. 16384; 0 disables (default 0)");

/*
 * The tracking object of one zero-copy WQE, or of a copied WQE that
 * retired behind one (tcp false).  Two owners: TCP, whose references are
 * counted in ubuf.refcnt (ours included until the WQE's last FPDU was
 * pushed), and the QP until it completed the WQE.  The object never
 * holds a QP reference, so destroying a QP never waits for TCP: the QP
 * detaches (qp = NULL) before it goes away, under swiwarp_zc_lock.  The
 * callback lives in this module, so an object handed to TCP pins it.
 */
struct swiwarp_zc {
	struct ubuf_info ubuf;
	refcount_t owners;
	struct swiwarp_qp *qp;		/* under swiwarp_zc_lock */
	bool acked;			/* under swiwarp_zc_lock */
	bool tcp;
	bool slot_held;
	u32 slot;
	int status;
	struct swiwarp_wqe wqe;
};

static DEFINE_SPINLOCK(swiwarp_zc_lock);

static void swiwarp_zc_put(struct swiwarp_zc *zc)
{
	bool tcp = zc->tcp;

	if (!refcount_dec_and_test(&zc->owners))
		return;
	kfree(zc);
	if (tcp)
		module_put(THIS_MODULE);
}

/*
 * TCP released one reference (skb freed, or the end of a sendmsg).  Any
 * context, possibly with interrupts off: only mark and kick.
 */
static void swiwarp_zc_callback(struct sk_buff *skb, struct ubuf_info *uarg,
				bool zerocopy_success)
{
	struct swiwarp_zc *zc = container_of(uarg, struct swiwarp_zc, ubuf);
	unsigned long flags;

	/*
	 * The stack copied these pages after all (rare): the lock keeps
	 * the QP, and so its device, from going away while we count.
	 */
	if (unlikely(!zerocopy_success)) {
		spin_lock_irqsave(&swiwarp_zc_lock, flags);
		if (zc->qp)
			swiwarp_stat_inc(zc->qp->sdev, SWIWARP_STAT_ZC_COPIED);
		spin_unlock_irqrestore(&swiwarp_zc_lock, flags);
	}
	if (!refcount_dec_and_test(&uarg->refcnt))
		return;
	spin_lock_irqsave(&swiwarp_zc_lock, flags);
	zc->acked = true;
	if (zc->qp) {
		atomic_dec(&zc->qp->zc_inflight);
		swiwarp_sq_kick(zc->qp);
	}
	spin_unlock_irqrestore(&swiwarp_zc_lock, flags);
	swiwarp_zc_put(zc);
}

static const struct swiwarp_ubuf_ops swiwarp_zc_ubuf_ops = {
	.complete = swiwarp_zc_callback,
};

static struct swiwarp_zc *swiwarp_zc_alloc(struct swiwarp_qp *qp, bool tcp)
{
	struct swiwarp_zc *zc;

	/* A copied WQE waiting behind a zero-copy one must not fail. */
	if (tcp)
		zc = swiwarp_alloc(kzalloc(sizeof(*zc), GFP_KERNEL));
	else
		zc = kzalloc(sizeof(*zc), GFP_KERNEL | __GFP_NOFAIL);
	if (!zc)
		return NULL;
	zc->qp = qp;
	zc->tcp = tcp;
	if (!tcp) {
		zc->acked = true;
		refcount_set(&zc->owners, 1);
		return zc;
	}
	__module_get(THIS_MODULE);
	swiwarp_ubuf_init(&zc->ubuf, &swiwarp_zc_ubuf_ops);
	refcount_set(&zc->ubuf.refcnt, 1);
	zc->ubuf.flags = SKBFL_ZEROCOPY_FRAG | SKBFL_DONT_ORPHAN;
	refcount_set(&zc->owners, 2);
	atomic_inc(&qp->zc_inflight);
	swiwarp_stat_inc(qp->sdev, SWIWARP_STAT_ZC_WQES);
	return zc;
}

static bool swiwarp_zc_acked(struct swiwarp_zc *zc)
{
	unsigned long flags;
	bool acked;

	spin_lock_irqsave(&swiwarp_zc_lock, flags);
	acked = zc->acked;
	spin_unlock_irqrestore(&swiwarp_zc_lock, flags);
	return acked;
}

/* The QP is done with zc (completed, flushed or going away). */
static void swiwarp_zc_detach(struct swiwarp_zc *zc)
{
	unsigned long flags;

	spin_lock_irqsave(&swiwarp_zc_lock, flags);
	if (zc->qp && !zc->acked)
		atomic_dec(&zc->qp->zc_inflight);
	zc->qp = NULL;
	spin_unlock_irqrestore(&swiwarp_zc_lock, flags);
	swiwarp_zc_put(zc);
}

/* Does TCP still hold pages of a zero-copy WQE of qp?  Any context. */
bool swiwarp_tx_zc_inflight(struct swiwarp_qp *qp)
{
	return atomic_read(&qp->zc_inflight) > 0;
}

/* Is the freshly fetched, validated SQE worth sending zero-copy? */
bool swiwarp_zc_want(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe)
{
	u32 min = READ_ONCE(zcopy_tx_min);
	int i;

	if (!min || wqe->bytes < min || qp->tx_markers ||
	    (wqe->sqe.flags & SWIWARP_WQE_INLINE))
		return false;
	switch (wqe->sqe.opcode) {
	case SWIWARP_OP_WRITE:
	case SWIWARP_OP_SEND:
	case SWIWARP_OP_SEND_INV:
		break;
	default:
		return false;
	}
	for (i = 0; i < wqe->sqe.num_sge; i++)
		if (wqe->sqe.sge[i].length &&
		    (!wqe->mem[i] || wqe->mem[i]->type != SWIWARP_MEM_UMEM))
			return false;
	return true;
}

/*
 * Does a Read Response FPDU of qp go out from the source pages?  Never
 * with markers: they would have to be spliced between the page pieces at
 * stream positions and be CRC-covered; one copying path is simpler and
 * markers are rare.  Never with CRC either (zcopy_rresp above).
 */
bool swiwarp_zc_rresp(struct swiwarp_qp *qp)
{
	return READ_ONCE(zcopy_rresp) && !qp->tx_markers && !qp->crc;
}

/*
 * Track the active WQE, about to send its first FPDU, as a zero-copy one
 * (swiwarp_zc_want() said so).  Without memory it is simply copied.
 */
void swiwarp_zc_begin(struct swiwarp_qp *qp)
{
	qp->tx.zc = swiwarp_zc_alloc(qp, true);
}

/* The FPDU just framed as page pieces goes to TCP by reference. */
void swiwarp_zc_frame(struct swiwarp_qp *qp)
{
	qp->tx.ubuf = &qp->tx.zc->ubuf;
	swiwarp_stat_inc(qp->sdev, SWIWARP_STAT_ZC_FPDUS);
}

/*
 * Zero-copy pieces: send the run of page pieces frag[i] ... (from octet
 * off of frag[i]) in one sendmsg whose pages TCP references on behalf
 * of tx.ubuf (the pieces the TX engine framed, swiwarp_zc_frame()).
 * Returns the octets taken, like sendmsg.
 */
int swiwarp_zc_send(struct swiwarp_qp *qp, u32 i, u32 off, int flags)
{
	struct swiwarp_tx *tx = &qp->tx;
	struct bio_vec bv[SWIWARP_TX_FRAGS];
	struct msghdr msg = {
		.msg_flags = flags | MSG_ZEROCOPY,
		.msg_ubuf = tx->ubuf,
	};
	u32 n = 0, len = 0;
	int rv;

	for (; i < tx->nfrag && tx->frag[i].page; i++) {
		n += swiwarp_tx_frag_bvec(bv + n, &tx->frag[i]);
		len += tx->frag[i].len;
	}
	if (i < tx->nfrag || tx->more)
		msg.msg_flags |= MSG_MORE;
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, n, len);
	iov_iter_advance(&msg.msg_iter, off);
	rv = sock_sendmsg(qp->sock, &msg);
	if (rv > 0)
		swiwarp_stat_add(qp->sdev, SWIWARP_STAT_ZC_BYTES, rv);
	return rv;
}

/*
 * The active SQ WQE is done (status) but must wait: it was sent
 * zero-copy, or earlier WQEs wait.  Queue it behind them with its SQ
 * slot; swiwarp_zc_reap() completes it.
 */
void swiwarp_zc_queue(struct swiwarp_qp *qp, int status)
{
	struct swiwarp_wqe *wqe = &qp->tx.wqe;
	struct swiwarp_zc *zc = qp->tx.zc;

	if (!zc)
		zc = swiwarp_zc_alloc(qp, false);
	qp->tx.zc = NULL;
	qp->tx.ubuf = NULL;
	zc->wqe = *wqe;
	zc->status = status;
	zc->slot = qp->tx.slot;
	zc->slot_held = qp->tx.slot_held;
	qp->tx.slot_held = false;
	memset(wqe->mem, 0, sizeof(wqe->mem));
	wqe->active = false;
	qp->tx.zc_ring[qp->tx.zc_put++ & (qp->num_sqe - 1)] = zc;
	/* The WQE's last FPDU is pushed: drop our TCP-side reference. */
	if (zc->tcp)
		net_zcopy_put(&zc->ubuf);
}

/*
 * Complete the waiting WQEs at the head of the ring whose pages TCP
 * released; with flush, all of them, those still waiting with
 * WR_FLUSH_ERR.  Each hands its SQ slot back before its CQE appears.
 */
void swiwarp_zc_reap(struct swiwarp_qp *qp, bool flush)
{
	while (!swiwarp_zc_ring_empty(qp)) {
		u32 i = qp->tx.zc_get & (qp->num_sqe - 1);
		struct swiwarp_zc *zc = qp->tx.zc_ring[i];
		int status = zc->status;

		if (!swiwarp_zc_acked(zc)) {
			if (!flush)
				break;
			status = SWIWARP_WC_WR_FLUSH_ERR;
		}
		qp->tx.zc_ring[i] = NULL;
		qp->tx.zc_get++;
		if (zc->slot_held)
			swiwarp_flags_release(&qp->sendq[zc->slot &
					      (qp->num_sqe - 1)].flags, 0);
		swiwarp_qp_complete_sq(qp, &zc->wqe, status);
		swiwarp_zc_detach(zc);
	}
}

/* Give up the zero-copy tracking of the active WQE (error paths). */
void swiwarp_zc_abort(struct swiwarp_qp *qp)
{
	struct swiwarp_zc *zc = qp->tx.zc;

	qp->tx.ubuf = NULL;
	if (!zc)
		return;
	qp->tx.zc = NULL;
	net_zcopy_put(&zc->ubuf);
	swiwarp_zc_detach(zc);
}

/* The ring of retired WQEs waiting for their completion: one per SQE. */
int swiwarp_zc_init(struct swiwarp_qp *qp)
{
	qp->tx.zc_ring = swiwarp_alloc(kvcalloc(qp->num_sqe, sizeof(*qp->tx.zc_ring),
						GFP_KERNEL));
	return qp->tx.zc_ring ? 0 : -ENOMEM;
}

/* Teardown, under tx_lock: no CQEs any more, just release everything. */
void swiwarp_zc_free(struct swiwarp_qp *qp)
{
	swiwarp_zc_abort(qp);
	while (qp->tx.zc_ring && !swiwarp_zc_ring_empty(qp)) {
		struct swiwarp_zc *zc =
			qp->tx.zc_ring[qp->tx.zc_get++ & (qp->num_sqe - 1)];

		swiwarp_wqe_put_mem(&zc->wqe);
		swiwarp_zc_detach(zc);
	}
	kvfree(qp->tx.zc_ring);
	qp->tx.zc_ring = NULL;
}
