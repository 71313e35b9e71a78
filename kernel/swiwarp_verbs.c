// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: verbs -- device queries, user contexts and mmap, PDs, memory
 * registration, QPs and SRQs, kernel post_send/post_recv and the user SQ
 * doorbell.
 */

#include <linux/etherdevice.h>
#include <linux/cred.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/vmalloc.h>
#include <net/addrconf.h>
#include <rdma/uverbs_ioctl.h>

#include "swiwarp.h"
#include "swiwarp_verbs.h"

static atomic_t swiwarp_obj_ids = ATOMIC_INIT(0);

/* ------------------------------------------------------------ device */

int swiwarp_query_device(struct ib_device *ibdev, struct ib_device_attr *a,
			 struct ib_udata *udata)
{
	struct swiwarp_dev *sdev = to_sdev(ibdev);

	if (udata && (udata->inlen || udata->outlen) &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	memset(a, 0, sizeof(*a));
	a->fw_ver = 1;
	a->sys_image_guid = ibdev->node_guid;
	a->max_mr_size = ~0ULL;
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = SWIWARP_VENDOR_ID;
	a->vendor_part_id = SWIWARP_VENDOR_PART;
	a->hw_ver = 0;
	a->max_qp = SWIWARP_MAX_QP;
	a->max_qp_wr = SWIWARP_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS;
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	a->max_send_sge = SWIWARP_MAX_SGE;
	a->max_recv_sge = SWIWARP_MAX_SGE;
	a->max_sge_rd = SWIWARP_MAX_SGE_RD;
	a->max_cq = SWIWARP_MAX_CQ;
	a->max_cqe = SWIWARP_MAX_CQE;
	a->max_mr = SWIWARP_MAX_MR;
	a->max_pd = SWIWARP_MAX_PD;
	/*
	 * As responder (Read Requests and Atomic Requests we serve at once:
	 * our IRD) and as initiator (ours outstanding: our ORD).
	 */
	a->max_qp_rd_atom = SWIWARP_MAX_IRD;
	a->max_qp_init_rd_atom = SWIWARP_MAX_ORD;
	a->max_res_rd_atom = SWIWARP_MAX_IRD * SWIWARP_MAX_QP;
	/*
	 * RFC 7306 atomics (toward swiwarp peers only) run as locked CPU
	 * instructions on the target memory itself, so they are atomic
	 * against every CPU's atomic access too, not only among QPs
	 * (Documentation/kernel.md).
	 */
	a->atomic_cap = IB_ATOMIC_GLOB;
	a->max_srq = SWIWARP_MAX_SRQ;
	a->max_srq_wr = SWIWARP_MAX_SRQ_WR;
	a->max_srq_sge = SWIWARP_MAX_SGE;
	a->max_fast_reg_page_list_len = SWIWARP_MAX_FR_PAGES;
	(void)sdev;
	return 0;
}

int swiwarp_query_port(struct ib_device *ibdev, u32 port,
		       struct ib_port_attr *a)
{
	struct swiwarp_dev *sdev = to_sdev(ibdev);
	int mtu = READ_ONCE(sdev->netdev->mtu);
	int rv;

	memset(a, 0, sizeof(*a));
	a->state = sdev->port_state;
	rv = ib_get_eth_speed(ibdev, port, &a->active_speed, &a->active_width);
	/*
	 * The netdev is being unregistered (or is moving to another
	 * namespace) and the device goes with it: the core's GID cache
	 * still asks (-ENODEV, logged as "ib_query_port failed").  The
	 * port has no link any more, so no speed either.
	 */
	if (rv == -ENODEV) {
		a->active_speed = IB_SPEED_SDR;
		a->active_width = IB_WIDTH_1X;
		a->state = IB_PORT_DOWN;
		rv = 0;
	}
	a->phys_state = sdev->port_state == IB_PORT_ACTIVE ?
		IB_PORT_PHYS_STATE_LINK_UP : IB_PORT_PHYS_STATE_DISABLED;
	a->max_mtu = ib_mtu_int_to_enum(mtu);
	a->active_mtu = ib_mtu_int_to_enum(mtu);
	a->gid_tbl_len = 1;
	a->max_msg_sz = SWIWARP_MAX_MSG;
	a->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP;
	return rv;
}

int swiwarp_get_port_immutable(struct ib_device *ibdev, u32 port,
			       struct ib_port_immutable *im)
{
	im->gid_tbl_len = 1;
	im->core_cap_flags = RDMA_CORE_PORT_IWARP;
	return 0;
}

int swiwarp_query_gid(struct ib_device *ibdev, u32 port, int idx,
		      union ib_gid *gid)
{
	struct swiwarp_dev *sdev = to_sdev(ibdev);

