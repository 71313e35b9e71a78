// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DDP (RFC 5041) and RDMAP (RFC 5040, RFC 7306) for the swiwarp Wireshark
 * plugin: protocols "rddp" and "rdmap".
 *
 * DDP and RDMAP share the first two octets (DDP control, RDMAP control), so
 * one function decodes both and puts the fields into two subtrees.  Message
 * state lives in the MPA conversation (struct swiwarp_ulpdu_info): expected
 * MSN and MO per untagged queue, open tagged messages per STag, outstanding
 * RDMA Read Requests.  It is computed on the first pass and stored per
 * segment, so later passes (and the GUI) show the same results.
 */
#include <wireshark.h>
#include <epan/packet.h>
#include <epan/expert.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/reassemble.h>
#include <epan/tap.h>

#include <iwarp/ddp.h>
#include <iwarp/rdmap.h>

#include "plugin.h"

static int proto_rddp = -1;
static int proto_rdmap = -1;
static int rdmap_tap = -1;

/* DDP */
static int hf_ddp_ctrl = -1;
static int hf_ddp_t = -1;
static int hf_ddp_l = -1;
static int hf_ddp_rsvd = -1;
static int hf_ddp_dv = -1;
static int hf_ddp_rsvdulp = -1;
static int hf_ddp_stag = -1;
static int hf_ddp_to = -1;
static int hf_ddp_qn = -1;
static int hf_ddp_msn = -1;
static int hf_ddp_mo = -1;
static int hf_ddp_payload_len = -1;
static int hf_ddp_msg_first = -1;

/* RDMAP */
static int hf_rdmap_ctrl = -1;
static int hf_rdmap_rv = -1;
static int hf_rdmap_rsv = -1;
static int hf_rdmap_opcode = -1;
static int hf_rdmap_inval_stag = -1;
static int hf_rdmap_sink_stag = -1;
static int hf_rdmap_sink_to = -1;
static int hf_rdmap_rdsz = -1;
static int hf_rdmap_src_stag = -1;
static int hf_rdmap_src_to = -1;
static int hf_rdmap_read_response_in = -1;
static int hf_rdmap_read_request_in = -1;
static int hf_rdmap_read_time = -1;
static int hf_rdmap_read_done_in = -1;
static int hf_rdmap_imm = -1;
static int hf_rdmap_imm_value = -1;
static int hf_rdmap_imm_flags = -1;
static int hf_rdmap_imm_send_follows = -1;
static int hf_rdmap_term_ctrl = -1;
static int hf_rdmap_term_layer = -1;
static int hf_rdmap_term_etype = -1;
static int hf_rdmap_term_ecode = -1;
static int hf_rdmap_term_error = -1;
static int hf_rdmap_term_hdrct = -1;
static int hf_rdmap_term_m = -1;
static int hf_rdmap_term_d = -1;
static int hf_rdmap_term_r = -1;
static int hf_rdmap_term_rsvd = -1;
static int hf_rdmap_term_seglen = -1;
static int hf_rdmap_term_ddp_hdr = -1;
static int hf_rdmap_term_rdma_hdr = -1;
static int hf_rdmap_atomic_op = -1;
static int hf_rdmap_atomic_rsvd = -1;
static int hf_rdmap_atomic_reqid = -1;
static int hf_rdmap_atomic_stag = -1;
static int hf_rdmap_atomic_to = -1;
static int hf_rdmap_atomic_add_swap = -1;
static int hf_rdmap_atomic_add_swap_mask = -1;
static int hf_rdmap_atomic_cmp = -1;
static int hf_rdmap_atomic_cmp_mask = -1;
static int hf_rdmap_atomic_orig_reqid = -1;
static int hf_rdmap_atomic_orig_value = -1;
static int hf_rdmap_stag_writes = -1;
static int hf_rdmap_stag_bytes = -1;
static int hf_rdmap_payload = -1;
static int hf_rdmap_msg_len = -1;

/* Reassembly */
static int hf_msg_fragments = -1;
static int hf_msg_fragment = -1;
static int hf_msg_fragment_overlap = -1;
static int hf_msg_fragment_overlap_conflicts = -1;
static int hf_msg_fragment_multiple_tails = -1;
static int hf_msg_fragment_too_long_fragment = -1;
static int hf_msg_fragment_error = -1;
static int hf_msg_fragment_count = -1;
static int hf_msg_reassembled_in = -1;
static int hf_msg_reassembled_length = -1;
static int hf_msg_reassembled_data = -1;

static gint ett_ddp = -1;
static gint ett_ddp_ctrl = -1;
static gint ett_rdmap = -1;
static gint ett_rdmap_ctrl = -1;
static gint ett_rdmap_rr = -1;
static gint ett_rdmap_term = -1;
static gint ett_rdmap_term_hdrct = -1;
static gint ett_rdmap_term_hdr = -1;
static gint ett_rdmap_atomic = -1;
static gint ett_rdmap_imm = -1;
static gint ett_msg_fragment = -1;
static gint ett_msg_fragments = -1;

static expert_field ei_ddp_version = EI_INIT;
static expert_field ei_ddp_rsvd = EI_INIT;
static expert_field ei_ddp_short = EI_INIT;
static expert_field ei_rdmap_version = EI_INIT;
static expert_field ei_rdmap_opcode = EI_INIT;
static expert_field ei_rdmap_model = EI_INIT;
static expert_field ei_rdmap_qn = EI_INIT;
static expert_field ei_ddp_msn_gap = EI_INIT;
static expert_field ei_ddp_mo_overlap = EI_INIT;
static expert_field ei_ddp_mo_gap = EI_INIT;
static expert_field ei_ddp_to_overlap = EI_INIT;
static expert_field ei_rdmap_read_unmatched = EI_INIT;
static expert_field ei_rdmap_read_size = EI_INIT;
static expert_field ei_rdmap_terminate = EI_INIT;
static expert_field ei_rdmap_term_hdr = EI_INIT;

static const fragment_items msg_frag_items = {
	&ett_msg_fragment, &ett_msg_fragments,
	&hf_msg_fragments, &hf_msg_fragment, &hf_msg_fragment_overlap,
	&hf_msg_fragment_overlap_conflicts, &hf_msg_fragment_multiple_tails,
	&hf_msg_fragment_too_long_fragment, &hf_msg_fragment_error, &hf_msg_fragment_count,
	&hf_msg_reassembled_in, &hf_msg_reassembled_length, &hf_msg_reassembled_data,
	"RDMAP message segments"
};

static reassembly_table untagged_table;
static reassembly_table tagged_table;
static heur_dissector_list_t payload_heur;
static dissector_handle_t data_handle;

static gboolean pref_reassemble = TRUE;

/* 16 opcodes / layers / atomic ops at most, plus the terminating entry. */
static value_string rdmap_opcode_vals[17];
static value_string term_layer_vals[17];
static value_string atomic_op_vals[17];

static void fill_vals(value_string *vs, const char *(*name)(unsigned int), unsigned int n)
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++) {
		const char *s = name(i);

		if (s && strcmp(s, "Reserved") != 0) {
			vs[k].value = i;
			vs[k].strptr = s;
			k++;
		}
	}
	vs[k].value = 0;
	vs[k].strptr = NULL;
}

/* The value_string tables, from the wire core's name functions. */
static void fill_value_strings(void)
{
	fill_vals(rdmap_opcode_vals, iwarp_rdmap_opcode_name, 16);
	fill_vals(term_layer_vals, iwarp_term_layer_name, 16);
	fill_vals(atomic_op_vals, iwarp_atomic_opcode_name, 16);
}

/* Terminate names for display: the core's, or "Unknown ..." if undefined. */
static const char *term_layer_str(guint8 layer)
{
	const char *n = iwarp_term_layer_name(layer);

	return n ? n : "Unknown layer";
}

static const char *term_etype_str(guint8 layer, guint8 etype)
{
	const char *n = iwarp_term_etype_name(layer, etype);

	return n ? n : "Unknown error type";
}

