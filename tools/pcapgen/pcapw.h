/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcapw: a tiny writer for classic pcap files carrying Ethernet/IPv4/TCP,
 * with correct IPv4 and TCP checksums and per-direction sequence numbers.
 */
#ifndef PCAPGEN_PCAPW_H
#define PCAPGEN_PCAPW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pcapw {
	FILE *f;
	uint32_t frames;     /* frames written so far (frame numbers are 1-based) */
	uint64_t usec;       /* timestamp of the next frame, microseconds */
	int muted;           /* frames are built but not written (capture not running) */
};

/* One TCP connection: side 0 is the active opener (MPA initiator). */
struct tcpflow {
	struct pcapw *w;
	uint8_t mac[2][6];
	uint32_t ip[2];      /* host byte order */
	uint16_t port[2];
	uint32_t nxt[2];     /* next sequence number each side sends */
	uint16_t ipid[2];
};

int pcapw_open(struct pcapw *w, const char *path);
int pcapw_close(struct pcapw *w);

void tcpflow_init(struct tcpflow *fl, struct pcapw *w, uint32_t ip0, uint32_t ip1,
		  uint16_t port0, uint16_t port1, uint32_t isn0, uint32_t isn1);
/* SYN, SYN/ACK, ACK. Consumes one sequence number on each side. */
void tcpflow_handshake(struct tcpflow *fl);
/* One data segment from side `dir`; returns its frame number. */
uint32_t tcpflow_send(struct tcpflow *fl, int dir, const uint8_t *data, size_t len);
/* A pure ACK from side `dir`. */
uint32_t tcpflow_ack(struct tcpflow *fl, int dir);
/* Advance the clock before the next frame. */
void pcapw_advance(struct pcapw *w, uint64_t usec);

#endif
