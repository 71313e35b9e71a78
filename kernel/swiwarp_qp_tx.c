// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: TX engine.
 *
 * One work item per QP on an unbound workqueue drains, in this order:
 * a partly sent FPDU, a pending Terminate, the MPA v2 RTR, the active
 * work request, inbound RDMA Read Requests (answered with Read
 * Responses), and then new SQEs.  Every FPDU is built in a per-QP buffer
 * and is never larger than the path MSS allows (RFC 5044 MULPDU), except
 * towards a swiwarp peer that announced it takes longer ones (mpa.h,
 * IWARP_MPA_FLAG_LARGE_FPDU), where TCP does the segmenting; the CRC
 * is computed with swiwarp_crc32c() (swiwarp_crc.c).  Sends are
 * non-blocking: on -EAGAIN the engine stops and the socket's write-space
 * upcall restarts it.  The SQ "tx active" flag is maintained as described in
 * include/uapi/swiwarp-abi.h.
 *
 * Sends and Writes from user memory go to TCP as pieces: header and
 * trailer in the FPDU buffer, payload in the registered pages, which TCP
 * copies into its skbs (tx_copy_pages) or, from zcopy_tx_min octets on,
 * references (zero-copy).  Read Responses reference the source pages
 * (zcopy_rresp).  Everything else, and everything with MPA markers, is
 * built whole in the FPDU buffer.  When and how pages go by reference,
 * and how a zero-copy WQE completes only after TCP let go of its pages:
 * swiwarp_zcopy.c.
 */

#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/tcp.h>

#include "swiwarp.h"
#include "swiwarp_zcopy.h"
#include "iwarp/markers.h"
#include "iwarp/rdmap.h"

#define SWIWARP_TX_BUF (IWARP_MPA_MAX_ULPDU + 16)
/* Room for the same FPDU with a marker every 512 octets, and one more. */
#define SWIWARP_TX_BUF_ALLOC (SWIWARP_TX_BUF + IWARP_MPA_MARKER_LEN * \
			      (SWIWARP_TX_BUF / IWARP_MPA_MARKER_PERIOD + 2))

/*
 * Design variants the benchmark compares (Documentation/benchmarks.md).
 * The shipped module has one TX design, fixed here at compile time:
 *
 * tx_copy_pages    copied Sends and Writes from user memory go to TCP as
 *                  page pieces that TCP copies, without a first copy into
 *                  the FPDU buffer (false: gather into the buffer first,
 *                  the design before session 5);
 * direct_tx        the post_send doorbell runs the TX engine itself when
 *                  idle, and the FPDUs of one message go out with
 *                  MSG_MORE (false: always wake the TX worker);
 * direct_tx_burst  TX engine steps (2 per FPDU: build, push) the doorbell
 *                  runs before it hands the rest to the TX worker, which
 *                  the scheduler can run on another CPU while the poster
 *                  goes on posting or polling (0: always the worker).
 *
 * The benchmark's own build of the module (make -C kernel BENCH=1, which
 * defines SWIWARP_BENCH_VARIANTS) turns them into writable parameters so
 * that each choice can be measured against its alternative in one boot.
 */
#ifdef SWIWARP_BENCH_VARIANTS
static bool tx_copy_pages = true;
module_param(tx_copy_pages, bool, 0644);
MODULE_PARM_DESC(tx_copy_pages, "bench build: let TCP copy from the user pages (default 1)");
static bool direct_tx = true;
module_param(direct_tx, bool, 0644);
MODULE_PARM_DESC(direct_tx, "bench build: TX in the post_send doorbell, MSG_MORE (default 1)");
static unsigned int direct_tx_burst = SWIWARP_TX_BURST;
module_param(direct_tx_burst, uint, 0644);
MODULE_PARM_DESC(direct_tx_burst, "bench build: doorbell TX engine steps (default 64)");
#define tx_variant(name) READ_ONCE(name)
#else
static const bool tx_copy_pages = true;
static const bool direct_tx = true;
static const unsigned int direct_tx_burst = SWIWARP_TX_BURST;
#define tx_variant(name) (name)
#endif

static void swiwarp_tx_slot_drop(struct swiwarp_qp *qp)
{
	if (!qp->tx.slot_held)
		return;
	qp->tx.slot_held = false;
	swiwarp_flags_release(&qp->sendq[qp->tx.slot & (qp->num_sqe - 1)].flags,
			      0);
}

/*
 * The active SQ WQE is done (status): complete it now, or, if earlier
 * WQEs wait or it was sent zero-copy, queue it behind them.
 */
static void swiwarp_tx_retire(struct swiwarp_qp *qp, int status)
{
	if (!qp->tx.zc && swiwarp_zc_ring_empty(qp)) {
		swiwarp_tx_slot_drop(qp);
		swiwarp_qp_complete_sq(qp, &qp->tx.wqe, status);
		return;
	}
	swiwarp_zc_queue(qp, status);
}

/* An FPDU buffer; with markers, tx.buf and tx.mbuf trade places. */
u8 *swiwarp_tx_alloc_buf(void)
{
	return swiwarp_alloc(kvmalloc(SWIWARP_TX_BUF_ALLOC, GFP_KERNEL));
}

int swiwarp_tx_init(struct swiwarp_qp *qp)
{
	qp->tx.buf = swiwarp_tx_alloc_buf();
	if (!qp->tx.buf)
		return -ENOMEM;
	if (swiwarp_zc_init(qp)) {
		kvfree(qp->tx.buf);
		qp->tx.buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Teardown, under tx_lock: no CQEs any more, just release everything. */
void swiwarp_tx_free(struct swiwarp_qp *qp)
{
	swiwarp_zc_free(qp);
	if (qp->tx.wqe.active)
		swiwarp_wqe_put_mem(&qp->tx.wqe);
	qp->tx.wqe.active = false;
	kvfree(qp->tx.buf);
	qp->tx.buf = NULL;
	kvfree(qp->tx.mbuf);
	qp->tx.mbuf = NULL;
}

static void swiwarp_tx_run(struct swiwarp_qp *qp, unsigned int budget);

/* Run the TX engine of qp soon.  Any context. */
void swiwarp_sq_kick(struct swiwarp_qp *qp)
{
	if (!kref_get_unless_zero(&qp->ref))
		return;
	if (!queue_work(swiwarp_tx_wq, &qp->tx_work))
		swiwarp_qp_put(qp);
}

/*
 * The doorbell: run the TX engine right here, in the process context of
 * the post_send system call, when nobody else runs it.  Saves the worker
 * wake-up and context switch per post (most of a small message's
 * latency).  The engine never blocks on the socket (MSG_DONTWAIT) and
 * stops after direct_tx_burst steps, handing the rest to the worker; if
 * the worker holds tx_lock it is running and will see the new WQEs (the
 * SQ idle protocol guarantees that), so a queued kick is enough.
 */
void swiwarp_sq_kick_direct(struct swiwarp_qp *qp)
{
	unsigned int budget = tx_variant(direct_tx_burst);

	if (!tx_variant(direct_tx) || !budget || !mutex_trylock(&qp->tx_lock)) {
		swiwarp_sq_kick(qp);
		return;
	}
	if (qp->tx.buf)
		swiwarp_tx_run(qp, budget);
	mutex_unlock(&qp->tx_lock);
}

/*
 * Queue a Terminate (RFC 5040 section 4.8).  layer_etype holds the layer
 * in the high and the error type in the low nibble.  seg, if given, is
 * the offending FPDU from its MPA ULPDU Length field on, followed by its
 * DDP header of ddp_hdr_len (14 or 18) bytes.  The ULPDU Length is the
 * length of the DDP Segment (header and payload, RFC 5041's definition),
 * which is what the Terminate's "DDP Segment Length" reports; Intel's
 * irdma copies the same field (upstream siw reports the payload only).
 * Any context; only the first Terminate is sent.
 */
static_assert(sizeof(((struct swiwarp_tx *)0)->term_rreq) ==
	      IWARP_RDMAP_READ_REQ_LEN);

/*
 * ... and with rreq, the error is against an RDMA Read Request whose 28
 * octets of RDMAP header are there: the Terminate carries them too, R
 * set (RFC 5040 section 4.8; R only with the DDP header copy, D).
 */
void swiwarp_send_terminate_rreq(struct swiwarp_qp *qp, u8 layer_etype,
				 u8 ecode, const u8 *seg, u32 ddp_hdr_len,
				 const u8 *rreq)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->orq_lock, flags);
	if (!qp->tx.term_pending && !qp->term_sent) {
		qp->tx.term_pending = true;
		qp->tx.term_layer_etype = layer_etype;
		qp->tx.term_ecode = ecode;
		qp->tx.term_hdr_len = 0;
		qp->tx.term_rreq_valid = false;
		if (seg && (ddp_hdr_len == IWARP_DDP_TAGGED_HDR_LEN ||
			    ddp_hdr_len == IWARP_DDP_UNTAGGED_HDR_LEN)) {
			qp->tx.term_seg_len = iwarp_get_be16(seg);
			memcpy(qp->tx.term_hdr, seg + IWARP_MPA_ULPDU_LEN_FIELD,
			       ddp_hdr_len);
			qp->tx.term_hdr_len = ddp_hdr_len;
			if (rreq) {
				memcpy(qp->tx.term_rreq, rreq,
				       IWARP_RDMAP_READ_REQ_LEN);
				qp->tx.term_rreq_valid = true;
			}
		}
	}
	spin_unlock_irqrestore(&qp->orq_lock, flags);
	swiwarp_sq_kick(qp);
}