	if (idx != 0)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	swiwarp_dev_mac(sdev, gid->raw);
	return 0;
}

/* ------------------------------------------------------- ucontext/mmap */

int swiwarp_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	struct swiwarp_dev *sdev = to_sdev(uctx->device);
	struct swiwarp_uresp_alloc_ctx uresp = {};
	int rv;

	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	/*
	 * With disassociate_ucontext, uverbs takes no module reference for
	 * an open device file: a context takes one, so that rmmod is still
	 * refused while a process uses a device (it was before; an
	 * rdma link delete disassociates the contexts, and rmmod can go).
	 */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	if (atomic_inc_return(&sdev->num_ctx) > SWIWARP_MAX_QP) {
		atomic_dec(&sdev->num_ctx);
		module_put(THIS_MODULE);
		return -ENOMEM;
	}
	uresp.dev_id = sdev->base.index;
	uresp.abi_version = SWIWARP_ABI_VERSION;
	uresp.max_sge = SWIWARP_MAX_SGE;
	uresp.max_inline = SWIWARP_MAX_INLINE;
	uresp.sqe_size = sizeof(struct swiwarp_sqe);
	uresp.rqe_size = sizeof(struct swiwarp_rqe);
	uresp.cqe_size = sizeof(struct swiwarp_cqe);
	rv = ib_copy_to_udata(udata, &uresp, min(sizeof(uresp), udata->outlen));
	if (rv) {
		atomic_dec(&sdev->num_ctx);
		module_put(THIS_MODULE);
	}
	return rv;
}

/*
 * The reference dropped last: uverbs calls this under its per-file
 * hw_destroy_rwsem, which the device's unregistration (and so
 * swiwarp_exit()) waits for, so the module outlives this return.
 */
void swiwarp_dealloc_ucontext(struct ib_ucontext *uctx)
{
	atomic_dec(&to_sdev(uctx->device)->num_ctx);
	module_put(THIS_MODULE);
}

/*
 * The device leaves its user contexts while their processes live on: a
 * move to another network namespace (rdma dev set ... netns, the RDMA
 * core refuses it without this op), an rdma link delete or an rmmod.
 * uverbs then destroys every object of the context (as at process
 * exit) and answers the process's later commands with EIO.  There is
 * no hardware to stop.  The rings a process mapped stay mapped: they
 * were inserted page by page (remap_vmalloc_range()), every page holds
 * a reference for the mapping, so vfree() at destroy leaves them to the
 * process until it unmaps them; nothing of the device is reachable
 * through them any more.  (The core's zap list, rdma_umap_priv, is
 * private to it: a driver cannot enter a vmalloc mapping there.)
 */
void swiwarp_disassociate_ucontext(struct ib_ucontext *uctx)
{
	dev_dbg(&uctx->device->dev, "user context disassociated\n");
}

static void swiwarp_ring_release(struct kref *ref)
{
	struct swiwarp_ring *ring = container_of(ref, struct swiwarp_ring, ref);

	vfree(ring->addr);
	if (ring->mm) {
		atomic64_sub(ring->npages, &ring->mm->pinned_vm);
		mmdrop(ring->mm);
	}
	kfree(ring);
}

static void swiwarp_ring_put(struct swiwarp_ring *ring)
{
	if (ring)
		kref_put(&ring->ref, swiwarp_ring_release);
}

/*
 * A ring of size bytes; user is true for a user object's ring, which is
 * charged to the calling process's locked memory: NULL (-ENOMEM to the
 * caller) when that would exceed RLIMIT_MEMLOCK without CAP_IPC_LOCK.
 * Ring memory is not swappable and user space cannot free it, so an
 * unprivileged process must not be able to ask for more of it than it
 * may pin; ib_umem_get() applies the same rule to MRs.
 */
static struct swiwarp_ring *swiwarp_ring_alloc(size_t size, bool user)
{
	struct swiwarp_ring *ring = swiwarp_alloc(kzalloc(sizeof(*ring), GFP_KERNEL));
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (!ring)
		return NULL;
	kref_init(&ring->ref);
	ring->npages = PAGE_ALIGN(size) >> PAGE_SHIFT;
	if (user) {
		if (atomic64_add_return(ring->npages, &current->mm->pinned_vm) >
		    limit && !capable(CAP_IPC_LOCK)) {
			atomic64_sub(ring->npages, &current->mm->pinned_vm);
			kfree(ring);
			return NULL;
		}
		mmgrab(current->mm);
		ring->mm = current->mm;
	}
	ring->addr = swiwarp_alloc(vmalloc_user(ring->npages << PAGE_SHIFT));
	if (!ring->addr) {
		swiwarp_ring_put(ring);
		return NULL;
	}
	return ring;
}

static int swiwarp_ring_mmap_entry(struct ib_ucontext *uctx,
				   struct swiwarp_ring *ring, size_t len,
				   struct rdma_user_mmap_entry **entry, u64 *key)
{
	struct swiwarp_mmap_entry *e = swiwarp_alloc(kzalloc(sizeof(*e), GFP_KERNEL));
	int rv;

	if (!e)
		return -ENOMEM;
	kref_get(&ring->ref);
	e->ring = ring;
	rv = rdma_user_mmap_entry_insert(uctx, &e->rdma, PAGE_ALIGN(len));
	if (rv) {
		swiwarp_ring_put(ring);
		kfree(e);
		return rv;
	}
	*entry = &e->rdma;
	*key = rdma_user_mmap_get_offset(&e->rdma);
	return 0;
}

/*
 * The ring of a CQ, SRQ, SQ or RQ, of size bytes.  For a user object
 * (udata) also the mmap entry its creator maps it through, whose offset
 * and length go to *key and *mmap_len of the udata reply.  Nothing is
 * left on failure; swiwarp_ring_destroy() undoes it.
 */
