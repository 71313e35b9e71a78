/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * iwarp/mpa.h - MPA (Marker PDU Aligned framing, RFC 5044) and its
 * "enhanced connection establishment" update MPA v2 (RFC 6581).
 *
 * Two parts:
 *  1. Connection setup frames (RFC 5044 section 7.1): MPA Request, Reply
 *     and Reject (a Reply with the R flag), including the RFC 6581 IRD/ORD
 *     word, plus a negotiation helper that computes the responder's Reply
 *     from local policy and the peer's Request, and validates a Reply on
 *     the initiator side.
 *  2. FPDU framing (RFC 5044 section 4): ULPDU_LENGTH, ULPDU, pad to a
 *     4-byte boundary, CRC32c.  Markers are in markers.h.
 *
 * Wire layout of a Request/Reply (all big-endian):
 *
 *   0               1               2               3
 *   +---------------------------------------------------------------+
 *   |        Key: "MPA ID Req Frame" or "MPA ID Rep Frame"          |
 *   |                         (16 octets)                           |
 *   +-+-+-+-+-------+---------------+-------------------------------+
 *   |M|C|R|E| Res   |     Rev       |          PD_Length            |
 *   +-+-+-+-+-------+---------------+-------------------------------+
 *   |  Private data (PD_Length octets, at most 512)  ...            |
 *
 * E ("enhanced") is reserved in RFC 5044 and defined by RFC 6581 section 5.
 * With E set, the first 4 octets of private data are the IRD/ORD word:
 *
 *   +-+-+---------------------------+-+-+---------------------------+
 *   |P|S|          IRD (14)         |W|R|          ORD (14)         |
 *   +-+-+---------------------------+-+-+---------------------------+
 *   P = peer-to-peer mode: the initiator will send a Ready-To-Receive
 *       (RTR) FPDU before anything else, of one of the kinds below;
 *   S = RTR may be a zero-length Send, W = zero-length RDMA Write,
 *   R = zero-length RDMA Read.  In a Request the bits list what the
 *   initiator can send, in a Reply exactly one is set: the responder's
 *   choice.
 *
 * The FPDU (RFC 5044 section 4.1):
 *
 *   +-------------------------------+-------------------------------+
 *   |     ULPDU_LENGTH (16)         |  ULPDU (DDP segment) ...      |
 *   +-------------------------------+                               |
 *   |  ... ULPDU ...                |  PAD (0-3 octets of zero)     |
 *   +---------------------------------------------------------------+
 *   |                         CRC (32)                              |
 *   +---------------------------------------------------------------+
 *
 * ULPDU_LENGTH counts only the ULPDU (not itself, pad, markers or CRC).
 * The CRC field is always present; when CRC was not negotiated its
 * content is unspecified and must be ignored (RFC 5044 section 4.1), so
 * the framing length never depends on the CRC setting.
 */
#ifndef IWARP_MPA_H
#define IWARP_MPA_H

#include "types.h"
#include "crc32c.h"

/* ---- Request / Reply frames (RFC 5044 section 7.1, RFC 6581 section 5) */

#define IWARP_MPA_KEY_LEN 16
#define IWARP_MPA_KEY_REQ "MPA ID Req Frame"
#define IWARP_MPA_KEY_REP "MPA ID Rep Frame"
/* Key + flags/rev byte pair + PD_Length. */
#define IWARP_MPA_RR_HDR_LEN 20
/* Field offsets in a Request/Reply (the key is at 0). */
#define IWARP_MPA_RR_FLAGS_OFF 16 /* M C R E Res */
#define IWARP_MPA_RR_REV_OFF 17
#define IWARP_MPA_RR_PDLEN_OFF 18
/* RFC 5044 section 7.1: private data is limited to 512 octets. */
#define IWARP_MPA_MAX_PDATA 512
/* RFC 6581 section 5: IRD/ORD word at the start of private data. */
#define IWARP_MPA_V2_WORD_LEN 4
#define IWARP_MPA_V2_IRD_ORD_MAX 0x3fff

#define IWARP_MPA_REV1 1 /* RFC 5044 */
#define IWARP_MPA_REV2 2 /* RFC 6581 enhanced connection establishment */

/* Bits of octet 16 (the high half of the 16-bit flags/rev word). */
#define IWARP_MPA_FLAG_M 0x80 /* Markers wanted by the sender of the frame */
#define IWARP_MPA_FLAG_C 0x40 /* CRC wanted */
#define IWARP_MPA_FLAG_R 0x20 /* Reject (Reply only) */
#define IWARP_MPA_FLAG_E 0x10 /* RFC 6581 enhanced connection setup */
/* Remaining Res bits of octet 16 in rev 2; all of 0x1f in rev 1. */
#define IWARP_MPA_RES_MASK_V1 0x1f
#define IWARP_MPA_RES_MASK_V2 0x0f
/* Linux siw uses the top Res bit (0x08) as a private "GSO" experiment. */
#define IWARP_MPA_FLAG_SIW_GSO 0x08
/*
 * swiwarp's announcement that the sender implements RFC 7306 (Immediate
 * Data and atomics): 0x04 in a Request, 0x02 in a Reply.  RFC 5044
 * says Res bits are sent as zero and ignored on receipt, so other stacks
 * ignore them.  Two bits, not one, because upstream siw builds its Reply
 * from the Request it received and so echoes every Res bit back: a Reply
 * with 0x04 says nothing.  A responder sets 0x02 only in a Reply to a
 * Request with 0x04, and never in a Reject.
 */
