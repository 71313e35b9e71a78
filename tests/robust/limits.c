// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * robust-limits: registration limits, no peer (80-robust-neg, guest 2):
 *
 *   robust-limits memlock   run unprivileged under a small RLIMIT_MEMLOCK:
 *                           1 MiB must not register, 16 KiB must, and again
 *                           once deregistered; rings are charged too (below)
 *   robust-limits regfail   registrations that must fail (an unmapped range,
 *                           more than max_mr_size), then a good one
 *   robust-limits memcg     run in a memory cgroup far smaller than 64 MiB:
 *                           64 MiB of untouched memory must fail with ENOMEM,
 *                           1 MiB register afterwards
 *
 * Each prints PASS:/FAIL:/SKIP: lines robust.neg.memlock.* or
 * robust.neg.regfail.* (the names it had as "robust-neg local").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "neg-common.h"

/*
 * memlock, continued: CQ and QP rings are charged to RLIMIT_MEMLOCK like
 * pinned MRs (kernel swiwarp_ring_alloc()), so a process without
 * CAP_IPC_LOCK cannot make the kernel hold more ring memory than it may
 * lock.  With the 64 KiB limit of the test: an 8 MiB CQ ring (262144 CQEs,
 * what libfabric asks for) and a 4096-WQE send queue are refused with
 * ENOMEM, small CQs are created until the limit and no further (each ring
 * takes at least a page), and destroying them gives the charge back.
 */
static int memlock_rings(struct ibv_context *ctx, struct ibv_pd *pd,
			 const struct rlimit *rl)
{
	const size_t max_small = 256;
	size_t limit_pages = rl->rlim_cur / PG;
	struct ibv_cq *cqs[256], *cq;
	struct ibv_qp_init_attr qa;
	struct ibv_qp *qp;
	size_t n = 0, i;
	int fails = 0;

	errno = 0;
	cq = ibv_create_cq(ctx, 262144, NULL, NULL, 0);
	if (cq) {
		printf("FAIL: robust.neg.memlock.ring_cq_over [an 8 MiB CQ ring under RLIMIT_MEMLOCK %llu]\n",
		       (unsigned long long)rl->rlim_cur);
		ibv_destroy_cq(cq);
		fails++;
	} else if (errno != ENOMEM) {
		printf("FAIL: robust.neg.memlock.ring_cq_over [refused with %s, not ENOMEM]\n",
		       strerror(errno));
		fails++;
	} else {
		printf("PASS: robust.neg.memlock.ring_cq_over (262144 CQEs: %s)\n", strerror(errno));
	}

	errno = 0;
	while (n < max_small && (cqs[n] = ibv_create_cq(ctx, 64, NULL, NULL, 0)))
		n++;
	if (n == 0 || n > limit_pages || n == max_small || errno != ENOMEM) {
		printf("FAIL: robust.neg.memlock.ring_cq_bounded [%zu small CQs under a %zu-page limit, then %s]\n",
		       n, limit_pages, n == max_small ? "no refusal" : strerror(errno));
		fails++;
	} else {
		printf("PASS: robust.neg.memlock.ring_cq_bounded (%zu small CQs under a %zu-page limit, then %s)\n",
		       n, limit_pages, strerror(errno));
	}

	/* one CQ kept for the QP below; the rest give their charge back */
	for (i = 1; i < n; i++)
		ibv_destroy_cq(cqs[i]);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!cq && n > 1) {
		printf("FAIL: robust.neg.memlock.ring_again [a small CQ after destroying %zu: %s]\n",
		       n - 1, strerror(errno));
		fails++;
	} else if (n > 1) {
		printf("PASS: robust.neg.memlock.ring_again\n");
	}
	if (cq)
		ibv_destroy_cq(cq);

	if (n > 0) {
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = qa.recv_cq = cqs[0];
		qa.qp_type = IBV_QPT_RC;
		qa.cap.max_send_wr = 4096;
		qa.cap.max_recv_wr = 1;
		qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
		errno = 0;
		qp = ibv_create_qp(pd, &qa);
		if (qp) {
			printf("FAIL: robust.neg.memlock.ring_qp_over [a 4096-WQE SQ under RLIMIT_MEMLOCK %llu]\n",
			       (unsigned long long)rl->rlim_cur);
			ibv_destroy_qp(qp);
			fails++;
		} else if (errno != ENOMEM) {
			printf("FAIL: robust.neg.memlock.ring_qp_over [refused with %s, not ENOMEM]\n",
			       strerror(errno));
			fails++;
		} else {
			printf("PASS: robust.neg.memlock.ring_qp_over (%s)\n", strerror(errno));
		}
		ibv_destroy_cq(cqs[0]);
	}
	return fails;
}

