/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * iwarp/rdmap.h - RDMA Protocol headers (RFC 5040 section 4) and the
 * RFC 7306 extensions (Immediate Data, Atomics), Terminate (RFC 5040
 * section 4.8) with every error code of RFC 5040 section 7, RFC 5041
 * section 7 and the MPA codes of RFC 5044/6581, and name tables.
 *
 * RDMAP owns the DDP header's first RsvdULP octet (the RDMAP control
 * field) and, in untagged segments, the following 32 bits:
 *
 *   0 1 2 3 4 5 6 7
 *  +---+---+-------+
 *  | RV|Rsv| Opcode|    RV: RDMAP version = 1, Rsv: 0
 *  +---+---+-------+
 *
 *  op  message                       model   QN  RDMAP header after DDP
 *  0   RDMA Write                    tagged   -  none
 *  1   RDMA Read Request             untagg.  1  28 octets (below)
 *  2   RDMA Read Response            tagged   -  none
 *  3   Send                          untagg.  0  none
 *  4   Send with Invalidate          untagg.  0  none (Inval. STag in
 *  5   Send with Solicited Event     untagg.  0  none  RsvdULP[1..4])
 *  6   Send with SE and Invalidate   untagg.  0  none
 *  7   Terminate                     untagg.  2  4+ octets (below)
 *  8   Immediate Data      (RFC 7306) untagg. 0  8 octets of data
 *  9   Immediate Data with SE (7306) untagg.  0  8 octets of data
 *  10  Atomic Request      (RFC 7306) untagg. 1  52 octets
 *  11  Atomic Response     (RFC 7306) untagg. 3  12 octets
 *  12-15 reserved
 *
 * Read Request: Data Sink STag(4) Sink TO(8) RDMA Read Message Size(4)
 *               Data Source STag(4) Source TO(8).
 * Terminate:    Layer(4 bits) EType(4) ErrCode(8) M D R (1 each)
 *               Reserved(13); then, if M or D, the terminated segment's
 *               DDP Segment Length (2 octets); if D, a copy of its DDP
 *               header (14 or 18 octets by its T bit); if R, a copy of
 *               the RDMA Read Request header (28 octets).
 * Atomic Request: Reserved(28 bits) AOpCode(4) Request Identifier(4)
 *               Remote STag(4) Remote TO(8) Add-or-Swap Data(8)
 *               Add-or-Swap Mask(8) Compare Data(8) Compare Mask(8).
 * Atomic Response: Original Request Identifier(4) Original Remote
 *               Data Value(8).
 */
#ifndef IWARP_RDMAP_H
#define IWARP_RDMAP_H

#include "types.h"
#include "ddp.h"
#include "mpa.h"

#define IWARP_RDMAP_VERSION 1
#define IWARP_RDMAP_RV_SHIFT 6
#define IWARP_RDMAP_RV_MASK 0xc0
#define IWARP_RDMAP_RSVD_SHIFT 4
#define IWARP_RDMAP_RSVD_MASK 0x30
#define IWARP_RDMAP_OPCODE_MASK 0x0f
/* Offsets from the start of the DDP segment: RDMAP's control octet is
 * the first RsvdULP octet; an untagged segment's RsvdULP[1..4] holds the
 * Invalidate STag of the Send with Invalidate variants.
 */
#define IWARP_RDMAP_CTRL_OFF IWARP_DDP_RSVDULP_OFF
#define IWARP_RDMAP_INVAL_STAG_OFF (IWARP_DDP_RSVDULP_OFF + 1)

enum iwarp_rdmap_opcode {
	IWARP_OP_WRITE = 0x0,
	IWARP_OP_READ_REQUEST = 0x1,
	IWARP_OP_READ_RESPONSE = 0x2,
	IWARP_OP_SEND = 0x3,
	IWARP_OP_SEND_INVALIDATE = 0x4,
	IWARP_OP_SEND_SE = 0x5,
	IWARP_OP_SEND_SE_INVALIDATE = 0x6,
	IWARP_OP_TERMINATE = 0x7,
	IWARP_OP_IMMEDIATE = 0x8,	/* RFC 7306 */
	IWARP_OP_IMMEDIATE_SE = 0x9,	/* RFC 7306 */
	IWARP_OP_ATOMIC_REQUEST = 0xa,	/* RFC 7306 */
	IWARP_OP_ATOMIC_RESPONSE = 0xb	/* RFC 7306 */
};

#define IWARP_RDMAP_READ_REQ_LEN 28
/* Read Request field offsets from the start of the RDMAP header. */
#define IWARP_RDMAP_RR_SINK_STAG_OFF 0
#define IWARP_RDMAP_RR_SINK_TO_OFF 4
#define IWARP_RDMAP_RR_SIZE_OFF 12
#define IWARP_RDMAP_RR_SRC_STAG_OFF 16
#define IWARP_RDMAP_RR_SRC_TO_OFF 20
#define IWARP_RDMAP_TERM_CTRL_LEN 4
#define IWARP_RDMAP_TERM_SEGLEN_LEN 2
#define IWARP_RDMAP_IMMEDIATE_LEN 8
/* The swiwarp flag word of an Immediate Data message (below). */
#define IWARP_RDMAP_IMM_FLAGS_OFF 4
/*
 * swiwarp convention, between swiwarp peers that negotiated RFC 7306 in
 * the MPA exchange only: octets 4-7 of an Immediate Data message (opcode
 * 0x8) are a big-endian flag word.  IWARP_IMM_FLAG_SEND_FOLLOWS says that
 * the next message on this stream is a Send (or Send with SE) that
 * carries the value in octets 0-3: the pair is one IBV_WR_SEND_WITH_IMM,
 * taking two Send MSNs but one receive WQE at the receiver.  Other bits
 * are sent as zero and ignored on receipt.
 */
