/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * iwarp/markers.h - MPA marker arithmetic (RFC 5044, FPDU format: marker
 * format and placement).
 *
 * When markers were negotiated for a direction, the sender puts a 4-octet
 * marker into its TCP stream immediately before the first FPDU of Full
 * Operation phase and then every 512 octets of TCP sequence space (the
 * period counts the marker itself, so 508 payload octets lie between two
 * markers):
 *
 *   +-------------------------------+-------------------------------+
 *   |          Reserved (0)         |            FPDUPTR            |
 *   +-------------------------------+-------------------------------+
 *
 * FPDUPTR is the backwards distance in octets from the marker's first
 * octet to the first octet of the FPDU the marker sits in.  A marker
 * that falls exactly where an FPDU begins belongs to that FPDU and has
 * FPDUPTR 0 (the FPDU's ULPDU_LENGTH then follows the marker).  A marker
 * that falls right after an FPDU's CRC therefore belongs to the next one.
 *
 * Markers may fall anywhere in an FPDU on a 4-octet boundary: before or
 * inside the ULPDU_LENGTH + DDP header words, in the payload, in front of
 * the CRC.  ULPDU_LENGTH and pad ignore markers; the FPDU on the wire is
 * iwarp_fpdu_len() + 4 * number of markers.  The CRC covers the FPDU as it
 * appears on the wire up to the CRC field, markers included.
 *
 * All positions are 32-bit TCP sequence numbers; arithmetic is modulo 2^32
 * so a stream that wraps is handled.  "base" is the sequence number of the
 * first FPDU (where the first marker is), "fpdu_start" that of the FPDU
 * in question.
 */
#ifndef IWARP_MARKERS_H
#define IWARP_MARKERS_H

#include "types.h"
#include "crc32c.h"
#include "mpa.h"

#define IWARP_MPA_MARKER_PERIOD 512
#define IWARP_MPA_MARKER_LEN 4
#define IWARP_MPA_MARKER_PTR_MAX 0xffff
/* The two halves of a marker: Reserved, then FPDUPTR. */
#define IWARP_MPA_MARKER_RSVD_LEN 2
#define IWARP_MPA_MARKER_PTR_OFF 2
#define IWARP_MPA_MARKER_PTR_LEN 2
/* Receivers treat the two low bits of FPDUPTR as zero. */
#define IWARP_MPA_MARKER_PTR_IGNORED 0x3U

/* Wire offset (from fpdu_start) of the first marker at or after it. */
static inline uint32_t iwarp_marker_first_offset(uint32_t base,
						 uint32_t fpdu_start)
{
	uint32_t into_period = (fpdu_start - base) &
			       (IWARP_MPA_MARKER_PERIOD - 1);

	return (IWARP_MPA_MARKER_PERIOD - into_period) &
	       (IWARP_MPA_MARKER_PERIOD - 1);
}

/* Write a marker whose FPDUPTR is fpduptr, its own offset in its FPDU. */
static inline void iwarp_marker_put(uint8_t *p, uint16_t fpduptr)
{
	iwarp_put_be16(p, 0);
	iwarp_put_be16(p + IWARP_MPA_MARKER_PTR_OFF, fpduptr);
}

/*
 * Number of markers inside an FPDU starting at fpdu_start whose unmarked
 * length (iwarp_fpdu_len()) is unmarked_len.  A marker at wire offset m,
 * preceded by k markers of this FPDU, sits in the FPDU iff some FPDU octet
 * still follows it, i.e. m - 4k < unmarked_len.
 */
static inline uint32_t iwarp_markers_in_fpdu(uint32_t base,
					     uint32_t fpdu_start,
					     uint32_t unmarked_len)
{
	uint32_t m = iwarp_marker_first_offset(base, fpdu_start);
	uint32_t n = 0;

	while (m - IWARP_MPA_MARKER_LEN * n < unmarked_len) {
		n++;
		m += IWARP_MPA_MARKER_PERIOD;
	}
	return n;
}

/* Length on the wire of that FPDU. */
static inline uint32_t iwarp_fpdu_marked_len(uint32_t base,
					     uint32_t fpdu_start,
					     uint32_t unmarked_len)
{
	return unmarked_len + IWARP_MPA_MARKER_LEN *
		iwarp_markers_in_fpdu(base, fpdu_start, unmarked_len);
}

/*
 * Fill offsets[] with the wire offsets (from fpdu_start) of the markers of
 * that FPDU, at most max of them.  Returns the total number of markers
 * (which may exceed max; only max are stored).
 */
static inline uint32_t iwarp_marker_offsets(uint32_t base, uint32_t fpdu_start,
					    uint32_t unmarked_len,
					    uint32_t *offsets, size_t max)
{
	uint32_t m = iwarp_marker_first_offset(base, fpdu_start);
	uint32_t n = 0;

	while (m - IWARP_MPA_MARKER_LEN * n < unmarked_len) {
		if (n < max)
			offsets[n] = m;
		n++;
		m += IWARP_MPA_MARKER_PERIOD;
	}
	return n;
}

/*
 * Insert markers into an unmarked FPDU (as built by iwarp_fpdu_encode(),
 * CRC field included) that will start at fpdu_start.  If crc is true the
 * CRC field is recomputed over the marked bytes; otherwise it is copied.
 * Returns the marked length, or IWARP_ERR_NOSPACE, IWARP_ERR_TOO_LONG (a
 * marker would lie more than 65535 octets into the FPDU), IWARP_ERR_INVAL
 * (fpdu_len < 6 or not a multiple of 4, or fpdu_start not 4-aligned
 * relative to base - FPDUs are multiples of 4, so real ones always are).
 * fpdu and out must not overlap.
 */
static inline int iwarp_markers_insert(uint32_t base, uint32_t fpdu_start,
				       const uint8_t *fpdu, size_t fpdu_len,
				       bool crc, uint8_t *out, size_t cap)
{
	uint32_t m = iwarp_marker_first_offset(base, fpdu_start);
	uint32_t w = 0, total;
	size_t c;

	if (fpdu_len < IWARP_MPA_ULPDU_LEN_FIELD + IWARP_MPA_CRC_FIELD ||
	    (fpdu_len & 3) || fpdu_len > 0x7fffffff ||
	    ((fpdu_start - base) & 3))
		return IWARP_ERR_INVAL;
	total = iwarp_fpdu_marked_len(base, fpdu_start, (uint32_t)fpdu_len);
	if (cap < total)
		return IWARP_ERR_NOSPACE;
	for (c = 0; c < fpdu_len; c++) {
		if (w == m) {
			if (w > IWARP_MPA_MARKER_PTR_MAX)
				return IWARP_ERR_TOO_LONG;
			iwarp_marker_put(out + w, (uint16_t)w);
			w += IWARP_MPA_MARKER_LEN;
			m += IWARP_MPA_MARKER_PERIOD;
		}
		out[w++] = fpdu[c];
	}
	if (crc)
		iwarp_crc32c_put(out + total - IWARP_MPA_CRC_FIELD,
				 iwarp_crc32c(out, total - IWARP_MPA_CRC_FIELD));
	return (int)total;
}

/* Result of stripping one marked FPDU. */
struct iwarp_marked_fpdu {
	uint32_t wire_len;	/* octets consumed from the stream */
	uint32_t unmarked_len;	/* octets written to out */
	uint32_t markers;	/* markers removed */
	uint32_t crc_calc;	/* CRC32c over wire bytes before CRC field */
	uint32_t crc_wire;	/* CRC field */
	bool crc_ok;
};

/*
 * Take one marked FPDU starting at fpdu_start from wire[0..wire_len),
 * check and remove its markers, and write the unmarked FPDU (ULPDU_LENGTH,
 * ULPDU, pad, CRC field) to out.  The FPDU's extent comes from its own
 * ULPDU_LENGTH, which may itself follow a marker.  Returns the unmarked
 * length, or:
 *   IWARP_ERR_TRUNCATED  the FPDU continues past wire_len
 *   IWARP_ERR_MARKER     a marker's FPDUPTR is not its offset in the FPDU
 *   IWARP_ERR_NOSPACE    out too small
 *   IWARP_ERR_INVAL      fpdu_start not 4-aligned relative to base
 * CRC mismatches are only reported in info->crc_ok.
 * The reserved half of a marker is ignored, as are the two low bits of
 * FPDUPTR (RFC 5044 marker format: receivers treat them as zero).
 */
static inline int iwarp_markers_strip(uint32_t base, uint32_t fpdu_start,
				      const uint8_t *wire, size_t wire_len,
				      uint8_t *out, size_t cap,
				      struct iwarp_marked_fpdu *info)
{
	uint32_t m = iwarp_marker_first_offset(base, fpdu_start);
	uint32_t need = IWARP_MPA_ULPDU_LEN_FIELD; /* until length known */
	uint32_t crc = IWARP_CRC32C_INIT;
	size_t w = 0;
	uint32_t c = 0;
	uint16_t ptr;

	info->wire_len = 0;
	info->unmarked_len = 0;
	info->markers = 0;
	info->crc_calc = 0;
	info->crc_wire = 0;
	info->crc_ok = false;
	if ((fpdu_start - base) & 3)
		return IWARP_ERR_INVAL;
	while (c < need) {
		if (w == m) {
			if (wire_len - w < IWARP_MPA_MARKER_LEN)
				return IWARP_ERR_TRUNCATED;
			ptr = iwarp_get_be16(wire + w +
					     IWARP_MPA_MARKER_PTR_OFF);
			if ((uint32_t)(ptr & ~IWARP_MPA_MARKER_PTR_IGNORED) != w)
				return IWARP_ERR_MARKER;
			/* Markers before the CRC field are CRC-covered. */
			crc = iwarp_crc32c_update(crc, wire + w,
						  IWARP_MPA_MARKER_LEN);
			w += IWARP_MPA_MARKER_LEN;
			m += IWARP_MPA_MARKER_PERIOD;
			info->markers++;
			continue;
		}
		if (w >= wire_len)
			return IWARP_ERR_TRUNCATED;
		if (c >= cap)
			return IWARP_ERR_NOSPACE;
		out[c] = wire[w];
		if (need == IWARP_MPA_ULPDU_LEN_FIELD ||
		    c < need - IWARP_MPA_CRC_FIELD)
			crc = iwarp_crc32c_update(crc, wire + w, 1);
		c++;
		w++;
		if (c == IWARP_MPA_ULPDU_LEN_FIELD &&
		    need == IWARP_MPA_ULPDU_LEN_FIELD)
			need = iwarp_fpdu_len(iwarp_get_be16(out));
	}
	info->wire_len = (uint32_t)w;
	info->unmarked_len = c;
	info->crc_calc = iwarp_crc32c_final(crc);
	info->crc_wire = iwarp_crc32c_get(out + c - IWARP_MPA_CRC_FIELD);
	info->crc_ok = info->crc_calc == info->crc_wire;
	return (int)c;
}

#endif /* IWARP_MARKERS_H */
