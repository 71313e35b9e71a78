// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * robust-listeners: the dying-listener path (80-robust-neg, both guests at
 * the end of the boot, tests/robust/neg-guest.sh):
 *
 *   robust-listeners churn ADDR PORT SECONDS      listeners destroyed under load
 *   robust-listeners mpaflood ADDR PORT SECONDS   raw MPA Requests against churn
 *
 * churn and mpaflood test the dying-listener path: churn creates an rdma_cm
 * listener, leaves the connection requests that arrive unanswered for a
 * while (every other round it takes them and rejects them only after the
 * listener is gone), destroys the listener and starts over; mpaflood keeps
 * 12 raw TCP connections at a time sending an MPA Request each.  Requests
 * that iw_cm drops because their listener is being destroyed must still
 * end (Reject, FIN or reset); mpaflood fails on any connection that is
 * left without an answer.
 *
 * Each prints PASS:/FAIL: lines robust.neg.listener_churn.server (churn)
 * and robust.neg.listener_churn (mpaflood), the names they had as
 * "robust-neg churn" and "robust-neg mpaflood".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "lab-verbs.h"

static int churn(const char *addr, const char *port, int seconds)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *ai;
	long long t0 = now_ms(), end;
	int rounds = 0, late = 0, fails = 0;

	if (rdma_getaddrinfo(addr, port, &hints, &ai)) {
		printf("FAIL: robust.neg.listener_churn.server [rdma_getaddrinfo: %s]\n", strerror(errno));
		return 1;
	}
	/*
	 * The window opens once librdmacm is set up (its first call finds the
	 * devices): on the debug kernel a whole 20 s window once passed
	 * without a single listener.
	 */
	end = now_ms() + seconds * 1000LL;
	while (now_ms() < end) {
		struct rdma_event_channel *ch = rdma_create_event_channel();
		struct rdma_cm_id *lid = NULL, *kids[64];
		struct rdma_cm_event *ev;
		int nkids = 0, i, tries;

		if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP)) {
			printf("FAIL: robust.neg.listener_churn.server [create_id: %s]\n", strerror(errno));
			fails++;
			break;
		}
		/* The port may still be held by the last round's children. */
		for (tries = 0; tries < 200 && rdma_bind_addr(lid, ai->ai_src_addr); tries++)
			usleep(10000);
		if (tries == 200 || rdma_listen(lid, 64)) {
			printf("FAIL: robust.neg.listener_churn.server [bind/listen: %s]\n", strerror(errno));
			fails++;
			rdma_destroy_id(lid);
			rdma_destroy_event_channel(ch);
			break;
		}
		/* Let requests queue up in iw_cm and in the event channel. */
		usleep(20000 + (rounds * 37 % 9) * 20000);
		if (rounds % 2) {
			/* Take what came, answer it after the listener is gone. */
			while (nkids < 64 && (ev = get_event(ch, 0))) {
				if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
					kids[nkids++] = ev->id;
				rdma_ack_cm_event(ev);
			}
		}
		rdma_destroy_id(lid);
		for (i = 0; i < nkids; i++) {
			rdma_reject(kids[i], NULL, 0);
			rdma_destroy_id(kids[i]);
		}
		late += nkids;
		/* Requests never taken are dropped with the channel. */
		rdma_destroy_event_channel(ch);
		rounds++;
		usleep(5000);
	}
	rdma_freeaddrinfo(ai);
	printf("churn: %d listeners destroyed, %d requests rejected after their listener (set-up %lld ms)\n",
	       rounds, late, end - seconds * 1000LL - t0);
	if (!fails && !rounds) {
		printf("FAIL: robust.neg.listener_churn.server [no listener was made in %d s]\n", seconds);
		fails++;
	}
	if (!fails)
		printf("PASS: robust.neg.listener_churn.server (%d listeners, %d late rejects)\n", rounds,
		       late);
	return fails ? 1 : 0;
}

