/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * verify-cm: the rdma_cm connection set-up and teardown data-verify.c,
 * imm-verify.c and atomic-verify.c share (one RC QP, one connection, server or client), with
 * the die() and now() both use.  Every failure ends the program with exit
 * status 2 through die(), as the checkers' own fatal errors do.
 *
 * Server: vcm_listen_one(), create the QP on cm.id (vcm_create_qp()), post
 * receives, vcm_accept(), ... vcm_close().
 * Client: vcm_resolve(), vcm_create_qp(), post receives, vcm_connect(),
 * ... vcm_close().
 */
#ifndef SWIWARP_VERIFY_CM_H
#define SWIWARP_VERIFY_CM_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

struct vcm {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;	/* the connection's */
	struct rdma_cm_id *lid;	/* server: the listener */
};

/* "PROGRAM: message" on stderr, exit status 2. */
void die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/* CLOCK_MONOTONIC in seconds. */
double now(void);

/*
 * Busy-poll one completion of cq into *wc (polling, not events: the
 * programs time what they measure): 1, or 0 when none came within
 * timeout_s seconds.  A poll error is fatal.
 */
int vcm_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_s);

/*
 * One check's verdict on stdout, "ok MESSAGE" or "BAD MESSAGE" (the lab
 * scripts count both); a BAD adds one to *failures.
 */
void vcm_result(int *failures, int ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The options every checker takes: -s ADDR (be the server) or -c ADDR (be
 * the client), -p PORT.  Start with role -1 and port the checker's
 * default; after getopt, role -1 or a NULL addr means a usage error.
 */
struct vcm_args {
	int role;		/* 1 server, 0 client, -1 not given / bad */
	const char *addr;
	const char *port;
};

/*
 * Takes getopt's opt and optarg; 1 if it was one of the common options.
 * A checker's own options go through its own switch, whose default case
 * sets args->role = -1 (usage error).
 */
int vcm_common_opt(struct vcm_args *args, int opt, const char *arg);

/* Listen on addr:port and take one connection request into cm->id. */
void vcm_listen_one(struct vcm *cm, const char *addr, const char *port);

/*
 * The two halves of vcm_listen_one(), for a server that listens on
 * several ports before its clients connect to them one after the other.
 */
void vcm_listen(struct vcm *cm, const char *addr, const char *port);
void vcm_take_request(struct vcm *cm);

/* Resolve the address and route of the server addr:port into cm->id. */
void vcm_resolve(struct vcm *cm, const char *addr, const char *port);

/*
 * -X of imm-verify and atomic-verify: QPs are made with
 * rdma_create_qp_ex() and IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, and
 * vcm_post_send() posts through the ibv_wr_* API of their ibv_qp_ex.
 */
extern int vcm_wr_api;

/*
 * rdma_create_qp(cm->id, pd, qa), or with vcm_wr_api its _ex form asking
 * for every send operation swiwarp offers; the granted capabilities go
 * back into qa->cap either way.
 */
void vcm_rdma_create_qp(struct vcm *cm, struct ibv_pd *pd,
			struct ibv_qp_init_attr *qa);

/*
 * ibv_post_send(), or with vcm_wr_api the same chain as one batch between
 * ibv_wr_start() and ibv_wr_complete() (inline data through the inline
 * setters); a failed batch posts nothing, so *bad is then wr itself.
 */
int vcm_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad);

/* An RC QP on cm->id with the given queues and limits. */
void vcm_create_qp(struct vcm *cm, struct ibv_pd *pd, struct ibv_cq *scq,
		   struct ibv_cq *rcq, uint32_t send_wr, uint32_t recv_wr,
		   uint32_t sge);

/*
 * Server: accept with private data priv (len bytes) and rd Reads
 * outstanding each way (responder resources and initiator depth); waits
 * until the connection is established.
 */
void vcm_accept(struct vcm *cm, const void *priv, uint8_t len, uint8_t rd);

/*
 * Client: connect with rd Reads outstanding each way, wait until it is
 * established and copy the server's private data into priv (len bytes;
 * fewer is fatal).
 */
void vcm_connect(struct vcm *cm, void *priv, size_t len, uint8_t rd);

/*
 * The client disconnects, the server waits for it; both then destroy the
 * QP and the ids.
 */
void vcm_close(struct vcm *cm);

#endif