void swiwarp_send_terminate(struct swiwarp_qp *qp, u8 layer_etype, u8 ecode,
			    const u8 *seg, u32 ddp_hdr_len)
{
	swiwarp_send_terminate_rreq(qp, layer_etype, ecode, seg, ddp_hdr_len,
				    NULL);
}

int swiwarp_tx_rtr(struct swiwarp_qp *qp, int rtr)
{
	qp->tx.rtr_pending = rtr;
	return 0;
}

/* ------------------------------------------------------ FPDU framing */

/*
 * The payload of a large FPDU (a peer that takes FPDUs longer than a
 * segment, mpa.h): 15 pages, so that one from page-aligned memory is 15
 * page pieces and never more than SWIWARP_TX_FRAGS with its header and
 * trailer, and the header still fits the 16-bit ULPDU length.
 */
#define SWIWARP_TX_LARGE_PAYLOAD (15 * 4096)

static u32 swiwarp_tx_max_payload(struct swiwarp_qp *qp, u32 hdr_len)
{
	u32 mss, mulpdu;

	/* Markers keep their FPDUs within a segment, as RFC 5044 has them. */
	if (qp->large_fpdu && !qp->tx_markers)
		return SWIWARP_TX_LARGE_PAYLOAD;
	mss = READ_ONCE(tcp_sk(qp->sock->sk)->mss_cache);
	mulpdu = min_t(u32, iwarp_mpa_mulpdu(mss, qp->tx_markers),
		       IWARP_MPA_MAX_ULPDU);
	if (mulpdu <= hdr_len + 8)
		return 8;	/* pathological MSS: keep making progress */
	return mulpdu - hdr_len;
}

/* Encode the DDP/RDMAP header at buf + 2; returns its length or < 0. */
static int swiwarp_tx_hdr(struct swiwarp_qp *qp,
			  const struct iwarp_rdmap_msg *msg)
{
	int rv = iwarp_rdmap_encode(msg, qp->tx.buf + IWARP_MPA_ULPDU_LEN_FIELD,
				    SWIWARP_TX_BUF - 8);

	return rv < 0 ? -EINVAL : rv;
}

/*
 * RFC 5044 markers: copy the unmarked FPDU of len octets (CRC field
 * included) from buf to mbuf with a marker wherever the stream offset
 * from the marker origin is a multiple of 512, and make mbuf the FPDU to
 * send.  Where markers go and what they hold is the wire core's
 * (iwarp/markers.h, with the origin at mk_pos 0); a marker that would
 * follow the CRC field opens the next FPDU instead.  The copy is done
 * here, a run of payload at a time, rather than by
 * iwarp_markers_insert(), which copies octet by octet and computes the
 * CRC in software.  Markers can never split the 4-aligned CRC field, and
 * the CRC covers every octet in front of it, markers included (RFC 5044
 * CRC calculation), so it is computed here over the marked copy.
 */
static void swiwarp_tx_mark(struct swiwarp_qp *qp, u32 len)
{
	struct swiwarp_tx *tx = &qp->tx;
	const u8 *src = tx->buf;
	u8 *dst = tx->mbuf;
	/* where in the marked FPDU the next marker goes; mk_pos from 0 */
	u32 mark = iwarp_marker_first_offset(0, tx->mk_pos);
	u32 c = 0, w = 0;

	while (c < len) {
		u32 n;

		if (w == mark) {
			iwarp_marker_put(dst + w, (u16)w);
			w += IWARP_MPA_MARKER_LEN;
			mark += IWARP_MPA_MARKER_PERIOD;
			continue;
		}
		n = min(len - c, mark - w);
		memcpy(dst + w, src + c, n);
		c += n;
		w += n;
	}
	if (qp->crc)
		iwarp_crc32c_put(dst + w - IWARP_MPA_CRC_FIELD,
				 ~swiwarp_crc32c(~0U, dst, w - IWARP_MPA_CRC_FIELD));
	tx->mk_pos += w;
	tx->mbuf = tx->buf;
	tx->buf = dst;
	tx->buf_len = w;
}

/* Add length, pad and CRC around header + payload already in buf. */
static void swiwarp_tx_frame(struct swiwarp_qp *qp, u32 ulpdu_len)
{
	u8 *buf = qp->tx.buf;
	u32 pad = iwarp_mpa_pad_len(ulpdu_len);
	u32 n = IWARP_MPA_ULPDU_LEN_FIELD + ulpdu_len;
	u32 crc = 0;

	iwarp_put_be16(buf, (u16)ulpdu_len);
	memset(buf + n, 0, pad);
	n += pad;
	qp->tx.buf_sent = 0;
	qp->tx.payload = 0;
	qp->tx.nfrag = 0;
	qp->tx.more = false;
	qp->tx.ubuf = NULL;
	qp->tx.copy_pages = false;
	if (unlikely(qp->tx_markers)) {
		iwarp_crc32c_put(buf + n, 0);
		swiwarp_tx_mark(qp, n + IWARP_MPA_CRC_FIELD);
		return;
	}
	if (qp->crc)
		crc = ~swiwarp_crc32c(~0U, buf, n);
	iwarp_crc32c_put(buf + n, crc);
	qp->tx.buf_len = n + IWARP_MPA_CRC_FIELD;
}

/* Send up to len octets of one piece; flags as for sendmsg. */
static int swiwarp_tx_send_frag(struct swiwarp_qp *qp,
				const struct swiwarp_tx_frag *f, u32 off,
				u32 len, int flags)
{
	struct msghdr msg = { .msg_flags = flags };
	struct kvec iov;

	if (f->page)
		return swiwarp_sendpage(qp->sock, f->page, f->off + off, len,
					flags);
	iov.iov_base = (u8 *)f->kva + off;
	iov.iov_len = len;
	return kernel_sendmsg(qp->sock, &msg, &iov, 1, len);
}

/* A piece in kernel memory (kmalloc or vmalloc) as page pieces. */
static u32 swiwarp_tx_kva_bvec(struct bio_vec *bv, const u8 *kva, u32 len)
{
	u32 n = 0;

	while (len) {
		u32 in_pg = offset_in_page(kva);
		u32 take = min_t(u32, len, PAGE_SIZE - in_pg);

		bv[n].bv_page = is_vmalloc_addr(kva) ? vmalloc_to_page(kva) :
			virt_to_page(kva);
		bv[n].bv_offset = in_pg;
		bv[n].bv_len = take;
		n++;
		kva += take;
		len -= take;
	}
	return n;
}

/* One piece of the FPDU as bio_vecs; returns how many (at most two). */
u32 swiwarp_tx_frag_bvec(struct bio_vec *bv, const struct swiwarp_tx_frag *f)
{
	if (!f->page)
		return swiwarp_tx_kva_bvec(bv, f->kva, f->len);
	bv->bv_page = f->page;
	bv->bv_offset = f->off;
	bv->bv_len = f->len;
	return 1;
}

/*
 * Send the rest of the current FPDU, from octet buf_sent, in one sendmsg
 * that copies every piece (header, user pages, trailer) into TCP's own
 * buffers.  Returns the octets taken, like sendmsg.
 */
