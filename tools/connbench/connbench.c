// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * connbench: connection set-up time and rate, rdma_cm against plain TCP,
 * for tests/bench/stack.sh (issue 7) and tests/bench/scale.sh (issue 20).
 *
 *   connbench server PORT            rdma_cm listener on PORT, TCP listener
 *                                    on PORT+1; runs until killed
 *   connbench client ADDR PORT N     N rdma_cm connections and N TCP
 *                                    connections, alternated, one at a time
 *   connbench rate ADDR PORT N INFLIGHT
 *                                    N rdma_cm connections with up to
 *                                    INFLIGHT connecting at once, then N TCP
 *                                    connects the same way
 *   connbench hold ADDR PORT N INFLIGHT DIR
 *                                    connect one, create DIR/held.1 and wait
 *                                    for DIR/go.1; connect the others (up to
 *                                    INFLIGHT at once), create DIR/held.all
 *                                    and wait for DIR/go.all; then disconnect
 *                                    all.  On a failure: DIR/failed, exit 1.
 *                                    (kernel memory per idle QP: the caller
 *                                    measures while the files say so)
 *
 * client prints one JSON object.  Per connection it records
 *   rdma_connect_us  rdma_connect() until RDMA_CM_EVENT_ESTABLISHED
 *   rdma_total_us    rdma_create_id() until ESTABLISHED (address and route
 *                    resolution and QP creation included)
 *   tcp_connect_us   connect() of a blocking TCP socket
 * Teardown is outside every interval.
 *
 * rate prints one JSON object: per kind (rdma, tcp) the wall time of the
 * whole batch, from the first rdma_create_id() (socket()) to the last
 * connection destroyed (closed), and connections per second from it.  An
 * rdma_cm connection is create_id, resolve_addr, resolve_route, create_qp,
 * connect, ESTABLISHED, disconnect, DISCONNECTED, destroy; every step is
 * driven by the events of one event channel, so INFLIGHT connections
 * progress side by side.  A TCP connection is a non-blocking connect(),
 * writable, close().
 *
 * Times come from CLOCK_MONOTONIC in one process, so only their ratios mean
 * something on a drifting TCG guest.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
/* Listen backlogs: a rate run has up to INFLIGHT connections arriving at once. */
#define BACKLOG 1024
/* hold waits this long for each go file */
#define HOLD_WAIT_S 3600

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

static int tcp_listen(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, BACKLOG)) {
		perror("tcp listen");
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The server takes every pending TCP connection and every rdma_cm event as
 * it comes: nothing waits on one connection, so a rate run's INFLIGHT
 * connections are accepted side by side.
 */
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
	if (rdma_bind_addr(lid, (struct sockaddr *)&a) || rdma_listen(lid, BACKLOG)) {
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
			while ((c = accept(tfd, NULL, NULL)) >= 0)
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

/*
 * The active side of rdma_cm connections, driven by the events of one
 * channel: client runs batches of one, rate and hold batches of N with up
 * to INFLIGHT connections between rdma_create_id() and their last event.
 */
enum cstate { C_IDLE, C_ADDR, C_ROUTE, C_CONNECT, C_HELD, C_CLOSING, C_DONE };

struct conn {
	struct rdma_cm_id *id;
	enum cstate state;
	int has_qp;
	double t_create, t_connect, t_est;
};

struct batch {
	struct rdma_event_channel *ch;
	struct verbs_res res;
	struct sockaddr_in dst;
	struct conn *c;
	int n;		/* connections in c */
	int inflight;	/* at most this many before ESTABLISHED at once */
	int hold;	/* keep connections established (else disconnect) */
	int started;	/* c[0..started) have been started */
	int connecting; /* started, not yet ESTABLISHED or failed */
	int ok;		/* reached ESTABLISHED */
	int failed;	/* failed before ESTABLISHED */
	int open;	/* ids not yet destroyed */
};

static const char *const state_want[] = {
	[C_IDLE] = "nothing",	 [C_ADDR] = "ADDR_RESOLVED", [C_ROUTE] = "ROUTE_RESOLVED", [C_CONNECT] = "ESTABLISHED",
	[C_HELD] = "nothing",	 [C_CLOSING] = "DISCONNECTED", [C_DONE] = "nothing",
};

static void conn_destroy(struct batch *b, struct conn *c)
{
	if (c->has_qp)
		rdma_destroy_qp(c->id);
	rdma_destroy_id(c->id);
	c->has_qp = 0;
	c->state = C_DONE;
	b->open--;
}

static void conn_fail(struct batch *b, struct conn *c)
{
	b->connecting--;
	b->failed++;
	conn_destroy(b, c);
}

static void conn_start(struct batch *b, struct conn *c)
{
	b->started++;
	b->connecting++;
	c->t_create = now_us();
	if (rdma_create_id(b->ch, &c->id, c, RDMA_PS_TCP)) {
		perror("rdma_create_id");
		b->connecting--;
		b->failed++;
		c->state = C_DONE;
		return;
	}
	b->open++;
	c->state = C_ADDR;
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&b->dst, TIMEOUT_MS)) {
		perror("rdma_resolve_addr");
		conn_fail(b, c);
	}
}

