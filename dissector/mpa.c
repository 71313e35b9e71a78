// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * MPA (RFC 5044, with the MPA revision 2 extensions of RFC 6581) for the
 * swiwarp Wireshark plugin.
 *
 * Connections are found three ways:
 *   - a TCP heuristic that recognises the MPA Request/Reply keys and binds
 *     the conversation to this dissector;
 *   - the same heuristic picking up a stream without handshake when an FPDU
 *     at the start of a segment passes the length, DDP header and CRC32c
 *     checks (or the marker back-pointer checks when markers are in use);
 *   - a "tcp.port" preference (and Decode As) for streams without CRC that
 *     the heuristic will not claim.
 * FPDUs are framed with tcp_dissect_pdus, markers are removed before the
 * ULPDU goes to DDP, and the CRC32c is verified with proto_tree_add_checksum.
 */
#include <wireshark.h>
#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/expert.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/addr_resolv.h>
#include <epan/to_str.h>
#include <epan/dissectors/packet-tcp.h>
#include <epan/ipproto.h>

#include <iwarp/crc32c.h>
#include <iwarp/mpa.h>
#include <iwarp/markers.h>
#include <iwarp/ddp.h>
#include <iwarp/rdmap.h>

#include "plugin.h"

static int proto_mpa = -1;

static int hf_mpa_req = -1;
static int hf_mpa_rep = -1;
static int hf_mpa_key = -1;
static int hf_mpa_flags = -1;
static int hf_mpa_flag_m = -1;
static int hf_mpa_flag_c = -1;
static int hf_mpa_flag_r = -1;
static int hf_mpa_flag_h = -1;
static int hf_mpa_flag_res = -1;
static int hf_mpa_rev = -1;
static int hf_mpa_pd_len = -1;
static int hf_mpa_pd = -1;
static int hf_mpa_ird_word = -1;
static int hf_mpa_ord_word = -1;
static int hf_mpa_p2p = -1;
static int hf_mpa_rtr_send = -1;
static int hf_mpa_ird = -1;
static int hf_mpa_rtr_write = -1;
static int hf_mpa_rtr_read = -1;
static int hf_mpa_ord = -1;
static int hf_mpa_ulp_pd = -1;
static int hf_mpa_fpdu = -1;
static int hf_mpa_ulpdu_len = -1;
static int hf_mpa_pad = -1;
static int hf_mpa_crc = -1;
static int hf_mpa_crc_status = -1;
static int hf_mpa_marker = -1;
static int hf_mpa_marker_res = -1;
static int hf_mpa_marker_fpduptr = -1;
static int hf_mpa_marker_pos = -1;
static int hf_mpa_conn = -1;
static int hf_mpa_dir = -1;
static int hf_mpa_resync = -1;
static int hf_mpa_stream_data = -1;
static int hf_mpa_req_frame = -1;

static gint ett_mpa = -1;
static gint ett_mpa_flags = -1;
static gint ett_mpa_v2 = -1;
static gint ett_mpa_fpdu = -1;
static gint ett_mpa_marker = -1;

static expert_field ei_mpa_bad_crc = EI_INIT;
static expert_field ei_mpa_bad_rev = EI_INIT;
static expert_field ei_mpa_res_set = EI_INIT;
static expert_field ei_mpa_reject = EI_INIT;
static expert_field ei_mpa_pd_too_long = EI_INIT;
static expert_field ei_mpa_v2_no_pd = EI_INIT;
static expert_field ei_mpa_marker_ptr = EI_INIT;
static expert_field ei_mpa_marker_res = EI_INIT;
static expert_field ei_mpa_resync = EI_INIT;
static expert_field ei_mpa_unsynced = EI_INIT;
static expert_field ei_mpa_short_ulpdu = EI_INIT;
static expert_field ei_mpa_pad = EI_INIT;

static dissector_handle_t mpa_handle;
static dissector_handle_t rddp_handle;
static dissector_table_t guard_next;	/* holds "ip.proto" 6 as it was before the guard */

/* Preferences. */
static gboolean pref_verify_crc = TRUE;
static gboolean pref_midstream_heur = TRUE;
static gint pref_port_crc = 0;	/* 0 auto, 1 on, 2 off */
static gboolean pref_desegment = TRUE;
static gboolean pref_any_port = TRUE;

static const enum_val_t port_crc_vals[] = {
	{ "auto", "Detect from the first FPDU", 0 },
	{ "on", "CRC present", 1 },
	{ "off", "CRC not used", 2 },
	{ NULL, NULL, 0 }
};

/* Per direction of an MPA connection. */
struct mpa_dir_state {
	gboolean markers;	/* markers are inserted in this direction */
	gboolean start_known;	/* start_seq holds the first FPDU's sequence */
	guint32 start_seq;	/* marker origin: TCP seq of the first FPDU */
	guint32 sync_frame;	/* first frame decoded as FPDUs (0: not yet) */
	guint32 sync_seq;	/* sequence number FPDU decoding starts at */
	gboolean resynced;	/* sync found by mid-stream resynchronisation */
	guint32 markers_frame;	/* markers known from this frame on (0: always) */
	gboolean sent_frame;	/* Request or Reply seen from this side */
	guint32 frame_seq;	/* sequence of the Request/Reply from this side */
	guint32 frame_end;	/* sequence right after it */
};

struct mpa_conv {
	guint32 id;
	address addr[2];	/* addr[0]/port[0]: side that sends direction 0 */
	guint32 port[2];
	gboolean handshake;	/* Request seen: dir 0 is the initiator */
	gboolean crc;		/* CRC in use on both directions */
	gboolean crc_known;
	guint8 rev;
	gboolean enhanced[2];
	gboolean rejected;
	guint32 req_frame, rep_frame;
	struct mpa_dir_state d[2];
	void *ulp_state;
	void *ulp_conv;
	const guint8 *req_pd;	/* ULP private data of the Request */
	guint req_pd_len;
	const char *label;
};

static guint32 mpa_conn_count;

/* Context handed through tcp_dissect_pdus. */
struct fpdu_ctx {
	struct mpa_conv *mc;
	int dir;
	guint32 base_seq;	/* sequence number of offset 0 of the tvb */
	guint32 pdu_seq;	/* set by fpdu_len() for the PDU about to be dissected */
};

static int mpa_dir(const struct mpa_conv *mc, const packet_info *pinfo)
{
	if (addresses_equal(&pinfo->src, &mc->addr[0]) && pinfo->srcport == mc->port[0])
		return 0;
	return 1;
}

static struct mpa_conv *mpa_conv_new(conversation_t *conv, packet_info *pinfo)
{
	struct mpa_conv *mc = wmem_new0(wmem_file_scope(), struct mpa_conv);

	mc->id = ++mpa_conn_count;
	copy_address_wmem(wmem_file_scope(), &mc->addr[0], &pinfo->src);
	copy_address_wmem(wmem_file_scope(), &mc->addr[1], &pinfo->dst);
	mc->port[0] = pinfo->srcport;
	mc->port[1] = pinfo->destport;
	mc->label = wmem_strdup_printf(wmem_file_scope(), "%s:%u -> %s:%u",
				       address_to_str(pinfo->pool, &pinfo->src), pinfo->srcport,
				       address_to_str(pinfo->pool, &pinfo->dst), pinfo->destport);
	conversation_add_proto_data(conv, proto_mpa, mc);
	conversation_set_dissector(conv, mpa_handle);
	return mc;
}