static int swiwarp_tx_send_copied(struct swiwarp_qp *qp, int flags)
{
	struct swiwarp_tx *tx = &qp->tx;
	/* a kernel-memory piece covers at most two pages */
	struct bio_vec bv[SWIWARP_TX_FRAGS + 4];
	struct msghdr msg = { .msg_flags = flags };
	u32 i, n = 0;

	for (i = 0; i < tx->nfrag; i++)
		n += swiwarp_tx_frag_bvec(bv + n, &tx->frag[i]);
	if (tx->more)
		msg.msg_flags |= MSG_MORE;
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, n, tx->buf_len);
	iov_iter_advance(&msg.msg_iter, tx->buf_sent);
	return sock_sendmsg(qp->sock, &msg);
}

/*
 * Send from octet buf_sent of the current FPDU up to the end of the piece
 * holding it (zero-copy: to the end of that run of page pieces).  Returns
 * the octets taken, like sendmsg.
 */
static int swiwarp_tx_send_piece(struct swiwarp_qp *qp, int flags)
{
	struct swiwarp_tx *tx = &qp->tx;
	struct swiwarp_tx_frag whole = {
		.kva = tx->buf, .len = tx->buf_len,
	};
	const struct swiwarp_tx_frag *f = &whole;
	u32 pos = 0, off, i;

	/* Find the piece holding octet buf_sent. */
	for (i = 0; i < tx->nfrag; i++) {
		f = &tx->frag[i];
		if (tx->buf_sent < pos + f->len)
			break;
		pos += f->len;
	}
	off = tx->buf_sent - pos;
	if (f->page && tx->ubuf)
		return swiwarp_zc_send(qp, i, off, flags);
	if (tx->buf_sent + (f->len - off) < tx->buf_len)
		flags |= MSG_MORE | (f->page ? SWIWARP_MSG_SENDPAGE_NOTLAST : 0);
	else if (tx->more)
		flags |= MSG_MORE;
	return swiwarp_tx_send_frag(qp, f, off, f->len - off, flags);
}

/* Push the current FPDU.  0 when fully sent, -EAGAIN, or an error. */
static int swiwarp_tx_push(struct swiwarp_qp *qp)
{
	struct swiwarp_tx *tx = &qp->tx;
	const int flags = MSG_DONTWAIT | MSG_NOSIGNAL;

	while (tx->buf_sent < tx->buf_len) {
		/* A copied FPDU goes out whole in one sendmsg. */
		int rv = tx->copy_pages ? swiwarp_tx_send_copied(qp, flags) :
			swiwarp_tx_send_piece(qp, flags);

		if (rv < 0)
			return rv;
		if (rv == 0)
			return -EAGAIN;
		tx->buf_sent += rv;
	}
	return 0;
}

/* Start a paged FPDU: the header (hlen octets) is at buf + 2. */
static void swiwarp_tx_pages_begin(struct swiwarp_qp *qp, u32 hlen, u32 n,
				   u32 *crc)
{
	struct swiwarp_tx *tx = &qp->tx;

	iwarp_put_be16(tx->buf, (u16)(hlen + n));
	tx->frag[0] = (struct swiwarp_tx_frag){
		.kva = tx->buf, .len = IWARP_MPA_ULPDU_LEN_FIELD + hlen,
	};
	tx->nfrag = 1;
	tx->ubuf = NULL;
	tx->copy_pages = false;
	*crc = ~0U;
	if (qp->crc)
		*crc = swiwarp_crc32c(*crc, tx->buf, tx->frag[0].len);
}

/*
 * Add n octets at va of the user region mem as page pieces, CRC over
 * them.  -EAGAIN when they cannot be sent that way.
 */
static int swiwarp_tx_pages_add(struct swiwarp_qp *qp, struct swiwarp_mem *mem,
				u64 va, u32 n, u32 *crc)
{
	struct swiwarp_tx *tx = &qp->tx;
	u64 off = va - mem->va + mem->pg_off;

	if (mem->type != SWIWARP_MEM_UMEM)
		return -EAGAIN;
	while (n) {
		unsigned long pg = off >> PAGE_SHIFT;
		u32 in_pg = off & ~PAGE_MASK;
		u32 take = min_t(u32, n, PAGE_SIZE - in_pg);
		struct page *page;

		if (pg >= mem->npages || tx->nfrag >= SWIWARP_TX_FRAGS - 1)
			return -EAGAIN;
		page = mem->pages[pg];
		if (!sendpage_ok(page))
			return -EAGAIN;
		if (qp->crc) {
			void *kva = kmap_local_page(page);

			*crc = swiwarp_crc32c(*crc, kva + in_pg, take);
			kunmap_local(kva);
		}
		tx->frag[tx->nfrag++] = (struct swiwarp_tx_frag){
			.page = page, .off = in_pg, .len = take,
		};
		off += take;
		n -= take;
	}
	return 0;
}

/* Finish a paged FPDU of ulpdu octets: pad and CRC as the last piece. */
static void swiwarp_tx_pages_end(struct swiwarp_qp *qp, u32 ulpdu, u32 crc)
{
	struct swiwarp_tx *tx = &qp->tx;
	u32 pad = iwarp_mpa_pad_len(ulpdu);
	static const u8 zero[4];

	memset(tx->trailer, 0, pad);
	if (qp->crc)
		crc = ~swiwarp_crc32c(crc, zero, pad);
	else
		crc = 0;
	iwarp_crc32c_put(tx->trailer + pad, crc);
	tx->frag[tx->nfrag++] = (struct swiwarp_tx_frag){
		.kva = tx->trailer, .len = pad + IWARP_MPA_CRC_FIELD,
	};
	tx->more = false;
	tx->buf_len = IWARP_MPA_ULPDU_LEN_FIELD + ulpdu + pad +
		IWARP_MPA_CRC_FIELD;
	tx->buf_sent = 0;
}

/*
 * Frame the next FPDU of the Send or Write wqe as pieces: header (hlen
 * octets at buf + 2), the n payload octets from message offset
 * wqe->processed as pieces of the registered user pages, and the
 * trailer.  The caller decides whether TCP references the pages
 * (zero-copy) or copies them.  -EAGAIN when the payload cannot be
 * described this way (the caller gathers it into buf).
 */
static int swiwarp_tx_frame_sgl(struct swiwarp_qp *qp,
				struct swiwarp_wqe *wqe, u32 hlen, u32 n)
{
	u32 off = wqe->processed, left = n, crc;
	int i;

	swiwarp_tx_pages_begin(qp, hlen, n, &crc);
	for (i = 0; i < wqe->sqe.num_sge && left; i++) {
		struct swiwarp_sge *sge = &wqe->sqe.sge[i];
		u32 take;

		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		take = min(sge->length - off, left);
		if (swiwarp_tx_pages_add(qp, wqe->mem[i], sge->addr + off, take,
					 &crc))
			return -EAGAIN;
		left -= take;
		off = 0;
	}
	if (left)
		return -EAGAIN;
	swiwarp_tx_pages_end(qp, hlen + n, crc);
	return 0;
}

/*
 * Frame a Read Response FPDU whose header (hlen octets) is at buf + 2 and
 * whose n payload octets are sent straight from the pinned pages of the
 * user region mem at va.  The CRC is computed over the pages now.
 * Returns -EAGAIN when the region cannot be sent this way (the caller
 * copies instead).
 */
static int swiwarp_tx_frame_pages(struct swiwarp_qp *qp,
				  struct swiwarp_mem *mem, u64 va, u32 hlen,
				  u32 n)
{
	u32 crc;

	swiwarp_tx_pages_begin(qp, hlen, n, &crc);
	if (swiwarp_tx_pages_add(qp, mem, va, n, &crc))
		return -EAGAIN;
	swiwarp_tx_pages_end(qp, hlen + n, crc);
	return 0;
}

/* ------------------------------------------------------- validation */

/* Check a freshly fetched SQE; returns a wc status. */
static int swiwarp_wqe_validate(struct swiwarp_qp *qp,
				struct swiwarp_wqe *wqe)
{
	struct swiwarp_sqe *sqe = &wqe->sqe;