#define IWARP_IMM_FLAG_SEND_FOLLOWS 0x00000001u
#define IWARP_RDMAP_ATOMIC_REQ_LEN 52
#define IWARP_RDMAP_ATOMIC_RESP_LEN 12
/* Atomic Request field offsets from the start of the RDMAP header; the
 * first word is 28 reserved bits and the 4-bit AOpCode.
 */
#define IWARP_RDMAP_AREQ_AOP_OFF 0
#define IWARP_RDMAP_AREQ_REQID_OFF 4
#define IWARP_RDMAP_AREQ_STAG_OFF 8
#define IWARP_RDMAP_AREQ_TO_OFF 12
#define IWARP_RDMAP_AREQ_ADD_SWAP_OFF 20
#define IWARP_RDMAP_AREQ_ADD_SWAP_MASK_OFF 28
#define IWARP_RDMAP_AREQ_CMP_OFF 36
#define IWARP_RDMAP_AREQ_CMP_MASK_OFF 44
#define IWARP_RDMAP_AREQ_AOP_MASK 0x0000000fU
#define IWARP_RDMAP_AREQ_RSVD_MASK 0xfffffff0U
#define IWARP_RDMAP_AREQ_RSVD_SHIFT 4
/* Atomic Response field offsets. */
#define IWARP_RDMAP_ARESP_REQID_OFF 0
#define IWARP_RDMAP_ARESP_VALUE_OFF 4

/*
 * RFC 7306 Atomic Request operation codes (AOpCode), as the IANA RDDP
 * "RDMAP Message Atomic Operation Subcodes" registry lists them: 0
 * FetchAdd, 1 Reserved (an early draft's Swap did not become part of
 * the RFC), 2 CmpSwap, 3-15 unassigned.
 */
enum iwarp_atomic_opcode {
	IWARP_AOP_FETCH_ADD = 0x0,
	IWARP_AOP_COMPARE_SWAP = 0x2
};

/* Static facts about an opcode. */
struct iwarp_rdmap_opinfo {
	const char *name;
	bool tagged;		/* DDP buffer model */
	uint8_t qn;		/* untagged queue number */
	/* Fixed RDMAP header after the DDP header (Terminate: the
	 * minimum, i.e. the control word).
	 */
	uint8_t hdr_len;
	bool rfc7306;		/* defined by RFC 7306 */
};

/* Returns NULL for reserved opcodes (12-15) and out-of-range values. */
static inline const struct iwarp_rdmap_opinfo *iwarp_rdmap_opcode_info(unsigned int op)
{
	static const struct iwarp_rdmap_opinfo table[12] = {
		{ "RDMA Write", true, 0, 0, false },
		{ "RDMA Read Request", false, IWARP_DDP_QN_READ_REQUEST,
		  IWARP_RDMAP_READ_REQ_LEN, false },
		{ "RDMA Read Response", true, 0, 0, false },
		{ "Send", false, IWARP_DDP_QN_SEND, 0, false },
		{ "Send with Invalidate", false, IWARP_DDP_QN_SEND, 0, false },
		{ "Send with Solicited Event", false, IWARP_DDP_QN_SEND, 0,
		  false },
		{ "Send with Solicited Event and Invalidate", false,
		  IWARP_DDP_QN_SEND, 0, false },
		{ "Terminate", false, IWARP_DDP_QN_TERMINATE,
		  IWARP_RDMAP_TERM_CTRL_LEN, false },
		{ "Immediate Data", false, IWARP_DDP_QN_SEND,
		  IWARP_RDMAP_IMMEDIATE_LEN, true },
		{ "Immediate Data with Solicited Event", false,
		  IWARP_DDP_QN_SEND, IWARP_RDMAP_IMMEDIATE_LEN, true },
		{ "Atomic Request", false, IWARP_DDP_QN_ATOMIC_REQUEST,
		  IWARP_RDMAP_ATOMIC_REQ_LEN, true },
		{ "Atomic Response", false, IWARP_DDP_QN_ATOMIC_RESPONSE,
		  IWARP_RDMAP_ATOMIC_RESP_LEN, true },
	};

	/* Opcodes 12-15 are reserved. */
	if (op > IWARP_OP_ATOMIC_RESPONSE)
		return NULL;
	return &table[op];
}

/* Same as iwarp_rdmap_opcode_info() (first published name; in C++ the
 * function hides the struct tag, so write "struct iwarp_rdmap_opinfo").
 */
static inline const struct iwarp_rdmap_opinfo *iwarp_rdmap_opinfo(unsigned int op)
{
	return iwarp_rdmap_opcode_info(op);
}

