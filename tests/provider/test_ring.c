// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the provider's ring logic (userspace/provider/swiwarp_ring.c)
 * on in-memory rings.  A small fake "kernel" in this file consumes SQEs and
 * RQEs and produces CQEs following the protocol of swiwarp-abi.h, so the
 * tests check the provider against the header, not against itself.
 *
 * Usage: provider_test_ring CASE   (each TEST(name) is one CTest test)
 *        provider_test_ring        (runs all)
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "swiwarp_ring.h"

static int failures;

/* Every fake ring is freed at exit, so sanitizer builds report no leaks. */
static void *allocs[256];
static unsigned int nallocs;

static void *track(void *p)
{
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	if (nallocs < sizeof(allocs) / sizeof(*allocs))
		allocs[nallocs++] = p;
	return p;
}

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			failures++;                                            \
		}                                                              \
	} while (0)

/* ---------------------------------------------------------------------
 * Fake rings laid out as the kernel maps them: entries, then control word.
 */
struct fake_sq {
	struct swr_sq sq;
	uint32_t kcons; /* kernel consumer index */
	void *mem;
};

static void fake_sq_init(struct fake_sq *f, uint32_t num, uint32_t max_sge,
			 uint32_t max_inline, bool sig_all)
{
	size_t len = num * sizeof(struct swiwarp_sqe) +
		     sizeof(struct swiwarp_sq_ctrl);

	memset(f, 0, sizeof(*f));
	f->mem = track(aligned_alloc(4096, (len + 4095) & ~(size_t)4095));
	memset(f->mem, 0xee, len); /* stale garbage in every slot ... */
	f->sq.ring = f->mem;
	for (uint32_t i = 0; i < num; i++)
		f->sq.ring[i].flags = 0; /* ... but all slots free */
	f->sq.ctrl = (struct swiwarp_sq_ctrl *)(f->sq.ring + num);
	memset(f->sq.ctrl, 0, sizeof(*f->sq.ctrl));
	f->sq.num = num;
	f->sq.max_sge = max_sge;
	f->sq.max_inline = max_inline;
	f->sq.sig_all = sig_all;
}

/* Kernel side: take the SQE at the consumer index if VALID. */
static bool kernel_take_sqe(struct fake_sq *f, struct swiwarp_sqe *out)
{
	struct swiwarp_sqe *s = &f->sq.ring[f->kcons & (f->sq.num - 1)];
	uint16_t fl = __atomic_load_n(&s->flags, __ATOMIC_ACQUIRE);

	if (!(fl & SWIWARP_WQE_VALID))
		return false;
	*out = *s;
	out->flags = fl;
	__atomic_store_n(&s->flags, 0, __ATOMIC_RELEASE);
	f->kcons++;
	return true;
}

struct fake_rq {
	struct swr_rq rq;
	uint32_t kcons;
};

static void fake_rq_init(struct fake_rq *f, uint32_t num, uint32_t max_sge)
{
	memset(f, 0, sizeof(*f));
	f->rq.ring = track(calloc(num, sizeof(struct swiwarp_rqe)));
	f->rq.num = num;
	f->rq.max_sge = max_sge;
}

static bool kernel_take_rqe(struct fake_rq *f, struct swiwarp_rqe *out)
{
	struct swiwarp_rqe *r = &f->rq.ring[f->kcons & (f->rq.num - 1)];
	uint16_t fl = __atomic_load_n(&r->flags, __ATOMIC_ACQUIRE);

	if (!(fl & SWIWARP_WQE_VALID))
		return false;
	*out = *r;
	__atomic_store_n(&r->flags, 0, __ATOMIC_RELEASE);
	f->kcons++;
	return true;
}

struct fake_cq {
	struct swr_cq cq;
	uint32_t kprod;
};

static void fake_cq_init(struct fake_cq *f, uint32_t num)
{
	memset(f, 0, sizeof(*f));
	f->cq.ring = track(calloc(1, num * sizeof(struct swiwarp_cqe) +
					     sizeof(struct swiwarp_cq_ctrl)));
	f->cq.ctrl = (struct swiwarp_cq_ctrl *)(f->cq.ring + num);
	f->cq.num = num;
}

/* Kernel side: publish a CQE; false if the slot is still owned by user
 * space (CQ overflow). */
static bool kernel_put_cqe(struct fake_cq *f, uint64_t id, uint8_t op,
			   uint8_t status, uint32_t bytes, uint32_t qp,
			   uint16_t extra_flags, uint32_t inv)
{
	struct swiwarp_cqe *c = &f->cq.ring[f->kprod & (f->cq.num - 1)];

	if (__atomic_load_n(&c->flags, __ATOMIC_ACQUIRE) & SWIWARP_CQE_VALID)
		return false;
	c->id = id;
	c->opcode = op;
	c->status = status;
	c->bytes = bytes;
	c->qp_id = qp;
	c->inv_stag = inv;
	__atomic_store_n(&c->flags, SWIWARP_CQE_VALID | extra_flags,
			 __ATOMIC_RELEASE);
	f->kprod++;
	return true;
}

static struct ibv_send_wr send_wr(uint64_t id, enum ibv_wr_opcode op,
				  struct ibv_sge *sge, int nsge,
				  unsigned int flags)
{
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = op;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	wr.send_flags = flags;
	return wr;
}

/* ---------------------------------------------------------------------
 * Tests
 */
#define TEST(name) static void test_##name(void)