	if (sqe->opcode >= SWIWARP_OP_MAX || sqe->opcode == SWIWARP_OP_RECV)
		return SWIWARP_WC_LOC_QP_OP_ERR;
	if (qp->user && sqe->opcode > SWIWARP_OP_SEND_INV &&
	    sqe->opcode != SWIWARP_OP_WRITE_IMM &&
	    sqe->opcode != SWIWARP_OP_SEND_IMM &&
	    !swiwarp_op_is_atomic(sqe->opcode))
		return SWIWARP_WC_LOC_QP_OP_ERR;
	if (sqe->opcode == SWIWARP_OP_RECV_RDMA_IMM)
		return SWIWARP_WC_LOC_QP_OP_ERR;
	/*
	 * Immediate Data toward a peer that did not announce RFC 7306
	 * (a provider that skipped its check): fail here, never on the
	 * wire, where the peer would answer with a Terminate.
	 */
	if ((sqe->opcode == SWIWARP_OP_WRITE_IMM ||
	     sqe->opcode == SWIWARP_OP_SEND_IMM ||
	     swiwarp_op_is_atomic(sqe->opcode)) && !qp->peer_rfc7306)
		return SWIWARP_WC_LOC_QP_OP_ERR;
	if (sqe->num_sge > SWIWARP_MAX_SGE)
		return SWIWARP_WC_LOC_QP_OP_ERR;

	switch (sqe->opcode) {
	case SWIWARP_OP_READ:
	case SWIWARP_OP_READ_LOCAL_INV:
		if (sqe->num_sge > SWIWARP_MAX_SGE_RD ||
		    (sqe->flags & SWIWARP_WQE_INLINE))
			return SWIWARP_WC_LOC_QP_OP_ERR;
		if (!qp->ord)
			return SWIWARP_WC_LOC_QP_OP_ERR;
		return swiwarp_wqe_check_sgl(qp, wqe, IB_ACCESS_LOCAL_WRITE);
	case SWIWARP_OP_ATOMIC_CS:
	case SWIWARP_OP_ATOMIC_FA:
		/*
		 * One local sink of at least 8 octets for the original value;
		 * only its first 8 are written.  The remote alignment is the
		 * responder's to check (a Terminate).
		 */
		if (sqe->num_sge != 1 || (sqe->flags & SWIWARP_WQE_INLINE) ||
		    !qp->ord)
			return SWIWARP_WC_LOC_QP_OP_ERR;
		if (sqe->atomic.sink.length < sizeof(u64))
			return SWIWARP_WC_LOC_LEN_ERR;
		sqe->atomic.sink.length = sizeof(u64);
		return swiwarp_wqe_check_sgl(qp, wqe, IB_ACCESS_LOCAL_WRITE);
	case SWIWARP_OP_WRITE:
	case SWIWARP_OP_WRITE_IMM:
	case SWIWARP_OP_SEND:
	case SWIWARP_OP_SEND_INV:
	case SWIWARP_OP_SEND_IMM:
		if (sqe->flags & SWIWARP_WQE_INLINE) {
			if (sqe->inline_len > qp->max_inline)
				return SWIWARP_WC_LOC_LEN_ERR;
			sqe->num_sge = 0;
			wqe->bytes = sqe->inline_len;
			return SWIWARP_WC_SUCCESS;
		}
		return swiwarp_wqe_check_sgl(qp, wqe, 0);
	default:
		return SWIWARP_WC_SUCCESS;
	}
}

/*
 * Kernel-only local operations, fast register and local invalidate
 * (swiwarp_mem.c does the work); returns a wc status.
 */
static int swiwarp_tx_local_op(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe)
{
	struct swiwarp_sqe *sqe = &wqe->sqe;
	int rv;

	switch (sqe->opcode) {
	case SWIWARP_OP_LOCAL_INV:
		rv = swiwarp_mem_invalidate(qp->sdev, qp->base.pd,
					    sqe->inv_stag, false);
		break;
	case SWIWARP_OP_REG_MR:
		/* The SQE carries the ib_mr, its new key and the rights. */
		rv = swiwarp_mem_fast_reg((struct ib_mr *)(uintptr_t)sqe->raddr,
					  qp->base.pd, sqe->rkey & 0xff,
					  sqe->inv_stag);
		break;
	default:
		return SWIWARP_WC_LOC_QP_OP_ERR;
	}
	return rv ? SWIWARP_WC_LOC_PROT_ERR : SWIWARP_WC_SUCCESS;
}

/* ------------------------------------------------------- SQ access */

static void swiwarp_sq_set_active(struct swiwarp_qp *qp, bool on)
{
	WRITE_ONCE(qp->sq_ctrl->flags, on ? SWIWARP_SQ_CTRL_TX_ACTIVE : 0);
}

/*
 * Copy the next SQE into wqe and hand its slot back, or, with hold, keep
 * the slot (tx.slot; the caller hands it back with swiwarp_tx_slot_drop()
 * or when the WQE completes).  Implements the kernel half of the idle
 * protocol: clear TX_ACTIVE, full barrier, re-check.  Returns false when
 * the SQ is empty (TX_ACTIVE left clear).
 */
static bool swiwarp_sq_fetch(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe,
			     bool hold)
{
	struct swiwarp_sqe *sqe = &qp->sendq[qp->sq_get & (qp->num_sqe - 1)];

	if (!(swiwarp_flags_acquire(&sqe->flags) & SWIWARP_WQE_VALID)) {
		swiwarp_sq_set_active(qp, false);
		/* K2 of the doorbell protocol: store, full barrier, load. */
		smp_mb();
		if (!(swiwarp_flags_acquire(&sqe->flags) & SWIWARP_WQE_VALID))
			return false;
		swiwarp_sq_set_active(qp, true);
	}
	memset(wqe, 0, sizeof(*wqe));
	memcpy(&wqe->sqe, sqe, sizeof(*sqe));
	wqe->sqe.flags &= ~SWIWARP_WQE_VALID;
	if (qp->sig_all)
		wqe->sqe.flags |= SWIWARP_WQE_SIGNALED;
	if (hold) {
		qp->tx.slot = qp->sq_get;
		qp->tx.slot_held = true;
	} else {
		swiwarp_flags_release(&sqe->flags, 0);
	}
	qp->sq_get++;
	wqe->active = true;
	return true;
}

/* ------------------------------------------------------- FPDU builders */

static int swiwarp_tx_build_term(struct swiwarp_qp *qp)
{
	struct iwarp_rdmap_msg msg;
	unsigned long flags;
	int hlen;

	iwarp_rdmap_init(&msg, IWARP_OP_TERMINATE);
	msg.ddp.msn = ++qp->tx.msn[IWARP_DDP_QN_TERMINATE];
	spin_lock_irqsave(&qp->orq_lock, flags);
	msg.term.layer = qp->tx.term_layer_etype >> 4;
	msg.term.etype = qp->tx.term_layer_etype & 0xf;
	msg.term.ecode = qp->tx.term_ecode;
	if (qp->tx.term_hdr_len) {
		msg.term.flag_m = true;
		msg.term.flag_d = true;
		msg.term.ddp_seg_len = qp->tx.term_seg_len;
		msg.term.ddp_hdr = qp->tx.term_hdr;
		msg.term.ddp_hdr_len = qp->tx.term_hdr_len;
		if (qp->tx.term_rreq_valid) {
			msg.term.flag_r = true;
			msg.term.rdmap_hdr = qp->tx.term_rreq;
			msg.term.rdmap_hdr_len = IWARP_RDMAP_READ_REQ_LEN;
		}
	}
	qp->tx.term_pending = false;
	qp->term_sent = true;
	hlen = swiwarp_tx_hdr(qp, &msg);
	spin_unlock_irqrestore(&qp->orq_lock, flags);
	if (hlen < 0)
		return hlen;
	swiwarp_tx_frame(qp, hlen);
	return 0;
}