int swiwarp_ring_create(struct ib_udata *udata, size_t size,
			struct swiwarp_ring **ring,
			struct rdma_user_mmap_entry **entry, u64 *key,
			u64 *mmap_len)
{
	struct ib_ucontext *uctx;
	int rv;

	*ring = swiwarp_ring_alloc(size, !!udata);
	if (!*ring)
		return -ENOMEM;
	if (!udata)
		return 0;
	uctx = &rdma_udata_to_drv_context(udata, struct swiwarp_ucontext,
					  base)->base;
	rv = swiwarp_ring_mmap_entry(uctx, *ring, size, entry, key);
	if (rv) {
		swiwarp_ring_put(*ring);
		*ring = NULL;
		return rv;
	}
	*mmap_len = PAGE_ALIGN(size);
	return 0;
}

/*
 * Undo swiwarp_ring_create() (ring may be NULL).  Removing the entry
 * stops new mappings; existing ones keep their own ring references.
 */
void swiwarp_ring_destroy(struct swiwarp_ring **ring,
			  struct rdma_user_mmap_entry **entry)
{
	if (*entry)
		rdma_user_mmap_entry_remove(*entry);
	*entry = NULL;
	swiwarp_ring_put(*ring);
	*ring = NULL;
}

int swiwarp_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *re;
	struct swiwarp_mmap_entry *e;
	int rv;

	if (vma->vm_start & (PAGE_SIZE - 1))
		return -EINVAL;
	re = rdma_user_mmap_entry_get(uctx, vma);
	if (!re)
		return -EINVAL;
	e = to_smmap(re);
	rv = remap_vmalloc_range(vma, e->ring->addr, 0);
	rdma_user_mmap_entry_put(re);
	return rv;
}

void swiwarp_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct swiwarp_mmap_entry *e = to_smmap(entry);

	swiwarp_ring_put(e->ring);
	kfree(e);
}

/* ----------------------------------------------------------------- PD */

int swiwarp_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct swiwarp_dev *sdev = to_sdev(ibpd->device);

	if (atomic_inc_return(&sdev->num_pd) > SWIWARP_MAX_PD) {
		atomic_dec(&sdev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

int swiwarp_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->num_pd);
	return 0;
}

/* ----------------------------------------------------------------- MR */

static struct swiwarp_mr *swiwarp_mr_new(struct ib_pd *pd, int access,
					 struct swiwarp_mem **memp)
{
	struct swiwarp_dev *sdev = to_sdev(pd->device);
	struct swiwarp_mem *mem;
	struct swiwarp_mr *mr;

	if (atomic_inc_return(&sdev->num_mr) > SWIWARP_MAX_MR) {
		atomic_dec(&sdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr = swiwarp_alloc(kzalloc(sizeof(*mr), GFP_KERNEL));
	mem = swiwarp_alloc(kzalloc(sizeof(*mem), GFP_KERNEL));
	if (!mr || !mem) {
		kfree(mr);
		kfree(mem);
		atomic_dec(&sdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&mem->ref);
	mem->sdev = sdev;
	mem->pd = pd;
	/*
	 * Exactly the rights asked for: a region registered without
	 * IB_ACCESS_LOCAL_WRITE was pinned read-only (ib_umem_get) and its
	 * pages are not dirtied on release, so it must never be a receive
	 * buffer or Read sink.
	 */
	mem->access = access;
	mr->mem = mem;
	*memp = mem;
	return mr;
}

/* Undo swiwarp_mr_new() for a mem never added to the STag table. */
static void swiwarp_mr_abort(struct swiwarp_dev *sdev, struct swiwarp_mr *mr)
{
	swiwarp_mem_put(mr->mem);
	kfree(mr);
	atomic_dec(&sdev->num_mr);
}

static struct ib_mr *swiwarp_mr_commit(struct swiwarp_dev *sdev,
				       struct swiwarp_mr *mr, u8 key)
{
	int rv = swiwarp_mem_add(sdev, mr->mem, key);

	if (rv) {
		swiwarp_mr_abort(sdev, mr);
		return ERR_PTR(rv);
	}
	mr->base.lkey = mr->mem->stag;
	mr->base.rkey = mr->mem->stag;
	return &mr->base;
}

struct ib_mr *swiwarp_get_dma_mr(struct ib_pd *pd, int access)
{
	struct swiwarp_dev *sdev = to_sdev(pd->device);
	struct swiwarp_mem *mem;
	struct swiwarp_mr *mr;
	struct ib_mr *ret;

	mr = swiwarp_mr_new(pd, access, &mem);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mem->type = SWIWARP_MEM_KVA;
	mem->va = 0;
	mem->len = ~0ULL;
	ret = swiwarp_mr_commit(sdev, mr, 0);
	if (!IS_ERR(ret))
		WRITE_ONCE(mem->valid, true);
	return ret;
}

struct ib_mr *swiwarp_reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
				  u64 iova, int access,
				  struct ib_udata *udata)
{
	struct swiwarp_dev *sdev = to_sdev(pd->device);
	struct swiwarp_ureq_reg_mr ureq = {};
	struct swiwarp_uresp_reg_mr uresp = {};
	struct swiwarp_mem *mem;
	struct swiwarp_mr *mr;
	struct ib_umem *umem;
	struct ib_mr *ret;
	int rv;

	if (!len || len > SWIWARP_MAX_MSG * 2ULL)
		return ERR_PTR(-EINVAL);
	if (access & (IB_ACCESS_MW_BIND | IB_ACCESS_ON_DEMAND))
		return ERR_PTR(-EOPNOTSUPP);
	if (udata && udata->inlen) {
		rv = ib_copy_from_udata(&ureq, udata,
					min(sizeof(ureq), udata->inlen));
		if (rv)
			return ERR_PTR(rv);
	}

	umem = ib_umem_get(pd->device, start, len, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);

	mr = swiwarp_mr_new(pd, access, &mem);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	rv = swiwarp_mem_umem_init(mem, umem);
	if (rv) {
		if (!mem->umem)
			ib_umem_release(umem);
		swiwarp_mr_abort(sdev, mr);
		return ERR_PTR(rv);
	}
	mem->va = iova;
	mem->len = len;
	ret = swiwarp_mr_commit(sdev, mr, ureq.stag_key);
	if (IS_ERR(ret))
		return ret;

	if (udata) {
		uresp.stag = mem->stag;
		rv = ib_copy_to_udata(udata, &uresp,
				      min(sizeof(uresp), udata->outlen));
		if (rv) {
			swiwarp_mem_remove(mem);
			kfree(mr);
			atomic_dec(&sdev->num_mr);
			return ERR_PTR(rv);
		}
	}
	WRITE_ONCE(mem->valid, true);
	return ret;
}

struct ib_mr *swiwarp_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			       u32 max_sg)
{
	struct swiwarp_dev *sdev = to_sdev(pd->device);
	struct swiwarp_mem *mem;
	struct swiwarp_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_sg || max_sg > SWIWARP_MAX_FR_PAGES)
		return ERR_PTR(-EINVAL);