#define IWARP_MPA_FLAG_RFC7306_REQ 0x04
#define IWARP_MPA_FLAG_RFC7306_REP 0x02
/*
 * swiwarp's announcement that the sender takes FPDUs of any length up to
 * the ULPDU field's limit, not only ones that fit one TCP segment: in a
 * Request next to RFC7306_REQ, in a Reply next to RFC7306_REP.  Only
 * the pair counts, for the reason above: a Reply with this bit but
 * without RFC7306_REP is an echo.  Between two ends that both announced
 * it, each may send FPDUs longer than the MSS and leave segmenting to
 * TCP; every other peer (hardware RNICs, siw) keeps getting FPDUs that
 * fit a segment (RFC 5044 MULPDU).
 */
#define IWARP_MPA_FLAG_LARGE_FPDU 0x01

/*
 * Whether the Res bits of the peer's frame (res_bits of a parsed Request,
 * or of a Reply to a Request that announced it) announce LARGE_FPDU: the
 * bit with the frame kind's RFC 7306 bit beside it.
 */
static inline bool iwarp_mpa_peer_large_fpdu(uint8_t res_bits, bool reply)
{
	uint8_t want = IWARP_MPA_FLAG_LARGE_FPDU |
		       (reply ? IWARP_MPA_FLAG_RFC7306_REP : IWARP_MPA_FLAG_RFC7306_REQ);

	return (res_bits & want) == want;
}

/* IRD/ORD word bits (16-bit halves, RFC 6581 section 5). */
#define IWARP_MPA_V2_IRD_P2P 0x8000
#define IWARP_MPA_V2_IRD_SEND_RTR 0x4000
#define IWARP_MPA_V2_ORD_WRITE_RTR 0x8000
#define IWARP_MPA_V2_ORD_READ_RTR 0x4000

/* RTR kinds as a bit mask (our own encoding, not the wire's). */
#define IWARP_MPA_RTR_SEND 0x1	/* zero-length Send */
#define IWARP_MPA_RTR_WRITE 0x2 /* zero-length RDMA Write */
#define IWARP_MPA_RTR_READ 0x4	/* zero-length RDMA Read */
#define IWARP_MPA_RTR_ALL 0x7

enum iwarp_mpa_frame_kind {
	IWARP_MPA_REQUEST = 1,
	IWARP_MPA_REPLY = 2
};

/*
 * Host view of a Request/Reply/Reject.  For encoding, fill it and call
 * iwarp_mpa_rr_encode(); pd_len is computed.  After parsing, ulp_pdata
 * points into the parsed buffer.
 */
struct iwarp_mpa_rr {
	uint8_t kind;		/* enum iwarp_mpa_frame_kind */
	uint8_t rev;		/* IWARP_MPA_REV1 or IWARP_MPA_REV2 */
	bool markers;		/* M */
	bool crc;		/* C */
	bool reject;		/* R */
	bool enhanced;		/* E: IRD/ORD word present (rev 2 only) */
	uint8_t res_bits;	/* reserved bits of octet 16 as received */
	uint16_t pd_len;	/* PD_Length: total private data octets */
	/* RFC 6581 word, meaningful only when enhanced: */
	bool p2p;
	uint8_t rtr;		/* IWARP_MPA_RTR_* mask */
	uint16_t ird;		/* 14 bits */
	uint16_t ord;		/* 14 bits */
	/* Private data for the ULP (after the IRD/ORD word if enhanced). */
	const uint8_t *ulp_pdata;
	uint16_t ulp_pdata_len;
};

/* Parse flags for iwarp_mpa_rr_parse_ex(). */
#define IWARP_MPA_PARSE_IGNORE_RESERVED 0x1 /* accept set Res bits */

/*
 * Which key starts buf: IWARP_MPA_REQUEST, IWARP_MPA_REPLY, or 0 for
 * neither (or fewer than IWARP_MPA_KEY_LEN octets).
 */
static inline int iwarp_mpa_key_kind(const uint8_t *buf, size_t len)
{
	if (len < IWARP_MPA_KEY_LEN)
		return 0;
	if (iwarp_bytes_equal(buf, (const uint8_t *)IWARP_MPA_KEY_REQ,
			      IWARP_MPA_KEY_LEN))
		return IWARP_MPA_REQUEST;
	if (iwarp_bytes_equal(buf, (const uint8_t *)IWARP_MPA_KEY_REP,
			      IWARP_MPA_KEY_LEN))
		return IWARP_MPA_REPLY;
	return 0;
}