static int local(const char *what)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = l && l[0] ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_device_attr da;
	struct ibv_mr *mr;
	size_t len = 1024 * 1024;
	uint8_t *p;
	int fails = 0;

	if (!pd) {
		printf("FAIL: robust.neg.%s [no device/PD: %s]\n", what, strerror(errno));
		return 1;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!strcmp(what, "memcg")) {
		/*
		 * Run inside a memory cgroup whose memory.max is well below
		 * 64 MiB.  Pinning untouched memory faults it in; once the
		 * cgroup is full the charge fails.  With an OOM score of -1000
		 * the cgroup's OOM killer finds no victim, so the fault (and
		 * the registration) fails with ENOMEM instead of a kill.
		 */
		size_t huge = 64UL * 1024 * 1024;
		FILE *f = fopen("/proc/self/oom_score_adj", "w");
		uint8_t *h;

		if (f) {
			fputs("-1000", f);
			fclose(f);
		}
		h = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		errno = 0;
		mr = h != MAP_FAILED ? ibv_reg_mr(pd, h, huge, IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (h == MAP_FAILED) {
			printf("FAIL: robust.neg.regfail.memcg [cannot map 64 MiB: %s]\n", strerror(errno));
			fails++;
		} else if (mr) {
			printf("FAIL: robust.neg.regfail.memcg [64 MiB registered in a smaller memory cgroup]\n");
			ibv_dereg_mr(mr);
			fails++;
		} else if (errno != ENOMEM) {
			printf("FAIL: robust.neg.regfail.memcg [registration failed with %s, not ENOMEM]\n",
			       strerror(errno));
			fails++;
		} else {
			printf("PASS: robust.neg.regfail.memcg (64 MiB in a full memory cgroup: %s)\n",
			       strerror(errno));
		}
		if (h != MAP_FAILED)
			munmap(h, huge);
		mr = ibv_reg_mr(pd, p, len, IBV_ACCESS_LOCAL_WRITE);
		if (!mr) {
			printf("FAIL: robust.neg.regfail.memcg_after [1 MiB after the failure: %s]\n",
			       strerror(errno));
			fails++;
		} else {
			printf("PASS: robust.neg.regfail.memcg_after\n");
			ibv_dereg_mr(mr);
		}
	} else if (!strcmp(what, "memlock")) {
		struct rlimit rl;

		getrlimit(RLIMIT_MEMLOCK, &rl);
		mr = ibv_reg_mr(pd, p, len, IBV_ACCESS_LOCAL_WRITE);
		if (mr) {
			printf("FAIL: robust.neg.memlock.over [1 MiB registered with RLIMIT_MEMLOCK %llu (uid %d)]\n",
			       (unsigned long long)rl.rlim_cur, (int)getuid());
			ibv_dereg_mr(mr);
			fails++;
		} else {
			printf("PASS: robust.neg.memlock.over (1 MiB over a %llu-byte limit: %s)\n",
			       (unsigned long long)rl.rlim_cur, strerror(errno));
		}
		mr = ibv_reg_mr(pd, p, 4 * PG, IBV_ACCESS_LOCAL_WRITE);
		if (!mr) {
			printf("FAIL: robust.neg.memlock.under [16 KiB under the limit: %s]\n", strerror(errno));
			fails++;
		} else {
			printf("PASS: robust.neg.memlock.under\n");
			ibv_dereg_mr(mr);
		}
		/* the pinned count must have been given back: again */
		mr = ibv_reg_mr(pd, p, 4 * PG, IBV_ACCESS_LOCAL_WRITE);
		if (!mr) {
			printf("FAIL: robust.neg.memlock.again [%s]\n", strerror(errno));
			fails++;
		} else {
			ibv_dereg_mr(mr);
		}
		fails += memlock_rings(ctx, pd, &rl);
	} else {
		uint8_t *hole = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		munmap(hole, len);
		mr = ibv_reg_mr(pd, hole, len, IBV_ACCESS_LOCAL_WRITE);
		if (mr) {
			printf("FAIL: robust.neg.regfail.unmapped [an unmapped range registered]\n");
			fails++;
		} else {
			printf("PASS: robust.neg.regfail.unmapped (%s)\n", strerror(errno));
		}
		if (!ibv_query_device(ctx, &da) && da.max_mr_size < (1ULL << 46)) {
			size_t huge = (size_t)da.max_mr_size + PG;
			uint8_t *h = mmap(NULL, huge, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

			mr = h != MAP_FAILED ? ibv_reg_mr(pd, h, huge, IBV_ACCESS_LOCAL_WRITE) : NULL;
			if (h == MAP_FAILED) {
				printf("SKIP: robust.neg.regfail.over_max (cannot map %zu bytes)\n", huge);
			} else if (mr) {
				printf("FAIL: robust.neg.regfail.over_max [%zu bytes > max_mr_size registered]\n",
				       huge);
				ibv_dereg_mr(mr);
				fails++;
			} else {
				printf("PASS: robust.neg.regfail.over_max (%zu bytes: %s)\n", huge,
				       strerror(errno));
			}
			if (h != MAP_FAILED)
				munmap(h, huge);
		} else {
			printf("SKIP: robust.neg.regfail.over_max (max_mr_size %llu too large to exceed)\n",
			       (unsigned long long)da.max_mr_size);
		}
		mr = ibv_reg_mr(pd, p, len, IBV_ACCESS_LOCAL_WRITE);
		if (!mr) {
			printf("FAIL: robust.neg.regfail.after [a good registration failed: %s]\n",
			       strerror(errno));
			fails++;
		} else {
			printf("PASS: robust.neg.regfail.after\n");
			ibv_dereg_mr(mr);
		}
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(l);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2)
		return local(argv[1]);
	fprintf(stderr, "usage: robust-limits memlock|regfail|memcg\n");
	return 2;
}