	mr = swiwarp_mr_new(pd, 0, &mem);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mem->type = SWIWARP_MEM_PBL;
	mem->is_frmr = true;
	mem->access = 0;
	/* One allocation: the page list in use and the one being mapped. */
	mem->pbl = swiwarp_alloc(kcalloc(max_sg, 2 * sizeof(u64), GFP_KERNEL));
	if (!mem->pbl) {
		swiwarp_mr_abort(sdev, mr);
		return ERR_PTR(-ENOMEM);
	}
	mem->pbl_next = mem->pbl + max_sg;
	mem->pbl_max = max_sg;
	/* Not valid until registered with an IB_WR_REG_MR. */
	return swiwarp_mr_commit(sdev, mr, 0);
}

static int swiwarp_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct swiwarp_mem *mem = to_smr(ibmr)->mem;

	if (mem->pbl_next_num >= mem->pbl_max)
		return -ENOMEM;
	mem->pbl_next[mem->pbl_next_num++] = addr;
	return 0;
}

/*
 * Fill the MR's next page list; the IB_WR_REG_MR posted after this call
 * installs it when the SQ reaches it.  The MR may still be valid here:
 * ULPs post the LOCAL_INV of the previous registration and map the MR
 * again before that WR has run (ib_srp does, with its unsignaled
 * LOCAL_INV), which works because the SQ runs both in order.  The page
 * list in use changes only at IB_WR_REG_MR, on an invalid MR.
 */
int swiwarp_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int nents,
		      unsigned int *sg_offset)
{
	struct swiwarp_mem *mem = to_smr(ibmr)->mem;

	mem->pbl_next_num = 0;
	mem->pbl_next_pgsz = ibmr->page_size;
	return ib_sg_to_pages(ibmr, sg, nents, sg_offset, swiwarp_set_page);
}

int swiwarp_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct swiwarp_mr *mr = to_smr(ibmr);
	struct swiwarp_dev *sdev = to_sdev(ibmr->device);

	swiwarp_mem_remove(mr->mem);
	kfree(mr);
	atomic_dec(&sdev->num_mr);
	return 0;
}

/* ----------------------------------------------------------------- QP */

static enum swiwarp_qp_state swiwarp_ib_to_state(enum ib_qp_state s)
{
	switch (s) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
		return SWIWARP_QP_IDLE;
	case IB_QPS_RTR:
		return SWIWARP_QP_RTR;
	case IB_QPS_RTS:
		return SWIWARP_QP_RTS;
	case IB_QPS_SQD:
		return SWIWARP_QP_CLOSING;
	case IB_QPS_SQE:
		return SWIWARP_QP_TERMINATE;
	default:
		return SWIWARP_QP_ERROR;
	}
}

static enum ib_qp_state swiwarp_state_to_ib(enum swiwarp_qp_state s)
{
	static const enum ib_qp_state map[] = {
		[SWIWARP_QP_IDLE] = IB_QPS_INIT,
		[SWIWARP_QP_RTR] = IB_QPS_RTR,
		[SWIWARP_QP_RTS] = IB_QPS_RTS,
		[SWIWARP_QP_CLOSING] = IB_QPS_SQD,
		[SWIWARP_QP_TERMINATE] = IB_QPS_SQE,
		[SWIWARP_QP_ERROR] = IB_QPS_ERR,
	};

	return map[s];
}

static void swiwarp_qp_free_queues(struct swiwarp_qp *qp)
{
	swiwarp_ring_destroy(&qp->sq_ring, &qp->sq_entry);
	swiwarp_ring_destroy(&qp->rq_ring, &qp->rq_entry);
	qp->sendq = NULL;
	qp->recvq = NULL;
}