/* ---- markers ---------------------------------------------------------- */

/* IWARP_MPA_REQUEST or IWARP_MPA_REPLY if an MPA key starts at off, else 0. */
static int mpa_key_kind(tvbuff_t *tvb, int off)
{
	if (tvb_captured_length_remaining(tvb, off) < IWARP_MPA_KEY_LEN)
		return 0;
	return iwarp_mpa_key_kind(tvb_get_ptr(tvb, off, IWARP_MPA_KEY_LEN), IWARP_MPA_KEY_LEN);
}

/*
 * Is this plausibly the start of an RDMAP-over-DDP segment?  Used by the
 * mid-stream resynchronisation: versions must be 1, the opcode known and
 * used with its buffer model and queue, the header complete, the reserved
 * bits clear.
 */
static gboolean ddp_rdmap_hdr_plausible(const guint8 *p, guint len)
{
	struct iwarp_rdmap_msg msg;

	if ((p[IWARP_DDP_CTRL_OFF] & IWARP_DDP_RSVD_MASK) ||
	    (p[IWARP_RDMAP_CTRL_OFF] & IWARP_RDMAP_RSVD_MASK))
		return FALSE;
	return iwarp_rdmap_parse(p, len, &msg) >= 0;
}

/* Frame being dissected: markers found mid-stream apply only from there on. */
static guint32 cur_frame;

static gboolean markers_on(const struct mpa_dir_state *ds)
{
	return ds->markers && ds->start_known && cur_frame >= ds->markers_frame;
}

static gboolean marker_at(const struct mpa_dir_state *ds, guint32 seq)
{
	return markers_on(ds) && iwarp_marker_first_offset(ds->start_seq, seq) == 0;
}

/* ---- FPDU framing ------------------------------------------------------ */

/* On-the-wire length of an FPDU starting at seq, markers included. */
static guint fpdu_wire_len(const struct mpa_dir_state *ds, guint32 seq, guint16 ulpdu_len)
{
	guint32 unmarked = iwarp_fpdu_len(ulpdu_len);

	if (!markers_on(ds))
		return unmarked;
	return iwarp_fpdu_marked_len(ds->start_seq, seq, unmarked);
}

static guint fpdu_len(packet_info *pinfo, tvbuff_t *tvb, int offset, void *data)
{
	struct fpdu_ctx *cx = (struct fpdu_ctx *)data;
	struct mpa_dir_state *ds = &cx->mc->d[cx->dir];
	guint32 seq = cx->base_seq + (guint32)offset;
	int hdr = offset;
	guint16 ulpdu_len;

	cx->pdu_seq = seq;
	if (marker_at(ds, seq))
		hdr += IWARP_MPA_MARKER_LEN;
	if (tvb_captured_length_remaining(tvb, hdr) < IWARP_MPA_ULPDU_LEN_FIELD) {
		if (pinfo->can_desegment && pref_desegment)
			return 0;
		return tvb_reported_length_remaining(tvb, offset);
	}
	ulpdu_len = tvb_get_ntohs(tvb, hdr);
	return fpdu_wire_len(ds, seq, ulpdu_len);
}

/*
 * Copy an FPDU without its markers.  Adds the marker items to `tree' and
 * returns the marker-free tvb (or the original one if there are none).
 */
static tvbuff_t *strip_markers(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			       struct fpdu_ctx *cx, guint *nmarkers)
{
	struct mpa_dir_state *ds = &cx->mc->d[cx->dir];
	guint len = tvb_captured_length(tvb);
	guint32 seq = cx->pdu_seq;
	guint32 offs[IWARP_MPA_MAX_ULPDU / IWARP_MPA_MARKER_PERIOD + 2];
	guint32 n, i, unmarked;
	guint8 *buf;
	guint in = 0, out = 0;
	tvbuff_t *clean;

	*nmarkers = 0;
	if (!markers_on(ds) || len < IWARP_MPA_ULPDU_LEN_FIELD + IWARP_MPA_CRC_FIELD)
		return tvb;
	unmarked =
		iwarp_fpdu_len(tvb_get_ntohs(tvb, marker_at(ds, seq) ? IWARP_MPA_MARKER_LEN : 0));
	n = iwarp_marker_offsets(ds->start_seq, seq, unmarked, offs, G_N_ELEMENTS(offs));
	/* Never trust more markers than the wire bytes can hold. */
	for (i = 0; i < n && i < G_N_ELEMENTS(offs); i++)
		if (offs[i] + IWARP_MPA_MARKER_LEN > len)
			break;
	n = i;
	*nmarkers = n;
	if (!n)
		return tvb;
	buf = (guint8 *)wmem_alloc(pinfo->pool, len - IWARP_MPA_MARKER_LEN * n);
	for (i = 0; i < n; i++) {
		guint32 pos = offs[i];
		proto_item *mi, *pi;
		proto_tree *mt;
		guint16 res, ptr;

		if (pos > in) {
			tvb_memcpy(tvb, buf + out, in, pos - in);
			out += pos - in;
		}
		mi = proto_tree_add_item(tree, hf_mpa_marker, tvb, pos, IWARP_MPA_MARKER_LEN,
					 ENC_NA);
		mt = proto_item_add_subtree(mi, ett_mpa_marker);
		res = tvb_get_ntohs(tvb, pos);
		ptr = tvb_get_ntohs(tvb, pos + IWARP_MPA_MARKER_PTR_OFF);
		pi = proto_tree_add_item(mt, hf_mpa_marker_res, tvb, pos, IWARP_MPA_MARKER_RSVD_LEN,
					 ENC_BIG_ENDIAN);
		if (res)
			expert_add_info(pinfo, pi, &ei_mpa_marker_res);
		pi = proto_tree_add_item(mt, hf_mpa_marker_fpduptr, tvb,
					 pos + IWARP_MPA_MARKER_PTR_OFF, IWARP_MPA_MARKER_PTR_LEN,
					 ENC_BIG_ENDIAN);
		/* FPDUPTR: distance back to the first octet of this FPDU. */
		if ((guint32)(ptr & ~IWARP_MPA_MARKER_PTR_IGNORED) != pos)
			expert_add_info_format(pinfo, pi, &ei_mpa_marker_ptr,
					       "FPDUPTR is %u, the FPDU starts %u bytes back",
					       ptr, pos);
		proto_item_set_generated(proto_tree_add_uint(
			mt, hf_mpa_marker_pos, tvb, pos, IWARP_MPA_MARKER_LEN,
			seq + pos - ds->start_seq));
		proto_item_append_text(mi, " (stream offset %u, FPDUPTR %u)",
				       seq + pos - ds->start_seq, ptr);
		in = pos + IWARP_MPA_MARKER_LEN;
	}
	if (in < len) {
		tvb_memcpy(tvb, buf + out, in, len - in);
		out += len - in;
	}
	clean = tvb_new_child_real_data(tvb, buf, out, out);
	add_new_data_source(pinfo, clean, "FPDU without markers");
	return clean;
}

