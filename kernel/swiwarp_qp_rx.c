// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: RX engine.
 *
 * Runs from the socket's data-ready upcall (softirq, or process context
 * right after the QP took over the socket) through tcp_read_sock(); it
 * never sleeps.  A small state machine walks the byte stream FPDU by
 * FPDU: header (MPA length, DDP/RDMAP header), payload, pad + CRC.
 * Payload is copied straight from the skbs into the target buffers:
 * tagged segments (Write, Read Response) at STag/TO after a PD, access
 * and bounds check, untagged Sends into the next RQ/SRQ buffer.  Every
 * length, offset and STag that comes from the network is checked before
 * use; a violation sends a Terminate with the RFC 5040/5041/5044 layer,
 * type and code and stops all further input.
 *
 * All state is under qp->rx_lock.
 */

#include <linux/skbuff.h>

#include "swiwarp.h"
#include "iwarp/markers.h"
#include "iwarp/rdmap.h"

#define RX_HDR_MIN (IWARP_MPA_ULPDU_LEN_FIELD + 1)

/* one expected MSN per DDP untagged queue, RFC 7306's queue 3 included */
static_assert(ARRAY_SIZE(((struct swiwarp_rx *)0)->msn_next) == IWARP_DDP_QN_COUNT);

void swiwarp_rx_reset(struct swiwarp_qp *qp)
{
	struct swiwarp_rx *rx = &qp->rx;

	if (rx->tmem)
		swiwarp_mem_put(rx->tmem);
	rx->tmem = NULL;
	if (rx->rwqe_active)
		swiwarp_wqe_put_mem(&rx->rwqe);
	rx->rwqe_active = false;
	rx->state = SWIWARP_RX_HDR;
	rx->hdr_need = RX_HDR_MIN;
	rx->hdr_have = 0;
	rx->msn_next[0] = 1;
	rx->msn_next[1] = 1;
	rx->msn_next[2] = 1;
	rx->msn_next[3] = 1;
	rx->mo = 0;
	rx->first_done = false;
	rx->mk_pos = 0;
	rx->mk_seen = 0;
	rx->mk_hdr_at = 0;
	rx->mk_trailer = false;
	rx->rtr_send = false;
	rx->rtr_skip = false;
	rx->imm_pending = false;
	rx->imm_send = false;
	rx->write_len = 0;
	rx->write_done_len = 0;
}

void swiwarp_rx_cleanup(struct swiwarp_qp *qp)
{
	spin_lock_bh(&qp->rx_lock);
	if (qp->rx.tmem)
		swiwarp_mem_put(qp->rx.tmem);
	qp->rx.tmem = NULL;
	if (qp->rx.rwqe_active)
		swiwarp_wqe_put_mem(&qp->rx.rwqe);
	qp->rx.rwqe_active = false;
	spin_unlock_bh(&qp->rx_lock);
}

/* Stop input for good and ask for the connection to go down. */
static void swiwarp_rx_fatal(struct swiwarp_qp *qp, u8 layer, u8 etype,
			     u8 ecode, bool with_hdr)
{
	struct swiwarp_rx *rx = &qp->rx;
	u32 hl = iwarp_ddp_hdr_len(rx->tagged);
	const u8 *rreq = NULL;

	rx->state = SWIWARP_RX_ERROR;
	pr_info_ratelimited("swiwarp: QP %u: RX error layer %u type %u code %u (op %u)\n",
			    qp->id, layer, etype, ecode, rx->opcode);
	/*
	 * An RDMA Read Request refused once its whole header was in: the
	 * Terminate carries a copy of it (R, RFC 5040 section 4.8).
	 */
	if (with_hdr && !rx->tagged && rx->opcode == IWARP_OP_READ_REQUEST &&
	    rx->hdr_have >= IWARP_MPA_ULPDU_LEN_FIELD + hl +
	    IWARP_RDMAP_READ_REQ_LEN)
		rreq = rx->hdr + IWARP_MPA_ULPDU_LEN_FIELD + hl;
	swiwarp_send_terminate_rreq(qp, (layer << 4) | etype, ecode,
				    with_hdr ? rx->hdr : NULL,
				    with_hdr ? hl : 0, rreq);
}

static void rx_term_tagged(struct swiwarp_qp *qp, u8 code)
{
	swiwarp_rx_fatal(qp, IWARP_TERM_LAYER_DDP,
			 IWARP_TERM_DDP_ETYPE_TAGGED, code, true);
}

static void rx_term_untagged(struct swiwarp_qp *qp, u8 code)
{
	swiwarp_rx_fatal(qp, IWARP_TERM_LAYER_DDP,
			 IWARP_TERM_DDP_ETYPE_UNTAGGED, code, true);
}

static void swiwarp_rx_term_rdmap(struct swiwarp_qp *qp, u8 etype, u8 code)
{
	swiwarp_rx_fatal(qp, IWARP_TERM_LAYER_RDMAP, etype, code, true);
}

static void rx_term_op(struct swiwarp_qp *qp, u8 code)
{
	swiwarp_rx_term_rdmap(qp, IWARP_TERM_RDMAP_ETYPE_OPERATION, code);
}

static void rx_term_prot(struct swiwarp_qp *qp, u8 code)
{
	swiwarp_rx_term_rdmap(qp, IWARP_TERM_RDMAP_ETYPE_PROTECTION, code);
}

/* Map a swiwarp_mem_check() result to a tagged-buffer Terminate. */
static void swiwarp_rx_term_mem(struct swiwarp_qp *qp, int err)
{
	if (err == -EACCES)
		rx_term_prot(qp, IWARP_TERM_RDMAP_ACCESS_RIGHTS);
	else if (err == -ERANGE)
		rx_term_tagged(qp, IWARP_TERM_DDP_T_BASE_BOUNDS);
	else if (err == -EPERM)
		rx_term_tagged(qp, IWARP_TERM_DDP_T_STAG_NOT_ASSOC);
	else
		rx_term_tagged(qp, IWARP_TERM_DDP_T_INVALID_STAG);
}

/*
 * The source of an RDMA Read Request or the target of an Atomic Request
 * (RFC 7306 registered no Terminate codes of its own, so the same RFC
 * 5040 remote protection errors): look the STag up and check it with
 * access right 'access' for [to, to + len).  0 if it may be used; else
 * the stream ends with the Terminate for the first check that failed:
 * invalid STag (0x00), STag of another protection domain than the QP's
 * (0x03, not associated with this RDMAP Stream), missing access right
 * (0x02), outside the region (0x01).
 */
