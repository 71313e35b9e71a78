// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * prot: memory-protection tests over rdma_cm/verbs.
 *
 *   prot server ADDR PORT NCONN    target side
 *   prot client ADDR PORT          initiator side, one connection per case
 *
 * The server owns one 4 KiB target buffer between two 4 KiB canary areas
 * (0xa5) and registers it four times: rw (PD 1, remote read+write), ro
 * (PD 1, remote read only), wo (PD 1, remote write only) and other (PD 2,
 * remote read+write, never usable on PD 1's QPs).  For each connection it
 * sends the four (rkey, addr, len) to the client, and when the connection
 * is gone it checks that both canaries are intact and that the target holds
 * exactly what the control Write put there (0x22; bad Writes carry 0x33).
 *
 * The client's cases: a control Write and Read that must succeed, then
 * Writes/Reads with a wrong STag, out of bounds, past a TO wrap, without the
 * access right, and with another PD's STag, which must fail (error
 * completion on the op or on a Read posted right behind it, since an
 * iWARP Write completes locally and the target's answer is a Terminate).
 *
 * Both print PASS:/FAIL: lines (robust.prot.<case>.op from the client,
 * robust.prot.<case>.memory from the server).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "lab-verbs.h"

#define TSZ 4096
#define CANARY 0xa5
#define GOOD 0x22
#define EVIL 0x33
#define EVENT_MS 15000
/*
 * Bound for the completions of a case's op and of the Read behind it: only
 * a hang must fail, and a bad op's completion waits for the target guest
 * (its Terminate, its close), i.e. for another guest's clock and CPU.  Lab
 * guests' clocks have been seen ~10x apart (a miscalibrated TSC), and on a
 * saturated host one round trip between TCG guests can take seconds, so
 * 15 s of this guest's clock was not enough once (session 2).  Normal
 * completions take well under a second; the time is printed.
 */
#define OP_MS 60000

struct mrinfo {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

struct info {
	struct mrinfo rw, ro, wo, other;
};

/* Wait for one completion on cq; returns its status or -1 on timeout. */
static int wait_wc(struct ibv_cq *cq, int ms, struct ibv_wc *wc)
{
	return lab_wait_wc(cq, ms, wc, 1000);	/* poll every 1 ms */
}

/* ---- server --------------------------------------------------------- */

static int server(const char *addr, const char *port, int nconn)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lid, *cid = NULL;
	struct rdma_addrinfo *ai = lab_getai(addr, atoi(port), true);
	struct ibv_pd *pd = NULL, *pd2 = NULL;
	struct ibv_mr *mr_rw = NULL, *mr_ro, *mr_wo, *mr_other, *mr_info = NULL;
	struct ibv_cq *cq = NULL;
	struct info *info;
	uint8_t *region;
	int done = 0, fails = 0, i;
	char name[64] = "";

	if (!ch || !ai || lab_listen(ch, ai->ai_src_addr, 4, &lid)) {
		perror("prot server: listen");
		return 2;
	}
	region = mmap(NULL, 3 * TSZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	info = calloc(1, sizeof(*info));
	if (region == MAP_FAILED || !info)
		return 2;
	memset(region, CANARY, 3 * TSZ);
	memset(region + TSZ, 0x11, TSZ);
	printf("prot server: listening on %s:%s\n", addr, port);
	fflush(stdout);

	while (done < nconn) {
		struct rdma_cm_event *ev = get_event(ch, 120000);
		enum rdma_cm_event_type type;
		struct rdma_cm_id *id;

		if (!ev) {
			printf("FAIL: robust.prot.server [no CM event for 120 s after %d of %d connections]\n",
			       done, nconn);
			return 1;
		}
		type = ev->event;
		id = ev->id;
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct ibv_qp_init_attr qa = { 0 };
			struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4 };
			size_t pl = ev->param.conn.private_data_len;

			snprintf(name, sizeof(name), "conn%d", done);
			if (pl && ev->param.conn.private_data) {
				const char *p = ev->param.conn.private_data;
				size_t k;

				for (k = 0; k < pl && k < sizeof(name) - 1 && p[k] &&
					    ((p[k] >= 'a' && p[k] <= 'z') || p[k] == '_' ||
					     (p[k] >= '0' && p[k] <= '9'));
				     k++)
					name[k] = p[k];
				if (k)
					name[k] = 0;
			}
			if (!pd) {
				pd = ibv_alloc_pd(id->verbs);
				pd2 = ibv_alloc_pd(id->verbs);
				cq = ibv_create_cq(id->verbs, 64, NULL, NULL, 0);
				if (!pd || !pd2 || !cq)
					return 2;
				mr_rw = ibv_reg_mr(pd, region + TSZ, TSZ,
						   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
							   IBV_ACCESS_REMOTE_READ);
				mr_ro = ibv_reg_mr(pd, region + TSZ, TSZ, IBV_ACCESS_REMOTE_READ);
				mr_wo = ibv_reg_mr(pd, region + TSZ, TSZ,
						   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
				mr_other = ibv_reg_mr(pd2, region + TSZ, TSZ,
						      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
							      IBV_ACCESS_REMOTE_READ);
				mr_info = ibv_reg_mr(pd, info, sizeof(*info), 0);
				if (!mr_rw || !mr_ro || !mr_wo || !mr_other || !mr_info) {
					perror("prot server: reg_mr");
					return 2;
				}
#define FILL(f, m) (info->f = (struct mrinfo){ (uintptr_t)(m)->addr, (m)->rkey, TSZ })
				FILL(rw, mr_rw);
				FILL(ro, mr_ro);
				FILL(wo, mr_wo);
				FILL(other, mr_other);
				printf("prot server: rkeys rw=0x%x ro=0x%x wo=0x%x other=0x%x\n",
				       mr_rw->rkey, mr_ro->rkey, mr_wo->rkey, mr_other->rkey);
			}
			qa = lab_rc_qp_attr(cq, 8, 8);
			rdma_ack_cm_event(ev);
			if (rdma_create_qp(id, pd, &qa) || rdma_accept(id, &cp)) {
				perror("prot server: accept");
				return 2;
			}
			cid = id;
			continue;
		}
		rdma_ack_cm_event(ev);
		if (type == RDMA_CM_EVENT_ESTABLISHED && id == cid) {
			struct ibv_sge sge = { (uintptr_t)info, sizeof(*info), mr_info->lkey };
			struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED }, *bad;

			if (ibv_post_send(id->qp, &wr, &bad))
				perror("prot server: post_send");
		} else if (type == RDMA_CM_EVENT_DISCONNECTED ||
			   type == RDMA_CM_EVENT_CONNECT_ERROR ||
			   type == RDMA_CM_EVENT_UNREACHABLE || type == RDMA_CM_EVENT_REJECTED) {
			struct ibv_wc wc;
			int c1 = 0, c2 = 0, evil = 0, other = 0;

			while (ibv_poll_cq(cq, 1, &wc) > 0)
				;
			for (i = 0; i < TSZ; i++) {
				c1 += region[i] != CANARY;
				c2 += region[2 * TSZ + i] != CANARY;
				evil += region[TSZ + i] == EVIL;
				other += region[TSZ + i] != GOOD;
			}
			if (c1 || c2 || evil || other) {
				printf("FAIL: robust.prot.%s.memory [canary below %d, above %d bytes changed; "
				       "target %d bytes of a rejected Write, %d bytes not the control pattern]\n",
				       name, c1, c2, evil, other);
				fails++;
			} else {
				printf("PASS: robust.prot.%s.memory\n", name);
			}
			fflush(stdout);
			if (id->qp)
				rdma_destroy_qp(id);
			rdma_destroy_id(id);
			cid = NULL;
			done++;
		}
	}
	return fails ? 1 : 0;
}

