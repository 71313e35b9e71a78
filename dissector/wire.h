/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dissector's view of the shared wire-format core (include/iwarp/).
 * Every constant and name table the plugin uses comes from there; this
 * header only adapts them to Wireshark (value_string tables, tvb helpers)
 * and gives them short names.
 */
#ifndef SWIWARP_WIRE_H
#define SWIWARP_WIRE_H

#include <epan/packet.h>
#include <iwarp/iwarp.h>

/* ---- MPA ---- */
#define SW_MPA_KEY_LEN IWARP_MPA_KEY_LEN
#define SW_MPA_FRAME_HDR_LEN IWARP_MPA_RR_HDR_LEN
#define SW_MPA_FLAGS_OFF IWARP_MPA_KEY_LEN
#define SW_MPA_REV_OFF (IWARP_MPA_KEY_LEN + 1)
#define SW_MPA_PDLEN_OFF (IWARP_MPA_KEY_LEN + 2)
#define SW_MPA_MAX_PD IWARP_MPA_MAX_PDATA
#define SW_MPA_V2_PD_LEN IWARP_MPA_V2_WORD_LEN
#define SW_MPA_REV1 IWARP_MPA_REV1
#define SW_MPA_REV2 IWARP_MPA_REV2
#define SW_MPA_FLAG_M IWARP_MPA_FLAG_M
#define SW_MPA_FLAG_C IWARP_MPA_FLAG_C
#define SW_MPA_FLAG_R IWARP_MPA_FLAG_R
#define SW_MPA_FLAG_H IWARP_MPA_FLAG_E
#define SW_MPA_FLAG_GSO IWARP_MPA_FLAG_SIW_GSO
#define SW_MPA_FLAG_RFC7306_REQ IWARP_MPA_FLAG_RFC7306_REQ
#define SW_MPA_FLAG_RFC7306_REP IWARP_MPA_FLAG_RFC7306_REP
#define SW_MPA_FLAG_RES_MASK IWARP_MPA_RES_MASK_V2
#define SW_MPA_V2_P2P IWARP_MPA_V2_IRD_P2P
#define SW_MPA_V2_RTR_SEND IWARP_MPA_V2_IRD_SEND_RTR
#define SW_MPA_V2_RTR_WRITE IWARP_MPA_V2_ORD_WRITE_RTR
#define SW_MPA_V2_RTR_READ IWARP_MPA_V2_ORD_READ_RTR
#define SW_MPA_V2_IRD_ORD_MASK IWARP_MPA_V2_IRD_ORD_MAX
#define SW_MPA_HDR_LEN IWARP_MPA_ULPDU_LEN_FIELD
#define SW_MPA_CRC_LEN IWARP_MPA_CRC_FIELD

static inline guint8 sw_mpa_pad(guint16 ulpdu_len)
{
	return (guint8)iwarp_mpa_pad_len(ulpdu_len);
}

/* 1: Request key, 2: Reply key, 0: neither (or not enough bytes). */
static inline int sw_mpa_key_kind(tvbuff_t *tvb, int off)
{
	const guint8 *p;

	if (tvb_captured_length_remaining(tvb, off) < IWARP_MPA_KEY_LEN)
		return 0;
	p = tvb_get_ptr(tvb, off, IWARP_MPA_KEY_LEN);
	if (iwarp_bytes_equal(p, (const uint8_t *)IWARP_MPA_KEY_REQ, IWARP_MPA_KEY_LEN))
		return IWARP_MPA_REQUEST;
	if (iwarp_bytes_equal(p, (const uint8_t *)IWARP_MPA_KEY_REP, IWARP_MPA_KEY_LEN))
		return IWARP_MPA_REPLY;
	return 0;
}

/* ---- markers ---- */
#define SW_MARKER_INTERVAL IWARP_MPA_MARKER_PERIOD
#define SW_MARKER_LEN IWARP_MPA_MARKER_LEN
#define SW_MARKER_RES_LEN 2
#define SW_MARKER_PTR_LEN 2
/* RFC 5044 section 5: receivers ignore the two low bits of FPDUPTR. */
#define SW_MARKER_PTR_IGNORED_BITS 3u

/* Octets from seq forward to the next marker position (0: one is at seq). */
static inline guint32 sw_marker_distance(guint32 base, guint32 seq)
{
	return iwarp_marker_first_offset(base, seq);
}

