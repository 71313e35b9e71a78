// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * imm-verify: RDMA Write and Send with Immediate Data (RFC 7306; Send with
 * Immediate is a swiwarp convention on top, Documentation/kernel.md)
 * between two swiwarp endpoints, and their refusal toward a peer without
 * RFC 7306.
 *
 *   imm-verify -s ADDR [-p PORT] [-k N] [-S BYTES] [-n] [-X]
 *   imm-verify -c ADDR [-p PORT] [-k N] [-S BYTES] [-n] [-X]
 *
 * Without -n (both ends swiwarp) the client
 *   1. posts NIMM Writes with Immediate in a row (sizes 0 .. 256 KiB, odd
 *      offsets, no Solicited Event; -k N: only the first N of them, the
 *      same on both ends, e.g. -k 3 for 0, 1 and 7 bytes in a small
 *      capture); the server checks, for each
 *      completion in turn: IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM,
 *      the value (= post order), byte_len (= the Write's length, 0
 *      for the zero-length ones), the receive WQE it consumed (= the
 *      order they were posted), that the Write's bytes are all in place
 *      when the completion is seen, and that the receive buffer was not
 *      written.  The server's receive CQ is armed solicited-only the
 *      whole time: none of these may raise a completion event;
 *   2. after the server's "go" Send: a 200000-byte RDMA Write, then NSIMM
 *      Sends with Immediate (0 .. 16384 bytes, one of them inline, no
 *      SE; -S BYTES, a small run: the Writes of steps 2 and 3 are BYTES
 *      long and no Send with Immediate is longer than BYTES); the server
 *      checks, for each completion in turn: IBV_WC_RECV, IBV_WC_WITH_IMM,
 *      the value, byte_len = the Send's length, the receive WQE (post
 *      order), every payload byte and the guard byte behind it; at the
 *      first one, that the Write's bytes are all in place; and that none
 *      of them raised an event on the solicited-only CQ;
 *   3. after "go2": a plain 200000-byte RDMA Write (new contents where
 *      step 2's Write was), then one Write with Immediate with
 *      IBV_SEND_SOLICITED, which must wake the server (completion event
 *      within 20 s) with byte_len its own Write's length (not the plain
 *      Write's); at its completion the plain Write's bytes must be
 *      in place (a Write with Immediate's completion implies the
 *      Writes before it are placed);
 *   4. after "go3" (the server re-armed solicited-only): one Send with
 *      Immediate with IBV_SEND_SOLICITED must wake it too, with its data
 *      and value;
 *   5. a plain Send: the server's next receive completion must be it,
 *      without IBV_WC_WITH_IMM (the value went with its own Send only).
 * -k and -S must be the same on both ends: the server sends its values in
 * the connection's private data and a client with others says BAD and
 * disconnects before step 1, so the server sees its receives flushed and
 * dies saying so (no 30 s wait for Writes that never come).
 * With -n (one end is not RFC 7306, e.g. upstream siw) both ends try a
 * Write with Immediate and a Send with Immediate: on swiwarp
 * ibv_post_send must fail with EOPNOTSUPP (any failure on another
 * device), then a Send each way must still go through: no Terminate was
 * caused.
 *
 * With -X the same steps and checks, but the QP is made with
 * rdma_create_qp_ex() and IBV_QP_INIT_ATTR_SEND_OPS_FLAGS and every Write
 * with Immediate, Send with Immediate, Write and Send is posted through
 * the ibv_wr_* API of its ibv_qp_ex (vcm_post_send() in verify-cm.c).
 *
 * Output: "ok ..." / "BAD ..." lines, then PASSED or FAILED; exit 0 only
 * if every check was ok.  Built by the lab scripts (build_data_verify in
 * suite-lib.sh) with:
 * cc -O2 -o imm-verify imm-verify.c verify-cm.c -lrdmacm -libverbs
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "verify-cm.h"

#define NIMM 48			/* Writes with Immediate in a row */
static int nimm = NIMM;		/* -k: how many of them */
#define NSIMM 8			/* Sends with Immediate in a row */
#define REGION (4u << 20)	/* Write target / source */
#define RBUF 16384		/* each receive buffer */
#define NRECV (NIMM + NSIMM + 4)
#define GUARD 0xa5
#define IMM_BASE 0x1d000000u
#define IMM_SOL 0x5011c17eu
#define SOL_SIZE 1000u
#define TIMEOUT_S 30
#define SIMM_BASE 0x5e000000u	/* Sends with Immediate: + index */
#define SIMM_SOL 0x5e11c17eu
#define SSOL_SIZE 777u
#define ORD_OFF (3u << 20)	/* the Write before the Sends */
#define ORD_SIZE 200000u	/* default; 63-swiwarp-data runs with it */
#define ORD_SEED 0x0dd
#define ORD_SEED2 0x0de		/* the Write before the solicited one */
#define SSRC_OFF (REGION - (512u << 10))	/* Send sources */
#define SINLINE 64u		/* max_inline asked for */
/*
 * The most -S may be: the ordering Writes of steps 2 and 3 end before the
 * Send sources (the client fills those while the Write may still be in
 * flight) and leave the guard byte behind them on the server.
 */
#define ORD_MAX (SSRC_OFF - ORD_OFF - 1)
/*
 * -S: the size of the ordering Writes, and the most a Send with Immediate
 * carries.  The golden capture (tests/dissector/capture-swiwarp-guest.sh)
 * runs -S 1500: the pattern bytes do not compress, so the 31 KB of Sends
 * with Immediate would weigh more than the Writes; 1500 is still more
 * than one FPDU at the lab's MTU 1500 (MSS 1448 with timestamps, MULPDU
 * 1442: at most 1428 octets of a Write, 1424 of a Send per FPDU), so the
 * checks still cover a Write placed by the next message's completion when
 * it spans FPDUs and Sends with Immediate reassembled from two.
 */
static uint32_t ord_size = ORD_SIZE;

static const uint32_t sizes[] = { 0, 1, 7, 4096, 4097, 65536, 65539, 262147 };
/* Sends with Immediate; ssizes[SINL] goes inline */
static const uint32_t ssizes[NSIMM] = { 0, 1, 13, 60, 1500, 4097, 9000, RBUF };
#define SINL 3

/* The length of Send with Immediate j: ssizes[j], cut to -S. */
static uint32_t ssize(int j)
{
	return ssizes[j] < ord_size ? ssizes[j] : ord_size;
}

struct srv_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
	/* the server's -S and -k, for the client to compare with its own */
	uint32_t ord_size;
	uint32_t nimm;
};