static int rx_check_remote(struct swiwarp_qp *qp, u32 stag, int access,
			   u64 to, u64 len)
{
	struct swiwarp_mem *mem = swiwarp_mem_get(qp->sdev, stag);
	u8 code = IWARP_TERM_RDMAP_INVALID_STAG;
	int rv = -EINVAL;

	if (mem) {
		rv = swiwarp_mem_check(mem, qp->base.pd, access, to, len);
		swiwarp_mem_put(mem);
	}
	if (!rv)
		return 0;
	if (rv == -ERANGE)
		code = IWARP_TERM_RDMAP_BASE_BOUNDS;
	else if (rv == -EACCES)
		code = IWARP_TERM_RDMAP_ACCESS_RIGHTS;
	else if (rv == -EPERM)
		code = IWARP_TERM_RDMAP_STAG_NOT_ASSOC;
	rx_term_prot(qp, code);
	return rv;
}

/* ------------------------------------------------------ placement */

struct swiwarp_skb_src {
	struct sk_buff *skb;
	unsigned int off;
	u32 *crc;
};

static int swiwarp_chunk_from_skb(void *kva, u32 len, void *arg)
{
	struct swiwarp_skb_src *s = arg;

	if (skb_copy_bits(s->skb, s->off, kva, len))
		return -EFAULT;
	if (s->crc)
		*s->crc = swiwarp_crc32c(*s->crc, kva, len);
	s->off += len;
	return 0;
}

/*
 * Take the receive WQE an untagged message on queue 0 consumes into
 * rx->rwqe.  No RQE posted: Terminate (no buffer).  A bad RQE (malformed,
 * or with places set an SGL we may not write) is completed with its error
 * and the stream ends with a catastrophic Terminate, as the peer's message
 * cannot be delivered.
 *
 * places: the message writes the RQE's buffer (a Send).  Only then is
 * the SGL checked (swiwarp_wqe_check_sgl(): every SGE a valid local-write
 * region of our PD, at most SWIWARP_MAX_MSG in all; it also sets
 * rwqe.bytes and takes the memory references placement uses).  The
 * placed length against rwqe.bytes is the Send path's own check.  An
 * Immediate Data message (RFC 7306) places nothing (its data went by the
 * RDMA Write before it): the RQE only gives the completion its wr_id and
 * its buffer is never touched, as for the receive an RDMA Write with
 * Immediate consumes in InfiniBand.  So the SGL is not looked at: an SGE
 * we could not write (even one whose MR is gone) does not fail it; only a
 * malformed RQE (rwqe.status) does.  No memory references are taken, so
 * the completion's swiwarp_wqe_put_mem() has none to drop.
 */