TEST(sq_fields)
{
	struct fake_sq f;
	struct ibv_sge sge[3] = {
		{0x1000, 10, 0x11}, {0x2000, 20, 0x22}, {0x3000, 30, 0x33}};
	struct ibv_send_wr w = send_wr(42, IBV_WR_RDMA_WRITE, sge, 3,
				       IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	struct ibv_send_wr *bad = NULL;
	struct swiwarp_sqe k;
	unsigned int n;

	fake_sq_init(&f, 8, 6, 96, false);
	w.wr.rdma.remote_addr = 0xabcdef0123ull;
	w.wr.rdma.rkey = 0x7788;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	CHECK(n == 1);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.id == 42);
	CHECK(k.opcode == SWIWARP_OP_WRITE);
	CHECK(k.flags ==
	      (SWIWARP_WQE_VALID | SWIWARP_WQE_SIGNALED | SWIWARP_WQE_FENCE));
	CHECK(k.num_sge == 3);
	CHECK(k.raddr == 0xabcdef0123ull && k.rkey == 0x7788);
	CHECK(k.inline_len == 0 && k.inv_stag == 0);
	CHECK(k.sge[1].addr == 0x2000 && k.sge[1].length == 20 &&
	      k.sge[1].lkey == 0x22);
	CHECK(k.sge[2].addr == 0x3000 && k.sge[2].lkey == 0x33);

	/* SEND with invalidate and solicited event; READ with one SGE */
	w = send_wr(43, IBV_WR_SEND_WITH_INV, sge, 1, IBV_SEND_SOLICITED);
	w.invalidate_rkey = 0x5566;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.opcode == SWIWARP_OP_SEND_INV && k.inv_stag == 0x5566);
	CHECK(k.flags == (SWIWARP_WQE_VALID | SWIWARP_WQE_SOLICITED));
	CHECK(k.rkey == 0 && k.raddr == 0);

	w = send_wr(44, IBV_WR_RDMA_READ, sge, 1, 0);
	w.wr.rdma.remote_addr = 0x99;
	w.wr.rdma.rkey = 0x98;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.opcode == SWIWARP_OP_READ && k.num_sge == 1);
	CHECK(k.raddr == 0x99 && k.rkey == 0x98);

	/* zero-length READ (as used for MPA RTR) and zero-length SEND */
	w = send_wr(45, IBV_WR_RDMA_READ, NULL, 0, 0);
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	CHECK(kernel_take_sqe(&f, &k) && k.num_sge == 0);
	w = send_wr(46, IBV_WR_SEND, NULL, 0, 0);
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	CHECK(kernel_take_sqe(&f, &k) && k.opcode == SWIWARP_OP_SEND);
	CHECK(!kernel_take_sqe(&f, &k));
}

TEST(sq_signaled)
{
	struct fake_sq f;
	struct ibv_send_wr w = send_wr(1, IBV_WR_SEND, NULL, 0, 0);
	struct ibv_send_wr *bad;
	struct swiwarp_sqe k;
	unsigned int n;

	fake_sq_init(&f, 4, 2, 0, false);
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(!(k.flags & SWIWARP_WQE_SIGNALED)); /* unsignaled */
	w.send_flags = IBV_SEND_SIGNALED;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.flags & SWIWARP_WQE_SIGNALED);

	fake_sq_init(&f, 4, 2, 0, true); /* sq_sig_all */
	w.send_flags = 0;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.flags & SWIWARP_WQE_SIGNALED);
	/* SOLICITED is meaningless on a WRITE and must not be passed on */
	w = send_wr(2, IBV_WR_RDMA_WRITE, NULL, 0, IBV_SEND_SOLICITED);
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(!(k.flags & SWIWARP_WQE_SOLICITED));
}

TEST(sq_full_and_wrap)
{
	struct fake_sq f;
	struct ibv_send_wr w[20], *bad = NULL;
	struct swiwarp_sqe k;
	unsigned int n, i;

	fake_sq_init(&f, 8, 1, 0, false);
	for (i = 0; i < 20; i++) {
		w[i] = send_wr(100 + i, IBV_WR_SEND, NULL, 0, 0);
		w[i].next = i + 1 < 20 ? &w[i + 1] : NULL;
	}
	/* a chain of 20 into 8 free slots: 8 posted, ENOMEM at the 9th */
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == ENOMEM);
	CHECK(n == 8);
	CHECK(bad == &w[8]);
	/* no slot was overwritten: the kernel sees 100..107 in order */
	for (i = 0; i < 3; i++) {
		CHECK(kernel_take_sqe(&f, &k));
		CHECK(k.id == 100 + i);
	}
	/* 3 slots free again: repost from the bad one, wrapping around */
	CHECK(swr_sq_post(&f.sq, &w[8], &bad, &n) == ENOMEM);
	CHECK(n == 3 && bad == &w[11]);
	CHECK(f.sq.prod == 11);
	for (i = 3; i < 11; i++) {
		CHECK(kernel_take_sqe(&f, &k));
		CHECK(k.id == 100 + i);
	}
	CHECK(!kernel_take_sqe(&f, &k));
	/* many laps around the ring keep the order */
	for (i = 0; i < 1000; i++) {
		struct ibv_send_wr one =
			send_wr(5000 + i, IBV_WR_SEND, NULL, 0, 0);

		CHECK(swr_sq_post(&f.sq, &one, &bad, &n) == 0);
		if (i % 3 == 2) {
			while (kernel_take_sqe(&f, &k))
				;
			CHECK(k.id == 5000 + i);
		}
	}
}

TEST(sq_bad_input)
{
	struct fake_sq f;
	struct ibv_sge sge[8];
	struct ibv_send_wr w[3], *bad = NULL;
	struct swiwarp_sqe k;
	unsigned int n;
	static const enum ibv_wr_opcode unsupported[] = {
		IBV_WR_LOCAL_INV,
		IBV_WR_BIND_MW,
		IBV_WR_TSO,
		(enum ibv_wr_opcode)77,
	};

	memset(sge, 0, sizeof(sge));
	fake_sq_init(&f, 8, 3, 16, false);
	for (unsigned int i = 0; i < sizeof(unsupported) / sizeof(*unsupported);
	     i++) {
		w[0] = send_wr(1, unsupported[i], sge, 1, 0);
		CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EINVAL);
		CHECK(bad == &w[0] && n == 0);
	}
	/* Send and Write with Immediate only to an RFC 7306 peer */
	w[0] = send_wr(1, IBV_WR_SEND_WITH_IMM, sge, 1, 0);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EOPNOTSUPP);
	CHECK(bad == &w[0] && n == 0);
	w[0] = send_wr(1, IBV_WR_RDMA_WRITE_WITH_IMM, sge, 1, 0);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EOPNOTSUPP);
	CHECK(bad == &w[0] && n == 0);
	/* atomics likewise only to an RFC 7306 peer */
	w[0] = send_wr(1, IBV_WR_ATOMIC_CMP_AND_SWP, sge, 1, 0);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EOPNOTSUPP);
	CHECK(bad == &w[0] && n == 0);
	w[0] = send_wr(1, IBV_WR_ATOMIC_FETCH_AND_ADD, sge, 1, 0);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EOPNOTSUPP);
	CHECK(bad == &w[0] && n == 0);
	/* too many SGEs for the QP, and beyond the device limit */
	w[0] = send_wr(1, IBV_WR_SEND, sge, 4, 0);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EINVAL);
	f.sq.max_sge = 64; /* even if the QP claimed more */
	w[0] = send_wr(1, IBV_WR_SEND, sge, SWIWARP_MAX_SGE + 1, 0);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EINVAL);
	f.sq.max_sge = 3;
	/* negative count, NULL list */
	w[0] = send_wr(1, IBV_WR_SEND, sge, -1, 0);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EINVAL);
	w[0] = send_wr(1, IBV_WR_SEND, NULL, 1, 0);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EINVAL);
	/* READ: one sink SGE at most, never inline */
	w[0] = send_wr(1, IBV_WR_RDMA_READ, sge, 2, 0);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EINVAL);
	w[0] = send_wr(1, IBV_WR_RDMA_READ, sge, 1, IBV_SEND_INLINE);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EINVAL);
	/* unsupported send flag */
	w[0] = send_wr(1, IBV_WR_SEND, sge, 1, IBV_SEND_IP_CSUM);
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EINVAL);
	/* nothing reached the ring */
	CHECK(!kernel_take_sqe(&f, &k));
	CHECK(f.sq.prod == 0);

	/* a bad WR in the middle of a chain: the ones before it stay */
	w[0] = send_wr(10, IBV_WR_SEND, sge, 1, 0);
	w[1] = send_wr(11, IBV_WR_SEND, sge, 1, 0);
	w[2] = send_wr(12, IBV_WR_BIND_MW, sge, 1, 0);
	w[0].next = &w[1];
	w[1].next = &w[2];
	CHECK(swr_sq_post(&f.sq, &w[0], &bad, &n) == EINVAL);
	CHECK(n == 2 && bad == &w[2]);
	CHECK(kernel_take_sqe(&f, &k) && k.id == 10);
	CHECK(kernel_take_sqe(&f, &k) && k.id == 11);
	CHECK(!kernel_take_sqe(&f, &k));
}

