// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RDMAP payloads handed to Wireshark's own ULP dissectors: NVMe over Fabrics
 * (nvme-rdma), RPC-over-RDMA (rpcordma) and iSER (iser).
 *
 * Wireshark 4.0 has these dissectors only as heuristics on the InfiniBand
 * payload list ("infiniband.payload"), and none of their code is exported
 * from libwireshark (the nvme helpers in packet-nvme.h carry no
 * WS_DLL_PUBLIC), so they cannot be linked against.  What is public is the
 * heuristic table entry (the function pointer) and the two structures they
 * read, struct infinibandinfo and conversation_infiniband_data
 * (epan/dissectors/packet-infiniband.h).  So each is called here through its
 * table entry with what the InfiniBand dissector would have given it:
 *
 *   - rpcordma has an iWARP entry point of its own (on the built-in iWARP
 *     dissector's "iwarp_ddp_rdmap" list, taking that dissector's
 *     rdmap_info_t, epan/dissectors/packet-iwarp-ddp-rdmap.h), which our
 *     streams never reach; it is called here through that entry, with the
 *     real TCP addresses and ports, for Sends and, once a connection has
 *     carried RPC-over-RDMA, for RDMA Writes, Read Requests and Read
 *     Responses too, so that it stitches chunks into the RPC messages
 *     (below: "How rpcordma stitches chunks").
 *   - nvme-rdma and iser only take a payload when they find the "IB QP"
 *     conversations the InfiniBand CM dissector creates for a connection,
 *     whose service id names the ULP's TCP port (4420 and 3260 by their
 *     preferences), whose direction says which side is the host, and (for
 *     NVMe) whose CM private data holds the queue id.  iWARP has all of it:
 *     the MPA Request shows who connected to which port, and its private data
 *     is the rdma_cm private data of the ULP (NVMe-oF puts the queue id at
 *     offset 2).  One pair of such conversations per MPA connection is
 *     created here, with made-up QP numbers unique to the connection, and
 *     pinfo's ports are set to those QP numbers while the dissector runs.
 *     Without the MPA Request (mid-stream capture) the roles are unknown and
 *     these two are not called.
 *
 * The adapters sit on our "rdmap.payload" heuristic list, under the ULP's
 * own protocol, so `--disable-protocol nvme-rdma` or
 * `--disable-heuristic nvme_rdma_iwarp` switch them off.
 *
 * How rpcordma stitches chunks (Wireshark 4.0, read in
 * epan/dissectors/packet-rpcrdma.c; checked against Debian's 4.0.17 on the
 * golden capture swiwarp_nfsrdma):
 *
 *   - State: one rdma_conv_info_t per conversation, found with
 *     find_or_create_conversation(pinfo) (get_rdma_conv_info), so it
 *     follows pinfo's addresses and ports: the call that offers chunks and
 *     the RDMA traffic that fills them must be dissected with the same
 *     address/port pair (either direction).  Fragments go into a reassembly
 *     table keyed by addresses and ports too (direction matters there: the
 *     chunk data and the message it is stitched into flow the same way).
 *   - Calls set the chunks up: process_rdma_list, from the read list, write
 *     list and reply chunk of an RDMA_MSG or RDMA_NOMSG header, files each
 *     segment (handle, length, offset) under its handle in the state, with a
 *     message id shared by the segments of one list, on the first pass.
 *     The reply, which repeats the write list or reply chunk, only updates
 *     the lengths to what was actually written.
 *   - InfiniBand (dissect_rpcrdma_ib_heur, data = struct infinibandinfo):
 *     opCode picks the case.  RC_RDMA_WRITE_ONLY(_IMM): the segment is
 *     found by reth_remote_key and reth_remote_address (find_segment_info:
 *     handle equal, address inside [offset, offset + length));
 *     RC_RDMA_WRITE_FIRST files a request under packet_seq_num with
 *     reth_remote_address and reth_dma_length (add_request_info), and
 *     FIRST/MIDDLE/LAST find it again by the largest PSN not above theirs
 *     (add_ib_fragment).  Fragments are numbered in units of the largest
 *     Write payload seen on the conversation (set_max_iosize, NFRAGS), not
 *     in bytes, and pad_count is only used for position-zero read chunks.
 *     RC_RDMA_READ_REQUEST/RESPONSE_* work the same way by PSN.
 *   - iWARP (dissect_rpcrdma_iwarp_heur, data = rdmap_info_t): opcode is
 *     RDMAP's (RDMA_WRITE 0, RDMA_READ_REQUEST 1, RDMA_READ_RESPONSE 2,
 *     RDMA_SEND 3, RDMA_SEND_INVALIDATE 4; the solicited-event Sends are
 *     not taken).  A Write is found by steering_tag and tagged_offset
 *     (add_iwarp_fragment) and numbered by its byte offset in the chunk;
 *     when last_flag is set and all the list's segments have their bytes,
 *     XDR padding to 4 octets is added.  A Read Request is filed under
 *     read_request->sink_stag (the whole rdmap_request_t is copied), and a
 *     Read Response's steering_tag/tagged_offset are mapped through it back
 *     to the source STag/offset the read chunk named; the last one that
 *     completes the read list dissects the whole RPC call (the frame of the
 *     reduced call shows its rest as data on the first pass and "reassembled
 *     in" that frame on the second).  A Send is one message when
 *     last_flag is set and message_offset is 0 (add_send_fragment).
 *   - Order: the call (chunks set up), then the Writes, then the reply's
 *     Send.  For a write chunk (RDMA_MSG reply carrying a write list) the
 *     first pass runs rpc on the reduced reply with rpcrdma_is_reduced()
 *     true so that nfs reports where the data was taken out
 *     (rpcrdma_insert_offset), splits the reply there into fragments, and
 *     only the second pass completes the reassembly and dissects the whole
 *     reply (so one-pass tshark still shows the reduced reply).  A reply
 *     chunk (RDMA_NOMSG) is completed on the reply's Send on the first pass.
 *   - Writes and Read traffic are never claimed (the heuristic returns
 *     FALSE, but for the Read Response that completes a read chunk), so our
 *     list goes on to show their payload as data.
 *
 * The iWARP entry is used rather than the InfiniBand one because it counts
 * in bytes: we hand whole messages (rdmap.c reassembles DDP segments), and
 * a server may fill one chunk segment with several Writes of different
 * sizes, which the InfiniBand numbering by largest Write cannot place.
 */
#include <wireshark.h>
#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/exceptions.h>
#include <epan/dissectors/packet-infiniband.h>
#include <epan/dissectors/packet-iwarp-ddp-rdmap.h>

#include <iwarp/rdmap.h>

#include "plugin.h"

/* IB service id of an rdma_cm (IP-based) connection: ULP 0x01, protocol TCP
 * (IBTA Annex A11), the TCP port in the low 16 bits. */
#define ULP_SID_IP_TCP 0x0000000001060000ULL

/* packet-nvme-rdma.c reads the NVMe queue id of a connection at this offset
 * of conversation_infiniband_data.mad_private_data (where its copy of the IB
 * CM REQ keeps private data byte 2). */
#define ULP_NVME_QID_MAD_OFF 178

/* Size of the NVMe RDMA CM request (NVMe over Fabrics, RDMA transport). */
#define ULP_NVME_CM_REQ_LEN 32

/* Made-up QP numbers (24 bits): 0xc00000 + 2 * connection + side. */
#define ULP_QP_BASE 0xc00000u

enum ulp_kind { ULP_NVME, ULP_RPCRDMA, ULP_ISER, ULP_COUNT };

struct ulp_target {
	const char *proto_name;	/* filter name of Wireshark's protocol */
	const char *ws_list;	/* Wireshark's heuristic list whose entry we call */
	const char *short_name;	/* our heuristic on rdmap.payload */
	const char *display_name;
	gboolean needs_ib_conv;	/* looks for the InfiniBand QP conversations */
	int proto;
	heur_dissector_t fn;	/* its entry on ws_list */
};

static struct ulp_target targets[ULP_COUNT] = {
	[ULP_NVME] = { "nvme-rdma", "infiniband.payload", "nvme_rdma_iwarp",
		       "NVMe over Fabrics (RDMA) on iWARP", TRUE, -1, NULL },
	[ULP_RPCRDMA] = { "rpcordma", "iwarp_ddp_rdmap", "rpcordma_iwarp_swiwarp",
			  "RPC-over-RDMA on iWARP", FALSE, -1, NULL },
	[ULP_ISER] = { "iser", "infiniband.payload", "iser_iwarp", "iSER on iWARP", TRUE, -1,
		       NULL },
};

static int proto_ib = -1;

/* Per MPA connection. */
struct ulp_conv {
	gboolean ib_ready;	/* QP conversations created */
	guint32 qp[2];		/* of the side sending direction 0 / 1 */
	gboolean rpcrdma;	/* rpcordma took a Send on this connection */
};

static struct ulp_conv *ulp_conv_get(packet_info *pinfo, const struct swiwarp_payload_info *pi)
{
	struct ulp_conv *uc;
	conversation_t *conv;
	conversation_infiniband_data *d;
	int s;

	if (!pi->ulp_conv)
		return NULL;
	uc = (struct ulp_conv *)*pi->ulp_conv;
	if (uc)
		return uc;
	uc = wmem_new0(wmem_file_scope(), struct ulp_conv);
	*pi->ulp_conv = uc;
	/* Roles and the service port are only known from the MPA Request. */
	if (!pi->handshake || proto_ib < 0 || !pi->addr || !pi->port)
		return uc;
	for (s = 0; s < 2; s++)
		uc->qp[s] = (ULP_QP_BASE + 2 * pi->conn_id + (guint32)s) & 0xffffffu;
	for (s = 0; s < 2; s++) {
		conv = conversation_new(pinfo->num, &pi->addr[s], &pi->addr[s], CONVERSATION_IBQP,
					uc->qp[s], uc->qp[s], NO_ADDR2 | NO_PORT2);
		d = wmem_new0(wmem_file_scope(), conversation_infiniband_data);
		/* side 0 connected to side 1's port */
		d->service_id = ULP_SID_IP_TCP | (pi->port[1] & 0xffffu);
		/* the data this conversation describes flows *to* side s */
		d->client_to_server = s == 1;
		d->src_qp = uc->qp[!s];
		if (pi->req_pd && pi->req_pd_len >= 4)
			memcpy(&d->mad_private_data[ULP_NVME_QID_MAD_OFF], pi->req_pd + 2, 2);
		conversation_add_proto_data(conv, proto_ib, d);
	}
	/* The connection itself (iser looks here first; nvme-rdma keeps its
	 * queue state here). */
	conv = conversation_new(pinfo->num, &pi->addr[0], &pi->addr[1], CONVERSATION_IBQP,
				uc->qp[0], uc->qp[1], 0);
	d = wmem_new0(wmem_file_scope(), conversation_infiniband_data);
	d->service_id = ULP_SID_IP_TCP | (pi->port[1] & 0xffffu);
	d->client_to_server = TRUE;
	d->src_qp = uc->qp[0];
	conversation_add_proto_data(conv, proto_ib, d);
	uc->ib_ready = TRUE;
	return uc;
}

/* The InfiniBand opcode with the same meaning as this complete message. */
static gboolean ib_opcode(const struct swiwarp_payload_info *pi, guint8 *op)
{
	switch (pi->opcode) {
	case IWARP_OP_SEND:
	case IWARP_OP_SEND_SE:
		*op = RC_SEND_ONLY;
		return TRUE;
	case IWARP_OP_SEND_INVALIDATE:
	case IWARP_OP_SEND_SE_INVALIDATE:
		*op = RC_SEND_ONLY_INVAL;
		return TRUE;
	case IWARP_OP_WRITE:
		*op = RC_RDMA_WRITE_ONLY;
		return TRUE;
	default:
		return FALSE;
	}
}

static gboolean call_target(enum ulp_kind k, tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			    void *data)
{
	const struct ulp_target *t = &targets[k];
	struct swiwarp_payload_info *pi = (struct swiwarp_payload_info *)data;
	struct infinibandinfo info;
	struct ulp_conv *uc = NULL;
	guint32 sport = pinfo->srcport, dport = pinfo->destport;
	volatile gboolean r = FALSE;

	if (!pi || !t->fn)
		return FALSE;
	/* An NVMe-oF queue is opened with a 32-byte NVMe RDMA CM request
	 * (record format 0, then the queue id and sizes) as connect private
	 * data; without it this is some other ULP on the NVMe port. */
	if (k == ULP_NVME && (!pi->req_pd || pi->req_pd_len < ULP_NVME_CM_REQ_LEN ||
			      pi->req_pd[0] != 0 || pi->req_pd[1] != 0))
		return FALSE;
	memset(&info, 0, sizeof(info));
	if (!ib_opcode(pi, &info.opCode))
		return FALSE;
	/* Of these two, only NVMe's data is moved by Writes that Wireshark's
	 * dissector can place (iSER's is not reassembled from Writes). */
	if (info.opCode == RC_RDMA_WRITE_ONLY && k != ULP_NVME)
		return FALSE;
	info.payload_tree = tree;
	if (pi->tagged) {
		info.reth_remote_key = pi->stag;
		info.reth_remote_address = pi->to;
		info.reth_dma_length = tvb_reported_length(tvb);
		/* nvme-rdma files a transfer under its packet sequence number and
		 * finds it again by it when the frame is revisited: any number that
		 * is the same on every pass and differs between messages does. */
		info.packet_seq_num = (pinfo->num << 12) ^ pi->stag;
	}
	if (t->needs_ib_conv) {
		uc = ulp_conv_get(pinfo, pi);
		if (!uc || !uc->ib_ready)
			return FALSE;
		pinfo->srcport = uc->qp[pi->dir ? 1 : 0];
		pinfo->destport = uc->qp[pi->dir ? 0 : 1];
	}
	TRY {
		r = t->fn(tvb, pinfo, tree, &info);
	}
	FINALLY {
		pinfo->srcport = sport;
		pinfo->destport = dport;
	}
	ENDTRY;
	return r;
}

/* RPC-over-RDMA header: XID, version, credits, message type. */
#define ULP_RPCRDMA_HDR_LEN 16
#define ULP_RPCRDMA_VERS_OFF 4
#define ULP_RPCRDMA_VERSION 1

/* rpcordma through its iWARP entry (see "How rpcordma stitches chunks"). */
static gboolean call_rpcrdma(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			     const struct swiwarp_payload_info *pi)
{
	const struct ulp_target *t = &targets[ULP_RPCRDMA];
	struct ulp_conv *uc = ulp_conv_get(pinfo, pi);
	rdmap_info_t info;
	rdmap_request_t rr;
	gboolean send = FALSE, r;

	memset(&info, 0, sizeof(info));
	switch (pi->opcode) {
	case IWARP_OP_SEND:
	case IWARP_OP_SEND_SE:
		/* The solicited-event bit means nothing to RPC-over-RDMA, and
		 * rpcordma does not take the SE opcodes. */
		info.opcode = RDMA_SEND;
		send = TRUE;
		break;
	case IWARP_OP_SEND_INVALIDATE:
	case IWARP_OP_SEND_SE_INVALIDATE:
		info.opcode = RDMA_SEND_INVALIDATE;
		send = TRUE;
		break;
	case IWARP_OP_WRITE:
		info.opcode = RDMA_WRITE;
		break;
	case IWARP_OP_READ_RESPONSE:
		info.opcode = RDMA_READ_RESPONSE;
		break;
	case IWARP_OP_READ_REQUEST:
		if (!pi->read_req)
			return FALSE;
		info.opcode = RDMA_READ_REQUEST;
		rr.sink_stag = pi->read_req->sink_stag;
		rr.sink_toffset = pi->read_req->sink_to;
		rr.source_stag = pi->read_req->src_stag;
		rr.source_toffset = pi->read_req->src_to;
		rr.message_size = pi->read_req->size;
		info.read_request = &rr;
		break;
	default:
		return FALSE;
	}
	/* Chunk traffic only where rpcordma has seen RPC-over-RDMA: it would
	 * not find the STags of other ULPs' Writes anyway, but would keep
	 * state for every connection it is shown. */
	if (!send && (!uc || !uc->rpcrdma))
		return FALSE;
	/* Wireshark 4.0's check reads the type before it looks at the length,
	 * so shorter Sends would end as an exception ("malformed"). */
	if (send && (tvb_captured_length(tvb) < ULP_RPCRDMA_HDR_LEN ||
		     tvb_get_ntohl(tvb, ULP_RPCRDMA_VERS_OFF) != ULP_RPCRDMA_VERSION))
		return FALSE;
	/* rdmap.c hands each message whole, so each is its own last segment:
	 * rpcordma then takes a Send as complete and checks a chunk for its
	 * end on every Write. */
	info.last_flag = TRUE;
	info.is_tagged = pi->tagged;
	if (pi->tagged) {
		info.steering_tag = pi->stag;
		info.tagged_offset = pi->to;
	} else {
		info.queue_number = pi->qn;
		info.message_seq_num = pi->msn;
		info.message_offset = 0;
	}
	r = t->fn(tvb, pinfo, tree, &info);
	if (r && send && uc)
		uc->rpcrdma = TRUE;
	return r;
}

static gboolean try_nvme(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
	return call_target(ULP_NVME, tvb, pinfo, tree, data);
}

static gboolean try_rpcrdma(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
	const struct swiwarp_payload_info *pi = (const struct swiwarp_payload_info *)data;

	if (!pi || !targets[ULP_RPCRDMA].fn)
		return FALSE;
	return call_rpcrdma(tvb, pinfo, tree, pi);
}

static gboolean try_iser(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
	return call_target(ULP_ISER, tvb, pinfo, tree, data);
}

static void find_ws_heur(const gchar *table_name, heur_dtbl_entry_t *entry, gpointer user_data)
{
	struct ulp_target *t = (struct ulp_target *)user_data;

	if (!t->fn && entry->protocol && entry->protocol == find_protocol_by_id(t->proto))
		t->fn = entry->dissector;
}

void swiwarp_handoff_ulp(void)
{
	static const heur_dissector_t adapters[ULP_COUNT] = {
		[ULP_NVME] = try_nvme, [ULP_RPCRDMA] = try_rpcrdma, [ULP_ISER] = try_iser,
	};
	int k;

	proto_ib = proto_get_id_by_filter_name("infiniband");
	for (k = 0; k < ULP_COUNT; k++) {
		struct ulp_target *t = &targets[k];

		t->proto = proto_get_id_by_filter_name(t->proto_name);
		if (t->proto < 0)
			continue;
		heur_dissector_table_foreach(t->ws_list, find_ws_heur, t);
		if (!t->fn || (t->needs_ib_conv && proto_ib < 0))
			continue;
		heur_dissector_add(SWIWARP_PAYLOAD_HEUR_LIST, adapters[k], t->display_name,
				   t->short_name, t->proto, HEURISTIC_ENABLE);
	}
}
