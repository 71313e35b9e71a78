/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internal interfaces between the parts of the swiwarp Wireshark plugin
 * (plugin.c, mpa.c, rdmap.c, ulp.c, stats.c).  Wire-format names, offsets
 * and parsers come straight from the shared core in include/iwarp/; this
 * header only holds what is specific to the plugin.
 */
#ifndef SWIWARP_PLUGIN_H
#define SWIWARP_PLUGIN_H

#include <epan/packet.h>

void swiwarp_register_mpa(void);
void swiwarp_handoff_mpa(void);
void swiwarp_register_rdmap(void);
void swiwarp_handoff_rdmap(void);
void swiwarp_register_stats(void);
void swiwarp_handoff_ulp(void);

/*
 * What MPA hands to DDP with every ULPDU (the "data" argument of the rddp
 * dissector).  The ULP state slot lets rdmap.c keep per-connection state in
 * the MPA conversation without MPA knowing its layout.
 */
struct swiwarp_ulpdu_info {
	guint32 conn_id;	/* MPA connection number, 1-based */
	int dir;		/* 0: initiator to responder (or first seen side) */
	void **ulp_state;	/* per-connection state owned by rdmap.c */
	const char *conn_label;	/* "a:p -> b:p" of direction 0, file scope */
	gboolean from_start;	/* handshake seen, this direction not resynced:
				 * the first message of every queue has MSN 1 */
	gboolean handshake;	/* MPA Request seen: direction 0 is the initiator */
	const address *addr;	/* addr[0], port[0]: the side sending direction 0 */
	const guint32 *port;
	const guint8 *req_pd;	/* ULP private data of the MPA Request (after the
				 * RFC 6581 IRD/ORD word), file scope; NULL if none */
	guint req_pd_len;
	void **ulp_conv;	/* per-connection state owned by ulp.c */
};

/* One record per RDMAP message segment for the "rdmap" tap. */
struct swiwarp_tap_rec {
	guint32 conn_id;
	const char *conn_label;
	int dir;
	guint8 opcode;
	gboolean last;		/* DDP L bit: message complete */
	guint32 bytes;		/* ULP payload bytes carried by this segment */
	gboolean read_done;	/* a Read Response completed a matched request */
	double read_latency_ms;
};

#define SWIWARP_TAP_NAME "rdmap"

/* Heuristic list for payloads of complete RDMAP messages (future "dpi"). */
#define SWIWARP_PAYLOAD_HEUR_LIST "rdmap.payload"

struct iwarp_rdmap_read_req;

/* Passed to "rdmap.payload" heuristics with each complete message payload,
 * and with each Read Request (its 28-byte header as the tvb, read_req set;
 * opcode IWARP_OP_READ_REQUEST). */
struct swiwarp_payload_info {
	guint8 opcode;
	gboolean tagged;
	guint32 stag;		/* tagged: STag */
	guint64 to;		/* tagged: tagged offset of the first byte */
	guint32 qn, msn;	/* untagged */
	guint32 conn_id;
	int dir;
	/* The connection as MPA knows it (see struct swiwarp_ulpdu_info). */
	gboolean handshake;
	const address *addr;
	const guint32 *port;
	const guint8 *req_pd;
	guint req_pd_len;
	void **ulp_conv;
	const struct iwarp_rdmap_read_req *read_req;	/* Read Request only */
};

#endif