/* Write with Immediate once the kernel says the peer speaks RFC 7306. */
TEST(sq_write_imm)
{
	struct fake_sq f;
	struct ibv_sge sge = {.addr = 0x1000, .length = 100, .lkey = 5};
	struct ibv_send_wr w, *bad = NULL;
	struct swiwarp_sqe k;
	unsigned int n;

	fake_sq_init(&f, 8, 3, 16, false);
	w = send_wr(77, IBV_WR_RDMA_WRITE_WITH_IMM, &sge, 1,
		    IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	w.wr.rdma.remote_addr = 0x5000;
	w.wr.rdma.rkey = 0x99;
	w.imm_data = htobe32(0x12345678);
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == EOPNOTSUPP && n == 0);
	f.sq.ctrl->peer_caps = SWIWARP_PEER_RFC7306;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0 && n == 1);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.id == 77 && k.opcode == SWIWARP_OP_WRITE_IMM);
	CHECK(k.flags == (SWIWARP_WQE_VALID | SWIWARP_WQE_SIGNALED |
			  SWIWARP_WQE_SOLICITED));
	CHECK(k.imm_data == htobe32(0x12345678));
	CHECK(k.raddr == 0x5000 && k.rkey == 0x99 && k.num_sge == 1);
	/* Send with Immediate: imm_data as given, SOLICITED kept */
	w.opcode = IBV_WR_SEND_WITH_IMM;
	w.wr_id = 78;
	w.imm_data = htobe32(0x0badcafe);
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0 && n == 1);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.id == 78 && k.opcode == SWIWARP_OP_SEND_IMM);
	CHECK(k.flags == (SWIWARP_WQE_VALID | SWIWARP_WQE_SIGNALED |
			  SWIWARP_WQE_SOLICITED));
	CHECK(k.imm_data == htobe32(0x0badcafe) && k.num_sge == 1);
	CHECK(k.sge[0].addr == 0x1000 && k.sge[0].length == 100);
	/* ... and inline */
	{
		static const char msg[] = "with immediate";
		struct ibv_sge isge = {.addr = (uintptr_t)msg,
				       .length = sizeof(msg)};

		w = send_wr(79, IBV_WR_SEND_WITH_IMM, &isge, 1,
			    IBV_SEND_INLINE);
		w.imm_data = htobe32(7);
		CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0 && n == 1);
		CHECK(kernel_take_sqe(&f, &k));
		CHECK(k.id == 79 && k.opcode == SWIWARP_OP_SEND_IMM);
		CHECK(k.flags == (SWIWARP_WQE_VALID | SWIWARP_WQE_INLINE));
		CHECK(k.imm_data == htobe32(7) && k.num_sge == 0 &&
		      k.inline_len == sizeof(msg) &&
		      !memcmp(k.inline_data, msg, sizeof(msg)));
	}
	/* the peer gone again: refused, nothing queued */
	f.sq.ctrl->peer_caps = 0;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == EOPNOTSUPP && n == 0);
	CHECK(!kernel_take_sqe(&f, &k));
}

/* Atomics once the kernel says the peer speaks RFC 7306. */
TEST(sq_atomic)
{
	struct fake_sq f;
	struct ibv_sge sge[2] = {{.addr = 0x2000, .length = 8, .lkey = 6},
				 {.addr = 0x3000, .length = 8, .lkey = 6}};
	struct ibv_send_wr w, *bad = NULL;
	struct swiwarp_sqe k;
	unsigned int n;

	fake_sq_init(&f, 8, 3, 16, false);
	f.sq.ctrl->peer_caps = SWIWARP_PEER_RFC7306;
	w = send_wr(88, IBV_WR_ATOMIC_CMP_AND_SWP, sge, 1, IBV_SEND_SIGNALED);
	w.wr.atomic.remote_addr = 0x7008;
	w.wr.atomic.rkey = 0x42;
	w.wr.atomic.compare_add = 0x1111222233334444ULL;
	w.wr.atomic.swap = 0x5555666677778888ULL;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0 && n == 1);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.id == 88 && k.opcode == SWIWARP_OP_ATOMIC_CS);
	CHECK(k.raddr == 0x7008 && k.rkey == 0x42 && k.num_sge == 1);
	CHECK(k.atomic.sink.addr == 0x2000 && k.atomic.sink.length == 8 &&
	      k.atomic.sink.lkey == 6);
	CHECK(k.atomic.compare_add == 0x1111222233334444ULL);
	CHECK(k.atomic.swap == 0x5555666677778888ULL);
	w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0 && n == 1);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.opcode == SWIWARP_OP_ATOMIC_FA &&
	      k.atomic.compare_add == 0x1111222233334444ULL);
	/* one sink SGE, never inline */
	w.num_sge = 2;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == EINVAL && n == 0);
	w.num_sge = 1;
	w.send_flags |= IBV_SEND_INLINE;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == EINVAL && n == 0);
	CHECK(!kernel_take_sqe(&f, &k));
}