/* ---- DDP ---- */
#define SW_DDP_T IWARP_DDP_FLAG_TAGGED
#define SW_DDP_L IWARP_DDP_FLAG_LAST
#define SW_DDP_RSVD_MASK IWARP_DDP_RSVD_MASK
#define SW_DDP_DV_MASK IWARP_DDP_DV_MASK
#define SW_DDP_VERSION IWARP_DDP_VERSION
#define SW_DDP_TAGGED_HDR_LEN IWARP_DDP_TAGGED_HDR_LEN
#define SW_DDP_UNTAGGED_HDR_LEN IWARP_DDP_UNTAGGED_HDR_LEN
#define SW_DDP_MIN_HDR_LEN IWARP_DDP_TAGGED_HDR_LEN
/* Field offsets inside the DDP header (RFC 5041 section 5.2/5.3). */
#define SW_DDP_RSVDULP_OFF 2	/* untagged RsvdULP[1..4]: Invalidate STag */
#define SW_DDP_STAG_OFF 2
#define SW_DDP_TO_OFF 6
#define SW_DDP_QN_OFF 6
#define SW_DDP_MSN_OFF 10
#define SW_DDP_MO_OFF 14

static inline guint8 sw_ddp_version(guint8 c0)
{
	return c0 & IWARP_DDP_DV_MASK;
}

struct sw_ddp_hdr {
	gboolean tagged, last;
	guint32 stag;
	guint64 to;
	guint32 qn, msn, mo;
};

/* ---- RDMAP ---- */
#define SW_RDMAP_VERSION IWARP_RDMAP_VERSION
#define SW_RDMAP_RV_MASK IWARP_RDMAP_RV_MASK
#define SW_RDMAP_RSV_MASK IWARP_RDMAP_RSVD_MASK
#define SW_RDMAP_OPCODE_MASK IWARP_RDMAP_OPCODE_MASK
#define SW_RDMAP_MAX_QN (IWARP_DDP_QN_ATOMIC_RESPONSE + 1)
#define SW_RDMAP_OP_WRITE IWARP_OP_WRITE
#define SW_RDMAP_OP_READ_REQ IWARP_OP_READ_REQUEST
#define SW_RDMAP_OP_READ_RESP IWARP_OP_READ_RESPONSE
#define SW_RDMAP_OP_TERMINATE IWARP_OP_TERMINATE
#define SW_RDMAP_OP_IMM IWARP_OP_IMMEDIATE
#define SW_RDMAP_OP_IMM_SE IWARP_OP_IMMEDIATE_SE
#define SW_RDMAP_OP_ATOMIC_REQ IWARP_OP_ATOMIC_REQUEST
#define SW_RDMAP_OP_ATOMIC_RESP IWARP_OP_ATOMIC_RESPONSE
#define SW_RDMAP_READ_REQ_LEN IWARP_RDMAP_READ_REQ_LEN
#define SW_RDMAP_IMM_LEN IWARP_RDMAP_IMMEDIATE_LEN
#define SW_IMM_FLAG_SEND_FOLLOWS IWARP_IMM_FLAG_SEND_FOLLOWS
#define SW_TERM_CTRL_LEN IWARP_RDMAP_TERM_CTRL_LEN
#define SW_TERM_SEGLEN_LEN IWARP_RDMAP_TERM_SEGLEN_LEN
#define SW_TERM_RSVD_MASK IWARP_TERM_RSVD_MASK
#define SW_ATOMIC_REQ_LEN IWARP_RDMAP_ATOMIC_REQ_LEN
#define SW_ATOMIC_RESP_LEN IWARP_RDMAP_ATOMIC_RESP_LEN
#define SW_ATOMIC_OP_MASK 0x0000000fu
#define SW_ATOMIC_RSVD_MASK 0xfffffff0u

/* Offsets inside the RDMAP headers (RFC 5040 section 4.4, RFC 7306). */
#define SW_RR_SINK_STAG_OFF 0
#define SW_RR_SINK_TO_OFF 4
#define SW_RR_SIZE_OFF 12
#define SW_RR_SRC_STAG_OFF 16
#define SW_RR_SRC_TO_OFF 20
#define SW_ATOMIC_OP_OFF 0
#define SW_ATOMIC_REQID_OFF 4
#define SW_ATOMIC_STAG_OFF 8
#define SW_ATOMIC_TO_OFF 12
#define SW_ATOMIC_ADD_SWAP_OFF 20
#define SW_ATOMIC_ADD_SWAP_MASK_OFF 28
#define SW_ATOMIC_CMP_OFF 36
#define SW_ATOMIC_CMP_MASK_OFF 44
#define SW_ATOMIC_RESP_REQID_OFF 0
#define SW_ATOMIC_RESP_VALUE_OFF 4