static inline const char *iwarp_rdmap_opcode_name(unsigned int op)
{
	const struct iwarp_rdmap_opinfo *info = iwarp_rdmap_opcode_info(op);

	return info ? info->name : "Reserved";
}

static inline const char *iwarp_atomic_opcode_name(unsigned int aop)
{
	switch (aop) {
	case IWARP_AOP_FETCH_ADD:
		return "FetchAdd";
	case IWARP_AOP_COMPARE_SWAP:
		return "CmpSwap";
	default:
		return "Reserved";
	}
}

/* Send with Invalidate variants carry an STag in RsvdULP[1..4]. */
static inline bool iwarp_rdmap_op_invalidates(unsigned int op)
{
	return op == IWARP_OP_SEND_INVALIDATE ||
	       op == IWARP_OP_SEND_SE_INVALIDATE;
}

/*
 * Opcodes whose segments carry ULP payload after their headers: Write,
 * Read Response and the four Sends.  The others end with their RDMAP
 * header (Immediate Data and atomics carry their operands in it).
 */
static inline bool iwarp_rdmap_op_has_payload(unsigned int op)
{
	switch (op) {
	case IWARP_OP_WRITE:
	case IWARP_OP_READ_RESPONSE:
	case IWARP_OP_SEND:
	case IWARP_OP_SEND_INVALIDATE:
	case IWARP_OP_SEND_SE:
	case IWARP_OP_SEND_SE_INVALIDATE:
		return true;
	default:
		return false;
	}
}

/* ---- Terminate (RFC 5040 section 4.8 and section 7) --------------- */

enum iwarp_term_layer {
	IWARP_TERM_LAYER_RDMAP = 0x0,
	IWARP_TERM_LAYER_DDP = 0x1,
	IWARP_TERM_LAYER_LLP = 0x2 /* MPA/TCP */
};

/* RDMAP error types. */
#define IWARP_TERM_RDMAP_ETYPE_CATASTROPHIC 0x0
#define IWARP_TERM_RDMAP_ETYPE_PROTECTION 0x1
#define IWARP_TERM_RDMAP_ETYPE_OPERATION 0x2

/* RDMAP error codes.  With etype CATASTROPHIC the code is 0.  Codes are
 * unique across the two remote error types; 0x09 and 0xff occur with
 * both.
 */
#define IWARP_TERM_RDMAP_CATASTROPHIC 0x00
#define IWARP_TERM_RDMAP_INVALID_STAG 0x00	  /* protection */
#define IWARP_TERM_RDMAP_BASE_BOUNDS 0x01	  /* protection */
#define IWARP_TERM_RDMAP_ACCESS_RIGHTS 0x02	  /* protection */
#define IWARP_TERM_RDMAP_STAG_NOT_ASSOC 0x03	  /* protection */
#define IWARP_TERM_RDMAP_TO_WRAP 0x04		  /* protection */
#define IWARP_TERM_RDMAP_VERSION 0x05		  /* operation */
#define IWARP_TERM_RDMAP_OPCODE 0x06		  /* operation */
#define IWARP_TERM_RDMAP_CATASTROPHIC_STREAM 0x07 /* operation */
#define IWARP_TERM_RDMAP_CATASTROPHIC_GLOBAL 0x08 /* operation */
#define IWARP_TERM_RDMAP_CANNOT_INVALIDATE 0x09	  /* both */
#define IWARP_TERM_RDMAP_UNSPECIFIED 0xff	  /* both */

/* Terminate control word: Layer, EType and ErrCode fields, then bits. */
#define IWARP_TERM_LAYER_SHIFT 28
#define IWARP_TERM_LAYER_MASK 0xf0000000U
#define IWARP_TERM_ETYPE_SHIFT 24
#define IWARP_TERM_ETYPE_MASK 0x0f000000U
#define IWARP_TERM_ECODE_SHIFT 16
#define IWARP_TERM_ECODE_MASK 0x00ff0000U
#define IWARP_TERM_FLAG_M 0x8000 /* DDP Segment Length field valid */
#define IWARP_TERM_FLAG_D 0x4000 /* terminated DDP header included */
#define IWARP_TERM_FLAG_R 0x2000 /* terminated RDMAP header included */
#define IWARP_TERM_RSVD_MASK 0x1fff

struct iwarp_term {
	uint8_t layer;		/* enum iwarp_term_layer (4 bits) */
	uint8_t etype;		/* 4 bits */
	uint8_t ecode;
	bool flag_m;
	bool flag_d;
	bool flag_r;
	uint16_t rsvd;		/* 13 bits */
	uint16_t ddp_seg_len;	/* present if flag_m || flag_d */
	/* Copies of the terminated headers, pointing into the parsed
	 * buffer (or, for encoding, the caller's bytes).
	 */
	const uint8_t *ddp_hdr;
	uint8_t ddp_hdr_len;	/* 14 or 18 when flag_d, else 0 */
	const uint8_t *rdmap_hdr;
	uint8_t rdmap_hdr_len;	/* 28 when flag_r, else 0 */
};

/*
 * Parse the Terminate header at buf (right after the untagged DDP
 * header).  Returns the octets consumed or:
 *   IWARP_ERR_TRUNCATED  a part announced by the flags is missing
 *   IWARP_ERR_MALFORMED  R without D (an RDMAP header copy needs the
 *                        DDP header copy in front of it)
 * Reserved bits are reported, not checked.
 */
