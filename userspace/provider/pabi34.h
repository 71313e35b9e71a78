/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pabi34.h - the parts of libibverbs' provider-private ABI 34 that the
 * swiwarp provider uses, declared by the swiwarp project.
 *
 * rdma-core deliberately ships no provider headers (infiniband/driver.h and
 * kern-abi.h are build-internal), so an out-of-tree provider has to state the
 * interface itself.  Everything below was written from the observable ABI of
 * libibverbs 34..56 (IBVERBS_PRIVATE_34): the symbol list of
 * libibverbs.so.1, the public <infiniband/verbs.h>, the kernel uAPI
 * <rdma/ib_user_verbs.h>, and the layouts libibverbs itself relies on.
 *
 * Every layout libibverbs reads or writes is pinned with _Static_assert at
 * the bottom of this file.  The ops table is also checked at run time against
 * the real library by tests/provider/test_pabi34.c (verbs_set_ops must copy
 * each slot to the place the public header expects).
 *
 * Do not add anything here that the provider does not use.
 */
#ifndef SWIWARP_PABI34_H
#define SWIWARP_PABI34_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#define PABI34_VERSION 34

/* ---------------------------------------------------------------------------
 * Device matching and registration
 */

/* Kinds of entries in a provider's match table. */
enum pabi34_match_kind {
	PABI34_MATCH_END = 0, /* table terminator */
	PABI34_MATCH_PCI = 1,
	PABI34_MATCH_MODALIAS = 2,
	PABI34_MATCH_DRIVER_ID = 3, /* RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID */
};

struct pabi34_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind; /* enum pabi34_match_kind */
};

/* Opaque: libibverbs' description of a device found via netlink/sysfs. */
struct pabi34_sysfs_dev;

struct pabi34_list_node {
	struct pabi34_list_node *next, *prev;
};

struct pabi34_device;

/* Handed to verbs_register_driver_34(); libibverbs keeps the pointer. */
struct pabi34_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct pabi34_match_ent *match_table;
	const struct pabi34_device_ops **static_providers;
	bool (*match_device)(struct pabi34_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct pabi34_device *(*alloc_device)(
		struct pabi34_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct pabi34_device *device);
};

/*
 * The provider allocates this (embedded first in its own device struct) in
 * alloc_device; libibverbs fills in everything after 'device'.
 */
struct pabi34_device {
	struct ibv_device device;
	const struct pabi34_device_ops *ops;
	atomic_int refcount;
	struct pabi34_list_node entry;
	struct pabi34_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* The MR wrapper libibverbs hands back to dereg_mr. */
enum pabi34_mr_type {
	PABI34_MR_TYPE_MR,
	PABI34_MR_TYPE_NULL_MR,
	PABI34_MR_TYPE_IMPORTED_MR,
	PABI34_MR_TYPE_DMABUF_MR,
};

struct pabi34_mr {
	struct ibv_mr ibv_mr;
	enum pabi34_mr_type mr_type;
	int access;
};

/* Object wrappers the ibv_cmd_* helpers may write beyond the ibv_ object. */
struct pabi34_xrcd;

/*
 * pabi34_qp.comp_mask bits.  ibv_qp_to_qp_ex() returns &qp_ex only with
 * PABI34_QP_EX set; ibv_cmd_create_qp_ex() clears the mask, so the provider
 * sets the bit after it.
 */
enum {
	PABI34_QP_XRCD = 1 << 0,
	PABI34_QP_EX = 1 << 1,
};

struct pabi34_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct pabi34_xrcd *xrcd;
};

struct pabi34_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct pabi34_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

struct pabi34_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* ---------------------------------------------------------------------------
 * The context ops table.  verbs_set_ops() reads every one of these 76
 * pointers, in this order (alphabetical, as libibverbs keeps it), and copies
 * the non-NULL ones.  Slots swiwarp never sets are typed as generic pointers
 * to keep this declaration short; their position is what matters.
 */
typedef void (*pabi34_unused_op)(void);