static int swiwarp_tx_build_rtr(struct swiwarp_qp *qp, int rtr)
{
	struct iwarp_rdmap_msg msg;
	int hlen;

	switch (rtr) {
	case SWIWARP_RTR_WRITE:
		iwarp_rdmap_init(&msg, IWARP_OP_WRITE);
		msg.ddp.stag = 1;
		break;
	case SWIWARP_RTR_READ: {
		struct swiwarp_orq_entry *o;
		unsigned long flags;

		iwarp_rdmap_init(&msg, IWARP_OP_READ_REQUEST);
		msg.ddp.msn = ++qp->tx.msn[IWARP_DDP_QN_READ_REQUEST];
		msg.rreq.sink_stag = 1;
		msg.rreq.src_stag = 1;
		spin_lock_irqsave(&qp->orq_lock, flags);
		o = &qp->orq[qp->orq_put & (qp->orq_size - 1)];
		memset(o, 0, sizeof(*o));
		o->wqe.sqe.opcode = SWIWARP_OP_READ;
		o->wqe.active = true;
		o->msn = msg.ddp.msn;
		o->valid = true;
		qp->orq_put++;
		spin_unlock_irqrestore(&qp->orq_lock, flags);
		break;
	}
	default:
		iwarp_rdmap_init(&msg, IWARP_OP_SEND);
		msg.ddp.msn = ++qp->tx.msn[IWARP_DDP_QN_SEND];
		break;
	}
	hlen = swiwarp_tx_hdr(qp, &msg);
	if (hlen < 0)
		return hlen;
	swiwarp_tx_frame(qp, hlen);
	return 0;
}

/*
 * An Immediate Data message (RFC 7306): untagged, queue 0 (it takes the
 * next Send MSN), 8 octets.  Octets 0-3 carry the verbs' 32-bit value in
 * the byte order the consumer gave (network order).
 *
 * WRITE_IMM: the message ends the WQE and takes one receive WQE at the
 * peer; octets 4-7 are zero; with SOLICITED it is Immediate Data with SE.
 *
 * SEND_IMM (swiwarp convention, Documentation/protocol.md): octets 4-7
 * are IWARP_IMM_FLAG_SEND_FOLLOWS and the Send comes next; the peer keeps
 * the value for that Send, whose receive WQE completes with it.  Always
 * opcode 0x8: the Solicited Event goes on the Send, the message the
 * receiver completes.
 */
static int swiwarp_tx_build_imm(struct swiwarp_qp *qp, bool *done)
{
	struct swiwarp_wqe *wqe = &qp->tx.wqe;
	struct swiwarp_sqe *sqe = &wqe->sqe;
	bool send = sqe->opcode == SWIWARP_OP_SEND_IMM;
	struct iwarp_rdmap_msg msg;
	int hlen;

	iwarp_rdmap_init(&msg, !send && (sqe->flags & SWIWARP_WQE_SOLICITED) ?
			 IWARP_OP_IMMEDIATE_SE : IWARP_OP_IMMEDIATE);
	msg.ddp.msn = ++qp->tx.msn[IWARP_DDP_QN_SEND];
	msg.immediate = (u64)be32_to_cpu((__force __be32)sqe->imm_data) << 32;
	if (send)
		msg.immediate |= IWARP_IMM_FLAG_SEND_FOLLOWS;
	hlen = swiwarp_tx_hdr(qp, &msg);
	if (hlen < 0)
		return hlen;
	swiwarp_tx_frame(qp, hlen);
	wqe->imm_sent = true;
	*done = !send;
	return 0;
}

/*
 * Build the next FPDU of the active WQE (Write, Send, Read Request or,
 * in phase READ_RESP, a Read Response).  Sets *done when this FPDU carries
 * the end of the message.
 */
static int swiwarp_tx_build_wqe(struct swiwarp_qp *qp, bool *done)
{
	struct swiwarp_wqe *wqe = &qp->tx.wqe;
	struct swiwarp_sqe *sqe = &wqe->sqe;
	struct iwarp_rdmap_msg msg;
	bool rresp = qp->tx.phase == SWIWARP_TX_READ_RESP;
	u32 left, n, maxpay;
	int hlen, rv;

	*done = false;
	if (rresp) {
		iwarp_rdmap_init(&msg, IWARP_OP_READ_RESPONSE);
		msg.ddp.stag = qp->tx.rresp.sink_stag;
		msg.ddp.to = qp->tx.rresp.sink_to + wqe->processed;
	} else {
		switch (sqe->opcode) {
		case SWIWARP_OP_WRITE_IMM:
			/*
			 * The Write's FPDUs first (one without payload for a
			 * zero-length Write: the peer reports the length of
			 * the Write right before the Immediate Data, which
			 * must be this one's), then one Immediate Data
			 * message: the peer places the data before it sees
			 * the value.
			 */
			if (!wqe->write_sent) {
				iwarp_rdmap_init(&msg, IWARP_OP_WRITE);
				msg.ddp.stag = sqe->rkey;
				msg.ddp.to = sqe->raddr + wqe->processed;
				break;
			}
			return swiwarp_tx_build_imm(qp, done);
		case SWIWARP_OP_WRITE:
			iwarp_rdmap_init(&msg, IWARP_OP_WRITE);
			msg.ddp.stag = sqe->rkey;
			msg.ddp.to = sqe->raddr + wqe->processed;
			break;
		case SWIWARP_OP_SEND_IMM:
			/* The flagged Immediate Data first, then the Send. */
			if (!wqe->imm_sent)
				return swiwarp_tx_build_imm(qp, done);
			fallthrough;
		case SWIWARP_OP_SEND:
		case SWIWARP_OP_SEND_INV: {
			bool se = sqe->flags & SWIWARP_WQE_SOLICITED;
			unsigned int op;

			if (sqe->opcode != SWIWARP_OP_SEND_INV)
				op = se ? IWARP_OP_SEND_SE : IWARP_OP_SEND;
			else
				op = se ? IWARP_OP_SEND_SE_INVALIDATE :
					IWARP_OP_SEND_INVALIDATE;
			iwarp_rdmap_init(&msg, op);
			if (!wqe->processed)
				++qp->tx.msn[IWARP_DDP_QN_SEND];
			msg.ddp.msn = qp->tx.msn[IWARP_DDP_QN_SEND];
			msg.ddp.mo = wqe->processed;
			if (sqe->opcode == SWIWARP_OP_SEND_INV)
				msg.inval_stag = sqe->inv_stag;
			break;
		}
		case SWIWARP_OP_READ:
		case SWIWARP_OP_READ_LOCAL_INV:
			iwarp_rdmap_init(&msg, IWARP_OP_READ_REQUEST);
			msg.ddp.msn = ++qp->tx.msn[IWARP_DDP_QN_READ_REQUEST];
			if (sqe->num_sge) {
				msg.rreq.sink_stag = sqe->sge[0].lkey;
				msg.rreq.sink_to = sqe->sge[0].addr;
			}
			msg.rreq.size = wqe->bytes;
			msg.rreq.src_stag = sqe->rkey;
			msg.rreq.src_to = sqe->raddr;
			hlen = swiwarp_tx_hdr(qp, &msg);
			if (hlen < 0)
				return hlen;
			swiwarp_tx_frame(qp, hlen);
			*done = true;
			return 0;
		case SWIWARP_OP_ATOMIC_CS:
		case SWIWARP_OP_ATOMIC_FA:
			/*
			 * RFC 7306 Atomic Request: queue 1, the MSN space of
			 * the Read Requests.  The verbs have no masks: an
			 * Add Mask of 0 is one 64-bit add, all-ones Compare
			 * and Swap Masks compare and swap all 64 bits.
			 */
			iwarp_rdmap_init(&msg, IWARP_OP_ATOMIC_REQUEST);
			msg.ddp.msn = ++qp->tx.msn[IWARP_DDP_QN_ATOMIC_REQUEST];
			msg.areq.req_id = qp->tx.req_id;
			msg.areq.stag = sqe->rkey;
			msg.areq.to = sqe->raddr;
			msg.areq.add_swap = sqe->opcode == SWIWARP_OP_ATOMIC_FA ?
				sqe->atomic.compare_add : sqe->atomic.swap;
			if (sqe->opcode == SWIWARP_OP_ATOMIC_FA) {
				msg.areq.aopcode = IWARP_AOP_FETCH_ADD;
			} else {
				msg.areq.aopcode = IWARP_AOP_COMPARE_SWAP;
				msg.areq.add_swap_mask = ~0ULL;
				msg.areq.compare = sqe->atomic.compare_add;
				msg.areq.compare_mask = ~0ULL;
			}
			hlen = swiwarp_tx_hdr(qp, &msg);
			if (hlen < 0)
				return hlen;
			swiwarp_tx_frame(qp, hlen);
			*done = true;
			return 0;
		default:
			return -EINVAL;
		}
	}

	hlen = iwarp_rdmap_encoded_len(&msg);
	maxpay = swiwarp_tx_max_payload(qp, hlen);
	left = wqe->bytes - wqe->processed;
	n = min(left, maxpay);
	msg.ddp.last = n == left;
	hlen = swiwarp_tx_hdr(qp, &msg);
	if (hlen < 0)
		return hlen;

	if (!rresp && qp->tx.zc_want && !qp->tx.zc &&
	    !wqe->processed)
		swiwarp_zc_begin(qp);
	if (n && qp->tx.zc && !swiwarp_tx_frame_sgl(qp, wqe, hlen, n)) {
		swiwarp_zc_frame(qp);
		goto framed;
	}

	/*
	 * A copied Send or Write from user memory: TCP copies the payload
	 * straight from the pinned user pages into its skbs, instead of
	 * from buf after we gathered it there (one copy instead of two).
	 * The WQE completes when its last FPDU is pushed, as any copied
	 * one: by then TCP holds its own copy.  The CRC is computed when
	 * the FPDU is framed; a consumer that changes the buffer of a
	 * posted WR before TCP copied it (which the verbs forbid) makes
	 * the peer see a CRC error and terminate, never a silent mix.
	 */
	if (n && !rresp && !qp->tx.zc && !qp->tx_markers &&
	    !(sqe->flags & SWIWARP_WQE_INLINE) && tx_variant(tx_copy_pages) &&
	    !swiwarp_tx_frame_sgl(qp, wqe, hlen, n)) {
		qp->tx.copy_pages = true;
		goto framed;
	}

	/* A Read Response from the source pages, when it may be. */
	if (n && rresp && swiwarp_zc_rresp(qp) &&
	    !swiwarp_tx_frame_pages(qp, wqe->mem[0],
				    qp->tx.rresp.src_to + wqe->processed,
				    hlen, n))
		goto framed;
	if (n) {
		u8 *dst = qp->tx.buf + IWARP_MPA_ULPDU_LEN_FIELD + hlen;

		if (rresp)
			rv = swiwarp_mem_copy(wqe->mem[0],
					      qp->tx.rresp.src_to +
					      wqe->processed, dst, n, false);
		else if (sqe->flags & SWIWARP_WQE_INLINE)
			rv = (memcpy(dst, sqe->inline_data + wqe->processed, n),
			      0);
		else
			rv = swiwarp_sgl_gather(wqe, wqe->processed, n, dst);
		if (rv)
			return rv;
	}
	swiwarp_tx_frame(qp, hlen + n);
framed:
	qp->tx.payload = n;
	wqe->processed += n;
	*done = msg.ddp.last;
	/* The Immediate Data message is still to come. */
	if (!rresp && sqe->opcode == SWIWARP_OP_WRITE_IMM) {
		wqe->write_sent = msg.ddp.last;
		*done = false;
	}
	/* More FPDUs of this message follow: let TCP pack them. */
	qp->tx.more = !msg.ddp.last && tx_variant(direct_tx);
	return 0;
}