static inline int iwarp_term_parse(const uint8_t *buf, size_t len,
				   struct iwarp_term *out)
{
	uint32_t ctrl;
	size_t off = IWARP_RDMAP_TERM_CTRL_LEN;

	out->layer = 0;
	out->etype = 0;
	out->ecode = 0;
	out->flag_m = false;
	out->flag_d = false;
	out->flag_r = false;
	out->rsvd = 0;
	out->ddp_seg_len = 0;
	out->ddp_hdr = NULL;
	out->rdmap_hdr = NULL;
	out->ddp_hdr_len = 0;
	out->rdmap_hdr_len = 0;
	if (len < IWARP_RDMAP_TERM_CTRL_LEN)
		return IWARP_ERR_TRUNCATED;
	ctrl = iwarp_get_be32(buf);
	out->layer = (uint8_t)((ctrl & IWARP_TERM_LAYER_MASK) >>
			       IWARP_TERM_LAYER_SHIFT);
	out->etype = (uint8_t)((ctrl & IWARP_TERM_ETYPE_MASK) >>
			       IWARP_TERM_ETYPE_SHIFT);
	out->ecode = (uint8_t)((ctrl & IWARP_TERM_ECODE_MASK) >>
			       IWARP_TERM_ECODE_SHIFT);
	out->flag_m = (ctrl & IWARP_TERM_FLAG_M) != 0;
	out->flag_d = (ctrl & IWARP_TERM_FLAG_D) != 0;
	out->flag_r = (ctrl & IWARP_TERM_FLAG_R) != 0;
	out->rsvd = (uint16_t)(ctrl & IWARP_TERM_RSVD_MASK);
	if (out->flag_r && !out->flag_d)
		return IWARP_ERR_MALFORMED;
	if (out->flag_m || out->flag_d) {
		if (len - off < IWARP_RDMAP_TERM_SEGLEN_LEN)
			return IWARP_ERR_TRUNCATED;
		out->ddp_seg_len = iwarp_get_be16(buf + off);
		off += IWARP_RDMAP_TERM_SEGLEN_LEN;
	}
	if (out->flag_d) {
		uint32_t hl;

		if (len - off < 1)
			return IWARP_ERR_TRUNCATED;
		hl = iwarp_ddp_hdr_len((buf[off] & IWARP_DDP_FLAG_TAGGED) != 0);
		if (len - off < hl)
			return IWARP_ERR_TRUNCATED;
		out->ddp_hdr = buf + off;
		out->ddp_hdr_len = (uint8_t)hl;
		off += hl;
	}
	if (out->flag_r) {
		if (len - off < IWARP_RDMAP_READ_REQ_LEN)
			return IWARP_ERR_TRUNCATED;
		out->rdmap_hdr = buf + off;
		out->rdmap_hdr_len = IWARP_RDMAP_READ_REQ_LEN;
		off += IWARP_RDMAP_READ_REQ_LEN;
	}
	return (int)off;
}

/* Octets iwarp_term_encode() will write for t. */
static inline uint32_t iwarp_term_encoded_len(const struct iwarp_term *t)
{
	uint32_t n = IWARP_RDMAP_TERM_CTRL_LEN;

	if (t->flag_m || t->flag_d)
		n += IWARP_RDMAP_TERM_SEGLEN_LEN;
	if (t->flag_d)
		n += t->ddp_hdr_len;
	if (t->flag_r)
		n += IWARP_RDMAP_READ_REQ_LEN;
	return n;
}

/*
 * Encode a Terminate header.  Returns octets written or IWARP_ERR_INVAL
 * (R without D, missing header copies, ddp_hdr_len not matching the copied
 * header's T bit, layer/etype > 15) or IWARP_ERR_NOSPACE.
 */
static inline int iwarp_term_encode(const struct iwarp_term *t, uint8_t *out,
				    size_t cap)
{
	uint32_t ctrl, n = iwarp_term_encoded_len(t);
	size_t off = IWARP_RDMAP_TERM_CTRL_LEN;

	if (t->layer > 0xf || t->etype > 0xf)
		return IWARP_ERR_INVAL;
	if (t->flag_r && !t->flag_d)
		return IWARP_ERR_INVAL;
	if (t->flag_d &&
	    (!t->ddp_hdr ||
	     t->ddp_hdr_len !=
		     iwarp_ddp_hdr_len((t->ddp_hdr[0] & IWARP_DDP_FLAG_TAGGED) != 0)))
		return IWARP_ERR_INVAL;
	if (t->flag_r && (!t->rdmap_hdr ||
			  t->rdmap_hdr_len != IWARP_RDMAP_READ_REQ_LEN))
		return IWARP_ERR_INVAL;
	if (cap < n)
		return IWARP_ERR_NOSPACE;
	ctrl = ((uint32_t)t->layer << IWARP_TERM_LAYER_SHIFT) |
	       ((uint32_t)t->etype << IWARP_TERM_ETYPE_SHIFT) |
	       ((uint32_t)t->ecode << IWARP_TERM_ECODE_SHIFT) |
	       (t->rsvd & IWARP_TERM_RSVD_MASK);
	if (t->flag_m)
		ctrl |= IWARP_TERM_FLAG_M;
	if (t->flag_d)
		ctrl |= IWARP_TERM_FLAG_D;
	if (t->flag_r)
		ctrl |= IWARP_TERM_FLAG_R;
	iwarp_put_be32(out, ctrl);
	if (t->flag_m || t->flag_d) {
		iwarp_put_be16(out + off, t->ddp_seg_len);
		off += IWARP_RDMAP_TERM_SEGLEN_LEN;
	}
	if (t->flag_d) {
		iwarp_copy(out + off, t->ddp_hdr, t->ddp_hdr_len);
		off += t->ddp_hdr_len;
	}
	if (t->flag_r) {
		iwarp_copy(out + off, t->rdmap_hdr, IWARP_RDMAP_READ_REQ_LEN);
		off += IWARP_RDMAP_READ_REQ_LEN;
	}
	return (int)off;
}

