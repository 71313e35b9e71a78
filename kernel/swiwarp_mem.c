// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * swiwarp: STag table and access to registered memory: access checks,
 * copies, atomics, the scatter/gather lists of work requests (checked and
 * walked for TX and RX alike) and the local MR operations (fast register,
 * invalidate).
 *
 * An STag is a 24-bit index into the device's mem_xa plus an 8-bit key
 * chosen by the consumer.  Lookups run under RCU (also from softirq) and
 * take a reference with kref_get_unless_zero(); the object is freed after
 * a grace period.
 */

#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "swiwarp.h"
#include "iwarp/rdmap.h"

#define SWIWARP_STAG_IDX_MAX 0xffffffU

int swiwarp_mem_add(struct swiwarp_dev *sdev, struct swiwarp_mem *mem,
		    u8 key)
{
	u32 idx;
	int rv;

	kref_init(&mem->ref);
	mem->sdev = sdev;
	rv = xa_alloc_cyclic(&sdev->mem_xa, &idx, mem,
			     XA_LIMIT(1, SWIWARP_STAG_IDX_MAX),
			     &sdev->mem_next, GFP_KERNEL);
	if (rv < 0)
		return rv;
	/* Publish the STag before the entry can be matched. */
	WRITE_ONCE(mem->stag, idx << 8 | key);
	return 0;
}

static void swiwarp_mem_destroy(struct swiwarp_mem *mem)
{
	if (mem->umem)
		ib_umem_release(mem->umem);
	kvfree(mem->pages);
	kfree(mem->pbl);
	kfree_rcu(mem, rcu);
}

static void swiwarp_mem_free_work(struct work_struct *work)
{
	swiwarp_mem_destroy(container_of(work, struct swiwarp_mem, free_work));
}

/*
 * The last reference can go in softirq or under a spinlock: the RX engine
 * holds one on a receive buffer's or tagged sink's MR until the
 * completion, and the consumer may deregister the MR meanwhile.  Releasing
 * a umem unpins its pages with set_page_dirty_lock(), which sleeps on a
 * contended page lock, and kvfree() of a vmalloc'ed page array may sleep
 * too; so in atomic context the release goes to a work item.  Those run on
 * swiwarp_tx_wq, which swiwarp_dealloc_driver() flushes before the device
 * (which ib_umem_release() still looks at) goes away.
 */
static void swiwarp_mem_free(struct kref *ref)
{
	struct swiwarp_mem *mem = container_of(ref, struct swiwarp_mem, ref);

	if (preemptible()) {
		swiwarp_mem_destroy(mem);
		return;
	}
	INIT_WORK(&mem->free_work, swiwarp_mem_free_work);
	queue_work(swiwarp_tx_wq, &mem->free_work);
}

void swiwarp_mem_put(struct swiwarp_mem *mem)
{
	kref_put(&mem->ref, swiwarp_mem_free);
}

/* Remove from the table and drop the table's reference. */
void swiwarp_mem_remove(struct swiwarp_mem *mem)
{
	WRITE_ONCE(mem->valid, false);
	xa_erase(&mem->sdev->mem_xa, mem->stag >> 8);
	swiwarp_mem_put(mem);
}

struct swiwarp_mem *swiwarp_mem_get(struct swiwarp_dev *sdev, u32 stag)
{
	struct swiwarp_mem *mem;

	rcu_read_lock();
	mem = xa_load(&sdev->mem_xa, stag >> 8);
	if (mem && (READ_ONCE(mem->stag) != stag ||
		    !kref_get_unless_zero(&mem->ref)))
		mem = NULL;
	rcu_read_unlock();
	return mem;
}

/*
 * Check a tagged or local access: valid STag, same protection domain,
 * the required access rights and [va, va + len) inside the region.
 * Returns 0 or a negative errno that callers map to a completion status
 * or Terminate code: -EINVAL invalid STag, -EPERM the STag belongs to
 * another protection domain than the QP's (RFC 5040/5041 "STag not
 * associated with RDMAP/DDP Stream"), -EACCES access rights, -ERANGE
 * bounds.
 */