TEST(sq_inline)
{
	struct fake_sq f;
	unsigned char a[96], b[96];
	struct ibv_sge sge[3];
	struct ibv_send_wr w, *bad;
	struct swiwarp_sqe k;
	unsigned int n, i;

	for (i = 0; i < sizeof(a); i++) {
		a[i] = (unsigned char)i;
		b[i] = (unsigned char)(0x80 + i);
	}
	fake_sq_init(&f, 4, 2, 40, false);
	/* gathered from 3 SGEs (more SGEs than max_sge is fine inline) */
	sge[0] = (struct ibv_sge){(uintptr_t)a, 10, 0};
	sge[1] = (struct ibv_sge){(uintptr_t)b, 0, 0};
	sge[2] = (struct ibv_sge){(uintptr_t)(b + 5), 30, 0};
	w = send_wr(7, IBV_WR_SEND, sge, 3, IBV_SEND_INLINE);
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0); /* exactly 40 */
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.flags & SWIWARP_WQE_INLINE);
	CHECK(k.num_sge == 0 && k.inline_len == 40);
	CHECK(memcmp(k.inline_data, a, 10) == 0);
	CHECK(memcmp(k.inline_data + 10, b + 5, 30) == 0);
	/* after the call, the user buffer may change: the ring has a copy */
	a[0] = 0xff;
	CHECK(f.sq.ring[0].inline_data[0] == 0);
	a[0] = 0;

	/* one byte over the QP's max_inline */
	sge[2].length = 31;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == EINVAL);
	CHECK(bad == &w && n == 0);
	CHECK(!kernel_take_sqe(&f, &k));
	/* over the device limit even if the QP claims more */
	f.sq.max_inline = 1000;
	sge[0] = (struct ibv_sge){(uintptr_t)a, 96, 0};
	sge[1] = (struct ibv_sge){(uintptr_t)b, 1, 0};
	w = send_wr(8, IBV_WR_RDMA_WRITE, sge, 2, IBV_SEND_INLINE);
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == EINVAL);
	w.num_sge = 1; /* exactly SWIWARP_MAX_INLINE */
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	CHECK(kernel_take_sqe(&f, &k));
	CHECK(k.inline_len == SWIWARP_MAX_INLINE &&
	      k.opcode == SWIWARP_OP_WRITE);
	/* lengths that wrap a 32-bit sum must not sneak through */
	sge[0] = (struct ibv_sge){(uintptr_t)a, 0xffffffffu, 0};
	sge[1] = (struct ibv_sge){(uintptr_t)b, 2, 0};
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == EINVAL);
	w.num_sge = 2;
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == EINVAL);
}

/* ---------------------------------------------------------------------
 * The ibv_wr_* batch (struct ibv_qp_ex): swr_sq_wr_*.
 */
static void fake_sq_wr_init(struct fake_sq *f, uint32_t num, uint32_t max_sge,
			    uint32_t max_inline)
{
	fake_sq_init(f, num, max_sge, max_inline, false);
	f->sq.staged = track(calloc(num, sizeof(*f->sq.staged)));
	f->sq.send_ops = SWR_SEND_OPS;
}

/* A builder call as the provider's wr_* ops make it. */
static void wr_build(struct fake_sq *f, enum ibv_wr_opcode op, uint64_t id,
		     unsigned int flags)
{
	struct ibv_send_wr w = send_wr(id, op, NULL, 0, flags);

	w.wr.rdma.rkey = 0x31;
	w.wr.rdma.remote_addr = 0x4000 + id;
	swr_sq_wr_build(&f->sq, &w);
}

static bool no_slot_valid(const struct fake_sq *f)
{
	for (uint32_t i = 0; i < f->sq.num; i++)
		if (f->sq.ring[i].flags)
			return false;
	return true;
}

/* Nothing is visible before wr_complete, then all of it, in order. */
TEST(wr_publish)
{
	struct fake_sq f;
	struct ibv_sge sge[2] = {{0x1000, 10, 0x11}, {0x2000, 20, 0x22}};
	struct swiwarp_sqe k;
	unsigned int n;

	fake_sq_wr_init(&f, 8, 3, 16);
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 1, IBV_SEND_SIGNALED);
	swr_sq_wr_sge_list(&f.sq, sge, 2);
	wr_build(&f, IBV_WR_RDMA_WRITE, 2, IBV_SEND_FENCE);
	swr_sq_wr_sge_list(&f.sq, &sge[1], 1);
	wr_build(&f, IBV_WR_RDMA_READ, 3, 0);
	swr_sq_wr_sge_list(&f.sq, sge, 1);
	/* built, not published: the kernel sees nothing yet */
	CHECK(no_slot_valid(&f));
	CHECK(!kernel_take_sqe(&f, &k));
	CHECK(f.sq.prod == 0);
	CHECK(swr_sq_wr_complete(&f.sq, &n) == 0 && n == 3);
	CHECK(f.sq.prod == 3);
	CHECK(kernel_take_sqe(&f, &k) && k.id == 1);
	CHECK(k.opcode == SWIWARP_OP_SEND && k.num_sge == 2);
	CHECK(k.flags == (SWIWARP_WQE_VALID | SWIWARP_WQE_SIGNALED));
	CHECK(k.sge[1].addr == 0x2000 && k.sge[1].lkey == 0x22);
	CHECK(kernel_take_sqe(&f, &k) && k.id == 2);
	CHECK(k.opcode == SWIWARP_OP_WRITE && k.rkey == 0x31 &&
	      k.raddr == 0x4002 && k.num_sge == 1 && k.sge[0].addr == 0x2000);
	CHECK(k.flags == (SWIWARP_WQE_VALID | SWIWARP_WQE_FENCE));
	CHECK(kernel_take_sqe(&f, &k) && k.id == 3);
	CHECK(k.opcode == SWIWARP_OP_READ && k.raddr == 0x4003);
	CHECK(!kernel_take_sqe(&f, &k));
	/* an empty batch posts nothing and succeeds */
	swr_sq_wr_start(&f.sq);
	CHECK(swr_sq_wr_complete(&f.sq, &n) == 0 && n == 0);
	CHECK(f.sq.prod == 3);
}

/* wr_abort drops the batch; the next one reuses the same slots. */
TEST(wr_abort)
{
	struct fake_sq f;
	struct swiwarp_sqe k;
	unsigned int n;

	fake_sq_wr_init(&f, 4, 1, 0);
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 10, 0);
	wr_build(&f, IBV_WR_SEND, 11, 0);
	swr_sq_wr_abort(&f.sq);
	CHECK(no_slot_valid(&f) && f.sq.prod == 0);
	CHECK(!kernel_take_sqe(&f, &k));
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 12, 0);
	CHECK(swr_sq_wr_complete(&f.sq, &n) == 0 && n == 1);
	CHECK(f.sq.ring[0].flags & SWIWARP_WQE_VALID); /* slot 0 again */
	CHECK(kernel_take_sqe(&f, &k) && k.id == 12);
	CHECK(!kernel_take_sqe(&f, &k));
}

/* Any error: wr_complete returns the first one, nothing of the batch
 * is posted, and the QP goes on as before. */