static inline const char *iwarp_term_layer_name(unsigned int layer)
{
	switch (layer) {
	case IWARP_TERM_LAYER_RDMAP:
		return "RDMAP";
	case IWARP_TERM_LAYER_DDP:
		return "DDP";
	case IWARP_TERM_LAYER_LLP:
		return "LLP (MPA/TCP)";
	default:
		return NULL;
	}
}

/* Name of an error type within a layer; NULL if undefined. */
static inline const char *iwarp_term_etype_name(unsigned int layer,
						unsigned int etype)
{
	switch (layer) {
	case IWARP_TERM_LAYER_RDMAP:
		switch (etype) {
		case IWARP_TERM_RDMAP_ETYPE_CATASTROPHIC:
			return "Local Catastrophic Error";
		case IWARP_TERM_RDMAP_ETYPE_PROTECTION:
			return "Remote Protection Error";
		case IWARP_TERM_RDMAP_ETYPE_OPERATION:
			return "Remote Operation Error";
		}
		break;
	case IWARP_TERM_LAYER_DDP:
		switch (etype) {
		case IWARP_TERM_DDP_ETYPE_CATASTROPHIC:
			return "Local Catastrophic Error";
		case IWARP_TERM_DDP_ETYPE_TAGGED:
			return "Tagged Buffer Error";
		case IWARP_TERM_DDP_ETYPE_UNTAGGED:
			return "Untagged Buffer Error";
		case IWARP_TERM_DDP_ETYPE_LLP:
			return "Reserved for the LLP";
		}
		break;
	case IWARP_TERM_LAYER_LLP:
		if (etype == IWARP_TERM_ETYPE_MPA)
			return "MPA Error";
		break;
	}
	return NULL;
}

/*
 * Name of an error code; NULL if the (layer, etype, ecode) combination is
 * not defined by RFC 5040/5041/5044/6581.
 */
static inline const char *iwarp_term_ecode_name(unsigned int layer,
						unsigned int etype,
						unsigned int ecode)
{
	if (layer == IWARP_TERM_LAYER_RDMAP) {
		if (etype == IWARP_TERM_RDMAP_ETYPE_CATASTROPHIC)
			return ecode == IWARP_TERM_RDMAP_CATASTROPHIC ?
				       "Local catastrophic error" : NULL;
		if (etype == IWARP_TERM_RDMAP_ETYPE_PROTECTION) {
			switch (ecode) {
			case IWARP_TERM_RDMAP_INVALID_STAG:
				return "Invalid STag";
			case IWARP_TERM_RDMAP_BASE_BOUNDS:
				return "Base or bounds violation";
			case IWARP_TERM_RDMAP_ACCESS_RIGHTS:
				return "Access rights violation";
			case IWARP_TERM_RDMAP_STAG_NOT_ASSOC:
				return "STag not associated with RDMAP Stream";
			case IWARP_TERM_RDMAP_TO_WRAP:
				return "TO wrap";
			case IWARP_TERM_RDMAP_CANNOT_INVALIDATE:
				return "STag cannot be invalidated";
			case IWARP_TERM_RDMAP_UNSPECIFIED:
				return "Unspecified error";
			}
			return NULL;
		}
		if (etype == IWARP_TERM_RDMAP_ETYPE_OPERATION) {
			switch (ecode) {
			case IWARP_TERM_RDMAP_VERSION:
				return "Invalid RDMAP version";
			case IWARP_TERM_RDMAP_OPCODE:
				return "Unexpected opcode";
			case IWARP_TERM_RDMAP_CATASTROPHIC_STREAM:
				return "Catastrophic error, localized to RDMAP Stream";
			case IWARP_TERM_RDMAP_CATASTROPHIC_GLOBAL:
				return "Catastrophic error, global";
			case IWARP_TERM_RDMAP_CANNOT_INVALIDATE:
				return "STag cannot be invalidated";
			case IWARP_TERM_RDMAP_UNSPECIFIED:
				return "Unspecified error";
			}
			return NULL;
		}
		return NULL;
	}
	if (layer == IWARP_TERM_LAYER_DDP) {
		if (etype == IWARP_TERM_DDP_ETYPE_CATASTROPHIC)
			return ecode == IWARP_TERM_DDP_CATASTROPHIC ?
				       "Local catastrophic error" : NULL;
		if (etype == IWARP_TERM_DDP_ETYPE_TAGGED) {
			switch (ecode) {
			case IWARP_TERM_DDP_T_INVALID_STAG:
				return "Invalid STag";
			case IWARP_TERM_DDP_T_BASE_BOUNDS:
				return "Base or bounds violation";
			case IWARP_TERM_DDP_T_STAG_NOT_ASSOC:
				return "STag not associated with DDP Stream";
			case IWARP_TERM_DDP_T_TO_WRAP:
				return "TO wrap";
			case IWARP_TERM_DDP_T_VERSION:
				return "Invalid DDP version";
			}
			return NULL;
		}
		if (etype == IWARP_TERM_DDP_ETYPE_UNTAGGED) {
			switch (ecode) {
			case IWARP_TERM_DDP_U_INVALID_QN:
				return "Invalid QN";
			case IWARP_TERM_DDP_U_MSN_NO_BUFFER:
				return "Invalid MSN, no buffer available";
			case IWARP_TERM_DDP_U_MSN_RANGE:
				return "Invalid MSN, MSN range is not valid";
			case IWARP_TERM_DDP_U_INVALID_MO:
				return "Invalid MO";
			case IWARP_TERM_DDP_U_TOO_LONG:
				return "DDP Message too long for available buffer";
			case IWARP_TERM_DDP_U_VERSION:
				return "Invalid DDP version";
			}
			return NULL;
		}
		return NULL;
	}
	if (layer == IWARP_TERM_LAYER_LLP && etype == IWARP_TERM_ETYPE_MPA) {
		switch (ecode) {
		case IWARP_TERM_MPA_TCP_LOST:
			return "TCP connection closed, terminated or lost";
		case IWARP_TERM_MPA_CRC:
			return "MPA CRC error";
		case IWARP_TERM_MPA_MARKER:
			return "MPA marker and ULPDU length mismatch";
		case IWARP_TERM_MPA_INVALID_RR:
			return "Invalid MPA Request or Reply";
		case IWARP_TERM_MPA_LOCAL_CATASTROPHIC:
			return "Local catastrophic error";
		case IWARP_TERM_MPA_INSUFFICIENT_IRD:
			return "Insufficient IRD resources";
		case IWARP_TERM_MPA_NO_MATCHING_RTR:
			return "No matching RTR model";
		}
	}
	return NULL;
}