/*
 * Perform a queued Atomic Request and frame its Atomic Response (queue
 * 3, RFC 7306).  It runs here, in IRQ order, so a Read queued before it
 * reads the memory before it changes and one queued after it sees the
 * result; Writes and Sends that arrived before it were placed already.
 * The target was checked on receipt; it is looked up and checked again,
 * as its MR may be gone since.  Returns true with the response in buf.
 */
static bool swiwarp_tx_atomic(struct swiwarp_qp *qp,
			      const struct swiwarp_irq_entry *e)
{
	struct swiwarp_atomic_op op = {
		.aop = e->aop,
		.add_swap = e->add_swap,
		.add_swap_mask = e->add_swap_mask,
		.compare = e->compare,
		.compare_mask = e->compare_mask,
	};
	struct iwarp_rdmap_msg msg;
	struct swiwarp_mem *mem;
	int hlen, rv = -EINVAL;

	mem = swiwarp_mem_get(qp->sdev, e->src_stag);
	if (mem && !swiwarp_mem_check(mem, qp->base.pd, IB_ACCESS_REMOTE_ATOMIC,
				      e->src_to, sizeof(u64)))
		rv = swiwarp_mem_atomic(mem, e->src_to, &op);
	if (mem)
		swiwarp_mem_put(mem);
	if (rv) {
		swiwarp_send_terminate(qp, (IWARP_TERM_LAYER_RDMAP << 4) |
				       IWARP_TERM_RDMAP_ETYPE_PROTECTION,
				       IWARP_TERM_RDMAP_INVALID_STAG, NULL, 0);
		return false;
	}
	iwarp_rdmap_init(&msg, IWARP_OP_ATOMIC_RESPONSE);
	msg.ddp.msn = ++qp->tx.msn[IWARP_DDP_QN_ATOMIC_RESPONSE];
	msg.aresp.req_id = e->req_id;
	msg.aresp.orig_value = op.orig;
	hlen = swiwarp_tx_hdr(qp, &msg);
	if (hlen < 0) {
		swiwarp_send_terminate(qp, (IWARP_TERM_LAYER_RDMAP << 4) |
				       IWARP_TERM_RDMAP_ETYPE_CATASTROPHIC,
				       IWARP_TERM_RDMAP_CATASTROPHIC, NULL, 0);
		return false;
	}
	swiwarp_tx_frame(qp, hlen);
	return true;
}

/* Start answering the next queued RDMA Read Request, if any. */
static bool swiwarp_tx_start_rresp(struct swiwarp_qp *qp)
{
	struct swiwarp_wqe *wqe = &qp->tx.wqe;
	struct swiwarp_irq_entry *e;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&qp->orq_lock, flags);
	if (qp->irq && qp->irq_get != qp->irq_put) {
		e = &qp->irq[qp->irq_get & (qp->irq_size - 1)];
		qp->tx.rresp = *e;
		e->valid = false;
		qp->irq_get++;
		found = true;
	}
	spin_unlock_irqrestore(&qp->orq_lock, flags);
	if (!found)
		return false;
	if (qp->tx.rresp.atomic)
		return swiwarp_tx_atomic(qp, &qp->tx.rresp);

	memset(wqe, 0, sizeof(*wqe));
	wqe->bytes = qp->tx.rresp.len;
	wqe->active = true;
	qp->tx.phase = SWIWARP_TX_READ_RESP;
	if (wqe->bytes) {
		struct swiwarp_mem *mem =
			swiwarp_mem_get(qp->sdev, qp->tx.rresp.src_stag);

		/* Checked on receipt; re-check: it may be gone since. */
		if (!mem || swiwarp_mem_check(mem, qp->base.pd,
					      IB_ACCESS_REMOTE_READ,
					      qp->tx.rresp.src_to,
					      wqe->bytes)) {
			if (mem)
				swiwarp_mem_put(mem);
			wqe->active = false;
			qp->tx.phase = SWIWARP_TX_SQ;
			swiwarp_send_terminate(qp, (IWARP_TERM_LAYER_RDMAP << 4) |
					       IWARP_TERM_RDMAP_ETYPE_PROTECTION,
					       IWARP_TERM_RDMAP_INVALID_STAG,
					       NULL, 0);
			return false;
		}
		wqe->mem[0] = mem;
	}
	return true;
}

/*
 * Hand the outbound Read or Atomic to the ORQ: completes with its
 * response.
 */
static bool swiwarp_tx_orq_push(struct swiwarp_qp *qp)
{
	struct swiwarp_orq_entry *o;
	unsigned long flags;
	bool ok = false;

	spin_lock_irqsave(&qp->orq_lock, flags);
	if (qp->orq_put - qp->orq_get < min(qp->ord, qp->orq_size)) {
		o = &qp->orq[qp->orq_put & (qp->orq_size - 1)];
		o->wqe = qp->tx.wqe;
		o->valid = true;
		/* An Atomic's Request Identifier: its place in the ORQ. */
		o->req_id = qp->orq_put;
		/*
		 * Its Read or Atomic Request is the next queue-1 message:
		 * swiwarp_tx_build_wqe() builds it right after this.  A
		 * Terminate from the peer names it by this MSN.
		 */
		o->msn = qp->tx.msn[IWARP_DDP_QN_READ_REQUEST] + 1;
		o->term_status = SWIWARP_WC_SUCCESS;
		qp->tx.req_id = o->req_id;
		qp->orq_put++;
		/* The ORQ entry owns the memory references now. */
		memset(qp->tx.wqe.mem, 0, sizeof(qp->tx.wqe.mem));
		/* ... and its completion: never complete tx.wqe as well. */
		qp->tx.phase = SWIWARP_TX_READ_REQ;
		ok = true;
	}
	spin_unlock_irqrestore(&qp->orq_lock, flags);
	if (ok)
		swiwarp_tx_slot_drop(qp);
	return ok;
}