int swiwarp_mem_check(struct swiwarp_mem *mem, void *pd, int access,
		      u64 va, u64 len)
{
	u64 end;

	if (!READ_ONCE(mem->valid))
		return -EINVAL;
	if (mem->pd != pd)
		return -EPERM;
	if ((mem->access & access) != access)
		return -EACCES;
	if (mem->type == SWIWARP_MEM_KVA)
		return 0;
	if (check_add_overflow(va, len, &end))
		return -ERANGE;
	if (va < mem->va || end > mem->va + mem->len)
		return -ERANGE;
	return 0;
}

/*
 * Call fn on each virtually contiguous kernel mapping of [va, va + len)
 * of registered memory.  Bounds must have been checked with
 * swiwarp_mem_check().  Safe in softirq context.
 */
int swiwarp_mem_walk(struct swiwarp_mem *mem, u64 va, u32 len,
		     swiwarp_chunk_fn fn, void *arg)
{
	int rv = 0;

	if (!len)
		return 0;

	switch (mem->type) {
	case SWIWARP_MEM_KVA:
		return fn((void *)(uintptr_t)va, len, arg);
	case SWIWARP_MEM_UMEM: {
		u64 off = va - mem->va + mem->pg_off;

		while (len && !rv) {
			unsigned long pg = off >> PAGE_SHIFT;
			unsigned int in_pg = off & ~PAGE_MASK;
			u32 n = min_t(u32, len, PAGE_SIZE - in_pg);
			void *kva;

			if (pg >= mem->npages)
				return -EFAULT;
			kva = kmap_local_page(mem->pages[pg]);
			rv = fn(kva + in_pg, n, arg);
			kunmap_local(kva);
			off += n;
			len -= n;
		}
		return rv;
	}
	case SWIWARP_MEM_PBL: {
		u64 pgsz = mem->pbl_pgsz;
		u64 off = va - (mem->va & ~(pgsz - 1));

		if (!pgsz || (pgsz & (pgsz - 1)))
			return -EFAULT;
		while (len && !rv) {
			u64 pg = off >> __ffs64(pgsz);
			u64 in_pg = off & (pgsz - 1);
			u32 n = min_t(u64, len, pgsz - in_pg);

			if (pg >= mem->pbl_num)
				return -EFAULT;
			rv = fn((void *)(uintptr_t)(mem->pbl[pg] + in_pg), n,
				arg);
			off += n;
			len -= n;
		}
		return rv;
	}
	}
	return -EINVAL;
}

static int swiwarp_chunk_to_buf(void *kva, u32 len, void *arg)
{
	u8 **p = arg;

	memcpy(*p, kva, len);
	*p += len;
	return 0;
}

static int swiwarp_chunk_from_buf(void *kva, u32 len, void *arg)
{
	u8 **p = arg;

	memcpy(kva, *p, len);
	*p += len;
	return 0;
}

int swiwarp_mem_copy(struct swiwarp_mem *mem, u64 va, void *buf, u32 len,
		     bool to_mem)
{
	u8 *p = buf;

	return swiwarp_mem_walk(mem, va, len, to_mem ? swiwarp_chunk_from_buf :
				swiwarp_chunk_to_buf, &p);
}

/* -------------------------------------------------- scatter/gather lists */

/*
 * Look up and check every SGE of wqe for access (0 for a local read,
 * IB_ACCESS_LOCAL_WRITE for a sink) and set wqe->bytes.  The references
 * taken stay in wqe->mem[] (released with swiwarp_wqe_put_mem()), also
 * on failure.  Returns a wc status.  Used for SQEs and RQEs.
 */
