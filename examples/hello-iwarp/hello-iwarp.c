// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hello-iwarp: the "Hello iWARP" program of the ETH iWARP thesis (section
 * 3.4.1), written for librdmacm + libibverbs.
 *
 *   responder:  hello-iwarp -s [-a ADDR] [-p PORT]
 *   initiator:  hello-iwarp -c HOST [-p PORT] [-S SIZE] [-m TEXT]
 *
 * Phase 1 connects.  Phase 2: the responder posts a Receive and then
 * advertises a buffer (address, STag, length) with a Send; the initiator
 * RDMA-Writes its text into that buffer, RDMA-Reads it back into a second
 * buffer and compares, then tells the responder it is done with a final Send,
 * for which the responder has a Receive posted before it advertised.  Phase 3
 * tears everything down.
 *
 * One deviation from the thesis's figure: without MPA peer-to-peer mode the
 * MPA initiator has to send the first FPDU of a connection (RFC 6581 section
 * 1 explains why), so the initiator opens with a small "hello" Send that asks
 * for the advertisement instead of waiting for it.
 *
 * Exit status 0 when the data read back (initiator) and the data found in
 * the buffer (responder) are what the initiator wrote.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define CTRL_MAX 64

/* Control messages (Sends), all integers big-endian on the wire. */
enum { MSG_HELLO = 1, MSG_ADVERT = 2, MSG_DONE = 3 };

struct ctrl_msg {
	uint32_t type;
	uint32_t rkey;	/* MSG_ADVERT: STag of the buffer */
	uint64_t addr;	/* MSG_ADVERT: its address (the tagged offset) */
	uint32_t len;	/* MSG_ADVERT: its size; MSG_HELLO/MSG_DONE: bytes used */
	uint32_t check;	/* MSG_DONE: checksum of the bytes written */
};

static const char *opt_port = "7471";
static const char *opt_addr;
static const char *opt_text = "Hello iWARP!";
static size_t opt_size;
static int opt_server;

static void die(const char *what)
{
	fprintf(stderr, "hello-iwarp: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint32_t checksum(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

/* The initiator's payload: the text repeated up to SIZE bytes. */
static void fill(unsigned char *buf, size_t size, const char *text)
{
	size_t tl = strlen(text);

	for (size_t i = 0; i < size; i++)
		buf[i] = (unsigned char)text[i % tl];
}

static void post_recv(struct rdma_cm_id *id, struct ctrl_msg *m, struct ibv_mr *mr)
{
	if (rdma_post_recv(id, m, m, sizeof(*m), mr))
		die("rdma_post_recv");
}

static void wait_recv(struct rdma_cm_id *id, uint32_t type)
{
	struct ibv_wc wc;

	if (rdma_get_recv_comp(id, &wc) <= 0)
		die("rdma_get_recv_comp");
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "hello-iwarp: receive failed: %s\n", ibv_wc_status_str(wc.status));
		exit(1);
	}
	if (be32toh(((struct ctrl_msg *)(uintptr_t)wc.wr_id)->type) != type) {
		fprintf(stderr, "hello-iwarp: unexpected control message\n");
		exit(1);
	}
}

static void wait_send(struct rdma_cm_id *id, const char *what)
{
	struct ibv_wc wc;

	if (rdma_get_send_comp(id, &wc) <= 0)
		die("rdma_get_send_comp");
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "hello-iwarp: %s failed: %s\n", what, ibv_wc_status_str(wc.status));
		exit(1);
	}
}

static void send_msg(struct rdma_cm_id *id, struct ctrl_msg *m, struct ibv_mr *mr)
{
	if (rdma_post_send(id, m, m, sizeof(*m), mr, IBV_SEND_SIGNALED))
		die("rdma_post_send");
	wait_send(id, "Send");
}

static struct rdma_cm_id *create_ep(const char *host, int passive)
{
	struct rdma_addrinfo hints = { 0 }, *res;
	struct ibv_qp_init_attr attr = { 0 };
	struct rdma_cm_id *id;