static void conn_close(struct conn *c)
{
	c->state = C_CLOSING;
	if (rdma_disconnect(c->id))
		perror("rdma_disconnect");
}

/* One event of the batch's channel, or a timeout; -1 on an error of the channel. */
static int batch_event(struct batch *b)
{
	struct pollfd pfd = { .fd = b->ch->fd, .events = POLLIN };
	enum rdma_cm_event_type got;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct conn *c;
	int status, i;

	if (poll(&pfd, 1, TIMEOUT_MS) != 1) {
		/* Nothing for TIMEOUT_MS: whoever waits for an event gives up. */
		for (i = 0; i < b->started; i++) {
			c = &b->c[i];
			if (c->state == C_DONE || c->state == C_HELD)
				continue;
			fprintf(stderr, "connbench: connection %d: no %s within %d ms\n", i, state_want[c->state],
				TIMEOUT_MS);
			if (c->state == C_CLOSING)
				conn_destroy(b, c);
			else
				conn_fail(b, c);
		}
		return 0;
	}
	if (rdma_get_cm_event(b->ch, &ev)) {
		perror("rdma_get_cm_event");
		return -1;
	}
	c = ev->id->context;
	got = ev->event;
	status = ev->status;
	rdma_ack_cm_event(ev);
	if (got == RDMA_CM_EVENT_DISCONNECTED && (c->state == C_CLOSING || c->state == C_HELD)) {
		if (c->state == C_HELD) {
			fprintf(stderr, "connbench: connection %d: disconnected by the peer\n", (int)(c - b->c));
			b->ok--;
			b->failed++;
		}
		conn_destroy(b, c);
		return 0;
	}
	if ((c->state == C_ADDR && got == RDMA_CM_EVENT_ADDR_RESOLVED) ||
	    (c->state == C_ROUTE && got == RDMA_CM_EVENT_ROUTE_RESOLVED) ||
	    (c->state == C_CONNECT && got == RDMA_CM_EVENT_ESTABLISHED)) {
		switch (c->state) {
		case C_ADDR:
			c->state = C_ROUTE;
			if (rdma_resolve_route(c->id, TIMEOUT_MS)) {
				perror("rdma_resolve_route");
				conn_fail(b, c);
			}
			break;
		case C_ROUTE:
			if (make_qp(&b->res, c->id)) {
				conn_fail(b, c);
				break;
			}
			c->has_qp = 1;
			c->state = C_CONNECT;
			conn_param(&cp);
			c->t_connect = now_us();
			if (rdma_connect(c->id, &cp)) {
				fprintf(stderr, "connbench: rdma_connect: %s\n", strerror(errno));
				conn_fail(b, c);
			}
			break;
		default:
			c->t_est = now_us();
			b->connecting--;
			b->ok++;
			if (b->hold)
				c->state = C_HELD;
			else
				conn_close(c);
			break;
		}
		return 0;
	}
	fprintf(stderr, "connbench: connection %d: wanted %s, got %s (status %d)\n", (int)(c - b->c),
		state_want[c->state], rdma_event_str(got), status);
	if (c->state == C_CLOSING)
		conn_destroy(b, c);
	else if (c->state == C_HELD) {
		b->ok--;
		b->failed++;
		conn_destroy(b, c);
	} else
		conn_fail(b, c);
	return 0;
}

/*
 * Start connections until `upto` of them were started, INFLIGHT at most
 * connecting at once, and handle events until every started one is held
 * (hold) or destroyed.  -1 on an error of the event channel.
 */
static int batch_run(struct batch *b, int upto)
{
	for (;;) {
		while (b->started < upto && b->connecting < b->inflight)
			conn_start(b, &b->c[b->started]);
		if (b->started == upto && !b->connecting && (b->hold || !b->open))
			return 0;
		if (batch_event(b))
			return -1;
	}
}

