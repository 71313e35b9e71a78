// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * provider.pabi34_set_ops: checks pabi34.h's ops table against the real
 * libibverbs.so.1.  verbs_set_ops() copies every non-NULL slot of the table
 * into its private copy and mirrors many of them into public fields of
 * struct verbs_context / struct ibv_context_ops.  We hand it a table with a
 * distinct fake value in every slot and a zeroed private area, then check
 * that (a) each slot arrived in order in the private copy and nothing past
 * slot 75 was read, and (b) each op that has a public mirror landed in the
 * public field of the same name.  A wrong count or order fails here.
 * Then ibv_qp_to_qp_ex() must agree with pabi34_qp on where comp_mask and
 * its PABI34_QP_EX bit are.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pabi34.h"

/* verbs_set_ops writes its private ops copy 0x18 bytes into priv (a
 * two-word bitmap, a u32 driver id and a bool precede it). */
#define PRIV_OPS_OFFSET 0x18

static int failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);   \
			fprintf(stderr, __VA_ARGS__);                          \
			fprintf(stderr, "\n");                                 \
			failures++;                                            \
		}                                                              \
	} while (0)

static uintptr_t fake(unsigned int slot)
{
	return 0x5a5a000000000000ull | ((uintptr_t)slot << 4);
}

int main(void)
{
	struct {
		struct pabi34_context_ops ops;
		uintptr_t canary[8];
	} in;
	uintptr_t *slots = (uintptr_t *)&in;
	size_t nslots = sizeof(in.ops) / sizeof(uintptr_t);
	struct verbs_context *vctx;
	unsigned char *priv;
	size_t priv_size = PRIV_OPS_OFFSET + 96 * sizeof(uintptr_t);
	unsigned int i;

	CHECK(nslots == PABI34_CONTEXT_OPS_COUNT, "slot count %zu", nslots);
	for (i = 0; i < nslots + 8; i++)
		slots[i] = fake(i);

	vctx = calloc(1, sizeof(*vctx));
	priv = calloc(1, priv_size);
	if (!vctx || !priv)
		return 2;
	vctx->priv = (struct verbs_ex_private *)priv;

	verbs_set_ops(vctx, &in.ops);

	for (i = 0; i < nslots; i++) {
		uintptr_t got;

		memcpy(&got, priv + PRIV_OPS_OFFSET + i * sizeof(uintptr_t),
		       sizeof(got));
		CHECK(got == fake(i), "private slot %u: %#lx", i,
		      (unsigned long)got);
	}
	for (i = nslots; i < nslots + 8; i++) {
		uintptr_t got;

		memcpy(&got, priv + PRIV_OPS_OFFSET + i * sizeof(uintptr_t),
		       sizeof(got));
		CHECK(got == 0, "library copied beyond slot 75 (slot %u)", i);
	}

#define PUB(pubfield, ourfield)                                                \
	CHECK((uintptr_t)(pubfield) == (uintptr_t)in.ops.ourfield,             \
	      "public " #pubfield " != ops." #ourfield)

	/* struct ibv_context_ops mirrors */
	PUB(vctx->context.ops.alloc_mw, alloc_mw);
	PUB(vctx->context.ops.bind_mw, bind_mw);
	PUB(vctx->context.ops.dealloc_mw, dealloc_mw);
	PUB(vctx->context.ops.poll_cq, poll_cq);
	PUB(vctx->context.ops.req_notify_cq, req_notify_cq);
	PUB(vctx->context.ops.post_srq_recv, post_srq_recv);
	PUB(vctx->context.ops.post_send, post_send);
	PUB(vctx->context.ops.post_recv, post_recv);
	/* struct verbs_context mirrors */
	PUB(vctx->advise_mr, advise_mr);
	PUB(vctx->alloc_null_mr, alloc_null_mr);
	PUB(vctx->read_counters, read_counters);
	PUB(vctx->attach_counters_point_flow, attach_counters_point_flow);
	PUB(vctx->create_counters, create_counters);
	PUB(vctx->destroy_counters, destroy_counters);
	PUB(vctx->reg_dm_mr, reg_dm_mr);
	PUB(vctx->alloc_dm, alloc_dm);
	PUB(vctx->free_dm, free_dm);
	PUB(vctx->modify_flow_action_esp, modify_flow_action_esp);
	PUB(vctx->destroy_flow_action, destroy_flow_action);
	PUB(vctx->create_flow_action_esp, create_flow_action_esp);
	PUB(vctx->modify_qp_rate_limit, modify_qp_rate_limit);
	PUB(vctx->alloc_parent_domain, alloc_parent_domain);
	PUB(vctx->dealloc_td, dealloc_td);
	PUB(vctx->alloc_td, alloc_td);
	PUB(vctx->modify_cq, modify_cq);
	PUB(vctx->post_srq_ops, post_srq_ops);
	PUB(vctx->destroy_rwq_ind_table, destroy_rwq_ind_table);
	PUB(vctx->create_rwq_ind_table, create_rwq_ind_table);
	PUB(vctx->destroy_wq, destroy_wq);
	PUB(vctx->modify_wq, modify_wq);
	PUB(vctx->create_wq, create_wq);
	PUB(vctx->query_rt_values, query_rt_values);
	/* create_cq_ex is fronted by a library wrapper, not mirrored. */
	PUB(vctx->query_device_ex, query_device_ex);
	PUB(vctx->ibv_destroy_flow, destroy_flow);
	PUB(vctx->ibv_create_flow, create_flow);
	PUB(vctx->open_qp, open_qp);
	PUB(vctx->create_qp_ex, create_qp_ex);
	PUB(vctx->get_srq_num, get_srq_num);
	PUB(vctx->create_srq_ex, create_srq_ex);
	PUB(vctx->open_xrcd, open_xrcd);
	PUB(vctx->close_xrcd, close_xrcd);

	/*
	 * ibv_qp_to_qp_ex() must find PABI34_QP_EX where pabi34_qp keeps
	 * comp_mask, the bit create_qp_ex sets for the ibv_wr_* API.
	 */
	{
		struct pabi34_qp vqp;

		memset(&vqp, 0, sizeof(vqp));
		CHECK(ibv_qp_to_qp_ex(&vqp.qp) == NULL,
		      "ibv_qp_to_qp_ex without PABI34_QP_EX");
		vqp.comp_mask = PABI34_QP_EX;
		CHECK(ibv_qp_to_qp_ex(&vqp.qp) == &vqp.qp_ex,
		      "ibv_qp_to_qp_ex ignores pabi34_qp.comp_mask");
		vqp.comp_mask = PABI34_QP_XRCD;
		CHECK(ibv_qp_to_qp_ex(&vqp.qp) == NULL,
		      "ibv_qp_to_qp_ex takes PABI34_QP_XRCD for PABI34_QP_EX");
	}

	free(priv);
	free(vctx);
	if (failures) {
		fprintf(stderr, "%d layout mismatches\n", failures);
		return 1;
	}
	printf("verbs_set_ops agrees with pabi34.h on all %zu slots, "
	       "ibv_qp_to_qp_ex on PABI34_QP_EX\n",
	       nslots);
	return 0;
}