struct conn {
	struct vcm cm;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *scq, *rcq;
	uint8_t *mem, *rbuf;
	struct ibv_mr *mr, *rmr;
	int failures;
};

static uint8_t pat(uint32_t seed, uint64_t i)
{
	uint32_t x = seed * 0x9e3779b1u ^ (uint32_t)(i * 2654435761u);

	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return (uint8_t)x;
}

/* Offset of Write k in the region: back to back, odd. */
static uint32_t woff(int k)
{
	uint32_t off = 3;

	for (int i = 0; i < k; i++)
		off += sizes[i % 8] + 5;
	return off;
}

/* One completion of cq, or the program dies after TIMEOUT_S. */
static void poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	if (!vcm_poll_one(cq, wc, TIMEOUT_S))
		die("%s: no completion within %d s", what, TIMEOUT_S);
}

/* The QP on c->cm.id, its CQs and the memory regions. */
static void setup(struct conn *c, int neg)
{
	struct ibv_context *verbs = c->cm.id->verbs;

	c->pd = ibv_alloc_pd(verbs);
	c->cc = ibv_create_comp_channel(verbs);
	if (!c->pd || !c->cc)
		die("alloc_pd / comp_channel");
	c->scq = ibv_create_cq(verbs, 128, NULL, NULL, 0);
	c->rcq = ibv_create_cq(verbs, 128, NULL, c->cc, 0);
	if (!c->scq || !c->rcq)
		die("create_cq");
	if (neg) {
		vcm_create_qp(&c->cm, c->pd, c->scq, c->rcq, 64, NRECV, 1);
	} else {
		struct ibv_qp_init_attr qa = {
			.send_cq = c->scq,
			.recv_cq = c->rcq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 64, .max_recv_wr = NRECV,
				 .max_send_sge = 1, .max_recv_sge = 1,
				 .max_inline_data = SINLINE },
		};

		vcm_rdma_create_qp(&c->cm, c->pd, &qa);
		if (qa.cap.max_inline_data < ssizes[SINL])
			die("max_inline_data %u < %u", qa.cap.max_inline_data,
			    ssizes[SINL]);
	}
	c->mem = aligned_alloc(4096, REGION);
	c->rbuf = aligned_alloc(4096, NRECV * RBUF);
	if (!c->mem || !c->rbuf)
		die("no memory");
	memset(c->mem, GUARD, REGION);
	memset(c->rbuf, GUARD, NRECV * RBUF);
	c->mr = ibv_reg_mr(c->pd, c->mem, REGION,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	c->rmr = ibv_reg_mr(c->pd, c->rbuf, NRECV * RBUF,
			    IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr || !c->rmr)
		die("reg_mr: %s", strerror(errno));
}

