// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * "-z rdmap,tree": per connection (one QP per iWARP connection) and
 * direction, RDMAP message segments by opcode, payload bytes, completed
 * messages, and RDMA Read latency (request to last response segment).
 */
#include <wireshark.h>
#include <epan/packet.h>
#include <epan/stats_tree.h>

#include <iwarp/rdmap.h>

#include "plugin.h"

static int st_root = -1;
static int st_reads = -1;

static const char *const root_name = "iWARP connections (one QP each)";
static const char *const reads_name = "RDMA Read latency (ms), all connections";

static void stats_init(stats_tree *st)
{
	st_root = stats_tree_create_node(st, root_name, 0, STAT_DT_INT, TRUE);
	st_reads = stats_tree_create_node(st, reads_name, 0, STAT_DT_FLOAT, FALSE);
}

static tap_packet_status stats_packet(stats_tree *st, packet_info *pinfo, epan_dissect_t *edt,
				      const void *p, tap_flags_t flags)
{
	const struct swiwarp_tap_rec *r = (const struct swiwarp_tap_rec *)p;
	gchar conn[160], dir[200], op[260];
	int conn_node, dir_node, op_node;

	g_snprintf(conn, sizeof(conn), "connection %u: %s", r->conn_id,
		   r->conn_label ? r->conn_label : "?");
	/* Node names only need to be unique among their siblings. */
	g_snprintf(dir, sizeof(dir), "direction %d%s", r->dir,
		   r->dir ? " (to the initiator)" : " (from the initiator)");
	g_snprintf(op, sizeof(op), "%s", iwarp_rdmap_opcode_name(r->opcode));

	tick_stat_node(st, root_name, 0, FALSE);
	conn_node = tick_stat_node(st, conn, st_root, TRUE);
	dir_node = tick_stat_node(st, dir, conn_node, TRUE);
	op_node = tick_stat_node(st, op, dir_node, TRUE);
	increase_stat_node(st, "payload bytes", op_node, FALSE, (gint)r->bytes);
	if (r->last)
		tick_stat_node(st, "complete messages", op_node, FALSE);
	if (r->read_done) {
		avg_stat_node_add_value_float(st, reads_name, 0, FALSE, (gfloat)r->read_latency_ms);
		avg_stat_node_add_value_float(st, "RDMA Read latency (ms)", conn_node, FALSE,
					      (gfloat)r->read_latency_ms);
	}
	return TAP_PACKET_REDRAW;
}

void swiwarp_register_stats(void)
{
	stats_tree_register_plugin(SWIWARP_TAP_NAME, "rdmap", "iWARP/RDMAP operations", 0,
				   stats_packet, stats_init, NULL);
}