/* ---- Whole DDP + RDMAP header ------------------------------------- */

struct iwarp_rdmap_read_req {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;		/* RDMA Read Message Size */
	uint32_t src_stag;
	uint64_t src_to;
};

struct iwarp_rdmap_atomic_req {
	uint32_t rsvd;		/* 28 reserved bits */
	uint8_t aopcode;	/* enum iwarp_atomic_opcode */
	uint32_t req_id;
	uint32_t stag;
	uint64_t to;
	uint64_t add_swap;
	uint64_t add_swap_mask;
	uint64_t compare;
	uint64_t compare_mask;
};

struct iwarp_rdmap_atomic_resp {
	uint32_t req_id;
	uint64_t orig_value;
};

/*
 * A DDP segment's headers as RDMAP sees them.  Only the per-opcode member
 * that matches opcode is meaningful.
 */
struct iwarp_rdmap_msg {
	struct iwarp_ddp_hdr ddp;
	uint8_t rv;		/* RDMAP version */
	uint8_t rsvd;		/* RDMAP control reserved bits */
	uint8_t opcode;
	/* Untagged: RsvdULP[1..4], the Invalidate STag (reserved for
	 * other opcodes).
	 */
	uint32_t inval_stag;
	uint32_t hdr_len;	/* DDP + RDMAP header octets */
	struct iwarp_rdmap_read_req rreq;
	struct iwarp_rdmap_atomic_req areq;
	struct iwarp_rdmap_atomic_resp aresp;
	uint64_t immediate;
	struct iwarp_term term;
};

/*
 * Prepare msg for sending opcode: version fields, buffer model, queue
 * number and the L flag (set; clear it for non-final segments of
 * Write/Read Response/Send).  Other fields are zeroed.  Returns
 * IWARP_ERR_BAD_OPCODE for reserved opcodes.
 */
static inline int iwarp_rdmap_init(struct iwarp_rdmap_msg *msg,
				   unsigned int opcode)
{
	const struct iwarp_rdmap_opinfo *info = iwarp_rdmap_opcode_info(opcode);
	uint8_t *raw = (uint8_t *)msg;
	size_t i;

	for (i = 0; i < sizeof(*msg); i++)
		raw[i] = 0;
	msg->term.ddp_hdr = NULL;
	msg->term.rdmap_hdr = NULL;
	if (!info)
		return IWARP_ERR_BAD_OPCODE;
	msg->ddp.tagged = info->tagged;
	msg->ddp.last = true;
	msg->ddp.dv = IWARP_DDP_VERSION;
	msg->ddp.qn = info->tagged ? 0 : info->qn;
	msg->rv = IWARP_RDMAP_VERSION;
	msg->opcode = (uint8_t)opcode;
	return IWARP_OK;
}

