// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: device counters, shown by the RDMA core as the hw counters of
 * port 1 (rdma statistic show link swiwarpN/1, and sysfs
 * ports/1/hw_counters/).  The counters themselves are per-CPU (see struct
 * swiwarp_stats in swiwarp.h); this file names them and sums them when
 * the core asks.
 */

#include <linux/percpu.h>

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
 * A Terminate sent (sent) or received, by the layer it names: RDMAP, DDP
 * or the LLP (MPA).  A received one naming a reserved layer is counted
 * nowhere: the layer field is the peer's word, not ours.
 */
void swiwarp_stat_term(struct swiwarp_dev *sdev, bool sent, u8 layer)
{
	enum swiwarp_stat base = sent ? SWIWARP_STAT_TX_TERM_RDMAP :
		SWIWARP_STAT_RX_TERM_RDMAP;

	switch (layer) {
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