int swiwarp_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		      struct ib_udata *udata)
{
	struct swiwarp_dev *sdev = to_sdev(ibqp->device);
	struct swiwarp_qp *qp = to_sqp(ibqp);
	struct swiwarp_uresp_create_qp uresp = {};
	size_t sq_size, rq_size = 0;
	u32 id;
	int rv;

	if (attr->qp_type != IB_QPT_RC)
		return -EOPNOTSUPP;
	if (attr->create_flags)
		return -EOPNOTSUPP;
	if (attr->cap.max_send_wr > SWIWARP_MAX_QP_WR ||
	    attr->cap.max_recv_wr > SWIWARP_MAX_QP_WR ||
	    attr->cap.max_send_sge > SWIWARP_MAX_SGE ||
	    attr->cap.max_recv_sge > SWIWARP_MAX_SGE ||
	    attr->cap.max_inline_data > SWIWARP_MAX_INLINE)
		return -EINVAL;
	if (!attr->send_cq || !attr->recv_cq)
		return -EINVAL;
	if (!attr->srq && !attr->cap.max_recv_wr && !udata)
		attr->cap.max_recv_wr = 1;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_qp) > SWIWARP_MAX_QP) {
		rv = -ENOMEM;
		goto err_cnt;
	}

	qp->sdev = sdev;
	kref_init(&qp->ref);
	init_completion(&qp->freed);
	swiwarp_qp_state_init(qp);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->orq_lock);
	spin_lock_init(&qp->rx_lock);
	mutex_init(&qp->tx_lock);
	INIT_WORK(&qp->tx_work, swiwarp_tx_work);
	qp->user = !!udata;
	qp->owner = current_euid();
	qp->sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->scq = to_scq(attr->send_cq);
	qp->rcq = to_scq(attr->recv_cq);
	qp->srq = attr->srq ? to_ssrq(attr->srq) : NULL;
	qp->max_inline = SWIWARP_MAX_INLINE;

	qp->num_sqe = roundup_pow_of_two(max(attr->cap.max_send_wr, 1U));
	sq_size = qp->num_sqe * sizeof(struct swiwarp_sqe) +
		sizeof(struct swiwarp_sq_ctrl);
	rv = swiwarp_ring_create(udata, sq_size, &qp->sq_ring, &qp->sq_entry,
				 &uresp.sq_key, &uresp.sq_mmap_len);
	if (rv)
		goto err_cnt;
	qp->sendq = qp->sq_ring->addr;
	qp->sq_ctrl = (struct swiwarp_sq_ctrl *)&qp->sendq[qp->num_sqe];
	uresp.rq_key = SWIWARP_INVALID_MMAP_KEY;
	if (!qp->srq) {
		qp->num_rqe = roundup_pow_of_two(max(attr->cap.max_recv_wr,
						     1U));
		rq_size = qp->num_rqe * sizeof(struct swiwarp_rqe);
		rv = swiwarp_ring_create(udata, rq_size, &qp->rq_ring,
					 &qp->rq_entry, &uresp.rq_key,
					 &uresp.rq_mmap_len);
		if (rv)
			goto err_queues;
		qp->recvq = qp->rq_ring->addr;
	}

	rv = swiwarp_tx_init(qp);
	if (rv)
		goto err_queues;

	/*
	 * Reserve the QP number only (a NULL entry): the QP is published
	 * below once nothing can fail any more, so that nobody (rdma_cm
	 * with a guessed QP number, the netdev-down work) can take a
	 * reference to a QP the RDMA core is about to free.
	 */
	rv = xa_alloc(&sdev->qp_xa, &id, NULL, XA_LIMIT(1, SWIWARP_MAX_QP * 4),
		      GFP_KERNEL);
	if (rv)
		goto err_tx;
	qp->id = id;
	ibqp->qp_num = id;

	if (udata) {
		uresp.qp_id = id;
		uresp.num_sqe = qp->num_sqe;
		uresp.num_rqe = qp->num_rqe;
		uresp.max_inline = qp->max_inline;
		rv = ib_copy_to_udata(udata, &uresp,
				      min(sizeof(uresp), udata->outlen));
		if (rv)
			goto err_xa;
	}

	attr->cap.max_send_wr = qp->num_sqe;
	attr->cap.max_recv_wr = qp->num_rqe;
	attr->cap.max_send_sge = SWIWARP_MAX_SGE;
	attr->cap.max_recv_sge = SWIWARP_MAX_SGE;
	attr->cap.max_inline_data = qp->max_inline;
	/* Cannot fail: the slot is reserved. */
	xa_store(&sdev->qp_xa, id, qp, GFP_KERNEL);
	return 0;

err_xa:
	xa_erase(&sdev->qp_xa, id);
err_tx:
	swiwarp_tx_free(qp);
err_queues:
	swiwarp_qp_free_queues(qp);
err_cnt:
	atomic_dec(&sdev->num_qp);
	return rv;
}