static const char *term_ecode_str(guint8 layer, guint8 etype, guint8 ecode)
{
	const char *n = iwarp_term_ecode_name(layer, etype, ecode);

	return n ? n : "Unknown error code";
}

/* ---- per-connection state ------------------------------------------------ */

struct read_req {
	guint32 req_frame;
	nstime_t req_ts;
	int dir;		/* direction the request travelled */
	guint32 sink_stag;
	guint64 sink_to;
	guint32 size;
	guint32 got;		/* response bytes seen so far */
	guint32 resp_first;
	guint32 resp_last;	/* frame of the response segment with L set */
	nstime_t resp_ts;
	gboolean done;
};

struct stag_state {
	guint32 writes;		/* tagged segments placed with this STag */
	guint32 bytes;
	gboolean open;		/* a message is in progress */
	guint64 msg_base;	/* TO of its first byte */
	guint64 next_to;
	guint32 msg_id;
};

struct qn_state {
	gboolean seen;
	guint32 next_msn;	/* MSN the next new message should carry */
	gboolean open;		/* message with MSN open_msn lacks its last segment */
	guint32 open_msn;
	guint32 next_mo;
};

struct dir_state {
	struct qn_state qn[IWARP_DDP_QN_COUNT];
	wmem_map_t *stags;	/* STag -> struct stag_state */
	wmem_list_t *reads;	/* outstanding struct read_req sent this way */
};

struct rdmap_conn {
	struct dir_state d[2];
	gboolean dir_init[2];	/* first segment of the direction seen */
	guint32 tagged_msgs;
};

/* What the first pass found for one DDP segment. */
enum {
	SEG_MSN_GAP = 1u << 0,
	SEG_MO_OVERLAP = 1u << 1,
	SEG_MO_GAP = 1u << 2,
	SEG_TO_OVERLAP = 1u << 3,
	SEG_READ_UNMATCHED = 1u << 4,
	SEG_MSG_FIRST = 1u << 5,
	SEG_READ_SIZE = 1u << 6,
};

struct seg_info {
	guint32 flags;
	guint32 expected_msn;
	guint32 expected_mo;
	guint64 msg_base;	/* tagged: TO of the message's first byte */
	guint32 msg_id;		/* tagged: reassembly id */
	guint32 stag_writes, stag_bytes;
	struct read_req *rr;
};

static struct rdmap_conn *conn_state(struct swiwarp_ulpdu_info *ui)
{
	struct rdmap_conn *c = (struct rdmap_conn *)*ui->ulp_state;
	int i;

	if (!c) {
		c = wmem_new0(wmem_file_scope(), struct rdmap_conn);
		for (i = 0; i < 2; i++) {
			c->d[i].stags = wmem_map_new(wmem_file_scope(), g_direct_hash,
						     g_direct_equal);
			c->d[i].reads = wmem_list_new(wmem_file_scope());
		}
		*ui->ulp_state = c;
	}
	return c;
}

/* Index of this DDP segment within the frame, stable across passes. */
static guint32 seg_index(packet_info *pinfo)
{
	guint32 n = GPOINTER_TO_UINT(p_get_proto_data(pinfo->pool, pinfo, proto_rddp, 0));

	p_add_proto_data(pinfo->pool, pinfo, proto_rddp, 0, GUINT_TO_POINTER(n + 1));
	return n + 1;
}

static struct read_req *find_read(struct dir_state *req_dir, guint32 stag, guint64 to)
{
	wmem_list_frame_t *f;

	for (f = wmem_list_head(req_dir->reads); f; f = wmem_list_frame_next(f)) {
		struct read_req *rr = (struct read_req *)wmem_list_frame_data(f);

		if (!rr->done && rr->sink_stag == stag && to >= rr->sink_to &&
		    (to < rr->sink_to + rr->size || (rr->size == 0 && to == rr->sink_to)))
			return rr;
	}
	return NULL;
}

/* First pass: compare the segment with the connection state and update it. */
static void track_segment(packet_info *pinfo, struct rdmap_conn *c, int dir, gboolean from_start,
			  const struct iwarp_ddp_hdr *h, guint8 opcode, guint32 payload_len,
			  const struct iwarp_rdmap_read_req *rq, struct seg_info *si)
{
	struct dir_state *ds = &c->d[dir];

	if (!c->dir_init[dir]) {
		c->dir_init[dir] = TRUE;
		/* From the handshake on, every queue's first message is MSN 1. */
		for (int q = 0; from_start && q < IWARP_DDP_QN_COUNT; q++) {
			ds->qn[q].seen = TRUE;
			ds->qn[q].next_msn = 1;
		}
	}
	if (h->tagged) {
		struct stag_state *st = (struct stag_state *)wmem_map_lookup(
			ds->stags, GUINT_TO_POINTER(h->stag));

		if (!st) {
			st = wmem_new0(wmem_file_scope(), struct stag_state);
			wmem_map_insert(ds->stags, GUINT_TO_POINTER(h->stag), st);
		}
		if (st->open && h->to < st->next_to && h->to >= st->msg_base)
			si->flags |= SEG_TO_OVERLAP;
		if (!st->open || h->to < st->msg_base) {
			st->open = TRUE;
			st->msg_base = h->to;
			st->msg_id = ++c->tagged_msgs;
			si->flags |= SEG_MSG_FIRST;
		}
		si->msg_base = st->msg_base;
		si->msg_id = st->msg_id;
		if (h->to + payload_len > st->next_to || (si->flags & SEG_MSG_FIRST))
			st->next_to = h->to + payload_len;
		st->writes++;
		st->bytes += payload_len;
		si->stag_writes = st->writes;
		si->stag_bytes = st->bytes;
		if (h->last)
			st->open = FALSE;

		if (opcode == IWARP_OP_READ_RESPONSE) {
			struct read_req *rr = find_read(&c->d[!dir], h->stag, h->to);

			if (!rr) {
				si->flags |= SEG_READ_UNMATCHED;
			} else {
				si->rr = rr;
				if (!rr->resp_first)
					rr->resp_first = pinfo->num;
				rr->got += payload_len;
				if (h->last) {
					rr->done = TRUE;
					rr->resp_last = pinfo->num;
					rr->resp_ts = pinfo->abs_ts;
					if (rr->got != rr->size)
						si->flags |= SEG_READ_SIZE;
				}
			}
		}
		return;
	}

	if (h->qn < IWARP_DDP_QN_COUNT) {
		struct qn_state *q = &ds->qn[h->qn];

		if (h->mo == 0) {
			si->flags |= SEG_MSG_FIRST;
			if (q->seen && h->msn != q->next_msn) {
				si->flags |= SEG_MSN_GAP;
				si->expected_msn = q->next_msn;
			}
			if (q->open && q->open_msn == h->msn) {
				si->flags |= SEG_MO_OVERLAP;
				si->expected_mo = q->next_mo;
			}
			q->seen = TRUE;
			q->open = TRUE;
			q->open_msn = h->msn;
			q->next_mo = payload_len;
			q->next_msn = h->msn + 1;
		} else if (q->open && q->open_msn == h->msn) {
			if (h->mo < q->next_mo)
				si->flags |= SEG_MO_OVERLAP;
			else if (h->mo > q->next_mo)
				si->flags |= SEG_MO_GAP;
			si->expected_mo = q->next_mo;
			if (h->mo + payload_len > q->next_mo)
				q->next_mo = h->mo + payload_len;
		} else {
			/* Middle of a message whose start we did not see. */
			if (q->seen && h->msn != q->next_msn && !(q->open && q->open_msn == h->msn)) {
				si->flags |= SEG_MSN_GAP;
				si->expected_msn = q->next_msn;
			}
			q->seen = TRUE;
			q->open = TRUE;
			q->open_msn = h->msn;
			q->next_mo = h->mo + payload_len;
			q->next_msn = h->msn + 1;
		}
		if (h->last)
			q->open = FALSE;
	}

	if (opcode == IWARP_OP_READ_REQUEST && rq) {
		struct read_req *rr = wmem_new0(wmem_file_scope(), struct read_req);

		rr->req_frame = pinfo->num;
		rr->req_ts = pinfo->abs_ts;
		rr->dir = dir;
		rr->sink_stag = rq->sink_stag;
		rr->sink_to = rq->sink_to;
		rr->size = rq->size;
		wmem_list_append(ds->reads, rr);
		si->rr = rr;
	}
}

