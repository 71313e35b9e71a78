// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: QP state machine, completions, receive queue access and flush.
 *
 * States: IDLE -> RTS only through the CM (a connected socket), RTS ->
 * CLOSING (graceful disconnect), RTS -> TERMINATE (a Terminate is being
 * sent), any -> ERROR (flush all work requests, abort the connection).
 * This file alone writes qp->state: swiwarp_qp_enter_rts() (CM),
 * swiwarp_qp_terminate_sent() (TX) and swiwarp_qp_modify_state() (verbs,
 * CM, TX, RX), all through the table swiwarp_qp_fsm below, which also
 * names each transition's side effects (Documentation/design.md).
 *
 * Locking, in this order: tx_lock (mutex) serialises the TX engine with
 * connection set-up and teardown; state_lock (rwsem) guards qp->state;
 * rx_lock (spinlock, BH) guards the RX context and the RQ consumer index;
 * orq_lock (spinlock, IRQ) the ORQ, IRQ and the pending Terminate.  The
 * TX engine changes the state with tx_lock held, so nothing may take
 * tx_lock while it holds state_lock.
 */

#include <linux/slab.h>

#include "swiwarp.h"
#include "iwarp/rdmap.h"

void swiwarp_qp_event(struct swiwarp_qp *qp, enum ib_event_type type)
{
	struct ib_event ev;

	if (!qp->base.event_handler)
		return;
	ev.device = qp->base.device;
	ev.element.qp = &qp->base;
	ev.event = type;
	qp->base.event_handler(&ev, qp->base.qp_context);
}

/*
 * A completion of qp did not fit into cq.  The consumer hears of it once
 * per overflow (IB_EVENT_CQ_ERR, again only after a completion fitted),
 * not once per lost completion: every event costs uverbs an atomic
 * allocation until user space reads it.  The QP goes to ERROR, announced
 * with IB_EVENT_QP_FATAL (kernel consumers often have no CQ event
 * handler), so no further work is silently lost; the state change sleeps,
 * so the TX engine makes it.  Any context.
 */
static void swiwarp_cq_overflow(struct swiwarp_qp *qp, struct swiwarp_cq *cq)
{
	struct ib_event ev;

	if (!test_and_set_bit(0, &cq->overflow)) {
		pr_warn_ratelimited("swiwarp: CQ %u overflow (QP %u)\n",
				    cq->id, qp->id);
		if (cq->base.event_handler) {
			ev.device = cq->base.device;
			ev.element.cq = &cq->base;
			ev.event = IB_EVENT_CQ_ERR;
			cq->base.event_handler(&ev, cq->base.cq_context);
		}
	}
	if (!test_and_set_bit(0, &qp->cq_overflow)) {
		swiwarp_qp_event(qp, IB_EVENT_QP_FATAL);
		swiwarp_sq_kick(qp);
	}
}

/* Release the memory references a WQE took while it was validated. */
void swiwarp_wqe_put_mem(struct swiwarp_wqe *wqe)
{
	int i;

	for (i = 0; i < SWIWARP_MAX_SGE; i++) {
		if (wqe->mem[i]) {
			swiwarp_mem_put(wqe->mem[i]);
			wqe->mem[i] = NULL;
		}
	}
}

/*
 * Complete a send-queue WQE: CQE if signalled or failed.  Returns
 * -ENOSPC if the CQ overflowed.
 */
int swiwarp_qp_complete_sq(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe,
			   int status)
{
	struct swiwarp_cqe cqe = {};

	swiwarp_wqe_put_mem(wqe);
	wqe->active = false;
	if (status == SWIWARP_WC_SUCCESS &&
	    !(wqe->sqe.flags & SWIWARP_WQE_SIGNALED))
		return 0;
	cqe.id = wqe->sqe.id;
	cqe.opcode = wqe->sqe.opcode;
	cqe.status = status;
	cqe.bytes = wqe->sqe.opcode == SWIWARP_OP_READ ||
		wqe->sqe.opcode == SWIWARP_OP_READ_LOCAL_INV ||
		swiwarp_op_is_atomic(wqe->sqe.opcode) ? wqe->bytes : 0;
	cqe.qp_id = qp->id;
	if (swiwarp_cq_push(qp->scq, &cqe, false)) {
		swiwarp_cq_overflow(qp, qp->scq);
		return -ENOSPC;
	}
	return 0;
}

