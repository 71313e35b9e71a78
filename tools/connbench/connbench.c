// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * connbench: connection set-up time, rdma_cm against plain TCP, for
 * tests/bench/stack.sh (issue 7).
 *
 *   connbench server PORT            rdma_cm listener on PORT, TCP listener
 *                                    on PORT+1; runs until killed
 *   connbench client ADDR PORT N     N rdma_cm connections and N TCP
 *                                    connections, alternated, one at a time
 *
 * The client prints one JSON object.  Per connection it records
 *   rdma_connect_us  rdma_connect() until RDMA_CM_EVENT_ESTABLISHED
 *   rdma_total_us    rdma_create_id() until ESTABLISHED (address and route
 *                    resolution and QP creation included)
 *   tcp_connect_us   connect() of a blocking TCP socket
 * Teardown is outside every interval.  Times come from CLOCK_MONOTONIC in
 * one process, so only their ratios mean something on a drifting TCG guest.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS 5000

struct verbs_res {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int res_get(struct verbs_res *r, struct ibv_context *ctx)
{
	if (r->ctx == ctx)
		return 0;
	if (r->ctx) {
		fprintf(stderr, "connbench: more than one RDMA device in use\n");
		return -1;
	}
	r->pd = ibv_alloc_pd(ctx);
	if (!r->pd) {
		perror("ibv_alloc_pd");
		return -1;
	}
	r->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!r->cq) {
		perror("ibv_create_cq");
		return -1;
	}
	r->ctx = ctx;
	return 0;
}

static int make_qp(struct verbs_res *r, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa;

	if (res_get(r, id->verbs))
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = r->cq;
	qa.recv_cq = r->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, r->pd, &qa)) {
		perror("rdma_create_qp");
		return -1;
	}
	return 0;
}

static void conn_param(struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
}

/* Wait for the next event on ch; it must be of type want. */
static int expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type got;
	int status;

	if (poll(&pfd, 1, TIMEOUT_MS) != 1) {
		fprintf(stderr, "connbench: no %s within %d ms\n", rdma_event_str(want),
			TIMEOUT_MS);
		return -1;
	}
	if (rdma_get_cm_event(ch, &ev)) {
		perror("rdma_get_cm_event");
		return -1;
	}
	got = ev->event;
	status = ev->status;
	rdma_ack_cm_event(ev);
	if (got != want) {
		fprintf(stderr, "connbench: wanted %s, got %s (status %d)\n", rdma_event_str(want),
			rdma_event_str(got), status);
		return -1;
	}
	return 0;
}

static int tcp_listen(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64)) {
		perror("tcp listen");
		close(fd);
		return -1;
	}
	return fd;
}

static int server(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct verbs_res res = { 0 };
	struct rdma_event_channel *ch;
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *lid, *id;
	struct pollfd pfd[2];
	int tfd, c;

	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP)) {
		perror("rdma_create_id");
		return 1;
	}
	if (rdma_bind_addr(lid, (struct sockaddr *)&a) || rdma_listen(lid, 64)) {
		perror("rdma listen");
		return 1;
	}
	tfd = tcp_listen(port + 1);
	if (tfd < 0)
		return 1;
	printf("connbench: listening on rdma port %d, tcp port %d\n", port, port + 1);
	fflush(stdout);
	pfd[0] = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = tfd, .events = POLLIN };
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("poll");
			return 1;
		}
		if (pfd[1].revents & POLLIN) {
			c = accept(tfd, NULL, NULL);
			if (c >= 0)
				close(c);
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		if (rdma_get_cm_event(ch, &ev)) {
			perror("rdma_get_cm_event");
			return 1;
		}
		id = ev->id;
		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			conn_param(&cp);
			if (make_qp(&res, id) || rdma_accept(id, &cp)) {
				perror("accept");
				rdma_reject(id, NULL, 0);
				rdma_destroy_id(id);
			}
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			rdma_destroy_qp(id);
			rdma_ack_cm_event(ev);
			rdma_destroy_id(id);
			continue;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
}

static int rdma_once(struct rdma_event_channel *ch, struct verbs_res *res,
		     const struct sockaddr_in *dst, double *connect_us, double *total_us)
{
	struct rdma_conn_param cp;
	struct rdma_cm_id *id;
	double t0, t1;
	int rc = -1;

	t0 = now_us();
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		perror("rdma_create_id");
		return -1;
	}
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, TIMEOUT_MS) ||
	    expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED))
		goto out;
	if (rdma_resolve_route(id, TIMEOUT_MS) || expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED))
		goto out;
	if (make_qp(res, id))
		goto out;
	conn_param(&cp);
	t1 = now_us();
	if (rdma_connect(id, &cp)) {
		fprintf(stderr, "connbench: rdma_connect: %s\n", strerror(errno));
		goto out_qp;
	}
	if (expect(ch, RDMA_CM_EVENT_ESTABLISHED))
		goto out_qp;
	*connect_us = now_us() - t1;
	*total_us = now_us() - t0;
	rc = 0;
	rdma_disconnect(id);
	expect(ch, RDMA_CM_EVENT_DISCONNECTED);
out_qp:
	rdma_destroy_qp(id);
out:
	rdma_destroy_id(id);
	return rc;
}

static int tcp_once(const struct sockaddr_in *dst, double *us)
{
	int one = 1, fd, rc;
	double t0;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	t0 = now_us();
	rc = connect(fd, (const struct sockaddr *)dst, sizeof(*dst));
	*us = now_us() - t0;
	if (rc)
		perror("tcp connect");
	close(fd);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void print_series(const char *name, double *v, int n, int last)
{
	int i;

	printf("  \"%s\": [", name);
	for (i = 0; i < n; i++)
		printf("%s%.1f", i ? ", " : "", v[i]);
	printf("],\n");
	qsort(v, n, sizeof(*v), cmp_double);
	printf("  \"%s_median\": %.1f%s\n", name, n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0.0,
	       last ? "" : ",");
}

static int client(const char *addr, int port, int n)
{
	struct sockaddr_in rdst = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sockaddr_in tdst = { .sin_family = AF_INET, .sin_port = htons(port + 1) };
	double *rc_us, *rt_us, *t_us;
	struct verbs_res res = { 0 };
	struct rdma_event_channel *ch;
	int i, nr = 0, nt = 0, fails = 0;

	if (inet_pton(AF_INET, addr, &rdst.sin_addr) != 1) {
		fprintf(stderr, "connbench: bad address %s\n", addr);
		return 2;
	}
	tdst.sin_addr = rdst.sin_addr;
	ch = rdma_create_event_channel();
	rc_us = calloc(n, sizeof(double));
	rt_us = calloc(n, sizeof(double));
	t_us = calloc(n, sizeof(double));
	if (!ch || !rc_us || !rt_us || !t_us)
		return 1;
	/* A/B/A/B: one of each per round, so drift hits both alike. */
	for (i = 0; i < n; i++) {
		if (rdma_once(ch, &res, &rdst, &rc_us[nr], &rt_us[nr]) == 0)
			nr++;
		else
			fails++;
		if (tcp_once(&tdst, &t_us[nt]) == 0)
			nt++;
		else
			fails++;
	}
	printf("{\n  \"n\": %d,\n  \"failures\": %d,\n", n, fails);
	print_series("rdma_connect_us", rc_us, nr, 0);
	print_series("rdma_total_us", rt_us, nr, 0);
	print_series("tcp_connect_us", t_us, nt, 1);
	printf("}\n");
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: connbench server PORT | connbench client ADDR PORT N\n");
	return 2;
}