/* ---- Terminate ------------------------------------------------------------ */

static void dissect_terminate(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, int off)
{
	static int *const hdrct_fields[] = { &hf_rdmap_term_m, &hf_rdmap_term_d, &hf_rdmap_term_r,
					     NULL };
	proto_tree *tt;
	proto_item *ti;
	guint32 ctrl;
	guint8 layer, etype, ecode;
	gboolean m, d, r;
	const char *err;
	int len = tvb_reported_length_remaining(tvb, off);

	if (len < IWARP_RDMAP_TERM_CTRL_LEN) {
		expert_add_info(pinfo, proto_tree_get_parent(tree), &ei_ddp_short);
		return;
	}
	tt = proto_tree_add_subtree(tree, tvb, off, -1, ett_rdmap_term, &ti, "Terminate");
	ctrl = tvb_get_ntohl(tvb, off);
	layer = (guint8)((ctrl & IWARP_TERM_LAYER_MASK) >> IWARP_TERM_LAYER_SHIFT);
	etype = (guint8)((ctrl & IWARP_TERM_ETYPE_MASK) >> IWARP_TERM_ETYPE_SHIFT);
	ecode = (guint8)((ctrl & IWARP_TERM_ECODE_MASK) >> IWARP_TERM_ECODE_SHIFT);
	m = (ctrl & IWARP_TERM_FLAG_M) != 0;
	d = (ctrl & IWARP_TERM_FLAG_D) != 0;
	r = (ctrl & IWARP_TERM_FLAG_R) != 0;
	err = term_ecode_str(layer, etype, ecode);

	proto_tree_add_item(tt, hf_rdmap_term_ctrl, tvb, off, IWARP_RDMAP_TERM_CTRL_LEN,
			    ENC_BIG_ENDIAN);
	proto_tree_add_item(tt, hf_rdmap_term_layer, tvb, off, 1, ENC_BIG_ENDIAN);
	proto_tree_add_uint_format_value(tt, hf_rdmap_term_etype, tvb, off, 1, etype, "%s (%u)",
					 term_etype_str(layer, etype), etype);
	proto_tree_add_uint_format_value(tt, hf_rdmap_term_ecode, tvb, off + 1, 1, ecode,
					 "%s (0x%02x)", err, ecode);
	proto_item_set_generated(proto_tree_add_string(tt, hf_rdmap_term_error, tvb, off, 2,
						       err));
	proto_tree_add_bitmask(tt, tvb, off + 2, hf_rdmap_term_hdrct, ett_rdmap_term_hdrct,
			       hdrct_fields, ENC_BIG_ENDIAN);
	proto_tree_add_item(tt, hf_rdmap_term_rsvd, tvb, off, IWARP_RDMAP_TERM_CTRL_LEN,
			    ENC_BIG_ENDIAN);
	expert_add_info_format(pinfo, ti, &ei_rdmap_terminate, "Terminate: %s layer, %s: %s",
			       term_layer_str(layer), term_etype_str(layer, etype), err);
	col_append_fstr(pinfo->cinfo, COL_INFO, " [%s: %s]", term_layer_str(layer), err);
	off += IWARP_RDMAP_TERM_CTRL_LEN;

	/* The DDP Segment Length field is present whenever a DDP header is. */
	if (m || d) {
		if (tvb_reported_length_remaining(tvb, off) < IWARP_RDMAP_TERM_SEGLEN_LEN) {
			expert_add_info(pinfo, ti, &ei_rdmap_term_hdr);
			return;
		}
		proto_tree_add_item(tt, hf_rdmap_term_seglen, tvb, off, IWARP_RDMAP_TERM_SEGLEN_LEN,
				    ENC_BIG_ENDIAN);
		off += IWARP_RDMAP_TERM_SEGLEN_LEN;
	}
	if (d) {
		guint8 c0;
		int hl;
		proto_item *hi;
		proto_tree *ht;

		if (tvb_reported_length_remaining(tvb, off) < 1) {
			expert_add_info(pinfo, ti, &ei_rdmap_term_hdr);
			return;
		}
		c0 = tvb_get_guint8(tvb, off);
		hl = (c0 & IWARP_DDP_FLAG_TAGGED) ? IWARP_DDP_TAGGED_HDR_LEN
						  : IWARP_DDP_UNTAGGED_HDR_LEN;
		if (tvb_reported_length_remaining(tvb, off) < hl) {
			expert_add_info(pinfo, ti, &ei_rdmap_term_hdr);
			return;
		}
		hi = proto_tree_add_item(tt, hf_rdmap_term_ddp_hdr, tvb, off, hl, ENC_NA);
		ht = proto_item_add_subtree(hi, ett_rdmap_term_hdr);
		proto_tree_add_item(ht, hf_ddp_t, tvb, off, 1, ENC_BIG_ENDIAN);
		proto_tree_add_item(ht, hf_ddp_l, tvb, off, 1, ENC_BIG_ENDIAN);
		proto_tree_add_item(ht, hf_ddp_dv, tvb, off, 1, ENC_BIG_ENDIAN);
		proto_tree_add_item(ht, hf_rdmap_opcode, tvb, off + 1, 1, ENC_BIG_ENDIAN);
		if (c0 & IWARP_DDP_FLAG_TAGGED) {
			proto_tree_add_item(ht, hf_ddp_stag, tvb, off + IWARP_DDP_STAG_OFF, 4,
					    ENC_BIG_ENDIAN);
			proto_tree_add_item(ht, hf_ddp_to, tvb, off + IWARP_DDP_TO_OFF, 8,
					    ENC_BIG_ENDIAN);
		} else {
			proto_tree_add_item(ht, hf_ddp_qn, tvb, off + IWARP_DDP_QN_OFF, 4,
					    ENC_BIG_ENDIAN);
			proto_tree_add_item(ht, hf_ddp_msn, tvb, off + IWARP_DDP_MSN_OFF, 4,
					    ENC_BIG_ENDIAN);
			proto_tree_add_item(ht, hf_ddp_mo, tvb, off + IWARP_DDP_MO_OFF, 4,
					    ENC_BIG_ENDIAN);
		}
		off += hl;
	}
	if (r) {
		proto_item *hi;
		proto_tree *ht;

		if (tvb_reported_length_remaining(tvb, off) < IWARP_RDMAP_READ_REQ_LEN) {
			expert_add_info(pinfo, ti, &ei_rdmap_term_hdr);
			return;
		}
		hi = proto_tree_add_item(tt, hf_rdmap_term_rdma_hdr, tvb, off,
					 IWARP_RDMAP_READ_REQ_LEN, ENC_NA);
		ht = proto_item_add_subtree(hi, ett_rdmap_term_hdr);
		proto_tree_add_item(ht, hf_rdmap_sink_stag, tvb, off + IWARP_RDMAP_RR_SINK_STAG_OFF,
				    4, ENC_BIG_ENDIAN);
		proto_tree_add_item(ht, hf_rdmap_sink_to, tvb, off + IWARP_RDMAP_RR_SINK_TO_OFF, 8,
				    ENC_BIG_ENDIAN);
		proto_tree_add_item(ht, hf_rdmap_rdsz, tvb, off + IWARP_RDMAP_RR_SIZE_OFF, 4,
				    ENC_BIG_ENDIAN);
		proto_tree_add_item(ht, hf_rdmap_src_stag, tvb, off + IWARP_RDMAP_RR_SRC_STAG_OFF,
				    4, ENC_BIG_ENDIAN);
		proto_tree_add_item(ht, hf_rdmap_src_to, tvb, off + IWARP_RDMAP_RR_SRC_TO_OFF, 8,
				    ENC_BIG_ENDIAN);
	}
}

/* ---- main ------------------------------------------------------------------ */

