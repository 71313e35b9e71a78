// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * verify-cm: rdma_cm connection set-up and teardown shared by the content
 * checkers data-verify.c, imm-verify.c and atomic-verify.c (see
 * verify-cm.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verify-cm.h"

void die(const char *fmt, ...)
{
	va_list ap;

	/* The lab scripts grep the logs for "data-verify:" / "imm-verify:". */
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", program_invocation_short_name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int vcm_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_s)
{
	double end = now() + timeout_s;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			die("poll_cq: %d", n);
		if (n == 1)
			return 1;
		if (now() > end)
			return 0;
		usleep(20);
	}
}

void vcm_result(int *failures, int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s ", ok ? "ok" : "BAD");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!ok)
		(*failures)++;
}

int vcm_common_opt(struct vcm_args *args, int opt, const char *arg)
{
	switch (opt) {
	case 's':
	case 'c':
		args->role = opt == 's';
		args->addr = arg;
		return 1;
	case 'p':
		args->port = arg;
		return 1;
	default:
		return 0;
	}
}

/* The next event on the channel must be want; the caller acks it. */
static struct rdma_cm_event *vcm_event(struct vcm *cm,
				       enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(cm->ch, &ev))
		die("rdma_get_cm_event: %s", strerror(errno));
	if (ev->event != want)
		die("cm event %s (status %d), wanted %s",
			rdma_event_str(ev->event), ev->status,
			rdma_event_str(want));
	return ev;
}

static void vcm_channel(struct vcm *cm)
{
	cm->ch = rdma_create_event_channel();
	if (!cm->ch)
		die("event channel");
}

void vcm_listen(struct vcm *cm, const char *addr, const char *port)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *ai;

	vcm_channel(cm);
	if (rdma_getaddrinfo(addr, port, &hints, &ai))
		die("getaddrinfo %s", addr);
	if (rdma_create_id(cm->ch, &cm->lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(cm->lid, ai->ai_src_addr) || rdma_listen(cm->lid, 1))
		die("listen on %s:%s: %s", addr, port, strerror(errno));
	rdma_freeaddrinfo(ai);
}

void vcm_take_request(struct vcm *cm)
{
	struct rdma_cm_event *ev = vcm_event(cm, RDMA_CM_EVENT_CONNECT_REQUEST);

	cm->id = ev->id;
	rdma_ack_cm_event(ev);
}

void vcm_listen_one(struct vcm *cm, const char *addr, const char *port)
{
	vcm_listen(cm, addr, port);
	vcm_take_request(cm);
}

void vcm_resolve(struct vcm *cm, const char *addr, const char *port)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *ai;

	vcm_channel(cm);
	if (rdma_getaddrinfo(addr, port, &hints, &ai))
		die("getaddrinfo %s", addr);
	if (rdma_create_id(cm->ch, &cm->id, NULL, RDMA_PS_TCP))
		die("create_id");
	if (rdma_resolve_addr(cm->id, NULL, ai->ai_dst_addr, 5000))
		die("resolve_addr: %s", strerror(errno));
	rdma_freeaddrinfo(ai);
	rdma_ack_cm_event(vcm_event(cm, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(cm->id, 5000))
		die("resolve_route");
	rdma_ack_cm_event(vcm_event(cm, RDMA_CM_EVENT_ROUTE_RESOLVED));
}

int vcm_wr_api;

void vcm_rdma_create_qp(struct vcm *cm, struct ibv_pd *pd,
			struct ibv_qp_init_attr *qa)
{
	struct ibv_qp_init_attr_ex ax = {
		.qp_context = qa->qp_context,
		.send_cq = qa->send_cq,
		.recv_cq = qa->recv_cq,
		.srq = qa->srq,
		.cap = qa->cap,
		.qp_type = qa->qp_type,
		.sq_sig_all = qa->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_SEND_WITH_INV |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};

	if (!vcm_wr_api) {
		if (rdma_create_qp(cm->id, pd, qa))
			die("rdma_create_qp: %s", strerror(errno));
		return;
	}
	if (rdma_create_qp_ex(cm->id, &ax))
		die("rdma_create_qp_ex with send_ops_flags: %s",
		    strerror(errno));
	if (!ibv_qp_to_qp_ex(cm->id->qp))
		die("ibv_qp_to_qp_ex: the QP has no ibv_qp_ex");
	qa->cap = ax.cap;
}

