/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Small helpers shared by the lab's verbs test programs (tests/robust/prot.c,
 * tests/robust/neg.c, tests/soak/soak.c): a monotonic clock in milliseconds,
 * an rdma_cm event wait and a completion wait that give up after a timeout,
 * so a test whose peer never answers reports it instead of hanging.
 */
#ifndef SWIWARP_TESTS_LAB_VERBS_H
#define SWIWARP_TESTS_LAB_VERBS_H

#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

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

/*
 * Polls cq every poll_us microseconds for one completion, for at most ms.
 * Returns its status (wc filled in), or -1 on a poll error or timeout.
 */
static inline int lab_wait_wc(struct ibv_cq *cq, int ms, struct ibv_wc *wc,
			      unsigned int poll_us)
{
	long long end = now_ms() + ms;

	while (now_ms() < end) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return -1;
		if (n == 1)
			return (int)wc->status;
		usleep(poll_us);
	}
	return -1;
}

#endif