/*
 * Parse the DDP and RDMAP headers at the start of a DDP segment (an MPA
 * ULPDU).  Returns hdr_len (payload starts there) or:
 *   IWARP_ERR_TRUNCATED    header incomplete
 *   IWARP_ERR_BAD_VERSION  DV or RV is not 1
 *   IWARP_ERR_BAD_OPCODE   reserved opcode (12-15)
 *   IWARP_ERR_BAD_QN       tagged flag or QN does not fit the opcode
 *   IWARP_ERR_MALFORMED    inconsistent Terminate flags
 * out holds what was decoded up to the error.
 */
static inline int iwarp_rdmap_parse(const uint8_t *buf, size_t len,
				    struct iwarp_rdmap_msg *out)
{
	const struct iwarp_rdmap_opinfo *info;
	const uint8_t *p;
	uint32_t word;
	size_t rest;
	int rc;

	iwarp_rdmap_init(out, IWARP_OP_WRITE);
	out->ddp.last = false;
	out->ddp.dv = 0;
	out->rv = 0;
	rc = iwarp_ddp_hdr_parse(buf, len, &out->ddp);
	if (rc == IWARP_ERR_TRUNCATED)
		return rc;
	out->rv = (uint8_t)((out->ddp.rsvdulp[0] & IWARP_RDMAP_RV_MASK) >>
			    IWARP_RDMAP_RV_SHIFT);
	out->rsvd = (uint8_t)((out->ddp.rsvdulp[0] & IWARP_RDMAP_RSVD_MASK) >>
			      IWARP_RDMAP_RSVD_SHIFT);
	out->opcode = out->ddp.rsvdulp[0] & IWARP_RDMAP_OPCODE_MASK;
	if (!out->ddp.tagged)
		out->inval_stag = iwarp_get_be32(out->ddp.rsvdulp + 1);
	if (rc < 0)
		return rc;
	out->hdr_len = (uint32_t)rc;
	if (out->rv != IWARP_RDMAP_VERSION)
		return IWARP_ERR_BAD_VERSION;
	info = iwarp_rdmap_opcode_info(out->opcode);
	if (!info)
		return IWARP_ERR_BAD_OPCODE;
	if (info->tagged != out->ddp.tagged ||
	    (!info->tagged && out->ddp.qn != info->qn))
		return IWARP_ERR_BAD_QN;

	p = buf + out->hdr_len;
	rest = len - out->hdr_len;
	if (rest < info->hdr_len)
		return IWARP_ERR_TRUNCATED;
	switch (out->opcode) {
	case IWARP_OP_READ_REQUEST:
		out->rreq.sink_stag =
			iwarp_get_be32(p + IWARP_RDMAP_RR_SINK_STAG_OFF);
		out->rreq.sink_to =
			iwarp_get_be64(p + IWARP_RDMAP_RR_SINK_TO_OFF);
		out->rreq.size = iwarp_get_be32(p + IWARP_RDMAP_RR_SIZE_OFF);
		out->rreq.src_stag =
			iwarp_get_be32(p + IWARP_RDMAP_RR_SRC_STAG_OFF);
		out->rreq.src_to = iwarp_get_be64(p + IWARP_RDMAP_RR_SRC_TO_OFF);
		break;
	case IWARP_OP_TERMINATE:
		rc = iwarp_term_parse(p, rest, &out->term);
		if (rc < 0)
			return rc;
		out->hdr_len += (uint32_t)rc;
		return (int)out->hdr_len;
	case IWARP_OP_IMMEDIATE:
	case IWARP_OP_IMMEDIATE_SE:
		out->immediate = iwarp_get_be64(p);
		break;
	case IWARP_OP_ATOMIC_REQUEST:
		word = iwarp_get_be32(p + IWARP_RDMAP_AREQ_AOP_OFF);
		out->areq.rsvd = word >> IWARP_RDMAP_AREQ_RSVD_SHIFT;
		out->areq.aopcode = (uint8_t)(word & IWARP_RDMAP_AREQ_AOP_MASK);
		out->areq.req_id = iwarp_get_be32(p + IWARP_RDMAP_AREQ_REQID_OFF);
		out->areq.stag = iwarp_get_be32(p + IWARP_RDMAP_AREQ_STAG_OFF);
		out->areq.to = iwarp_get_be64(p + IWARP_RDMAP_AREQ_TO_OFF);
		out->areq.add_swap =
			iwarp_get_be64(p + IWARP_RDMAP_AREQ_ADD_SWAP_OFF);
		out->areq.add_swap_mask =
			iwarp_get_be64(p + IWARP_RDMAP_AREQ_ADD_SWAP_MASK_OFF);
		out->areq.compare = iwarp_get_be64(p + IWARP_RDMAP_AREQ_CMP_OFF);
		out->areq.compare_mask =
			iwarp_get_be64(p + IWARP_RDMAP_AREQ_CMP_MASK_OFF);
		break;
	case IWARP_OP_ATOMIC_RESPONSE:
		out->aresp.req_id =
			iwarp_get_be32(p + IWARP_RDMAP_ARESP_REQID_OFF);
		out->aresp.orig_value =
			iwarp_get_be64(p + IWARP_RDMAP_ARESP_VALUE_OFF);
		break;
	default:
		break;
	}
	out->hdr_len += info->hdr_len;
	return (int)out->hdr_len;
}