/* What "rdmap.payload" heuristics get besides the payload (plugin.h). */
static void payload_info_fill(struct swiwarp_payload_info *pi, const struct swiwarp_ulpdu_info *ui,
			      const struct iwarp_ddp_hdr *h, guint8 opcode, const struct seg_info *si)
{
	memset(pi, 0, sizeof(*pi));
	pi->opcode = opcode;
	pi->tagged = h->tagged;
	pi->stag = h->stag;
	pi->to = si ? si->msg_base : h->to;
	pi->qn = h->qn;
	pi->msn = h->msn;
	pi->conn_id = ui ? ui->conn_id : 0;
	pi->dir = ui ? ui->dir : 0;
	if (ui) {
		pi->handshake = ui->handshake;
		pi->addr = ui->addr;
		pi->port = ui->port;
		pi->req_pd = ui->req_pd;
		pi->req_pd_len = ui->req_pd_len;
		pi->ulp_conv = ui->ulp_conv;
	}
}

static void hand_payload(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			 struct swiwarp_payload_info *pi)
{
	heur_dtbl_entry_t *hdtbl;

	if (!tvb_reported_length(tvb))
		return;
	if (!dissector_try_heuristic(payload_heur, tvb, pinfo, tree, &hdtbl, pi))
		call_dissector(data_handle, tvb, pinfo, tree);
}