static void wr_expect_fail(struct fake_sq *f, int err)
{
	struct swiwarp_sqe k;
	uint32_t prod = f->sq.prod;
	unsigned int n = 99;

	CHECK(swr_sq_wr_complete(&f->sq, &n) == err && n == 0);
	CHECK(f->sq.prod == prod && no_slot_valid(f));
	CHECK(!kernel_take_sqe(f, &k));
}

TEST(wr_errors)
{
	struct fake_sq f;
	struct ibv_sge sge[4] = {{0}};
	static const char text[] = "0123456789abcdefX";
	struct ibv_data_buf buf[2] = {{(void *)text, 10}, {(void *)text, 7}};
	struct swiwarp_sqe k;
	unsigned int n;

	fake_sq_wr_init(&f, 8, 3, 16);
	/* too many SGEs after a good WR: the good one is not posted */
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 1, 0);
	wr_build(&f, IBV_WR_SEND, 2, 0);
	swr_sq_wr_sge_list(&f.sq, sge, 4);
	wr_expect_fail(&f, EINVAL);
	/* inline longer than the QP's max_inline (16) */
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 3, 0);
	swr_sq_wr_inline_list(&f.sq, buf, 2);
	wr_expect_fail(&f, EINVAL);
	/* a setter before any builder */
	swr_sq_wr_start(&f.sq);
	swr_sq_wr_sge_list(&f.sq, sge, 1);
	wr_build(&f, IBV_WR_SEND, 4, 0);
	wr_expect_fail(&f, EINVAL);
	/* an opcode the QP was not created for */
	f.sq.send_ops = IBV_QP_EX_WITH_SEND;
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 5, 0);
	wr_build(&f, IBV_WR_RDMA_WRITE, 6, 0);
	wr_expect_fail(&f, EINVAL);
	f.sq.send_ops = SWR_SEND_OPS;
	/* an unsupported send flag */
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 7, IBV_SEND_IP_CSUM);
	wr_expect_fail(&f, EINVAL);
	/* READ: one SGE at most, and not inline */
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_RDMA_READ, 8, 0);
	swr_sq_wr_sge_list(&f.sq, sge, 2);
	wr_expect_fail(&f, EINVAL);
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_RDMA_READ, 9, 0);
	swr_sq_wr_inline_list(&f.sq, buf, 1);
	wr_expect_fail(&f, EINVAL);
	/* RFC 7306 operations toward a peer without it */
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 10, 0);
	wr_build(&f, IBV_WR_RDMA_WRITE_WITH_IMM, 11, 0);
	wr_build(&f, IBV_WR_SEND, 12, IBV_SEND_IP_CSUM); /* first error wins */
	wr_expect_fail(&f, EOPNOTSUPP);
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_ATOMIC_FETCH_AND_ADD, 13, 0);
	swr_sq_wr_sge_list(&f.sq, sge, 1);
	wr_expect_fail(&f, EOPNOTSUPP);
	/* an atomic needs its one sink SGE, set or not */
	f.sq.ctrl->peer_caps = SWIWARP_PEER_RFC7306;
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_ATOMIC_CMP_AND_SWP, 14, 0);
	wr_expect_fail(&f, EINVAL);
	/* what the provider's stubs report (LOCAL_INV, BIND_MW, ...) */
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 15, 0);
	swr_sq_wr_fail(&f.sq, EOPNOTSUPP);
	wr_expect_fail(&f, EOPNOTSUPP);
	/* after all that the QP still posts, into slot 0 */
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 16, 0);
	swr_sq_wr_inline_list(&f.sq, buf, 1);
	CHECK(swr_sq_wr_complete(&f.sq, &n) == 0 && n == 1);
	CHECK(kernel_take_sqe(&f, &k) && k.id == 16);
	CHECK(k.flags == (SWIWARP_WQE_VALID | SWIWARP_WQE_INLINE));
	CHECK(k.inline_len == 10 && !memcmp(k.inline_data, text, 10));
}

/* A batch never wraps onto itself nor onto slots the kernel holds. */
TEST(wr_full)
{
	struct fake_sq f;
	struct swiwarp_sqe k;
	unsigned int n, i;

	fake_sq_wr_init(&f, 4, 1, 0);
	swr_sq_wr_start(&f.sq);
	for (i = 0; i < 5; i++)
		wr_build(&f, IBV_WR_SEND, 20 + i, 0);
	wr_expect_fail(&f, ENOMEM);
	swr_sq_wr_start(&f.sq);
	for (i = 0; i < 4; i++)
		wr_build(&f, IBV_WR_SEND, 30 + i, 0);
	CHECK(swr_sq_wr_complete(&f.sq, &n) == 0 && n == 4);
	/* the kernel has taken none: no room for one more */
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 40, 0);
	CHECK(swr_sq_wr_complete(&f.sq, &n) == ENOMEM && n == 0);
	/* it takes two: a batch of two fits, wrapping around */
	CHECK(kernel_take_sqe(&f, &k) && k.id == 30);
	CHECK(kernel_take_sqe(&f, &k) && k.id == 31);
	swr_sq_wr_start(&f.sq);
	wr_build(&f, IBV_WR_SEND, 41, 0);
	wr_build(&f, IBV_WR_SEND, 42, 0);
	CHECK(swr_sq_wr_complete(&f.sq, &n) == 0 && n == 2);
	for (i = 32; i < 34; i++)
		CHECK(kernel_take_sqe(&f, &k) && k.id == i);
	CHECK(kernel_take_sqe(&f, &k) && k.id == 41);
	CHECK(kernel_take_sqe(&f, &k) && k.id == 42);
	CHECK(!kernel_take_sqe(&f, &k));
}

