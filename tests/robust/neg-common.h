/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the programs of suite 80-robust-neg share (tests/robust/neg-guest.sh
 * runs them): robust-neg (the verbs cases between a server and a client),
 * robust-limits (registration limits) and robust-safety (issue 15's
 * memory-safety cases).  The verbs helpers themselves are in lab-verbs.h.
 */
#ifndef SWIWARP_TESTS_NEG_COMMON_H
#define SWIWARP_TESTS_NEG_COMMON_H

#include "lab-verbs.h"

/* how long a CM event that must come may take */
#define EVENT_MS 60000
#define PG 4096
/* bytes of memory nothing may write, and of data that must not land */
#define CANARY 0xa5
#define EVIL 0x33

static inline int wait_wc(struct ibv_cq *cq, int ms, struct ibv_wc *wc)
{
	return lab_wait_wc(cq, ms, wc, 500);	/* poll every 0.5 ms */
}

#endif