static bool swiwarp_orq_empty(struct swiwarp_qp *qp)
{
	unsigned long flags;
	bool empty;

	spin_lock_irqsave(&qp->orq_lock, flags);
	empty = qp->orq_put == qp->orq_get;
	spin_unlock_irqrestore(&qp->orq_lock, flags);
	return empty;
}

/* ------------------------------------------------------------ flush */

/*
 * The SQ WQEs the TX engine holds: those sent zero-copy still waiting
 * for their ACK, and the active one, all completed with WR_FLUSH_ERR (a
 * Read Response or a Read already in the ORQ only lets go of its
 * memory); their SQ slots are handed back.
 */
static void swiwarp_tx_flush_active(struct swiwarp_qp *qp)
{
	swiwarp_zc_reap(qp, true);
	if (qp->tx.wqe.active) {
		if (qp->tx.phase != SWIWARP_TX_SQ) {
			swiwarp_wqe_put_mem(&qp->tx.wqe);
		} else {
			swiwarp_tx_slot_drop(qp);
			swiwarp_qp_complete_sq(qp, &qp->tx.wqe,
					       SWIWARP_WC_WR_FLUSH_ERR);
		}
		qp->tx.wqe.active = false;
		qp->tx.phase = SWIWARP_TX_SQ;
	}
	swiwarp_tx_slot_drop(qp);
}

static void swiwarp_tx_flush(struct swiwarp_qp *qp)
{
	struct swiwarp_wqe wqe;
	unsigned long flags;
	u32 n;

	swiwarp_zc_abort(qp);
	/*
	 * The RX engine may still be placing a Read Response into the ORQ
	 * head (rx.rresp) if it looked at the state just before the QP went
	 * to ERROR.  Once we held rx_lock it is done with that piece and
	 * sees ERROR from then on: no ORQ entry is written after its flush.
	 */
	spin_lock_bh(&qp->rx_lock);
	qp->rx.rresp = NULL;
	spin_unlock_bh(&qp->rx_lock);
	/*
	 * Oldest first: Reads and Atomics (never behind a waiting WQE), the
	 * waiting.  The one a Terminate from the peer named completes with
	 * the error it reported (swiwarp_rx_term_blame()), the others are
	 * flushed.
	 */
	for (;;) {
		struct swiwarp_orq_entry *o = NULL;
		int st = SWIWARP_WC_WR_FLUSH_ERR;

		spin_lock_irqsave(&qp->orq_lock, flags);
		if (qp->orq && qp->orq_get != qp->orq_put) {
			o = &qp->orq[qp->orq_get & (qp->orq_size - 1)];
			wqe = o->wqe;
			if (o->term_status)
				st = o->term_status;
			o->term_status = SWIWARP_WC_SUCCESS;
			o->valid = false;
			memset(&o->wqe, 0, sizeof(o->wqe));
			qp->orq_get++;
		}
		if (qp->irq)
			qp->irq_get = qp->irq_put;
		spin_unlock_irqrestore(&qp->orq_lock, flags);
		if (!o)
			break;
		swiwarp_qp_complete_sq(qp, &wqe, st);
	}
	swiwarp_tx_flush_active(qp);
	/*
	 * One ring's worth per run (user space may keep posting), then
	 * the worker yields and carries on; a full CQ ends the flush (the
	 * overflow is reported, the rest stays posted).
	 */
	for (n = 0; n < qp->num_sqe; n++) {
		if (!swiwarp_sq_fetch(qp, &wqe, false))
			break;
		if (swiwarp_qp_complete_sq(qp, &wqe, SWIWARP_WC_WR_FLUSH_ERR))
			break;
	}
	if (n == qp->num_sqe)
		swiwarp_sq_kick(qp);
	qp->tx.buf_len = 0;
	qp->tx.buf_sent = 0;
	qp->tx.rtr_pending = 0;
}

/*
 * A new connection starts (swiwarp_qp_enter_rts(), tx_lock held, the
 * previous socket gone): nothing the TX engine kept of the previous one
 * may act on it.  Of struct swiwarp_tx that is
 *
 * - the FPDU in the buffer (buf_len, buf_sent, nfrag, payload, more,
 *   copy_pages, ubuf) and what pushing it completes (fpdu): a connection
 *   that died in the middle of a message's last FPDU left fpdu LAST, and
 *   the new connection's first FPDU built without a WQE (the RTR, an
 *   Atomic Response) then completed the old WQE once more;
 * - the message under way: wqe with phase, zc and zc_want, rresp, req_id,
 *   the slot it holds; the zero-copy WQEs waiting in zc_ring;
 * - the stream's sequence state: msn and the marker position mk_pos;
 * - an RTR still to send (rtr_pending; the caller queues the new one).
 *
 * The pending Terminate is dropped with the ORQ (swiwarp_qp_alloc_rd());
 * its other fields are all written when one is queued.
 *
 * Normally the flush at ERROR completed the WQEs already.  It runs in the
 * worker, though, after the state change, and the QP may have been reset
 * before it ran, or left the connection through CLOSING without ERROR: a
 * WQE still held here completes now with WR_FLUSH_ERR, once, as it would
 * have in the flush.
 */
void swiwarp_tx_reset(struct swiwarp_qp *qp)
{
	struct swiwarp_tx *tx = &qp->tx;

	lockdep_assert_held(&qp->tx_lock);
	swiwarp_zc_abort(qp);
	swiwarp_tx_flush_active(qp);
	memset(&tx->wqe, 0, sizeof(tx->wqe));
	memset(&tx->rresp, 0, sizeof(tx->rresp));
	tx->phase = SWIWARP_TX_SQ;
	tx->fpdu = SWIWARP_TX_FPDU_PLAIN;
	tx->buf_len = 0;
	tx->buf_sent = 0;
	tx->nfrag = 0;
	tx->payload = 0;
	tx->more = false;
	tx->copy_pages = false;
	tx->zc_want = false;
	tx->req_id = 0;
	tx->rtr_pending = 0;
	tx->mk_pos = 0;
	memset(tx->msn, 0, sizeof(tx->msn));
}

/*
 * The consumer reset the QP after a connection (CLOSING, TERMINATE or
 * ERROR to IDLE).  The flush of ERROR completes the posted WQEs, but in
 * the TX worker, which a quick RESET can beat, and it stops at a full
 * CQ: WQEs left in the SQ would go out on the QP's next connection,
 * perhaps to another peer, with the old connection's data and remote
 * keys (robust-safety qpreset).  A reset empties the
 * work queues without completions (IBTA: a QP in Reset has empty queues;
 * librdmacm and the RDMA core never reuse a QP without one), so drop
 * them; the WQE the TX engine holds completes when the next connection
 * starts (swiwarp_tx_reset()).
 *
 * tx_lock keeps the next connection out (only swiwarp_qp_enter_rts(),
 * under it, leaves IDLE for RTS) and serialises this with a flush still
 * running in the worker.  One ring's worth: user space may keep posting.
 */
void swiwarp_tx_discard(struct swiwarp_qp *qp)
{
	struct swiwarp_wqe wqe;
	u32 n;

	mutex_lock(&qp->tx_lock);
	if (READ_ONCE(qp->state) == SWIWARP_QP_IDLE && !qp->sock)
		for (n = 0; n < qp->num_sqe; n++)
			if (!swiwarp_sq_fetch(qp, &wqe, false))
				break;
	mutex_unlock(&qp->tx_lock);
}

