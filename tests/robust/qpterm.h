/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Terminate checks per QP, through the RDMA core's resource tracking:
 * swiwarp reports the Terminate a QP sent and the one it received on its
 * current connection as driver details of `rdma res show qp -dd`
 * (term_sent_layer, term_sent_type, term_sent_code and term_rcvd_*;
 * newer iproute2 prints them with a "drv_" prefix).  qp_term_find() asks
 * the rdma tool about one QP, so it must run while the QP exists; layer,
 * type and code are RFC 5040's (section 7.1).  Only for swiwarp: upstream
 * siw reports no driver details.  The device counters (hwctr.h) say the
 * same per layer for the whole device.
 */
#ifndef ROBUST_QPTERM_H
#define ROBUST_QPTERM_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/*
 * The Terminate qp sent (sent) or received, waiting up to ms for it to be
 * noted.  Returns 1 and fills layer/type/code when there is one, 0 if
 * none, -1 if the rdma tool cannot be run.
 */
static inline int qp_term_find(struct ibv_qp *qp, int sent, int ms, int *layer, int *type,
			       int *code)
{
	static const char *const part[3] = { "layer", "type", "code" };
	char cmd[200], line[4096], key[40];
	int waited = 0, i, v[3];

	snprintf(cmd, sizeof(cmd), "rdma -dd res show qp link %s/1 lqpn %u 2>/dev/null",
		 ibv_get_device_name(qp->context->device), qp->qp_num);
	for (;;) {
		FILE *f = popen(cmd, "r");
		unsigned int got = 0;
		const char *p;

		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f))
			for (i = 0; i < 3; i++) {
				snprintf(key, sizeof(key), "term_%s_%s ", sent ? "sent" : "rcvd",
					 part[i]);
				p = strstr(line, key);
				if (p && sscanf(p + strlen(key), "%d", &v[i]) == 1)
					got |= 1u << i;
			}
		if (pclose(f) == -1)
			return -1;
		if (got == 7) {
			*layer = v[0];
			*type = v[1];
			*code = v[2];
			return 1;
		}
		if (waited >= ms)
			return 0;
		usleep(200000);
		waited += 200;
	}
}

/*
 * Sum of the driver detail NAME (a ring state of swiwarp_stats.c: sq_get,
 * sq_posted, rq_get, rq_posted for a QP; cq_put, cq_unpolled for a CQ)
 * over the lines `rdma -dd res show qp link DEV/1` (OBJ qp) or `... cq dev
 * DEV` (OBJ cq) prints for this process.  Returns the number of lines that had it, -1 if the rdma
 * tool cannot be run.
 */
static inline int res_driver_sum(struct ibv_context *ctx, const char *obj, const char *name,
				 unsigned long *sum)
{
	char cmd[200], line[4096], key[48], pid[24];
	int lines = 0;
	unsigned long v;
	const char *p;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma -dd res show %s %s %s%s 2>/dev/null", obj,
		 strcmp(obj, "qp") ? "dev" : "link", ibv_get_device_name(ctx->device),
		 strcmp(obj, "qp") ? "" : "/1");
	snprintf(key, sizeof(key), "%s ", name);
	snprintf(pid, sizeof(pid), " pid %d ", (int)getpid());
	*sum = 0;
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, pid))
			continue;
		p = strstr(line, key);
		if (p && (p == line || p[-1] == ' ' || p[-1] == '_') &&
		    sscanf(p + strlen(key), "%lu", &v) == 1) {
			*sum += v;
			lines++;
		}
	}
	return pclose(f) == -1 ? -1 : lines;
}

#endif