int vcm_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad)
{
	struct ibv_data_buf buf[16];
	struct ibv_send_wr *w;
	struct ibv_qp_ex *qpx;
	int i, ret;

	if (!vcm_wr_api)
		return ibv_post_send(qp, wr, bad);
	qpx = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(qpx);
	for (w = wr; w; w = w->next) {
		qpx->wr_id = w->wr_id;
		qpx->wr_flags = w->send_flags & ~IBV_SEND_INLINE;
		switch (w->opcode) {
		case IBV_WR_SEND:
			ibv_wr_send(qpx);
			break;
		case IBV_WR_SEND_WITH_IMM:
			ibv_wr_send_imm(qpx, w->imm_data);
			break;
		case IBV_WR_SEND_WITH_INV:
			ibv_wr_send_inv(qpx, w->invalidate_rkey);
			break;
		case IBV_WR_RDMA_WRITE:
			ibv_wr_rdma_write(qpx, w->wr.rdma.rkey,
					  w->wr.rdma.remote_addr);
			break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			ibv_wr_rdma_write_imm(qpx, w->wr.rdma.rkey,
					      w->wr.rdma.remote_addr,
					      w->imm_data);
			break;
		case IBV_WR_RDMA_READ:
			ibv_wr_rdma_read(qpx, w->wr.rdma.rkey,
					 w->wr.rdma.remote_addr);
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
			ibv_wr_atomic_cmp_swp(qpx, w->wr.atomic.rkey,
					      w->wr.atomic.remote_addr,
					      w->wr.atomic.compare_add,
					      w->wr.atomic.swap);
			break;
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			ibv_wr_atomic_fetch_add(qpx, w->wr.atomic.rkey,
						w->wr.atomic.remote_addr,
						w->wr.atomic.compare_add);
			break;
		default:
			die("vcm_post_send: opcode %d has no ibv_wr_* here",
			    (int)w->opcode);
		}
		/* Both forms of each setter, as a program would use them. */
		if (w->send_flags & IBV_SEND_INLINE) {
			if (w->num_sge > 16)
				die("vcm_post_send: %d inline buffers",
				    w->num_sge);
			for (i = 0; i < w->num_sge; i++) {
				buf[i].addr = (void *)(uintptr_t)w->sg_list[i].addr;
				buf[i].length = w->sg_list[i].length;
			}
			if (w->num_sge == 1)
				ibv_wr_set_inline_data(qpx, buf[0].addr,
						       buf[0].length);
			else
				ibv_wr_set_inline_data_list(qpx, w->num_sge,
							    buf);
		} else if (w->num_sge == 1) {
			ibv_wr_set_sge(qpx, w->sg_list[0].lkey,
				       w->sg_list[0].addr,
				       w->sg_list[0].length);
		} else {
			ibv_wr_set_sge_list(qpx, w->num_sge, w->sg_list);
		}
	}
	ret = ibv_wr_complete(qpx);
	if (ret && bad)
		*bad = wr;
	return ret;
}

void vcm_create_qp(struct vcm *cm, struct ibv_pd *pd, struct ibv_cq *scq,
		   struct ibv_cq *rcq, uint32_t send_wr, uint32_t recv_wr,
		   uint32_t sge)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = recv_wr,
			 .max_send_sge = sge, .max_recv_sge = sge },
	};

	vcm_rdma_create_qp(cm, pd, &qa);
}

void vcm_accept(struct vcm *cm, const void *priv, uint8_t len, uint8_t rd)
{
	struct rdma_conn_param cp = {
		.private_data = priv,
		.private_data_len = len,
		.responder_resources = rd,
		.initiator_depth = rd,
	};

	if (rdma_accept(cm->id, &cp))
		die("accept: %s", strerror(errno));
	rdma_ack_cm_event(vcm_event(cm, RDMA_CM_EVENT_ESTABLISHED));
}

void vcm_connect(struct vcm *cm, void *priv, size_t len, uint8_t rd)
{
	struct rdma_conn_param cp = {
		.responder_resources = rd,
		.initiator_depth = rd,
	};
	struct rdma_cm_event *ev;

	if (rdma_connect(cm->id, &cp))
		die("connect: %s", strerror(errno));
	ev = vcm_event(cm, RDMA_CM_EVENT_ESTABLISHED);
	if (ev->param.conn.private_data_len < len)
		die("no server info in the private data");
	memcpy(priv, ev->param.conn.private_data, len);
	rdma_ack_cm_event(ev);
}

void vcm_close(struct vcm *cm)
{
	if (!cm->lid)
		rdma_disconnect(cm->id);
	rdma_ack_cm_event(vcm_event(cm, RDMA_CM_EVENT_DISCONNECTED));
	rdma_destroy_qp(cm->id);
	rdma_destroy_id(cm->id);
	if (cm->lid)
		rdma_destroy_id(cm->lid);
}
