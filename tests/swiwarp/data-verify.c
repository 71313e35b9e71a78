// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * data-verify: checks that RDMA Send, Write and Read move the right bytes
 * to the right places, not only that they complete.  One server, one
 * client, over rdma_cm on any verbs device (swiwarp, siw, rxe):
 *
 *   data-verify -s ADDR [-p PORT]
 *   data-verify -c ADDR [-p PORT] [-z SIZE,SIZE,...] [-r ROUNDS] [-P]
 *
 * For every size the client
 *   send   sends a message gathered from three SGEs (odd lengths, odd
 *          offsets, three memory regions); the server receives it into
 *          three SGEs of other odd lengths and checks length and content;
 *   write  writes a gathered buffer to an odd offset of the server's
 *          region, then asks (by Send, ordered behind the Write) the
 *          server to check the content and the guard bytes around it;
 *   read   asks the server to fill a source area, then reads it back with
 *          several outstanding Reads into one sink at odd offsets and
 *          checks content and guard bytes itself.
 * Every byte is a function of (seed, position), so a byte placed at the
 * wrong offset, a short message or a stale page is caught.  With -P the
 * client overwrites the source of a Send or Write with a poison pattern
 * the instant its completion arrives (before the server checks it), as
 * a consumer reusing its buffer may: a provider that completes before
 * the data can no longer be retransmitted from the buffer is caught
 * (more surely when the link drops packets).  Output: one
 * line per check, "ok ..." or "BAD ..." with the first bad offset; the
 * exit status is 0 only if every check was ok.
 *
 * Built by the lab scripts (build_data_verify in suite-lib.sh) with:
 * cc -O2 -o data-verify data-verify.c verify-cm.c -lrdmacm -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "verify-cm.h"

#define REGION (8u << 20)	/* each memory region */
#define MAX_SIZE 4200000u	/* largest message (-z) */
#define POISON 0x5a
#define GUARD 0xa5
#define MAGIC_DATA 0x44415441u	/* "DATA" */
#define MAGIC_CTL 0x4354524cu	/* "CTRL" */
#define TIMEOUT_S 60
#define NREAD 4			/* outstanding Reads per read check */

enum { CTL_CHECK_WRITE = 1, CTL_FILL_READ, CTL_RESULT, CTL_BYE };

/* Control message, always at the start of a Send. */
struct ctl {
	uint32_t magic;
	uint32_t op;
	uint32_t size;
	uint32_t seed;
	uint32_t off;
	int32_t status;		/* CTL_RESULT: 0 ok, else first bad offset + 1 */
	uint32_t rkey;
	uint32_t pad;
	uint64_t addr;
	char why[96];
};

/* Header of a data Send; pattern bytes follow. */
struct dhdr {
	uint32_t magic;
	uint32_t size;
	uint32_t seed;
	uint32_t pad;
};

/* What the server tells the client in its accept private data. */
struct srv_info {
	uint64_t waddr;		/* Write target region */
	uint64_t raddr;		/* Read source region */
	uint32_t wkey;
	uint32_t rkey;
	uint32_t len;
	uint32_t pad;
};

struct conn {
	struct vcm cm;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *mem[3];
	struct ibv_mr *mr[3];
	uint8_t *ctlbuf;	/* sends of control messages */
	struct ibv_mr *ctlmr;
	int failures;
	int nstash;		/* completions that arrived before wanted */
	struct ibv_wc stash[32];
};

static uint8_t pat(uint32_t seed, uint64_t i)
{
	uint32_t x = seed ^ (uint32_t)(i * 2654435761u) ^ (uint32_t)(i >> 32);

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return (uint8_t)x;
}

static void fill(uint8_t *p, uint32_t n, uint32_t seed, uint64_t base)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = pat(seed, base + i);
}

/* -1 if p[0..n) holds the pattern, else the first bad index. */
static int64_t check(const uint8_t *p, uint32_t n, uint32_t seed, uint64_t base)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i] != pat(seed, base + i))
			return i;
	return -1;
}