/*
 * Length of the whole frame starting at buf, or IWARP_ERR_TRUNCATED if
 * fewer than IWARP_MPA_RR_HDR_LEN octets are available.  Lets a receiver
 * know how much to wait for before calling the parser.
 */
static inline int iwarp_mpa_rr_frame_len(const uint8_t *buf, size_t len)
{
	if (len < IWARP_MPA_RR_HDR_LEN)
		return IWARP_ERR_TRUNCATED;
	return IWARP_MPA_RR_HDR_LEN +
	       iwarp_get_be16(buf + IWARP_MPA_RR_PDLEN_OFF);
}

/*
 * Parse a Request or Reply.  Returns the number of octets consumed
 * (header + private data) or a negative status:
 *   IWARP_ERR_TRUNCATED  not all of header + PD_Length octets present
 *   IWARP_ERR_BAD_KEY    key is neither the Request nor the Reply key
 *   IWARP_ERR_BAD_REV    Rev is not 1 or 2
 *   IWARP_ERR_RESERVED   Res bits set (unless ignored by flags), or the
 *                        E bit in a rev 1 frame, or R in a Request
 *   IWARP_ERR_TOO_LONG   PD_Length > 512
 *   IWARP_ERR_V2_PDATA   E set but PD_Length < 4
 * On error, out holds whatever was decoded before the problem.
 */
static inline int iwarp_mpa_rr_parse_ex(const uint8_t *buf, size_t len,
					unsigned int flags,
					struct iwarp_mpa_rr *out)
{
	uint8_t bits;
	uint8_t res_mask;
	uint16_t pd_len;
	uint16_t ird_half, ord_half;
	const uint8_t *pd;

	out->kind = 0;
	out->rev = 0;
	out->markers = false;
	out->crc = false;
	out->reject = false;
	out->enhanced = false;
	out->res_bits = 0;
	out->pd_len = 0;
	out->p2p = false;
	out->rtr = 0;
	out->ird = 0;
	out->ord = 0;
	out->ulp_pdata = NULL;
	out->ulp_pdata_len = 0;

	if (len < IWARP_MPA_RR_HDR_LEN)
		return IWARP_ERR_TRUNCATED;
	out->kind = (uint8_t)iwarp_mpa_key_kind(buf, len);
	if (!out->kind)
		return IWARP_ERR_BAD_KEY;

	bits = buf[IWARP_MPA_RR_FLAGS_OFF];
	out->rev = buf[IWARP_MPA_RR_REV_OFF];
	pd_len = iwarp_get_be16(buf + IWARP_MPA_RR_PDLEN_OFF);
	out->pd_len = pd_len;
	out->markers = (bits & IWARP_MPA_FLAG_M) != 0;
	out->crc = (bits & IWARP_MPA_FLAG_C) != 0;
	out->reject = (bits & IWARP_MPA_FLAG_R) != 0;

	if (out->rev != IWARP_MPA_REV1 && out->rev != IWARP_MPA_REV2)
		return IWARP_ERR_BAD_REV;
	res_mask = out->rev == IWARP_MPA_REV2 ? IWARP_MPA_RES_MASK_V2 :
						IWARP_MPA_RES_MASK_V1;
	out->res_bits = bits & res_mask;
	if (out->rev == IWARP_MPA_REV2)
		out->enhanced = (bits & IWARP_MPA_FLAG_E) != 0;
	if (!(flags & IWARP_MPA_PARSE_IGNORE_RESERVED) && out->res_bits)
		return IWARP_ERR_RESERVED;
	/* The Reject flag only has a meaning in a Reply. */
	if (out->kind == IWARP_MPA_REQUEST && out->reject)
		return IWARP_ERR_RESERVED;
	if (pd_len > IWARP_MPA_MAX_PDATA)
		return IWARP_ERR_TOO_LONG;
	if (len < (size_t)IWARP_MPA_RR_HDR_LEN + pd_len)
		return IWARP_ERR_TRUNCATED;

	pd = buf + IWARP_MPA_RR_HDR_LEN;
	if (out->enhanced) {
		if (pd_len < IWARP_MPA_V2_WORD_LEN)
			return IWARP_ERR_V2_PDATA;
		ird_half = iwarp_get_be16(pd);
		ord_half = iwarp_get_be16(pd + 2);
		out->p2p = (ird_half & IWARP_MPA_V2_IRD_P2P) != 0;
		out->rtr = 0;
		if (ird_half & IWARP_MPA_V2_IRD_SEND_RTR)
			out->rtr |= IWARP_MPA_RTR_SEND;
		if (ord_half & IWARP_MPA_V2_ORD_WRITE_RTR)
			out->rtr |= IWARP_MPA_RTR_WRITE;
		if (ord_half & IWARP_MPA_V2_ORD_READ_RTR)
			out->rtr |= IWARP_MPA_RTR_READ;
		out->ird = ird_half & IWARP_MPA_V2_IRD_ORD_MAX;
		out->ord = ord_half & IWARP_MPA_V2_IRD_ORD_MAX;
		pd += IWARP_MPA_V2_WORD_LEN;
		pd_len -= IWARP_MPA_V2_WORD_LEN;
	}
	out->ulp_pdata = pd;
	out->ulp_pdata_len = pd_len;
	return IWARP_MPA_RR_HDR_LEN + out->pd_len;
}