static void post_recv(struct conn *c, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->rbuf + (uint64_t)slot * RBUF,
		.length = RBUF,
		.lkey = c->rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(c->cm.id->qp, &wr, &bad))
		die("post_recv: %s", strerror(errno));
}

/* A 4-byte Send of word from receive slot 'slot' of our own buffer. */
static void send_word(struct conn *c, uint32_t word)
{
	uint8_t *p = c->rbuf + (NRECV - 1) * RBUF;
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = 4,
			       .lkey = c->rmr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x5e, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	memcpy(p, &word, 4);
	if (vcm_post_send(c->cm.id->qp, &wr, &bad))
		die("post_send: %s", strerror(errno));
	poll_one(c->scq, &wc, "send");
	if (wc.status != IBV_WC_SUCCESS)
		die("send: %s", ibv_wc_status_str(wc.status));
}

static void recv_word(struct conn *c, uint32_t want, const char *what)
{
	struct ibv_wc wc;
	uint32_t got = 0;

	poll_one(c->rcq, &wc, what);
	if (wc.status == IBV_WC_SUCCESS && wc.byte_len == 4)
		memcpy(&got, c->rbuf + wc.wr_id * RBUF, 4);
	vcm_result(&c->failures, wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		  !(wc.wc_flags & IBV_WC_WITH_IMM) && got == want,
	       "%s: status %s opcode %d flags %#x len %u word %#x (want %#x)",
	       what, ibv_wc_status_str(wc.status), wc.opcode, wc.wc_flags,
	       wc.byte_len, got, want);
}

static int is_siw(struct conn *c)
{
	return !strncmp(ibv_get_device_name(c->cm.id->verbs->device), "siw", 3);
}

/* -n: a Write with Immediate must fail in post_send, locally. */
static void try_write_imm(struct conn *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->mem, .length = 8,
			       .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(IMM_BASE) };
	struct ibv_send_wr *bad = NULL;
	int ret = vcm_post_send(c->cm.id->qp, &wr, &bad);

	vcm_result(&c->failures, is_siw(c) ? ret != 0 : ret == EOPNOTSUPP && bad == &wr,
	       "write-imm-refused (%s): post_send returned %d (%s)",
	       ibv_get_device_name(c->cm.id->verbs->device), ret, strerror(ret));
	/* ... and a Send with Immediate, plain and inline */
	for (int inl = 0; inl < 2; inl++) {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0);
		wr.wr.rdma.remote_addr = 0;
		wr.wr.rdma.rkey = 0;
		bad = NULL;
		ret = vcm_post_send(c->cm.id->qp, &wr, &bad);
		vcm_result(&c->failures, is_siw(c) ? ret != 0 : ret == EOPNOTSUPP && bad == &wr,
		       "send-imm-refused%s (%s): post_send returned %d (%s)",
		       inl ? "-inline" : "",
		       ibv_get_device_name(c->cm.id->verbs->device), ret,
		       strerror(ret));
	}
}

/* Are Write k's bytes in place? Else one BAD line and 0. */
static int check_write(struct conn *c, int k, uint32_t off, uint32_t size)
{
	for (uint32_t i = 0; i < size; i++) {
		if (c->mem[off + i] != pat((uint32_t)k, i)) {
			vcm_result(&c->failures, 0, "write %d: byte %u of %u not in place at its completion (0x%02x)",
			       k, i, size, c->mem[off + i]);
			return 0;
		}
	}
	if (c->mem[off - 1] != GUARD || c->mem[off + size] != GUARD) {
		vcm_result(&c->failures, 0, "write %d: guard byte around [%u, %u) overwritten",
		       k, off, off + size);
		return 0;
	}
	return 1;
}