static int dissect_rddp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
	static int *const ddp_fields[] = { &hf_ddp_t, &hf_ddp_l, &hf_ddp_rsvd, &hf_ddp_dv, NULL };
	static int *const rdmap_fields[] = { &hf_rdmap_rv, &hf_rdmap_rsv, &hf_rdmap_opcode,
					     NULL };
	struct swiwarp_ulpdu_info *ui = (struct swiwarp_ulpdu_info *)data;
	struct iwarp_ddp_hdr h;
	struct iwarp_rdmap_read_req rq;
	const struct iwarp_rdmap_opinfo *info;
	struct seg_info *si = NULL;
	struct rdmap_conn *c = NULL;
	struct swiwarp_tap_rec *tr;
	proto_item *di, *ri, *ci, *oi;
	proto_tree *dt, *rt;
	guint8 c0, c1, opcode;
	int hlen, off, plen;
	guint len = tvb_reported_length(tvb);
	gboolean have_rq = FALSE;
	tvbuff_t *rq_tvb = NULL;	/* the Read Request's header */
	const char *opname;

	if (len < IWARP_DDP_MIN_HDR_LEN)
		return 0;
	c0 = tvb_get_guint8(tvb, IWARP_DDP_CTRL_OFF);
	c1 = tvb_get_guint8(tvb, IWARP_RDMAP_CTRL_OFF);
	opcode = c1 & IWARP_RDMAP_OPCODE_MASK;
	opname = iwarp_rdmap_opcode_name(opcode);
	info = iwarp_rdmap_opcode_info(opcode);
	memset(&h, 0, sizeof(h));
	h.tagged = (c0 & IWARP_DDP_FLAG_TAGGED) != 0;
	h.last = (c0 & IWARP_DDP_FLAG_LAST) != 0;
	hlen = h.tagged ? IWARP_DDP_TAGGED_HDR_LEN : IWARP_DDP_UNTAGGED_HDR_LEN;

	di = proto_tree_add_item(tree, proto_rddp, tvb, 0, MIN((guint)hlen, len), ENC_NA);
	dt = proto_item_add_subtree(di, ett_ddp);
	ci = proto_tree_add_bitmask(dt, tvb, IWARP_DDP_CTRL_OFF, hf_ddp_ctrl, ett_ddp_ctrl,
				    ddp_fields, ENC_BIG_ENDIAN);
	if ((c0 & IWARP_DDP_DV_MASK) != IWARP_DDP_VERSION)
		expert_add_info(pinfo, ci, &ei_ddp_version);
	if (c0 & IWARP_DDP_RSVD_MASK)
		expert_add_info(pinfo, ci, &ei_ddp_rsvd);

	ri = proto_tree_add_item(tree, proto_rdmap, tvb, 0, -1, ENC_NA);
	rt = proto_item_add_subtree(ri, ett_rdmap);
	proto_item_append_text(ri, ", %s", opname);
	ci = proto_tree_add_bitmask(rt, tvb, IWARP_RDMAP_CTRL_OFF, hf_rdmap_ctrl, ett_rdmap_ctrl,
				    rdmap_fields, ENC_BIG_ENDIAN);
	oi = ci;
	if ((c1 & IWARP_RDMAP_RV_MASK) >> IWARP_RDMAP_RV_SHIFT != IWARP_RDMAP_VERSION)
		expert_add_info(pinfo, ci, &ei_rdmap_version);

	if (len < (guint)hlen) {
		expert_add_info(pinfo, di, &ei_ddp_short);
		return len;
	}
	if (h.tagged) {
		h.stag = tvb_get_ntohl(tvb, IWARP_DDP_STAG_OFF);
		h.to = tvb_get_ntoh64(tvb, IWARP_DDP_TO_OFF);
		proto_tree_add_item(dt, hf_ddp_stag, tvb, IWARP_DDP_STAG_OFF, 4, ENC_BIG_ENDIAN);
		proto_tree_add_item(dt, hf_ddp_to, tvb, IWARP_DDP_TO_OFF, 8, ENC_BIG_ENDIAN);
	} else {
		h.qn = tvb_get_ntohl(tvb, IWARP_DDP_QN_OFF);
		h.msn = tvb_get_ntohl(tvb, IWARP_DDP_MSN_OFF);
		h.mo = tvb_get_ntohl(tvb, IWARP_DDP_MO_OFF);
		if (iwarp_rdmap_op_invalidates(opcode))
			proto_tree_add_item(rt, hf_rdmap_inval_stag, tvb,
					    IWARP_RDMAP_INVAL_STAG_OFF, 4, ENC_BIG_ENDIAN);
		else
			proto_tree_add_item(dt, hf_ddp_rsvdulp, tvb, IWARP_RDMAP_INVAL_STAG_OFF, 4,
					    ENC_BIG_ENDIAN);
		proto_tree_add_item(dt, hf_ddp_qn, tvb, IWARP_DDP_QN_OFF, 4, ENC_BIG_ENDIAN);
		proto_tree_add_item(dt, hf_ddp_msn, tvb, IWARP_DDP_MSN_OFF, 4, ENC_BIG_ENDIAN);
		proto_tree_add_item(dt, hf_ddp_mo, tvb, IWARP_DDP_MO_OFF, 4, ENC_BIG_ENDIAN);
	}

	/* Opcode checks: known, right buffer model, right queue. */
	if (!info) {
		expert_add_info(pinfo, oi, &ei_rdmap_opcode);
	} else if (info->tagged != h.tagged) {
		expert_add_info(pinfo, oi, &ei_rdmap_model);
	} else if (!h.tagged && h.qn != info->qn) {
		expert_add_info_format(pinfo, oi, &ei_rdmap_qn,
				       "%s must use queue %u, this segment uses %u", opname,
				       info->qn, h.qn);
	}

	col_set_str(pinfo->cinfo, COL_PROTOCOL, "RDMAP");
	if (h.tagged)
		col_append_sep_fstr(pinfo->cinfo, COL_INFO, ", ", "%s STag=0x%08x TO=0x%" PRIx64
				    "%s", opname, h.stag, h.to, h.last ? "" : " (more)");
	else
		col_append_sep_fstr(pinfo->cinfo, COL_INFO, ", ", "%s QN=%u MSN=%u MO=%u%s",
				    opname, h.qn, h.msn, h.mo, h.last ? "" : " (more)");

	off = hlen;
	/* Opcode-specific RDMAP headers (only in the first segment). */
	if (!h.tagged && h.mo == 0) {
		switch (opcode) {
		case IWARP_OP_READ_REQUEST: {
			proto_tree *qt;

			if (tvb_reported_length_remaining(tvb, off) < IWARP_RDMAP_READ_REQ_LEN) {
				expert_add_info(pinfo, ri, &ei_ddp_short);
				break;
			}
			qt = proto_tree_add_subtree(rt, tvb, off, IWARP_RDMAP_READ_REQ_LEN,
						    ett_rdmap_rr, NULL, "Read Request");
			rq.sink_stag = tvb_get_ntohl(tvb, off + IWARP_RDMAP_RR_SINK_STAG_OFF);
			rq.sink_to = tvb_get_ntoh64(tvb, off + IWARP_RDMAP_RR_SINK_TO_OFF);
			rq.size = tvb_get_ntohl(tvb, off + IWARP_RDMAP_RR_SIZE_OFF);
			rq.src_stag = tvb_get_ntohl(tvb, off + IWARP_RDMAP_RR_SRC_STAG_OFF);
			rq.src_to = tvb_get_ntoh64(tvb, off + IWARP_RDMAP_RR_SRC_TO_OFF);
			have_rq = TRUE;
			rq_tvb = tvb_new_subset_length(tvb, off, IWARP_RDMAP_READ_REQ_LEN);
			proto_tree_add_item(qt, hf_rdmap_sink_stag, tvb,
					    off + IWARP_RDMAP_RR_SINK_STAG_OFF, 4, ENC_BIG_ENDIAN);
			proto_tree_add_item(qt, hf_rdmap_sink_to, tvb,
					    off + IWARP_RDMAP_RR_SINK_TO_OFF, 8, ENC_BIG_ENDIAN);
			proto_tree_add_item(qt, hf_rdmap_rdsz, tvb, off + IWARP_RDMAP_RR_SIZE_OFF,
					    4, ENC_BIG_ENDIAN);
			proto_tree_add_item(qt, hf_rdmap_src_stag, tvb,
					    off + IWARP_RDMAP_RR_SRC_STAG_OFF, 4, ENC_BIG_ENDIAN);
			proto_tree_add_item(qt, hf_rdmap_src_to, tvb,
					    off + IWARP_RDMAP_RR_SRC_TO_OFF, 8, ENC_BIG_ENDIAN);
			col_append_fstr(pinfo->cinfo, COL_INFO, " len=%u", rq.size);
			off += IWARP_RDMAP_READ_REQ_LEN;
			break;
		}
		case IWARP_OP_TERMINATE:
			dissect_terminate(tvb, pinfo, rt, off);
			off = len;
			break;
		case IWARP_OP_IMMEDIATE:
		case IWARP_OP_IMMEDIATE_SE: {
			proto_item *ii;
			proto_tree *it;

			if (tvb_reported_length_remaining(tvb, off) < IWARP_RDMAP_IMMEDIATE_LEN) {
				expert_add_info(pinfo, ri, &ei_ddp_short);
				break;
			}
			ii = proto_tree_add_item(rt, hf_rdmap_imm, tvb, off,
						 IWARP_RDMAP_IMMEDIATE_LEN, ENC_NA);
			it = proto_item_add_subtree(ii, ett_rdmap_imm);
			proto_tree_add_item(it, hf_rdmap_imm_value, tvb, off, 4, ENC_BIG_ENDIAN);
			proto_tree_add_item(it, hf_rdmap_imm_flags, tvb,
					    off + IWARP_RDMAP_IMM_FLAGS_OFF, 4, ENC_BIG_ENDIAN);
			proto_tree_add_item(it, hf_rdmap_imm_send_follows, tvb,
					    off + IWARP_RDMAP_IMM_FLAGS_OFF, 4, ENC_BIG_ENDIAN);
			/* swiwarp's Send with Immediate: the Send that follows carries it */
			if (tvb_get_ntohl(tvb, off + IWARP_RDMAP_IMM_FLAGS_OFF) &
			    IWARP_IMM_FLAG_SEND_FOLLOWS)
				col_append_str(pinfo->cinfo, COL_INFO, " (Send follows)");
			off += IWARP_RDMAP_IMMEDIATE_LEN;
			break;
		}
		case IWARP_OP_ATOMIC_REQUEST: {
			proto_tree *at;
			guint32 aop;

			if (tvb_reported_length_remaining(tvb, off) < IWARP_RDMAP_ATOMIC_REQ_LEN) {
				expert_add_info(pinfo, ri, &ei_ddp_short);
				break;
			}
			at = proto_tree_add_subtree(rt, tvb, off, IWARP_RDMAP_ATOMIC_REQ_LEN,
						    ett_rdmap_atomic, NULL, "Atomic Request");
			aop = tvb_get_ntohl(tvb, off + IWARP_RDMAP_AREQ_AOP_OFF);
			proto_tree_add_item(at, hf_rdmap_atomic_rsvd, tvb,
					    off + IWARP_RDMAP_AREQ_AOP_OFF, 4, ENC_BIG_ENDIAN);
			proto_tree_add_item(at, hf_rdmap_atomic_op, tvb,
					    off + IWARP_RDMAP_AREQ_AOP_OFF, 4, ENC_BIG_ENDIAN);
			proto_tree_add_item(at, hf_rdmap_atomic_reqid, tvb,
					    off + IWARP_RDMAP_AREQ_REQID_OFF, 4, ENC_BIG_ENDIAN);
			proto_tree_add_item(at, hf_rdmap_atomic_stag, tvb,
					    off + IWARP_RDMAP_AREQ_STAG_OFF, 4, ENC_BIG_ENDIAN);
			proto_tree_add_item(at, hf_rdmap_atomic_to, tvb,
					    off + IWARP_RDMAP_AREQ_TO_OFF, 8, ENC_BIG_ENDIAN);
			proto_tree_add_item(at, hf_rdmap_atomic_add_swap, tvb,
					    off + IWARP_RDMAP_AREQ_ADD_SWAP_OFF, 8, ENC_BIG_ENDIAN);
			proto_tree_add_item(at, hf_rdmap_atomic_add_swap_mask, tvb,
					    off + IWARP_RDMAP_AREQ_ADD_SWAP_MASK_OFF, 8,
					    ENC_BIG_ENDIAN);
			proto_tree_add_item(at, hf_rdmap_atomic_cmp, tvb,
					    off + IWARP_RDMAP_AREQ_CMP_OFF, 8, ENC_BIG_ENDIAN);
			proto_tree_add_item(at, hf_rdmap_atomic_cmp_mask, tvb,
					    off + IWARP_RDMAP_AREQ_CMP_MASK_OFF, 8, ENC_BIG_ENDIAN);
			col_append_fstr(pinfo->cinfo, COL_INFO, " %s",
					iwarp_atomic_opcode_name(aop & IWARP_RDMAP_AREQ_AOP_MASK));
			off += IWARP_RDMAP_ATOMIC_REQ_LEN;
			break;
		}
		case IWARP_OP_ATOMIC_RESPONSE: {
			proto_tree *at;

			if (tvb_reported_length_remaining(tvb, off) < IWARP_RDMAP_ATOMIC_RESP_LEN) {
				expert_add_info(pinfo, ri, &ei_ddp_short);
				break;
			}
			at = proto_tree_add_subtree(rt, tvb, off, IWARP_RDMAP_ATOMIC_RESP_LEN,
						    ett_rdmap_atomic, NULL, "Atomic Response");
			proto_tree_add_item(at, hf_rdmap_atomic_orig_reqid, tvb,
					    off + IWARP_RDMAP_ARESP_REQID_OFF, 4, ENC_BIG_ENDIAN);
			proto_tree_add_item(at, hf_rdmap_atomic_orig_value, tvb,
					    off + IWARP_RDMAP_ARESP_VALUE_OFF, 8, ENC_BIG_ENDIAN);
			off += IWARP_RDMAP_ATOMIC_RESP_LEN;
			break;
		}
		default:
			break;
		}
	}
	if (off > (int)len)
		off = len;
	plen = len - off;
	proto_item_set_generated(proto_tree_add_uint(dt, hf_ddp_payload_len, tvb, off, plen, plen));

	/* Connection state: first pass computes, every pass displays. */
	if (ui) {
		guint32 idx = seg_index(pinfo);

		c = conn_state(ui);
		si = (struct seg_info *)p_get_proto_data(wmem_file_scope(), pinfo, proto_rddp, idx);
		if (!si && !PINFO_FD_VISITED(pinfo)) {
			si = wmem_new0(wmem_file_scope(), struct seg_info);
			/* Segments with an unknown opcode do not move the stream state. */
			if (info)
				track_segment(pinfo, c, ui->dir, ui->from_start, &h, opcode,
					      (guint32)plen, have_rq ? &rq : NULL, si);
			p_add_proto_data(wmem_file_scope(), pinfo, proto_rddp, idx, si);
		}
	}
	if (si) {
		if ((si->flags & SEG_MSN_GAP) && h.msn - si->expected_msn < 0x80000000u)
			expert_add_info_format(pinfo, di, &ei_ddp_msn_gap,
					       "MSN %u, expected %u (%u message(s) missing)", h.msn,
					       si->expected_msn, h.msn - si->expected_msn);
		else if (si->flags & SEG_MSN_GAP)
			expert_add_info_format(pinfo, di, &ei_ddp_msn_gap,
					       "MSN %u, expected %u (went back by %u)", h.msn,
					       si->expected_msn, si->expected_msn - h.msn);
		if (si->flags & SEG_MO_OVERLAP)
			expert_add_info_format(pinfo, di, &ei_ddp_mo_overlap,
					       "MO %u overlaps data already received (next MO %u)",
					       h.mo, si->expected_mo);
		if (si->flags & SEG_MO_GAP)
			expert_add_info_format(pinfo, di, &ei_ddp_mo_gap,
					       "MO %u, expected %u", h.mo, si->expected_mo);
		if (si->flags & SEG_TO_OVERLAP)
			expert_add_info(pinfo, di, &ei_ddp_to_overlap);
		if (h.tagged) {
			proto_item_set_generated(proto_tree_add_boolean(
				dt, hf_ddp_msg_first, tvb, 0, 0, (si->flags & SEG_MSG_FIRST) != 0));
			proto_item_set_generated(proto_tree_add_uint(rt, hf_rdmap_stag_writes, tvb,
								     0, 0, si->stag_writes));
			proto_item_set_generated(proto_tree_add_uint(rt, hf_rdmap_stag_bytes, tvb, 0,
								     0, si->stag_bytes));
		}
		if (opcode == IWARP_OP_READ_REQUEST && si->rr) {
			if (si->rr->resp_last)
				proto_item_set_generated(proto_tree_add_uint(
					rt, hf_rdmap_read_response_in, tvb, 0, 0, si->rr->resp_last));
		}
		if (opcode == IWARP_OP_READ_RESPONSE) {
			if (si->rr) {
				proto_item_set_generated(proto_tree_add_uint(
					rt, hf_rdmap_read_request_in, tvb, 0, 0, si->rr->req_frame));
				if (h.last && si->rr->resp_last == pinfo->num) {
					nstime_t dt_ns;

					nstime_delta(&dt_ns, &si->rr->resp_ts, &si->rr->req_ts);
					proto_item_set_generated(proto_tree_add_time(
						rt, hf_rdmap_read_time, tvb, 0, 0, &dt_ns));
				}
				if (si->flags & SEG_READ_SIZE)
					expert_add_info_format(pinfo, ri, &ei_rdmap_read_size,
							       "Read Response carried %u bytes, "
							       "the request asked for %u",
							       si->rr->got, si->rr->size);
			} else if (si->flags & SEG_READ_UNMATCHED) {
				expert_add_info(pinfo, ri, &ei_rdmap_read_unmatched);
			}
		}
	}

	/* Tap: one record per segment. */
	if (ui && have_tap_listener(rdmap_tap)) {
		tr = wmem_new0(pinfo->pool, struct swiwarp_tap_rec);
		tr->conn_id = ui->conn_id;
		tr->conn_label = ui->conn_label;
		tr->dir = ui->dir;
		tr->opcode = opcode;
		tr->last = h.last;
		tr->bytes = (guint32)plen;
		if (si && opcode == IWARP_OP_READ_RESPONSE && si->rr && h.last &&
		    si->rr->resp_last == pinfo->num) {
			nstime_t dt_ns;

			nstime_delta(&dt_ns, &si->rr->resp_ts, &si->rr->req_ts);
			tr->read_done = TRUE;
			tr->read_latency_ms = nstime_to_sec(&dt_ns) * 1000.0;
		}
		tap_queue_packet(rdmap_tap, pinfo, tr);
	}

	/* Payload: reassemble multi-segment messages, then hand it on. */
	if (plen > 0 && iwarp_rdmap_op_has_payload(opcode)) {
		struct swiwarp_payload_info pi;
		tvbuff_t *ptvb = NULL;
		gboolean single;

		payload_info_fill(&pi, ui, &h, opcode, si);
		proto_tree_add_item(rt, hf_rdmap_payload, tvb, off, plen, ENC_NA);
		single = h.last && (h.tagged ? (si && (si->flags & SEG_MSG_FIRST)) : h.mo == 0);
		if (single || !pref_reassemble || !si) {
			if (single)
				ptvb = tvb_new_subset_remaining(tvb, off);
		} else {
			fragment_head *fh;
			gboolean save = pinfo->fragmented;

			pinfo->fragmented = TRUE;
			if (h.tagged)
				fh = fragment_add_check(&tagged_table, tvb, off, pinfo,
							si->msg_id, NULL,
							(guint32)(h.to - si->msg_base), plen, !h.last);
			else
				fh = fragment_add_check(&untagged_table, tvb, off, pinfo,
							(h.msn << 2) ^ (h.qn & 3) ^ (h.qn << 30),
							NULL, h.mo, plen, !h.last);
			ptvb = process_reassembled_data(tvb, off, pinfo, "Reassembled RDMAP message",
							fh, &msg_frag_items, NULL, rt);
			pinfo->fragmented = save;
			if (ptvb)
				proto_item_set_generated(proto_tree_add_uint(
					rt, hf_rdmap_msg_len, ptvb, 0, 0,
					tvb_reported_length(ptvb)));
		}
		if (ptvb)
			hand_payload(ptvb, pinfo, tree, &pi);
	}
	/* A Read Request has no payload, but a ULP that stitches data moved by
	 * RDMA Reads (RPC-over-RDMA's read chunks) must see it to tell which of
	 * its buffers the Read Responses to the sink STag fill.  Offered with
	 * its header as the tvb; nothing is shown when no heuristic takes it. */
	if (have_rq && rq_tvb) {
		struct swiwarp_payload_info pi;
		heur_dtbl_entry_t *hdtbl;

		payload_info_fill(&pi, ui, &h, opcode, si);
		pi.read_req = &rq;
		dissector_try_heuristic(payload_heur, rq_tvb, pinfo, tree, &hdtbl, &pi);
	}
	return len;
}