/* Wait for the next completion of the given opcode (others are kept). */
static void wait_wc(struct conn *c, struct ibv_wc *wc, enum ibv_wc_opcode want,
		    const char *what)
{
	double end = now() + TIMEOUT_S;
	int i;

	for (;;) {
		for (i = 0; i < c->nstash; i++) {
			if (c->stash[i].opcode != want)
				continue;
			*wc = c->stash[i];
			memmove(&c->stash[i], &c->stash[i + 1],
				(c->nstash - i - 1) * sizeof(*wc));
			c->nstash--;
			goto got;
		}
		int n = ibv_poll_cq(c->cq, 1, wc);

		if (n < 0)
			die("poll_cq: %d", n);
		if (n == 1) {
			if (wc->status != IBV_WC_SUCCESS)
				break;
			if (wc->opcode == want)
				break;
			if (c->nstash == 32)
				die("%s: too many unexpected completions", what);
			c->stash[c->nstash++] = *wc;
			continue;
		}
		if (now() > end)
			die("%s: no completion within %d s", what, TIMEOUT_S);
		usleep(50);
	}
got:
	if (wc->status != IBV_WC_SUCCESS)
		die("%s: completion status %s (opcode %d)", what,
		    ibv_wc_status_str(wc->status), wc->opcode);
}

/* The QP on c->cm.id, its CQ and the memory regions. */
static void setup_qp(struct conn *c)
{
	struct ibv_context *verbs = c->cm.id->verbs;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ;

	c->pd = ibv_alloc_pd(verbs);
	if (!c->pd)
		die("alloc_pd");
	c->cq = ibv_create_cq(verbs, 64, NULL, NULL, 0);
	if (!c->cq)
		die("create_cq");
	vcm_create_qp(&c->cm, c->pd, c->cq, c->cq, 16, 8, 3);
	for (int i = 0; i < 3; i++) {
		c->mem[i] = aligned_alloc(4096, REGION);
		if (!c->mem[i])
			die("no memory");
		memset(c->mem[i], GUARD, REGION);
		c->mr[i] = ibv_reg_mr(c->pd, c->mem[i], REGION, access);
		if (!c->mr[i])
			die("reg_mr: %s", strerror(errno));
	}
	c->ctlbuf = calloc(1, 4096);
	c->ctlmr = ibv_reg_mr(c->pd, c->ctlbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!c->ctlbuf || !c->ctlmr)
		die("ctl buffer");
}

static void post(struct conn *c, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	if (ibv_post_send(c->cm.id->qp, wr, &bad))
		die("post_send: %s", strerror(errno));
}

static void send_ctl(struct conn *c, const struct ctl *m)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->ctlbuf,
		.length = sizeof(*m),
		.lkey = c->ctlmr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	memcpy(c->ctlbuf, m, sizeof(*m));
	post(c, &wr);
	wait_wc(c, &wc, IBV_WC_SEND, "control send");
}

/*
 * Receive layout (server): three SGEs of odd lengths at odd offsets of
 * the three regions, 1/3 of the largest message each, so every message
 * larger than the first SGE spans SGE boundaries.  Slot s of two uses
 * the second half of each region.
 */
static const uint32_t rx_off[3] = { 3, 1001, 77 };
static const uint32_t rx_len[3] = { 1400001, 600007, 2400011 };

static void post_recv(struct conn *c, int slot)
{
	struct ibv_sge sge[3];
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = sge, .num_sge = 3 };
	struct ibv_recv_wr *bad;

	for (int i = 0; i < 3; i++) {
		sge[i].addr = (uintptr_t)c->mem[i] + slot * (REGION / 2) + rx_off[i];
		sge[i].length = rx_len[i];
		sge[i].lkey = c->mr[i]->lkey;
	}
	if (ibv_post_recv(c->cm.id->qp, &wr, &bad))
		die("post_recv: %s", strerror(errno));
}

/* Copy n bytes at message offset off of a received slot into dst. */
static void gather(struct conn *c, int slot, uint32_t off, uint8_t *dst,
		   uint32_t n)
{
	for (int i = 0; i < 3 && n; i++) {
		const uint8_t *src = c->mem[i] + slot * (REGION / 2) + rx_off[i];
		uint32_t take;

		if (off >= rx_len[i]) {
			off -= rx_len[i];
			continue;
		}
		take = rx_len[i] - off < n ? rx_len[i] - off : n;
		memcpy(dst, src + off, take);
		dst += take;
		n -= take;
		off = 0;
	}
}