/* The same request through either API gives the same SQE. */
TEST(wr_same_sqe)
{
	struct fake_sq f;
	struct ibv_sge sge = {0x2000, 8, 0x66};
	struct ibv_sge isge = {0, 5, 0};
	static const char msg[] = "hello";
	struct ibv_data_buf ibuf = {(void *)msg, 5};
	struct ibv_send_wr w, *bad;
	struct swiwarp_sqe a, b;
	unsigned int n, i;
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM,
		IBV_WR_SEND_WITH_INV,
		IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};

	isge.addr = (uintptr_t)msg;
	fake_sq_wr_init(&f, 4, 2, 32);
	f.sq.ctrl->peer_caps = SWIWARP_PEER_RFC7306;
	for (i = 0; i < 2 * sizeof(ops) / sizeof(*ops); i++) {
		enum ibv_wr_opcode op = ops[i / 2];
		bool inl = (i & 1) && op != IBV_WR_RDMA_READ &&
			   op != IBV_WR_ATOMIC_CMP_AND_SWP &&
			   op != IBV_WR_ATOMIC_FETCH_AND_ADD;

		w = send_wr(100 + i, op, inl ? &isge : &sge, 1,
			    IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
				    (inl ? IBV_SEND_INLINE : 0));
		if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			w.wr.atomic.rkey = 0x77;
			w.wr.atomic.remote_addr = 0x8000;
			w.wr.atomic.compare_add = 0x1234;
			w.wr.atomic.swap = 0x5678;
		} else {
			w.wr.rdma.rkey = 0x77;
			w.wr.rdma.remote_addr = 0x8000;
		}
		w.imm_data = htobe32(0xabcd0000 + i);
		w.invalidate_rkey = 0x99;
		CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0 && n == 1);
		CHECK(kernel_take_sqe(&f, &a));
		swr_sq_wr_start(&f.sq);
		swr_sq_wr_build(&f.sq, &w); /* sg_list is not read here */
		if (inl)
			swr_sq_wr_inline_list(&f.sq, &ibuf, 1);
		else
			swr_sq_wr_sge_list(&f.sq, &sge, 1);
		CHECK(swr_sq_wr_complete(&f.sq, &n) == 0 && n == 1);
		CHECK(kernel_take_sqe(&f, &b));
		/* fields up to the data, then the data the WQE carries */
		CHECK(!memcmp(&a, &b, offsetof(struct swiwarp_sqe, sge)));
		if (inl)
			CHECK(!memcmp(a.inline_data, b.inline_data, 5));
		else if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
			 op == IBV_WR_ATOMIC_FETCH_AND_ADD)
			CHECK(!memcmp(&a.atomic, &b.atomic, sizeof(a.atomic)));
		else
			CHECK(!memcmp(a.sge, b.sge, sizeof(a.sge[0])));
	}
}

TEST(doorbell_decision)
{
	struct fake_sq f;
	struct ibv_send_wr w = send_wr(1, IBV_WR_SEND, NULL, 0, 0);
	struct ibv_send_wr *bad;
	unsigned int n;

	fake_sq_init(&f, 4, 1, 0, false);
	CHECK(swr_sq_post(&f.sq, &w, &bad, &n) == 0);
	/* kernel idle: ring */
	CHECK(swr_sq_need_doorbell(&f.sq));
	/* kernel draining: do not ring */
	f.sq.ctrl->flags = SWIWARP_SQ_CTRL_TX_ACTIVE;
	CHECK(!swr_sq_need_doorbell(&f.sq));
	/* other bits in the word do not count as active */
	f.sq.ctrl->flags = ~SWIWARP_SQ_CTRL_TX_ACTIVE;
	CHECK(swr_sq_need_doorbell(&f.sq));
}

/*
 * The doorbell protocol under concurrency: a fake kernel TX thread runs
 * steps K1..K3 and sleeps when idle until a doorbell arrives; the test
 * thread posts and rings only when swr_sq_need_doorbell() says so.  Every
 * posted SQE must be consumed (none stranded), and the doorbell count must
 * stay well below the number of SQEs when the kernel keeps up.
 */
struct race {
	struct fake_sq f;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned int doorbells;	  /* rung by user space */
	unsigned int seen_db;	  /* consumed by the kernel */
	unsigned long long taken; /* SQEs consumed */
	bool stop;
};

static void *kernel_tx(void *arg)
{
	struct race *r = arg;
	struct swiwarp_sqe k;

	for (;;) {
		pthread_mutex_lock(&r->mu);
		while (r->seen_db == r->doorbells && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop && r->seen_db == r->doorbells) {
			pthread_mutex_unlock(&r->mu);
			return NULL;
		}
		r->seen_db = r->doorbells;
		pthread_mutex_unlock(&r->mu);

		__atomic_store_n(&r->f.sq.ctrl->flags,
				 SWIWARP_SQ_CTRL_TX_ACTIVE, __ATOMIC_RELAXED);
		for (;;) {
			while (kernel_take_sqe(&r->f, &k))
				__atomic_fetch_add(&r->taken, 1,
						   __ATOMIC_RELAXED);
			/* K1, K2, K3 */
			__atomic_store_n(&r->f.sq.ctrl->flags, 0,
					 __ATOMIC_RELAXED);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			struct swiwarp_sqe *s =
				&r->f.sq.ring[r->f.kcons & (r->f.sq.num - 1)];
			if (!(__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) &
			      SWIWARP_WQE_VALID))
				break;
			__atomic_store_n(&r->f.sq.ctrl->flags,
					 SWIWARP_SQ_CTRL_TX_ACTIVE,
					 __ATOMIC_RELAXED);
		}
	}
}