/* Strict parse: reserved bits must be zero. */
static inline int iwarp_mpa_rr_parse(const uint8_t *buf, size_t len,
				     struct iwarp_mpa_rr *out)
{
	return iwarp_mpa_rr_parse_ex(buf, len, 0, out);
}

/* Total encoded length of rr, or a negative status if it cannot be. */
static inline int iwarp_mpa_rr_encoded_len(const struct iwarp_mpa_rr *rr)
{
	size_t pd = rr->ulp_pdata_len;

	if (rr->enhanced)
		pd += IWARP_MPA_V2_WORD_LEN;
	if (pd > IWARP_MPA_MAX_PDATA)
		return IWARP_ERR_TOO_LONG;
	return (int)(IWARP_MPA_RR_HDR_LEN + pd);
}

/*
 * Encode rr into out.  res_bits and pd_len are ignored (reserved bits are
 * sent as zero; PD_Length is computed).  Returns bytes written or:
 *   IWARP_ERR_INVAL    bad kind, rev, E in rev 1, R in a Request,
 *                      IRD/ORD > 14 bits, unknown RTR bits, NULL pdata
 *   IWARP_ERR_TOO_LONG private data > 512 octets
 *   IWARP_ERR_NOSPACE  cap too small
 */
static inline int iwarp_mpa_rr_encode(const struct iwarp_mpa_rr *rr,
				      uint8_t *out, size_t cap)
{
	int total = iwarp_mpa_rr_encoded_len(rr);
	uint8_t bits = 0;
	uint8_t *pd;
	uint16_t ird_half, ord_half;

	if (total < 0)
		return total;
	if (rr->kind != IWARP_MPA_REQUEST && rr->kind != IWARP_MPA_REPLY)
		return IWARP_ERR_INVAL;
	if (rr->rev != IWARP_MPA_REV1 && rr->rev != IWARP_MPA_REV2)
		return IWARP_ERR_INVAL;
	if (rr->enhanced && rr->rev != IWARP_MPA_REV2)
		return IWARP_ERR_INVAL;
	if (rr->reject && rr->kind != IWARP_MPA_REPLY)
		return IWARP_ERR_INVAL;
	if (rr->enhanced && (rr->ird > IWARP_MPA_V2_IRD_ORD_MAX ||
			     rr->ord > IWARP_MPA_V2_IRD_ORD_MAX ||
			     (rr->rtr & ~IWARP_MPA_RTR_ALL)))
		return IWARP_ERR_INVAL;
	if (rr->ulp_pdata_len && !rr->ulp_pdata)
		return IWARP_ERR_INVAL;
	if (cap < (size_t)total)
		return IWARP_ERR_NOSPACE;

	iwarp_copy(out,
		   (const uint8_t *)(rr->kind == IWARP_MPA_REQUEST ?
					     IWARP_MPA_KEY_REQ :
					     IWARP_MPA_KEY_REP),
		   IWARP_MPA_KEY_LEN);
	if (rr->markers)
		bits |= IWARP_MPA_FLAG_M;
	if (rr->crc)
		bits |= IWARP_MPA_FLAG_C;
	if (rr->reject)
		bits |= IWARP_MPA_FLAG_R;
	if (rr->enhanced)
		bits |= IWARP_MPA_FLAG_E;
	out[IWARP_MPA_RR_FLAGS_OFF] = bits;
	out[IWARP_MPA_RR_REV_OFF] = rr->rev;
	iwarp_put_be16(out + IWARP_MPA_RR_PDLEN_OFF,
		       (uint16_t)(total - IWARP_MPA_RR_HDR_LEN));
	pd = out + IWARP_MPA_RR_HDR_LEN;
	if (rr->enhanced) {
		ird_half = rr->ird;
		ord_half = rr->ord;
		if (rr->p2p)
			ird_half |= IWARP_MPA_V2_IRD_P2P;
		if (rr->rtr & IWARP_MPA_RTR_SEND)
			ird_half |= IWARP_MPA_V2_IRD_SEND_RTR;
		if (rr->rtr & IWARP_MPA_RTR_WRITE)
			ord_half |= IWARP_MPA_V2_ORD_WRITE_RTR;
		if (rr->rtr & IWARP_MPA_RTR_READ)
			ord_half |= IWARP_MPA_V2_ORD_READ_RTR;
		iwarp_put_be16(pd, ird_half);
		iwarp_put_be16(pd + 2, ord_half);
		pd += IWARP_MPA_V2_WORD_LEN;
	}
	if (rr->ulp_pdata_len)
		iwarp_copy(pd, rr->ulp_pdata, rr->ulp_pdata_len);
	return total;
}