static int verify_slot(struct conn *c, int slot, uint32_t len, struct ctl *res)
{
	uint8_t *buf = malloc(len + 1);
	struct dhdr h;
	int64_t bad;
	int ok = 0;

	gather(c, slot, 0, buf, len);
	memcpy(&h, buf, sizeof(h));
	if (h.size != len) {
		snprintf(res->why, sizeof(res->why), "received %u bytes, header says %u",
			 len, h.size);
	} else if ((bad = check(buf + sizeof(h), len - sizeof(h), h.seed,
				sizeof(h))) >= 0) {
		snprintf(res->why, sizeof(res->why),
			 "send: first bad byte at %" PRId64 " of %u (got 0x%02x want 0x%02x)",
			 bad + (int64_t)sizeof(h), len, buf[sizeof(h) + bad],
			 pat(h.seed, sizeof(h) + bad));
		res->status = (int32_t)(bad + sizeof(h) + 1);
	} else {
		ok = 1;
	}
	free(buf);
	return ok;
}

static int server(const char *addr, const char *port)
{
	struct conn c = { 0 };
	struct srv_info info = { 0 };
	int done = 0;

	vcm_listen_one(&c.cm, addr, port);
	setup_qp(&c);
	post_recv(&c, 0);
	post_recv(&c, 1);
	info.waddr = (uintptr_t)c.mem[1];
	info.wkey = c.mr[1]->rkey;
	info.raddr = (uintptr_t)c.mem[2];
	info.rkey = c.mr[2]->rkey;
	info.len = REGION;
	vcm_accept(&c.cm, &info, sizeof(info), 8);

	while (!done) {
		struct ibv_wc wc;
		struct ctl m, res = { .magic = MAGIC_CTL, .op = CTL_RESULT };
		int slot;

		wait_wc(&c, &wc, IBV_WC_RECV, "receive");
		slot = (int)wc.wr_id;
		gather(&c, slot, 0, (uint8_t *)&m, sizeof(m));
		if (m.magic == MAGIC_DATA) {
			if (!verify_slot(&c, slot, wc.byte_len, &res) && !res.status)
				res.status = -1;
			/* Scrub the slot so the next message is checked afresh. */
			for (int i = 0; i < 3; i++)
				memset(c.mem[i] + slot * (REGION / 2) + rx_off[i], GUARD,
				       rx_len[i]);
		} else if (m.magic != MAGIC_CTL) {
			die("receive of %u bytes without a known header", wc.byte_len);
		} else if (m.op == CTL_CHECK_WRITE) {
			uint8_t *w = c.mem[1];
			int64_t bad = check(w + m.off, m.size, m.seed, 0);

			if (bad >= 0) {
				res.status = (int32_t)bad + 1;
				snprintf(res.why, sizeof(res.why),
					 "write: first bad byte at %" PRId64 " of %u (got 0x%02x want 0x%02x)",
					 bad, m.size, w[m.off + bad], pat(m.seed, bad));
			} else if (w[m.off - 1] != GUARD ||
				   (m.off + m.size < REGION && w[m.off + m.size] != GUARD)) {
				res.status = -1;
				snprintf(res.why, sizeof(res.why),
					 "write: guard byte around [%u, %u) overwritten",
					 m.off, m.off + m.size);
			}
			memset(w + m.off, GUARD, m.size);
		} else if (m.op == CTL_FILL_READ) {
			fill(c.mem[2] + m.off, m.size, m.seed, 0);
		} else if (m.op == CTL_BYE) {
			done = 1;
		}
		post_recv(&c, slot);
		send_ctl(&c, &res);
	}
	/* The client disconnects. */
	vcm_close(&c.cm);
	return 0;
}

static void report(struct conn *c, const char *what, uint32_t size, int ok,
		   const char *why)
{
	if (ok) {
		printf("ok %s %u\n", what, size);
	} else {
		printf("BAD %s %u: %s\n", what, size, why);
		c->failures++;
	}
	fflush(stdout);
}

/* Wait for the server's CTL_RESULT (a receive on the client's slot 0). */
static struct ctl wait_result(struct conn *c)
{
	struct ibv_wc wc;
	struct ctl m;

