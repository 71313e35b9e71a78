/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* swiwarp: verbs entry points registered in ib_device_ops. */

#ifndef SWIWARP_VERBS_H
#define SWIWARP_VERBS_H

#include "swiwarp.h"

int swiwarp_query_device(struct ib_device *ibdev, struct ib_device_attr *a,
			 struct ib_udata *udata);
int swiwarp_query_port(struct ib_device *ibdev, u32 port,
		       struct ib_port_attr *a);
int swiwarp_get_port_immutable(struct ib_device *ibdev, u32 port,
			       struct ib_port_immutable *im);
int swiwarp_query_gid(struct ib_device *ibdev, u32 port, int idx,
		      union ib_gid *gid);
void swiwarp_dealloc_driver(struct ib_device *ibdev);

int swiwarp_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata);
void swiwarp_dealloc_ucontext(struct ib_ucontext *uctx);
void swiwarp_disassociate_ucontext(struct ib_ucontext *uctx);
int swiwarp_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void swiwarp_mmap_free(struct rdma_user_mmap_entry *entry);

int swiwarp_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int swiwarp_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

struct ib_mr *swiwarp_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *swiwarp_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				  u64 iova, int access,
				  struct ib_udata *udata);
struct ib_mr *swiwarp_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_sg);
int swiwarp_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int nents,
		      unsigned int *sg_offset);
int swiwarp_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

int swiwarp_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		      struct ib_udata *udata);
int swiwarp_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int mask, struct ib_udata *udata);
int swiwarp_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init);
int swiwarp_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int swiwarp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad);
int swiwarp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad);
void swiwarp_qp_add_ref(struct ib_qp *ibqp);
void swiwarp_qp_rem_ref(struct ib_qp *ibqp);
struct ib_qp *swiwarp_get_qp(struct ib_device *ibdev, int qpn);

int swiwarp_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		       struct ib_udata *udata);
int swiwarp_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata);
int swiwarp_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int swiwarp_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int swiwarp_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad);

#endif /* SWIWARP_VERBS_H */