/* ---- MPA errors reported in a Terminate (layer LLP, RFC 5044 sec. 8,
 * RFC 6581 section 8).  The Terminate error type for MPA is 0.
 */
#define IWARP_TERM_ETYPE_MPA 0x0
#define IWARP_TERM_MPA_TCP_LOST 0x01	       /* TCP connection closed/lost */
#define IWARP_TERM_MPA_CRC 0x02		       /* received MPA CRC error */
#define IWARP_TERM_MPA_MARKER 0x03	       /* marker / ULPDU length mismatch */
#define IWARP_TERM_MPA_INVALID_RR 0x04	       /* invalid MPA Request/Reply */
#define IWARP_TERM_MPA_LOCAL_CATASTROPHIC 0x05 /* RFC 6581 */
#define IWARP_TERM_MPA_INSUFFICIENT_IRD 0x06   /* RFC 6581 */
#define IWARP_TERM_MPA_NO_MATCHING_RTR 0x07    /* RFC 6581 */

/* ---- Negotiation (RFC 5044 section 7.1.2-7.1.5, RFC 6581 section 5-6) */

enum iwarp_mpa_crc_policy {
	/* Never use CRC: refuse a peer that sets C. */
	IWARP_MPA_CRC_REFUSE = 0,
	/* Do not ask for CRC, but use it if the peer sets C (the default
	 * of Linux siw and of RFC 5044, where C from either side wins).
	 */
	IWARP_MPA_CRC_OFFER = 1,
	/* Always set C, so CRC is used on the connection. */
	IWARP_MPA_CRC_REQUIRE = 2
};

struct iwarp_mpa_policy {
	uint8_t max_rev;	/* highest revision spoken: 1 or 2 */
	uint8_t crc;		/* enum iwarp_mpa_crc_policy */
	bool rx_markers;	/* ask the peer to send markers to us (M) */
	bool tx_markers_ok;	/* able to send markers if the peer asks */
	/* Initiator: ask for an RTR; responder: accept one. */
	bool p2p;
	/* IWARP_MPA_RTR_* kinds we can send (initiator) or accept
	 * (responder).
	 */
	uint8_t rtr_mask;
	/* Lower our ORD to the peer's IRD instead of refusing (siw's
	 * default).
	 */
	bool relaxed_ird_ord;
	uint16_t ird;		/* our inbound RDMA Read depth */
	uint16_t ord;		/* our outbound RDMA Read depth */
};

/* What both ends agreed on, from the point of view of the local end. */
struct iwarp_mpa_result {
	uint8_t rev;
	bool enhanced;
	bool crc;		/* compute and check CRC on every FPDU */
	bool tx_markers;	/* insert markers into FPDUs we send */
	bool rx_markers;	/* the peer inserts markers into its FPDUs */
	bool p2p;		/* an RTR FPDU starts the FPDU stream */
	uint8_t rtr;		/* the single RTR kind, if p2p */
	uint16_t ird;		/* final local IRD */
	uint16_t ord;		/* final local ORD */
	/* If negotiation failed: the MPA Terminate code that describes it
	 * (IWARP_TERM_MPA_*), 0 when none fits.
	 */
	uint8_t term_ecode;
};

static inline void iwarp_mpa_result_clear(struct iwarp_mpa_result *res)
{
	res->rev = 0;
	res->enhanced = false;
	res->crc = false;
	res->tx_markers = false;
	res->rx_markers = false;
	res->p2p = false;
	res->rtr = 0;
	res->ird = 0;
	res->ord = 0;
	res->term_ecode = 0;
}

/*
 * Build the initiator's Request from policy.  pdata/pdata_len are the
 * ULP's private data (pointer is stored, not copied).  Returns 0 or
 * IWARP_ERR_INVAL / IWARP_ERR_TOO_LONG.
 */
static inline int iwarp_mpa_init_request(const struct iwarp_mpa_policy *pol,
					 const uint8_t *pdata,
					 uint16_t pdata_len,
					 struct iwarp_mpa_rr *req)
{
	if (pol->max_rev != IWARP_MPA_REV1 && pol->max_rev != IWARP_MPA_REV2)
		return IWARP_ERR_INVAL;
	if (pol->ird > IWARP_MPA_V2_IRD_ORD_MAX ||
	    pol->ord > IWARP_MPA_V2_IRD_ORD_MAX)
		return IWARP_ERR_INVAL;
	if (pol->p2p && !(pol->rtr_mask & IWARP_MPA_RTR_ALL))
		return IWARP_ERR_INVAL;
	req->kind = IWARP_MPA_REQUEST;
	req->rev = pol->max_rev;
	req->markers = pol->rx_markers;
	req->crc = pol->crc == IWARP_MPA_CRC_REQUIRE;
	req->reject = false;
	req->enhanced = pol->max_rev == IWARP_MPA_REV2;
	req->res_bits = 0;
	req->p2p = req->enhanced && pol->p2p;
	req->rtr = req->p2p ? (uint8_t)(pol->rtr_mask & IWARP_MPA_RTR_ALL) : 0;
	req->ird = req->enhanced ? pol->ird : 0;
	req->ord = req->enhanced ? pol->ord : 0;
	req->ulp_pdata = pdata;
	req->ulp_pdata_len = pdata_len;
	req->pd_len = 0;
	if (iwarp_mpa_rr_encoded_len(req) < 0)
		return IWARP_ERR_TOO_LONG;
	req->pd_len = (uint16_t)(iwarp_mpa_rr_encoded_len(req) -
				 IWARP_MPA_RR_HDR_LEN);
	return IWARP_OK;
}