/* ---- client --------------------------------------------------------- */

enum which { RW, RO, WO, OTHER };

struct pcase {
	const char *name;
	bool write;
	enum which mr;
	int64_t off;		/* offset from the MR's address */
	uint32_t len;
	uint32_t rkey_xor;	/* corrupt the STag */
	bool abs_to;		/* off is an absolute TO */
	bool ok;		/* must succeed */
};

static const struct pcase pcases[] = {
	{ "ctl_write", true, RW, 0, TSZ, 0, false, true },
	{ "ctl_read", false, RW, 0, TSZ, 0, false, true },
	{ "write_bad_stag", true, RW, 0, 64, 0x00000100, false, false },
	{ "write_bad_key", true, RW, 0, 64, 0x00000001, false, false },
	{ "write_oob_end", true, RW, TSZ - 32, 64, 0, false, false },
	{ "write_oob_start", true, RW, -32, 64, 0, false, false },
	{ "write_past_end", true, RW, TSZ, 16, 0, false, false },
	{ "write_to_wrap", true, RW, -64, 128, 0, true, false },
	{ "write_readonly", true, RO, 0, 64, 0, false, false },
	{ "write_other_pd", true, OTHER, 0, 64, 0, false, false },
	{ "read_bad_stag", false, RW, 0, 64, 0x00000100, false, false },
	{ "read_oob_end", false, RW, TSZ - 32, 64, 0, false, false },
	{ "read_oob_start", false, RW, -32, 64, 0, false, false },
	{ "read_writeonly", false, WO, 0, 64, 0, false, false },
	{ "read_other_pd", false, OTHER, 0, 64, 0, false, false },
	{ "ctl_write_again", true, RW, 0, TSZ, 0, false, true },
};

