// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: connection management for iw_cm.
 *
 * One connection endpoint (cep) per TCP socket: listeners, and the
 * active and passive sides of a connection.  Socket upcalls (softirq)
 * only record an event bit and queue the cep's work item on an ordered
 * workqueue; everything else (non-blocking connect completion, MPA
 * Request/Reply exchange, teardown and the upcalls into iw_cm) runs in
 * that work item under cep->lock.  Timeouts (connect, MPA, RTR, responder
 * hold) run under cep->lock too, but from a workqueue of their own, so
 * that a timeout fires on time even when the peer sends nothing at all
 * and the ordered CM workqueue is busy with other endpoints.
 *
 * MPA frames are built, parsed and negotiated with the shared wire core
 * (include/iwarp/mpa.h).  Only the MPA frame itself is read from the
 * socket; whatever follows stays queued for the QP's RX engine, which
 * takes over the socket when the QP enters RTS.
 *
 * References: a cep holds one "owner" reference until it is closed, one
 * per queued work item or armed timer, a reference on its iw_cm_id
 * (id->add_ref) and on its QP while it has them.  A passive cep whose
 * CONNECT_REQUEST iw_cm may still answer holds one more (see "Connection
 * requests iw_cm never answers" below).
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/tcp.h>

#include "swiwarp.h"
#include "swiwarp_verbs.h"
#include "iwarp/mpa.h"

enum swiwarp_cep_state {
	CEP_IDLE,
	CEP_LISTENING,
	CEP_CONNECTING,
	CEP_AWAIT_MPAREP,
	CEP_AWAIT_MPAREQ,
	CEP_RECVD_MPAREQ,
	/*
	 * Accepted P2P responder: the QP is in RTS, ESTABLISHED waits for
	 * the initiator's RTR (or the MPA timeout).
	 */
	CEP_AWAIT_RTR,
	CEP_RDMA,
	CEP_CLOSED,
};

/*
 * iw_cm event contract (drivers/infiniband/core/iwcm.c): an active
 * cm_id waits for exactly one CONNECT_REPLY; an accepted passive one for
 * exactly one ESTABLISHED (iw_destroy_cm_id and iw_cm_disconnect block
 * until it comes).  Only after either of them with status 0 (or
 * ESTABLISHED with any status) are DISCONNECT and CLOSE legal; CLOSE in
 * any other state is a BUG() in iw_cm.  Not folded into the endpoint's
 * state: it runs across several of them (owed from CONNECTING through
 * AWAIT_MPAREP, or in AWAIT_RTR; up in RDMA until the close reports it)
 * and only for endpoints that have a cm_id.
 */
enum swiwarp_cep_iw {
	CEP_IW_NONE,		/* nothing owed, nothing reported up */
	CEP_IW_OWED,		/* the one CONNECT_REPLY/ESTABLISHED */
	CEP_IW_UP,		/* iw_cm saw the connection up */
};

enum {
	CEP_EV_DATA,
	CEP_EV_STATE,
	CEP_EV_DROP,
	CEP_EV_RTR,
};

struct swiwarp_cep {
	struct kref ref;
	/*
	 * Serialises the endpoint.  A passive endpoint's lock may be held
	 * while its listener's is taken (to leave the listener's list, to
	 * hand a request to the listener's cm_id), never the other way
	 * round: a listener only queues events to its children.  Both are
	 * the same lock class, hence mutex_lock_nested() for the listener.
	 */
	struct mutex lock;
	enum swiwarp_cep_state state;
	struct swiwarp_dev *sdev;
	struct socket *sock;
	struct iw_cm_id *cm_id;
	struct swiwarp_qp *qp;
	struct swiwarp_cep *listener;
	struct list_head child;		/* on listener->children */
	struct list_head children;	/* listener: not yet accepted */
	struct list_head req_item;	/* on swiwarp_cm_reqs */
	struct list_head lnode;		/* listener: on its swiwarp_listen */
	struct sockaddr_storage laddr;	/* listener: bound to */
	struct work_struct work;
	struct delayed_work timeout;
	unsigned long events;
	bool owner_ref;
	bool cb_installed;
	bool rdma_mode;
	bool drop_abort;
	bool active;			/* we called connect() */
	/*
	 * The peer announced RFC 7306 in its MPA frame (mpa.h): the QP may
	 * send Immediate Data to it.  Res bits are set only here, after
	 * encoding, so the wire core's encoder keeps sending them as zero.
	 */
	bool peer_rfc7306;
	/*
	 * Both ends announced FPDUs longer than a segment (mpa.h): the QP may
	 * send them.  Set with peer_rfc7306, whose bit it needs beside it.
	 */
	bool large_fpdu;
	bool orphan;			/* its listener went away undecided */
	enum swiwarp_cep_iw iw;
	int err;			/* status for the owed event */
	unsigned long deadline;		/* of the armed timer */
	void (*old_data_ready)(struct sock *sk);
	void (*old_state_change)(struct sock *sk);
	void (*old_write_space)(struct sock *sk);
	void *old_user_data;
	struct iwarp_mpa_policy pol;
	struct iwarp_mpa_rr req;	/* sent (active) / received (passive) */
	struct iwarp_mpa_result res;
	u8 pdata[IWARP_MPA_MAX_PDATA];	/* our Request's private data */
	u8 rbuf[IWARP_MPA_RR_HDR_LEN + IWARP_MPA_MAX_PDATA];
	u32 rlen;
};

static struct workqueue_struct *swiwarp_cm_wq;	/* ordered: cep->work */
static struct workqueue_struct *swiwarp_cm_timer_wq;	/* cep->timeout */

/*
 * Connection requests iw_cm never answers.  iw_cm delivers our
 * CONNECT_REQUEST from its own work queue; when the listener is being
 * destroyed by then (IWCM_F_DROP_EVENTS in iwcm.c) or it cannot allocate
 * the new cm_id, the event is dropped and neither iw_accept() nor
 * iw_reject() ever comes for that endpoint.  The provider is not told
 * which of its requests were dropped, and one that was delivered may be
 * accepted long after its listener is gone, so the endpoint must not be
 * freed while iw_cm may still hold it.  Every passive cep with an
 * unanswered request is on this list, which holds a reference on it:
 * iw_accept()/iw_reject() take it off; when the listener is destroyed
 * the socket of an unanswered request is closed after the MPA timeout
 * (a peer still waiting for the Reply has given up by then); at device
 * removal, once iw_cm and rdma_cm have let go of every cm_id of the
 * device, whatever is left was dropped and is closed and freed.
 */
static LIST_HEAD(swiwarp_cm_reqs);
static DEFINE_SPINLOCK(swiwarp_cm_reqs_lock);

/*
 * Endpoints allocated and not yet freed: none may be left when the
 * module goes (swiwarp_cm_exit warns), which is how the lab finds an
 * endpoint that a listen or a connection forgot to put.
 */
static atomic_t swiwarp_ceps_live = ATOMIC_INIT(0);

static void swiwarp_cep_release(struct kref *ref)
{
	struct swiwarp_cep *cep = container_of(ref, struct swiwarp_cep, ref);

	WARN_ON(cep->sock || cep->cm_id || cep->qp);
	kfree(cep);
	atomic_dec(&swiwarp_ceps_live);
}

static void swiwarp_cep_get(struct swiwarp_cep *cep)
{
	kref_get(&cep->ref);
}

static void swiwarp_cep_put(struct swiwarp_cep *cep)
{
	kref_put(&cep->ref, swiwarp_cep_release);
}

static void swiwarp_cep_work(struct work_struct *w);
static void swiwarp_cep_timeout(struct work_struct *w);

static struct swiwarp_cep *swiwarp_cep_new(struct swiwarp_dev *sdev)
{
	struct swiwarp_cep *cep = swiwarp_alloc(kzalloc(sizeof(*cep), GFP_KERNEL));

	if (!cep)
		return NULL;
	atomic_inc(&swiwarp_ceps_live);
	kref_init(&cep->ref);
	cep->owner_ref = true;
	mutex_init(&cep->lock);
	cep->sdev = sdev;
	cep->state = CEP_IDLE;
	INIT_LIST_HEAD(&cep->child);
	INIT_LIST_HEAD(&cep->children);
	INIT_LIST_HEAD(&cep->req_item);
	INIT_LIST_HEAD(&cep->lnode);
	INIT_WORK(&cep->work, swiwarp_cep_work);
	INIT_DELAYED_WORK(&cep->timeout, swiwarp_cep_timeout);
	return cep;
}

/* Record an event and make sure the work item runs.  Any context. */
static void swiwarp_cep_event(struct swiwarp_cep *cep, int ev)
{
	set_bit(ev, &cep->events);
	swiwarp_cep_get(cep);
	if (!queue_work(swiwarp_cm_wq, &cep->work))
		swiwarp_cep_put(cep);
}

/*
 * RFC 5044 7.1.2: an MPA responder must receive and validate one FPDU of
 * the initiator before it sends any.  An initiator (upstream siw) may
 * still be processing the Reply and take an early FPDU for a protocol
 * error.  The responder's QP therefore sends nothing until the first
 * FPDU arrives (a peer-to-peer RTR, or the ULP's first message), or, for
 * ULPs whose server speaks first, until this long has passed.
 */
#define SWIWARP_RESPONDER_HOLD_MS 1000

/*
 * FPDUs longer than a TCP segment between two swiwarp ends (mpa.h,
 * IWARP_MPA_FLAG_LARGE_FPDU): TCP then cuts the stream into segments
 * (GSO), and a 4 MiB Write is some 70 FPDUs instead of about 2,900 at
 * MTU 1500.  Peers that do not announce it never get them.  Off makes
 * every FPDU fit one segment towards every peer, as RFC 5044 has it
 * (for a capture read by tools that do not reassemble FPDUs, say).
 * Read when a connection is set up.
 */
static bool large_fpdu = true;
module_param(large_fpdu, bool, 0644);
MODULE_PARM_DESC(large_fpdu,
		 "announce and send FPDUs longer than the MSS to swiwarp peers that announce it too (default 1)");

/*
 * (Re)arm the endpoint's timer for ms from now.  A timer still pending
 * is moved to the new deadline (and keeps its reference), so a later
 * deadline is never lost behind an earlier expiry that would find it
 * not yet due.
 */
static void swiwarp_cep_arm_timer_ms(struct swiwarp_cep *cep, int ms)
{
	unsigned long t = msecs_to_jiffies(ms);

	cep->deadline = jiffies + t;
	swiwarp_cep_get(cep);
	if (mod_delayed_work(swiwarp_cm_timer_wq, &cep->timeout, t))
		swiwarp_cep_put(cep);
}

static void swiwarp_cep_arm_timer(struct swiwarp_cep *cep)
{
	swiwarp_cep_arm_timer_ms(cep, max(swiwarp_mpa_timeout_ms, 100));
}

/* Let a responder's QP send (any context). */
static void swiwarp_qp_release_hold(struct swiwarp_qp *qp)
{
	if (READ_ONCE(qp->tx_hold)) {
		WRITE_ONCE(qp->tx_hold, false);
		swiwarp_sq_kick(qp);
	}
}

static void swiwarp_cep_stop_timer(struct swiwarp_cep *cep)
{
	if (cancel_delayed_work(&cep->timeout))
		swiwarp_cep_put(cep);
}

/* iw_cm is about to be handed cep as a CONNECT_REQUEST. */
static void swiwarp_cep_req_track(struct swiwarp_cep *cep)
{
	swiwarp_cep_get(cep);
	spin_lock(&swiwarp_cm_reqs_lock);
	list_add_tail(&cep->req_item, &swiwarp_cm_reqs);
	spin_unlock(&swiwarp_cm_reqs_lock);
}

/*
 * iw_cm answered (or never got) the request.  True if the caller now owns
 * the list's reference and must drop it.
 */
static bool swiwarp_cep_req_claim(struct swiwarp_cep *cep)
{
	bool tracked;

	spin_lock(&swiwarp_cm_reqs_lock);
	tracked = !list_empty(&cep->req_item);
	list_del_init(&cep->req_item);
	spin_unlock(&swiwarp_cm_reqs_lock);
	return tracked;
}

/* Take a passive cep off its listener's list.  Called with cep->lock. */
static void swiwarp_cep_leave_listener(struct swiwarp_cep *cep)
{
	struct swiwarp_cep *listener = cep->listener;

	if (!listener)
		return;
	mutex_lock_nested(&listener->lock, SINGLE_DEPTH_NESTING);
	list_del_init(&cep->child);
	mutex_unlock(&listener->lock);
	cep->listener = NULL;
	swiwarp_cep_put(listener);
}

/* ------------------------------------------------------ socket upcalls */

static void swiwarp_cm_data_ready(struct sock *sk)
{
	struct swiwarp_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep)
		swiwarp_cep_event(cep, CEP_EV_DATA);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void swiwarp_cm_state_change(struct sock *sk)
{
	struct swiwarp_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep)
		swiwarp_cep_event(cep, CEP_EV_STATE);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void swiwarp_cm_write_space(struct sock *sk)
{
	void (*old)(struct sock *sk) = NULL;
	struct swiwarp_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep) {
		/*
		 * Restart TX only once there is room: tcp_check_space() also
		 * calls us from inside our own sendmsg, and kicking there
		 * would make the TX engine spin on -EAGAIN.
		 */
		if (cep->rdma_mode && cep->qp && sk_stream_is_writeable(sk))
			swiwarp_sq_kick(cep->qp);
		old = cep->old_write_space;
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (old)
		old(sk);
}

/* In RDMA mode: hand received bytes to the QP's RX engine. */
void swiwarp_qp_llp_data_ready(struct sock *sk)
{
	struct swiwarp_cep *cep;
	read_descriptor_t rd = {};

	read_lock_bh(&sk->sk_callback_lock);
	cep = sk->sk_user_data;
	if (cep && cep->rdma_mode && cep->qp) {
		rd.arg.data = cep->qp;
		rd.count = 1;
		tcp_read_sock(sk, &rd, swiwarp_rx_actor);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void swiwarp_cep_install_cb(struct swiwarp_cep *cep)
{
	struct sock *sk = cep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	cep->old_data_ready = sk->sk_data_ready;
	cep->old_state_change = sk->sk_state_change;
	cep->old_write_space = sk->sk_write_space;
	cep->old_user_data = sk->sk_user_data;
	sk->sk_user_data = cep;
	sk->sk_data_ready = swiwarp_cm_data_ready;
	sk->sk_state_change = swiwarp_cm_state_change;
	sk->sk_write_space = swiwarp_cm_write_space;
	cep->cb_installed = true;
	write_unlock_bh(&sk->sk_callback_lock);
}

static void swiwarp_cep_restore_cb(struct swiwarp_cep *cep)
{
	struct sock *sk;

	if (!cep->sock || !cep->cb_installed)
		return;
	sk = cep->sock->sk;
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = cep->old_user_data;
	sk->sk_data_ready = cep->old_data_ready;
	sk->sk_state_change = cep->old_state_change;
	sk->sk_write_space = cep->old_write_space;
	cep->rdma_mode = false;
	cep->cb_installed = false;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* --------------------------------------------------------- QP binding */

/* Feed bytes already queued on the socket to the RX engine. */
static void swiwarp_cep_rx_kick(struct swiwarp_cep *cep)
{
	struct sock *sk = cep->sock->sk;

	lock_sock(sk);
	swiwarp_qp_llp_data_ready(sk);
	release_sock(sk);
}

/*
 * TCP keepalive on every RDMA connection (as RNICs do).  A QP may wait on
 * its peer with nothing unacknowledged on its own side, e.g. RDMA Reads
 * whose Requests the peer's TCP acknowledged before the peer vanished:
 * TCP then never retransmits and never gives up, and without probes the
 * QP would wait forever instead of going to ERROR and flushing its work
 * requests.  With keepalive_s = N an idle connection is probed after N
 * seconds and reset after 3 unanswered probes N/3 seconds apart, so a
 * vanished peer is detected within about 2 N seconds; 0 turns it off.
 */
static int swiwarp_keepalive_s = 15;
module_param_named(keepalive_s, swiwarp_keepalive_s, int, 0644);
MODULE_PARM_DESC(keepalive_s,
		 "TCP keepalive idle time in seconds on RDMA connections, 3 probes every keepalive_s/3 s; 0 = off (default 15)");

static void swiwarp_cep_keepalive(struct sock *sk)
{
	int idle = READ_ONCE(swiwarp_keepalive_s);

	if (idle <= 0)
		return;
	idle = min(idle, MAX_TCP_KEEPIDLE);
	tcp_sock_set_keepidle(sk, idle);
	tcp_sock_set_keepintvl(sk, max(idle / 3, 1));
	tcp_sock_set_keepcnt(sk, 3);
	sock_set_keepalive(sk);
}

/*
 * Hand the socket to the QP and move it to RTS with what the MPA
 * negotiation agreed (ord/ird/crc/markers).  With rtr != 0 the initiator's
 * RTR FPDU is queued before any work request.
 */
static int swiwarp_cep_qp_rts(struct swiwarp_cep *cep, int rtr)
{
	struct swiwarp_qp *qp = cep->qp;
	struct sock *sk = cep->sock->sk;
	struct swiwarp_conn_params c = {
		.sock = cep->sock,
		.cep = cep,
		.ord = cep->res.ord,
		.ird = cep->res.ird,
		.rtr = rtr,
		.crc = cep->res.crc,
		.peer_rfc7306 = cep->peer_rfc7306,
		.large_fpdu = cep->large_fpdu,
		.tx_markers = cep->res.tx_markers,
		.rx_markers = cep->res.rx_markers,
		.rtr_send = !cep->active && cep->res.p2p &&
			cep->res.rtr == IWARP_MPA_RTR_SEND,
		.tx_hold = !cep->active,
	};
	int rv;

	swiwarp_cep_keepalive(sk);
	rv = swiwarp_qp_enter_rts(qp, &c);
	if (rv)
		return rv;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = swiwarp_qp_llp_data_ready;
	cep->rdma_mode = true;
	write_unlock_bh(&sk->sk_callback_lock);

	swiwarp_cep_rx_kick(cep);
	swiwarp_sq_kick(qp);
	return 0;
}

/* Take the socket away from the QP (no RX/TX on it afterwards). */
static void swiwarp_cep_detach_qp(struct swiwarp_cep *cep)
{
	struct swiwarp_qp *qp = cep->qp;

	if (!qp)
		return;
	swiwarp_cep_restore_cb(cep);
	mutex_lock(&qp->tx_lock);
	spin_lock_bh(&qp->rx_lock);
	if (qp->cep == cep) {
		qp->sock = NULL;
		qp->cep = NULL;
	}
	spin_unlock_bh(&qp->rx_lock);
	mutex_unlock(&qp->tx_lock);
}

/* ------------------------------------------------------------ upcalls */

/*
 * An IPv4 connection to a v4-mapped address of an IPv6 listen is
 * reported as the IPv4 connection it is: rdma_cm looks the local
 * address up among the netdevs' addresses (rdma_translate_ip), where
 * ::ffff:a.b.c.d is not found, and would refuse the request.
 */
static void swiwarp_unmap_v4(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in s4 = { .sin_family = AF_INET };

	if (ss->ss_family != AF_INET6 || !ipv6_addr_v4mapped(&s6->sin6_addr))
		return;
	s4.sin_port = s6->sin6_port;
	s4.sin_addr.s_addr = s6->sin6_addr.s6_addr32[3];
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &s4, sizeof(s4));
}

static void swiwarp_cep_addrs(struct swiwarp_cep *cep, struct iw_cm_event *ev)
{
	if (!cep->sock)
		return;
	kernel_getsockname(cep->sock, (struct sockaddr *)&ev->local_addr);
	kernel_getpeername(cep->sock, (struct sockaddr *)&ev->remote_addr);
	swiwarp_unmap_v4(&ev->local_addr);
	swiwarp_unmap_v4(&ev->remote_addr);
}

static int swiwarp_cm_upcall(struct swiwarp_cep *cep, struct iw_cm_id *id,
			     enum iw_cm_event_type type, int status,
			     const u8 *pdata, u16 plen)
{
	struct iw_cm_event ev = {};

	if (!id)
		return -EINVAL;
	ev.event = type;
	ev.status = status;
	if (type == IW_CM_EVENT_CONNECT_REQUEST) {
		ev.provider_data = cep;
		ev.ird = cep->req.enhanced ? cep->req.ird : SWIWARP_MAX_IRD;
		ev.ord = cep->req.enhanced ? cep->req.ord : SWIWARP_MAX_ORD;
		ev.ird = min_t(u32, ev.ird, SWIWARP_MAX_IRD);
		ev.ord = min_t(u32, ev.ord, SWIWARP_MAX_ORD);
	} else if (type == IW_CM_EVENT_CONNECT_REPLY ||
		   type == IW_CM_EVENT_ESTABLISHED) {
		ev.ird = cep->res.ird;
		ev.ord = cep->res.ord;
	}
	if (pdata && plen) {
		ev.private_data = (void *)pdata;
		ev.private_data_len = min_t(u16, plen, U8_MAX);
	}
	if (type == IW_CM_EVENT_CONNECT_REQUEST ||
	    type == IW_CM_EVENT_CONNECT_REPLY)
		swiwarp_cep_addrs(cep, &ev);
	return id->event_handler(id, &ev);
}

/* ------------------------------------------------------------ teardown */

/*
 * Tell iw_cm that the connection is gone, in the only way its state
 * allows: the owed CONNECT_REPLY (active) with an error status; for an
 * accepted passive side still waiting for the RTR, ESTABLISHED with an
 * error status followed by CLOSE; CLOSE after a connection was reported
 * up; nothing otherwise.
 */
static void swiwarp_cep_notify_close(struct swiwarp_cep *cep)
{
	int err = cep->err ? cep->err : -ECONNRESET;

	if (cep->iw == CEP_IW_OWED) {
		cep->iw = CEP_IW_NONE;
		if (cep->active) {
			swiwarp_cm_upcall(cep, cep->cm_id,
					  IW_CM_EVENT_CONNECT_REPLY, err, NULL,
					  0);
			return;
		}
		swiwarp_cm_upcall(cep, cep->cm_id, IW_CM_EVENT_ESTABLISHED, err,
				  NULL, 0);
		cep->iw = CEP_IW_UP;
	}
	if (cep->iw == CEP_IW_UP) {
		cep->iw = CEP_IW_NONE;
		swiwarp_cm_upcall(cep, cep->cm_id, IW_CM_EVENT_CLOSE, 0, NULL,
				  0);
	}
}

/*
 * Discard what the peer sent that nobody will read any more: TCP resets
 * a connection closed with unread data and throws away what is still
 * queued for sending.  Bounded, so a peer that keeps sending cannot hold
 * the CM work item.
 */
static void swiwarp_cep_discard_input(struct swiwarp_cep *cep)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
	struct kvec iov;
	int i;

	for (i = 0; i < 4096; i++) {
		iov.iov_base = cep->rbuf;
		iov.iov_len = sizeof(cep->rbuf);
		if (kernel_recvmsg(cep->sock, &msg, &iov, 1, iov.iov_len,
				   MSG_DONTWAIT) <= 0)
			break;
	}
}

static void swiwarp_cep_release_sock(struct swiwarp_cep *cep, bool abort)
{
	if (!cep->sock)
		return;
	swiwarp_cep_restore_cb(cep);
	if (abort) {
		sock_no_linger(cep->sock->sk);
	} else {
		swiwarp_cep_discard_input(cep);
		kernel_sock_shutdown(cep->sock, SHUT_RDWR);
	}
	sock_release(cep->sock);
	cep->sock = NULL;
}

/*
 * Close the endpoint: detach and error the QP, release the socket, tell
 * iw_cm (CLOSE if the connection had been reported up) and drop every
 * reference.  Called with cep->lock held.
 */
static void swiwarp_cep_close(struct swiwarp_cep *cep, bool abort)
{
	struct swiwarp_qp *qp = cep->qp;

	if (cep->state == CEP_CLOSED)
		return;
	swiwarp_cep_stop_timer(cep);
	if (qp) {
		swiwarp_cep_detach_qp(cep);
		swiwarp_qp_modify_state(qp, SWIWARP_QP_ERROR);
	}
	swiwarp_cep_release_sock(cep, abort);

	if (cep->cm_id) {
		swiwarp_cep_notify_close(cep);
		cep->cm_id->provider_data = NULL;
		cep->cm_id->rem_ref(cep->cm_id);
		cep->cm_id = NULL;
	}
	if (qp) {
		cep->qp = NULL;
		swiwarp_qp_put(qp);
	}
	swiwarp_cep_leave_listener(cep);
	WRITE_ONCE(cep->state, CEP_CLOSED);
	if (cep->owner_ref) {
		cep->owner_ref = false;
		/* A reference from the caller keeps cep alive until unlock. */
		swiwarp_cep_put(cep);
	}
}

/* Close, with status err for the event iw_cm may still be owed. */
static void swiwarp_cep_fail(struct swiwarp_cep *cep, int err, bool abort)
{
	if (!cep->err)
		cep->err = err;
	swiwarp_cep_close(cep, abort);
}

/* --------------------------------------------------------------- MPA */

static int swiwarp_cep_send(struct swiwarp_cep *cep, const void *buf,
			    size_t len)
{
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	int rv;

	if (!cep->sock)
		return -ENOTCONN;
	rv = kernel_sendmsg(cep->sock, &msg, &iov, 1, len);
	if (rv < 0)
		return rv;
	return rv == len ? 0 : -EPIPE;
}

static int swiwarp_cep_send_rr(struct swiwarp_cep *cep,
			       const struct iwarp_mpa_rr *rr)
{
	u8 *buf = swiwarp_alloc(kmalloc(IWARP_MPA_RR_HDR_LEN + IWARP_MPA_MAX_PDATA,
					 GFP_KERNEL));
	int len, rv;

	if (!buf)
		return -ENOMEM;
	len = iwarp_mpa_rr_encode(rr, buf,
				  IWARP_MPA_RR_HDR_LEN + IWARP_MPA_MAX_PDATA);
	if (len < 0) {
		rv = -EINVAL;
	} else {
		/* Octet 16 holds M, C, R, E and the Res bits. */
		if (rr->kind == IWARP_MPA_REQUEST)
			buf[16] |= IWARP_MPA_FLAG_RFC7306_REQ |
				   (READ_ONCE(large_fpdu) ? IWARP_MPA_FLAG_LARGE_FPDU : 0);
		else if (!rr->reject && cep->peer_rfc7306)
			buf[16] |= IWARP_MPA_FLAG_RFC7306_REP |
				   (cep->large_fpdu ? IWARP_MPA_FLAG_LARGE_FPDU : 0);
		rv = swiwarp_cep_send(cep, buf, len);
	}
	kfree(buf);
	return rv;
}

/*
 * Read the MPA Request/Reply, never past its end.  Returns 1 when the
 * whole frame is in rbuf, 0 when more is needed, <0 on error/EOF.
 */
static int swiwarp_cep_read_rr(struct swiwarp_cep *cep)
{
	for (;;) {
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
		struct kvec iov;
		u32 need = IWARP_MPA_RR_HDR_LEN;
		int rv;

		if (cep->rlen >= IWARP_MPA_RR_HDR_LEN) {
			rv = iwarp_mpa_rr_frame_len(cep->rbuf, cep->rlen);
			if (rv < 0 || rv > sizeof(cep->rbuf))
				return -EPROTO;
			need = rv;
		}
		if (cep->rlen == need && need > IWARP_MPA_RR_HDR_LEN - 1 &&
		    cep->rlen >= IWARP_MPA_RR_HDR_LEN)
			return 1;
		iov.iov_base = cep->rbuf + cep->rlen;
		iov.iov_len = need - cep->rlen;
		rv = kernel_recvmsg(cep->sock, &msg, &iov, 1, iov.iov_len,
				    MSG_DONTWAIT);
		if (rv == -EAGAIN)
			return 0;
		if (rv < 0)
			return rv;
		if (rv == 0)
			return -ECONNRESET;
		cep->rlen += rv;
	}
}

static void swiwarp_policy_init(struct iwarp_mpa_policy *pol, bool initiator,
				u32 ird, u32 ord)
{
	memset(pol, 0, sizeof(*pol));
	pol->max_rev = initiator && swiwarp_mpa_rev == 1 ? IWARP_MPA_REV1 :
		IWARP_MPA_REV2;
	pol->crc = clamp(swiwarp_mpa_crc, 0, 2);
	/*
	 * RFC 5044: M in our Request or Reply asks the peer to put markers
	 * into the FPDUs it sends to us; we always honour the peer's M.
	 */
	pol->rx_markers = READ_ONCE(swiwarp_markers);
	pol->tx_markers_ok = true;
	if (initiator) {
		pol->p2p = swiwarp_peer_to_peer;
		pol->rtr_mask = swiwarp_rtr_type & IWARP_MPA_RTR_ALL;
		if (!pol->rtr_mask)
			pol->p2p = false;
	} else {
		/*
		 * As responder we take any RTR kind; the shared negotiation
		 * prefers Write, then Read, so a Send RTR is used only when
		 * the initiator offers nothing else.
		 */
		pol->p2p = true;
		pol->rtr_mask = IWARP_MPA_RTR_ALL;
	}
	pol->relaxed_ird_ord = true;
	pol->ird = min_t(u32, ird, SWIWARP_MAX_IRD);
	pol->ord = min_t(u32, ord, SWIWARP_MAX_ORD);
}

static int swiwarp_rtr_from_mpa(u8 rtr)
{
	if (rtr & IWARP_MPA_RTR_WRITE)
		return SWIWARP_RTR_WRITE;
	if (rtr & IWARP_MPA_RTR_READ)
		return SWIWARP_RTR_READ;
	if (rtr & IWARP_MPA_RTR_SEND)
		return SWIWARP_RTR_SEND;
	return 0;
}

/*
 * What the peer's Request (reply false) or Reply (reply true) announced in
 * its Res bits (mpa.h): RFC 7306, and FPDUs longer than a segment if we
 * take part.  Only the frame kind's own RFC 7306 bit counts: siw echoes
 * our Request's bit in its Reply.
 */
static void swiwarp_cep_peer_res(struct swiwarp_cep *cep, u8 res_bits,
				 bool reply)
{
	cep->peer_rfc7306 = res_bits & (reply ? IWARP_MPA_FLAG_RFC7306_REP :
					       IWARP_MPA_FLAG_RFC7306_REQ);
	cep->large_fpdu = READ_ONCE(large_fpdu) &&
			  iwarp_mpa_peer_large_fpdu(res_bits, reply);
}

/* Active side: the MPA Reply arrived. */
static void swiwarp_cep_proc_reply(struct swiwarp_cep *cep)
{
	struct iwarp_mpa_rr rep;
	int rv, status;

	rv = iwarp_mpa_rr_parse_ex(cep->rbuf, cep->rlen,
				   IWARP_MPA_PARSE_IGNORE_RESERVED, &rep);
	if (rv < 0) {
		pr_info_ratelimited("swiwarp: bad MPA reply: %s\n",
				    iwarp_strerror(rv));
		swiwarp_stat_inc(cep->sdev, SWIWARP_STAT_MPA_FAILURES);
		status = -ECONNRESET;
		goto fail;
	}
	rv = iwarp_mpa_check_reply(&cep->pol, &cep->req, &rep, &cep->res);
	if (rv == IWARP_ERR_MALFORMED &&
	    cep->res.term_ecode == IWARP_TERM_MPA_NO_MATCHING_RTR &&
	    cep->req.p2p && rep.p2p && rep.rtr && !(rep.rtr & (rep.rtr - 1))) {
		/*
		 * The responder picked one RTR kind we did not offer (upstream
		 * siw answers any offer with Write or Read).  We can send
		 * every kind, so go along with its choice.
		 */
		struct iwarp_mpa_rr req = cep->req;

		req.rtr |= rep.rtr;
		pr_info_ratelimited("swiwarp: peer chose an RTR kind not offered (%#x), using it\n",
				    rep.rtr);
		rv = iwarp_mpa_check_reply(&cep->pol, &req, &rep, &cep->res);
	}
	if (rv == IWARP_ERR_PEER_REJECTED) {
		if (cep->req.markers)
			pr_info_ratelimited("swiwarp: peer rejected the MPA Request; it asked for markers (markers=1), which peers such as Linux siw do not support\n");
		cep->iw = CEP_IW_NONE;
		swiwarp_cm_upcall(cep, cep->cm_id, IW_CM_EVENT_CONNECT_REPLY,
				  -ECONNREFUSED, rep.ulp_pdata,
				  rep.ulp_pdata_len);
		swiwarp_cep_close(cep, false);
		return;
	}
	if (rv < 0) {
		pr_info_ratelimited("swiwarp: MPA reply refused: %s\n",
				    iwarp_strerror(rv));
		swiwarp_stat_inc(cep->sdev, SWIWARP_STAT_MPA_FAILURES);
		status = -ECONNRESET;
		goto fail;
	}
	swiwarp_cep_peer_res(cep, rep.res_bits, true);
	rv = swiwarp_cep_qp_rts(cep, cep->res.p2p ?
				swiwarp_rtr_from_mpa(cep->res.rtr) : 0);
	if (rv) {
		status = rv;
		goto fail;
	}
	cep->state = CEP_RDMA;
	swiwarp_cep_stop_timer(cep);
	cep->iw = CEP_IW_UP;
	swiwarp_cm_upcall(cep, cep->cm_id, IW_CM_EVENT_CONNECT_REPLY, 0,
			  rep.ulp_pdata, rep.ulp_pdata_len);
	return;
fail:
	swiwarp_cep_fail(cep, status, true);
}

/* Passive side: the MPA Request arrived. */
static void swiwarp_cep_proc_request(struct swiwarp_cep *cep)
{
	struct swiwarp_cep *listener = cep->listener;
	struct iwarp_mpa_rr rep;
	int rv;

	rv = iwarp_mpa_rr_parse_ex(cep->rbuf, cep->rlen,
				   IWARP_MPA_PARSE_IGNORE_RESERVED, &cep->req);
	if (rv < 0 || cep->req.kind != IWARP_MPA_REQUEST) {
		pr_info_ratelimited("swiwarp: bad MPA request: %s\n",
				    iwarp_strerror(rv < 0 ? rv :
						   IWARP_ERR_BAD_KEY));
		swiwarp_stat_inc(cep->sdev, SWIWARP_STAT_MPA_FAILURES);
		swiwarp_cep_close(cep, true);
		return;
	}
	swiwarp_cep_peer_res(cep, cep->req.res_bits, false);
	swiwarp_policy_init(&cep->pol, false, SWIWARP_MAX_IRD,
			    SWIWARP_MAX_ORD);
	rv = iwarp_mpa_negotiate_reply(&cep->pol, &cep->req, NULL, 0, &rep,
				       &cep->res);
	if (rv == IWARP_ERR_REJECT) {
		pr_info_ratelimited("swiwarp: MPA request rejected by policy\n");
		swiwarp_stat_inc(cep->sdev, SWIWARP_STAT_MPA_FAILURES);
		swiwarp_cep_send_rr(cep, &rep);
		swiwarp_cep_close(cep, false);
		return;
	}
	if (rv < 0) {
		swiwarp_stat_inc(cep->sdev, SWIWARP_STAT_MPA_FAILURES);
		swiwarp_cep_close(cep, true);
		return;
	}
	swiwarp_cep_stop_timer(cep);
	cep->state = CEP_RECVD_MPAREQ;

	rv = -ENODEV;
	if (listener) {
		/*
		 * cep stays on listener->children until iw_cm answers, so
		 * that destroying the listener finds it (swiwarp_cep_work).
		 */
		mutex_lock_nested(&listener->lock, SINGLE_DEPTH_NESTING);
		if (listener->cm_id && listener->state == CEP_LISTENING) {
			swiwarp_cep_req_track(cep);
			rv = swiwarp_cm_upcall(cep, listener->cm_id,
					       IW_CM_EVENT_CONNECT_REQUEST, 0,
					       cep->req.ulp_pdata,
					       cep->req.ulp_pdata_len);
			/* The work item's reference outlives this put. */
			if (rv && swiwarp_cep_req_claim(cep))
				swiwarp_cep_put(cep);
		}
		mutex_unlock(&listener->lock);
	}
	if (rv) {
		cep->state = CEP_AWAIT_MPAREQ;
		swiwarp_cep_close(cep, true);
		return;
	}
	/*
	 * iw_cm now owns the decision: iw_accept() or iw_reject() (also
	 * called when the new cm_id is destroyed) closes this endpoint.
	 */
}

static void swiwarp_cep_proc_data(struct swiwarp_cep *cep)
{
	int rv;

	if (cep->state != CEP_AWAIT_MPAREP && cep->state != CEP_AWAIT_MPAREQ)
		return;
	rv = swiwarp_cep_read_rr(cep);
	if (rv == 0)
		return;
	if (rv < 0) {
		swiwarp_stat_inc(cep->sdev, SWIWARP_STAT_MPA_FAILURES);
		swiwarp_cep_fail(cep, -ECONNRESET, true);
		return;
	}
	if (cep->state == CEP_AWAIT_MPAREP)
		swiwarp_cep_proc_reply(cep);
	else
		swiwarp_cep_proc_request(cep);
}

/* ------------------------------------------------------- TCP events */

static void swiwarp_cep_connected(struct swiwarp_cep *cep)
{
	int rv;

	rv = swiwarp_cep_send_rr(cep, &cep->req);
	if (rv) {
		swiwarp_cep_fail(cep, rv, true);
		return;
	}
	cep->state = CEP_AWAIT_MPAREP;
	/* The Reply may already be queued. */
	swiwarp_cep_proc_data(cep);
}

static void swiwarp_cep_proc_state(struct swiwarp_cep *cep)
{
	struct sock *sk;
	int st;

	if (!cep->sock)
		return;
	sk = cep->sock->sk;
	st = READ_ONCE(sk->sk_state);

	switch (cep->state) {
	case CEP_CONNECTING:
		if (st == TCP_ESTABLISHED) {
			swiwarp_cep_connected(cep);
		} else if (st != TCP_SYN_SENT) {
			int err = sock_error(sk);

			swiwarp_cep_fail(cep, err ? err : -ECONNREFUSED, true);
		}
		break;
	case CEP_AWAIT_MPAREP:
	case CEP_AWAIT_MPAREQ:
		if (st != TCP_ESTABLISHED) {
			/* Consume a frame that arrived with the FIN first. */
			swiwarp_cep_proc_data(cep);
			if (cep->state == CEP_AWAIT_MPAREP ||
			    cep->state == CEP_AWAIT_MPAREQ)
				swiwarp_cep_fail(cep, -ECONNRESET, true);
		}
		break;
	case CEP_RECVD_MPAREQ:
		/*
		 * The initiator gave up while the ULP decides: free the
		 * socket now; iw_accept()/iw_reject() close the endpoint.
		 */
		if (st != TCP_ESTABLISHED)
			swiwarp_cep_release_sock(cep, true);
		break;
	case CEP_AWAIT_RTR:
	case CEP_RDMA:
		if (st != TCP_ESTABLISHED) {
			if (cep->iw == CEP_IW_UP && cep->cm_id)
				swiwarp_cm_upcall(cep, cep->cm_id,
						  IW_CM_EVENT_DISCONNECT, 0,
						  NULL, 0);
			swiwarp_cep_fail(cep, -ECONNRESET, false);
		}
		break;
	default:
		break;
	}
}

static void swiwarp_listen_accept(struct swiwarp_cep *lcep)
{
	for (;;) {
		struct socket *nsock;
		struct swiwarp_cep *cep;
		int rv;

		if (lcep->state != CEP_LISTENING || !lcep->sock)
			return;
		rv = kernel_accept(lcep->sock, &nsock, O_NONBLOCK);
		if (rv)
			return;
		/*
		 * The connection may outlive the listener and every rdma_cm
		 * id of the namespace (swiwarp_sock_hold_net()).  A namespace
		 * already on its way out gets no new connection.
		 */
		if (!check_net(sock_net(nsock->sk))) {
			sock_release(nsock);
			continue;
		}
		swiwarp_sock_hold_net(nsock->sk);
		cep = swiwarp_cep_new(lcep->sdev);
		if (!cep) {
			sock_release(nsock);
			continue;
		}
		/*
		 * An accepted socket is a clone of the listener and inherits
		 * its upcalls and sk_user_data.  Give it the original ones
		 * back first: otherwise our write_space would chain to itself
		 * (an endless loop in softirq once the send buffer fills).
		 */
		write_lock_bh(&nsock->sk->sk_callback_lock);
		nsock->sk->sk_user_data = lcep->old_user_data;
		nsock->sk->sk_data_ready = lcep->old_data_ready;
		nsock->sk->sk_state_change = lcep->old_state_change;
		nsock->sk->sk_write_space = lcep->old_write_space;
		write_unlock_bh(&nsock->sk->sk_callback_lock);
		tcp_sock_set_nodelay(nsock->sk);
		cep->sock = nsock;
		cep->state = CEP_AWAIT_MPAREQ;
		swiwarp_cep_get(lcep);
		cep->listener = lcep;
		list_add_tail(&cep->child, &lcep->children);
		swiwarp_cep_install_cb(cep);
		swiwarp_cep_arm_timer(cep);
		swiwarp_cep_event(cep, CEP_EV_DATA);
		swiwarp_cep_event(cep, CEP_EV_STATE);
	}
}

static void swiwarp_cep_work(struct work_struct *w)
{
	struct swiwarp_cep *cep = container_of(w, struct swiwarp_cep, work);

	mutex_lock(&cep->lock);
	if (cep->state == CEP_LISTENING) {
		clear_bit(CEP_EV_STATE, &cep->events);
		if (test_and_clear_bit(CEP_EV_DATA, &cep->events))
			swiwarp_listen_accept(cep);
		goto out;
	}
	if (cep->state == CEP_CONNECTING &&
	    test_and_clear_bit(CEP_EV_STATE, &cep->events))
		swiwarp_cep_proc_state(cep);
	if (test_and_clear_bit(CEP_EV_DATA, &cep->events))
		swiwarp_cep_proc_data(cep);
	if (test_and_clear_bit(CEP_EV_RTR, &cep->events) &&
	    cep->state == CEP_AWAIT_RTR) {
		WRITE_ONCE(cep->state, CEP_RDMA);
		swiwarp_cep_stop_timer(cep);
		cep->iw = CEP_IW_UP;
		swiwarp_cm_upcall(cep, cep->cm_id, IW_CM_EVENT_ESTABLISHED, 0,
				  NULL, 0);
	}
	if (test_and_clear_bit(CEP_EV_STATE, &cep->events))
		swiwarp_cep_proc_state(cep);
	if (test_and_clear_bit(CEP_EV_DROP, &cep->events)) {
		if (cep->state == CEP_RDMA || cep->state == CEP_AWAIT_RTR ||
		    cep->state == CEP_AWAIT_MPAREQ) {
			swiwarp_cep_close(cep, cep->drop_abort);
		} else if (cep->state == CEP_RECVD_MPAREQ && !cep->orphan) {
			/*
			 * Its listener was destroyed before iw_cm answered:
			 * the request may have been dropped.  Close the
			 * socket if no answer comes within the MPA timeout.
			 */
			cep->orphan = true;
			if (cep->sock)
				swiwarp_cep_arm_timer(cep);
		}
	}
out:
	mutex_unlock(&cep->lock);
	swiwarp_cep_put(cep);
}

static void swiwarp_cep_timeout(struct work_struct *w)
{
	struct swiwarp_cep *cep = container_of(to_delayed_work(w),
					       struct swiwarp_cep, timeout);

	mutex_lock(&cep->lock);
	/* A run of a timer cancelled too late for a newer deadline. */
	if (time_before(jiffies, cep->deadline))
		goto out;
	switch (cep->state) {
	case CEP_CONNECTING:
	case CEP_AWAIT_MPAREP:
		pr_info_ratelimited("swiwarp: connect/MPA timeout\n");
		if (cep->state == CEP_AWAIT_MPAREP)
			swiwarp_stat_inc(cep->sdev, SWIWARP_STAT_MPA_FAILURES);
		swiwarp_cep_fail(cep, -ETIMEDOUT, true);
		break;
	case CEP_AWAIT_MPAREQ:
		swiwarp_stat_inc(cep->sdev, SWIWARP_STAT_MPA_FAILURES);
		swiwarp_cep_close(cep, true);
		break;
	case CEP_AWAIT_RTR:
		pr_info_ratelimited("swiwarp: no RTR from initiator\n");
		swiwarp_stat_inc(cep->sdev, SWIWARP_STAT_MPA_FAILURES);
		swiwarp_cep_fail(cep, -ETIMEDOUT, true);
		break;
	case CEP_RDMA:
		/* The ULP's server speaks first. */
		if (cep->qp)
			swiwarp_qp_release_hold(cep->qp);
		break;
	case CEP_RECVD_MPAREQ:
		/*
		 * Unanswered after its listener went away: free the socket
		 * (and its upcalls); a late iw_accept()/iw_reject() still
		 * finds the endpoint and fails or closes it.
		 */
		if (cep->orphan && cep->sock) {
			pr_info_ratelimited("swiwarp: no answer to a connection request of a destroyed listener, closing its socket\n");
			swiwarp_cep_release_sock(cep, true);
		}
		break;
	default:
		break;
	}
out:
	mutex_unlock(&cep->lock);
	swiwarp_cep_put(cep);
}

/* ------------------------------------------------ called by the QP */

/* Ask the CM to close the connection of qp (any context). */
void swiwarp_cm_qp_drop(struct swiwarp_qp *qp, bool abort)
{
	struct swiwarp_cep *cep;

	spin_lock_bh(&qp->rx_lock);
	cep = qp->cep;
	if (cep)
		swiwarp_cep_get(cep);
	spin_unlock_bh(&qp->rx_lock);
	if (!cep)
		return;
	if (abort)
		cep->drop_abort = true;
	swiwarp_cep_event(cep, CEP_EV_DROP);
	swiwarp_cep_put(cep);
}

/* Same, called by the RX engine with qp->rx_lock held. */
void swiwarp_cm_qp_drop_locked(struct swiwarp_qp *qp)
{
	if (qp->cep)
		swiwarp_cep_event(qp->cep, CEP_EV_DROP);
}

/* The RX engine saw the first FPDU: the initiator's RTR (or data). */
void swiwarp_cm_rtr_received(struct swiwarp_qp *qp)
{
	struct swiwarp_cep *cep = qp->cep;	/* under rx_lock */

	/* Not under cep->lock: the work checks the state again. */
	if (cep && READ_ONCE(cep->state) == CEP_AWAIT_RTR)
		swiwarp_cep_event(cep, CEP_EV_RTR);
	swiwarp_qp_release_hold(qp);
}

/* ---------------------------------------------------- iw_cm entry points */

static struct swiwarp_qp *swiwarp_cm_get_qp(struct ib_device *ibdev,
					    u32 qpn)
{
	struct swiwarp_dev *sdev = to_sdev(ibdev);
	struct swiwarp_qp *qp;

	xa_lock(&sdev->qp_xa);
	qp = xa_load(&sdev->qp_xa, qpn);
	if (qp && !kref_get_unless_zero(&qp->ref))
		qp = NULL;
	xa_unlock(&sdev->qp_xa);
	return qp;
}

/*
 * iw_cm passes on the QP number that its caller chose, and rdma_cm lets
 * user space choose it freely: through ucma, rdma_connect() and
 * rdma_accept() take conn_param.qp_num as given.  The number is looked up
 * device-wide, so without this check any local user could bind another
 * user's QP, or a kernel consumer's, to a connection of its own, and the
 * peer at the other end could then reach that QP's memory.  Both calls
 * run in their caller's context (ucma's write(), or the kernel consumer's
 * own thread), so current is the one who asks.
 */
static bool swiwarp_cm_may_bind(const struct swiwarp_qp *qp)
{
	if (qp->user)
		return uid_eq(current_euid(), qp->owner);
	/*
	 * Kernel consumers connect and accept from kernel threads (their
	 * rdma_cm event handlers, nfsd), or from a syscall that already
	 * needed CAP_SYS_ADMIN (a mount, nvme-cli's /dev/nvme-fabrics).
	 */
	return (current->flags & PF_KTHREAD) || capable(CAP_SYS_ADMIN);
}

static int swiwarp_addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
		sizeof(struct sockaddr_in);
}

int swiwarp_connect(struct iw_cm_id *id, struct iw_cm_conn_param *p)
{
	struct swiwarp_dev *sdev = to_sdev(id->device);
	struct sockaddr_storage *laddr = &id->m_local_addr;
	struct sockaddr_storage *raddr = &id->m_remote_addr;
	struct swiwarp_cep *cep;
	struct swiwarp_qp *qp;
	struct socket *sock;
	int rv;

	if (raddr->ss_family != AF_INET && raddr->ss_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (laddr->ss_family != raddr->ss_family)
		return -EINVAL;
	if (p->private_data_len > IWARP_MPA_MAX_PDATA - IWARP_MPA_V2_WORD_LEN)
		return -EINVAL;
	qp = swiwarp_cm_get_qp(id->device, p->qpn);
	if (!qp)
		return -EINVAL;
	if (!swiwarp_cm_may_bind(qp)) {
		swiwarp_qp_put(qp);
		return -EPERM;
	}
	cep = swiwarp_cep_new(sdev);
	if (!cep) {
		swiwarp_qp_put(qp);
		return -ENOMEM;
	}
	cep->qp = qp;
	cep->active = true;
	swiwarp_policy_init(&cep->pol, true, p->ird, p->ord);
	if (p->private_data_len)
		memcpy(cep->pdata, p->private_data, p->private_data_len);
	rv = iwarp_mpa_init_request(&cep->pol, cep->pdata, p->private_data_len,
				    &cep->req);
	if (rv) {
		rv = -EINVAL;
		goto err_cep;
	}

	rv = sock_create_kern(dev_net(sdev->netdev), raddr->ss_family,
			      SOCK_STREAM, IPPROTO_TCP, &sock);
	if (rv)
		goto err_cep;
	/* it may outlive the rdma_cm id that holds the namespace now */
	swiwarp_sock_hold_net(sock->sk);
	cep->sock = sock;
	/*
	 * The local port is rdma_cm's choice, made without a look at TCP's
	 * sockets: another TCP client's socket without SO_REUSEADDR (one in
	 * TIME_WAIT, say) may still hold it, and a SO_REUSEADDR bind then
	 * fails with EADDRINUSE (2.7% of the connects while plain TCP
	 * clients churned next to us; robustness.md, known bug 6).  Force
	 * the bind: TCP's connect still refuses a clash of the whole
	 * 4-tuple.
	 */
	lock_sock(sock->sk);
	sock->sk->sk_reuse = SK_FORCE_REUSE;
	release_sock(sock->sk);
	tcp_sock_set_nodelay(sock->sk);
	rv = kernel_bind(sock, (struct sockaddr *)laddr,
			 swiwarp_addr_len(laddr));
	if (rv)
		goto err_sock;

	mutex_lock(&cep->lock);
	id->add_ref(id);
	cep->cm_id = id;
	id->provider_data = cep;
	cep->state = CEP_CONNECTING;
	swiwarp_cep_install_cb(cep);
	rv = kernel_connect(sock, (struct sockaddr *)raddr,
			    swiwarp_addr_len(raddr), O_NONBLOCK);
	if (rv && rv != -EINPROGRESS) {
		/* iw_cm drops its QP reference when we fail here. */
		cep->cm_id = NULL;
		id->provider_data = NULL;
		id->rem_ref(id);
		/*
		 * The owner reference is the only one left (no timer, no
		 * work queued yet) and swiwarp_cep_close() drops it: hold
		 * our own until cep->lock is released.
		 */
		swiwarp_cep_get(cep);
		swiwarp_cep_close(cep, true);
		mutex_unlock(&cep->lock);
		swiwarp_cep_put(cep);
		return rv;
	}
	cep->iw = CEP_IW_OWED;
	swiwarp_cep_arm_timer(cep);
	swiwarp_cep_event(cep, CEP_EV_STATE);
	mutex_unlock(&cep->lock);
	return 0;

err_sock:
	sock_release(sock);
	cep->sock = NULL;
err_cep:
	cep->qp = NULL;
	swiwarp_qp_put(qp);
	cep->owner_ref = false;
	swiwarp_cep_put(cep);
	return rv;
}

int swiwarp_accept(struct iw_cm_id *id, struct iw_cm_conn_param *p)
{
	struct swiwarp_cep *cep = id->provider_data;
	struct iwarp_mpa_rr rep;
	struct swiwarp_qp *qp;
	bool claimed;
	int rv;

	if (!cep)
		return -EINVAL;
	swiwarp_cep_get(cep);
	claimed = swiwarp_cep_req_claim(cep);
	mutex_lock(&cep->lock);
	if (p->private_data_len > IWARP_MPA_MAX_PDATA - IWARP_MPA_V2_WORD_LEN) {
		rv = -EINVAL;
		goto err_close;
	}
	if (cep->state != CEP_RECVD_MPAREQ) {
		rv = -ECONNRESET;
		goto out;
	}
	/* Accepted: no longer one of the listener's pending children. */
	swiwarp_cep_leave_listener(cep);
	/* From here on a failure closes: iw_cm calls nothing else for it. */
	if (!cep->sock) {
		rv = -ECONNRESET;
		goto err_close;
	}
	qp = swiwarp_cm_get_qp(id->device, p->qpn);
	if (!qp) {
		rv = -EINVAL;
		goto err_close;
	}
	if (!swiwarp_cm_may_bind(qp)) {
		swiwarp_qp_put(qp);
		rv = -EPERM;
		goto err_close;
	}
	swiwarp_cep_stop_timer(cep);
	cep->qp = qp;
	id->add_ref(id);
	cep->cm_id = id;

	swiwarp_policy_init(&cep->pol, false, p->ird, p->ord);
	rv = iwarp_mpa_negotiate_reply(&cep->pol, &cep->req, p->private_data,
				       p->private_data_len, &rep, &cep->res);
	if (rv < 0) {
		if (rv == IWARP_ERR_REJECT)
			swiwarp_cep_send_rr(cep, &rep);
		rv = -EINVAL;
		goto err_close;
	}
	/* The Reply goes out before the QP may send anything. */
	rv = swiwarp_cep_send_rr(cep, &rep);
	if (rv)
		goto err_close;
	WRITE_ONCE(cep->state, cep->res.p2p ? CEP_AWAIT_RTR : CEP_RDMA);
	rv = swiwarp_cep_qp_rts(cep, 0);
	if (rv)
		goto err_close;
	if (cep->state == CEP_AWAIT_RTR) {
		/*
		 * ESTABLISHED is reported when the RTR arrives; from here
		 * on iw_cm is owed it whatever happens (swiwarp_cep_close).
		 */
		cep->iw = CEP_IW_OWED;
		swiwarp_cep_arm_timer(cep);
	} else {
		cep->iw = CEP_IW_UP;
		swiwarp_cm_upcall(cep, id, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0);
		if (READ_ONCE(qp->tx_hold))
			swiwarp_cep_arm_timer_ms(cep, SWIWARP_RESPONDER_HOLD_MS);
	}
	rv = 0;
	goto out;

err_close:
	/* A failed iw_accept() precludes provider events (iwcm.c). */
	cep->iw = CEP_IW_NONE;
	id->provider_data = NULL;
	swiwarp_cep_close(cep, true);
out:
	mutex_unlock(&cep->lock);
	if (claimed)
		swiwarp_cep_put(cep);
	swiwarp_cep_put(cep);
	return rv;
}

int swiwarp_reject(struct iw_cm_id *id, const void *pdata, u8 plen)
{
	struct swiwarp_cep *cep = id->provider_data;
	struct iwarp_mpa_rr rep;
	bool claimed;

	if (!cep)
		return -EINVAL;
	swiwarp_cep_get(cep);
	claimed = swiwarp_cep_req_claim(cep);
	mutex_lock(&cep->lock);
	if (cep->state == CEP_RECVD_MPAREQ) {
		if (cep->sock) {
			iwarp_mpa_negotiate_reply(&cep->pol, &cep->req, pdata,
						  plen, &rep, &cep->res);
			rep.reject = true;
			rep.crc = false;
			swiwarp_cep_send_rr(cep, &rep);
		}
		id->provider_data = NULL;
		swiwarp_cep_close(cep, false);
	}
	mutex_unlock(&cep->lock);
	if (claimed)
		swiwarp_cep_put(cep);
	swiwarp_cep_put(cep);
	return 0;
}

/* ----------------------------------------------------------- listening */

/*
 * rdma_cm hands a wildcard listen (any address) to every iWARP device
 * with the same address and port.  One socket bound to the wildcard
 * address per device collides with the next device's (EADDRINUSE) as
 * soon as a host has two swiwarp devices.  A wildcard listen therefore
 * binds one socket to each address of the device's own netdev, so that
 * a connection arrives on the device whose netdev owns the address it
 * was made to, and it follows addresses added and removed while it is
 * up (inet and inet6 address notifiers).  A listen on one address has
 * that one socket, as before.
 *
 * id->provider_data of a listening cm_id is its swiwarp_listen.  Every
 * listening cep holds a reference on the cm_id; swiwarp_listen_mutex
 * serialises the list of wildcard listens and each listen's ceps.
 */
struct swiwarp_listen {
	struct iw_cm_id *cm_id;
	struct swiwarp_dev *sdev;
	struct sockaddr_storage addr;	/* as requested (family, port) */
	int backlog;
	bool wildcard;
	bool afonly;
	struct list_head ceps;		/* listening ceps, on cep->lnode */
	struct list_head item;		/* on swiwarp_listens */
};

static LIST_HEAD(swiwarp_listens);
static DEFINE_MUTEX(swiwarp_listen_mutex);

/* More addresses than this on one netdev are not listened on. */
#define SWIWARP_LISTEN_MAX_ADDRS 64

/* An address a wildcard listen binds, and the netdev that owns it. */
struct swiwarp_listen_addr {
	struct sockaddr_storage sa;
	int ifindex;
};

static bool swiwarp_addr_is_any(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
			htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* Same address (and IPv6 scope); the port is the listen's for all. */
static bool swiwarp_addr_same(const struct sockaddr_storage *a,
			      const struct sockaddr_storage *b)
{
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
	const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
			((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr) &&
		a6->sin6_scope_id == b6->sin6_scope_id;
}

static __be16 swiwarp_addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_port;
	return ((const struct sockaddr_in6 *)ss)->sin6_port;
}

/*
 * Does rdma_cm hand connections made to the addresses of netdev x to
 * sdev?  It picks the first registered device whose GID is x's hardware
 * address (cma_acquire_dev_by_src_ip), and swiwarp's GID is its
 * netdev's MAC.  A VLAN shares its real device's MAC, so of the swiwarp
 * devices on netdevs with one MAC the first registered (the lowest
 * index; the RDMA core numbers devices as they register) gets all
 * their connections.  A wildcard listen must take exactly those, or the
 * ULP's QP, built on rdma_cm's device, is not on the device that got
 * the request and the accept fails.  Called under rcu_read_lock().
 */
static bool swiwarp_listen_owns(struct swiwarp_dev *sdev,
				struct net_device *x)
{
	const enum rdma_driver_id swiwarp_id =
		(enum rdma_driver_id)SWIWARP_DRIVER_ID;
	u8 mac[ETH_ALEN] __aligned(2), ymac[ETH_ALEN] __aligned(2);
	struct net_device *y;
	bool mine = true;

	swiwarp_dev_mac(sdev, mac);
	/* A netdev without sdev's MAC: its own only (a random MAC). */
	if (x->addr_len != ETH_ALEN || !ether_addr_equal(x->dev_addr, mac))
		return x == sdev->netdev;
	for_each_netdev_rcu(dev_net(x), y) {
		struct ib_device *ib;

		if (y->addr_len != ETH_ALEN ||
		    !ether_addr_equal(y->dev_addr, mac))
			continue;
		ib = ib_device_get_by_netdev(y, swiwarp_id);
		if (!ib)
			continue;
		swiwarp_dev_mac(to_sdev(ib), ymac);
		if (ib->index < sdev->base.index &&
		    ether_addr_equal(ymac, mac))
			mine = false;
		ib_device_put(ib);
		if (!mine)
			break;
	}
	return mine;
}

/*
 * The addresses of netdev nd a wildcard listen of family
 * l->addr.ss_family binds: IPv4 for AF_INET; IPv6 for AF_INET6, plus
 * IPv4 as v4-mapped addresses unless the listen is IPv6-only (what a
 * wildcard AF_INET6 socket would have accepted).  Link-local IPv6
 * addresses carry the netdev as scope.  Called under rcu_read_lock().
 */
static int swiwarp_listen_netdev_addrs(const struct swiwarp_listen *l,
				       struct net_device *nd,
				       struct swiwarp_listen_addr *a, int n,
				       int max)
{
	sa_family_t family = l->addr.ss_family;
	__be16 port = swiwarp_addr_port(&l->addr);
	struct inet6_dev *idev;
	struct in_device *in_dev;

	in_dev = __in_dev_get_rcu(nd);
	if (in_dev && (family == AF_INET || !l->afonly)) {
		const struct in_ifaddr *ifa;

		in_dev_for_each_ifa_rcu(ifa, in_dev) {
			if (n == max)
				break;
			a[n].ifindex = nd->ifindex;
			if (family == AF_INET) {
				struct sockaddr_in *s4 = (void *)&a[n++].sa;

				s4->sin_family = AF_INET;
				s4->sin_port = port;
				s4->sin_addr.s_addr = ifa->ifa_local;
			} else {
				struct sockaddr_in6 *s6 = (void *)&a[n++].sa;

				s6->sin6_family = AF_INET6;
				s6->sin6_port = port;
				ipv6_addr_set_v4mapped(ifa->ifa_local,
						       &s6->sin6_addr);
			}
		}
	}
	idev = family == AF_INET6 ? __in6_dev_get(nd) : NULL;
	if (idev) {
		const struct inet6_ifaddr *ifp;

		read_lock_bh(&idev->lock);
		list_for_each_entry(ifp, &idev->addr_list, if_list) {
			struct sockaddr_in6 *s6;

			if (n == max)
				break;
			if (ifp->flags & IFA_F_DADFAILED)
				continue;
			a[n].ifindex = nd->ifindex;
			s6 = (void *)&a[n++].sa;
			s6->sin6_family = AF_INET6;
			s6->sin6_port = port;
			s6->sin6_addr = ifp->addr;
			if (ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL)
				s6->sin6_scope_id = nd->ifindex;
		}
		read_unlock_bh(&idev->lock);
	}
	return n;
}

/*
 * The addresses a wildcard listen binds: those of every netdev whose
 * connections rdma_cm gives to the listen's device (its own netdev, and
 * netdevs sharing its MAC if it registered first).
 */
static int swiwarp_listen_addrs(const struct swiwarp_listen *l,
				struct swiwarp_listen_addr *a, int max)
{
	struct net_device *nd;
	int n = 0;

	rcu_read_lock();
	for_each_netdev_rcu(dev_net(l->sdev->netdev), nd)
		if (n < max && swiwarp_listen_owns(l->sdev, nd))
			n = swiwarp_listen_netdev_addrs(l, nd, a, n, max);
	rcu_read_unlock();
	if (n == max)
		pr_info_ratelimited("swiwarp: %s: wildcard listen on the first %d addresses only\n",
				    dev_name(&l->sdev->base.dev), max);
	return n;
}

/*
 * A listening cep on laddr for l, its socket tied to netdev ifindex
 * unless that is 0.  Called with swiwarp_listen_mutex.
 */
static int swiwarp_listen_add(struct swiwarp_listen *l,
			      const struct sockaddr_storage *laddr, int ifindex)
{
	struct swiwarp_cep *cep;
	struct socket *sock;
	int rv;

	cep = swiwarp_cep_new(l->sdev);
	if (!cep)
		return -ENOMEM;
	rv = sock_create_kern(dev_net(l->sdev->netdev), laddr->ss_family,
			      SOCK_STREAM, IPPROTO_TCP, &sock);
	if (rv)
		goto err_cep;
	sock_set_reuseaddr(sock->sk);
	if (laddr->ss_family == AF_INET6 && l->afonly)
		ip6_sock_set_v6only(sock->sk);
	/*
	 * A wildcard listen's socket takes connections from its address's
	 * netdev only, as an RNIC takes them from its port.  TCP's bind
	 * rules let sockets tied to different netdevs share a port, so
	 * another RDMA driver's wildcard listen on another netdev (upstream
	 * siw ties its one wildcard socket to its netdev) no longer
	 * collides with ours (EADDRINUSE).  Connections from this host
	 * still arrive: local traffic carries the netdev of the address it
	 * is made to as its input interface.
	 */
	if (ifindex) {
		rv = sock_bindtoindex(sock->sk, ifindex, true);
		if (rv)
			goto err_sock;
	}
	/*
	 * An IPv6 address is announced while still tentative (DAD), when
	 * bind() refuses it; it is the netdev's own address all the same.
	 */
	if (l->wildcard)
		ip_sock_set_freebind(sock->sk);
	rv = kernel_bind(sock, (struct sockaddr *)laddr,
			 swiwarp_addr_len(laddr));
	if (rv)
		goto err_sock;
	rv = kernel_listen(sock, max(l->backlog, 1));
	if (rv)
		goto err_sock;

	cep->sock = sock;
	cep->laddr = *laddr;
	mutex_lock(&cep->lock);
	cep->state = CEP_LISTENING;
	l->cm_id->add_ref(l->cm_id);
	cep->cm_id = l->cm_id;
	swiwarp_cep_install_cb(cep);
	mutex_unlock(&cep->lock);
	list_add_tail(&cep->lnode, &l->ceps);
	/* Connections queued before the upcalls were installed. */
	swiwarp_cep_event(cep, CEP_EV_DATA);
	return 0;

err_sock:
	sock_release(sock);
err_cep:
	cep->owner_ref = false;
	swiwarp_cep_put(cep);
	return rv;
}

/*
 * Stop one listening cep: release its socket, abort the connections it
 * accepted that iw_cm has not taken yet, drop its cm_id reference.
 * Called with swiwarp_listen_mutex, cep already off its listen's list.
 */
static void swiwarp_listen_close_cep(struct swiwarp_cep *cep)
{
	struct swiwarp_cep *c;

	swiwarp_cep_get(cep);
	mutex_lock(&cep->lock);
	swiwarp_cep_release_sock(cep, true);
	list_for_each_entry(c, &cep->children, child) {
		c->drop_abort = true;
		swiwarp_cep_event(c, CEP_EV_DROP);
	}
	if (cep->cm_id) {
		cep->cm_id->rem_ref(cep->cm_id);
		cep->cm_id = NULL;
	}
	cep->state = CEP_CLOSED;
	if (cep->owner_ref) {
		cep->owner_ref = false;
		swiwarp_cep_put(cep);
	}
	mutex_unlock(&cep->lock);
	swiwarp_cep_put(cep);
}

static void swiwarp_listen_close_all(struct swiwarp_listen *l);

/*
 * Does listening cep serve a (the address, on the netdev owning it)?
 * An address that moved to another netdev needs a new socket.
 */
static bool swiwarp_listen_cep_is(const struct swiwarp_cep *cep,
				  const struct swiwarp_listen_addr *a)
{
	return swiwarp_addr_same(&cep->laddr, &a->sa) &&
	       READ_ONCE(cep->sock->sk->sk_bound_dev_if) == a->ifindex;
}

/*
 * Make a wildcard listen's sockets match its netdev's addresses now.
 * Returns the first error of a socket that could not listen (the others
 * stay up).  Called with swiwarp_listen_mutex.
 */
static int swiwarp_listen_sync(struct swiwarp_listen *l)
{
	struct swiwarp_cep *cep, *tmp;
	struct swiwarp_listen_addr *a;
	int i, n, rv = 0;

	/* Its netdev went or left the namespace: listen nowhere. */
	if (READ_ONCE(l->sdev->netdev_gone)) {
		swiwarp_listen_close_all(l);
		return -ENODEV;
	}
	a = swiwarp_alloc(kcalloc(SWIWARP_LISTEN_MAX_ADDRS, sizeof(*a), GFP_KERNEL));
	if (!a)
		return -ENOMEM;
	n = swiwarp_listen_addrs(l, a, SWIWARP_LISTEN_MAX_ADDRS);

	list_for_each_entry_safe(cep, tmp, &l->ceps, lnode) {
		for (i = 0; i < n; i++)
			if (swiwarp_listen_cep_is(cep, &a[i]))
				break;
		if (i < n)
			continue;
		list_del_init(&cep->lnode);
		swiwarp_listen_close_cep(cep);
	}
	for (i = 0; i < n; i++) {
		int err;

		list_for_each_entry(cep, &l->ceps, lnode)
			if (swiwarp_listen_cep_is(cep, &a[i]))
				break;
		if (!list_entry_is_head(cep, &l->ceps, lnode))
			continue;
		err = swiwarp_listen_add(l, &a[i].sa, a[i].ifindex);
		if (err) {
			pr_info_ratelimited("swiwarp: %s: cannot listen on %pISpc: %d\n",
					    dev_name(&l->sdev->base.dev),
					    &a[i].sa, err);
			if (!rv)
				rv = err;
		}
	}
	kfree(a);
	return rv;
}

static void swiwarp_listen_sync_all(struct work_struct *w)
{
	struct swiwarp_listen *l;

	mutex_lock(&swiwarp_listen_mutex);
	list_for_each_entry(l, &swiwarp_listens, item)
		if (l->wildcard)
			swiwarp_listen_sync(l);
	mutex_unlock(&swiwarp_listen_mutex);
}

static DECLARE_WORK(swiwarp_listen_sync_work, swiwarp_listen_sync_all);

/*
 * An address came or went on some netdev.  The inet6 chain is atomic,
 * so both only queue the resync, which looks at every wildcard listen.
 */
static int swiwarp_addr_event(struct notifier_block *nb, unsigned long ev,
			      void *arg)
{
	if (ev == NETDEV_UP || ev == NETDEV_DOWN)
		schedule_work(&swiwarp_listen_sync_work);
	return NOTIFY_DONE;
}

static struct notifier_block swiwarp_inetaddr_nb = {
	.notifier_call = swiwarp_addr_event,
};

static struct notifier_block swiwarp_inet6addr_nb = {
	.notifier_call = swiwarp_addr_event,
};

/* Close every socket of l.  Called with swiwarp_listen_mutex. */
static void swiwarp_listen_close_all(struct swiwarp_listen *l)
{
	struct swiwarp_cep *cep, *tmp;

	list_for_each_entry_safe(cep, tmp, &l->ceps, lnode) {
		list_del_init(&cep->lnode);
		swiwarp_listen_close_cep(cep);
	}
}

int swiwarp_create_listen(struct iw_cm_id *id, int backlog)
{
	struct sockaddr_storage *laddr = &id->m_local_addr;
	struct swiwarp_listen *l;
	int rv;

	if (laddr->ss_family != AF_INET && laddr->ss_family != AF_INET6)
		return -EAFNOSUPPORT;
	l = swiwarp_alloc(kzalloc(sizeof(*l), GFP_KERNEL));
	if (!l)
		return -ENOMEM;
	l->cm_id = id;
	l->sdev = to_sdev(id->device);
	l->addr = *laddr;
	l->backlog = backlog;
	l->afonly = laddr->ss_family == AF_INET6 && id->afonly;
	l->wildcard = swiwarp_addr_is_any(laddr);
	INIT_LIST_HEAD(&l->ceps);
	INIT_LIST_HEAD(&l->item);

	mutex_lock(&swiwarp_listen_mutex);
	if (l->wildcard)
		rv = swiwarp_listen_sync(l);
	else if (READ_ONCE(l->sdev->netdev_gone))
		rv = -ENODEV;
	else
		rv = swiwarp_listen_add(l, laddr, 0);
	if (rv) {
		/* As the one wildcard socket did: the port is taken. */
		swiwarp_listen_close_all(l);
		mutex_unlock(&swiwarp_listen_mutex);
		kfree(l);
		return rv;
	}
	list_add_tail(&l->item, &swiwarp_listens);
	id->provider_data = l;
	mutex_unlock(&swiwarp_listen_mutex);
	return 0;
}

int swiwarp_destroy_listen(struct iw_cm_id *id)
{
	struct swiwarp_listen *l = id->provider_data;

	if (!l)
		return 0;
	mutex_lock(&swiwarp_listen_mutex);
	list_del_init(&l->item);
	swiwarp_listen_close_all(l);
	id->provider_data = NULL;
	mutex_unlock(&swiwarp_listen_mutex);
	kfree(l);
	/*
	 * When its device goes, a device sharing its MAC may own the
	 * addresses it listened on now (swiwarp_listen_owns()).
	 */
	schedule_work(&swiwarp_listen_sync_work);
	return 0;
}

/*
 * The device's netdev is being unregistered or moved to another network
 * namespace (sdev->netdev_gone is set): close every listening socket of
 * the device's listens now, while their namespace surely exists (kernel
 * sockets hold no reference on it).  The listens themselves stay until
 * the device's unregistration destroys them.
 */
void swiwarp_cm_netdev_gone(struct swiwarp_dev *sdev)
{
	struct swiwarp_listen *l;

	mutex_lock(&swiwarp_listen_mutex);
	list_for_each_entry(l, &swiwarp_listens, item)
		if (l->sdev == sdev)
			swiwarp_listen_close_all(l);
	mutex_unlock(&swiwarp_listen_mutex);
}

/*
 * Device removal, after every iw_cm/rdma_cm id of the device is gone:
 * the requests still listed were dropped by iw_cm and will never be
 * answered.  Close them (socket, upcalls, listener reference) and free.
 */
void swiwarp_cm_dev_cleanup(struct swiwarp_dev *sdev)
{
	struct swiwarp_cep *cep, *tmp;
	LIST_HEAD(gone);
	int n = 0;

	spin_lock(&swiwarp_cm_reqs_lock);
	list_for_each_entry_safe(cep, tmp, &swiwarp_cm_reqs, req_item)
		if (cep->sdev == sdev)
			list_move_tail(&cep->req_item, &gone);
	spin_unlock(&swiwarp_cm_reqs_lock);

	list_for_each_entry_safe(cep, tmp, &gone, req_item) {
		list_del_init(&cep->req_item);
		mutex_lock(&cep->lock);
		swiwarp_cep_close(cep, true);
		mutex_unlock(&cep->lock);
		swiwarp_cep_put(cep);
		n++;
	}
	if (n)
		pr_info("swiwarp: %s: closed %d connection request(s) iw_cm never answered\n",
			dev_name(&sdev->base.dev), n);
}

int swiwarp_cm_init(void)
{
	swiwarp_cm_wq = alloc_ordered_workqueue("swiwarp_cm", WQ_MEM_RECLAIM);
	if (!swiwarp_cm_wq)
		return -ENOMEM;
	swiwarp_cm_timer_wq = alloc_workqueue("swiwarp_cm_timer",
					      WQ_MEM_RECLAIM, 0);
	if (!swiwarp_cm_timer_wq) {
		destroy_workqueue(swiwarp_cm_wq);
		return -ENOMEM;
	}
	/* Neither can fail: both only add to a notifier chain. */
	register_inetaddr_notifier(&swiwarp_inetaddr_nb);
	register_inet6addr_notifier(&swiwarp_inet6addr_nb);
	return 0;
}

void swiwarp_cm_exit(void)
{
	unregister_inet6addr_notifier(&swiwarp_inet6addr_nb);
	unregister_inetaddr_notifier(&swiwarp_inetaddr_nb);
	cancel_work_sync(&swiwarp_listen_sync_work);
	destroy_workqueue(swiwarp_cm_timer_wq);
	destroy_workqueue(swiwarp_cm_wq);
	/* Every device is gone, so every listen and connection is too. */
	WARN(!list_empty(&swiwarp_listens),
	     "swiwarp: a listen outlived its device\n");
	WARN(atomic_read(&swiwarp_ceps_live),
	     "swiwarp: %d connection endpoint(s) leaked\n",
	     atomic_read(&swiwarp_ceps_live));
}