/* CRC32c over the FPDU as sent (markers included), CRC field excluded. */
static guint32 fpdu_crc(tvbuff_t *tvb, guint start, guint len)
{
	const guint8 *p = tvb_get_ptr(tvb, start, len);

	return iwarp_crc32c(p, len);
}

/*
 * The first MPA item of a frame replaces TCP's Info text (flags, Seq, Ack)
 * with ours; later FPDUs of the same frame append to it.
 */
static void first_in_frame(packet_info *pinfo)
{
	if (p_get_proto_data(pinfo->pool, pinfo, proto_mpa, 0))
		return;
	p_add_proto_data(pinfo->pool, pinfo, proto_mpa, 0, GUINT_TO_POINTER(1));
	col_clear(pinfo->cinfo, COL_INFO);
}

static int dissect_fpdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
	struct fpdu_ctx *cx = (struct fpdu_ctx *)data;
	struct mpa_conv *mc = cx->mc;
	struct mpa_dir_state *ds = &mc->d[cx->dir];
	guint wire_len = tvb_reported_length(tvb);
	proto_item *ti, *li;
	proto_tree *ft;
	tvbuff_t *clean, *ulpdu;
	guint nmarkers, clean_len, crc_off, crc_start;
	guint16 ulpdu_len;
	guint8 pad;
	struct swiwarp_ulpdu_info ui;

	col_set_str(pinfo->cinfo, COL_PROTOCOL, "iWARP");
	first_in_frame(pinfo);
	ti = proto_tree_add_item(tree, proto_mpa, tvb, 0, -1, ENC_NA);
	ft = proto_item_add_subtree(ti, ett_mpa);
	proto_item_append_text(ti, ", FPDU");
	proto_item_set_generated(proto_tree_add_uint(ft, hf_mpa_conn, tvb, 0, 0, mc->id));
	proto_item_set_generated(proto_tree_add_uint(ft, hf_mpa_dir, tvb, 0, 0, cx->dir));
	if (ds->resynced && pinfo->num == ds->sync_frame && cx->pdu_seq == ds->sync_seq) {
		proto_item *ri = proto_tree_add_boolean(ft, hf_mpa_resync, tvb, 0, 0, TRUE);

		proto_item_set_generated(ri);
		expert_add_info(pinfo, ri, &ei_mpa_resync);
	}

	if (tvb_captured_length(tvb) < wire_len) {
		/* Snapped or not reassembled: show what is there. */
		proto_tree_add_item(ft, hf_mpa_stream_data, tvb, 0, -1, ENC_NA);
		return tvb_captured_length(tvb);
	}

	clean = strip_markers(tvb, pinfo, ft, cx, &nmarkers);
	clean_len = tvb_reported_length(clean);
	/* A marker in front of the header belongs to this FPDU's wire span. */
	ulpdu_len = tvb_get_ntohs(clean, 0);
	li = proto_tree_add_item(ft, hf_mpa_fpdu, clean, 0, clean_len, ENC_NA);
	ft = proto_item_add_subtree(li, ett_mpa_fpdu);
	proto_tree_add_item(ft, hf_mpa_ulpdu_len, clean, 0, IWARP_MPA_ULPDU_LEN_FIELD,
			    ENC_BIG_ENDIAN);
	pad = (guint8)iwarp_mpa_pad_len(ulpdu_len);
	if (pad) {
		proto_item *pi = proto_tree_add_item(
			ft, hf_mpa_pad, clean, IWARP_MPA_ULPDU_LEN_FIELD + ulpdu_len, pad, ENC_NA);
		if (tvb_get_guint8(clean, IWARP_MPA_ULPDU_LEN_FIELD + ulpdu_len) != 0 ||
		    (pad > 1 &&
		     tvb_get_guint8(clean, IWARP_MPA_ULPDU_LEN_FIELD + ulpdu_len + 1) != 0) ||
		    (pad > 2 &&
		     tvb_get_guint8(clean, IWARP_MPA_ULPDU_LEN_FIELD + ulpdu_len + 2) != 0))
			expert_add_info(pinfo, pi, &ei_mpa_pad);
	}

	/* The CRC field is the last 4 bytes on the wire (never split by a marker). */
	crc_off = wire_len - IWARP_MPA_CRC_FIELD;
	/* The CRC covers the FPDU as sent, markers (even a leading one) included. */
	crc_start = 0;
	if (mc->crc && pref_verify_crc) {
		proto_tree_add_checksum(ft, tvb, crc_off, hf_mpa_crc, hf_mpa_crc_status,
					&ei_mpa_bad_crc, pinfo,
					fpdu_crc(tvb, crc_start, crc_off - crc_start),
					ENC_LITTLE_ENDIAN, PROTO_CHECKSUM_VERIFY);
	} else {
		proto_tree_add_checksum(ft, tvb, crc_off, hf_mpa_crc, hf_mpa_crc_status,
					&ei_mpa_bad_crc, pinfo, 0, ENC_LITTLE_ENDIAN,
					PROTO_CHECKSUM_NO_FLAGS);
	}

	if (ulpdu_len < IWARP_DDP_MIN_HDR_LEN) {
		expert_add_info(pinfo, li, &ei_mpa_short_ulpdu);
		return wire_len;
	}
	ulpdu = tvb_new_subset_length(clean, IWARP_MPA_ULPDU_LEN_FIELD, ulpdu_len);
	ui.conn_id = mc->id;
	ui.dir = cx->dir;
	ui.ulp_state = &mc->ulp_state;
	ui.conn_label = mc->label;
	ui.from_start = mc->handshake && !mc->d[cx->dir].resynced;
	ui.handshake = mc->handshake;
	ui.addr = mc->addr;
	ui.port = mc->port;
	ui.req_pd = mc->req_pd;
	ui.req_pd_len = mc->req_pd_len;
	ui.ulp_conv = &mc->ulp_conv;
	call_dissector_with_data(rddp_handle, ulpdu, pinfo, tree, &ui);
	return wire_len;
}

/* ---- Request / Reply ---------------------------------------------------- */

static const char *rtr_kind(guint16 ird_word, guint16 ord_word, gboolean *any)
{
	int s = !!(ird_word & IWARP_MPA_V2_IRD_SEND_RTR),
	    w = !!(ord_word & IWARP_MPA_V2_ORD_WRITE_RTR),
	    r = !!(ord_word & IWARP_MPA_V2_ORD_READ_RTR);

	*any = s || w || r;
	if (s + w + r > 1)
		return "several RTR kinds offered";
	if (s)
		return "zero-length Send";
	if (w)
		return "zero-length RDMA Write";
	if (r)
		return "zero-length RDMA Read";
	return "none";
}