/*
 * Complete a receive WQE with the CQE its caller filled (opcode, status,
 * bytes and the flags of the message kind): the common part of a Send's
 * and an Immediate Data message's completion.  Returns -ENOSPC if the CQ
 * overflowed.
 */
static int swiwarp_qp_push_rq(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe,
			      struct swiwarp_cqe *cqe, bool se)
{
	int rv;

	swiwarp_wqe_put_mem(wqe);
	wqe->active = false;
	cqe->id = wqe->sqe.id;
	cqe->qp_id = qp->id;
	if (se)
		cqe->flags |= SWIWARP_CQE_SOLICITED;
	rv = swiwarp_cq_push(qp->rcq, cqe, se);
	if (rv)
		swiwarp_cq_overflow(qp, qp->rcq);
	return rv;
}

int swiwarp_qp_complete_rq(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe,
			   int status, u32 bytes, u32 inv_stag, bool se)
{
	struct swiwarp_cqe cqe = {};

	cqe.opcode = SWIWARP_OP_RECV;
	cqe.status = status;
	cqe.bytes = bytes;
	if (inv_stag && status == SWIWARP_WC_SUCCESS) {
		cqe.flags |= SWIWARP_CQE_INVALIDATED;
		cqe.inv_stag = inv_stag;
	}
	return swiwarp_qp_push_rq(qp, wqe, &cqe, se);
}

/*
 * Complete the receive WQE an Immediate Data message consumed (RFC 7306):
 * IB_WC_RECV_RDMA_WITH_IMM with the value and byte_len bytes, the length
 * of the RDMA Write it followed (its buffer is not written).  imm_data
 * is in network byte order, as ib_wc.ex.imm_data.
 */
int swiwarp_qp_complete_imm(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe,
			    u32 bytes, u32 imm_data, bool se)
{
	struct swiwarp_cqe cqe = {};

	cqe.opcode = SWIWARP_OP_RECV_RDMA_IMM;
	cqe.status = SWIWARP_WC_SUCCESS;
	cqe.bytes = bytes;
	cqe.flags = SWIWARP_CQE_IMM;
	cqe.imm_data = imm_data;
	return swiwarp_qp_push_rq(qp, wqe, &cqe, se);
}

/*
 * Complete the receive WQE of a Send with Immediate Data (the swiwarp
 * convention of IWARP_IMM_FLAG_SEND_FOLLOWS): IB_WC_RECV with the Send's
 * length, IB_WC_WITH_IMM and the value (network byte order).
 */
int swiwarp_qp_complete_recv_imm(struct swiwarp_qp *qp,
				 struct swiwarp_wqe *wqe, u32 bytes,
				 u32 imm_data, bool se)
{
	struct swiwarp_cqe cqe = {};

	cqe.opcode = SWIWARP_OP_RECV;
	cqe.status = SWIWARP_WC_SUCCESS;
	cqe.bytes = bytes;
	cqe.flags = SWIWARP_CQE_IMM;
	cqe.imm_data = imm_data;
	return swiwarp_qp_push_rq(qp, wqe, &cqe, se);
}

/* Count VALID entries from get, stopping at limit. */
static u32 swiwarp_ring_avail(struct swiwarp_rqe *ring, u32 num, u32 get,
			      u32 limit)
{
	u32 n;

	for (n = 0; n < limit && n < num; n++) {
		struct swiwarp_rqe *rqe = &ring[(get + n) & (num - 1)];

		if (!(swiwarp_flags_acquire(&rqe->flags) & SWIWARP_WQE_VALID))
			break;
	}
	return n;
}