int swiwarp_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int mask, struct ib_udata *udata)
{
	struct swiwarp_qp *qp = to_sqp(ibqp);
	enum swiwarp_qp_state next;
	int rv = 0;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (!(mask & IB_QP_STATE))
		return 0;

	next = swiwarp_ib_to_state(attr->qp_state);
	switch (next) {
	case SWIWARP_QP_IDLE:
	case SWIWARP_QP_RTR:
	case SWIWARP_QP_RTS:
		/*
		 * Entering RTS needs a connection and is done by the CM.
		 * The RDMA core and librdmacm step a QP through INIT, RTR
		 * and RTS before the connection exists: accept these as
		 * no-ops, but refuse a QP in ERROR going back without reset.
		 */
		down_read(&qp->state_lock);
		if (qp->state == SWIWARP_QP_ERROR &&
		    attr->qp_state != IB_QPS_RESET)
			rv = -EINVAL;
		up_read(&qp->state_lock);
		if (!rv && attr->qp_state == IB_QPS_RESET)
			rv = swiwarp_qp_modify_state(qp, SWIWARP_QP_IDLE);
		return rv;
	default:
		return swiwarp_qp_modify_state(qp, next);
	}
}

int swiwarp_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init)
{
	struct swiwarp_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	down_read(&qp->state_lock);
	attr->qp_state = swiwarp_state_to_ib(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->max_rd_atomic = qp->ord;
	attr->max_dest_rd_atomic = qp->ird;
	up_read(&qp->state_lock);
	attr->qp_access_flags = IB_ACCESS_LOCAL_WRITE |
		IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
		IB_ACCESS_REMOTE_ATOMIC;
	attr->path_mtu = ib_mtu_int_to_enum(READ_ONCE(qp->sdev->netdev->mtu));
	attr->cap.max_send_wr = qp->num_sqe;
	attr->cap.max_recv_wr = qp->num_rqe;
	attr->cap.max_send_sge = SWIWARP_MAX_SGE;
	attr->cap.max_recv_sge = SWIWARP_MAX_SGE;
	attr->cap.max_inline_data = qp->max_inline;
	init->qp_type = IB_QPT_RC;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

void swiwarp_qp_release(struct kref *ref)
{
	struct swiwarp_qp *qp = container_of(ref, struct swiwarp_qp, ref);

	complete(&qp->freed);
}

int swiwarp_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct swiwarp_qp *qp = to_sqp(ibqp);
	struct swiwarp_dev *sdev = qp->sdev;

	swiwarp_qp_modify_state(qp, SWIWARP_QP_ERROR);
	/* Graceful unless the state change above asked for a reset. */
	swiwarp_cm_qp_drop(qp, false);
	/* A cancelled TX run still holds the reference of its kick. */
	if (cancel_work_sync(&qp->tx_work))
		swiwarp_qp_put(qp);

	xa_erase(&sdev->qp_xa, qp->id);
	swiwarp_qp_put(qp);
	wait_for_completion(&qp->freed);

	mutex_lock(&qp->tx_lock);
	swiwarp_rx_cleanup(qp);
	swiwarp_tx_free(qp);
	mutex_unlock(&qp->tx_lock);
	swiwarp_qp_free_rd(qp);
	swiwarp_qp_free_queues(qp);
	atomic_dec(&sdev->num_qp);
	return 0;
}

void swiwarp_qp_add_ref(struct ib_qp *ibqp)
{
	swiwarp_qp_get(to_sqp(ibqp));
}

void swiwarp_qp_rem_ref(struct ib_qp *ibqp)
{
	swiwarp_qp_put(to_sqp(ibqp));
}

struct ib_qp *swiwarp_get_qp(struct ib_device *ibdev, int qpn)
{
	struct swiwarp_qp *qp = xa_load(&to_sdev(ibdev)->qp_xa, qpn);

	return qp ? &qp->base : NULL;
}

/* Fill one SQE from a kernel work request. */
static int swiwarp_fill_sqe(struct swiwarp_qp *qp, struct swiwarp_sqe *sqe,
			    const struct ib_send_wr *wr)
{
	u16 flags = 0;
	int i;

	if (wr->num_sge > SWIWARP_MAX_SGE)
		return -EINVAL;
	memset(sqe, 0, offsetof(struct swiwarp_sqe, flags));
	sqe->id = wr->wr_id;
	sqe->num_sge = wr->num_sge;
	sqe->rkey = 0;
	sqe->raddr = 0;
	sqe->inv_stag = 0;
	sqe->inline_len = 0;
	if ((wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all)
		flags |= SWIWARP_WQE_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		flags |= SWIWARP_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		flags |= SWIWARP_WQE_FENCE;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
		sqe->opcode = SWIWARP_OP_WRITE;
		sqe->rkey = rdma_wr(wr)->rkey;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		/*
		 * Only toward a peer that announced RFC 7306: anything else
		 * would answer the Immediate Data with a Terminate.
		 */
		if (!READ_ONCE(qp->peer_rfc7306))
			return -EOPNOTSUPP;
		sqe->opcode = SWIWARP_OP_WRITE_IMM;
		sqe->rkey = rdma_wr(wr)->rkey;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		sqe->imm_data = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		if (wr->num_sge > SWIWARP_MAX_SGE_RD)
			return -EINVAL;
		sqe->opcode = wr->opcode == IB_WR_RDMA_READ ?
			SWIWARP_OP_READ : SWIWARP_OP_READ_LOCAL_INV;
		sqe->rkey = rdma_wr(wr)->rkey;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		if (wr->opcode == IB_WR_RDMA_READ_WITH_INV)
			sqe->inv_stag = wr->ex.invalidate_rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		/*
		 * RFC 7306 Atomic Request: as Immediate Data, only toward a
		 * peer that announced RFC 7306.  One 8-octet sink SGE (sge[0];
		 * the operands follow it in the SQE).
		 */
		if (!READ_ONCE(qp->peer_rfc7306))
			return -EOPNOTSUPP;
		if (wr->num_sge != 1)
			return -EINVAL;
		sqe->opcode = wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			SWIWARP_OP_ATOMIC_CS : SWIWARP_OP_ATOMIC_FA;
		sqe->rkey = atomic_wr(wr)->rkey;
		sqe->raddr = atomic_wr(wr)->remote_addr;
		sqe->atomic.compare_add = atomic_wr(wr)->compare_add;
		sqe->atomic.swap = atomic_wr(wr)->swap;
		break;
	case IB_WR_SEND:
		sqe->opcode = SWIWARP_OP_SEND;
		break;
	case IB_WR_SEND_WITH_INV:
		sqe->opcode = SWIWARP_OP_SEND_INV;
		sqe->inv_stag = wr->ex.invalidate_rkey;
		break;
	case IB_WR_SEND_WITH_IMM:
		/*
		 * RFC 7306 has no Send with Immediate Data: between swiwarp
		 * peers a flagged Immediate Data message and the Send make
		 * one (Documentation/kernel.md); toward any other peer, no.
		 */
		if (!READ_ONCE(qp->peer_rfc7306))
			return -EOPNOTSUPP;
		sqe->opcode = SWIWARP_OP_SEND_IMM;
		sqe->imm_data = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_LOCAL_INV:
		sqe->opcode = SWIWARP_OP_LOCAL_INV;
		sqe->inv_stag = wr->ex.invalidate_rkey;
		sqe->num_sge = 0;
		break;
	case IB_WR_REG_MR:
		sqe->opcode = SWIWARP_OP_REG_MR;
		sqe->raddr = (uintptr_t)reg_wr(wr)->mr;
		sqe->rkey = reg_wr(wr)->key;
		sqe->inv_stag = reg_wr(wr)->access;
		sqe->num_sge = 0;
		break;
	default:
		return -EOPNOTSUPP;
	}

	if ((wr->send_flags & IB_SEND_INLINE) && wr->num_sge &&
	    (sqe->opcode == SWIWARP_OP_WRITE ||
	     sqe->opcode == SWIWARP_OP_WRITE_IMM ||
	     sqe->opcode == SWIWARP_OP_SEND ||
	     sqe->opcode == SWIWARP_OP_SEND_INV ||
	     sqe->opcode == SWIWARP_OP_SEND_IMM)) {
		u32 len = 0;

		for (i = 0; i < wr->num_sge; i++) {
			u32 l = wr->sg_list[i].length;

			if (l > qp->max_inline - len)
				return -EINVAL;
			memcpy(&sqe->inline_data[len],
			       (void *)(uintptr_t)wr->sg_list[i].addr, l);
			len += l;
		}
		sqe->inline_len = len;
		sqe->num_sge = 0;
		flags |= SWIWARP_WQE_INLINE;
	} else if (sqe->opcode != SWIWARP_OP_LOCAL_INV &&
		   sqe->opcode != SWIWARP_OP_REG_MR) {
		for (i = 0; i < wr->num_sge; i++) {
			sqe->sge[i].addr = wr->sg_list[i].addr;
			sqe->sge[i].length = wr->sg_list[i].length;
			sqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
	}
	swiwarp_flags_release(&sqe->flags, flags | SWIWARP_WQE_VALID);
	return 0;
}

int swiwarp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad)
{
	struct swiwarp_qp *qp = to_sqp(ibqp);
	enum swiwarp_qp_state state;
	unsigned long flags;
	int rv = 0;

	if (qp->user) {
		/* The doorbell: a 0-WR POST_SEND, in process context. */
		if (wr) {
			*bad = wr;
			return -EINVAL;
		}
		swiwarp_stat_inc(qp->sdev, SWIWARP_STAT_DOORBELLS);
		swiwarp_sq_kick_direct(qp);
		return 0;
	}

	/*
	 * Kernel consumers post from contexts that must not sleep (nvme-rdma
	 * from blk-mq dispatch under rcu_read_lock, CQ handlers in softirq),
	 * so no state_lock here.  The state is read once, as it was under the
	 * lock, which was dropped before posting anyway: every write of it is
	 * a WRITE_ONCE under state_lock (swiwarp_qp_set_state).
	 */
	state = READ_ONCE(qp->state);
	if (state != SWIWARP_QP_RTS && state != SWIWARP_QP_ERROR) {
		*bad = wr;
		return -ENOTCONN;
	}

	spin_lock_irqsave(&qp->sq_lock, flags);
	for (; wr; wr = wr->next) {
		struct swiwarp_sqe *sqe =
			&qp->sendq[qp->sq_put & (qp->num_sqe - 1)];

		if (swiwarp_flags_acquire(&sqe->flags) & SWIWARP_WQE_VALID) {
			rv = -ENOMEM;
			break;
		}
		rv = swiwarp_fill_sqe(qp, sqe, wr);
		if (rv)
			break;
		qp->sq_put++;
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (rv)
		*bad = wr;
	swiwarp_sq_kick(qp);
	return rv;
}

static int swiwarp_fill_rqe(struct swiwarp_rqe *rqe,
			    const struct ib_recv_wr *wr)
{
	int i;

	if (wr->num_sge > SWIWARP_MAX_SGE)
		return -EINVAL;
	rqe->id = wr->wr_id;
	rqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		rqe->sge[i].addr = wr->sg_list[i].addr;
		rqe->sge[i].length = wr->sg_list[i].length;
		rqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	swiwarp_flags_release(&rqe->flags, SWIWARP_WQE_VALID);
	return 0;
}

static int swiwarp_ring_post_recv(struct swiwarp_rqe *ring, u32 num,
				  u32 *put, spinlock_t *lock,
				  const struct ib_recv_wr *wr,
				  const struct ib_recv_wr **bad)
{
	unsigned long flags;
	int rv = 0;

	spin_lock_irqsave(lock, flags);
	for (; wr; wr = wr->next) {
		struct swiwarp_rqe *rqe = &ring[*put & (num - 1)];

		if (swiwarp_flags_acquire(&rqe->flags) & SWIWARP_WQE_VALID) {
			rv = -ENOMEM;
			break;
		}
		rv = swiwarp_fill_rqe(rqe, wr);
		if (rv)
			break;
		(*put)++;
	}
	spin_unlock_irqrestore(lock, flags);
	if (rv)
		*bad = wr;
	return rv;
}

int swiwarp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad)
{
	struct swiwarp_qp *qp = to_sqp(ibqp);
	int rv;

	if (qp->user || qp->srq) {
		*bad = wr;
		return -EINVAL;
	}
	rv = swiwarp_ring_post_recv(qp->recvq, qp->num_rqe, &qp->rq_put,
				    &qp->rq_lock, wr, bad);
	/*
	 * Receives posted to a QP in ERROR complete as flushed at once.  Not
	 * under state_lock, for the same reason as in swiwarp_post_send():
	 * ERROR only ends by the consumer's own modify to RESET, and the
	 * flush serialises with any other on rx_lock.  A transition to ERROR
	 * running now sets the state after this receive is in the ring and
	 * flushes after that, so the receive is flushed either way.
	 */
	if (READ_ONCE(qp->state) == SWIWARP_QP_ERROR)
		swiwarp_qp_flush(qp);
	return rv;
}

/* ---------------------------------------------------------------- SRQ */

int swiwarp_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		       struct ib_udata *udata)
{
	struct swiwarp_dev *sdev = to_sdev(ibsrq->device);
	struct swiwarp_srq *srq = to_ssrq(ibsrq);
	struct swiwarp_uresp_create_srq uresp = {};
	size_t size;
	int rv;

	if (attr->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (attr->attr.max_wr > SWIWARP_MAX_SRQ_WR ||
	    attr->attr.max_sge > SWIWARP_MAX_SGE ||
	    attr->attr.srq_limit > attr->attr.max_wr)
		return -EINVAL;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_srq) > SWIWARP_MAX_SRQ) {
		rv = -ENOMEM;
		goto err_cnt;
	}
	spin_lock_init(&srq->lock);
	srq->num_rqe = roundup_pow_of_two(max(attr->attr.max_wr, 1U));
	srq->limit = attr->attr.srq_limit;
	srq->user = !!udata;
	srq->id = atomic_inc_return(&swiwarp_obj_ids);
	size = srq->num_rqe * sizeof(struct swiwarp_rqe);
	rv = swiwarp_ring_create(udata, size, &srq->ring, &srq->entry,
				 &uresp.srq_key, &uresp.srq_mmap_len);
	if (rv)
		goto err_cnt;
	srq->queue = srq->ring->addr;
	if (udata) {
		uresp.srq_id = srq->id;
		uresp.num_rqe = srq->num_rqe;
		rv = ib_copy_to_udata(udata, &uresp,
				      min(sizeof(uresp), udata->outlen));
		if (rv)
			goto err_ring;
	}
	attr->attr.max_wr = srq->num_rqe;
	attr->attr.max_sge = SWIWARP_MAX_SGE;
	return 0;

err_ring:
	swiwarp_ring_destroy(&srq->ring, &srq->entry);
err_cnt:
	atomic_dec(&sdev->num_srq);
	return rv;
}

int swiwarp_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct swiwarp_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->num_rqe)
			return -EINVAL;
		spin_lock_irqsave(&srq->lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	return 0;
}

int swiwarp_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct swiwarp_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->num_rqe;
	attr->max_sge = SWIWARP_MAX_SGE;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int swiwarp_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct swiwarp_srq *srq = to_ssrq(ibsrq);

	swiwarp_ring_destroy(&srq->ring, &srq->entry);
	atomic_dec(&to_sdev(ibsrq->device)->num_srq);
	return 0;
}

int swiwarp_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad)
{
	struct swiwarp_srq *srq = to_ssrq(ibsrq);

	if (srq->user) {
		*bad = wr;
		return -EINVAL;
	}
	return swiwarp_ring_post_recv(srq->queue, srq->num_rqe, &srq->rq_put,
				      &srq->lock, wr, bad);
}