/* Returns bytes consumed, 0 if this is not a Request/Reply, -N for more data. */
static int dissect_req_rep(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			   struct mpa_conv *mc, int dir, guint32 seq)
{
	static int *const flag_fields[] = {
		&hf_mpa_flag_m, &hf_mpa_flag_c, &hf_mpa_flag_r, &hf_mpa_flag_h, &hf_mpa_flag_res,
		NULL
	};
	int kind = mpa_key_kind(tvb, 0);
	proto_item *ti, *fi, *ri;
	proto_tree *mt;
	guint8 flags, rev, sw7306;
	guint16 pd_len;
	guint total;
	gboolean is_req = kind == IWARP_MPA_REQUEST;

	if (!kind)
		return 0;
	if (tvb_captured_length(tvb) < IWARP_MPA_RR_HDR_LEN)
		return -(int)(IWARP_MPA_RR_HDR_LEN - tvb_captured_length(tvb));
	flags = tvb_get_guint8(tvb, IWARP_MPA_RR_FLAGS_OFF);
	rev = tvb_get_guint8(tvb, IWARP_MPA_RR_REV_OFF);
	pd_len = tvb_get_ntohs(tvb, IWARP_MPA_RR_PDLEN_OFF);
	total = IWARP_MPA_RR_HDR_LEN + pd_len;
	if (pd_len <= IWARP_MPA_MAX_PDATA && tvb_captured_length(tvb) < total)
		return -(int)(total - tvb_captured_length(tvb));
	if (pd_len > IWARP_MPA_MAX_PDATA)
		total = tvb_captured_length(tvb);

	col_set_str(pinfo->cinfo, COL_PROTOCOL, "MPA");
	first_in_frame(pinfo);
	col_append_sep_str(pinfo->cinfo, COL_INFO, ", ",
			   is_req ? "MPA Request" : (flags & IWARP_MPA_FLAG_R ? "MPA Reply (reject)"
									: "MPA Reply"));
	ti = proto_tree_add_item(tree, proto_mpa, tvb, 0, total, ENC_NA);
	proto_item_append_text(ti, is_req ? ", Request" : ", Reply");
	mt = proto_item_add_subtree(ti, ett_mpa);
	proto_tree_add_boolean(mt, is_req ? hf_mpa_req : hf_mpa_rep, tvb, 0, IWARP_MPA_KEY_LEN,
			       TRUE);
	proto_tree_add_item(mt, hf_mpa_key, tvb, 0, IWARP_MPA_KEY_LEN, ENC_ASCII);
	fi = proto_tree_add_bitmask(mt, tvb, IWARP_MPA_RR_FLAGS_OFF, hf_mpa_flags, ett_mpa_flags,
				    flag_fields, ENC_BIG_ENDIAN);
	ri = proto_tree_add_item(mt, hf_mpa_rev, tvb, IWARP_MPA_RR_REV_OFF, 1, ENC_BIG_ENDIAN);
	if (rev != IWARP_MPA_REV1 && rev != IWARP_MPA_REV2)
		expert_add_info(pinfo, ri, &ei_mpa_bad_rev);
	/*
	 * swiwarp's announcements (include/iwarp/mpa.h) are no warning: RFC
	 * 7306, and FPDUs longer than a segment, which counts only next to it.
	 */
	sw7306 = is_req ? IWARP_MPA_FLAG_RFC7306_REQ : IWARP_MPA_FLAG_RFC7306_REP;
	if (flags & sw7306) {
		proto_item_append_text(fi, " (swiwarp: RFC 7306%s)",
				       flags & IWARP_MPA_FLAG_LARGE_FPDU ? ", large FPDUs" : "");
		sw7306 |= IWARP_MPA_FLAG_LARGE_FPDU;
	}
	if (flags & IWARP_MPA_RES_MASK_V2 & ~sw7306)
		expert_add_info(pinfo, fi, &ei_mpa_res_set);
	if (!is_req && (flags & IWARP_MPA_FLAG_R))
		expert_add_info(pinfo, fi, &ei_mpa_reject);
	if (!is_req) {
		proto_item_set_generated(proto_tree_add_uint(mt, hf_mpa_req_frame, tvb, 0, 0,
							     mc->req_frame));
	}
	ri = proto_tree_add_item(mt, hf_mpa_pd_len, tvb, IWARP_MPA_RR_PDLEN_OFF, 2, ENC_BIG_ENDIAN);
	if (pd_len > IWARP_MPA_MAX_PDATA) {
		expert_add_info(pinfo, ri, &ei_mpa_pd_too_long);
		return total;
	}
	if (pd_len) {
		int off = IWARP_MPA_RR_HDR_LEN;
		proto_tree_add_item(mt, hf_mpa_pd, tvb, off, pd_len, ENC_NA);
		if (rev == IWARP_MPA_REV2 && (flags & IWARP_MPA_FLAG_E) &&
		    pd_len >= IWARP_MPA_V2_WORD_LEN) {
			static int *const ird_fields[] = { &hf_mpa_p2p, &hf_mpa_rtr_send, &hf_mpa_ird,
							   NULL };
			static int *const ord_fields[] = { &hf_mpa_rtr_write, &hf_mpa_rtr_read,
							   &hf_mpa_ord, NULL };
			proto_tree *vt = proto_tree_add_subtree(mt, tvb, off, IWARP_MPA_V2_WORD_LEN,
								ett_mpa_v2, NULL,
								"Enhanced MPA (RFC 6581) parameters");
			guint16 ird_word = tvb_get_ntohs(tvb, off);
			guint16 ord_word = tvb_get_ntohs(tvb, off + 2);
			gboolean any;
			const char *rtr = rtr_kind(ird_word, ord_word, &any);

			proto_tree_add_bitmask(vt, tvb, off, hf_mpa_ird_word, ett_mpa_v2, ird_fields,
					       ENC_BIG_ENDIAN);
			proto_tree_add_bitmask(vt, tvb, off + 2, hf_mpa_ord_word, ett_mpa_v2,
					       ord_fields, ENC_BIG_ENDIAN);
			proto_tree_add_string(vt, hf_mpa_ulp_pd, tvb, off, IWARP_MPA_V2_WORD_LEN,
					      rtr);
			col_append_fstr(pinfo->cinfo, COL_INFO, " rev2 IRD=%u ORD=%u%s%s",
					ird_word & IWARP_MPA_V2_IRD_ORD_MAX,
					ord_word & IWARP_MPA_V2_IRD_ORD_MAX,
					(ird_word & IWARP_MPA_V2_IRD_P2P) ? " P2P" : "",
					any ? " RTR" : "");
		} else if (rev == IWARP_MPA_REV2 && (flags & IWARP_MPA_FLAG_E)) {
			expert_add_info(pinfo, ri, &ei_mpa_v2_no_pd);
		}
	} else if (rev == IWARP_MPA_REV2 && (flags & IWARP_MPA_FLAG_E)) {
		expert_add_info(pinfo, ri, &ei_mpa_v2_no_pd);
	}

	if (!PINFO_FD_VISITED(pinfo)) {
		struct mpa_dir_state *ds = &mc->d[dir];

		ds->sent_frame = TRUE;
		ds->frame_seq = seq;
		ds->frame_end = seq + total;
		/* FPDUs from this side start right after its frame. */
		ds->start_known = TRUE;
		ds->start_seq = seq + total;
		ds->sync_seq = seq + total;
		if (is_req) {
			guint skip = rev == IWARP_MPA_REV2 && (flags & IWARP_MPA_FLAG_E) &&
				     pd_len >= IWARP_MPA_V2_WORD_LEN ? IWARP_MPA_V2_WORD_LEN : 0;

			mc->handshake = TRUE;
			mc->req_frame = pinfo->num;
			mc->rev = rev;
			/* Kept for ULPs that put their connect parameters there
			 * (NVMe-oF: queue id and sizes). */
			if (pd_len > skip) {
				mc->req_pd_len = pd_len - skip;
				mc->req_pd = (const guint8 *)tvb_memdup(
					wmem_file_scope(), tvb, IWARP_MPA_RR_HDR_LEN + skip,
					mc->req_pd_len);
			}
		} else {
			mc->rep_frame = pinfo->num;
			mc->rejected = (flags & IWARP_MPA_FLAG_R) != 0;
			if (rev < mc->rev || !mc->rev)
				mc->rev = rev;
		}
		mc->enhanced[dir] = rev == IWARP_MPA_REV2 && (flags & IWARP_MPA_FLAG_E);
		/* CRC is used when either side asks for it (RFC 5044 7.1.2). */
		if (flags & IWARP_MPA_FLAG_C)
			mc->crc = TRUE;
		mc->crc_known = TRUE;
		/* M declares what this side wants to *receive*. */
		mc->d[!dir].markers = (flags & IWARP_MPA_FLAG_M) != 0;
	}
	return total;
}