/* A local fatal error on the SQ: fail the WQE, then the QP. */
static void swiwarp_tx_fail(struct swiwarp_qp *qp, int status)
{
	/* Earlier WQEs still waiting for their ACK complete first. */
	swiwarp_zc_abort(qp);
	swiwarp_zc_reap(qp, true);
	swiwarp_tx_slot_drop(qp);
	if (qp->tx.wqe.active && qp->tx.phase == SWIWARP_TX_SQ)
		swiwarp_qp_complete_sq(qp, &qp->tx.wqe, status);
	swiwarp_wqe_put_mem(&qp->tx.wqe);
	qp->tx.wqe.active = false;
	qp->tx.phase = SWIWARP_TX_SQ;
	swiwarp_qp_modify_state(qp, SWIWARP_QP_ERROR);
}

/* The FPDU just sent was the last of the active WQE. */
static void swiwarp_tx_wqe_done(struct swiwarp_qp *qp)
{
	struct swiwarp_wqe *wqe = &qp->tx.wqe;

	if (qp->tx.phase == SWIWARP_TX_READ_RESP) {
		swiwarp_wqe_put_mem(wqe);
		wqe->active = false;
		qp->tx.phase = SWIWARP_TX_SQ;
		return;
	}
	switch (wqe->sqe.opcode) {
	case SWIWARP_OP_READ:
	case SWIWARP_OP_READ_LOCAL_INV:
	case SWIWARP_OP_ATOMIC_CS:
	case SWIWARP_OP_ATOMIC_FA:
		/* Already moved to the ORQ before sending the request. */
		wqe->active = false;
		qp->tx.phase = SWIWARP_TX_SQ;
		break;
	default:
		swiwarp_tx_retire(qp, SWIWARP_WC_SUCCESS);
		break;
	}
}

/* ------------------------------------------------------------ engine */

static void swiwarp_tx_run(struct swiwarp_qp *qp, unsigned int budget)
{
	enum swiwarp_tx_fpdu fpdu;
	unsigned int step;
	bool done;
	int rv, state;

	for (step = 0; step < budget; step++) {
		state = READ_ONCE(qp->state);
		if (state == SWIWARP_QP_ERROR) {
			swiwarp_tx_flush(qp);
			return;
		}
		/* A completion was lost to a full CQ (swiwarp_qp.c). */
		if (test_bit(0, &qp->cq_overflow)) {
			swiwarp_qp_modify_state(qp, SWIWARP_QP_ERROR);
			continue;
		}
		if (!swiwarp_zc_ring_empty(qp))
			swiwarp_zc_reap(qp, false);
		if (!qp->sock)
			goto idle;

		if (qp->tx.buf_sent < qp->tx.buf_len) {
			rv = swiwarp_tx_push(qp);
			if (rv == -EAGAIN)
				return;	/* write_space restarts us */
			if (rv) {
				swiwarp_tx_fail(qp, SWIWARP_WC_GENERAL_ERR);
				return;
			}
			swiwarp_stat_inc(qp->sdev, SWIWARP_STAT_TX_FPDUS);
			swiwarp_stat_add(qp->sdev, SWIWARP_STAT_TX_PAYLOAD_BYTES,
					 qp->tx.payload);
			fpdu = qp->tx.fpdu;
			qp->tx.fpdu = SWIWARP_TX_FPDU_PLAIN;
			if (fpdu == SWIWARP_TX_FPDU_LAST)
				swiwarp_tx_wqe_done(qp);
			if (fpdu == SWIWARP_TX_FPDU_TERM) {
				swiwarp_stat_term(qp, true,
						  qp->tx.term_layer_etype,
						  qp->tx.term_ecode);
				swiwarp_qp_terminate_sent(qp);
				return;
			}
			continue;
		}

		if (qp->tx.term_pending) {
			if (swiwarp_tx_build_term(qp))
				goto fatal;
			qp->tx.fpdu = SWIWARP_TX_FPDU_TERM;
			continue;
		}
		if (state != SWIWARP_QP_RTS || qp->term_sent)
			goto idle;

		if (qp->tx.rtr_pending) {
			rv = swiwarp_tx_build_rtr(qp, qp->tx.rtr_pending);
			qp->tx.rtr_pending = 0;
			if (rv)
				goto fatal;
			continue;
		}

		if (!qp->tx.wqe.active) {
			if (swiwarp_tx_start_rresp(qp))
				continue;
			if (qp->term_sent || qp->tx.term_pending)
				continue;
			/* Responder before the initiator's first FPDU. */
			if (READ_ONCE(qp->tx_hold))
				goto idle;
			/*
			 * Every SQ slot is held by a WQE waiting for its
			 * ACK: the consumer cannot post; the callback of
			 * the oldest kicks us (TX_ACTIVE stays set).
			 */
			if (swiwarp_zc_ring_full(qp))
				return;
			swiwarp_sq_set_active(qp, true);
			if (!swiwarp_sq_fetch(qp, &qp->tx.wqe, true))
				return;
			rv = swiwarp_wqe_validate(qp, &qp->tx.wqe);
			if (rv != SWIWARP_WC_SUCCESS) {
				swiwarp_tx_fail(qp, rv);
				return;
			}
			qp->tx.zc_want = swiwarp_zc_want(qp, &qp->tx.wqe);
			if (!qp->tx.zc_want && swiwarp_zc_ring_empty(qp))
				swiwarp_tx_slot_drop(qp);
			if (qp->tx.wqe.sqe.opcode == SWIWARP_OP_REG_MR ||
			    qp->tx.wqe.sqe.opcode == SWIWARP_OP_LOCAL_INV) {
				rv = swiwarp_tx_local_op(qp, &qp->tx.wqe);
				if (rv != SWIWARP_WC_SUCCESS) {
					swiwarp_tx_fail(qp, rv);
					return;
				}
				swiwarp_tx_retire(qp, rv);
				continue;
			}
		}

		if (qp->tx.phase != SWIWARP_TX_READ_RESP) {
			struct swiwarp_sqe *sqe = &qp->tx.wqe.sqe;
			/* Atomics count against ORD as Reads (RFC 7306). */
			bool is_read = sqe->opcode == SWIWARP_OP_READ ||
				sqe->opcode == SWIWARP_OP_READ_LOCAL_INV ||
				swiwarp_op_is_atomic(sqe->opcode);

			/* Fence: wait for outstanding Reads to complete. */
			if ((sqe->flags & SWIWARP_WQE_FENCE) &&
			    !qp->tx.wqe.processed && !qp->tx.wqe.imm_sent &&
			    !qp->tx.wqe.write_sent &&
			    !swiwarp_orq_empty(qp))
				return;	/* Read Response completion kicks us */
			/*
			 * A Read completes from the RX side: start it only
			 * when no earlier WQE waits for its ACK, so that it
			 * cannot complete before them.
			 */
			if (is_read && qp->tx.phase != SWIWARP_TX_READ_REQ &&
			    !swiwarp_zc_ring_empty(qp))
				return;	/* the zero-copy callback kicks us */
			if (is_read && qp->tx.phase != SWIWARP_TX_READ_REQ &&
			    !swiwarp_tx_orq_push(qp))
				return;	/* ORQ full; ditto */
		}

		rv = swiwarp_tx_build_wqe(qp, &done);
		if (rv) {
			u8 le = (IWARP_TERM_LAYER_RDMAP << 4) |
				IWARP_TERM_RDMAP_ETYPE_CATASTROPHIC;

			if (qp->tx.phase == SWIWARP_TX_READ_RESP)
				swiwarp_send_terminate(qp, le,
						       IWARP_TERM_RDMAP_CATASTROPHIC,
						       NULL, 0);
			swiwarp_tx_fail(qp, SWIWARP_WC_LOC_PROT_ERR);
			return;
		}
		qp->tx.fpdu = done ? SWIWARP_TX_FPDU_LAST :
			SWIWARP_TX_FPDU_PLAIN;
	}
	/* Burst used up: yield the worker and continue later. */
	swiwarp_sq_kick(qp);
	return;

fatal:
	swiwarp_tx_fail(qp, SWIWARP_WC_GENERAL_ERR);
	return;
idle:
	/* Not connected or not in RTS: nothing can move until a kick. */
	swiwarp_sq_set_active(qp, false);
}

void swiwarp_tx_work(struct work_struct *w)
{
	struct swiwarp_qp *qp = container_of(w, struct swiwarp_qp, tx_work);

	mutex_lock(&qp->tx_lock);
	if (qp->tx.buf)
		swiwarp_tx_run(qp, SWIWARP_TX_BURST);
	mutex_unlock(&qp->tx_lock);
	swiwarp_qp_put(qp);
}