	hints.ai_port_space = RDMA_PS_TCP;
	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(host, opt_port, &hints, &res))
		die("rdma_getaddrinfo");
	attr.cap.max_send_wr = 4;
	attr.cap.max_recv_wr = 4;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 1;
	if (rdma_create_ep(&id, res, NULL, &attr))
		die("rdma_create_ep");
	rdma_freeaddrinfo(res);
	return id;
}

static int responder(void)
{
	struct ctrl_msg *rx = calloc(2, sizeof(*rx)), tx = { 0 };
	struct rdma_cm_id *listen_id, *id;
	struct ibv_mr *rx_mr, *tx_mr, *buf_mr;
	struct rdma_conn_param cp = { 0 };
	unsigned char *buf;
	size_t size, used;
	uint32_t want;
	int ok;

	if (!rx)
		die("calloc");
	listen_id = create_ep(opt_addr, 1);
	if (rdma_listen(listen_id, 1))
		die("rdma_listen");
	printf("responder: listening on port %s\n", opt_port);
	fflush(stdout);
	if (rdma_get_request(listen_id, &id))
		die("rdma_get_request");

	/* Phase 1: the initiator's "hello" needs a Receive before we accept. */
	rx_mr = rdma_reg_msgs(id, rx, 2 * sizeof(*rx));
	tx_mr = rdma_reg_msgs(id, &tx, sizeof(tx));
	if (!rx_mr || !tx_mr)
		die("rdma_reg_msgs");
	post_recv(id, &rx[0], rx_mr);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	if (rdma_accept(id, &cp))
		die("rdma_accept");
	wait_recv(id, MSG_HELLO);
	size = be32toh(rx[0].len);
	if (size == 0 || size > (64u << 20)) {
		fprintf(stderr, "hello-iwarp: bad size %zu requested\n", size);
		return 1;
	}
	printf("responder: connected, initiator asks for %zu bytes\n", size);

	/* Phase 2: Receive for the final Send first, then the advertisement. */
	buf = calloc(1, size);
	if (!buf)
		die("calloc");
	buf_mr = ibv_reg_mr(id->pd, buf, size,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!buf_mr)
		die("ibv_reg_mr");
	post_recv(id, &rx[1], rx_mr);
	tx.type = htobe32(MSG_ADVERT);
	tx.rkey = htobe32(buf_mr->rkey);
	tx.addr = htobe64((uint64_t)(uintptr_t)buf);
	tx.len = htobe32((uint32_t)size);
	send_msg(id, &tx, tx_mr);
	printf("responder: advertised %zu bytes at 0x%llx, STag 0x%08x\n", size,
	       (unsigned long long)(uintptr_t)buf, buf_mr->rkey);
	wait_recv(id, MSG_DONE);

	used = be32toh(rx[1].len);
	want = be32toh(rx[1].check);
	ok = used <= size && checksum(buf, used) == want;
	printf("responder: initiator done, buffer holds \"%.*s\"%s (%zu bytes, %s)\n",
	       (int)(used < 40 ? used : 40), (const char *)buf, used > 40 ? "..." : "", used,
	       ok ? "checksum ok" : "CHECKSUM MISMATCH");

	/* Phase 3 */
	rdma_disconnect(id);
	ibv_dereg_mr(buf_mr);
	rdma_dereg_mr(tx_mr);
	rdma_dereg_mr(rx_mr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(listen_id);
	free(buf);
	free(rx);
	return ok ? 0 : 1;
}

static int initiator(const char *host)
{
	struct ctrl_msg *rx = calloc(1, sizeof(*rx)), *tx = calloc(1, sizeof(*tx));
	struct ibv_mr *rx_mr, *tx_mr, *src_mr, *dst_mr;
	struct rdma_conn_param cp = { 0 };
	unsigned char *src, *dst;
	struct rdma_cm_id *id;
	uint64_t raddr;
	uint32_t rkey;
	size_t size = opt_size ? opt_size : strlen(opt_text) + 1;
	int ok;

	if (!rx || !tx)
		die("calloc");
	id = create_ep(host, 0);
	src = malloc(size);
	dst = calloc(1, size);
	if (!src || !dst)
		die("malloc");
	fill(src, size, opt_text);
	if (!opt_size)
		src[size - 1] = 0;
	rx_mr = rdma_reg_msgs(id, rx, sizeof(*rx));
	tx_mr = rdma_reg_msgs(id, tx, sizeof(*tx));
	src_mr = ibv_reg_mr(id->pd, src, size, IBV_ACCESS_LOCAL_WRITE);
	/* iWARP places Read Responses like tagged Writes: the sink needs remote write */
	dst_mr = ibv_reg_mr(id->pd, dst, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!rx_mr || !tx_mr || !src_mr || !dst_mr)
		die("memory registration");

	/* Phase 1 */
	post_recv(id, rx, rx_mr);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	if (rdma_connect(id, &cp))
		die("rdma_connect");
	tx->type = htobe32(MSG_HELLO);
	tx->len = htobe32((uint32_t)size);
	send_msg(id, tx, tx_mr);

	/* Phase 2: wait for the advertisement, Write, Read back, compare. */
	wait_recv(id, MSG_ADVERT);
	raddr = be64toh(rx->addr);
	rkey = be32toh(rx->rkey);
	if (be32toh(rx->len) < size) {
		fprintf(stderr, "hello-iwarp: advertised buffer too small\n");
		return 1;
	}
	printf("initiator: got buffer 0x%llx STag 0x%08x, writing %zu bytes\n",
	       (unsigned long long)raddr, rkey, size);
	if (rdma_post_write(id, NULL, src, size, src_mr, IBV_SEND_SIGNALED, raddr, rkey))
		die("rdma_post_write");
	wait_send(id, "RDMA Write");
	if (rdma_post_read(id, NULL, dst, size, dst_mr, IBV_SEND_SIGNALED, raddr, rkey))
		die("rdma_post_read");
	wait_send(id, "RDMA Read");
	ok = memcmp(src, dst, size) == 0;
	printf("initiator: read back \"%.*s\"%s: %s\n", (int)(size < 40 ? size : 40),
	       (const char *)dst, size > 40 ? "..." : "", ok ? "match" : "MISMATCH");

	tx->type = htobe32(MSG_DONE);
	tx->len = htobe32((uint32_t)size);
	tx->check = htobe32(checksum(src, size));
	send_msg(id, tx, tx_mr);

	/* Phase 3 */
	rdma_disconnect(id);
	ibv_dereg_mr(dst_mr);
	ibv_dereg_mr(src_mr);
	rdma_dereg_mr(tx_mr);
	rdma_dereg_mr(rx_mr);
	rdma_destroy_ep(id);
	free(src);
	free(dst);
	free(rx);
	free(tx);
	return ok ? 0 : 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: hello-iwarp -s [-a ADDR] [-p PORT]\n"
		"       hello-iwarp -c HOST [-p PORT] [-S SIZE] [-m TEXT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *host = NULL;
	int c;

	while ((c = getopt(argc, argv, "sc:a:p:S:m:")) != -1) {
		switch (c) {
		case 's':
			opt_server = 1;
			break;
		case 'c':
			host = optarg;
			break;
		case 'a':
			opt_addr = optarg;
			break;
		case 'p':
			opt_port = optarg;
			break;
		case 'S':
			opt_size = strtoul(optarg, NULL, 0);
			if (opt_size == 0 || opt_size > (64u << 20))
				usage();
			break;
		case 'm':
			opt_text = optarg;
			if (!*opt_text)
				usage();
			break;
		default:
			usage();
		}
	}
	if (opt_server == !!host)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	return opt_server ? responder() : initiator(host);
}