/* Pick one RTR kind out of a mask: Write, then Read, then Send (Write
 * and Read need no receive buffer; Send consumes one).
 */
static inline uint8_t iwarp_mpa_pick_rtr(uint8_t mask)
{
	if (mask & IWARP_MPA_RTR_WRITE)
		return IWARP_MPA_RTR_WRITE;
	if (mask & IWARP_MPA_RTR_READ)
		return IWARP_MPA_RTR_READ;
	if (mask & IWARP_MPA_RTR_SEND)
		return IWARP_MPA_RTR_SEND;
	return 0;
}

static inline uint16_t iwarp_mpa_min16(uint16_t a, uint16_t b)
{
	return a < b ? a : b;
}

/*
 * Responder side: given local policy and the parsed Request, compute the
 * Reply (rep) and the agreed parameters (res).  pdata is the private data
 * the ULP wants in the Reply or Reject.
 *
 * Returns IWARP_OK (rep is an accepting Reply), IWARP_ERR_REJECT (rep is
 * a Reject - R set - that may be sent before closing; res->term_ecode says
 * why when an RFC code exists) or IWARP_ERR_INVAL (bad arguments).
 *
 * Rules (RFC 5044 section 7.1, RFC 6581 sections 5-6):
 *  - Rev of the Reply is the lower of the Request's and max_rev.
 *  - CRC is used if either side sets C; a REFUSE policy rejects C=1.
 *  - Markers are per direction: we send markers iff the Request has M;
 *    a peer asking for them when we cannot send them is rejected.
 *  - IRD/ORD: our ORD is lowered to the initiator's IRD (always safe);
 *    if the initiator's ORD exceeds our IRD we refuse with
 *    INSUFFICIENT_IRD unless relaxed, in which case the Reply advertises
 *    our IRD and the initiator must lower its ORD.
 *  - P2P: choose one RTR kind from those offered and accepted, preferring
 *    Write, Read, Send; none in common is NO_MATCHING_RTR.
 */
static inline int iwarp_mpa_negotiate_reply(const struct iwarp_mpa_policy *pol,
					    const struct iwarp_mpa_rr *req,
					    const uint8_t *pdata,
					    uint16_t pdata_len,
					    struct iwarp_mpa_rr *rep,
					    struct iwarp_mpa_result *res)
{
	bool refuse = false;
	uint8_t common;

	iwarp_mpa_result_clear(res);
	if (req->kind != IWARP_MPA_REQUEST ||
	    (pol->max_rev != IWARP_MPA_REV1 && pol->max_rev != IWARP_MPA_REV2) ||
	    (req->rev != IWARP_MPA_REV1 && req->rev != IWARP_MPA_REV2) ||
	    pol->ird > IWARP_MPA_V2_IRD_ORD_MAX ||
	    pol->ord > IWARP_MPA_V2_IRD_ORD_MAX)
		return IWARP_ERR_INVAL;

	res->rev = req->rev < pol->max_rev ? req->rev : pol->max_rev;
	res->enhanced = res->rev == IWARP_MPA_REV2 && req->enhanced;

	/* CRC: C from either side wins, unless we refuse it outright. */
	if (req->crc && pol->crc == IWARP_MPA_CRC_REFUSE)
		refuse = true;
	res->crc = req->crc || pol->crc == IWARP_MPA_CRC_REQUIRE;

	/* Markers, per direction. */
	res->tx_markers = req->markers;
	res->rx_markers = pol->rx_markers;
	if (req->markers && !pol->tx_markers_ok)
		refuse = true;

	/* IRD/ORD. */
	res->ird = pol->ird;
	res->ord = pol->ord;
	if (res->enhanced) {
		res->ord = iwarp_mpa_min16(pol->ord, req->ird);
		if (req->ord > pol->ird && !pol->relaxed_ird_ord) {
			refuse = true;
			res->term_ecode = IWARP_TERM_MPA_INSUFFICIENT_IRD;
		}
	}

	/* Peer-to-peer RTR. */
	if (res->enhanced && req->p2p) {
		common = pol->p2p ? (uint8_t)(req->rtr & pol->rtr_mask) : 0;
		res->rtr = iwarp_mpa_pick_rtr(common);
		res->p2p = res->rtr != 0;
		if (!res->rtr) {
			refuse = true;
			if (!res->term_ecode)
				res->term_ecode =
					IWARP_TERM_MPA_NO_MATCHING_RTR;
		}
	}

