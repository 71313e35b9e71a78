// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: what the device reports.  Device counters, shown by the RDMA
 * core as the hw counters of port 1 (rdma statistic show link swiwarpN/1,
 * and sysfs ports/1/hw_counters/): per-CPU (see struct swiwarp_stats in
 * swiwarp.h), named and summed here when the core asks.  Per QP, the
 * Terminates of its connection and its rings' state (rdma res show qp
 * -dd); per CQ, its completions written and not yet polled (rdma res show
 * cq -dd).
 */

#include <linux/percpu.h>
#include <net/netlink.h>
#include <rdma/restrack.h>

#include "swiwarp.h"
#include "iwarp/rdmap.h"

/* Names as the RDMA core shows them; one per enum swiwarp_stat. */
static const struct rdma_stat_desc swiwarp_stat_descs[] = {
	[SWIWARP_STAT_TX_FPDUS].name = "tx_fpdus",
	[SWIWARP_STAT_TX_PAYLOAD_BYTES].name = "tx_payload_bytes",
	[SWIWARP_STAT_RX_FPDUS].name = "rx_fpdus",
	[SWIWARP_STAT_RX_PAYLOAD_BYTES].name = "rx_payload_bytes",
	[SWIWARP_STAT_RX_CRC_ERRORS].name = "rx_crc_errors",
	[SWIWARP_STAT_TX_TERM_RDMAP].name = "tx_term_rdmap",
	[SWIWARP_STAT_TX_TERM_DDP].name = "tx_term_ddp",
	[SWIWARP_STAT_TX_TERM_MPA].name = "tx_term_mpa",
	[SWIWARP_STAT_RX_TERM_RDMAP].name = "rx_term_rdmap",
	[SWIWARP_STAT_RX_TERM_DDP].name = "rx_term_ddp",
	[SWIWARP_STAT_RX_TERM_MPA].name = "rx_term_mpa",
	[SWIWARP_STAT_ZC_WQES].name = "zc_wqes",
	[SWIWARP_STAT_ZC_FPDUS].name = "zc_fpdus",
	[SWIWARP_STAT_ZC_BYTES].name = "zc_bytes",
	[SWIWARP_STAT_ZC_COPIED].name = "zc_copied",
	[SWIWARP_STAT_DOORBELLS].name = "doorbells",
	[SWIWARP_STAT_MPA_FAILURES].name = "mpa_failures",
};

static_assert(ARRAY_SIZE(swiwarp_stat_descs) == SWIWARP_STAT_COUNT);

/*
 * A Terminate sent (sent) or received on qp: counted by the layer it
 * names (RDMAP, DDP or the LLP, MPA), and noted in the QP for
 * swiwarp_fill_res_qp_entry().  A received one naming a reserved layer is
 * counted nowhere (the layer field is the peer's word, not ours) but
 * noted as it came.
 */
void swiwarp_stat_term(struct swiwarp_qp *qp, bool sent, u8 layer_etype,
		       u8 ecode)
{
	struct swiwarp_dev *sdev = qp->sdev;
	enum swiwarp_stat base = sent ? SWIWARP_STAT_TX_TERM_RDMAP :
		SWIWARP_STAT_RX_TERM_RDMAP;
	u32 seen = SWIWARP_TERM_SEEN | layer_etype << 8 | ecode;

	if (sent)
		WRITE_ONCE(qp->term_tx_seen, seen);
	else
		WRITE_ONCE(qp->term_rx_seen, seen);
	switch (layer_etype >> 4) {
	case IWARP_TERM_LAYER_RDMAP:
		swiwarp_stat_inc(sdev, base);
		break;
	case IWARP_TERM_LAYER_DDP:
		swiwarp_stat_inc(sdev, base + 1);
		break;
	case IWARP_TERM_LAYER_LLP:
		swiwarp_stat_inc(sdev, base + 2);
		break;
	default:
		break;
	}
}

int swiwarp_stats_alloc(struct swiwarp_dev *sdev)
{
	sdev->stats = alloc_percpu(struct swiwarp_stats);
	return sdev->stats ? 0 : -ENOMEM;
}

void swiwarp_stats_free(struct swiwarp_dev *sdev)
{
	free_percpu(sdev->stats);
	sdev->stats = NULL;
}