/* ---- mid-stream resynchronisation --------------------------------------- */

/*
 * Does an FPDU without markers start at `off'?  Returns 2 if its CRC32c
 * matches, 1 if everything but the CRC checks out and the CRC field is
 * zero (CRC not in use), 0 otherwise.  *len gets its length.
 */
static int fpdu_plausible(tvbuff_t *tvb, int off, guint *len)
{
	guint avail = tvb_captured_length_remaining(tvb, off);
	guint16 ulpdu_len;
	guint total;
	guint32 crc;

	if (avail < IWARP_MPA_ULPDU_LEN_FIELD + IWARP_DDP_MIN_HDR_LEN + IWARP_MPA_CRC_FIELD)
		return 0;
	ulpdu_len = tvb_get_ntohs(tvb, off);
	if (ulpdu_len < IWARP_DDP_MIN_HDR_LEN)
		return 0;
	total = iwarp_fpdu_len(ulpdu_len);
	if (total > avail)
		return 0;
	if (!ddp_rdmap_hdr_plausible(tvb_get_ptr(tvb, off + IWARP_MPA_ULPDU_LEN_FIELD, ulpdu_len),
					ulpdu_len))
		return 0;
	*len = total;
	crc = iwarp_crc32c_get(
		tvb_get_ptr(tvb, off + total - IWARP_MPA_CRC_FIELD, IWARP_MPA_CRC_FIELD));
	if (crc == fpdu_crc(tvb, off, total - IWARP_MPA_CRC_FIELD))
		return 2;
	return crc == 0 ? 1 : 0;
}

/*
 * Look for an FPDU boundary in a segment of an unknown stream.  Every FPDU
 * from the candidate start to the end of the segment must check out, and at
 * least one must carry a matching CRC unless `accept_nocrc'.  Returns the
 * offset or -1; *crc tells whether the CRC matched.
 */
static int resync_plain(tvbuff_t *tvb, gboolean accept_nocrc, gboolean *crc)
{
	guint avail = tvb_captured_length(tvb);
	guint off = 0, len = 0;
	int best = 0, r;

	while (off < avail) {
		r = fpdu_plausible(tvb, off, &len);
		if (!r)
			break;
		if (best == 0 || r < best)
			best = r;
		off += len;
	}
	if (off == 0 || best == 0)
		return -1;
	/* A truncated last FPDU is fine (it continues in the next segment). */
	if (best == 1 && !accept_nocrc)
		return -1;
	*crc = best == 2;
	return 0;
}

/*
 * With markers, an FPDU that starts a segment may contain a marker, which
 * breaks the plain check.  Senders start segments with FPDUs, and a marker
 * at offset o of an FPDU carries FPDUPTR o, so look for a 4-aligned marker
 * pointing back to offset 0 whose FPDU passes the CRC once its markers (one
 * every 512 bytes from that one) are taken out.  Returns 0 and sets the
 * marker origin, or -1.
 */
static int resync_markers(tvbuff_t *tvb, guint32 seq, struct mpa_dir_state *ds)
{
	guint avail = tvb_captured_length(tvb);
	guint o;

	for (o = 0; o + IWARP_MPA_MARKER_LEN <= avail && o < IWARP_MPA_MARKER_PERIOD;
	     o += IWARP_MPA_MARKER_LEN) {
		struct iwarp_marked_fpdu info;
		guint32 ptr;
		guint8 *buf;
		int r;
		gboolean ok;

		if (tvb_get_ntohs(tvb, o) != 0)
			continue;
		ptr = tvb_get_ntohs(tvb, o + IWARP_MPA_MARKER_PTR_OFF) &
		      ~IWARP_MPA_MARKER_PTR_IGNORED;
		if (ptr != o)
			continue;
		buf = (guint8 *)g_malloc(avail);
		r = iwarp_markers_strip(seq + o, seq, tvb_get_ptr(tvb, 0, avail), avail, buf, avail,
					&info);
		ok = r >= (int)(IWARP_MPA_ULPDU_LEN_FIELD + IWARP_DDP_MIN_HDR_LEN +
				IWARP_MPA_CRC_FIELD) &&
		     info.markers > 0 && info.crc_ok &&
		     ddp_rdmap_hdr_plausible(buf + IWARP_MPA_ULPDU_LEN_FIELD, iwarp_get_be16(buf));
		g_free(buf);
		if (ok) {
			ds->markers = TRUE;
			ds->start_known = TRUE;
			ds->start_seq = seq + o;
			return 0;
		}
	}
	return -1;
}

/* ---- top level ------------------------------------------------------------- */