static bool swiwarp_take_rqe(struct swiwarp_rqe *ring, u32 num, u32 *get,
			     struct swiwarp_wqe *wqe)
{
	struct swiwarp_rqe *rqe = &ring[*get & (num - 1)];
	u8 nsge;
	int i;

	if (!(swiwarp_flags_acquire(&rqe->flags) & SWIWARP_WQE_VALID))
		return false;
	memset(wqe, 0, sizeof(*wqe));
	wqe->sqe.id = READ_ONCE(rqe->id);
	nsge = READ_ONCE(rqe->num_sge);
	if (nsge > SWIWARP_MAX_SGE) {
		/* Malformed user RQE: complete it with an error. */
		wqe->status = SWIWARP_WC_LOC_QP_OP_ERR;
		nsge = 0;
	}
	wqe->sqe.num_sge = nsge;
	for (i = 0; i < nsge; i++) {
		wqe->sqe.sge[i].addr = READ_ONCE(rqe->sge[i].addr);
		wqe->sqe.sge[i].length = READ_ONCE(rqe->sge[i].length);
		wqe->sqe.sge[i].lkey = READ_ONCE(rqe->sge[i].lkey);
	}
	swiwarp_flags_release(&rqe->flags, 0);
	(*get)++;
	wqe->active = true;
	return true;
}