void swiwarp_register_rdmap(void)
{
	static hf_register_info hf_ddp[] = {
		{ &hf_ddp_ctrl, { "DDP control", "rddp.ctrl", FT_UINT8, BASE_HEX, NULL, 0x0, NULL,
				  HFILL } },
		{ &hf_ddp_t, { "Tagged (T)", "rddp.t", FT_BOOLEAN, 8, NULL, IWARP_DDP_FLAG_TAGGED,
			       NULL, HFILL } },
		{ &hf_ddp_l, { "Last (L)", "rddp.l", FT_BOOLEAN, 8, NULL, IWARP_DDP_FLAG_LAST, NULL,
			       HFILL } },
		{ &hf_ddp_rsvd, { "Reserved", "rddp.rsvd", FT_UINT8, BASE_HEX, NULL,
				  IWARP_DDP_RSVD_MASK, NULL, HFILL } },
		{ &hf_ddp_dv, { "DDP version", "rddp.dv", FT_UINT8, BASE_DEC, NULL,
				IWARP_DDP_DV_MASK, NULL, HFILL } },
		{ &hf_ddp_rsvdulp, { "Reserved for ULP", "rddp.rsvdulp", FT_UINT32, BASE_HEX, NULL,
				     0x0, NULL, HFILL } },
		{ &hf_ddp_stag, { "STag", "rddp.stag", FT_UINT32, BASE_HEX, NULL, 0x0, NULL,
				  HFILL } },
		{ &hf_ddp_to, { "Tagged offset", "rddp.to", FT_UINT64, BASE_HEX, NULL, 0x0, NULL,
				HFILL } },
		{ &hf_ddp_qn, { "Queue number", "rddp.qn", FT_UINT32, BASE_DEC, NULL, 0x0, NULL,
				HFILL } },
		{ &hf_ddp_msn, { "Message sequence number", "rddp.msn", FT_UINT32, BASE_DEC, NULL,
				 0x0, NULL, HFILL } },
		{ &hf_ddp_mo, { "Message offset", "rddp.mo", FT_UINT32, BASE_DEC, NULL, 0x0, NULL,
				HFILL } },
		{ &hf_ddp_payload_len, { "Payload length", "rddp.payload_len", FT_UINT32, BASE_DEC,
					 NULL, 0x0, NULL, HFILL } },
		{ &hf_ddp_msg_first, { "First segment of a tagged message", "rddp.msg_first",
				       FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_msg_fragments, { "Message segments", "rddp.segments", FT_NONE, BASE_NONE, NULL,
				       0x0, NULL, HFILL } },
		{ &hf_msg_fragment, { "Segment", "rddp.segment", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
				      NULL, HFILL } },
		{ &hf_msg_fragment_overlap, { "Segment overlap", "rddp.segment.overlap",
					      FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_msg_fragment_overlap_conflicts, { "Conflicting data in overlap",
							"rddp.segment.overlap.conflicts",
							FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL,
							HFILL } },
		{ &hf_msg_fragment_multiple_tails, { "Several segments with L set",
						     "rddp.segment.multiple_tails", FT_BOOLEAN,
						     BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_msg_fragment_too_long_fragment, { "Segment beyond the message end",
							"rddp.segment.too_long", FT_BOOLEAN,
							BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_msg_fragment_error, { "Reassembly error", "rddp.segment.error", FT_FRAMENUM,
					    BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_msg_fragment_count, { "Segment count", "rddp.segment.count", FT_UINT32,
					    BASE_DEC, NULL, 0x0, NULL, HFILL } },
		{ &hf_msg_reassembled_in, { "Message reassembled in", "rddp.reassembled_in",
					    FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_msg_reassembled_length, { "Reassembled message length",
						"rddp.reassembled.length", FT_UINT32, BASE_DEC,
						NULL, 0x0, NULL, HFILL } },
		{ &hf_msg_reassembled_data, { "Reassembled message", "rddp.reassembled.data",
					      FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
	};
	static hf_register_info hf_rdmap[] = {
		{ &hf_rdmap_ctrl, { "RDMAP control", "rdmap.ctrl", FT_UINT8, BASE_HEX, NULL, 0x0,
				    NULL, HFILL } },
		{ &hf_rdmap_rv, { "RDMAP version", "rdmap.rv", FT_UINT8, BASE_DEC, NULL,
				  IWARP_RDMAP_RV_MASK, NULL, HFILL } },
		{ &hf_rdmap_rsv, { "Reserved", "rdmap.rsv", FT_UINT8, BASE_HEX, NULL,
				   IWARP_RDMAP_RSVD_MASK, NULL, HFILL } },
		{ &hf_rdmap_opcode, { "Opcode", "rdmap.opcode", FT_UINT8, BASE_HEX,
				      VALS(rdmap_opcode_vals), IWARP_RDMAP_OPCODE_MASK, NULL,
				      HFILL } },
		{ &hf_rdmap_inval_stag, { "Invalidate STag", "rdmap.inval_stag", FT_UINT32,
					  BASE_HEX, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_sink_stag, { "Data sink STag", "rdmap.sink_stag", FT_UINT32, BASE_HEX,
					 NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_sink_to, { "Data sink tagged offset", "rdmap.sink_to", FT_UINT64,
				       BASE_HEX, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_rdsz, { "RDMA Read message size", "rdmap.rdmardsz", FT_UINT32,
				    BASE_DEC, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_src_stag, { "Data source STag", "rdmap.src_stag", FT_UINT32, BASE_HEX,
					NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_src_to, { "Data source tagged offset", "rdmap.src_to", FT_UINT64,
				      BASE_HEX, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_read_response_in, { "Response in", "rdmap.read.response_in",
						FT_FRAMENUM, BASE_NONE,
						FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE), 0x0,
						"Frame with the last Read Response segment",
						HFILL } },
		{ &hf_rdmap_read_request_in, { "Request in", "rdmap.read.request_in", FT_FRAMENUM,
					       BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0x0,
					       NULL, HFILL } },
		{ &hf_rdmap_read_time, { "Read time", "rdmap.read.time", FT_RELATIVE_TIME,
					 BASE_NONE, NULL, 0x0,
					 "Time from the Read Request to the last Response segment",
					 HFILL } },
		{ &hf_rdmap_read_done_in, { "Read done in", "rdmap.read.done_in", FT_FRAMENUM,
					    BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_imm, { "Immediate data", "rdmap.imm", FT_BYTES, BASE_NONE, NULL, 0x0,
				   NULL, HFILL } },
		{ &hf_rdmap_imm_value, { "Value", "rdmap.imm.value", FT_UINT32, BASE_HEX, NULL,
					 0x0, "Octets 0-3: the verbs' 32-bit immediate value",
					 HFILL } },
		{ &hf_rdmap_imm_flags, { "Flags (swiwarp)", "rdmap.imm.flags", FT_UINT32, BASE_HEX,
					 NULL, 0x0,
					 "Octets 4-7: a swiwarp convention between swiwarp peers "
					 "(zero elsewhere)", HFILL } },
		{ &hf_rdmap_imm_send_follows, { "Send follows", "rdmap.imm.send_follows",
						FT_BOOLEAN, 32, NULL, IWARP_IMM_FLAG_SEND_FOLLOWS,
						"swiwarp Send with Immediate: the next Send carries "
						"this value", HFILL } },
		{ &hf_rdmap_term_ctrl, { "Terminate control", "rdmap.term.ctrl", FT_UINT32,
					 BASE_HEX, NULL, 0x0, NULL, HFILL } },
		/* Layer, M, D, R: bits of one octet of the control word. */
		{ &hf_rdmap_term_layer, { "Layer", "rdmap.term.layer", FT_UINT8, BASE_HEX,
					  VALS(term_layer_vals), IWARP_TERM_LAYER_MASK >> 24, NULL,
					  HFILL } },
		{ &hf_rdmap_term_etype, { "Error type", "rdmap.term.etype", FT_UINT8, BASE_HEX, NULL,
					  0x0, NULL, HFILL } },
		{ &hf_rdmap_term_ecode, { "Error code", "rdmap.term.ecode", FT_UINT8, BASE_HEX,
					  NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_term_error, { "Error", "rdmap.term.error", FT_STRING, BASE_NONE, NULL,
					  0x0, NULL, HFILL } },
		{ &hf_rdmap_term_hdrct, { "Header control", "rdmap.term.hdrct", FT_UINT8, BASE_HEX,
					  NULL, (IWARP_TERM_FLAG_M | IWARP_TERM_FLAG_D |
						 IWARP_TERM_FLAG_R) >> 8, NULL, HFILL } },
		{ &hf_rdmap_term_m, { "DDP segment length valid (M)", "rdmap.term.m", FT_BOOLEAN, 8,
				      NULL, IWARP_TERM_FLAG_M >> 8, NULL, HFILL } },
		{ &hf_rdmap_term_d, { "DDP header included (D)", "rdmap.term.d", FT_BOOLEAN, 8,
				      NULL, IWARP_TERM_FLAG_D >> 8, NULL, HFILL } },
		{ &hf_rdmap_term_r, { "RDMAP header included (R)", "rdmap.term.r", FT_BOOLEAN, 8,
				      NULL, IWARP_TERM_FLAG_R >> 8, NULL, HFILL } },
		{ &hf_rdmap_term_rsvd, { "Reserved", "rdmap.term.rsvd", FT_UINT32, BASE_HEX, NULL,
					 IWARP_TERM_RSVD_MASK, NULL, HFILL } },
		{ &hf_rdmap_term_seglen, { "Terminated DDP segment length", "rdmap.term.seglen",
					   FT_UINT16, BASE_DEC, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_term_ddp_hdr, { "Terminated DDP header", "rdmap.term.ddp_hdr", FT_BYTES,
					    BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_term_rdma_hdr, { "Terminated RDMAP header", "rdmap.term.rdmap_hdr",
					     FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_atomic_rsvd, { "Reserved", "rdmap.atomic.rsvd", FT_UINT32, BASE_HEX,
					   NULL, IWARP_RDMAP_AREQ_RSVD_MASK, NULL, HFILL } },
		{ &hf_rdmap_atomic_op, { "Atomic operation", "rdmap.atomic.op", FT_UINT32,
					 BASE_DEC, VALS(atomic_op_vals), IWARP_RDMAP_AREQ_AOP_MASK,
					 NULL, HFILL } },
		{ &hf_rdmap_atomic_reqid, { "Request identifier", "rdmap.atomic.reqid", FT_UINT32,
					    BASE_HEX, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_atomic_stag, { "Remote STag", "rdmap.atomic.stag", FT_UINT32, BASE_HEX,
					   NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_atomic_to, { "Remote tagged offset", "rdmap.atomic.to", FT_UINT64,
					 BASE_HEX, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_atomic_add_swap, { "Add or swap data", "rdmap.atomic.add_swap",
					       FT_UINT64, BASE_HEX, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_atomic_add_swap_mask, { "Add or swap mask", "rdmap.atomic.add_swap_mask",
						    FT_UINT64, BASE_HEX, NULL, 0x0, NULL,
						    HFILL } },
		{ &hf_rdmap_atomic_cmp, { "Compare data", "rdmap.atomic.compare", FT_UINT64,
					  BASE_HEX, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_atomic_cmp_mask, { "Compare mask", "rdmap.atomic.compare_mask",
					       FT_UINT64, BASE_HEX, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_atomic_orig_reqid, { "Original request identifier",
						 "rdmap.atomic.orig_reqid", FT_UINT32, BASE_HEX,
						 NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_atomic_orig_value, { "Original remote data value",
						 "rdmap.atomic.orig_value", FT_UINT64, BASE_HEX,
						 NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_stag_writes, { "Segments placed with this STag so far",
					   "rdmap.stag.segments", FT_UINT32, BASE_DEC, NULL, 0x0,
					   NULL, HFILL } },
		{ &hf_rdmap_stag_bytes, { "Bytes placed with this STag so far", "rdmap.stag.bytes",
					  FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
		{ &hf_rdmap_payload, { "Payload", "rdmap.payload", FT_BYTES, BASE_NONE, NULL, 0x0,
				       NULL, HFILL } },
		{ &hf_rdmap_msg_len, { "Message length", "rdmap.msg_len", FT_UINT32, BASE_DEC, NULL,
				       0x0, NULL, HFILL } },
	};
	static gint *ett[] = { &ett_ddp, &ett_ddp_ctrl, &ett_rdmap, &ett_rdmap_ctrl, &ett_rdmap_rr,
			       &ett_rdmap_term, &ett_rdmap_term_hdrct, &ett_rdmap_term_hdr,
			       &ett_rdmap_atomic, &ett_rdmap_imm, &ett_msg_fragment,
			       &ett_msg_fragments };
	static ei_register_info ei_ddp[] = {
		{ &ei_ddp_version, { "rddp.dv.bad", PI_PROTOCOL, PI_ERROR, "DDP version is not 1",
				     EXPFILL } },
		{ &ei_ddp_rsvd, { "rddp.rsvd.set", PI_PROTOCOL, PI_WARN,
				  "DDP reserved bits are set", EXPFILL } },
		{ &ei_ddp_short, { "rddp.short", PI_MALFORMED, PI_ERROR,
				   "Segment shorter than its headers", EXPFILL } },
		{ &ei_ddp_msn_gap, { "rddp.msn.gap", PI_SEQUENCE, PI_WARN,
				     "Unexpected message sequence number", EXPFILL } },
		{ &ei_ddp_mo_overlap, { "rddp.mo.overlap", PI_SEQUENCE, PI_WARN,
					"Message offset overlaps earlier segments", EXPFILL } },
		{ &ei_ddp_mo_gap, { "rddp.mo.gap", PI_SEQUENCE, PI_WARN,
				    "Message offset leaves a gap", EXPFILL } },
		{ &ei_ddp_to_overlap, { "rddp.to.overlap", PI_SEQUENCE, PI_WARN,
					"Tagged segment overlaps data already placed in this message",
					EXPFILL } },
	};
	static ei_register_info ei_rdmap[] = {
		{ &ei_rdmap_version, { "rdmap.rv.bad", PI_PROTOCOL, PI_ERROR,
				       "RDMAP version is not 1", EXPFILL } },
		{ &ei_rdmap_opcode, { "rdmap.opcode.unknown", PI_PROTOCOL, PI_ERROR,
				      "Unknown RDMAP opcode", EXPFILL } },
		{ &ei_rdmap_model, { "rdmap.opcode.model", PI_PROTOCOL, PI_ERROR,
				     "Opcode used with the wrong DDP buffer model (tagged/untagged)",
				     EXPFILL } },
		{ &ei_rdmap_qn, { "rdmap.opcode.qn", PI_PROTOCOL, PI_ERROR,
				  "Opcode sent on the wrong untagged queue", EXPFILL } },
		{ &ei_rdmap_read_unmatched, { "rdmap.read.unmatched", PI_SEQUENCE, PI_WARN,
					      "Read Response without a matching Read Request",
					      EXPFILL } },
		{ &ei_rdmap_read_size, { "rdmap.read.size", PI_PROTOCOL, PI_WARN,
					 "Read Response size differs from the request", EXPFILL } },
		{ &ei_rdmap_terminate, { "rdmap.term", PI_RESPONSE_CODE, PI_WARN,
					 "Terminate", EXPFILL } },
		{ &ei_rdmap_term_hdr, { "rdmap.term.short", PI_MALFORMED, PI_ERROR,
					"Terminate shorter than its header control bits promise",
					EXPFILL } },
	};
	module_t *m;
	expert_module_t *em;

	fill_value_strings();
	proto_rddp = proto_register_protocol("iWARP Direct Data Placement (swiwarp)", "RDDP",
					     "rddp");
	proto_rdmap = proto_register_protocol("iWARP RDMA Protocol (swiwarp)", "RDMAP",
					      "rdmap");
	proto_register_field_array(proto_rddp, hf_ddp, array_length(hf_ddp));
	proto_register_field_array(proto_rdmap, hf_rdmap, array_length(hf_rdmap));
	proto_register_subtree_array(ett, array_length(ett));
	em = expert_register_protocol(proto_rddp);
	expert_register_field_array(em, ei_ddp, array_length(ei_ddp));
	em = expert_register_protocol(proto_rdmap);
	expert_register_field_array(em, ei_rdmap, array_length(ei_rdmap));

	register_dissector("rddp", dissect_rddp, proto_rddp);
	payload_heur = register_heur_dissector_list(SWIWARP_PAYLOAD_HEUR_LIST, proto_rdmap);
	reassembly_table_register(&untagged_table, &addresses_ports_reassembly_table_functions);
	reassembly_table_register(&tagged_table, &addresses_ports_reassembly_table_functions);
	rdmap_tap = register_tap(SWIWARP_TAP_NAME);

	m = prefs_register_protocol(proto_rdmap, NULL);
	prefs_register_bool_preference(m, "reassemble", "Reassemble multi-segment messages",
				       "Reassemble Send, Write and Read Response messages that "
				       "span several DDP segments", &pref_reassemble);
}

void swiwarp_handoff_rdmap(void)
{
	data_handle = find_dissector("data");
}
