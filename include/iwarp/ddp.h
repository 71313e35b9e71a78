/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * iwarp/ddp.h - Direct Data Placement headers (RFC 5041 section 5).
 *
 * A DDP segment is the ULPDU of one MPA FPDU.  Its first octet is the DDP
 * control field, the second belongs to the ULP (RDMAP puts its control
 * octet there, see rdmap.h):
 *
 *   0 1 2 3 4 5 6 7
 *  +-+-+-------+---+
 *  |T|L| Rsvd  | DV|    T: tagged buffer model, L: last segment of the
 *  +-+-+-------+---+       message, Rsvd: 0, DV: DDP version = 1
 *
 * Tagged header, 14 octets (section 5.2):
 *   ctrl(1) RsvdULP(1) STag(4) TO(8)
 * Untagged header, 18 octets (section 5.3):
 *   ctrl(1) RsvdULP(5) QN(4) MSN(4) MO(4)
 *
 * Untagged queues used by RDMAP (RFC 5040 section 5.1, RFC 7306):
 * 0 Send / Immediate Data, 1 RDMA Read Request and Atomic Request (one
 * queue, so both kinds of request keep one order and one MSN sequence),
 * 2 Terminate, 3 Atomic Response.
 */
#ifndef IWARP_DDP_H
#define IWARP_DDP_H

#include "types.h"

#define IWARP_DDP_VERSION 1
#define IWARP_DDP_FLAG_TAGGED 0x80
#define IWARP_DDP_FLAG_LAST 0x40
#define IWARP_DDP_RSVD_MASK 0x3c
#define IWARP_DDP_RSVD_SHIFT 2
#define IWARP_DDP_DV_MASK 0x03

#define IWARP_DDP_TAGGED_HDR_LEN 14
#define IWARP_DDP_UNTAGGED_HDR_LEN 18
/* The shorter (tagged) header: no DDP segment is shorter than this. */
#define IWARP_DDP_MIN_HDR_LEN IWARP_DDP_TAGGED_HDR_LEN
/* Field offsets from the start of the DDP segment. */
#define IWARP_DDP_CTRL_OFF 0
#define IWARP_DDP_RSVDULP_OFF 1
#define IWARP_DDP_STAG_OFF 2	/* tagged */
#define IWARP_DDP_TO_OFF 6	/* tagged */
#define IWARP_DDP_QN_OFF 6	/* untagged */
#define IWARP_DDP_MSN_OFF 10	/* untagged */
#define IWARP_DDP_MO_OFF 14	/* untagged */
/* RsvdULP octets: 1 in the tagged header, 5 in the untagged one. */
#define IWARP_DDP_TAGGED_RSVDULP_LEN 1
#define IWARP_DDP_UNTAGGED_RSVDULP_LEN 5

enum iwarp_ddp_qn {
	IWARP_DDP_QN_SEND = 0,
	IWARP_DDP_QN_READ_REQUEST = 1,
	IWARP_DDP_QN_TERMINATE = 2,
	IWARP_DDP_QN_ATOMIC_REQUEST = 1,  /* RFC 7306: shares queue 1 */
	IWARP_DDP_QN_ATOMIC_RESPONSE = 3  /* RFC 7306 */
};

/* Number of untagged queues RDMAP uses (0..3): size per-queue arrays. */
#define IWARP_DDP_QN_COUNT 4

struct iwarp_ddp_hdr {
	bool tagged;
	bool last;
	uint8_t rsvd;		/* the 4 reserved bits, shifted down */
	uint8_t dv;		/* DDP version */
	/* RsvdULP: [0] is RDMAP's control octet; [1..4] (untagged only)
	 * RDMAP's Invalidate STag or reserved word.
	 */
	uint8_t rsvdulp[IWARP_DDP_UNTAGGED_RSVDULP_LEN];
	/* Tagged buffer model */
	uint32_t stag;
	uint64_t to;
	/* Untagged buffer model */
	uint32_t qn;
	uint32_t msn;
	uint32_t mo;
};

static inline uint32_t iwarp_ddp_hdr_len(bool tagged)
{
	return tagged ? IWARP_DDP_TAGGED_HDR_LEN : IWARP_DDP_UNTAGGED_HDR_LEN;
}

/*
 * Parse the DDP header at the start of a DDP segment.  Returns the header
 * length (14 or 18) or:
 *   IWARP_ERR_TRUNCATED    not enough octets
 *   IWARP_ERR_BAD_VERSION  DV != 1 (out is still filled)
 * The Rsvd bits are reported, not checked (RFC 5041 section 5.1: set to
 * zero on transmit, not checked on receive).
 */
static inline int iwarp_ddp_hdr_parse(const uint8_t *buf, size_t len,
				      struct iwarp_ddp_hdr *out)
{
	uint32_t hlen;
	uint8_t ctrl;
	size_t i;