	wait_wc(c, &wc, IBV_WC_RECV, "result");
	memcpy(&m, c->mem[0] + REGION - 4096, sizeof(m));
	if (m.magic != MAGIC_CTL || m.op != CTL_RESULT)
		die("bad result message");
	{
		struct ibv_sge sge = {
			.addr = (uintptr_t)c->mem[0] + REGION - 4096,
			.length = 4096,
			.lkey = c->mr[0]->lkey,
		};
		struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_recv(c->cm.id->qp, &wr, &bad))
			die("post_recv");
	}
	return m;
}

/*
 * The gathered source of a Send or Write: three SGEs over the client's
 * regions, split at 1/5 and 1/2 of the message, at odd offsets.
 */
static int poison;	/* -P */

/* The consumer reuses its buffer the moment the WR completed. */
static void poison_sgl(const struct ibv_sge *sge, int n)
{
	for (int i = 0; poison && i < n; i++)
		memset((void *)(uintptr_t)sge[i].addr, POISON, sge[i].length);
}

static int source_sgl(struct conn *c, uint32_t size, uint32_t seed,
		      const uint8_t *hdr, uint32_t hlen, struct ibv_sge *sge)
{
	uint32_t cut[4] = { 0, size / 5, size / 2, size };
	static const uint32_t off[3] = { 5, 4093, 12289 };
	int n = 0;

	for (int i = 0; i < 3; i++) {
		uint32_t len = cut[i + 1] - cut[i];
		uint8_t *p = c->mem[i] + off[i];

		if (!len)
			continue;
		fill(p, len, seed, cut[i]);
		/* The header overlays the first bytes of the message. */
		for (uint32_t k = cut[i]; k < cut[i + 1] && k < hlen; k++)
			p[k - cut[i]] = hdr[k];
		sge[n].addr = (uintptr_t)p;
		sge[n].length = len;
		sge[n].lkey = c->mr[i]->lkey;
		n++;
	}
	return n;
}