#define NPCASES (int)(sizeof(pcases) / sizeof(pcases[0]))

static int client_case(const char *addr, const char *port, const struct pcase *pc)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *ai;
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr, *mr_info;
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4,
				      .retry_count = 3 };
	struct info info;
	static uint8_t buf[2 * TSZ];
	struct ibv_wc wc;
	int st1, st2 = -2, rc = 0;
	long long t0 = 0;
	const struct mrinfo *m;
	char why[200] = "";

	if (!ch || rdma_getaddrinfo(addr, port, &hints, &ai) ||
	    rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, ai->ai_dst_addr, 5000)) {
		snprintf(why, sizeof(why), "resolve: %s", strerror(errno));
		goto fail;
	}
	ev = get_event(ch, EVENT_MS);
	if (!ev || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED) {
		snprintf(why, sizeof(why), "no ADDR_RESOLVED");
		goto fail;
	}
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, 5000)) {
		snprintf(why, sizeof(why), "resolve_route");
		goto fail;
	}
	ev = get_event(ch, EVENT_MS);
	if (!ev || ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		snprintf(why, sizeof(why), "no ROUTE_RESOLVED");
		goto fail;
	}
	rdma_ack_cm_event(ev);
	pd = ibv_alloc_pd(id->verbs);
	cq = pd ? ibv_create_cq(id->verbs, 16, NULL, NULL, 0) : NULL;
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr_info = pd ? ibv_reg_mr(pd, &info, sizeof(info), IBV_ACCESS_LOCAL_WRITE) : NULL;
	qa = lab_rc_qp_attr(cq, 8, 8);
	if (!cq || !mr || !mr_info || rdma_create_qp(id, pd, &qa)) {
		snprintf(why, sizeof(why), "verbs setup: %s", strerror(errno));
		goto fail;
	}
	{
		struct ibv_sge sge = { (uintptr_t)&info, sizeof(info), mr_info->lkey };
		struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(id->qp, &wr, &bad)) {
			snprintf(why, sizeof(why), "post_recv");
			goto fail;
		}
	}
	cp.private_data = pc->name;
	cp.private_data_len = (uint8_t)(strlen(pc->name) + 1);
	if (rdma_connect(id, &cp)) {
		snprintf(why, sizeof(why), "connect: %s", strerror(errno));
		goto fail;
	}
	ev = get_event(ch, EVENT_MS);
	if (!ev || ev->event != RDMA_CM_EVENT_ESTABLISHED) {
		snprintf(why, sizeof(why), "not established (%s)",
			 ev ? rdma_event_str(ev->event) : "timeout");
		goto fail;
	}
	rdma_ack_cm_event(ev);
	if (wait_wc(cq, EVENT_MS, &wc) != IBV_WC_SUCCESS || wc.wr_id != 1) {
		snprintf(why, sizeof(why), "no info message from the server");
		goto fail;
	}
	m = pc->mr == RW ? &info.rw : pc->mr == RO ? &info.ro : pc->mr == WO ? &info.wo :
								       &info.other;
	memset(buf, pc->ok ? GOOD : EVIL, sizeof(buf));
	{
		struct ibv_sge sge = { (uintptr_t)buf, pc->len, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
					  .opcode = pc->write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_sge sge2 = { (uintptr_t)buf + TSZ, 8, mr->lkey };
		struct ibv_send_wr fence = { .wr_id = 3, .sg_list = &sge2, .num_sge = 1,
					     .opcode = IBV_WR_RDMA_READ,
					     .send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE };

		wr.wr.rdma.remote_addr = pc->abs_to ? (uint64_t)pc->off : m->addr + (uint64_t)pc->off;
		wr.wr.rdma.rkey = m->rkey ^ pc->rkey_xor;
		fence.wr.rdma.remote_addr = info.rw.addr;
		fence.wr.rdma.rkey = info.rw.rkey;
		if (!pc->write)
			memset(buf, 0, TSZ);
		if (ibv_post_send(id->qp, &wr, &bad)) {
			/* refusing a bad op locally would not test the target */
			snprintf(why, sizeof(why), "post_send refused locally: %s", strerror(errno));
			goto fail;
		}
		t0 = now_ms();
		st1 = wait_wc(cq, OP_MS, &wc);
		if (st1 == IBV_WC_SUCCESS) {
			/* a Read behind it learns whether the target objected */
			if (ibv_post_send(id->qp, &fence, &bad))
				st2 = -3;
			else
				st2 = wait_wc(cq, OP_MS, &wc);
		}
		t0 = now_ms() - t0;
	}
	if (pc->ok) {
		bool data_ok = true;
		int i;

		if (!pc->write)
			for (i = 0; i < TSZ; i++)
				data_ok &= buf[i] == GOOD;
		if (st1 != IBV_WC_SUCCESS || st2 != IBV_WC_SUCCESS || !data_ok) {
			snprintf(why, sizeof(why), "control op status %d, fence %d, data %s", st1, st2,
				 data_ok ? "ok" : "wrong");
			rc = 1;
		}
	} else if (st1 == -1 || (st1 == IBV_WC_SUCCESS && st2 == -1)) {
		snprintf(why, sizeof(why), "no completion within %d ms (hang)", OP_MS);
		rc = 1;
	} else if (st1 == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS) {
		snprintf(why, sizeof(why), "bad op and the Read behind it both succeeded");
		rc = 1;
	} else {
		printf("prot client: %s: op status %s, fence %s (%lld ms)\n", pc->name,
		       st1 >= 0 ? ibv_wc_status_str(st1) : "none",
		       st2 >= 0 ? ibv_wc_status_str(st2) : "not run", t0);
	}
	rdma_disconnect(id);
	ev = get_event(ch, 5000);
	if (ev)
		rdma_ack_cm_event(ev);
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(mr_info);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	rdma_freeaddrinfo(ai);
	if (rc)
		goto fail_printed;
	printf("PASS: robust.prot.%s.op\n", pc->name);
	fflush(stdout);
	return 0;
fail:
	rc = 1;
fail_printed:
	printf("FAIL: robust.prot.%s.op [%s]\n", pc->name, why);
	fflush(stdout);
	return rc;
}

int main(int argc, char **argv)
{
	int i, fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "server"))
		return server(argv[2], argv[3], atoi(argv[4]));
	if (argc == 2 && !strcmp(argv[1], "count")) {
		printf("%d\n", NPCASES);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "client")) {
		for (i = 0; i < NPCASES; i++) {
			fails += client_case(argv[2], argv[3], &pcases[i]);
			usleep(200000);
		}
		return fails ? 1 : 0;
	}
	fprintf(stderr, "usage: prot server ADDR PORT NCONN | prot client ADDR PORT | prot count\n");
	return 2;
}