	out->tagged = false;
	out->last = false;
	out->rsvd = 0;
	out->dv = 0;
	for (i = 0; i < IWARP_DDP_UNTAGGED_RSVDULP_LEN; i++)
		out->rsvdulp[i] = 0;
	out->stag = 0;
	out->to = 0;
	out->qn = 0;
	out->msn = 0;
	out->mo = 0;
	if (len < 1)
		return IWARP_ERR_TRUNCATED;
	ctrl = buf[IWARP_DDP_CTRL_OFF];
	out->tagged = (ctrl & IWARP_DDP_FLAG_TAGGED) != 0;
	out->last = (ctrl & IWARP_DDP_FLAG_LAST) != 0;
	out->rsvd = (uint8_t)((ctrl & IWARP_DDP_RSVD_MASK) >>
			      IWARP_DDP_RSVD_SHIFT);
	out->dv = ctrl & IWARP_DDP_DV_MASK;
	hlen = iwarp_ddp_hdr_len(out->tagged);
	if (len < hlen)
		return IWARP_ERR_TRUNCATED;
	if (out->tagged) {
		out->rsvdulp[0] = buf[IWARP_DDP_RSVDULP_OFF];
		out->stag = iwarp_get_be32(buf + IWARP_DDP_STAG_OFF);
		out->to = iwarp_get_be64(buf + IWARP_DDP_TO_OFF);
	} else {
		for (i = 0; i < IWARP_DDP_UNTAGGED_RSVDULP_LEN; i++)
			out->rsvdulp[i] = buf[IWARP_DDP_RSVDULP_OFF + i];
		out->qn = iwarp_get_be32(buf + IWARP_DDP_QN_OFF);
		out->msn = iwarp_get_be32(buf + IWARP_DDP_MSN_OFF);
		out->mo = iwarp_get_be32(buf + IWARP_DDP_MO_OFF);
	}
	if (out->dv != IWARP_DDP_VERSION)
		return IWARP_ERR_BAD_VERSION;
	return (int)hlen;
}

/*
 * Encode hdr (all fields as given, rsvd and dv masked to their widths) at
 * out.  Returns the header length or IWARP_ERR_NOSPACE.
 */
static inline int iwarp_ddp_hdr_encode(const struct iwarp_ddp_hdr *hdr,
				       uint8_t *out, size_t cap)
{
	uint32_t hlen = iwarp_ddp_hdr_len(hdr->tagged);
	uint8_t ctrl = 0;
	size_t i;

	if (cap < hlen)
		return IWARP_ERR_NOSPACE;
	if (hdr->tagged)
		ctrl |= IWARP_DDP_FLAG_TAGGED;
	if (hdr->last)
		ctrl |= IWARP_DDP_FLAG_LAST;
	ctrl |= (uint8_t)((hdr->rsvd << IWARP_DDP_RSVD_SHIFT) &
			  IWARP_DDP_RSVD_MASK);
	ctrl |= hdr->dv & IWARP_DDP_DV_MASK;
	out[IWARP_DDP_CTRL_OFF] = ctrl;
	if (hdr->tagged) {
		out[IWARP_DDP_RSVDULP_OFF] = hdr->rsvdulp[0];
		iwarp_put_be32(out + IWARP_DDP_STAG_OFF, hdr->stag);
		iwarp_put_be64(out + IWARP_DDP_TO_OFF, hdr->to);
	} else {
		for (i = 0; i < IWARP_DDP_UNTAGGED_RSVDULP_LEN; i++)
			out[IWARP_DDP_RSVDULP_OFF + i] = hdr->rsvdulp[i];
		iwarp_put_be32(out + IWARP_DDP_QN_OFF, hdr->qn);
		iwarp_put_be32(out + IWARP_DDP_MSN_OFF, hdr->msn);
		iwarp_put_be32(out + IWARP_DDP_MO_OFF, hdr->mo);
	}
	return (int)hlen;
}

/* ---- DDP errors reported in a Terminate (RFC 5041 section 7) ------- */

/* Error types (Terminate layer DDP). */
#define IWARP_TERM_DDP_ETYPE_CATASTROPHIC 0x0
#define IWARP_TERM_DDP_ETYPE_TAGGED 0x1
#define IWARP_TERM_DDP_ETYPE_UNTAGGED 0x2
#define IWARP_TERM_DDP_ETYPE_LLP 0x3 /* reserved for use by the LLP */

/* Local catastrophic error: code unspecified, sent as 0. */
#define IWARP_TERM_DDP_CATASTROPHIC 0x00
/* Tagged buffer errors. */
#define IWARP_TERM_DDP_T_INVALID_STAG 0x00
#define IWARP_TERM_DDP_T_BASE_BOUNDS 0x01
#define IWARP_TERM_DDP_T_STAG_NOT_ASSOC 0x02
#define IWARP_TERM_DDP_T_TO_WRAP 0x03
#define IWARP_TERM_DDP_T_VERSION 0x04
/* Untagged buffer errors. */
#define IWARP_TERM_DDP_U_INVALID_QN 0x01
#define IWARP_TERM_DDP_U_MSN_NO_BUFFER 0x02
#define IWARP_TERM_DDP_U_MSN_RANGE 0x03
#define IWARP_TERM_DDP_U_INVALID_MO 0x04
#define IWARP_TERM_DDP_U_TOO_LONG 0x05
#define IWARP_TERM_DDP_U_VERSION 0x06

#endif /* IWARP_DDP_H */