/* Payload byte i of Send with Immediate j. */
static uint8_t spat(int j, uint32_t i)
{
	return pat(0x5e00u + (uint32_t)j, i);
}

/*
 * Receive completion wc of Send with Immediate j (size bytes, value imm)
 * into receive slot 'slot': all of it right, or one BAD line (the first
 * per run, counted in *bad).
 */
static void check_send_imm(struct conn *c, const struct ibv_wc *wc, int slot,
			   int j, uint32_t size, uint32_t imm, int *bad)
{
	const uint8_t *p = c->rbuf + (size_t)slot * RBUF;
	uint32_t i;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    !(wc->wc_flags & IBV_WC_WITH_IMM) || ntohl(wc->imm_data) != imm ||
	    wc->byte_len != size || wc->wr_id != (uint64_t)slot) {
		if (!(*bad)++)
			vcm_result(&c->failures, 0, "send-imm %d: status %s opcode %d flags %#x imm %#x len %u wr_id %llu (want RECV, WITH_IMM, imm %#x, len %u, wr_id %d)",
			       j, ibv_wc_status_str(wc->status), wc->opcode,
			       wc->wc_flags, ntohl(wc->imm_data), wc->byte_len,
			       (unsigned long long)wc->wr_id, imm, size, slot);
		return;
	}
	for (i = 0; i < size; i++)
		if (p[i] != spat(j, i))
			break;
	if (i < size || (size < RBUF && p[size] != GUARD)) {
		if (!(*bad)++)
			vcm_result(&c->failures, 0, "send-imm %d: payload byte %u of %u wrong (0x%02x)",
			       j, i, size, i < RBUF ? p[i] : 0);
	}
}

/* Is a completion event pending on the channel within ms? */
static int event_within(struct conn *c, int ms)
{
	struct pollfd pfd = { .fd = c->cc->fd, .events = POLLIN };

	return poll(&pfd, 1, ms) == 1;
}