/* Disconnect and destroy every held connection. */
static int batch_release(struct batch *b)
{
	int i;

	b->hold = 0;
	for (i = 0; i < b->started; i++)
		if (b->c[i].state == C_HELD)
			conn_close(&b->c[i]);
	while (b->open)
		if (batch_event(b))
			return -1;
	return 0;
}

static int batch_init(struct batch *b, const char *addr, int port, int n, int inflight, int hold)
{
	memset(b, 0, sizeof(*b));
	b->dst.sin_family = AF_INET;
	b->dst.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &b->dst.sin_addr) != 1) {
		fprintf(stderr, "connbench: bad address %s\n", addr);
		return -1;
	}
	if (n < 1 || inflight < 1) {
		fprintf(stderr, "connbench: N and INFLIGHT must be at least 1\n");
		return -1;
	}
	b->n = n;
	b->inflight = inflight;
	b->hold = hold;
	b->ch = rdma_create_event_channel();
	b->c = calloc(n, sizeof(*b->c));
	if (!b->ch || !b->c) {
		perror("connbench");
		return -1;
	}
	return 0;
}

/* Start the batch over (client: one connection per batch). */
static void batch_reset(struct batch *b)
{
	memset(b->c, 0, b->n * sizeof(*b->c));
	b->started = b->connecting = b->ok = b->failed = b->open = 0;
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

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0.0;
}

static void print_series(const char *name, double *v, int n, int last)
{
	int i;

	printf("  \"%s\": [", name);
	for (i = 0; i < n; i++)
		printf("%s%.1f", i ? ", " : "", v[i]);
	printf("],\n");
	printf("  \"%s_median\": %.1f%s\n", name, median(v, n), last ? "" : ",");
}