enum { FL_FREE, FL_CONNECTING, FL_WAIT };

struct flconn {
	int fd, st;
	long long t;
};

static int mpaflood(const char *addr, const char *port, int seconds)
{
	enum { NPAR = 12 };
	/* An answer must come within the MPA timeout (3 s) + generous slack. */
	const long long answer_ms = 45000;
	static const uint8_t req[20] = { 'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q',
					 ' ', 'F', 'r', 'a', 'm', 'e', 0x40, 1, 0, 0 };
	struct flconn c[NPAR];
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(atoi(port)) };
	long long end = now_ms() + seconds * 1000LL;
	int refused = 0, rejected = 0, accepted = 0, closed = 0, silent = 0, sent = 0, i;

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		printf("FAIL: robust.neg.listener_churn [bad address %s]\n", addr);
		return 1;
	}
	for (i = 0; i < NPAR; i++)
		c[i].st = FL_FREE;
	for (;;) {
		struct pollfd pf[NPAR];
		long long now = now_ms();
		bool busy = false;

		for (i = 0; i < NPAR; i++) {
			if (c[i].st == FL_FREE && now < end) {
				c[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
				if (c[i].fd < 0)
					continue;
				if (connect(c[i].fd, (struct sockaddr *)&sin, sizeof(sin)) &&
				    errno != EINPROGRESS) {
					close(c[i].fd);
					refused++;
					continue;
				}
				c[i].st = FL_CONNECTING;
				c[i].t = now;
			}
			pf[i].fd = c[i].st == FL_FREE ? -1 : c[i].fd;
			pf[i].events = c[i].st == FL_CONNECTING ? POLLOUT : POLLIN;
			busy |= c[i].st != FL_FREE;
		}
		if (!busy && now >= end)
			break;
		poll(pf, NPAR, 20);
		now = now_ms();
		for (i = 0; i < NPAR; i++) {
			int err = 0;
			socklen_t el = sizeof(err);
			uint8_t rep[64];
			ssize_t n;

			if (c[i].st == FL_CONNECTING && pf[i].revents) {
				getsockopt(c[i].fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err || send(c[i].fd, req, sizeof(req), MSG_NOSIGNAL) != sizeof(req)) {
					refused++;
					close(c[i].fd);
					c[i].st = FL_FREE;
					continue;
				}
				sent++;
				c[i].st = FL_WAIT;
				c[i].t = now;
			} else if (c[i].st == FL_WAIT && pf[i].revents) {
				n = recv(c[i].fd, rep, sizeof(rep), MSG_DONTWAIT);
				if (n < 0 && errno == EAGAIN)
					continue;
				if (n >= 17 && !memcmp(rep, "MPA ID Rep Frame", 16))
					(rep[16] & 0x20) ? rejected++ : accepted++;
				else
					closed++;
				close(c[i].fd);
				c[i].st = FL_FREE;
			} else if (c[i].st != FL_FREE && now - c[i].t > answer_ms) {
				if (c[i].st == FL_WAIT)
					silent++;
				else
					refused++;
				close(c[i].fd);
				c[i].st = FL_FREE;
			}
		}
	}
	printf("mpaflood: %d MPA Requests sent: %d rejected, %d accepted, %d closed or reset, %d unanswered after %lld s; %d connects refused\n",
	       sent, rejected, accepted, closed, silent, answer_ms / 1000, refused);
	if (silent || accepted || !sent) {
		printf("FAIL: robust.neg.listener_churn [%d of %d MPA Requests unanswered after %lld s, %d accepted]\n",
		       silent, sent, answer_ms / 1000, accepted);
		return 1;
	}
	printf("PASS: robust.neg.listener_churn (%d MPA Requests, %d rejected, %d closed)\n", sent,
	       rejected, closed);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "churn"))
		return churn(argv[2], argv[3], atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "mpaflood"))
		return mpaflood(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: robust-listeners churn|mpaflood ADDR PORT SECONDS\n");
	return 2;
}