static int server(const char *addr, const char *port, int neg)
{
	struct conn c = { 0 };
	struct srv_info info = { 0 };
	struct ibv_wc wc;
	int bad_imm = 0, bad_buf = 0, bad_simm = 0, i;

	vcm_listen_one(&c.cm, addr, port);
	setup(&c, neg);
	for (i = 0; i < NRECV - 1; i++)
		post_recv(&c, i);
	/* Solicited-only from the start: no Immediate without SE wakes. */
	if (ibv_req_notify_cq(c.rcq, 1))
		die("req_notify_cq");
	info.addr = (uintptr_t)c.mem;
	info.rkey = c.mr->rkey;
	info.len = REGION;
	info.ord_size = ord_size;
	info.nimm = (uint32_t)nimm;
	vcm_accept(&c.cm, &info, sizeof(info), 0);

	if (neg) {
		try_write_imm(&c);
		recv_word(&c, 0x9199, "ping from the client");
		send_word(&c, 0x9099);
		goto out;
	}

	for (i = 0; i < nimm; i++) {
		uint32_t size = sizes[i % 8], off = woff(i);

		poll_one(c.rcq, &wc, "write-imm receive");
		/*
		 * Flushed before the first one: the client left, as it
		 * does when its -S or -k differ from ours.
		 */
		if (!i && wc.status == IBV_WC_WR_FLUSH_ERR)
			die("the client disconnected before its first Write with Immediate (it does when its -S / -k differ from this end's %u / %d: see its output)",
			    ord_size, nimm);
		if (wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    !(wc.wc_flags & IBV_WC_WITH_IMM) ||
		    ntohl(wc.imm_data) != IMM_BASE + (uint32_t)i ||
		    wc.wr_id != (uint64_t)i || wc.byte_len != size) {
			if (!bad_imm++)
				vcm_result(&c.failures, 0, "write-imm %d: status %s opcode %d flags %#x imm %#x wr_id %llu byte_len %u (want imm %#x, wr_id %d, byte_len %u)",
				       i, ibv_wc_status_str(wc.status),
				       wc.opcode, wc.wc_flags,
				       ntohl(wc.imm_data),
				       (unsigned long long)wc.wr_id,
				       wc.byte_len, IMM_BASE + i, i, size);
			continue;
		}
		check_write(&c, i, off, size);
		for (int b = 0; b < RBUF; b++)
			if (c.rbuf[i * RBUF + b] != GUARD && !bad_buf++)
				vcm_result(&c.failures, 0, "write-imm %d: receive buffer written",
				       i);
	}
	vcm_result(&c.failures, !bad_imm && !bad_buf,
	       "write-imm-order: %d Writes with Immediate (0 .. %u bytes): opcode, flag, value, byte_len (the Write's length) and WQE in post order, data in place",
	       nimm, sizes[nimm < 8 ? nimm - 1 : 7]);
	vcm_result(&c.failures, !event_within(&c, 300),
	       "unsolicited-no-event: %d Immediate Data without SE raised no event on a solicited-only CQ",
	       nimm);
	send_word(&c, 0x6060);		/* go */

	/* A Write, then NSIMM Sends with Immediate, none solicited. */
	for (i = 0; i < NSIMM; i++) {
		poll_one(c.rcq, &wc, "send-imm receive");
		if (!i)
			vcm_result(&c.failures, check_write(&c, ORD_SEED, ORD_OFF, ord_size),
			       "send-imm-after-write: the %u-byte Write before it is in place at the first Send with Immediate's completion",
			       ord_size);
		check_send_imm(&c, &wc, nimm + i, i, ssize(i), SIMM_BASE + (uint32_t)i,
			       &bad_simm);
	}
	vcm_result(&c.failures, !bad_simm,
	       "send-imm: %d Sends with Immediate (0 .. %u bytes, %u inline): IBV_WC_RECV, WITH_IMM, value, byte_len, WQE in post order, payload",
	       NSIMM, ssize(NSIMM - 1), ssize(SINL));
	vcm_result(&c.failures, !event_within(&c, 300),
	       "send-imm-unsolicited-no-event: %d Sends with Immediate without SE raised no event on a solicited-only CQ",
	       NSIMM);
	send_word(&c, 0x6061);		/* go2 */

	if (!event_within(&c, 20000)) {
		vcm_result(&c.failures, 0, "solicited-event: none within 20 s");
	} else {
		struct ibv_cq *ecq;
		void *ectx;

		if (ibv_get_cq_event(c.cc, &ecq, &ectx))
			die("get_cq_event");
		ibv_ack_cq_events(ecq, 1);
		poll_one(c.rcq, &wc, "solicited write-imm");
		vcm_result(&c.failures, wc.status == IBV_WC_SUCCESS &&
			  wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
			  (wc.wc_flags & IBV_WC_WITH_IMM) &&
			  ntohl(wc.imm_data) == IMM_SOL && wc.byte_len == SOL_SIZE,
		       "solicited-event: woken; opcode %d imm %#x byte_len %u (want %#x, %u: its own Write's length, not the plain Write's before it)",
		       wc.opcode, ntohl(wc.imm_data), wc.byte_len, IMM_SOL, SOL_SIZE);
		check_write(&c, NIMM, woff(NIMM), SOL_SIZE);
		vcm_result(&c.failures, check_write(&c, ORD_SEED2, ORD_OFF, ord_size),
		       "write-imm-after-write: the %u-byte Write before it is in place at the solicited Write with Immediate's completion",
		       ord_size);
	}

	/* Solicited-only again; then a Send with Immediate with SE. */
	if (ibv_req_notify_cq(c.rcq, 1))
		die("req_notify_cq");
	send_word(&c, 0x6062);		/* go3 */
	if (!event_within(&c, 20000)) {
		vcm_result(&c.failures, 0, "send-imm-solicited-event: none within 20 s");
	} else {
		struct ibv_cq *ecq;
		void *ectx;
		int bad = 0;

		if (ibv_get_cq_event(c.cc, &ecq, &ectx))
			die("get_cq_event");
		ibv_ack_cq_events(ecq, 1);
		poll_one(c.rcq, &wc, "solicited send-imm");
		check_send_imm(&c, &wc, nimm + NSIMM + 1, NSIMM, SSOL_SIZE,
			       SIMM_SOL, &bad);
		vcm_result(&c.failures, !bad, "send-imm-solicited-event: woken; RECV, WITH_IMM, imm %#x, %u bytes",
		       SIMM_SOL, SSOL_SIZE);
	}
	recv_word(&c, 0xb7e, "send-after-send-imm");
out:
	vcm_close(&c.cm);
	printf("%s: %d check(s) failed\n", c.failures ? "FAILED" : "PASSED",
	       c.failures);
	return c.failures ? 1 : 0;
}

