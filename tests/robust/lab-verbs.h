/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Small helpers shared by the lab's verbs test programs (tests/robust/prot.c,
 * tests/robust/neg.c, tests/soak/soak.c): a monotonic clock in milliseconds
 * and an rdma_cm event wait that gives up after a timeout, so a test whose
 * peer never answers reports it instead of hanging.
 */
#ifndef SWIWARP_TESTS_LAB_VERBS_H
#define SWIWARP_TESTS_LAB_VERBS_H

#include <poll.h>
#include <time.h>

#include <rdma/rdma_cma.h>

static inline long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The next CM event on ch, or NULL if none arrives within ms. */
static inline struct rdma_cm_event *get_event(struct rdma_event_channel *ch,
					      int ms)
{
	struct rdma_cm_event *ev;
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	if (poll(&p, 1, ms) <= 0)
		return NULL;
	if (rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

#endif
