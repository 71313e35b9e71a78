/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * swiwarp: zero-copy TX (swiwarp_zcopy.c) as the TX engine uses it, all
 * under the QP's tx_lock.
 */

#ifndef SWIWARP_ZCOPY_H
#define SWIWARP_ZCOPY_H

#include "swiwarp.h"

int swiwarp_zc_init(struct swiwarp_qp *qp);
void swiwarp_zc_free(struct swiwarp_qp *qp);
bool swiwarp_zc_want(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe);
bool swiwarp_zc_rresp(struct swiwarp_qp *qp);
void swiwarp_zc_begin(struct swiwarp_qp *qp);
void swiwarp_zc_frame(struct swiwarp_qp *qp);
int swiwarp_zc_send(struct swiwarp_qp *qp, u32 i, u32 off, int flags);
void swiwarp_zc_queue(struct swiwarp_qp *qp, int status);
void swiwarp_zc_reap(struct swiwarp_qp *qp, bool flush);
void swiwarp_zc_abort(struct swiwarp_qp *qp);

/* No retired WQE waits for its completion. */
static inline bool swiwarp_zc_ring_empty(struct swiwarp_qp *qp)
{
	return qp->tx.zc_get == qp->tx.zc_put;
}

/* Every SQ slot is held by a WQE waiting for its completion. */
static inline bool swiwarp_zc_ring_full(struct swiwarp_qp *qp)
{
	return qp->tx.zc_put - qp->tx.zc_get >= qp->num_sqe;
}

#endif /* SWIWARP_ZCOPY_H */