static int dissect_mpa_stream(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			      struct mpa_conv *mc, struct tcpinfo *tcpinfo, gboolean from_port)
{
	int dir = mpa_dir(mc, pinfo);
	struct mpa_dir_state *ds = &mc->d[dir];
	guint32 seq = tcpinfo ? tcpinfo->seq : 0;
	int off = 0, r;
	struct fpdu_ctx *cx;

	cur_frame = pinfo->num;

	/* Handshake frames come first on each side. */
	if (!ds->sync_frame || pinfo->num <= ds->sync_frame) {
		r = dissect_req_rep(tvb, pinfo, tree, mc, dir, seq);
		if (r < 0) {
			if (pinfo->can_desegment && pref_desegment) {
				pinfo->desegment_offset = 0;
				pinfo->desegment_len = (guint32)(-r);
				return -1;
			}
			return 0;
		}
		off = r;
	}
	if (mc->rejected && off == 0 && !PINFO_FD_VISITED(pinfo)) {
		/* After a reject there is no full operation. */
	}
	if (off >= (int)tvb_reported_length(tvb))
		return off;

	/* Where does FPDU decoding start in this direction? */
	if (!PINFO_FD_VISITED(pinfo) && !ds->sync_frame) {
		guint32 here = seq + (guint32)off;
		tvbuff_t *rest = tvb_new_subset_remaining(tvb, off);

		if (ds->sent_frame && here == ds->start_seq) {
			ds->sync_frame = pinfo->num;
			ds->sync_seq = here;
		} else if (!ds->sent_frame && mc->d[!dir].sent_frame && mc->handshake &&
			   !mc->d[dir].start_known) {
			/* Peer's frame seen but not ours (capture started late). */
		}
		if (!ds->sync_frame) {
			gboolean crc = FALSE;
			int s = -1;

			if (ds->markers || !mc->crc_known || pref_port_crc == 0)
				s = resync_markers(rest, here, ds);
			if (s < 0 && !ds->markers) {
				s = resync_plain(rest, from_port || pref_port_crc == 2, &crc);
				if (s >= 0 && !mc->crc_known) {
					mc->crc = from_port && pref_port_crc ? pref_port_crc == 1 : crc;
					mc->crc_known = TRUE;
				}
			} else if (s >= 0 && !mc->crc_known) {
				mc->crc = TRUE;
				mc->crc_known = TRUE;
			}
			if (s >= 0) {
				ds->sync_frame = pinfo->num;
				ds->sync_seq = here + (guint32)s;
				ds->resynced = TRUE;
			}
		}
	}
	if (!ds->sync_frame || pinfo->num < ds->sync_frame) {
		proto_item *ti = proto_tree_add_item(tree, proto_mpa, tvb, off, -1, ENC_NA);
		proto_tree *mt = proto_item_add_subtree(ti, ett_mpa);
		proto_item *di = proto_tree_add_item(mt, hf_mpa_stream_data, tvb, off, -1, ENC_NA);

		expert_add_info(pinfo, di, &ei_mpa_unsynced);
		col_set_str(pinfo->cinfo, COL_PROTOCOL, "MPA");
		col_append_sep_str(pinfo->cinfo, COL_INFO, ", ", "MPA stream data (not in sync)");
		return tvb_captured_length(tvb);
	}
	if (pinfo->num == ds->sync_frame) {
		guint32 skip = ds->sync_seq - (seq + (guint32)off);

		if (skip > (guint32)tvb_reported_length_remaining(tvb, off))
			return tvb_captured_length(tvb);
		if (skip) {
			proto_item *ti = proto_tree_add_item(tree, proto_mpa, tvb, off, skip, ENC_NA);
			proto_tree *mt = proto_item_add_subtree(ti, ett_mpa);

			proto_tree_add_item(mt, hf_mpa_stream_data, tvb, off, skip, ENC_NA);
			off += (int)skip;
		}
	}

	/*
	 * A stream picked up without markers may still carry them: the first
	 * FPDUs can simply have had none inside.  When a segment that should
	 * start with an FPDU fails the plain check but a marker leads back to
	 * its start, markers are on from this frame.
	 */
	if (!PINFO_FD_VISITED(pinfo) && ds->resynced && !ds->markers &&
	    pinfo->num != ds->sync_frame) {
		tvbuff_t *rest = tvb_new_subset_remaining(tvb, off);
		struct mpa_dir_state tmp;
		guint dummy;

		memset(&tmp, 0, sizeof(tmp));
		if (fpdu_plausible(rest, 0, &dummy) != 2 &&
		    resync_markers(rest, seq + (guint32)off, &tmp) == 0) {
			ds->markers = TRUE;
			ds->start_known = TRUE;
			ds->start_seq = tmp.start_seq;
			ds->markers_frame = pinfo->num;
		}
	}

	cx = wmem_new0(pinfo->pool, struct fpdu_ctx);
	cx->mc = mc;
	cx->dir = dir;
	cx->base_seq = seq + (guint32)off;
	tcp_dissect_pdus(tvb_new_subset_remaining(tvb, off), pinfo, tree, pref_desegment,
			 IWARP_MPA_ULPDU_LEN_FIELD, fpdu_len, dissect_fpdu, cx);
	if (pinfo->desegment_len)
		pinfo->desegment_offset += off;
	return tvb_captured_length(tvb);
}

static struct mpa_conv *mpa_conv_get(packet_info *pinfo, conversation_t **convp)
{
	conversation_t *conv = find_or_create_conversation(pinfo);

	*convp = conv;
	return (struct mpa_conv *)conversation_get_proto_data(conv, proto_mpa);
}

/* Bound to conversations and to the tcp.port preference. */
static int dissect_mpa(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
	conversation_t *conv;
	struct mpa_conv *mc = mpa_conv_get(pinfo, &conv);
	int r;

	if (!mc)
		mc = mpa_conv_new(conv, pinfo);
	r = dissect_mpa_stream(tvb, pinfo, tree, mc, (struct tcpinfo *)data, TRUE);
	return r < 0 ? (int)tvb_captured_length(tvb) : r;
}

static gboolean dissect_mpa_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
	struct tcpinfo *tcpinfo = (struct tcpinfo *)data;
	conversation_t *conv;
	struct mpa_conv *mc;

	if (!tcpinfo || tvb_captured_length(tvb) < IWARP_MPA_ULPDU_LEN_FIELD)
		return FALSE;
	mc = mpa_conv_get(pinfo, &conv);
	if (!mc) {
		if (mpa_key_kind(tvb, 0) == IWARP_MPA_REQUEST) {
			mc = mpa_conv_new(conv, pinfo);
		} else if (pref_midstream_heur && !PINFO_FD_VISITED(pinfo)) {
			gboolean crc;
			struct mpa_dir_state tmp;

			memset(&tmp, 0, sizeof(tmp));
			if (resync_plain(tvb, FALSE, &crc) != 0 &&
			    resync_markers(tvb, tcpinfo->seq, &tmp) < 0)
				return FALSE;
			mc = mpa_conv_new(conv, pinfo);
		} else {
			return FALSE;
		}
	}
	dissect_mpa_stream(tvb, pinfo, tree, mc, tcpinfo, FALSE);
	return TRUE;
}

/*
 * MPA start-up on any port.  TCP hands a segment to the dissector bound to
 * its conversation first, then to the dissectors of its ports and only then
 * to heuristics (unless "try heuristic sub-dissectors first" is set), so a
 * stream on a port another dissector owns (4420 NVMe/TCP, 2049 RPC, 3260
 * iSCSI) never reaches mpa_tcp: the port's dissector takes it.  This guard
 * sits in front of TCP in "ip.proto": when a segment's payload starts with
 * an MPA Request or Reply, it binds the TCP conversation to MPA before TCP
 * looks for a subdissector, and the conversation lookup wins.  Every other
 * packet goes to TCP untouched.
 */