	rep->kind = IWARP_MPA_REPLY;
	rep->rev = res->rev;
	rep->markers = res->rx_markers;
	rep->crc = res->crc && !refuse;
	rep->reject = refuse;
	rep->enhanced = res->enhanced;
	rep->res_bits = 0;
	rep->p2p = res->p2p;
	rep->rtr = res->rtr;
	rep->ird = res->enhanced ? res->ird : 0;
	rep->ord = res->enhanced ? res->ord : 0;
	rep->ulp_pdata = pdata;
	rep->ulp_pdata_len = pdata_len;
	rep->pd_len = 0;
	if (iwarp_mpa_rr_encoded_len(rep) < 0)
		return IWARP_ERR_INVAL;
	rep->pd_len = (uint16_t)(iwarp_mpa_rr_encoded_len(rep) -
				 IWARP_MPA_RR_HDR_LEN);
	return refuse ? IWARP_ERR_REJECT : IWARP_OK;
}

/*
 * Initiator side: validate the parsed Reply against the Request we sent
 * and our policy, and compute the agreed parameters.
 *
 * Returns IWARP_OK, IWARP_ERR_PEER_REJECTED (R set), IWARP_ERR_BAD_KEY
 * (not a Reply), IWARP_ERR_BAD_REV (Reply rev higher than ours),
 * IWARP_ERR_MALFORMED (the Reply breaks an RFC rule: C cleared although we
 * set it, E without our E, an RTR we did not offer) or IWARP_ERR_REJECT
 * (legal, but our policy cannot live with it).  res->term_ecode carries
 * the MPA Terminate code to send when one applies.
 */
static inline int iwarp_mpa_check_reply(const struct iwarp_mpa_policy *pol,
					const struct iwarp_mpa_rr *req,
					const struct iwarp_mpa_rr *rep,
					struct iwarp_mpa_result *res)
{
	iwarp_mpa_result_clear(res);
	if (rep->kind != IWARP_MPA_REPLY)
		return IWARP_ERR_BAD_KEY;
	if (rep->reject)
		return IWARP_ERR_PEER_REJECTED;
	if (rep->rev < IWARP_MPA_REV1 || rep->rev > req->rev)
		return IWARP_ERR_BAD_REV;
	res->rev = rep->rev;
	if (rep->enhanced && !req->enhanced)
		return IWARP_ERR_MALFORMED;
	res->enhanced = rep->enhanced;

	/* RFC 5044: a responder must echo C=1 if the initiator set it. */
	if (req->crc && !rep->crc) {
		res->term_ecode = IWARP_TERM_MPA_INVALID_RR;
		return IWARP_ERR_MALFORMED;
	}
	res->crc = rep->crc;
	if (rep->crc && pol->crc == IWARP_MPA_CRC_REFUSE) {
		res->term_ecode = IWARP_TERM_MPA_INVALID_RR;
		return IWARP_ERR_REJECT;
	}

	res->tx_markers = rep->markers;
	res->rx_markers = req->markers;
	if (rep->markers && !pol->tx_markers_ok)
		return IWARP_ERR_REJECT;

	res->ird = pol->ird;
	res->ord = pol->ord;
	if (res->enhanced) {
		/* The responder may issue up to its ORD reads to us. */
		if (rep->ord > pol->ird) {
			res->term_ecode = IWARP_TERM_MPA_INSUFFICIENT_IRD;
			return IWARP_ERR_REJECT;
		}
		if (pol->ord > rep->ird) {
			if (!pol->relaxed_ird_ord) {
				res->term_ecode =
					IWARP_TERM_MPA_INSUFFICIENT_IRD;
				return IWARP_ERR_REJECT;
			}
			res->ord = rep->ird;
		}

		if (req->p2p) {
			/* Exactly one RTR bit, and one we offered. */
			if (!rep->p2p || !rep->rtr ||
			    (rep->rtr & (rep->rtr - 1)) ||
			    (rep->rtr & ~req->rtr)) {
				res->term_ecode =
					IWARP_TERM_MPA_NO_MATCHING_RTR;
				return IWARP_ERR_MALFORMED;
			}
			res->p2p = true;
			res->rtr = rep->rtr;
		} else if (rep->p2p) {
			res->term_ecode = IWARP_TERM_MPA_NO_MATCHING_RTR;
			return IWARP_ERR_MALFORMED;
		}
	}
	return IWARP_OK;
}

/* ---- FPDU framing (RFC 5044 section 4) ---------------------------- */

#define IWARP_MPA_ULPDU_LEN_FIELD 2
#define IWARP_MPA_CRC_FIELD 4
#define IWARP_MPA_MAX_ULPDU 0xffff

/* Pad octets after the ULPDU so that length field + ULPDU + pad is a
 * multiple of 4 (RFC 5044 section 4.1).
 */
static inline uint32_t iwarp_mpa_pad_len(uint32_t ulpdu_len)
{
	return (4 - ((IWARP_MPA_ULPDU_LEN_FIELD + ulpdu_len) & 3)) & 3;
}