/* Take the next receive WQE (RQ or SRQ).  Called under rx_lock. */
bool swiwarp_rq_fetch(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe)
{
	struct swiwarp_srq *srq = qp->srq;
	bool limit_event = false;
	unsigned long flags;
	bool ok;

	if (!srq)
		return swiwarp_take_rqe(qp->recvq, qp->num_rqe, &qp->rq_get,
					wqe);

	spin_lock_irqsave(&srq->lock, flags);
	ok = swiwarp_take_rqe(srq->queue, srq->num_rqe, &srq->rq_get, wqe);
	if (ok && srq->limit &&
	    swiwarp_ring_avail(srq->queue, srq->num_rqe, srq->rq_get,
			       srq->limit) < srq->limit) {
		srq->limit = 0;
		limit_event = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (limit_event && srq->base.event_handler) {
		struct ib_event ev = {
			.device = srq->base.device,
			.element.srq = &srq->base,
			.event = IB_EVENT_SRQ_LIMIT_REACHED,
		};

		srq->base.event_handler(&ev, srq->base.srq_context);
	}
	return ok;
}

/*
 * Flush the receive side: the active receive and the posted RQEs.  At
 * most one ring's worth per call (user space may keep posting while we
 * hold rx_lock with bottom halves off), and not past a full CQ: the
 * overflow is reported and what is left stays posted.
 */
static void swiwarp_rq_flush(struct swiwarp_qp *qp)
{
	struct swiwarp_wqe wqe;
	u32 n;

	spin_lock_bh(&qp->rx_lock);
	if (qp->rx.rwqe_active) {
		qp->rx.rwqe_active = false;
		if (swiwarp_qp_complete_rq(qp, &qp->rx.rwqe,
					   SWIWARP_WC_WR_FLUSH_ERR, 0, 0,
					   false))
			goto out;
	}
	if (!qp->srq) {
		for (n = 0; n < qp->num_rqe; n++) {
			if (!swiwarp_take_rqe(qp->recvq, qp->num_rqe,
					      &qp->rq_get, &wqe))
				break;
			if (swiwarp_qp_complete_rq(qp, &wqe,
						   SWIWARP_WC_WR_FLUSH_ERR, 0,
						   0, false))
				break;
		}
	}
out:
	spin_unlock_bh(&qp->rx_lock);
}

/*
 * Flush everything.  The RQ is flushed here; the SQ, the ORQ and the
 * active TX WQE belong to the TX engine, which flushes them when it runs
 * and finds the QP in ERROR.
 */
void swiwarp_qp_flush(struct swiwarp_qp *qp)
{
	swiwarp_rq_flush(qp);
	swiwarp_sq_kick(qp);
}

/*
 * Replace the ORQ and IRQ for a new connection.  Called with tx_lock and
 * state_lock held; the arrays are swapped under orq_lock so that an RX
 * engine still looking at them (a Read Response or Read Request of the
 * previous connection) sees either the old or the new ones, never freed
 * memory; the RX engine's pointer into the old ORQ is cleared under
 * rx_lock first.  A Terminate still pending from the previous connection is
 * dropped with them.
 */
static int swiwarp_qp_alloc_rd(struct swiwarp_qp *qp, u32 ord, u32 ird)
{
	u32 osz = roundup_pow_of_two(max(ord, 1U));
	u32 isz = roundup_pow_of_two(max(ird, 1U));
	struct swiwarp_orq_entry *orq, *old_orq;
	struct swiwarp_irq_entry *irq, *old_irq;
	unsigned long flags;
	u32 old_osz, i;

	orq = swiwarp_alloc(kcalloc(osz, sizeof(*orq), GFP_KERNEL));
	irq = swiwarp_alloc(kcalloc(isz, sizeof(*irq), GFP_KERNEL));
	if (!orq || !irq) {
		kfree(orq);
		kfree(irq);
		return -ENOMEM;
	}
	spin_lock_bh(&qp->rx_lock);
	qp->rx.rresp = NULL;	/* points into the old ORQ */
	spin_lock_irqsave(&qp->orq_lock, flags);
	old_orq = qp->orq;
	old_irq = qp->irq;
	old_osz = qp->orq_size;
	qp->orq = orq;
	qp->irq = irq;
	qp->orq_size = osz;
	qp->irq_size = isz;
	qp->orq_put = 0;
	qp->orq_get = 0;
	qp->irq_put = 0;
	qp->irq_get = 0;
	qp->ord = ord;
	qp->ird = ird;
	qp->tx.term_pending = false;
	spin_unlock_irqrestore(&qp->orq_lock, flags);
	spin_unlock_bh(&qp->rx_lock);

	if (old_orq)
		for (i = 0; i < old_osz; i++)
			swiwarp_wqe_put_mem(&old_orq[i].wqe);
	kfree(old_orq);
	kfree(old_irq);
	return 0;
}

void swiwarp_qp_free_rd(struct swiwarp_qp *qp)
{
	u32 i;

	if (qp->orq)
		for (i = 0; i < qp->orq_size; i++)
			swiwarp_wqe_put_mem(&qp->orq[i].wqe);
	kfree(qp->orq);
	kfree(qp->irq);
	qp->orq = NULL;
	qp->irq = NULL;
	qp->orq_size = 0;
	qp->irq_size = 0;
}

/* ------------------------------------------------------- state machine */

/*
 * The legal transitions and what each one does besides writing qp->state.
 * Indexed [from][to]; 0 is an illegal request (-EINVAL).  Side effects run
 * after state_lock is dropped (flush and drop sleep and take tx_lock or
 * cep->lock), except the Terminate, which is only queued.
 */
#define QPT_OK		BIT(0)	/* legal; without QPT_SET a no-op */
#define QPT_SET		BIT(1)	/* write the new state */
#define QPT_NOSOCK	BIT(2)	/* legal only once the socket is gone */
#define QPT_CM		BIT(3)	/* only through swiwarp_qp_enter_rts() */
#define QPT_TERM	BIT(4)	/* queue a Terminate (see its caller) */
#define QPT_FLUSH	BIT(5)	/* flush the RQ, kick TX to flush SQ/ORQ */
#define QPT_DROP	BIT(6)	/* drop the connection, FIN after data */
/*
 * ... or reset it: after a Terminate, or while zero-copy WQEs wait for
 * their ACK.  Copied Sends and Writes complete once handed to TCP, so a
 * reset would discard data the consumer was told is sent (rsockets
 * destroys its QP right after its last Sends completed); flushed
 * zero-copy WQEs are another matter: the reset frees TCP's references
 * to their pages now instead of after the retransmission timeout.
 */
#define QPT_ABORT	BIT(7)
/*
 * Back to IDLE after a connection: the SQ WQEs still posted belong to it
 * and must never go out on the next one (swiwarp_tx_discard()).
 */
#define QPT_DISCARD	BIT(8)

#define QPT_GO		(QPT_OK | QPT_SET)
#define QPT_TO_ERROR	(QPT_GO | QPT_FLUSH | QPT_DROP)

static const u16 swiwarp_qp_fsm[][SWIWARP_QP_ERROR + 1] = {
	[SWIWARP_QP_IDLE] = {
		[SWIWARP_QP_IDLE] = QPT_GO,
		[SWIWARP_QP_RTR] = QPT_GO,
		[SWIWARP_QP_RTS] = QPT_GO | QPT_CM,
		[SWIWARP_QP_CLOSING] = QPT_OK,
		[SWIWARP_QP_ERROR] = QPT_GO | QPT_FLUSH,
	},
	[SWIWARP_QP_RTR] = {
		[SWIWARP_QP_IDLE] = QPT_GO,
		[SWIWARP_QP_RTR] = QPT_GO,
		[SWIWARP_QP_RTS] = QPT_GO | QPT_CM,
		[SWIWARP_QP_CLOSING] = QPT_OK,
		[SWIWARP_QP_ERROR] = QPT_GO | QPT_FLUSH,
	},
	[SWIWARP_QP_RTS] = {
		[SWIWARP_QP_RTS] = QPT_OK,
		[SWIWARP_QP_CLOSING] = QPT_GO | QPT_DROP,
		[SWIWARP_QP_TERMINATE] = QPT_GO | QPT_TERM,
		[SWIWARP_QP_ERROR] = QPT_TO_ERROR | QPT_ABORT,
	},
	[SWIWARP_QP_CLOSING] = {
		[SWIWARP_QP_IDLE] = QPT_GO | QPT_NOSOCK | QPT_DISCARD,
		[SWIWARP_QP_CLOSING] = QPT_OK,
		[SWIWARP_QP_ERROR] = QPT_TO_ERROR,
	},
	[SWIWARP_QP_TERMINATE] = {
		[SWIWARP_QP_IDLE] = QPT_GO | QPT_NOSOCK | QPT_DISCARD,
		[SWIWARP_QP_CLOSING] = QPT_OK,
		[SWIWARP_QP_TERMINATE] = QPT_OK,
		[SWIWARP_QP_ERROR] = QPT_TO_ERROR,
	},
	/*
	 * A disconnect (librdmacm moves an iWARP QP to SQD before it asks
	 * iw_cm to disconnect) may find the connection gone already; like
	 * a hardware RNIC, take that as done.
	 */
	[SWIWARP_QP_ERROR] = {
		[SWIWARP_QP_IDLE] = QPT_GO | QPT_NOSOCK | QPT_DISCARD,
		[SWIWARP_QP_CLOSING] = QPT_OK,
		[SWIWARP_QP_ERROR] = QPT_OK,
	},
};

/*
 * Look up from -> to in the table; 0 if it is illegal now.  QPT_NOSOCK
 * is resolved here.  Called with state_lock held.
 */
static unsigned int swiwarp_qp_fsm_fx(struct swiwarp_qp *qp,
				      enum swiwarp_qp_state to)
{
	unsigned int fx;

	if ((unsigned int)to > SWIWARP_QP_ERROR)
		return 0;
	fx = swiwarp_qp_fsm[qp->state][to];
	if ((fx & QPT_NOSOCK) && qp->sock)
		return 0;
	return fx;
}

/* The only write of qp->state after creation.  state_lock held. */
static void swiwarp_qp_set_state(struct swiwarp_qp *qp,
				 enum swiwarp_qp_state to)
{
	lockdep_assert_held_write(&qp->state_lock);
	WRITE_ONCE(qp->state, to);
}

/* A new QP (swiwarp_create_qp), before anyone else can see it. */
void swiwarp_qp_state_init(struct swiwarp_qp *qp)
{
	init_rwsem(&qp->state_lock);
	qp->state = SWIWARP_QP_IDLE;
}

/*
 * Make the transition to 'to' that the table allows, without the side
 * effects in 'skip'.  Returns -EINVAL if it is illegal in the current
 * state, 0 otherwise (also for a legal no-op).
 */
static int swiwarp_qp_transition(struct swiwarp_qp *qp,
				 enum swiwarp_qp_state to, unsigned int skip)
{
	bool abort = false;
	unsigned int fx;

	down_write(&qp->state_lock);
	fx = swiwarp_qp_fsm_fx(qp, to);
	if (fx & QPT_CM)
		fx = 0;
	fx &= ~skip;
	if (fx & QPT_ABORT)
		abort = qp->term_sent || READ_ONCE(qp->term_rx_seen) ||
			swiwarp_tx_zc_inflight(qp);
	if (fx & QPT_SET)
		swiwarp_qp_set_state(qp, to);
	/*
	 * The consumer asks for the Terminate (modify to SQE): no message
	 * of the peer is at fault, so neither remote error type of RFC 5040
	 * section 7 fits.  Its one local type is RDMAP local catastrophic
	 * (0; IANA's registry takes every code of it as that one error);
	 * code 0x00, as in our other local catastrophic Terminates.
	 */
	if (fx & QPT_TERM)
		swiwarp_send_terminate(qp, (IWARP_TERM_LAYER_RDMAP << 4) |
				       IWARP_TERM_RDMAP_ETYPE_CATASTROPHIC,
				       IWARP_TERM_RDMAP_CATASTROPHIC, NULL, 0);
	/*
	 * A reset QP starts afresh, also after a CQ overflow; any request
	 * that finds it in IDLE clears that, as it always did.
	 */
	if (qp->state == SWIWARP_QP_IDLE)
		clear_bit(0, &qp->cq_overflow);
	up_write(&qp->state_lock);
	if (!(fx & QPT_OK))
		return -EINVAL;

	if (fx & QPT_FLUSH)
		swiwarp_qp_flush(qp);
	if (fx & QPT_DROP)
		swiwarp_cm_qp_drop(qp, abort);
	if (fx & QPT_DISCARD)
		swiwarp_tx_discard(qp);
	return 0;
}

/*
 * IDLE/RTR -> RTS: the CM hands over the connected socket with what it
 * negotiated (swiwarp_cm.c).  Everything a connection starts from is reset
 * here: ORQ/IRQ (sized by ord/ird), the marker buffer, the RX context, the
 * TX engine's state (swiwarp_tx_reset()), the Terminate flags; with c->rtr
 * the initiator's RTR FPDU is queued before any work request.
 *
 * Here and not at the reset to IDLE: this is the one way into RTS, so a
 * connection starts clean however the previous one ended (ERROR and
 * RESET, CLOSING to IDLE without ERROR, or a RESET before the TX worker
 * ran the flush of ERROR), and it holds tx_lock, so no TX engine runs
 * with half of its state reset.  A state change cannot take tx_lock: the
 * TX engine changes the state while it holds it.
 *
 * tx_lock before state_lock, the order of the TX engine.  Holding tx_lock
 * also keeps a flush of the previous connection out while the ORQ/IRQ and
 * the TX state are reset.
 */
int swiwarp_qp_enter_rts(struct swiwarp_qp *qp,
			 const struct swiwarp_conn_params *c)
{
	bool idle;
	int rv = 0;

	mutex_lock(&qp->tx_lock);
	/*
	 * Only this function, under tx_lock, gives a QP a connection: one
	 * found without it here keeps none until tx_lock is dropped, so
	 * its TX state may be reset before state_lock is taken.  The reset
	 * may complete WQEs, which must not happen under state_lock (a CQ
	 * overflow calls the consumer's event handler).
	 */
	down_read(&qp->state_lock);
	idle = swiwarp_qp_fsm_fx(qp, SWIWARP_QP_RTS) & QPT_CM;
	up_read(&qp->state_lock);
	if (!idle) {
		mutex_unlock(&qp->tx_lock);
		return -EINVAL;
	}
	swiwarp_tx_reset(qp);
	down_write(&qp->state_lock);
	/* A consumer may have moved it to ERROR meanwhile. */
	if (!(swiwarp_qp_fsm_fx(qp, SWIWARP_QP_RTS) & QPT_CM)) {
		rv = -EINVAL;
		goto out;
	}
	rv = swiwarp_qp_alloc_rd(qp, c->ord, c->ird);
	if (rv)
		goto out;
	if (c->tx_markers && !qp->tx.mbuf) {
		qp->tx.mbuf = swiwarp_tx_alloc_buf();
		if (!qp->tx.mbuf) {
			rv = -ENOMEM;
			goto out;
		}
	}
	/* An overflow on an earlier connection is not this one's. */
	clear_bit(0, &qp->cq_overflow);
	qp->crc = c->crc;
	qp->peer_rfc7306 = c->peer_rfc7306;
	qp->large_fpdu = c->large_fpdu;
	/* Before RTS and before the consumer hears of the connection. */
	smp_store_release(&qp->sq_ctrl->peer_caps,
			  qp->peer_rfc7306 ? SWIWARP_PEER_RFC7306 : 0);
	qp->tx_markers = c->tx_markers;
	qp->rx_markers = c->rx_markers;
	spin_lock_bh(&qp->rx_lock);
	qp->sock = c->sock;
	qp->cep = c->cep;
	swiwarp_rx_reset(qp);
	qp->rx.rtr_send = c->rtr_send;
	WRITE_ONCE(qp->tx_hold, c->tx_hold);
	spin_unlock_bh(&qp->rx_lock);
	qp->term_sent = false;
	WRITE_ONCE(qp->term_tx_seen, 0);
	WRITE_ONCE(qp->term_rx_seen, 0);
	if (c->rtr)
		swiwarp_tx_rtr(qp, c->rtr);
	swiwarp_qp_set_state(qp, SWIWARP_QP_RTS);
out:
	up_write(&qp->state_lock);
	mutex_unlock(&qp->tx_lock);
	return rv;
}

/*
 * Our Terminate is out (the TX engine, tx_lock held): RTS -> TERMINATE
 * without queueing another one, then -> ERROR.  In any other state
 * (CLOSING, or ERROR already) only the second step applies.
 */
void swiwarp_qp_terminate_sent(struct swiwarp_qp *qp)
{
	swiwarp_qp_transition(qp, SWIWARP_QP_TERMINATE, QPT_TERM);
	swiwarp_qp_transition(qp, SWIWARP_QP_ERROR, 0);
}

/*
 * Change state on a verbs or CM request: the table above decides.  RTS is
 * entered only by the CM (swiwarp_qp_enter_rts()), never here.
 */
int swiwarp_qp_modify_state(struct swiwarp_qp *qp,
			    enum swiwarp_qp_state next)
{
	return swiwarp_qp_transition(qp, next, 0);
}

/* Move to ERROR from any context that may sleep. */
void swiwarp_qp_error(struct swiwarp_qp *qp)
{
	swiwarp_qp_modify_state(qp, SWIWARP_QP_ERROR);
}