static void guard_peek(tvbuff_t *tvb, packet_info *pinfo)
{
	guint caplen = tvb_captured_length(tvb);
	guint hlen, pd_len;
	guint8 flags, rev;
	guint16 sport, dport;
	conversation_t *conv;

	if (caplen < 20)
		return;
	hlen = (guint)(tvb_get_guint8(tvb, 12) >> 4) * 4;
	flags = tvb_get_guint8(tvb, 13);
	/* no SYN (TCP Fast Open data is not an MPA start-up) and no RST */
	if (hlen < 20 || (flags & 0x06))
		return;
	if (caplen < hlen + IWARP_MPA_RR_HDR_LEN || !mpa_key_kind(tvb, (int)hlen))
		return;
	rev = tvb_get_guint8(tvb, hlen + IWARP_MPA_RR_REV_OFF);
	pd_len = tvb_get_ntohs(tvb, hlen + IWARP_MPA_RR_PDLEN_OFF);
	if ((rev != IWARP_MPA_REV1 && rev != IWARP_MPA_REV2) || pd_len > IWARP_MPA_MAX_PDATA)
		return;
	sport = tvb_get_ntohs(tvb, 0);
	dport = tvb_get_ntohs(tvb, 2);
	conv = find_conversation(pinfo->num, &pinfo->src, &pinfo->dst, CONVERSATION_TCP, sport,
				 dport, 0);
	if (!conv)
		conv = conversation_new(pinfo->num, &pinfo->src, &pinfo->dst, CONVERSATION_TCP,
					sport, dport, 0);
	if (conversation_get_dissector(conv, pinfo->num) != mpa_handle)
		conversation_set_dissector_from_frame_number(conv, pinfo->num, mpa_handle);
}

static int dissect_tcp_guard(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
	if (pref_any_port && !PINFO_FD_VISITED(pinfo) &&
	    proto_is_protocol_enabled(find_protocol_by_id(proto_mpa)))
		guard_peek(tvb, pinfo);
	/* IP already added the "tcp" layer when it called the guard (whose
	 * handle belongs to TCP), so TCP is called without adding it again. */
	return dissector_try_uint_new(guard_next, IP_PROTO_TCP, tvb, pinfo, tree, FALSE, data);
}