static void test_send(struct conn *c, uint32_t size, uint32_t seed)
{
	struct dhdr h = { .magic = MAGIC_DATA, .size = size, .seed = seed };
	struct ibv_sge sge[3];
	struct ibv_send_wr wr = { .sg_list = sge, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	struct ctl r;

	if (size < sizeof(h))
		return;
	wr.num_sge = source_sgl(c, size, seed, (uint8_t *)&h, sizeof(h), sge);
	post(c, &wr);
	wait_wc(c, &wc, IBV_WC_SEND, "send");
	poison_sgl(sge, wr.num_sge);
	r = wait_result(c);
	report(c, "send", size, r.status == 0, r.why);
}

static void test_write(struct conn *c, const struct srv_info *si,
		       uint32_t size, uint32_t seed)
{
	uint32_t off = 1 + (seed % 61) * 17;
	struct ibv_sge sge[3];
	struct ibv_send_wr wr = { .sg_list = sge, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ctl m = { .magic = MAGIC_CTL, .op = CTL_CHECK_WRITE,
			 .size = size, .seed = seed, .off = off };
	struct ibv_wc wc;
	struct ctl r;

	if (off + size > si->len)
		return;
	wr.num_sge = source_sgl(c, size, seed, NULL, 0, sge);
	wr.wr.rdma.remote_addr = si->waddr + off;
	wr.wr.rdma.rkey = si->wkey;
	post(c, &wr);
	wait_wc(c, &wc, IBV_WC_RDMA_WRITE, "write");
	poison_sgl(sge, wr.num_sge);
	send_ctl(c, &m);
	r = wait_result(c);
	report(c, "write", size, r.status == 0, r.why);
}

static void test_read(struct conn *c, const struct srv_info *si,
		      uint32_t size, uint32_t seed)
{
	uint32_t soff = 3 + (seed % 53) * 11, doff = 7 + (seed % 29) * 13;
	uint8_t *sink = c->mem[1];
	struct ctl m = { .magic = MAGIC_CTL, .op = CTL_FILL_READ,
			 .size = size, .seed = seed, .off = soff };
	struct ibv_sge sge[NREAD];
	struct ibv_send_wr wr[NREAD];
	uint32_t chunk = (size + NREAD - 1) / NREAD, pos = 0;
	int nwr = 0, seen = 0;
	char why[128] = "";
	int64_t bad;
	struct ctl r;

	if (soff + size > si->len || doff + size + 1 > REGION)
		return;
	send_ctl(c, &m);
	r = wait_result(c);
	if (r.status)
		die("server could not fill the read source");
	memset(sink, GUARD, doff + size + 64 < REGION ? doff + size + 64 : REGION);
	/* NREAD Reads, all outstanding at once, each for its own piece. */
	memset(wr, 0, sizeof(wr));
	while (pos < size) {
		uint32_t len = size - pos < chunk ? size - pos : chunk;

		sge[nwr].addr = (uintptr_t)sink + doff + pos;
		sge[nwr].length = len;
		sge[nwr].lkey = c->mr[1]->lkey;
		wr[nwr].wr_id = nwr;
		wr[nwr].sg_list = &sge[nwr];
		wr[nwr].num_sge = 1;
		wr[nwr].opcode = IBV_WR_RDMA_READ;
		wr[nwr].send_flags = IBV_SEND_SIGNALED;
		wr[nwr].wr.rdma.remote_addr = si->raddr + soff + pos;
		wr[nwr].wr.rdma.rkey = si->rkey;
		if (nwr)
			wr[nwr - 1].next = &wr[nwr];
		nwr++;
		pos += len;
	}
	post(c, &wr[0]);
	while (seen < nwr) {
		struct ibv_wc wc;

		wait_wc(c, &wc, IBV_WC_RDMA_READ, "read");
		if (wc.wr_id != (uint64_t)seen)
			die("read: completion %d for wr %" PRIu64 " out of order",
			    wc.opcode, wc.wr_id);
		seen++;
	}
	bad = check(sink + doff, size, seed, 0);
	if (bad >= 0)
		snprintf(why, sizeof(why),
			 "first bad byte at %" PRId64 " of %u (got 0x%02x want 0x%02x)",
			 bad, size, sink[doff + bad], pat(seed, bad));
	else if (sink[doff - 1] != GUARD || sink[doff + size] != GUARD)
		snprintf(why, sizeof(why), "guard byte around the sink overwritten");
	report(c, "read", size, !why[0], why);
}

static int client(const char *addr, const char *port, const char *sizes,
		  int rounds)
{
	struct conn c = { 0 };
	struct srv_info si;
	struct ctl bye = { .magic = MAGIC_CTL, .op = CTL_BYE };
	uint32_t seed = 1;

	vcm_resolve(&c.cm, addr, port);
	setup_qp(&c);
	{
		struct ibv_sge sge = {
			.addr = (uintptr_t)c.mem[0] + REGION - 4096,
			.length = 4096,
			.lkey = c.mr[0]->lkey,
		};
		struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_recv(c.cm.id->qp, &wr, &bad))
			die("post_recv");
	}
	vcm_connect(&c.cm, &si, sizeof(si), 8);

	for (int round = 0; round < rounds; round++) {
		const char *p = sizes;

		while (*p) {
			uint32_t size = (uint32_t)strtoul(p, (char **)&p, 0);

			if (*p == ',')
				p++;
			if (size > MAX_SIZE)
				die("size %u too large (max %u)", size, MAX_SIZE);
			test_send(&c, size, seed++);
			test_write(&c, &si, size, seed++);
			test_read(&c, &si, size, seed++);
		}
	}
	send_ctl(&c, &bye);
	wait_result(&c);
	vcm_close(&c.cm);
	printf("%s: %d check(s) failed\n", c.failures ? "FAILED" : "PASSED",
	       c.failures);
	return c.failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct vcm_args a = { .role = -1, .port = "7471" };
	const char *sizes = "17,4095,4097,9000,60000,65536,131101,1000003";
	int rounds = 1, opt;

	while ((opt = getopt(argc, argv, "s:c:p:z:r:P")) != -1) {
		if (vcm_common_opt(&a, opt, optarg))
			continue;
		switch (opt) {
		case 'z':
			sizes = optarg;
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'P':
			poison = 1;
			break;
		default:
			a.role = -1;
			break;
		}
	}
	if (a.role < 0 || !a.addr) {
		fprintf(stderr, "usage: %s -s ADDR | -c ADDR [-p PORT] [-z SIZES] [-r ROUNDS] [-P]\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	return a.role ? server(a.addr, a.port) : client(a.addr, a.port, sizes, rounds);
}