int swiwarp_wqe_check_sgl(struct swiwarp_qp *qp, struct swiwarp_wqe *wqe,
			  int access)
{
	u32 total = 0;
	int i;

	for (i = 0; i < wqe->sqe.num_sge; i++) {
		struct swiwarp_sge *sge = &wqe->sqe.sge[i];
		struct swiwarp_mem *mem;

		if (!sge->length)
			continue;
		mem = swiwarp_mem_get(qp->sdev, sge->lkey);
		if (!mem)
			return SWIWARP_WC_LOC_PROT_ERR;
		wqe->mem[i] = mem;
		if (swiwarp_mem_check(mem, qp->base.pd, access, sge->addr,
				      sge->length))
			return SWIWARP_WC_LOC_PROT_ERR;
		if (check_add_overflow(total, sge->length, &total) ||
		    total > SWIWARP_MAX_MSG)
			return SWIWARP_WC_LOC_LEN_ERR;
	}
	wqe->bytes = total;
	return SWIWARP_WC_SUCCESS;
}

/*
 * Call fn on every kernel mapping of the n bytes at message offset off of
 * the WQE's scatter/gather list (which swiwarp_wqe_check_sgl() checked).
 * Used for both directions: gathering Send/Write payload and placing a
 * received Send into its receive buffer.
 */
int swiwarp_sgl_walk(struct swiwarp_wqe *wqe, u32 off, u32 n,
		     swiwarp_chunk_fn fn, void *arg)
{
	int i, rv;

	for (i = 0; i < wqe->sqe.num_sge && n; i++) {
		struct swiwarp_sge *sge = &wqe->sqe.sge[i];
		u32 take;

		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		take = min(sge->length - off, n);
		rv = swiwarp_mem_walk(wqe->mem[i], sge->addr + off, take, fn,
				      arg);
		if (rv)
			return rv;
		n -= take;
		off = 0;
	}
	return n ? -EFAULT : 0;
}

/* Copy n bytes at message offset off of the WQE's SGL to buf. */
int swiwarp_sgl_gather(struct swiwarp_wqe *wqe, u32 off, u32 n, void *buf)
{
	u8 *p = buf;

	return swiwarp_sgl_walk(wqe, off, n, swiwarp_chunk_to_buf, &p);
}

/*
 * RFC 7306 Fetch-and-Add with an Add Mask: a set mask bit ends a field,
 * so the carry out of that bit is dropped; mask 0 is one 64-bit add.
 */
static u64 swiwarp_masked_add(u64 a, u64 b, u64 mask)
{
	u64 sum = 0, carry = 0;
	int i;

	for (i = 0; i < 64; i++) {
		u64 x = (a >> i) & 1, y = (b >> i) & 1;

		sum |= (x ^ y ^ carry) << i;
		carry = (x & y) | (x & carry) | (y & carry);
		if ((mask >> i) & 1)
			carry = 0;
	}
	return sum;
}

/* The new target value for orig, or false to leave it unchanged. */
static bool swiwarp_atomic_new(const struct swiwarp_atomic_op *op, u64 orig,
			       u64 *val)
{
	switch (op->aop) {
	case IWARP_AOP_FETCH_ADD:
		*val = swiwarp_masked_add(orig, op->add_swap, op->add_swap_mask);
		return true;
	case IWARP_AOP_COMPARE_SWAP:
		if ((orig ^ op->compare) & op->compare_mask)
			return false;
		*val = (orig & ~op->add_swap_mask) |
		       (op->add_swap & op->add_swap_mask);
		return true;
	}
	return false;
}

static int swiwarp_chunk_atomic(void *kva, u32 len, void *arg)
{
	struct swiwarp_atomic_op *op = arg;
	atomic64_t *p = kva;
	s64 old;
	u64 val;

	/* the kernel mapping must be aligned too (iova vs. user address) */
	if (len != sizeof(u64) || !IS_ALIGNED((uintptr_t)kva, sizeof(u64)))
		return -EINVAL;
	if (op->aop == IWARP_AOP_FETCH_ADD && !op->add_swap_mask) {
		op->orig = atomic64_fetch_add((s64)op->add_swap, p);
		return 0;
	}
	old = atomic64_read(p);
	do {
		if (!swiwarp_atomic_new(op, old, &val))
			break;
	} while (!atomic64_try_cmpxchg(p, &old, (s64)val));
	op->orig = old;
	return 0;
}

