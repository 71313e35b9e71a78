// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Classic pcap (microsecond, little-endian) with Ethernet II, IPv4 and TCP.
 * Every header and checksum is computed here.
 */
#include "pcapw.h"

#include <string.h>

#define PCAP_MAGIC 0xa1b2c3d4u
#define LINKTYPE_ETHERNET 1u
#define ETH_HLEN 14u
#define IP_HLEN 20u
#define TCP_HLEN 20u
#define ETHERTYPE_IPV4 0x0800u
#define IPPROTO_TCP_NUM 6u
#define TCPF_FIN 0x01u
#define TCPF_SYN 0x02u
#define TCPF_PSH 0x08u
#define TCPF_ACK 0x10u
#define MAX_FRAME (ETH_HLEN + IP_HLEN + TCP_HLEN + 65535u)

static void le32(FILE *f, uint32_t v)
{
	uint8_t b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };

	fwrite(b, 1, 4, f);
}

static void le16(FILE *f, uint16_t v)
{
	uint8_t b[2] = { v & 0xff, v >> 8 };

	fwrite(b, 1, 2, f);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (v >> 16) & 0xff;
	p[2] = (v >> 8) & 0xff;
	p[3] = v & 0xff;
}

/* Ones' complement sum over big-endian 16-bit words. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

int pcapw_open(struct pcapw *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->f = fopen(path, "wb");
	if (!w->f)
		return -1;
	le32(w->f, PCAP_MAGIC);
	le16(w->f, 2);
	le16(w->f, 4);
	le32(w->f, 0);		/* thiszone */
	le32(w->f, 0);		/* sigfigs */
	le32(w->f, 65535);	/* snaplen */
	le32(w->f, LINKTYPE_ETHERNET);
	/* A fixed start time keeps the output byte-for-byte reproducible. */
	w->usec = 1700000000ull * 1000000ull;
	return 0;
}

int pcapw_close(struct pcapw *w)
{
	int rc = fclose(w->f);

	w->f = NULL;
	return rc;
}

void pcapw_advance(struct pcapw *w, uint64_t usec)
{
	w->usec += usec;
}

static uint32_t pcapw_frame(struct pcapw *w, const uint8_t *frame, size_t len)
{
	if (w->muted) {
		w->usec += 50;
		return 0;
	}
	le32(w->f, (uint32_t)(w->usec / 1000000u));
	le32(w->f, (uint32_t)(w->usec % 1000000u));
	le32(w->f, (uint32_t)len);
	le32(w->f, (uint32_t)len);
	fwrite(frame, 1, len, w->f);
	w->usec += 50;	/* 50 us between frames unless told otherwise */
	return ++w->frames;
}

void tcpflow_init(struct tcpflow *fl, struct pcapw *w, uint32_t ip0, uint32_t ip1,
		  uint16_t port0, uint16_t port1, uint32_t isn0, uint32_t isn1)
{
	static const uint8_t mac0[6] = { 0x52, 0x54, 0x00, 0x00, 0x02, 0x01 };
	static const uint8_t mac1[6] = { 0x52, 0x54, 0x00, 0x00, 0x02, 0x02 };

	memset(fl, 0, sizeof(*fl));
	fl->w = w;
	memcpy(fl->mac[0], mac0, 6);
	memcpy(fl->mac[1], mac1, 6);
	fl->mac[0][5] = (uint8_t)ip0;
	fl->mac[1][5] = (uint8_t)ip1;
	fl->ip[0] = ip0;
	fl->ip[1] = ip1;
	fl->port[0] = port0;
	fl->port[1] = port1;
	fl->nxt[0] = isn0;
	fl->nxt[1] = isn1;
	fl->ipid[0] = 0x1000;
	fl->ipid[1] = 0x2000;
}

static uint32_t tcp_segment(struct tcpflow *fl, int dir, uint8_t flags, const uint8_t *data,
			    size_t len)
{
	static uint8_t frame[MAX_FRAME];
	uint8_t *eth = frame, *ip = frame + ETH_HLEN, *tcp = ip + IP_HLEN;
	uint8_t pseudo[12];
	uint32_t sum;
	int peer = !dir;

	if (len > 65535u - IP_HLEN - TCP_HLEN)
		len = 65535u - IP_HLEN - TCP_HLEN;
	memcpy(eth, fl->mac[peer], 6);
	memcpy(eth + 6, fl->mac[dir], 6);
	put16(eth + 12, ETHERTYPE_IPV4);

	memset(ip, 0, IP_HLEN);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(IP_HLEN + TCP_HLEN + len));
	put16(ip + 4, fl->ipid[dir]++);
	put16(ip + 6, 0x4000);	/* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_TCP_NUM;
	put32(ip + 12, fl->ip[dir]);
	put32(ip + 16, fl->ip[peer]);
	put16(ip + 10, csum_fold(csum_add(0, ip, IP_HLEN)));

	memset(tcp, 0, TCP_HLEN);
	put16(tcp, fl->port[dir]);
	put16(tcp + 2, fl->port[peer]);
	put32(tcp + 4, fl->nxt[dir]);
	put32(tcp + 8, (flags & TCPF_ACK) ? fl->nxt[peer] : 0);
	tcp[12] = (TCP_HLEN / 4) << 4;
	tcp[13] = flags;
	put16(tcp + 14, 65535);
	if (len)
		memcpy(tcp + TCP_HLEN, data, len);

	put32(pseudo, fl->ip[dir]);
	put32(pseudo + 4, fl->ip[peer]);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP_NUM;
	put16(pseudo + 10, (uint16_t)(TCP_HLEN + len));
	sum = csum_add(0, pseudo, sizeof(pseudo));
	sum = csum_add(sum, tcp, TCP_HLEN + len);
	put16(tcp + 16, csum_fold(sum));

	fl->nxt[dir] += (uint32_t)len + ((flags & (TCPF_SYN | TCPF_FIN)) ? 1u : 0u);
	return pcapw_frame(fl->w, frame, ETH_HLEN + IP_HLEN + TCP_HLEN + len);
}

void tcpflow_handshake(struct tcpflow *fl)
{
	tcp_segment(fl, 0, TCPF_SYN, NULL, 0);
	tcp_segment(fl, 1, TCPF_SYN | TCPF_ACK, NULL, 0);
	tcp_segment(fl, 0, TCPF_ACK, NULL, 0);
}

uint32_t tcpflow_send(struct tcpflow *fl, int dir, const uint8_t *data, size_t len)
{
	return tcp_segment(fl, dir, TCPF_PSH | TCPF_ACK, data, len);
}

uint32_t tcpflow_ack(struct tcpflow *fl, int dir)
{
	return tcp_segment(fl, dir, TCPF_ACK, NULL, 0);
}