struct sw_read_req {
	guint32 sink_stag;
	guint64 sink_to;
	guint32 size;
};

static inline guint8 sw_rdmap_opcode(guint8 c1)
{
	return c1 & IWARP_RDMAP_OPCODE_MASK;
}

static inline guint8 sw_rdmap_version(guint8 c1)
{
	return (guint8)((c1 & IWARP_RDMAP_RV_MASK) >> IWARP_RDMAP_RV_SHIFT);
}

static inline const char *sw_rdmap_opcode_name(guint8 op)
{
	return iwarp_rdmap_opcode_name(op);
}

static inline gboolean sw_rdmap_opcode_known(guint8 op)
{
	return iwarp_rdmap_opcode_info(op) != NULL;
}

static inline gboolean sw_rdmap_opcode_tagged(guint8 op)
{
	const struct iwarp_rdmap_opinfo *i = iwarp_rdmap_opcode_info(op);

	return i && i->tagged;
}

static inline guint32 sw_rdmap_opcode_qn(guint8 op)
{
	const struct iwarp_rdmap_opinfo *i = iwarp_rdmap_opcode_info(op);

	return i ? i->qn : 0;
}

static inline gboolean sw_rdmap_uses_inval_stag(guint8 op)
{
	return iwarp_rdmap_op_invalidates(op);
}

/* Opcodes whose segments carry ULP payload after the RDMAP header. */
static inline gboolean sw_rdmap_opcode_has_payload(guint8 op)
{
	switch (op) {
	case IWARP_OP_WRITE:
	case IWARP_OP_READ_RESPONSE:
	case IWARP_OP_SEND:
	case IWARP_OP_SEND_INVALIDATE:
	case IWARP_OP_SEND_SE:
	case IWARP_OP_SEND_SE_INVALIDATE:
		return TRUE;
	default:
		return FALSE;
	}
}

static inline guint8 sw_atomic_op(guint32 word)
{
	return (guint8)(word & SW_ATOMIC_OP_MASK);
}

static inline const char *sw_atomic_op_name(guint8 aop)
{
	return iwarp_atomic_opcode_name(aop);
}

/* Terminate control word (RFC 5040 section 4.8). */
static inline guint8 sw_term_layer(guint32 ctrl)
{
	return (guint8)(ctrl >> 28);
}

static inline guint8 sw_term_etype(guint32 ctrl)
{
	return (guint8)((ctrl >> 24) & 0xf);
}

static inline guint8 sw_term_ecode(guint32 ctrl)
{
	return (guint8)((ctrl >> 16) & 0xff);
}

static inline gboolean sw_term_m(guint32 ctrl)
{
	return (ctrl & IWARP_TERM_FLAG_M) != 0;
}

static inline gboolean sw_term_d(guint32 ctrl)
{
	return (ctrl & IWARP_TERM_FLAG_D) != 0;
}

static inline gboolean sw_term_r(guint32 ctrl)
{
	return (ctrl & IWARP_TERM_FLAG_R) != 0;
}

static inline const char *sw_term_layer_name(guint8 layer)
{
	const char *n = iwarp_term_layer_name(layer);

	return n ? n : "Unknown layer";
}

static inline const char *sw_term_etype_name(guint8 layer, guint8 etype)
{
	const char *n = iwarp_term_etype_name(layer, etype);

	return n ? n : "Unknown error type";
}

static inline const char *sw_term_error_name(guint8 layer, guint8 etype, guint8 ecode)
{
	const char *n = iwarp_term_ecode_name(layer, etype, ecode);

	return n ? n : "Unknown error code";
}

/*
 * Is this plausibly the start of an RDMAP-over-DDP segment?  Used by the
 * mid-stream resynchronisation: versions must be 1, the opcode known and
 * used with its buffer model and queue, the header complete.
 */
static inline gboolean sw_ddp_rdmap_hdr_plausible(const guint8 *p, guint len)
{
	struct iwarp_rdmap_msg msg;

	if ((p[0] & IWARP_DDP_RSVD_MASK) || (p[1] & IWARP_RDMAP_RSVD_MASK))
		return FALSE;
	return iwarp_rdmap_parse(p, len, &msg) >= 0;
}

/* value_string tables, built from the core's name functions. */
/* value_string tables, filled from the core's name functions at registration. */
extern value_string sw_rdmap_opcode_vals[];
extern value_string sw_term_layer_vals[];
extern value_string sw_atomic_op_vals[];
void sw_fill_value_strings(void);

#endif