struct rdma_hw_stats *swiwarp_alloc_hw_port_stats(struct ib_device *ibdev,
						  u32 port)
{
	return rdma_alloc_hw_stats_struct(swiwarp_stat_descs,
					  ARRAY_SIZE(swiwarp_stat_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/*
 * Always all counters at once (the core's netlink path asks for index 0
 * and takes the return value as the count filled in).  A sum read while
 * another CPU adds may miss that addition, never tear a value: each is
 * a u64 added to in one instruction on the 64-bit machines we build for.
 */
int swiwarp_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			 u32 port, int index)
{
	struct swiwarp_dev *sdev = to_sdev(ibdev);
	int cpu, i;

	if (port != 1 || stats->num_counters != SWIWARP_STAT_COUNT)
		return -EINVAL;
	for (i = 0; i < SWIWARP_STAT_COUNT; i++)
		stats->value[i] = 0;
	for_each_possible_cpu(cpu) {
		const struct swiwarp_stats *s = per_cpu_ptr(sdev->stats, cpu);

		for (i = 0; i < SWIWARP_STAT_COUNT; i++)
			stats->value[i] += READ_ONCE(s->v[i]);
	}
	return SWIWARP_STAT_COUNT;
}

/* One Terminate as three driver attributes: PREFIX_layer, _type, _code. */
static int swiwarp_put_term(struct sk_buff *msg, const char *prefix, u32 seen)
{
	static const char *const part[] = { "layer", "type", "code" };
	const u32 val[] = { (seen >> 12) & 0xf, (seen >> 8) & 0xf, seen & 0xff };
	char name[24];
	int i;

	if (!(seen & SWIWARP_TERM_SEEN))
		return 0;
	for (i = 0; i < ARRAY_SIZE(part); i++) {
		snprintf(name, sizeof(name), "%s_%s", prefix, part[i]);
		if (rdma_nl_put_driver_u32(msg, name, val[i]))
			return -EMSGSIZE;
	}
	return 0;
}

/*
 * Ring slots flagged VALID: for the SQ and RQ the work requests posted and
 * not yet taken by the kernel, for a user CQ the completions written and
 * not yet polled.  A snapshot without the queue's lock (an answer to "who
 * holds the next step", not an exact count while traffic flows), so the
 * flags are read once each and nothing else is touched.
 */
static u32 swiwarp_count_valid(const void *queue, u32 num, size_t size,
			       size_t flags_offset, u16 valid)
{
	u32 i, n = 0;

	if (!queue)
		return 0;
	for (i = 0; i < num; i++) {
		const u16 *flags = queue + i * size + flags_offset;

		if (READ_ONCE(*flags) & valid)
			n++;
	}
	return n;
}

/*
 * The driver details of rdma res show qp -dd: the Terminate this QP sent
 * and the one it received on its current connection (term_sent_layer,
 * _type, _code and term_rcvd_*; RFC 5040 section 7.1), if any, and where
 * its rings stand: the kernel's consumer index of the SQ and RQ (sq_get,
 * rq_get) and the work requests posted but not yet taken (sq_posted,
 * rq_posted; a QP on an SRQ has no RQ of its own).  They say why a
 * connection died, or which side holds a stalled one (no receive posted,
 * a send never taken), without the kernel log, per QP, for user and
 * kernel consumers alike.
 */
int swiwarp_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct swiwarp_qp *qp = to_sqp(ibqp);
	struct nlattr *table;
	u32 sq_posted, rq_posted;

	sq_posted = swiwarp_count_valid(qp->sendq, qp->num_sqe,
					sizeof(struct swiwarp_sqe),
					offsetof(struct swiwarp_sqe, flags),
					SWIWARP_WQE_VALID);
	rq_posted = swiwarp_count_valid(qp->recvq, qp->num_rqe,
					sizeof(struct swiwarp_rqe),
					offsetof(struct swiwarp_rqe, flags),
					SWIWARP_WQE_VALID);
	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (swiwarp_put_term(msg, "term_sent", READ_ONCE(qp->term_tx_seen)) ||
	    swiwarp_put_term(msg, "term_rcvd", READ_ONCE(qp->term_rx_seen)) ||
	    rdma_nl_put_driver_u32(msg, "sq_get", READ_ONCE(qp->sq_get)) ||
	    rdma_nl_put_driver_u32(msg, "sq_posted", sq_posted) ||
	    (qp->recvq &&
	     (rdma_nl_put_driver_u32(msg, "rq_get", READ_ONCE(qp->rq_get)) ||
	      rdma_nl_put_driver_u32(msg, "rq_posted", rq_posted)))) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/*
 * The driver details of rdma res show cq -dd: the producer index (cq_put)
 * and the completions written and not yet polled (cq_unpolled).  A stalled
 * user whose CQ holds unpolled completions is not waiting for the wire.
 */
int swiwarp_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct swiwarp_cq *cq = to_scq(ibcq);
	struct nlattr *table;
	u32 unpolled;

	if (cq->user)
		unpolled = swiwarp_count_valid(cq->queue, cq->num_cqe,
					       sizeof(struct swiwarp_cqe),
					       offsetof(struct swiwarp_cqe, flags),
					       SWIWARP_CQE_VALID);
	else
		unpolled = READ_ONCE(cq->cq_put) - READ_ONCE(cq->cq_get);
	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "cq_put", READ_ONCE(cq->cq_put)) ||
	    rdma_nl_put_driver_u32(msg, "cq_unpolled", unpolled)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