/* Octets of an FPDU without markers: length field, ULPDU, pad, CRC. */
static inline uint32_t iwarp_fpdu_len(uint32_t ulpdu_len)
{
	return IWARP_MPA_ULPDU_LEN_FIELD + ulpdu_len +
	       iwarp_mpa_pad_len(ulpdu_len) + IWARP_MPA_CRC_FIELD;
}

/*
 * Maximum ULPDU that fits one TCP segment of emss octets (RFC 5044
 * MULPDU definition: MULPDU = EMSS - (6 + 4 * ceil(EMSS / 512) +
 * EMSS mod 4) with markers, EMSS - (6 + EMSS mod 4) without).  Returns 0
 * when emss is too small to carry anything.
 */
static inline uint32_t iwarp_mpa_mulpdu(uint32_t emss, bool markers)
{
	uint32_t overhead = 6 + (emss & 3);

	if (markers)
		overhead += 4 * ((emss + 511) / 512);
	return emss > overhead ? emss - overhead : 0;
}

struct iwarp_fpdu {
	uint16_t ulpdu_len;
	const uint8_t *ulpdu;	/* points into the parsed buffer */
	uint8_t pad_len;
	uint32_t total_len;	/* octets of the whole FPDU */
	uint32_t crc_wire;	/* CRC field as received */
	uint32_t crc_calc;	/* CRC32c over length field, ULPDU, pad */
	bool crc_ok;		/* crc_wire == crc_calc */
};

/*
 * Parse one unmarked FPDU at buf.  Returns its total length or
 * IWARP_ERR_TRUNCATED.  The CRC is always computed; whether a mismatch
 * matters depends on what was negotiated, so it is reported in crc_ok,
 * not as an error (use iwarp_fpdu_check() for that).
 */
static inline int iwarp_fpdu_parse(const uint8_t *buf, size_t len,
				   struct iwarp_fpdu *out)
{
	uint32_t total, covered;

	out->ulpdu_len = 0;
	out->ulpdu = NULL;
	out->pad_len = 0;
	out->total_len = 0;
	out->crc_wire = 0;
	out->crc_calc = 0;
	out->crc_ok = false;
	if (len < IWARP_MPA_ULPDU_LEN_FIELD)
		return IWARP_ERR_TRUNCATED;
	out->ulpdu_len = iwarp_get_be16(buf);
	out->pad_len = (uint8_t)iwarp_mpa_pad_len(out->ulpdu_len);
	total = iwarp_fpdu_len(out->ulpdu_len);
	out->total_len = total;
	if (len < total)
		return IWARP_ERR_TRUNCATED;
	out->ulpdu = buf + IWARP_MPA_ULPDU_LEN_FIELD;
	covered = total - IWARP_MPA_CRC_FIELD;
	out->crc_calc = iwarp_crc32c(buf, covered);
	out->crc_wire = iwarp_crc32c_get(buf + covered);
	out->crc_ok = out->crc_calc == out->crc_wire;
	return (int)total;
}

/* Parse and, if crc is true, turn a CRC mismatch into IWARP_ERR_CRC. */
static inline int iwarp_fpdu_check(const uint8_t *buf, size_t len, bool crc,
				   struct iwarp_fpdu *out)
{
	int rc = iwarp_fpdu_parse(buf, len, out);

	if (rc >= 0 && crc && !out->crc_ok)
		return IWARP_ERR_CRC;
	return rc;
}

/*
 * Frame ulpdu into an unmarked FPDU at out.  Pad octets are zero; the CRC
 * field gets the CRC32c if crc is true, else zero.  Returns the FPDU
 * length, IWARP_ERR_TOO_LONG (ulpdu_len > 65535) or IWARP_ERR_NOSPACE.
 * ulpdu and out must not overlap.
 */
static inline int iwarp_fpdu_encode(uint8_t *out, size_t cap,
				    const uint8_t *ulpdu, size_t ulpdu_len,
				    bool crc)
{
	uint32_t total, covered;

	if (ulpdu_len > IWARP_MPA_MAX_ULPDU)
		return IWARP_ERR_TOO_LONG;
	if (ulpdu_len && !ulpdu)
		return IWARP_ERR_INVAL;
	total = iwarp_fpdu_len((uint32_t)ulpdu_len);
	if (cap < total)
		return IWARP_ERR_NOSPACE;
	covered = total - IWARP_MPA_CRC_FIELD;
	iwarp_put_be16(out, (uint16_t)ulpdu_len);
	iwarp_copy(out + IWARP_MPA_ULPDU_LEN_FIELD, ulpdu, ulpdu_len);
	iwarp_zero(out + IWARP_MPA_ULPDU_LEN_FIELD + ulpdu_len,
		   iwarp_mpa_pad_len((uint32_t)ulpdu_len));
	iwarp_crc32c_put(out + covered, crc ? iwarp_crc32c(out, covered) : 0);
	return (int)total;
}

#endif /* IWARP_MPA_H */