/* Octets iwarp_rdmap_encode() writes for msg (0 for a reserved opcode). */
static inline uint32_t iwarp_rdmap_encoded_len(const struct iwarp_rdmap_msg *msg)
{
	const struct iwarp_rdmap_opinfo *info = iwarp_rdmap_opcode_info(msg->opcode);

	if (!info)
		return 0;
	if (msg->opcode == IWARP_OP_TERMINATE)
		return iwarp_ddp_hdr_len(msg->ddp.tagged) +
		       iwarp_term_encoded_len(&msg->term);
	return iwarp_ddp_hdr_len(msg->ddp.tagged) + info->hdr_len;
}

/*
 * Encode the DDP + RDMAP headers of msg.  RsvdULP is built from rv, rsvd,
 * opcode and (untagged) inval_stag; msg->ddp.rsvdulp is ignored.  Fields
 * are written as given, so invalid combinations (wrong QN, version) can be
 * produced on purpose for tests.  Returns octets written or
 * IWARP_ERR_BAD_OPCODE, IWARP_ERR_INVAL (bad Terminate) or
 * IWARP_ERR_NOSPACE.
 */
static inline int iwarp_rdmap_encode(const struct iwarp_rdmap_msg *msg,
				     uint8_t *out, size_t cap)
{
	const struct iwarp_rdmap_opinfo *info = iwarp_rdmap_opcode_info(msg->opcode);
	struct iwarp_ddp_hdr ddp = msg->ddp;
	uint32_t total;
	uint8_t *p;
	int rc;

	if (!info)
		return IWARP_ERR_BAD_OPCODE;
	total = iwarp_rdmap_encoded_len(msg);
	if (cap < total)
		return IWARP_ERR_NOSPACE;
	ddp.rsvdulp[0] = (uint8_t)(((msg->rv << IWARP_RDMAP_RV_SHIFT) &
				    IWARP_RDMAP_RV_MASK) |
				   ((msg->rsvd << IWARP_RDMAP_RSVD_SHIFT) &
				    IWARP_RDMAP_RSVD_MASK) |
				   (msg->opcode & IWARP_RDMAP_OPCODE_MASK));
	iwarp_put_be32(ddp.rsvdulp + 1, ddp.tagged ? 0 : msg->inval_stag);
	rc = iwarp_ddp_hdr_encode(&ddp, out, cap);
	if (rc < 0)
		return rc;
	p = out + rc;
	switch (msg->opcode) {
	case IWARP_OP_READ_REQUEST:
		iwarp_put_be32(p + IWARP_RDMAP_RR_SINK_STAG_OFF,
			       msg->rreq.sink_stag);
		iwarp_put_be64(p + IWARP_RDMAP_RR_SINK_TO_OFF,
			       msg->rreq.sink_to);
		iwarp_put_be32(p + IWARP_RDMAP_RR_SIZE_OFF, msg->rreq.size);
		iwarp_put_be32(p + IWARP_RDMAP_RR_SRC_STAG_OFF,
			       msg->rreq.src_stag);
		iwarp_put_be64(p + IWARP_RDMAP_RR_SRC_TO_OFF, msg->rreq.src_to);
		break;
	case IWARP_OP_TERMINATE:
		rc = iwarp_term_encode(&msg->term, p, cap - (size_t)rc);
		if (rc < 0)
			return rc;
		break;
	case IWARP_OP_IMMEDIATE:
	case IWARP_OP_IMMEDIATE_SE:
		iwarp_put_be64(p, msg->immediate);
		break;
	case IWARP_OP_ATOMIC_REQUEST:
		iwarp_put_be32(p + IWARP_RDMAP_AREQ_AOP_OFF,
			       (msg->areq.rsvd << IWARP_RDMAP_AREQ_RSVD_SHIFT) |
			       (msg->areq.aopcode & IWARP_RDMAP_AREQ_AOP_MASK));
		iwarp_put_be32(p + IWARP_RDMAP_AREQ_REQID_OFF, msg->areq.req_id);
		iwarp_put_be32(p + IWARP_RDMAP_AREQ_STAG_OFF, msg->areq.stag);
		iwarp_put_be64(p + IWARP_RDMAP_AREQ_TO_OFF, msg->areq.to);
		iwarp_put_be64(p + IWARP_RDMAP_AREQ_ADD_SWAP_OFF,
			       msg->areq.add_swap);
		iwarp_put_be64(p + IWARP_RDMAP_AREQ_ADD_SWAP_MASK_OFF,
			       msg->areq.add_swap_mask);
		iwarp_put_be64(p + IWARP_RDMAP_AREQ_CMP_OFF, msg->areq.compare);
		iwarp_put_be64(p + IWARP_RDMAP_AREQ_CMP_MASK_OFF,
			       msg->areq.compare_mask);
		break;
	case IWARP_OP_ATOMIC_RESPONSE:
		iwarp_put_be32(p + IWARP_RDMAP_ARESP_REQID_OFF,
			       msg->aresp.req_id);
		iwarp_put_be64(p + IWARP_RDMAP_ARESP_VALUE_OFF,
			       msg->aresp.orig_value);
		break;
	default:
		break;
	}
	return (int)total;
}

#endif /* IWARP_RDMAP_H */