static void write_imm(struct conn *c, const struct srv_info *si, int k,
		      uint32_t size, uint32_t imm, unsigned int flags)
{
	uint32_t off = woff(k);
	struct ibv_sge sge = { .addr = (uintptr_t)c->mem + off,
			       .length = size, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)k,
		.sg_list = &sge,
		.num_sge = size ? 1 : 0,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED | flags,
		.imm_data = htonl(imm),
	};
	struct ibv_send_wr *bad;
	int ret;

	if (off + size >= si->len)
		die("region too small");
	for (uint32_t i = 0; i < size; i++)
		c->mem[off + i] = pat((uint32_t)k, i);
	wr.wr.rdma.remote_addr = si->addr + off;
	wr.wr.rdma.rkey = si->rkey;
	ret = vcm_post_send(c->cm.id->qp, &wr, &bad);
	if (ret)
		die("post write-imm %d: %s", k, strerror(ret));
}

/* Send with Immediate j: size bytes of spat(j, .), value imm. */
static void send_imm(struct conn *c, int j, uint32_t size, uint32_t imm,
		     unsigned int flags)
{
	uint8_t *src = c->mem + SSRC_OFF + (size_t)j * RBUF;
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = size,
			       .lkey = c->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 300u + (uint64_t)j,
		.sg_list = &sge,
		.num_sge = size ? 1 : 0,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED | flags,
		.imm_data = htonl(imm),
	};
	struct ibv_send_wr *bad;
	int ret;

	for (uint32_t i = 0; i < size; i++)
		src[i] = spat(j, i);
	ret = vcm_post_send(c->cm.id->qp, &wr, &bad);
	if (ret)
		die("post send-imm %d: %s", j, strerror(ret));
}

/*
 * A signaled ord_size-byte RDMA Write (wr_id 200) of pattern 'seed' to
 * ORD_OFF in the server's region.
 */
static void plain_write(struct conn *c, const struct srv_info *si,
			uint32_t seed)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->mem + ORD_OFF,
			       .length = ord_size, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 200, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad = NULL;

	for (uint32_t i = 0; i < ord_size; i++)
		c->mem[ORD_OFF + i] = pat(seed, i);
	wr.wr.rdma.remote_addr = si->addr + ORD_OFF;
	wr.wr.rdma.rkey = si->rkey;
	if (vcm_post_send(c->cm.id->qp, &wr, &bad))
		die("post write: %s", strerror(errno));
}