struct pabi34_context_ops {
	pabi34_unused_op advise_mr;
	pabi34_unused_op alloc_dm;
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	pabi34_unused_op alloc_null_mr;
	pabi34_unused_op alloc_parent_domain;
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	pabi34_unused_op alloc_td;
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	pabi34_unused_op attach_counters_point_flow;
	pabi34_unused_op attach_mcast;
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	pabi34_unused_op close_xrcd;
	void (*cq_event)(struct ibv_cq *cq);
	pabi34_unused_op create_ah;
	pabi34_unused_op create_counters;
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	pabi34_unused_op create_cq_ex;
	pabi34_unused_op create_flow;
	pabi34_unused_op create_flow_action_esp;
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	pabi34_unused_op create_rwq_ind_table;
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	pabi34_unused_op create_srq_ex;
	pabi34_unused_op create_wq;
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	pabi34_unused_op dealloc_td;
	int (*dereg_mr)(struct pabi34_mr *vmr);
	pabi34_unused_op destroy_ah;
	pabi34_unused_op destroy_counters;
	int (*destroy_cq)(struct ibv_cq *cq);
	pabi34_unused_op destroy_flow;
	pabi34_unused_op destroy_flow_action;
	int (*destroy_qp)(struct ibv_qp *qp);
	pabi34_unused_op destroy_rwq_ind_table;
	int (*destroy_srq)(struct ibv_srq *srq);
	pabi34_unused_op destroy_wq;
	pabi34_unused_op detach_mcast;
	void (*free_context)(struct ibv_context *context);
	pabi34_unused_op free_dm;
	pabi34_unused_op get_srq_num;
	pabi34_unused_op import_dm;
	pabi34_unused_op import_mr;
	pabi34_unused_op import_pd;
	pabi34_unused_op modify_cq;
	pabi34_unused_op modify_flow_action_esp;
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	pabi34_unused_op modify_qp_rate_limit;
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	pabi34_unused_op modify_wq;
	pabi34_unused_op open_qp;
	pabi34_unused_op open_xrcd;
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	pabi34_unused_op post_srq_ops;
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	pabi34_unused_op query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	pabi34_unused_op query_qp_data_in_order;
	pabi34_unused_op query_rt_values;
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	pabi34_unused_op read_counters;
	pabi34_unused_op reg_dm_mr;
	pabi34_unused_op reg_dmabuf_mr;
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	pabi34_unused_op rereg_mr;
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	pabi34_unused_op set_ece;
	pabi34_unused_op unimport_dm;
	pabi34_unused_op unimport_mr;
	pabi34_unused_op unimport_pd;
};

#define PABI34_CONTEXT_OPS_COUNT 76

/* ---------------------------------------------------------------------------
 * Command buffers for the ibv_cmd_* helpers: the write() header followed by
 * the kernel's command struct; a provider appends its udata after that.
 */
#define PABI34_DECLARE_CMD(name, kstruct)                                      \
	struct pabi34_cmd_##name {                                             \
		struct ib_uverbs_cmd_hdr hdr;                                  \
		struct kstruct core;                                           \
	}

PABI34_DECLARE_CMD(get_context, ib_uverbs_get_context);
PABI34_DECLARE_CMD(query_port, ib_uverbs_query_port);
PABI34_DECLARE_CMD(alloc_pd, ib_uverbs_alloc_pd);
PABI34_DECLARE_CMD(reg_mr, ib_uverbs_reg_mr);
PABI34_DECLARE_CMD(create_cq, ib_uverbs_create_cq);
PABI34_DECLARE_CMD(create_qp, ib_uverbs_create_qp);
PABI34_DECLARE_CMD(modify_qp, ib_uverbs_modify_qp);
PABI34_DECLARE_CMD(query_qp, ib_uverbs_query_qp);
PABI34_DECLARE_CMD(create_srq, ib_uverbs_create_srq);
PABI34_DECLARE_CMD(modify_srq, ib_uverbs_modify_srq);
PABI34_DECLARE_CMD(query_srq, ib_uverbs_query_srq);

/*
 * The doorbell: a legacy POST_SEND write() with zero work requests.  The
 * kernel reads only the header and this struct when wr_count is 0.
 */
PABI34_DECLARE_CMD(post_send, ib_uverbs_post_send);

/* ---------------------------------------------------------------------------
 * Functions exported by libibverbs.so.1 under IBVERBS_PRIVATE_34.
 */
void verbs_register_driver_34(const struct pabi34_device_ops *ops);

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct pabi34_context_ops *ops);

int ibv_cmd_get_context(struct verbs_context *context,
			struct pabi34_cmd_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct pabi34_cmd_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct pabi34_cmd_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct pabi34_mr *vmr,
		   struct pabi34_cmd_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct pabi34_mr *vmr);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct pabi34_cmd_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct pabi34_cmd_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct pabi34_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct pabi34_cmd_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct pabi34_cmd_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		     struct ibv_qp_init_attr *init_attr,
		     struct pabi34_cmd_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct pabi34_cmd_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		       int attr_mask, struct pabi34_cmd_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		      struct pabi34_cmd_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

/* ---------------------------------------------------------------------------
 * Layout pins (x86_64, LP64).  If any of these fails, the declarations above
 * no longer describe the library and the provider must not be built.
 */
#define PABI34_PIN(cond) _Static_assert(cond, #cond)

PABI34_PIN(sizeof(void *) == 8);

PABI34_PIN(sizeof(struct pabi34_match_ent) == 24);
PABI34_PIN(offsetof(struct pabi34_match_ent, u) == 8);
PABI34_PIN(offsetof(struct pabi34_match_ent, vendor) == 16);
PABI34_PIN(offsetof(struct pabi34_match_ent, device) == 18);
PABI34_PIN(offsetof(struct pabi34_match_ent, kind) == 20);