static int client(const char *addr, int port, int n)
{
	struct sockaddr_in tdst = { .sin_family = AF_INET, .sin_port = htons(port + 1) };
	double *rc_us, *rt_us, *t_us;
	struct batch b;
	int i, nr = 0, nt = 0, fails = 0;

	if (batch_init(&b, addr, port, 1, 1, 0))
		return 2;
	tdst.sin_addr = b.dst.sin_addr;
	rc_us = calloc(n, sizeof(double));
	rt_us = calloc(n, sizeof(double));
	t_us = calloc(n, sizeof(double));
	if (!rc_us || !rt_us || !t_us)
		return 1;
	/* A/B/A/B: one of each per round, so drift hits both alike. */
	for (i = 0; i < n; i++) {
		batch_reset(&b);
		if (batch_run(&b, 1))
			return 1;
		if (b.ok) {
			rc_us[nr] = b.c[0].t_est - b.c[0].t_connect;
			rt_us[nr] = b.c[0].t_est - b.c[0].t_create;
			nr++;
		} else {
			fails++;
		}
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

/*
 * N non-blocking TCP connects, up to INFLIGHT at once; sets *ok.  Each
 * socket closes with a reset (SO_LINGER 0), so the batch leaves no
 * TIME_WAIT sockets behind: rdma_cm picks the active side's port at random,
 * and upstream siw's bind fails with EADDRINUSE on a port that a plain
 * TIME_WAIT socket holds (swiwarp's did too, before SK_FORCE_REUSE; seen
 * with siw in the scale bench: 6 of 200 connections of the run after a TCP
 * batch).
 */
static int tcp_rate(const struct sockaddr_in *dst, int n, int inflight, int *ok)
{
	struct linger rst = { .l_onoff = 1, .l_linger = 0 };
	struct pollfd *pfd;
	int started = 0, active = 0, i, err, fd, one = 1;
	socklen_t len;

	pfd = calloc(inflight, sizeof(*pfd));
	if (!pfd)
		return -1;
	for (i = 0; i < inflight; i++)
		pfd[i].fd = -1;
	*ok = 0;
	while (started < n || active) {
		for (i = 0; i < inflight && started < n; i++) {
			if (pfd[i].fd >= 0)
				continue;
			started++;
			fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
			if (fd < 0) {
				perror("tcp socket");
				continue;
			}
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
			if (connect(fd, (const struct sockaddr *)dst, sizeof(*dst)) && errno != EINPROGRESS) {
				perror("tcp connect");
				close(fd);
				continue;
			}
			pfd[i] = (struct pollfd){ .fd = fd, .events = POLLOUT };
			active++;
		}
		if (!active)
			continue;
		if (poll(pfd, inflight, TIMEOUT_MS) <= 0) {
			fprintf(stderr, "connbench: %d TCP connects not done within %d ms\n", active, TIMEOUT_MS);
			for (i = 0; i < inflight; i++)
				if (pfd[i].fd >= 0) {
					close(pfd[i].fd);
					pfd[i].fd = -1;
				}
			active = 0;
			continue;
		}
		for (i = 0; i < inflight; i++) {
			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			err = 0;
			len = sizeof(err);
			getsockopt(pfd[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
			if (err)
				fprintf(stderr, "connbench: tcp connect: %s\n", strerror(err));
			else
				(*ok)++;
			close(pfd[i].fd);
			pfd[i].fd = -1;
			active--;
		}
	}
	free(pfd);
	return 0;
}

static int rate(const char *addr, int port, int n, int inflight)
{
	struct sockaddr_in tdst;
	double r0, r1, t0, t1, *us;
	struct batch b;
	int i, nus = 0, tok;

	if (batch_init(&b, addr, port, n, inflight, 0))
		return 2;
	tdst = b.dst;
	tdst.sin_port = htons(port + 1);
	r0 = now_us();
	if (batch_run(&b, n))
		return 1;
	r1 = now_us();
	t0 = now_us();
	if (tcp_rate(&tdst, n, inflight, &tok))
		return 1;
	t1 = now_us();
	us = calloc(n, sizeof(double));
	if (!us)
		return 1;
	for (i = 0; i < n; i++)
		if (b.c[i].t_est > 0)
			us[nus++] = b.c[i].t_est - b.c[i].t_connect;
	printf("{\n  \"mode\": \"rate\",\n  \"n\": %d,\n  \"inflight\": %d,\n", n, inflight);
	printf("  \"rdma_ok\": %d,\n  \"rdma_failures\": %d,\n  \"rdma_secs\": %.6f,\n", b.ok, b.failed,
	       (r1 - r0) / 1e6);
	printf("  \"rdma_per_sec\": %.2f,\n", b.ok / ((r1 - r0) / 1e6));
	printf("  \"rdma_connect_us_median\": %.1f,\n", median(us, nus));
	printf("  \"tcp_ok\": %d,\n  \"tcp_failures\": %d,\n  \"tcp_secs\": %.6f,\n", tok, n - tok, (t1 - t0) / 1e6);
	printf("  \"tcp_per_sec\": %.2f\n}\n", tok / ((t1 - t0) / 1e6));
	return b.failed || tok < n ? 1 : 0;
}

/* Create DIR/NAME. */
static void touch(const char *dir, const char *name)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		perror(p);
	else
		close(fd);
}

/* Wait until DIR/NAME exists; -1 after HOLD_WAIT_S. */
static int wait_file(const char *dir, const char *name)
{
	char p[4096];
	int i;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	for (i = 0; i < HOLD_WAIT_S * 10; i++) {
		if (!access(p, F_OK))
			return 0;
		usleep(100000);
	}
	fprintf(stderr, "connbench: no %s within %d s\n", p, HOLD_WAIT_S);
	return -1;
}

static int hold(const char *addr, int port, int n, int inflight, const char *dir)
{
	struct batch b;
	double t0, t1;

	if (batch_init(&b, addr, port, n, inflight, 1))
		return 2;
	/* The first connection brings the one-time costs (PD, CQ, ...). */
	if (batch_run(&b, 1) || b.failed)
		goto fail;
	touch(dir, "held.1");
	if (wait_file(dir, "go.1"))
		goto fail;
	t0 = now_us();
	if (batch_run(&b, n) || b.failed)
		goto fail;
	t1 = now_us();
	touch(dir, "held.all");
	if (wait_file(dir, "go.all"))
		goto fail;
	if (batch_release(&b))
		goto fail;
	printf("{\n  \"mode\": \"hold\",\n  \"n\": %d,\n  \"inflight\": %d,\n  \"held\": %d,\n", n, inflight, b.ok);
	printf("  \"failures\": %d,\n  \"connect_secs\": %.6f\n}\n", b.failed, (t1 - t0) / 1e6);
	return b.failed ? 1 : 0;
fail:
	fprintf(stderr, "connbench: hold: %d of %d connections held, %d failed\n", b.ok, n, b.failed);
	touch(dir, "failed");
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 6 && !strcmp(argv[1], "rate"))
		return rate(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc == 7 && !strcmp(argv[1], "hold"))
		return hold(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), argv[6]);
	fprintf(stderr, "usage: connbench server PORT | connbench client ADDR PORT N |\n"
			"       connbench rate ADDR PORT N INFLIGHT | connbench hold ADDR PORT N INFLIGHT DIR\n");
	return 2;
}