static int client(const char *addr, const char *port, int neg)
{
	struct conn c = { 0 };
	struct srv_info si;
	struct ibv_wc wc;
	int posted = 0, done = 0, bad_wc = 0;

	vcm_resolve(&c.cm, addr, port);
	setup(&c, neg);
	post_recv(&c, 0);
	post_recv(&c, 1);
	post_recv(&c, 2);
	vcm_connect(&c.cm, &si, sizeof(si), 0);
	if (!neg && (si.ord_size != ord_size || si.nimm != (uint32_t)nimm)) {
		vcm_result(&c.failures, 0, "parameters: the server has -S %u -k %u, this client -S %u -k %d; they must be the same",
		       si.ord_size, si.nimm, ord_size, nimm);
		goto out;
	}

	if (neg) {
		try_write_imm(&c);
		send_word(&c, 0x9199);
		recv_word(&c, 0x9099, "pong from the server");
		goto out;
	}

	/* nimm in a row, at most 32 outstanding. */
	while (done < nimm) {
		while (posted < nimm && posted - done < 32) {
			write_imm(&c, &si, posted, sizes[posted % 8],
				  IMM_BASE + (uint32_t)posted, 0);
			posted++;
		}
		poll_one(c.scq, &wc, "write-imm");
		if ((wc.status != IBV_WC_SUCCESS ||
		     wc.opcode != IBV_WC_RDMA_WRITE ||
		     wc.wr_id != (uint64_t)done) && !bad_wc++)
			vcm_result(&c.failures, 0, "write-imm %d completion: status %s opcode %d wr_id %llu",
			       done, ibv_wc_status_str(wc.status), wc.opcode,
			       (unsigned long long)wc.wr_id);
		done++;
	}
	vcm_result(&c.failures, !bad_wc, "write-imm-sender: %d completions IBV_WC_RDMA_WRITE in order",
	       nimm);
	recv_word(&c, 0x6060, "go from the server");
	plain_write(&c, &si, ORD_SEED);
	for (int j = 0; j < NSIMM; j++)
		send_imm(&c, j, ssize(j), SIMM_BASE + (uint32_t)j,
			 j == SINL ? IBV_SEND_INLINE : 0);
	bad_wc = 0;
	for (int j = -1; j < NSIMM; j++) {
		poll_one(c.scq, &wc, "send-imm");
		if ((wc.status != IBV_WC_SUCCESS ||
		     wc.opcode != (enum ibv_wc_opcode)(j < 0 ? IBV_WC_RDMA_WRITE : IBV_WC_SEND) ||
		     wc.wr_id != (j < 0 ? 200u : 300u + (uint64_t)j)) && !bad_wc++)
			vcm_result(&c.failures, 0, "send-imm %d completion: status %s opcode %d wr_id %llu",
			       j, ibv_wc_status_str(wc.status), wc.opcode,
			       (unsigned long long)wc.wr_id);
	}
	vcm_result(&c.failures, !bad_wc, "send-imm-sender: the Write and %d Sends with Immediate complete in order (IBV_WC_RDMA_WRITE, IBV_WC_SEND)",
	       NSIMM);
	recv_word(&c, 0x6061, "go2 from the server");
	plain_write(&c, &si, ORD_SEED2);
	write_imm(&c, &si, NIMM, SOL_SIZE, IMM_SOL, IBV_SEND_SOLICITED);
	poll_one(c.scq, &wc, "plain write before the solicited write-imm");
	vcm_result(&c.failures, wc.status == IBV_WC_SUCCESS && wc.wr_id == 200,
	       "write-before-solicited-write-imm completion: %s",
	       ibv_wc_status_str(wc.status));
	poll_one(c.scq, &wc, "solicited write-imm");
	vcm_result(&c.failures, wc.status == IBV_WC_SUCCESS && wc.wr_id == NIMM,
	       "solicited-write-imm completion: %s",
	       ibv_wc_status_str(wc.status));
	recv_word(&c, 0x6062, "go3 from the server");
	send_imm(&c, NSIMM, SSOL_SIZE, SIMM_SOL, IBV_SEND_SOLICITED);
	poll_one(c.scq, &wc, "solicited send-imm");
	vcm_result(&c.failures, wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND &&
		  wc.wr_id == 300u + NSIMM,
	       "solicited-send-imm completion: %s",
	       ibv_wc_status_str(wc.status));
	send_word(&c, 0xb7e);
out:
	vcm_close(&c.cm);
	printf("%s: %d check(s) failed\n", c.failures ? "FAILED" : "PASSED",
	       c.failures);
	return c.failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct vcm_args a = { .role = -1, .port = "7481" };
	int neg = 0, badsize = 0, opt;
	long ord;
	char *end;

	while ((opt = getopt(argc, argv, "s:c:p:k:S:nX")) != -1) {
		if (vcm_common_opt(&a, opt, optarg))
			continue;
		switch (opt) {
		case 'k':
			nimm = atoi(optarg);
			break;
		case 'n':
			neg = 1;
			break;
		case 'X':
			vcm_wr_api = 1;
			break;
		case 'S':
			/*
			 * Its own flag: a -s or -c after it would set
			 * a.role again and hide a bad size.
			 */
			ord = strtol(optarg, &end, 10);
			if (*end || ord < 1 || ord > ORD_MAX)
				badsize = 1;
			else
				ord_size = (uint32_t)ord;
			break;
		default:
			a.role = -1;
			break;
		}
	}
	if (a.role < 0 || !a.addr || nimm < 1 || nimm > NIMM || badsize) {
		fprintf(stderr,
			"usage: %s -s ADDR | -c ADDR [-p PORT] [-k 1-%d] [-S 1-%u] [-n] [-X]\n",
			argv[0], NIMM, ORD_MAX);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (vcm_wr_api)
		printf("posting with ibv_wr_* (ibv_qp_ex)\n");
	return a.role ? server(a.addr, a.port, neg) : client(a.addr, a.port, neg);
}