/*
 * Perform an RFC 7306 atomic operation on the 8 octets at va with the
 * CPU's locked instructions on the memory itself (through its kernel
 * mapping), so it is atomic against other QPs and against any CPU's
 * atomic access to the same memory.  Bounds, rights and the alignment
 * of va must have been checked; -EINVAL if the mapping is misaligned.
 */
int swiwarp_mem_atomic(struct swiwarp_mem *mem, u64 va,
		       struct swiwarp_atomic_op *op)
{
	return swiwarp_mem_walk(mem, va, sizeof(u64), swiwarp_chunk_atomic, op);
}

/* Build the page array of a pinned user region. */
int swiwarp_mem_umem_init(struct swiwarp_mem *mem, struct ib_umem *umem)
{
	struct sg_page_iter it;
	unsigned long n = 0;

	mem->npages = ib_umem_num_pages(umem);
	mem->pages = swiwarp_alloc(kvcalloc(mem->npages, sizeof(*mem->pages),
					    GFP_KERNEL));
	if (!mem->pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (n >= mem->npages)
			break;
		mem->pages[n++] = sg_page_iter_page(&it);
	}
	if (n != mem->npages)
		return -EFAULT;
	mem->umem = umem;
	mem->pg_off = ib_umem_offset(umem);
	mem->type = SWIWARP_MEM_UMEM;
	return 0;
}

/*
 * Invalidate an STag (Local Invalidate, Send with Invalidate, Read with
 * Local Invalidate).  Only fast-register memory may be invalidated
 * remotely; the PD must match.
 */
int swiwarp_mem_invalidate(struct swiwarp_dev *sdev, void *pd, u32 stag,
			   bool remote)
{
	struct swiwarp_mem *mem = swiwarp_mem_get(sdev, stag);
	int rv = 0;

	if (!mem)
		return -EINVAL;
	if (mem->pd != pd)
		rv = -EACCES;
	else if (remote && !mem->is_frmr)
		rv = -EACCES;
	else
		WRITE_ONCE(mem->valid, false);
	swiwarp_mem_put(mem);
	return rv;
}

/*
 * IB_WR_REG_MR of a kernel ULP: make the fast-register MR ibmr valid in
 * pd, with the page list of its last map_mr_sg (swiwarp_map_mr_sg()), the
 * 8-bit key the ULP chose and the rights it gave (IB_ACCESS_*).  -EINVAL
 * for an MR of another PD, not fast-register, or still valid.
 */
int swiwarp_mem_fast_reg(struct ib_mr *ibmr, void *pd, u8 key, int access)
{
	struct swiwarp_mem *mem = to_smr(ibmr)->mem;
	u32 stag = (mem->stag & ~0xffU) | key;

	if (mem->pd != pd || !mem->is_frmr || READ_ONCE(mem->valid))
		return -EINVAL;
	memcpy(mem->pbl, mem->pbl_next,
	       mem->pbl_next_num * sizeof(*mem->pbl));
	mem->pbl_num = mem->pbl_next_num;
	mem->pbl_pgsz = mem->pbl_next_pgsz;
	/* The rights the ULP gave in its IB_WR_REG_MR, no more. */
	mem->access = access;
	mem->va = ibmr->iova;
	mem->len = ibmr->length;
	WRITE_ONCE(mem->stag, stag);
	ibmr->lkey = stag;
	ibmr->rkey = stag;
	/* Region fields are visible before the STag turns valid. */
	smp_wmb();
	WRITE_ONCE(mem->valid, true);
	return 0;
}
