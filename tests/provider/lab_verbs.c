// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * provider_lab_verbs: a small verbs program run in a lab guest against a
 * real swiwarp device through the installed provider.  Only the public
 * libibverbs API is used.
 *
 *   provider_lab_verbs DEVICE [LOOPS]
 *
 * Prints one "PASS: provider.lab.verbs.NAME" / "FAIL: ..." line per check.
 * The fast-path section (post_recv, poll_cq on an empty CQ, req_notify_cq)
 * is bracketed by two sched_yield() calls, so that a surrounding
 * `strace -f` can verify that no system call happens between them.  After
 * that, each of two post_send calls on the idle, unconnected QP must ring
 * the doorbell (one write() each); this section is bracketed by
 * sched_yield() pairs too.  Then ibv_create_qp_ex(): the send_ops_flags
 * swiwarp cannot do refused, and the ibv_wr_* API's errors on an
 * unconnected QP.
 */
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

static int fails;

static void result(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void result(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s: provider.lab.verbs.%s", ok ? "PASS" : "FAIL", name);
	if (!ok && fmt) {
		printf(" [");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("]");
	}
	printf("\n");
	fflush(stdout);
	if (!ok)
		fails++;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "swiwarp0";
	long loops = argc > 2 ? atol(argv[2]) : 10000;
	struct ibv_device **list, *dev = NULL;
	struct ibv_context *ctx;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_qp_init_attr qia;
	struct ibv_srq_init_attr sia;
	struct ibv_qp_attr qa;
	struct ibv_wc wc[4];
	struct ibv_sge sge, sgl[16];
	struct ibv_qp_cap cap;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr swr, *sbad;
	static char buf[1 << 16];
	int i, n, ret, posted, empty_polls;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	result(dev != NULL, "device_listed", "%s not in ibv_get_device_list",
	       name);
	if (!dev)
		return 1;
	ctx = ibv_open_device(dev);
	result(ctx != NULL, "open_device", "errno %d", errno);
	if (!ctx)
		return 1;

	ret = ibv_query_device(ctx, &da);
	result(ret == 0 && da.max_qp > 0 && da.max_cq > 0 && da.max_cqe > 0 &&
		       da.max_qp_wr > 0 && da.max_sge > 0 && da.max_mr > 0 &&
		       da.max_pd > 0 && da.phys_port_cnt == 1,
	       "query_device",
	       "ret %d max_qp %d max_cq %d max_cqe %d max_qp_wr %d max_sge %d "
	       "ports %d",
	       ret, da.max_qp, da.max_cq, da.max_cqe, da.max_qp_wr, da.max_sge,
	       da.phys_port_cnt);
	ret = ibv_query_port(ctx, 1, &pa);
	result(ret == 0 && pa.state == IBV_PORT_ACTIVE &&
		       pa.link_layer == IBV_LINK_LAYER_ETHERNET,
	       "query_port", "ret %d state %d link_layer %d", ret, pa.state,
	       pa.link_layer);
	result(dev->transport_type == IBV_TRANSPORT_IWARP, "transport_iwarp",
	       "transport %d", dev->transport_type);

	pd = ibv_alloc_pd(ctx);
	result(pd != NULL, "alloc_pd", "errno %d", errno);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf),
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ)
		: NULL;
	result(mr != NULL && mr->lkey == mr->rkey, "reg_mr", "errno %d", errno);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	result(cq != NULL && cq->cqe >= 64, "create_cq", "errno %d", errno);
	if (!pd || !mr || !cq)
		return 1;

	memset(&qia, 0, sizeof(qia));
	qia.send_cq = cq;
	qia.recv_cq = cq;
	qia.qp_type = IBV_QPT_RC;
	qia.cap.max_send_wr = 16;
	qia.cap.max_recv_wr = 16;
	qia.cap.max_send_sge = 2;
	qia.cap.max_recv_sge = 2;
	qia.cap.max_inline_data = 64;
	qp = ibv_create_qp(pd, &qia);
	result(qp != NULL && qia.cap.max_inline_data >= 64 &&
		       qia.cap.max_send_sge >= 2 && qia.cap.max_recv_sge >= 2 &&
		       qia.cap.max_send_sge < 16 && qia.cap.max_recv_sge < 16,
	       "create_qp", "errno %d inline %u sge %u/%u", errno,
	       qia.cap.max_inline_data, qia.cap.max_send_sge,
	       qia.cap.max_recv_sge);
	if (!qp)
		return 1;
	cap = qia.cap; /* granted, may exceed what we asked for */
	memset(&qia, 0, sizeof(qia));
	qia.qp_type = IBV_QPT_UD;
	qia.send_cq = cq;
	qia.recv_cq = cq;
	qia.cap.max_send_wr = qia.cap.max_recv_wr = 1;
	qia.cap.max_send_sge = qia.cap.max_recv_sge = 1;
	result(ibv_create_qp(pd, &qia) == NULL, "create_qp_ud_refused",
	       "UD QP created on an iWARP device");

	memset(&qa, 0, sizeof(qa));
	/* the attribute mask iw_cm uses when rdma_cm moves a QP to INIT */
	qa.qp_state = IBV_QPS_INIT;
	qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ret = ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
	result(ret == 0, "modify_qp_init", "ret %d", ret);
	memset(&qa, 0, sizeof(qa));
	ret = ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_CAP, &qia);
	result(ret == 0 && qa.qp_state == IBV_QPS_INIT, "query_qp",
	       "ret %d state %d", ret, qa.qp_state);

	/* ---- fast path: no system calls between the markers ---- */
	sge.addr = (uintptr_t)buf;
	sge.length = 256;
	sge.lkey = mr->lkey;
	for (i = 0; i < 16; i++) {
		sgl[i] = sge;
		sgl[i].addr += (uint64_t)i * 1024;
	}
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = sgl;
	rwr.num_sge = (int)cap.max_recv_sge; /* exactly the granted limit */
	sched_yield();			     /* marker: fast path begins */
	posted = 0;
	for (i = 0; i < 4096; i++) {
		rwr.wr_id = (uint64_t)i;
		ret = ibv_post_recv(qp, &rwr, &rbad);
		if (ret)
			break;
		posted++;
	}
	empty_polls = 0;
	for (i = 0; i < loops; i++)
		if (ibv_poll_cq(cq, 4, wc) == 0)
			empty_polls++;
	for (i = 0; i < loops; i++)
		ibv_req_notify_cq(cq, i & 1);
	sched_yield(); /* marker: fast path ends */
	result(ret == ENOMEM && posted >= 16 && posted <= 4096 && rbad == &rwr,
	       "post_recv_until_full", "ret %d after %d receives", ret, posted);
	result(empty_polls == loops, "poll_empty_cq", "%d of %ld polls empty",
	       empty_polls, loops);
	rwr.num_sge = (int)cap.max_recv_sge + 1;
	ret = ibv_post_recv(qp, &rwr, &rbad);
	result(ret == EINVAL, "post_recv_too_many_sge", "ret %d", ret);

	/* ---- send side ---- */
	memset(&swr, 0, sizeof(swr));
	swr.opcode = IBV_WR_BIND_MW; /* no memory windows */
	swr.sg_list = &sge;
	swr.num_sge = 1;
	ret = ibv_post_send(qp, &swr, &sbad);
	result(ret == EINVAL && sbad == &swr, "post_send_bad_opcode", "ret %d",
	       ret);
	/* not connected: no RFC 7306 peer, so no Send with Immediate */
	swr.opcode = IBV_WR_SEND_WITH_IMM;
	ret = ibv_post_send(qp, &swr, &sbad);
	result(ret == EOPNOTSUPP && sbad == &swr, "post_send_send_imm",
	       "ret %d", ret);
	/* no peer (not connected), so no peer that announced RFC 7306 */
	swr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	ret = ibv_post_send(qp, &swr, &sbad);
	result(ret == EOPNOTSUPP && sbad == &swr, "post_send_write_imm_no_peer",
	       "ret %d", ret);
	swr.opcode = IBV_WR_SEND;
	swr.sg_list = sgl;
	swr.num_sge = (int)cap.max_send_sge; /* exactly the granted limit */
	ret = ibv_post_send(qp, &swr, &sbad);
	result(ret == 0, "post_send_max_sge", "ret %d", ret);
	swr.num_sge = (int)cap.max_send_sge + 1;
	ret = ibv_post_send(qp, &swr, &sbad);
	result(ret == EINVAL, "post_send_too_many_sge", "ret %d", ret);
	swr.sg_list = &sge;
	swr.num_sge = 1;
	sge.length = 200; /* beyond the granted inline size (<= 96) */
	swr.send_flags = IBV_SEND_INLINE;
	ret = ibv_post_send(qp, &swr, &sbad);
	result(ret == EINVAL, "post_send_inline_too_long", "ret %d", ret);

	/* Two sends on the idle QP (not connected, so the kernel does not
	 * start its TX engine): each must ring the doorbell exactly once. */
	sge.length = 16;
	swr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	sched_yield(); /* marker: doorbell section begins */
	sched_yield();
	ret = ibv_post_send(qp, &swr, &sbad);
	i = ibv_post_send(qp, &swr, &sbad);
	sched_yield(); /* marker: doorbell section ends */
	sched_yield();
	result(ret == 0 && i == 0, "post_send_idle_qp", "ret %d %d", ret, i);

	/* SRQ and a QP attached to it */
	memset(&sia, 0, sizeof(sia));
	sia.attr.max_wr = 8;
	sia.attr.max_sge = 1;
	srq = ibv_create_srq(pd, &sia);
	result(srq != NULL, "create_srq", "errno %d", errno);
	if (srq) {
		struct ibv_qp *qp2;
		struct ibv_srq_attr sa;

		sge.length = 64;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		ret = ibv_post_srq_recv(srq, &rwr, &rbad);
		result(ret == 0, "post_srq_recv", "ret %d", ret);
		memset(&sa, 0, sizeof(sa));
		ret = ibv_query_srq(srq, &sa);
		result(ret == 0 && sa.max_wr >= 8, "query_srq", "ret %d wr %u",
		       ret, sa.max_wr);
		memset(&qia, 0, sizeof(qia));
		qia.send_cq = cq;
		qia.recv_cq = cq;
		qia.srq = srq;
		qia.qp_type = IBV_QPT_RC;
		qia.cap.max_send_wr = 4;
		qia.cap.max_send_sge = 1;
		qp2 = ibv_create_qp(pd, &qia);
		result(qp2 != NULL, "create_qp_with_srq", "errno %d", errno);
		if (qp2) {
			ret = ibv_post_recv(qp2, &rwr, &rbad);
			result(ret != 0, "post_recv_on_srq_qp_refused",
			       "ret %d", ret);
			result(ibv_destroy_qp(qp2) == 0, "destroy_qp_with_srq",
			       "errno %d", errno);
		}
		result(ibv_destroy_srq(srq) == 0, "destroy_srq", "errno %d",
		       errno);
	}

	/* ---- ibv_create_qp_ex and the ibv_wr_* API (ibv_qp_ex) ---- */
	{
		static const uint64_t refused[] = {IBV_QP_EX_WITH_LOCAL_INV,
						   IBV_QP_EX_WITH_BIND_MW,
						   IBV_QP_EX_WITH_TSO};
		struct ibv_qp_init_attr_ex xa;
		struct ibv_qp_ex *qpx;
		struct ibv_qp *xqp;
		char what[64];

		for (i = 0; i < 3; i++) {
			memset(&xa, 0, sizeof(xa));
			xa.send_cq = cq;
			xa.recv_cq = cq;
			xa.qp_type = IBV_QPT_RC;
			xa.cap.max_send_wr = xa.cap.max_recv_wr = 4;
			xa.cap.max_send_sge = xa.cap.max_recv_sge = 1;
			xa.comp_mask = IBV_QP_INIT_ATTR_PD |
				       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
			xa.pd = pd;
			xa.send_ops_flags = IBV_QP_EX_WITH_SEND | refused[i];
			errno = 0;
			xqp = ibv_create_qp_ex(ctx, &xa);
			snprintf(what, sizeof(what),
				 "create_qp_ex_refuses_%#llx",
				 (unsigned long long)refused[i]);
			result(xqp == NULL && errno == EOPNOTSUPP, what,
			       "qp %p errno %d", (void *)xqp, errno);
		}
		/* without send_ops_flags: a QP, but no ibv_qp_ex */
		xa.comp_mask = IBV_QP_INIT_ATTR_PD;
		xqp = ibv_create_qp_ex(ctx, &xa);
		result(xqp != NULL && ibv_qp_to_qp_ex(xqp) == NULL,
		       "create_qp_ex_plain", "qp %p errno %d", (void *)xqp,
		       errno);
		if (xqp)
			ibv_destroy_qp(xqp);

		xa.comp_mask =
			IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		xa.send_ops_flags = IBV_QP_EX_WITH_SEND |
				    IBV_QP_EX_WITH_SEND_WITH_IMM |
				    IBV_QP_EX_WITH_SEND_WITH_INV |
				    IBV_QP_EX_WITH_RDMA_WRITE |
				    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				    IBV_QP_EX_WITH_RDMA_READ |
				    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
		xa.cap.max_send_sge = 2;
		xa.cap.max_inline_data = 64;
		xqp = ibv_create_qp_ex(ctx, &xa);
		qpx = xqp ? ibv_qp_to_qp_ex(xqp) : NULL;
		result(qpx != NULL && xa.cap.max_inline_data >= 64,
		       "create_qp_ex_wr_api", "qp %p errno %d inline %u",
		       (void *)xqp, errno, xa.cap.max_inline_data);
		if (qpx) {
			memset(&qa, 0, sizeof(qa));
			qa.qp_state = IBV_QPS_INIT;
			qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
			ibv_modify_qp(xqp, &qa,
				      IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
			/* a batch of an SGE Send and an inline Send */
			ibv_wr_start(qpx);
			qpx->wr_id = 1;
			qpx->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_send(qpx);
			ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 32);
			qpx->wr_id = 2;
			ibv_wr_send(qpx);
			ibv_wr_set_inline_data(qpx, buf, 16);
			ret = ibv_wr_complete(qpx);
			result(ret == 0, "wr_complete_sends", "ret %d", ret);
			ibv_wr_start(qpx);
			ibv_wr_send(qpx);
			ibv_wr_abort(qpx);
			/* not connected: no RFC 7306 peer */
			ibv_wr_start(qpx);
			ibv_wr_rdma_write_imm(qpx, mr->rkey, (uintptr_t)buf,
					      htobe32(1));
			ibv_wr_set_sge(qpx, mr->lkey, (uintptr_t)buf, 8);
			ret = ibv_wr_complete(qpx);
			result(ret == EOPNOTSUPP,
			       "wr_complete_write_imm_no_peer", "ret %d", ret);
			ibv_wr_start(qpx);
			ibv_wr_send(qpx);
			ibv_wr_set_sge_list(qpx, xa.cap.max_send_sge + 1, sgl);
			ret = ibv_wr_complete(qpx);
			result(ret == EINVAL, "wr_complete_too_many_sge",
			       "ret %d", ret);
			ibv_wr_start(qpx);
			ibv_wr_send(qpx);
			ibv_wr_set_inline_data(qpx, buf, 200);
			ret = ibv_wr_complete(qpx);
			result(ret == EINVAL, "wr_complete_inline_too_long",
			       "ret %d", ret);
			ibv_wr_start(qpx);
			ibv_wr_local_inv(qpx, mr->rkey);
			ret = ibv_wr_complete(qpx);
			result(ret == EOPNOTSUPP, "wr_complete_local_inv",
			       "ret %d", ret);
		}
		if (xqp)
			result(ibv_destroy_qp(xqp) == 0, "destroy_qp_ex",
			       "errno %d", errno);
	}

	result(ibv_destroy_qp(qp) == 0, "destroy_qp", "errno %d", errno);
	result(ibv_destroy_cq(cq) == 0, "destroy_cq", "errno %d", errno);
	result(ibv_dereg_mr(mr) == 0, "dereg_mr", "errno %d", errno);
	result(ibv_dealloc_pd(pd) == 0, "dealloc_pd", "errno %d", errno);
	result(ibv_close_device(ctx) == 0, "close_device", "errno %d", errno);
	ibv_free_device_list(list);
	return fails ? 1 : 0;
}