PABI34_PIN(sizeof(struct pabi34_device_ops) == 9 * 8);
PABI34_PIN(offsetof(struct pabi34_device_ops, match_min_abi_version) == 8);
PABI34_PIN(offsetof(struct pabi34_device_ops, match_max_abi_version) == 12);
PABI34_PIN(offsetof(struct pabi34_device_ops, match_table) == 16);
PABI34_PIN(offsetof(struct pabi34_device_ops, static_providers) == 24);
PABI34_PIN(offsetof(struct pabi34_device_ops, match_device) == 32);
PABI34_PIN(offsetof(struct pabi34_device_ops, alloc_context) == 40);
PABI34_PIN(offsetof(struct pabi34_device_ops, import_context) == 48);
PABI34_PIN(offsetof(struct pabi34_device_ops, alloc_device) == 56);
PABI34_PIN(offsetof(struct pabi34_device_ops, uninit_device) == 64);

/* struct ibv_device is public; verbs_device extends it.  libibverbs reads
 * ops at 0x298 and sysfs at 0x2b8 (verbs_open_device). */
PABI34_PIN(sizeof(struct ibv_device) == 664);
PABI34_PIN(offsetof(struct pabi34_device, ops) == 0x298);
PABI34_PIN(offsetof(struct pabi34_device, refcount) == 0x2a0);
PABI34_PIN(offsetof(struct pabi34_device, entry) == 0x2a8);
PABI34_PIN(offsetof(struct pabi34_device, sysfs) == 0x2b8);
PABI34_PIN(offsetof(struct pabi34_device, core_support) == 0x2c0);
PABI34_PIN(sizeof(struct pabi34_device) == 0x2c8);

PABI34_PIN(offsetof(struct pabi34_mr, ibv_mr) == 0);
PABI34_PIN(offsetof(struct pabi34_mr, mr_type) == sizeof(struct ibv_mr));
PABI34_PIN(sizeof(struct pabi34_mr) == sizeof(struct ibv_mr) + 8);

PABI34_PIN(offsetof(struct pabi34_qp, qp) == 0);
PABI34_PIN(offsetof(struct ibv_qp_ex, qp_base) == 0);
/* ibv_qp_to_qp_ex() tests bit 1 of the u32 at 0x160 (libibverbs 44). */
PABI34_PIN(sizeof(struct ibv_qp_ex) == 0x160);
PABI34_PIN(offsetof(struct pabi34_qp, comp_mask) == 0x160);
PABI34_PIN(sizeof(((struct pabi34_qp *)0)->comp_mask) == 4);
PABI34_PIN(PABI34_QP_EX == 2);
PABI34_PIN(offsetof(struct pabi34_qp, xrcd) == 0x168);
PABI34_PIN(offsetof(struct pabi34_cq, cq) == 0);
PABI34_PIN(offsetof(struct pabi34_srq, srq) == 0);

/* 76 pointers; spot-check positions around every group. */
PABI34_PIN(sizeof(struct pabi34_context_ops) ==
	   PABI34_CONTEXT_OPS_COUNT * sizeof(void *));
PABI34_PIN(offsetof(struct pabi34_context_ops, alloc_mw) == 2 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, alloc_pd) == 5 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, async_event) == 7 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, bind_mw) == 10 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, cq_event) == 12 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, create_cq) == 15 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, create_qp) == 19 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, create_qp_ex) == 20 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, create_srq) == 22 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, dealloc_mw) == 25 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, dereg_mr) == 28 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, destroy_cq) == 31 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, destroy_qp) == 34 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, destroy_srq) == 36 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, free_context) == 39 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, import_dm) == 42 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, modify_qp) == 47 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, modify_srq) == 49 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, poll_cq) == 53 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, post_recv) == 54 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, post_send) == 55 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, post_srq_recv) == 57 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, query_device_ex) == 58 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, query_port) == 60 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, query_qp) == 61 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, query_srq) == 64 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, reg_mr) == 68 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, req_notify_cq) == 69 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, resize_cq) == 71 * 8);
PABI34_PIN(offsetof(struct pabi34_context_ops, unimport_pd) == 75 * 8);

/* Command buffers are the write() header plus the kernel struct, no gap. */
PABI34_PIN(sizeof(struct ib_uverbs_cmd_hdr) == 8);
PABI34_PIN(offsetof(struct pabi34_cmd_get_context, core) == 8);
PABI34_PIN(sizeof(struct pabi34_cmd_get_context) == 16);
PABI34_PIN(sizeof(struct pabi34_cmd_query_port) == 24);
PABI34_PIN(sizeof(struct pabi34_cmd_alloc_pd) == 16);
PABI34_PIN(sizeof(struct pabi34_cmd_reg_mr) == 48);
PABI34_PIN(sizeof(struct pabi34_cmd_create_cq) == 40);
PABI34_PIN(sizeof(struct pabi34_cmd_create_qp) == 64);
PABI34_PIN(sizeof(struct pabi34_cmd_create_srq) == 40);
PABI34_PIN(sizeof(struct pabi34_cmd_post_send) == 32);
PABI34_PIN(offsetof(struct pabi34_cmd_post_send, core.wr_count) == 20);

#endif /* SWIWARP_PABI34_H */