void swiwarp_register_mpa(void)
{
	static hf_register_info hf[] = {
		{ &hf_mpa_req, { "Request", "mpa.req", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
				 "MPA Request frame", HFILL } },
		{ &hf_mpa_rep, { "Reply", "mpa.rep", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
				 "MPA Reply frame", HFILL } },
		{ &hf_mpa_key, { "Key", "mpa.key", FT_STRING, BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_mpa_flags, { "Flags", "mpa.flags", FT_UINT8, BASE_HEX, NULL, 0x0, NULL,
				   HFILL } },
		{ &hf_mpa_flag_m, { "Markers (M)", "mpa.flags.m", FT_BOOLEAN, 8, NULL,
				    IWARP_MPA_FLAG_M, "Sender wants to receive markers", HFILL } },
		{ &hf_mpa_flag_c, { "CRC (C)", "mpa.flags.c", FT_BOOLEAN, 8, NULL, IWARP_MPA_FLAG_C,
				    "Sender wants CRC32c", HFILL } },
		{ &hf_mpa_flag_r, { "Reject (R)", "mpa.flags.r", FT_BOOLEAN, 8, NULL,
				    IWARP_MPA_FLAG_R, NULL, HFILL } },
		{ &hf_mpa_flag_h, { "Enhanced (H, rev 2)", "mpa.flags.h", FT_BOOLEAN, 8, NULL,
				    IWARP_MPA_FLAG_E, "RFC 6581 enhanced connection establishment",
				    HFILL } },
		{ &hf_mpa_flag_res, { "Reserved", "mpa.flags.res", FT_UINT8, BASE_HEX, NULL,
				      IWARP_MPA_RES_MASK_V2, NULL, HFILL } },
		{ &hf_mpa_rev, { "Revision", "mpa.rev", FT_UINT8, BASE_DEC, NULL, 0x0, NULL,
				 HFILL } },
		{ &hf_mpa_pd_len, { "Private data length", "mpa.pd_len", FT_UINT16, BASE_DEC, NULL,
				    0x0, NULL, HFILL } },
		{ &hf_mpa_pd, { "Private data", "mpa.pd", FT_BYTES, BASE_NONE, NULL, 0x0, NULL,
				HFILL } },
		{ &hf_mpa_ird_word, { "IRD word", "mpa.v2.ird_word", FT_UINT16, BASE_HEX, NULL, 0x0,
				      NULL, HFILL } },
		{ &hf_mpa_ord_word, { "ORD word", "mpa.v2.ord_word", FT_UINT16, BASE_HEX, NULL, 0x0,
				      NULL, HFILL } },
		{ &hf_mpa_p2p, { "Peer-to-peer (A)", "mpa.v2.p2p", FT_BOOLEAN, 16, NULL,
				 IWARP_MPA_V2_IRD_P2P, NULL, HFILL } },
		{ &hf_mpa_rtr_send, { "Zero-length Send RTR (B)", "mpa.v2.rtr_send", FT_BOOLEAN,
				      16, NULL, IWARP_MPA_V2_IRD_SEND_RTR, NULL, HFILL } },
		{ &hf_mpa_ird, { "IRD", "mpa.v2.ird", FT_UINT16, BASE_DEC, NULL,
				 IWARP_MPA_V2_IRD_ORD_MAX, NULL, HFILL } },
		{ &hf_mpa_rtr_write, { "Zero-length Write RTR (C)", "mpa.v2.rtr_write", FT_BOOLEAN,
				       16, NULL, IWARP_MPA_V2_ORD_WRITE_RTR, NULL, HFILL } },
		{ &hf_mpa_rtr_read, { "Zero-length Read RTR (D)", "mpa.v2.rtr_read", FT_BOOLEAN,
				      16, NULL, IWARP_MPA_V2_ORD_READ_RTR, NULL, HFILL } },
		{ &hf_mpa_ord, { "ORD", "mpa.v2.ord", FT_UINT16, BASE_DEC, NULL,
				 IWARP_MPA_V2_IRD_ORD_MAX, NULL, HFILL } },
		{ &hf_mpa_ulp_pd, { "RTR kind", "mpa.v2.rtr", FT_STRING, BASE_NONE, NULL, 0x0,
				    NULL, HFILL } },
		{ &hf_mpa_fpdu, { "FPDU", "mpa.fpdu", FT_NONE, BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_mpa_ulpdu_len, { "ULPDU length", "mpa.ulpdu_len", FT_UINT16, BASE_DEC, NULL,
				       0x0, NULL, HFILL } },
		{ &hf_mpa_pad, { "Pad", "mpa.pad", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_mpa_crc, { "CRC32c", "mpa.crc", FT_UINT32, BASE_HEX, NULL, 0x0, NULL,
				 HFILL } },
		{ &hf_mpa_crc_status, { "CRC status", "mpa.crc.status", FT_UINT8, BASE_NONE,
					VALS(proto_checksum_vals), 0x0, NULL, HFILL } },
		{ &hf_mpa_marker, { "Marker", "mpa.marker", FT_NONE, BASE_NONE, NULL, 0x0, NULL,
				    HFILL } },
		{ &hf_mpa_marker_res, { "Reserved", "mpa.marker.res", FT_UINT16, BASE_HEX, NULL,
					0x0, NULL, HFILL } },
		{ &hf_mpa_marker_fpduptr, { "FPDUPTR", "mpa.marker.fpduptr", FT_UINT16, BASE_DEC,
					    NULL, 0x0, "Bytes back to the FPDU header", HFILL } },
		{ &hf_mpa_marker_pos, { "Stream offset", "mpa.marker.stream_offset", FT_UINT32,
					BASE_DEC, NULL, 0x0,
					"TCP sequence offset of the marker from the first FPDU",
					HFILL } },
		{ &hf_mpa_conn, { "Connection", "mpa.conn", FT_UINT32, BASE_DEC, NULL, 0x0, NULL,
				  HFILL } },
		{ &hf_mpa_dir, { "Direction", "mpa.dir", FT_UINT8, BASE_DEC, NULL, 0x0,
				 "0: from the initiator (or the side seen first)", HFILL } },
		{ &hf_mpa_resync, { "Picked up mid-stream", "mpa.resync", FT_BOOLEAN, BASE_NONE,
				    NULL, 0x0, NULL, HFILL } },
		{ &hf_mpa_stream_data, { "Stream data", "mpa.stream_data", FT_BYTES, BASE_NONE,
					 NULL, 0x0, NULL, HFILL } },
		{ &hf_mpa_req_frame, { "Request in", "mpa.req_frame", FT_FRAMENUM, BASE_NONE,
				       FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0x0, NULL, HFILL } },
	};
	static gint *ett[] = { &ett_mpa, &ett_mpa_flags, &ett_mpa_v2, &ett_mpa_fpdu,
			       &ett_mpa_marker };
	static ei_register_info ei[] = {
		{ &ei_mpa_bad_crc, { "mpa.crc.bad", PI_CHECKSUM, PI_ERROR, "Bad MPA CRC32c",
				     EXPFILL } },
		{ &ei_mpa_bad_rev, { "mpa.rev.unknown", PI_PROTOCOL, PI_WARN,
				     "MPA revision is neither 1 nor 2", EXPFILL } },
		{ &ei_mpa_res_set, { "mpa.flags.res_set", PI_PROTOCOL, PI_WARN,
				     "Reserved MPA flag bits are set", EXPFILL } },
		{ &ei_mpa_reject, { "mpa.reject", PI_RESPONSE_CODE, PI_NOTE,
				    "Connection rejected by the responder", EXPFILL } },
		{ &ei_mpa_pd_too_long, { "mpa.pd_len.too_long", PI_MALFORMED, PI_ERROR,
					 "Private data longer than 512 bytes", EXPFILL } },
		{ &ei_mpa_v2_no_pd, { "mpa.v2.no_ird_ord", PI_MALFORMED, PI_ERROR,
				      "Enhanced MPA frame without IRD/ORD private data", EXPFILL } },
		{ &ei_mpa_marker_ptr, { "mpa.marker.bad_fpduptr", PI_PROTOCOL, PI_WARN,
					"Marker does not point at the FPDU header", EXPFILL } },
		{ &ei_mpa_marker_res, { "mpa.marker.res_set", PI_PROTOCOL, PI_WARN,
					"Marker reserved field is not zero", EXPFILL } },
		{ &ei_mpa_resync, { "mpa.resync.found", PI_SEQUENCE, PI_NOTE,
				    "FPDU boundary found without the MPA handshake", EXPFILL } },
		{ &ei_mpa_unsynced, { "mpa.resync.none", PI_SEQUENCE, PI_NOTE,
				      "No FPDU boundary known yet in this direction", EXPFILL } },
		{ &ei_mpa_short_ulpdu, { "mpa.ulpdu_len.short", PI_MALFORMED, PI_ERROR,
					 "ULPDU shorter than a DDP header", EXPFILL } },
		{ &ei_mpa_pad, { "mpa.pad.nonzero", PI_PROTOCOL, PI_WARN, "Pad bytes are not zero",
				 EXPFILL } },
	};
	module_t *m;
	expert_module_t *em;

	proto_mpa = proto_register_protocol("iWARP MPA (swiwarp)", "MPA", "mpa");
	proto_register_field_array(proto_mpa, hf, array_length(hf));
	proto_register_subtree_array(ett, array_length(ett));
	em = expert_register_protocol(proto_mpa);
	expert_register_field_array(em, ei, array_length(ei));

	mpa_handle = register_dissector("mpa", dissect_mpa, proto_mpa);
	guard_next = register_dissector_table("mpa.guard_next", "TCP behind the MPA start-up guard",
					      proto_mpa, FT_UINT8, BASE_DEC);

	m = prefs_register_protocol(proto_mpa, NULL);
	prefs_register_bool_preference(m, "verify_crc", "Verify CRC32c",
				       "Check the CRC32c of every FPDU when CRC is in use", &pref_verify_crc);
	prefs_register_bool_preference(m, "midstream_heuristic", "Pick up streams without handshake",
				       "Let the TCP heuristic claim streams whose MPA handshake is not "
				       "in the capture, when an FPDU with a matching CRC32c starts a "
				       "segment", &pref_midstream_heur);
	prefs_register_enum_preference(m, "port_crc", "CRC on port-matched streams",
				       "Whether FPDUs carry a CRC on streams matched by port without "
				       "handshake", &pref_port_crc, port_crc_vals, FALSE);
	prefs_register_bool_preference(m, "desegment", "Reassemble FPDUs spanning TCP segments",
				       "Requires TCP's \"Allow subdissector to reassemble TCP streams\"",
				       &pref_desegment);
	prefs_register_bool_preference(m, "any_port", "Recognise MPA start-up on any TCP port",
				       "Bind a TCP stream to MPA when it starts with an MPA Request or "
				       "Reply, also on ports another dissector owns (NVMe/TCP 4420, "
				       "NFS, iSCSI 3260); takes effect for streams not yet seen",
				       &pref_any_port);
}

void swiwarp_handoff_mpa(void)
{
	dissector_handle_t tcp_handle;
	int proto_tcp;

	rddp_handle = find_dissector_add_dependency("rddp", proto_mpa);
	heur_dissector_add("tcp", dissect_mpa_heur, "iWARP MPA (swiwarp)", "mpa_tcp", proto_mpa,
			   HEURISTIC_ENABLE);
	dissector_add_uint_range_with_preference("tcp.port", "", mpa_handle);

	/* The start-up guard in front of TCP (see guard_peek).  Its handle
	 * belongs to TCP, so it is on and off with TCP, and disabling MPA
	 * never disables TCP: the guard then only passes packets on. */
	tcp_handle = dissector_get_uint_handle(find_dissector_table("ip.proto"), IP_PROTO_TCP);
	proto_tcp = proto_get_id_by_filter_name("tcp");
	if (tcp_handle && proto_tcp >= 0) {
		dissector_add_uint("mpa.guard_next", IP_PROTO_TCP, tcp_handle);
		dissector_add_uint("ip.proto", IP_PROTO_TCP,
				   create_dissector_handle_with_name_and_description(
					   dissect_tcp_guard, proto_tcp, "mpa_tcp_guard",
					   "TCP (with swiwarp's MPA start-up detection)"));
	}
}