TEST(doorbell_race)
{
	static struct race r;
	const unsigned long long total = 200000;
	unsigned long long posted = 0;
	struct timespec t0, t1;
	pthread_t th;

	memset(&r, 0, sizeof(r));
	fake_sq_init(&r.f, 16, 1, 0, false);
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	pthread_create(&th, NULL, kernel_tx, &r);

	while (posted < total) {
		struct ibv_send_wr w[4], *bad;
		unsigned int n, i, batch = 1 + (unsigned int)(posted % 4);

		if (batch > total - posted)
			batch = (unsigned int)(total - posted);

		for (i = 0; i < batch; i++) {
			w[i] = send_wr(posted + i, IBV_WR_SEND, NULL, 0, 0);
			w[i].next = i + 1 < batch ? &w[i + 1] : NULL;
		}
		int ret = swr_sq_post(&r.f.sq, &w[0], &bad, &n);

		CHECK(ret == 0 || ret == ENOMEM);
		posted += n;
		if (n && swr_sq_need_doorbell(&r.f.sq)) {
			pthread_mutex_lock(&r.mu);
			r.doorbells++;
			pthread_cond_signal(&r.cv);
			pthread_mutex_unlock(&r.mu);
		}
		if (ret == ENOMEM)
			sched_yield();
	}
	/* Everything posted must drain without any further doorbell. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (__atomic_load_n(&r.taken, __ATOMIC_RELAXED) == total)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec > 10)
			break;
		sched_yield();
	}
	CHECK(__atomic_load_n(&r.taken, __ATOMIC_RELAXED) == total);
	if (__atomic_load_n(&r.taken, __ATOMIC_RELAXED) != total)
		fprintf(stderr,
			"stranded: taken %llu prod %u kcons %u slot flags %#x "
			"ctrl %#x doorbells %u seen %u\n",
			r.taken, r.f.sq.prod, r.f.kcons,
			r.f.sq.ring[r.f.kcons & (r.f.sq.num - 1)].flags,
			r.f.sq.ctrl->flags, r.doorbells, r.seen_db);
	pthread_mutex_lock(&r.mu);
	r.stop = true;
	pthread_cond_signal(&r.cv);
	pthread_mutex_unlock(&r.mu);
	pthread_join(th, NULL);
	printf("doorbell_race: %llu SQEs, %u doorbells\n", total, r.doorbells);
	CHECK(r.doorbells > 0 && r.doorbells < total);
}

TEST(rq_post)
{
	struct fake_rq f;
	struct ibv_sge sge[4] = {{1, 2, 3}, {4, 5, 6}};
	struct ibv_recv_wr w[6], *bad = NULL;
	struct swiwarp_rqe k;
	unsigned int i;

	fake_rq_init(&f, 4, 2);
	for (i = 0; i < 6; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].wr_id = 900 + i;
		w[i].sg_list = sge;
		w[i].num_sge = 2;
		w[i].next = i + 1 < 6 ? &w[i + 1] : NULL;
	}
	CHECK(swr_rq_post(&f.rq, &w[0], &bad) == ENOMEM);
	CHECK(bad == &w[4]);
	CHECK(kernel_take_rqe(&f, &k));
	CHECK(k.id == 900 && k.num_sge == 2 && k.flags == SWIWARP_WQE_VALID);
	CHECK(k.sge[1].addr == 4 && k.sge[1].length == 5 && k.sge[1].lkey == 6);
	CHECK(swr_rq_post(&f.rq, &w[4], &bad) == ENOMEM); /* one slot free */
	CHECK(bad == &w[5]);
	for (i = 1; i < 5; i++)
		CHECK(kernel_take_rqe(&f, &k) && k.id == 900 + i);
	CHECK(!kernel_take_rqe(&f, &k));
	/* bad input */
	w[0].next = NULL;
	w[0].num_sge = 3;
	CHECK(swr_rq_post(&f.rq, &w[0], &bad) == EINVAL && bad == &w[0]);
	w[0].num_sge = -2;
	CHECK(swr_rq_post(&f.rq, &w[0], &bad) == EINVAL);
	w[0].num_sge = 1;
	w[0].sg_list = NULL;
	CHECK(swr_rq_post(&f.rq, &w[0], &bad) == EINVAL);
	f.rq.max_sge = 100;
	w[0].sg_list = sge;
	w[0].num_sge = SWIWARP_MAX_SGE + 1;
	CHECK(swr_rq_post(&f.rq, &w[0], &bad) == EINVAL);
	CHECK(!kernel_take_rqe(&f, &k));
	/* zero-SGE receive is legal (zero-length SEND target) */
	w[0].num_sge = 0;
	CHECK(swr_rq_post(&f.rq, &w[0], &bad) == 0);
	CHECK(kernel_take_rqe(&f, &k) && k.num_sge == 0);
}