static int swiwarp_rx_take_rwqe(struct swiwarp_qp *qp, bool places)
{
	struct swiwarp_rx *rx = &qp->rx;
	int st;

	if (!swiwarp_rq_fetch(qp, &rx->rwqe)) {
		rx_term_untagged(qp, IWARP_TERM_DDP_U_MSN_NO_BUFFER);
		return -EINVAL;
	}
	rx->rwqe_active = true;
	st = rx->rwqe.status;
	if (!st && places)
		st = swiwarp_wqe_check_sgl(qp, &rx->rwqe,
					   IB_ACCESS_LOCAL_WRITE);
	if (st) {
		rx->rwqe_active = false;
		swiwarp_qp_complete_rq(qp, &rx->rwqe, st, 0, 0, false);
		swiwarp_rx_fatal(qp, IWARP_TERM_LAYER_RDMAP,
				 IWARP_TERM_RDMAP_ETYPE_CATASTROPHIC,
				 IWARP_TERM_RDMAP_CATASTROPHIC, true);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------- header dispatch */

static int swiwarp_rx_setup_write(struct swiwarp_qp *qp)
{
	struct swiwarp_rx *rx = &qp->rx;
	struct swiwarp_mem *mem = rx->tmem;
	int rv;

	/* Wraps only for a peer's endless Write: a wrong length, no harm. */
	rx->write_len += rx->data_left;
	if (!rx->data_left)
		return 0;	/* zero-length Write (e.g. RTR): no access */
	if (!mem || mem->stag != rx->stag) {
		if (mem)
			swiwarp_mem_put(mem);
		rx->tmem = NULL;
		mem = swiwarp_mem_get(qp->sdev, rx->stag);
		if (!mem) {
			rx_term_tagged(qp, IWARP_TERM_DDP_T_INVALID_STAG);
			return -EINVAL;
		}
		rx->tmem = mem;
	}
	rv = swiwarp_mem_check(mem, qp->base.pd, IB_ACCESS_REMOTE_WRITE,
			       rx->to, rx->data_left);
	if (rv) {
		swiwarp_rx_term_mem(qp, rv);
		return rv;
	}
	return 0;
}

static int swiwarp_rx_setup_rresp(struct swiwarp_qp *qp)
{
	struct swiwarp_rx *rx = &qp->rx;
	struct swiwarp_orq_entry *o = NULL;
	struct swiwarp_wqe *wqe;
	unsigned long flags;
	u64 end;

	spin_lock_irqsave(&qp->orq_lock, flags);
	if (qp->orq && qp->orq_get != qp->orq_put)
		o = &qp->orq[qp->orq_get & (qp->orq_size - 1)];
	spin_unlock_irqrestore(&qp->orq_lock, flags);
	/* A Read Response where an Atomic Response is due is unexpected. */
	if (!o || !o->valid || swiwarp_op_is_atomic(o->wqe.sqe.opcode)) {
		rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
		return -EINVAL;
	}
	wqe = &o->wqe;
	if (!wqe->bytes) {
		if (rx->data_left) {
			rx_term_tagged(qp, IWARP_TERM_DDP_T_BASE_BOUNDS);
			return -EINVAL;
		}
		return 0;
	}
	/* The response must target our sink buffer, in order. */
	if (rx->stag != wqe->sqe.sge[0].lkey) {
		rx_term_tagged(qp, IWARP_TERM_DDP_T_INVALID_STAG);
		return -EINVAL;
	}
	if (rx->to != wqe->sqe.sge[0].addr + wqe->processed ||
	    check_add_overflow((u64)wqe->processed, (u64)rx->data_left, &end) ||
	    end > wqe->bytes) {
		rx_term_tagged(qp, IWARP_TERM_DDP_T_BASE_BOUNDS);
		return -EINVAL;
	}
	rx->rresp = o;
	return 0;
}

static int swiwarp_rx_setup_send(struct swiwarp_qp *qp)
{
	struct swiwarp_rx *rx = &qp->rx;
	u64 end;

	if (rx->msn != rx->msn_next[IWARP_DDP_QN_SEND]) {
		rx_term_untagged(qp, IWARP_TERM_DDP_U_MSN_RANGE);
		return -EINVAL;
	}
	if (rx->seg_mo != rx->mo) {
		rx_term_untagged(qp, IWARP_TERM_DDP_U_INVALID_MO);
		return -EINVAL;
	}
	if (!rx->rwqe_active && swiwarp_rx_take_rwqe(qp, true))
		return -EINVAL;
	if (check_add_overflow((u64)rx->mo, (u64)rx->data_left, &end) ||
	    end > rx->rwqe.bytes) {
		rx->rwqe_active = false;
		swiwarp_qp_complete_rq(qp, &rx->rwqe, SWIWARP_WC_LOC_LEN_ERR,
				       0, 0, false);
		rx_term_untagged(qp, IWARP_TERM_DDP_U_TOO_LONG);
		return -EINVAL;
	}
	/* The Send a flagged Immediate Data announced: it carries the value. */
	if (rx->imm_pending) {
		rx->imm_pending = false;
		rx->imm_send = true;
	}
	return 0;
}

/*
 * The checks every RFC 7306 message starts with (Immediate Data, Atomic
 * Request and Response): only a peer we told in the MPA exchange that we
 * speak RFC 7306 may send one (from any other it is an unknown opcode, as
 * before), and each is one whole DDP segment without payload.
 */
static int rx_rfc7306_whole(struct swiwarp_qp *qp)
{
	struct swiwarp_rx *rx = &qp->rx;

	if (!qp->peer_rfc7306) {
		rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
		return -EOPNOTSUPP;
	}
	if (rx->data_left || !rx->last) {
		rx_term_untagged(qp, IWARP_TERM_DDP_U_TOO_LONG);
		return -EINVAL;
	}
	return 0;
}

/*
 * An Immediate Data message (RFC 7306), header and its 8 octets in hand
 * (rx_rfc7306_whole() checked the peer and the segment).  It is a
 * whole untagged message on queue 0: it takes the next Send MSN and one
 * receive WQE, whose buffer stays untouched; the value is in octets 0-3
 * (swiwarp_tx_build_imm()).
 *
 * Flagged IWARP_IMM_FLAG_SEND_FOLLOWS in octets 4-7 (swiwarp's Send with
 * Immediate, only from a peer that negotiated RFC 7306): it takes the
 * Send MSN but no receive WQE; the value waits in rx->imm_data for the
 * Send that must come next (swiwarp_rx_header() refuses anything else)
 * and completes with that Send's receive WQE.  The Solicited Event is
 * the Send's: a flagged Immediate Data with SE is not ours to accept.
 */
static int swiwarp_rx_immediate(struct swiwarp_qp *qp,
				const struct iwarp_rdmap_msg *msg)
{
	struct swiwarp_rx *rx = &qp->rx;
	int rv = rx_rfc7306_whole(qp);
	bool send = (u32)msg->immediate & IWARP_IMM_FLAG_SEND_FOLLOWS;

	if (rv)
		return rv;
	if (send && msg->opcode != IWARP_OP_IMMEDIATE) {
		rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
		return -EINVAL;
	}
	if (rx->msn != rx->msn_next[IWARP_DDP_QN_SEND]) {
		rx_term_untagged(qp, IWARP_TERM_DDP_U_MSN_RANGE);
		return -EINVAL;
	}
	if (rx->seg_mo || rx->rwqe_active) {
		rx_term_untagged(qp, IWARP_TERM_DDP_U_INVALID_MO);
		return -EINVAL;
	}
	if (!send && swiwarp_rx_take_rwqe(qp, false))
		return -EINVAL;
	rx->imm_data = (__force u32)cpu_to_be32((u32)(msg->immediate >> 32));
	rx->imm_pending = send;
	return 0;
}

/* A complete Read Request: check and queue it for the TX engine. */
static int swiwarp_rx_read_request(struct swiwarp_qp *qp,
				   const struct iwarp_rdmap_msg *msg)
{
	struct swiwarp_rx *rx = &qp->rx;
	const struct iwarp_rdmap_read_req *rr = &msg->rreq;
	struct swiwarp_irq_entry *e;
	unsigned long flags;

	if (rx->msn != rx->msn_next[IWARP_DDP_QN_READ_REQUEST]) {
		rx_term_untagged(qp, IWARP_TERM_DDP_U_MSN_RANGE);
		return -EINVAL;
	}
	if (rr->size > SWIWARP_MAX_MSG) {
		rx_term_prot(qp, IWARP_TERM_RDMAP_BASE_BOUNDS);
		return -EINVAL;
	}
	if (rr->size && rx_check_remote(qp, rr->src_stag, IB_ACCESS_REMOTE_READ,
					rr->src_to, rr->size))
		return -EINVAL;

	spin_lock_irqsave(&qp->orq_lock, flags);
	if (!qp->irq ||
	    qp->irq_put - qp->irq_get >= min(max(qp->ird, 1U), qp->irq_size)) {
		spin_unlock_irqrestore(&qp->orq_lock, flags);
		/* More outstanding Reads than our IRD allows. */
		rx_term_untagged(qp, IWARP_TERM_DDP_U_MSN_RANGE);
		return -EINVAL;
	}
	e = &qp->irq[qp->irq_put & (qp->irq_size - 1)];
	e->sink_stag = rr->sink_stag;
	e->sink_to = rr->sink_to;
	e->src_stag = rr->src_stag;
	e->src_to = rr->src_to;
	e->len = rr->size;
	e->atomic = false;
	e->valid = true;
	qp->irq_put++;
	spin_unlock_irqrestore(&qp->orq_lock, flags);
	rx->msn_next[IWARP_DDP_QN_READ_REQUEST]++;
	swiwarp_sq_kick(qp);
	return 0;
}

/*
 * RFC 7306 Atomic Request or Response, header and its fixed fields in
 * hand: only from a peer that announced RFC 7306 (otherwise an unknown
 * opcode, as before), a whole message without payload.  The request is
 * checked and queued only when its CRC was checked too
 * (swiwarp_rx_atomic_request()), as it changes memory.
 */
static int swiwarp_rx_atomic_hdr(struct swiwarp_qp *qp,
				 const struct iwarp_rdmap_msg *msg)
{
	struct swiwarp_rx *rx = &qp->rx;
	int rv = rx_rfc7306_whole(qp);

	if (rv)
		return rv;
	if (msg->opcode == IWARP_OP_ATOMIC_RESPONSE) {
		struct swiwarp_orq_entry *o = NULL;
		unsigned long flags;
		bool ok;

		if (rx->msn != rx->msn_next[IWARP_DDP_QN_ATOMIC_RESPONSE]) {
			rx_term_untagged(qp, IWARP_TERM_DDP_U_MSN_RANGE);
			return -EINVAL;
		}
		/*
		 * Our responder answers Reads and Atomics in order, so the
		 * response must be for the oldest outstanding request.
		 */
		spin_lock_irqsave(&qp->orq_lock, flags);
		if (qp->orq && qp->orq_get != qp->orq_put)
			o = &qp->orq[qp->orq_get & (qp->orq_size - 1)];
		ok = o && o->valid && swiwarp_op_is_atomic(o->wqe.sqe.opcode) &&
			o->req_id == msg->aresp.req_id;
		spin_unlock_irqrestore(&qp->orq_lock, flags);
		if (!ok) {
			rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
			return -EINVAL;
		}
		rx->aresp_id = msg->aresp.req_id;
		rx->aresp_value = msg->aresp.orig_value;
		return 0;
	}
	memset(&rx->areq, 0, sizeof(rx->areq));
	rx->areq.atomic = true;
	rx->areq.aop = msg->areq.aopcode;
	rx->areq.req_id = msg->areq.req_id;
	rx->areq.src_stag = msg->areq.stag;
	rx->areq.src_to = msg->areq.to;
	rx->areq.add_swap = msg->areq.add_swap;
	rx->areq.add_swap_mask = msg->areq.add_swap_mask;
	rx->areq.compare = msg->areq.compare;
	rx->areq.compare_mask = msg->areq.compare_mask;
	return 0;
}

/*
 * A complete Atomic Request (CRC checked): check it like a Read Request
 * (it takes the next queue-1 MSN and one IRD slot)
 * and queue it behind the Reads before it; the TX engine performs it
 * and sends the Atomic Response in that order.  Anything that would
 * touch memory outside a registered 8-octet target with the
 * REMOTE_ATOMIC right of our PD ends the stream with a Terminate.
 */
static void swiwarp_rx_atomic_request(struct swiwarp_qp *qp)
{
	struct swiwarp_rx *rx = &qp->rx;
	struct swiwarp_irq_entry *a = &rx->areq;
	unsigned long flags;

	if (rx->msn != rx->msn_next[IWARP_DDP_QN_ATOMIC_REQUEST]) {
		rx_term_untagged(qp, IWARP_TERM_DDP_U_MSN_RANGE);
		return;
	}
	/*
	 * RFC 7306 assigns two AOpCodes, FetchAdd and CmpSwap (IANA RDDP
	 * "RDMAP Message Atomic Operation Subcodes": 1 is reserved, 3-15
	 * unassigned); any other is an operation we do not have.
	 */
	if (a->aop != IWARP_AOP_FETCH_ADD && a->aop != IWARP_AOP_COMPARE_SWAP) {
		rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
		return;
	}
	if (rx_check_remote(qp, a->src_stag, IB_ACCESS_REMOTE_ATOMIC,
			    a->src_to, sizeof(u64)))
		return;
	/*
	 * The 64-bit target must be naturally aligned; a misaligned one
	 * inside the region is refused as a base or bounds violation.
	 */
	if (!IS_ALIGNED(a->src_to, sizeof(u64))) {
		rx_term_prot(qp, IWARP_TERM_RDMAP_BASE_BOUNDS);
		return;
	}
	spin_lock_irqsave(&qp->orq_lock, flags);
	if (!qp->irq ||
	    qp->irq_put - qp->irq_get >= min(max(qp->ird, 1U), qp->irq_size)) {
		spin_unlock_irqrestore(&qp->orq_lock, flags);
		/* More outstanding Reads and Atomics than our IRD allows. */
		rx_term_untagged(qp, IWARP_TERM_DDP_U_MSN_RANGE);
		return;
	}
	a->valid = true;
	qp->irq[qp->irq_put & (qp->irq_size - 1)] = *a;
	qp->irq_put++;
	spin_unlock_irqrestore(&qp->orq_lock, flags);
	rx->msn_next[IWARP_DDP_QN_ATOMIC_REQUEST]++;
	swiwarp_sq_kick(qp);
}

/*
 * Take the oldest ORQ entry off the queue into *wqe once its response is
 * complete: a Read's (atomic false) or the Atomic numbered req_id.  The
 * response's first segment was checked against that entry
 * (swiwarp_rx_setup_rresp(), swiwarp_rx_atomic_hdr()); the check is
 * repeated under orq_lock because a flush may have emptied the ORQ since.
 * False when the head is not the entry expected.
 */
static bool swiwarp_orq_take_head(struct swiwarp_qp *qp, bool atomic,
				  u32 req_id, struct swiwarp_wqe *wqe)
{
	struct swiwarp_orq_entry *o;
	unsigned long flags;
	bool taken = false;

	spin_lock_irqsave(&qp->orq_lock, flags);
	if (qp->orq && qp->orq_get != qp->orq_put) {
		o = &qp->orq[qp->orq_get & (qp->orq_size - 1)];
		if (o->valid &&
		    swiwarp_op_is_atomic(o->wqe.sqe.opcode) == atomic &&
		    (!atomic || o->req_id == req_id)) {
			*wqe = o->wqe;
			memset(&o->wqe, 0, sizeof(o->wqe));
			o->valid = false;
			qp->orq_get++;
			taken = true;
		}
	}
	spin_unlock_irqrestore(&qp->orq_lock, flags);
	return taken;
}

/*
 * A complete Atomic Response: the original value goes into the 8-octet
 * sink of the oldest ORQ entry (checked in swiwarp_rx_atomic_hdr()),
 * in host byte order as the verbs define it, and the Atomic completes.
 */
static void swiwarp_rx_atomic_response(struct swiwarp_qp *qp)
{
	struct swiwarp_rx *rx = &qp->rx;
	struct swiwarp_wqe wqe;
	int st;

	rx->msn_next[IWARP_DDP_QN_ATOMIC_RESPONSE]++;
	if (!swiwarp_orq_take_head(qp, true, rx->aresp_id, &wqe)) {
		rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
		return;
	}
	st = SWIWARP_WC_SUCCESS;
	if (!wqe.mem[0] ||
	    swiwarp_mem_copy(wqe.mem[0], wqe.sqe.atomic.sink.addr,
			     &rx->aresp_value, sizeof(u64), true))
		st = SWIWARP_WC_LOC_PROT_ERR;
	wqe.bytes = sizeof(u64);
	swiwarp_qp_complete_sq(qp, &wqe, st);
	/* Fenced or ORQ-blocked work may proceed. */
	swiwarp_sq_kick(qp);
}

/*
 * The completion status of the request a Terminate from the peer
 * reports an error against; 0 where it names no request of ours (an
 * MPA error).  RFC 7306 registered no Terminate codes of its own (the
 * IANA RDDP "RDMAP Errors" registry lists RFC 5040's only), so an
 * Atomic Request is refused with the RFC 5040 codes as a Read Request
 * is: a protection error (bad STag, base or bounds, access rights) is
 * a remote access error; a request the peer would not take at all (bad
 * RDMAP version or opcode, a DDP untagged-queue error such as more
 * outstanding requests than its IRD) an invalid request; anything else
 * the peer could not do a remote operation error.
 */
static int swiwarp_term_wc_status(const struct iwarp_term *t)
{
	switch (t->layer) {
	case IWARP_TERM_LAYER_RDMAP:
		if (t->etype == IWARP_TERM_RDMAP_ETYPE_PROTECTION)
			return SWIWARP_WC_REM_ACCESS_ERR;
		if (t->etype == IWARP_TERM_RDMAP_ETYPE_OPERATION &&
		    (t->ecode == IWARP_TERM_RDMAP_VERSION ||
		     t->ecode == IWARP_TERM_RDMAP_OPCODE))
			return SWIWARP_WC_REM_INV_REQ_ERR;
		return SWIWARP_WC_REM_OP_ERR;
	case IWARP_TERM_LAYER_DDP:
		if (t->etype == IWARP_TERM_DDP_ETYPE_UNTAGGED)
			return SWIWARP_WC_REM_INV_REQ_ERR;
		if (t->etype == IWARP_TERM_DDP_ETYPE_TAGGED)
			return SWIWARP_WC_REM_ACCESS_ERR;
		return SWIWARP_WC_REM_OP_ERR;
	default:
		return 0;
	}
}

/*
 * Find the outstanding RDMA Read or Atomic a Terminate from the peer
 * reports, and make its work request complete with the matching error
 * when the ORQ is flushed (swiwarp_tx_flush()); the ones after it are
 * flushed.  Reads and Atomics are the only work requests still waiting
 * for the peer (a Write or Send completed once sent), and both ride
 * untagged queue 1, a Read Request or Atomic Request each, in ORQ order
 * (queue 3 carries only the Atomic Responses, IANA RDDP "RDMAP DDP
 * Untagged Queue Numbers").  The Terminate names one when it
 * carries a copy of the offending segment's DDP header (the D bit, RFC
 * 5040 section 4.8): untagged, queue 1, with one of the two opcodes in
 * its RDMAP control octet; its MSN is the request's.  One rule for
 * both, so a rejected Atomic completes as a rejected Read does.
 * Without the copy (some peers send none for an error they found late)
 * nothing is named and everything is flushed.
 */
static void swiwarp_rx_term_blame(struct swiwarp_qp *qp,
				  const struct iwarp_term *t)
{
	struct iwarp_ddp_hdr h;
	unsigned long flags;
	bool atomic;
	u8 op;
	int st;
	u32 i;

	if (!t->flag_d ||
	    iwarp_ddp_hdr_parse(t->ddp_hdr, t->ddp_hdr_len, &h) < 0 ||
	    h.tagged || h.qn != IWARP_DDP_QN_READ_REQUEST)
		return;
	op = h.rsvdulp[0] & IWARP_RDMAP_OPCODE_MASK;
	if (op != IWARP_OP_READ_REQUEST && op != IWARP_OP_ATOMIC_REQUEST)
		return;
	atomic = op == IWARP_OP_ATOMIC_REQUEST;
	st = swiwarp_term_wc_status(t);
	if (!st)
		return;
	spin_lock_irqsave(&qp->orq_lock, flags);
	for (i = qp->orq_get; qp->orq && i != qp->orq_put; i++) {
		struct swiwarp_orq_entry *o = &qp->orq[i & (qp->orq_size - 1)];

		if (o->valid && o->msn == h.msn &&
		    swiwarp_op_is_atomic(o->wqe.sqe.opcode) == atomic) {
			o->term_status = st;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->orq_lock, flags);
}

static int swiwarp_rx_terminate(struct swiwarp_qp *qp,
				const struct iwarp_rdmap_msg *msg)
{
	pr_info_ratelimited("swiwarp: QP %u: Terminate from peer: layer %u type %u code %u\n",
			    qp->id, msg->term.layer, msg->term.etype,
			    msg->term.ecode);
	swiwarp_rx_term_blame(qp, &msg->term);
	swiwarp_stat_term(qp, false, msg->term.layer << 4 | msg->term.etype,
			  msg->term.ecode);
	qp->rx.state = SWIWARP_RX_ERROR;
	/* Answer nothing; tear the connection down. */
	qp->term_sent = true;
	swiwarp_cm_qp_drop_locked(qp);
	return -ECONNRESET;
}

/* The whole header is in rx->hdr: parse and prepare the payload. */
static int swiwarp_rx_header(struct swiwarp_qp *qp)
{
	struct swiwarp_rx *rx = &qp->rx;
	struct iwarp_rdmap_msg msg;
	u32 hlen = rx->hdr_have - IWARP_MPA_ULPDU_LEN_FIELD;
	int rv;

	rv = iwarp_rdmap_parse(rx->hdr + IWARP_MPA_ULPDU_LEN_FIELD, hlen, &msg);
	if (rv < 0) {
		switch (rv) {
		case IWARP_ERR_BAD_VERSION:
			if (msg.ddp.dv != IWARP_DDP_VERSION)
				swiwarp_rx_fatal(qp, IWARP_TERM_LAYER_DDP,
						 rx->tagged ?
						 IWARP_TERM_DDP_ETYPE_TAGGED :
						 IWARP_TERM_DDP_ETYPE_UNTAGGED,
						 rx->tagged ?
						 IWARP_TERM_DDP_T_VERSION :
						 IWARP_TERM_DDP_U_VERSION, true);
			else
				rx_term_op(qp, IWARP_TERM_RDMAP_VERSION);
			break;
		case IWARP_ERR_BAD_QN:
			if (rx->tagged)
				rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
			else
				rx_term_untagged(qp, IWARP_TERM_DDP_U_INVALID_QN);
			break;
		default:
			rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
			break;
		}
		return -EINVAL;
	}

	rx->opcode = msg.opcode;
	rx->last = msg.ddp.last;
	rx->stag = msg.ddp.stag;
	rx->to = msg.ddp.to;
	rx->msn = msg.ddp.msn;
	rx->seg_mo = msg.ddp.mo;
	rx->inv_stag = msg.inval_stag;
	rx->rresp = NULL;
	rx->data_left = rx->fpdu_len - hlen;
	rx->pad = iwarp_mpa_pad_len(rx->fpdu_len);
	rx->trailer_have = 0;

	/*
	 * An Immediate Data message flagged "a Send follows" must be
	 * followed by a Send or Send with SE (a Terminate aside): another
	 * Immediate Data, flagged or not, a Send with Invalidate or any
	 * other message would leave the value without its Send.
	 */
	if (rx->imm_pending && msg.opcode != IWARP_OP_SEND &&
	    msg.opcode != IWARP_OP_SEND_SE &&
	    msg.opcode != IWARP_OP_TERMINATE) {
		rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
		return -EINVAL;
	}

	/* Only the message right after a Write reports its length. */
	if (!rx->tagged && msg.opcode != IWARP_OP_IMMEDIATE &&
	    msg.opcode != IWARP_OP_IMMEDIATE_SE)
		rx->write_done_len = 0;

	switch (msg.opcode) {
	case IWARP_OP_WRITE:
		return swiwarp_rx_setup_write(qp);
	case IWARP_OP_READ_RESPONSE:
		return swiwarp_rx_setup_rresp(qp);
	case IWARP_OP_SEND:
	case IWARP_OP_SEND_SE:
	case IWARP_OP_SEND_INVALIDATE:
	case IWARP_OP_SEND_SE_INVALIDATE:
		/*
		 * The MPA v2 Send RTR (RFC 6581) of a P2P initiator: a
		 * zero-length Send starting the stream.  It takes MSN 1 of
		 * the Send queue but no receive buffer and makes no
		 * completion; the consumer never sees it.
		 */
		if (rx->rtr_send && !rx->first_done &&
		    msg.opcode == IWARP_OP_SEND && rx->last &&
		    !rx->data_left && !rx->seg_mo &&
		    rx->msn == rx->msn_next[IWARP_DDP_QN_SEND]) {
			rx->rtr_skip = true;
			return 0;
		}
		return swiwarp_rx_setup_send(qp);
	case IWARP_OP_READ_REQUEST:
		if (rx->data_left || !rx->last) {
			rx_term_untagged(qp, IWARP_TERM_DDP_U_TOO_LONG);
			return -EINVAL;
		}
		return swiwarp_rx_read_request(qp, &msg);
	case IWARP_OP_TERMINATE:
		return swiwarp_rx_terminate(qp, &msg);
	case IWARP_OP_IMMEDIATE:
	case IWARP_OP_IMMEDIATE_SE:
		return swiwarp_rx_immediate(qp, &msg);
	case IWARP_OP_ATOMIC_REQUEST:
	case IWARP_OP_ATOMIC_RESPONSE:
		return swiwarp_rx_atomic_hdr(qp, &msg);
	default:
		rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
		return -EOPNOTSUPP;
	}
}

/*
 * The last Read Response of an RDMA Read with Local Invalidate arrived:
 * invalidate the Read's data sink, the STag of its one SGE, as iWARP
 * RNICs and upstream siw do.  The work request's ex.invalidate_rkey is
 * not used for this: the kernel's rdma_rw API (nvmet-rdma, svcrdma, isert
 * on iWARP) fills it in before it bumps the key of the fast-reg MR for
 * the registration the Read then uses, so it names the sink's previous
 * STag.  Looking that up left the sink valid, and the pooled MR could
 * not be registered again: every NVMe-oF write after the first ended in
 * an Internal Error.  A zero-length Read has no
 * sink; it invalidates the STag the consumer named.  Returns the wc
 * status of the Read.
 */
static int swiwarp_rx_read_inv(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe)
{
	struct swiwarp_sqe *sqe = &wqe->sqe;
	u32 stag;

	if (sqe->opcode != SWIWARP_OP_READ_LOCAL_INV)
		return SWIWARP_WC_SUCCESS;
	stag = sqe->num_sge ? sqe->sge[0].lkey : sqe->inv_stag;
	if (swiwarp_mem_invalidate(qp->sdev, qp->base.pd, stag, false))
		return SWIWARP_WC_LOC_PROT_ERR;
	return SWIWARP_WC_SUCCESS;
}

/* A segment is complete (CRC checked). */
static void swiwarp_rx_segment_done(struct swiwarp_qp *qp)
{
	struct swiwarp_rx *rx = &qp->rx;

	switch (rx->opcode) {
	case IWARP_OP_SEND:
	case IWARP_OP_SEND_SE:
	case IWARP_OP_SEND_INVALIDATE:
	case IWARP_OP_SEND_SE_INVALIDATE:
		if (rx->rtr_skip) {
			rx->rtr_skip = false;
			rx->msn_next[IWARP_DDP_QN_SEND]++;
			break;
		}
		if (rx->last) {
			bool se = rx->opcode == IWARP_OP_SEND_SE ||
				rx->opcode == IWARP_OP_SEND_SE_INVALIDATE;
			bool inv = rx->opcode == IWARP_OP_SEND_INVALIDATE ||
				rx->opcode == IWARP_OP_SEND_SE_INVALIDATE;
			int st = SWIWARP_WC_SUCCESS;

			if (rx->imm_send) {
				/* Its Immediate Data came first. */
				rx->imm_send = false;
				if (inv) {
					rx_term_op(qp, IWARP_TERM_RDMAP_OPCODE);
					return;
				}
				rx->rwqe_active = false;
				swiwarp_qp_complete_recv_imm(qp, &rx->rwqe,
							     rx->mo,
							     rx->imm_data, se);
				rx->msn_next[IWARP_DDP_QN_SEND]++;
				rx->mo = 0;
				break;
			}
			if (inv && swiwarp_mem_invalidate(qp->sdev, qp->base.pd,
							  rx->inv_stag, true))
				st = SWIWARP_WC_REM_INV_REQ_ERR;
			rx->rwqe_active = false;
			swiwarp_qp_complete_rq(qp, &rx->rwqe, st, rx->mo,
					       inv ? rx->inv_stag : 0, se);
			rx->msn_next[IWARP_DDP_QN_SEND]++;
			rx->mo = 0;
			if (st) {
				rx_term_prot(qp, IWARP_TERM_RDMAP_CANNOT_INVALIDATE);
				return;
			}
		}
		break;
	case IWARP_OP_IMMEDIATE:
	case IWARP_OP_IMMEDIATE_SE:
		/* Flagged: the Send that follows completes with the value. */
		if (!rx->imm_pending) {
			rx->rwqe_active = false;
			swiwarp_qp_complete_imm(qp, &rx->rwqe,
						rx->write_done_len,
						rx->imm_data,
						rx->opcode ==
						IWARP_OP_IMMEDIATE_SE);
		}
		rx->write_done_len = 0;
		rx->msn_next[IWARP_DDP_QN_SEND]++;
		break;
	case IWARP_OP_WRITE:
		if (rx->last) {
			rx->write_done_len = rx->write_len;
			rx->write_len = 0;
		}
		break;
	case IWARP_OP_ATOMIC_REQUEST:
		swiwarp_rx_atomic_request(qp);
		break;
	case IWARP_OP_ATOMIC_RESPONSE:
		swiwarp_rx_atomic_response(qp);
		break;
	case IWARP_OP_READ_RESPONSE:
		if (rx->last) {
			struct swiwarp_wqe wqe;

			if (swiwarp_orq_take_head(qp, false, 0, &wqe)) {
				wqe.bytes = wqe.processed;
				swiwarp_qp_complete_sq(qp, &wqe,
						       swiwarp_rx_read_inv(qp, &wqe));
			}
			/* Fenced or ORQ-blocked work may proceed. */
			swiwarp_sq_kick(qp);
		}
		break;
	default:
		break;
	}
	if (!rx->first_done) {
		rx->first_done = true;
		swiwarp_cm_rtr_received(qp);
	}
}

/* ------------------------------------------------------- the actor */

static int swiwarp_rx_hdr_bytes(struct swiwarp_qp *qp, struct sk_buff *skb,
				unsigned int off, u32 avail)
{
	struct swiwarp_rx *rx = &qp->rx;
	u32 n = min(rx->hdr_need - rx->hdr_have, avail);
	u32 ddp_hl;

	if (skb_copy_bits(skb, off, rx->hdr + rx->hdr_have, n))
		return -EFAULT;
	rx->hdr_have += n;
	if (rx->hdr_have < rx->hdr_need)
		return n;

	if (rx->hdr_need == RX_HDR_MIN) {
		rx->fpdu_len = iwarp_get_be16(rx->hdr);
		rx->tagged = rx->hdr[2] & IWARP_DDP_FLAG_TAGGED;
		ddp_hl = iwarp_ddp_hdr_len(rx->tagged);
		if (rx->fpdu_len < ddp_hl) {
			/*
			 * Cannot even hold a DDP header (exactly ddp_hl is a
			 * zero-length segment, e.g. an MPA v2 RTR).
			 */
			swiwarp_rx_fatal(qp, IWARP_TERM_LAYER_LLP,
					 IWARP_TERM_ETYPE_MPA,
					 IWARP_TERM_MPA_MARKER, false);
			return -EINVAL;
		}
		rx->hdr_need = IWARP_MPA_ULPDU_LEN_FIELD + ddp_hl;
		return n;
	}
	if (rx->hdr_need == IWARP_MPA_ULPDU_LEN_FIELD +
	    iwarp_ddp_hdr_len(rx->tagged) && !rx->tagged) {
		u8 op = rx->hdr[3] & IWARP_RDMAP_OPCODE_MASK;
		u32 more = 0;

		rx->opcode = op;
		if (op == IWARP_OP_READ_REQUEST)
			more = IWARP_RDMAP_READ_REQ_LEN;
		else if (op == IWARP_OP_IMMEDIATE ||
			 op == IWARP_OP_IMMEDIATE_SE)
			more = IWARP_RDMAP_IMMEDIATE_LEN;
		else if (op == IWARP_OP_ATOMIC_REQUEST)
			more = IWARP_RDMAP_ATOMIC_REQ_LEN;
		else if (op == IWARP_OP_ATOMIC_RESPONSE)
			more = IWARP_RDMAP_ATOMIC_RESP_LEN;
		else if (op == IWARP_OP_TERMINATE)
			more = rx->fpdu_len - IWARP_DDP_UNTAGGED_HDR_LEN;
		if (more) {
			if (rx->fpdu_len < IWARP_DDP_UNTAGGED_HDR_LEN + more ||
			    rx->hdr_need + more > sizeof(rx->hdr)) {
				rx_term_untagged(qp, IWARP_TERM_DDP_U_TOO_LONG);
				return -EINVAL;
			}
			rx->hdr_need += more;
			return n;
		}
	}

	/* Header complete. */
	if (unlikely(rx->mk_hdr_at)) {
		/* A marker sat at hdr[mk_hdr_at - 1]: CRC in wire order. */
		u32 at = rx->mk_hdr_at - 1;

		rx->mk_hdr_at = 0;
		rx->crc = swiwarp_crc32c(~0U, rx->hdr, at);
		rx->crc = swiwarp_crc32c(rx->crc, rx->mk_save, IWARP_MPA_MARKER_LEN);
		rx->crc = swiwarp_crc32c(rx->crc, rx->hdr + at, rx->hdr_have - at);
	} else {
		rx->crc = qp->crc ? swiwarp_crc32c(~0U, rx->hdr, rx->hdr_have) : 0;
	}
	if (swiwarp_rx_header(qp))
		return -EINVAL;
	rx->state = rx->data_left ? SWIWARP_RX_DATA : SWIWARP_RX_TRAILER;
	return n;
}

static int swiwarp_rx_data_bytes(struct swiwarp_qp *qp, struct sk_buff *skb,
				 unsigned int off, u32 avail)
{
	struct swiwarp_rx *rx = &qp->rx;
	u32 n = min(rx->data_left, avail);
	struct swiwarp_skb_src src = {
		.skb = skb,
		.off = off,
		.crc = qp->crc ? &rx->crc : NULL,
	};
	int rv;

	switch (rx->opcode) {
	case IWARP_OP_WRITE:
		rv = swiwarp_mem_walk(rx->tmem, rx->to, n,
				      swiwarp_chunk_from_skb, &src);
		rx->to += n;
		break;
	case IWARP_OP_READ_RESPONSE: {
		struct swiwarp_wqe *wqe = &rx->rresp->wqe;

		rv = swiwarp_mem_walk(wqe->mem[0],
				      wqe->sqe.sge[0].addr + wqe->processed, n,
				      swiwarp_chunk_from_skb, &src);
		wqe->processed += n;
		break;
	}
	case IWARP_OP_SEND:
	case IWARP_OP_SEND_SE:
	case IWARP_OP_SEND_INVALIDATE:
	case IWARP_OP_SEND_SE_INVALIDATE:
		rv = swiwarp_sgl_walk(&rx->rwqe, rx->mo, n,
				      swiwarp_chunk_from_skb, &src);
		rx->mo += n;
		break;
	default:
		rv = -EINVAL;
		break;
	}
	if (rv) {
		swiwarp_rx_fatal(qp, IWARP_TERM_LAYER_RDMAP,
				 IWARP_TERM_RDMAP_ETYPE_CATASTROPHIC,
				 IWARP_TERM_RDMAP_CATASTROPHIC, true);
		return rv;
	}
	rx->data_left -= n;
	if (!rx->data_left)
		rx->state = SWIWARP_RX_TRAILER;
	return n;
}

static int swiwarp_rx_trailer_bytes(struct swiwarp_qp *qp,
				    struct sk_buff *skb, unsigned int off,
				    u32 avail)
{
	struct swiwarp_rx *rx = &qp->rx;
	u32 need = rx->pad + IWARP_MPA_CRC_FIELD;
	u32 n = min(need - rx->trailer_have, avail);

	if (skb_copy_bits(skb, off, rx->trailer + rx->trailer_have, n))
		return -EFAULT;
	rx->trailer_have += n;
	if (rx->trailer_have < need)
		return n;

	if (qp->crc) {
		u32 crc = swiwarp_crc32c(rx->crc, rx->trailer, rx->pad);

		if (unlikely(rx->mk_trailer)) {
			/* a marker between pad and CRC field */
			rx->mk_trailer = false;
			crc = swiwarp_crc32c(crc, rx->mk_save, IWARP_MPA_MARKER_LEN);
		}
		crc = ~crc;
		if (crc != iwarp_crc32c_get(rx->trailer + rx->pad)) {
			swiwarp_stat_inc(qp->sdev, SWIWARP_STAT_RX_CRC_ERRORS);
			swiwarp_rx_fatal(qp, IWARP_TERM_LAYER_LLP,
					 IWARP_TERM_ETYPE_MPA,
					 IWARP_TERM_MPA_CRC, false);
			return -EBADMSG;
		}
	}
	/* header (DDP/RDMAP, all of a control message) and payload */
	swiwarp_stat_inc(qp->sdev, SWIWARP_STAT_RX_FPDUS);
	swiwarp_stat_add(qp->sdev, SWIWARP_STAT_RX_PAYLOAD_BYTES,
			 rx->fpdu_len - (rx->hdr_have - IWARP_MPA_ULPDU_LEN_FIELD));
	swiwarp_rx_segment_done(qp);
	if (rx->state == SWIWARP_RX_ERROR)
		return -EINVAL;
	rx->state = SWIWARP_RX_HDR;
	rx->hdr_need = RX_HDR_MIN;
	rx->hdr_have = 0;
	rx->mk_seen = 0;
	return n;
}

/* Feed len octets of the FPDU stream (markers removed) to the parser. */
static size_t swiwarp_rx_feed(struct swiwarp_qp *qp, struct sk_buff *skb,
			      unsigned int off, size_t len)
{
	struct swiwarp_rx *rx = &qp->rx;
	size_t done = 0;

	while (done < len) {
		u32 avail = min_t(size_t, len - done, U32_MAX);
		int rv;

		if (rx->state == SWIWARP_RX_ERROR ||
		    READ_ONCE(qp->state) != SWIWARP_QP_RTS) {
			/* Drop input that can no longer be processed. */
			done = len;
			break;
		}
		switch (rx->state) {
		case SWIWARP_RX_HDR:
			rv = swiwarp_rx_hdr_bytes(qp, skb, off + done, avail);
			break;
		case SWIWARP_RX_DATA:
			rv = swiwarp_rx_data_bytes(qp, skb, off + done, avail);
			break;
		case SWIWARP_RX_TRAILER:
			rv = swiwarp_rx_trailer_bytes(qp, skb, off + done,
						      avail);
			break;
		default:
			rv = -EINVAL;
			break;
		}
		if (rv < 0) {
			rx->state = SWIWARP_RX_ERROR;
			done = len;
			break;
		}
		done += rv;
	}
	return done;
}

/*
 * A whole marker is in rx->mk (RFC 5044 marker format).  Its FPDUPTR
 * must be the distance back to the first octet of the FPDU it sits in:
 * 0 when no FPDU is under way (the marker opens the next one), else the
 * octets of the current FPDU received so far, its earlier markers
 * included.  The reserved half and the two low FPDUPTR bits are ignored
 * as RFC 5044 asks of receivers.  The CRC covers the marker where it
 * lies; header and trailer CRCs are computed late, so the marker is
 * kept for them.
 */
static int swiwarp_rx_marker(struct swiwarp_qp *qp)
{
	struct swiwarp_rx *rx = &qp->rx;
	u32 ptr = iwarp_get_be16(rx->mk + 2) & ~3U;
	u32 expect;

	switch (rx->state) {
	case SWIWARP_RX_HDR:
		expect = rx->hdr_have;
		break;
	case SWIWARP_RX_DATA:
		expect = IWARP_MPA_ULPDU_LEN_FIELD + rx->fpdu_len -
			rx->data_left;
		break;
	case SWIWARP_RX_TRAILER:
		expect = IWARP_MPA_ULPDU_LEN_FIELD + rx->fpdu_len +
			rx->trailer_have;
		break;
	default:
		return -EINVAL;
	}
	expect += IWARP_MPA_MARKER_LEN * rx->mk_seen;
	if (ptr != expect || (rx->state == SWIWARP_RX_TRAILER &&
			      rx->trailer_have != rx->pad)) {
		pr_info_ratelimited("swiwarp: QP %u: bad MPA marker %*phN, FPDUPTR %u expected\n",
				    qp->id, IWARP_MPA_MARKER_LEN, rx->mk,
				    expect);
		swiwarp_rx_fatal(qp, IWARP_TERM_LAYER_LLP, IWARP_TERM_ETYPE_MPA,
				 IWARP_TERM_MPA_MARKER, false);
		return -EINVAL;
	}
	rx->mk_seen++;
	if (!qp->crc)
		return 0;
	if (rx->state == SWIWARP_RX_DATA) {
		rx->crc = swiwarp_crc32c(rx->crc, rx->mk, IWARP_MPA_MARKER_LEN);
		return 0;
	}
	memcpy(rx->mk_save, rx->mk, IWARP_MPA_MARKER_LEN);
	if (rx->state == SWIWARP_RX_HDR)
		rx->mk_hdr_at = rx->hdr_have + 1;
	else
		rx->mk_trailer = true;
	return 0;
}

/* Remove and check the markers, feed the rest to the parser. */
static size_t swiwarp_rx_feed_marked(struct swiwarp_qp *qp,
				     struct sk_buff *skb, unsigned int off,
				     size_t len)
{
	struct swiwarp_rx *rx = &qp->rx;
	size_t done = 0;

	while (done < len) {
		u32 into = rx->mk_pos & (IWARP_MPA_MARKER_PERIOD - 1);
		size_t n;

		if (rx->state == SWIWARP_RX_ERROR)
			return len;
		if (into < IWARP_MPA_MARKER_LEN) {
			n = min_t(size_t, len - done,
				  IWARP_MPA_MARKER_LEN - into);
			if (skb_copy_bits(skb, off + done, rx->mk + into, n) ||
			    (into + n == IWARP_MPA_MARKER_LEN &&
			     swiwarp_rx_marker(qp))) {
				rx->state = SWIWARP_RX_ERROR;
				return len;
			}
		} else {
			n = min_t(size_t, len - done,
				  IWARP_MPA_MARKER_PERIOD - into);
			n = swiwarp_rx_feed(qp, skb, off + done, n);
		}
		rx->mk_pos += n;
		done += n;
	}
	return done;
}

int swiwarp_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
		     unsigned int off, size_t len)
{
	struct swiwarp_qp *qp = desc->arg.data;
	size_t done;

	spin_lock_bh(&qp->rx_lock);
	if (unlikely(qp->rx_markers))
		done = swiwarp_rx_feed_marked(qp, skb, off, len);
	else
		done = swiwarp_rx_feed(qp, skb, off, len);
	spin_unlock_bh(&qp->rx_lock);
	return done;
}