TEST(cq_poll)
{
	struct fake_cq f;
	struct ibv_wc wc[8];
	unsigned int i;

	fake_cq_init(&f, 4);
	CHECK(swr_cq_poll(&f.cq, 8, wc) == 0); /* empty */
	CHECK(kernel_put_cqe(&f, 1, SWIWARP_OP_SEND, SWIWARP_WC_SUCCESS, 0, 7,
			     0, 0));
	CHECK(kernel_put_cqe(&f, 2, SWIWARP_OP_RECV, SWIWARP_WC_SUCCESS, 1234,
			     7, SWIWARP_CQE_INVALIDATED, 0xabcd));
	CHECK(kernel_put_cqe(&f, 3, SWIWARP_OP_READ, SWIWARP_WC_SUCCESS, 55, 8,
			     0, 0));
	CHECK(swr_cq_poll(&f.cq, 2, wc) == 2); /* fewer than available */
	CHECK(wc[0].wr_id == 1 && wc[0].opcode == IBV_WC_SEND &&
	      wc[0].status == IBV_WC_SUCCESS && wc[0].qp_num == 7 &&
	      wc[0].wc_flags == 0);
	CHECK(wc[1].wr_id == 2 && wc[1].opcode == IBV_WC_RECV &&
	      wc[1].byte_len == 1234 && (wc[1].wc_flags & IBV_WC_WITH_INV) &&
	      wc[1].invalidated_rkey == 0xabcd);
	/* polled slots went back to the kernel */
	CHECK(f.cq.ring[0].flags == 0 && f.cq.ring[1].flags == 0);
	CHECK(f.cq.ring[2].flags & SWIWARP_CQE_VALID);
	CHECK(swr_cq_poll(&f.cq, 8, wc) == 1);
	CHECK(wc[0].wr_id == 3 && wc[0].opcode == IBV_WC_RDMA_READ &&
	      wc[0].byte_len == 55 && wc[0].qp_num == 8);
	CHECK(swr_cq_poll(&f.cq, 8, wc) == 0);

	/* overflow as the kernel sees it, then wrap-around */
	for (i = 0; i < 4; i++)
		CHECK(kernel_put_cqe(&f, 10 + i, SWIWARP_OP_WRITE,
				     SWIWARP_WC_SUCCESS, 0, 1, 0, 0));
	CHECK(!kernel_put_cqe(&f, 99, SWIWARP_OP_WRITE, 0, 0, 1, 0, 0));
	CHECK(swr_cq_poll(&f.cq, 8, wc) == 4);
	for (i = 0; i < 4; i++)
		CHECK(wc[i].wr_id == 10 + i &&
		      wc[i].opcode == IBV_WC_RDMA_WRITE);
	for (i = 0; i < 1000; i++) {
		CHECK(kernel_put_cqe(&f, 2000 + i, SWIWARP_OP_SEND, 0, 0, 1, 0,
				     0));
		if (i % 3 == 2) {
			int got = swr_cq_poll(&f.cq, 8, wc);

			CHECK(got == 3 && wc[got - 1].wr_id == 2000 + i);
		}
	}
	CHECK(swr_cq_poll(&f.cq, 8, wc) == 1); /* the loop's last */
	/* Immediate Data received: opcode, flag and value */
	CHECK(kernel_put_cqe(&f, 3000, SWIWARP_OP_RECV_RDMA_IMM,
			     SWIWARP_WC_SUCCESS, 0, 1,
			     SWIWARP_CQE_IMM | SWIWARP_CQE_SOLICITED, 0));
	f.cq.ring[(f.kprod - 1) & (f.cq.num - 1)].imm_data = htobe32(0xfeed);
	CHECK(kernel_put_cqe(&f, 3001, SWIWARP_OP_WRITE_IMM, SWIWARP_WC_SUCCESS,
			     0, 1, 0, 0));
	CHECK(swr_cq_poll(&f.cq, 8, wc) == 2);
	CHECK(wc[0].wr_id == 3000 &&
	      wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	      (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
	      wc[0].imm_data == htobe32(0xfeed));
	CHECK(wc[1].wr_id == 3001 && wc[1].opcode == IBV_WC_RDMA_WRITE &&
	      !(wc[1].wc_flags & IBV_WC_WITH_IMM));
	/* a Send with Immediate received: RECV, its length, flag, value */
	CHECK(kernel_put_cqe(&f, 3002, SWIWARP_OP_RECV, SWIWARP_WC_SUCCESS,
			     1234, 1, SWIWARP_CQE_IMM, 0));
	f.cq.ring[(f.kprod - 1) & (f.cq.num - 1)].imm_data = htobe32(0xabcd);
	CHECK(swr_cq_poll(&f.cq, 8, wc) == 1);
	CHECK(wc[0].wr_id == 3002 && wc[0].opcode == IBV_WC_RECV &&
	      wc[0].status == IBV_WC_SUCCESS && wc[0].byte_len == 1234 &&
	      (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
	      wc[0].imm_data == htobe32(0xabcd));
	/* bad arguments */
	CHECK(swr_cq_poll(&f.cq, -1, wc) < 0);
	CHECK(swr_cq_poll(&f.cq, 1, NULL) < 0);
	CHECK(swr_cq_poll(&f.cq, 0, NULL) == 0);
}

TEST(cq_status)
{
	struct fake_cq f;
	struct ibv_wc wc[4];
	static const struct {
		uint8_t k;
		enum ibv_wc_status u;
	} map[] = {
		{SWIWARP_WC_SUCCESS, IBV_WC_SUCCESS},
		{SWIWARP_WC_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR},
		{SWIWARP_WC_LOC_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR},
		{SWIWARP_WC_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR},
		{SWIWARP_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR},
		{SWIWARP_WC_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR},
		{SWIWARP_WC_LOC_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR},
		{SWIWARP_WC_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR},
		{SWIWARP_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR},
		{SWIWARP_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR},
		{SWIWARP_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR},
		{200, IBV_WC_GENERAL_ERR}, /* unknown */
	};

	fake_cq_init(&f, 2);
	for (unsigned int i = 0; i < sizeof(map) / sizeof(*map); i++) {
		CHECK(kernel_put_cqe(&f, i, SWIWARP_OP_RECV, map[i].k, 0, 1, 0,
				     0));
		CHECK(swr_cq_poll(&f.cq, 4, wc) == 1);
		CHECK(wc[0].status == map[i].u);
		CHECK(wc[0].vendor_err == (map[i].k ? map[i].k : 0u));
	}
	/* an opcode the provider does not know is an error, not a guess */
	CHECK(kernel_put_cqe(&f, 5, 0xee, SWIWARP_WC_SUCCESS, 0, 1, 0, 0));
	CHECK(swr_cq_poll(&f.cq, 4, wc) == 1);
	CHECK(wc[0].status == IBV_WC_GENERAL_ERR && wc[0].vendor_err != 0);
}

TEST(cq_notify)
{
	struct fake_cq f;

	fake_cq_init(&f, 2);
	CHECK(f.cq.ctrl->notify == SWIWARP_NOTIFY_NOT);
	swr_cq_arm(&f.cq, 1);
	CHECK(f.cq.ctrl->notify == SWIWARP_NOTIFY_SOLICITED);
	swr_cq_arm(&f.cq, 0);
	CHECK(f.cq.ctrl->notify ==
	      (SWIWARP_NOTIFY_SOLICITED | SWIWARP_NOTIFY_NEXT_COMPLETION));
	/* kernel consumes the arming, user re-arms solicited-only */
	__atomic_exchange_n(&f.cq.ctrl->notify, 0, __ATOMIC_SEQ_CST);
	swr_cq_arm(&f.cq, 1);
	CHECK(f.cq.ctrl->notify == SWIWARP_NOTIFY_SOLICITED);
	/* arming touches nothing but the notify word */
	CHECK(f.cq.ctrl->reserved0 == 0 && f.cq.ctrl->reserved1[0] == 0);
}

TEST(opcode_map)
{
	bool known;

	CHECK(swr_wr_opcode(IBV_WR_RDMA_WRITE) == SWIWARP_OP_WRITE);
	CHECK(swr_wr_opcode(IBV_WR_RDMA_READ) == SWIWARP_OP_READ);
	CHECK(swr_wr_opcode(IBV_WR_SEND) == SWIWARP_OP_SEND);
	CHECK(swr_wr_opcode(IBV_WR_SEND_WITH_INV) == SWIWARP_OP_SEND_INV);
	CHECK(swr_wr_opcode(IBV_WR_SEND_WITH_IMM) == SWIWARP_OP_SEND_IMM);
	CHECK(swr_wc_opcode(SWIWARP_OP_SEND_IMM, &known) == IBV_WC_SEND &&
	      known);
	CHECK(swr_wc_opcode(SWIWARP_OP_SEND_INV, &known) == IBV_WC_SEND &&
	      known);
	CHECK(swr_wc_opcode(SWIWARP_OP_LOCAL_INV, &known) == IBV_WC_LOCAL_INV &&
	      known);
	CHECK(swr_wc_opcode(SWIWARP_OP_ATOMIC_CS, &known) == IBV_WC_COMP_SWAP &&
	      known);
	CHECK(swr_wc_opcode(SWIWARP_OP_ATOMIC_FA, &known) == IBV_WC_FETCH_ADD &&
	      known);
	swr_wc_opcode(SWIWARP_OP_MAX, &known);
	CHECK(!known);
}

/* ---------------------------------------------------------------------
 */
static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
#define T(n)                                                                   \
	{                                                                      \
#n, test_##n                                                   \
	}
	T(sq_fields),	 T(sq_signaled),       T(sq_full_and_wrap),
	T(sq_bad_input), T(sq_write_imm),      T(sq_atomic),
	T(sq_inline),	 T(doorbell_decision), T(doorbell_race),
	T(rq_post),	 T(cq_poll),	       T(cq_status),
	T(cq_notify),	 T(opcode_map),	       T(wr_publish),
	T(wr_abort),	 T(wr_errors),	       T(wr_full),
	T(wr_same_sqe),
#undef T
};

int main(int argc, char **argv)
{
	unsigned int i, ran = 0;

	for (i = 0; i < sizeof(tests) / sizeof(*tests); i++) {
		if (argc > 1 && strcmp(argv[1], tests[i].name))
			continue;
		int before = failures;

		tests[i].fn();
		printf("%s: %s\n", tests[i].name,
		       failures == before ? "ok" : "FAILED");
		ran++;
	}
	while (nallocs)
		free(allocs[--nallocs]);
	if (!ran) {
		fprintf(stderr, "no such test: %s\n", argc > 1 ? argv[1] : "");
		return 2;
	}
	return failures ? 1 : 0;
}
