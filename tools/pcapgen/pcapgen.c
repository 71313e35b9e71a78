// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcapgen: writes synthetic iWARP captures (MPA/DDP/RDMAP over TCP over
 * IPv4 over Ethernet) for the dissector tests, built on the shared wire
 * core (include/iwarp/).
 *
 *   pcapgen OUTDIR
 *
 * writes OUTDIR/<scenario>.pcap and OUTDIR/<scenario>.meta for every
 * scenario below.  A .meta file has "key value" lines that record what the
 * generator did (frame numbers of interesting segments, counts); the tests
 * compare the dissector's independent decoding against them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <iwarp/iwarp.h>

#include "pcapw.h"

#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((b) << 16) | ((c) << 8) | (d))
#define MAX_PENDING (1u << 20)
#define MAX_ULPDU 65535u

static const char *outdir;

/*
 * Fuzz mode (PCAPGEN_FUZZ_SEED set): every TCP payload byte is replaced by a
 * random one with probability 1/PCAPGEN_FUZZ_ONE_IN (default 64), after CRCs
 * and markers were computed, so the dissector sees broken lengths, headers,
 * markers and CRCs on otherwise intact TCP streams.  Deterministic per seed.
 */
static uint64_t fuzz_state;
static unsigned int fuzz_one_in = 64;

static uint64_t fuzz_next(void)
{
	fuzz_state ^= fuzz_state << 13;
	fuzz_state ^= fuzz_state >> 7;
	fuzz_state ^= fuzz_state << 17;
	return fuzz_state;
}

static uint32_t seg_send(struct tcpflow *fl, int dir, const uint8_t *data, size_t len)
{
	static uint8_t buf[65536];
	size_t i;

	if (!fuzz_state || len > sizeof(buf))
		return tcpflow_send(fl, dir, data, len);
	memcpy(buf, data, len);
	for (i = 0; i < len; i++)
		if (fuzz_next() % fuzz_one_in == 0)
			buf[i] = (uint8_t)fuzz_next();
	return tcpflow_send(fl, dir, buf, len);
}

struct side {
	int markers;		/* this side inserts markers */
	uint32_t marker_base;	/* TCP seq of its first FPDU */
	int fpdu_started;
	uint8_t pend[MAX_PENDING];
	size_t plen;
	uint32_t msn[IWARP_DDP_QN_ATOMIC_RESPONSE + 1];
	uint32_t fpdus;		/* FPDUs framed */
	uint32_t markers_sent;
	uint32_t markers_lead;	/* markers right before an FPDU's length field */
	uint32_t markers_in_hdr;	/* markers inside the length field + DDP header */
};

struct conn {
	struct tcpflow fl;
	struct side s[2];
	int crc;
	FILE *meta;
};

struct capture {
	struct pcapw w;
	FILE *meta;
	char name[64];
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "pcapgen: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void cap_open(struct capture *c, const char *name)
{
	char path[4096];

	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s.pcap", outdir, name);
	if (pcapw_open(&c->w, path))
		die("%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s.meta", outdir, name);
	c->meta = fopen(path, "w");
	if (!c->meta)
		die("%s: %s", path, strerror(errno));
}

static void cap_close(struct capture *c)
{
	fprintf(c->meta, "frames %u\n", c->w.frames);
	fclose(c->meta);
	pcapw_close(&c->w);
}

static void meta(struct conn *c, const char *key, unsigned long long v)
{
	if (c->fl.w->muted)
		return;
	fprintf(c->meta, "%s %llu\n", key, v);
}

static void conn_init(struct conn *c, struct capture *cap, int host, uint16_t port,
		      uint32_t isn0, uint32_t isn1, int tcp_handshake)
{
	memset(c, 0, sizeof(*c));
	c->meta = cap->meta;
	tcpflow_init(&c->fl, &cap->w, IP(192, 0, 2, host), IP(192, 0, 2, host + 1),
		     (uint16_t)(40000 + host), port, isn0, isn1);
	if (tcp_handshake)
		tcpflow_handshake(&c->fl);
}

/* ---- MPA ----------------------------------------------------------------- */

struct hs {
	int rev;
	int crc_req, crc_rep;
	int m_req, m_rep;
	int enhanced, p2p;
	uint8_t rtr_offer, rtr_pick;
	uint16_t ird, ord;
	int reject;
};

/* Request from side 0, Reply from side 1; returns the Reply's frame. */
static uint32_t mpa_handshake(struct conn *c, const struct hs *h)
{
	struct iwarp_mpa_rr rr;
	uint8_t buf[600];
	static const uint8_t ulp_pd[] = "swiwarp-pcapgen";
	int n;
	uint32_t f;

	memset(&rr, 0, sizeof(rr));
	rr.kind = IWARP_MPA_REQUEST;
	rr.rev = (uint8_t)h->rev;
	rr.markers = h->m_req;
	rr.crc = h->crc_req;
	rr.enhanced = h->enhanced;
	rr.p2p = h->p2p;
	rr.rtr = h->rtr_offer;
	rr.ird = h->ird;
	rr.ord = h->ord;
	rr.ulp_pdata = ulp_pd;
	rr.ulp_pdata_len = sizeof(ulp_pd) - 1;
	n = iwarp_mpa_rr_encode(&rr, buf, sizeof(buf));
	if (n < 0)
		die("request encode: %s", iwarp_strerror(n));
	f = seg_send(&c->fl, 0, buf, (size_t)n);
	meta(c, "mpa_req_frame", f);

	rr.kind = IWARP_MPA_REPLY;
	rr.markers = h->m_rep;
	rr.crc = h->crc_rep || h->crc_req;
	rr.reject = h->reject;
	rr.rtr = h->rtr_pick;
	rr.ulp_pdata_len = 0;
	n = iwarp_mpa_rr_encode(&rr, buf, sizeof(buf));
	if (n < 0)
		die("reply encode: %s", iwarp_strerror(n));
	f = seg_send(&c->fl, 1, buf, (size_t)n);
	meta(c, "mpa_rep_frame", f);

	c->crc = h->crc_req || h->crc_rep;
	/* M in a frame asks the *peer* to send markers. */
	c->s[1].markers = h->m_req;
	c->s[0].markers = h->m_rep;
	c->s[0].marker_base = c->fl.nxt[0];
	c->s[1].marker_base = c->fl.nxt[1];
	return f;
}

/* Frame one ULPDU into the pending stream of a side. */
static void fpdu_queue(struct conn *c, int dir, const uint8_t *ulpdu, size_t len)
{
	struct side *s = &c->s[dir];
	static uint8_t plain[MAX_ULPDU + 16];
	uint32_t start = c->fl.nxt[dir] + (uint32_t)s->plen;
	int n;

	n = iwarp_fpdu_encode(plain, sizeof(plain), ulpdu, len, c->crc);
	if (n < 0)
		die("fpdu encode: %s", iwarp_strerror(n));
	if (s->plen + (size_t)n + 4 * (n / 508 + 2) > MAX_PENDING)
		die("pending stream overflow");
	if (s->markers) {
		uint32_t offs[256], k;
		uint32_t nm = iwarp_marker_offsets(s->marker_base, start, (uint32_t)n, offs, 256);
		uint32_t hdr = IWARP_MPA_ULPDU_LEN_FIELD +
			       iwarp_ddp_hdr_len((ulpdu[0] & IWARP_DDP_FLAG_TAGGED) != 0);

		for (k = 0; k < nm && k < 256; k++) {
			uint32_t pos = offs[k] - IWARP_MPA_MARKER_LEN * k; /* unmarked offset */

			if (pos == 0)
				s->markers_lead++;
			else if (pos < hdr)
				s->markers_in_hdr++;
		}

		n = iwarp_markers_insert(s->marker_base, start, plain, (size_t)n, c->crc,
					 s->pend + s->plen, MAX_PENDING - s->plen);
		if (n < 0)
			die("marker insert: %s", iwarp_strerror(n));
		s->markers_sent += nm;
	} else {
		memcpy(s->pend + s->plen, plain, (size_t)n);
	}
	s->plen += (size_t)n;
	s->fpdus++;
}

/* Send everything pending from a side in segments of at most `seg' bytes. */
static uint32_t flush(struct conn *c, int dir, size_t seg)
{
	struct side *s = &c->s[dir];
	size_t off = 0;
	uint32_t f = 0;

	while (off < s->plen) {
		size_t n = s->plen - off;

		if (n > seg)
			n = seg;
		f = seg_send(&c->fl, dir, s->pend + off, n);
		off += n;
	}
	s->plen = 0;
	return f;
}

/* ---- RDMAP ---------------------------------------------------------------- */

static void fill_payload(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(0x41 + ((i * 7 + seed) % 26));
}

/*
 * Queue an RDMAP message, split into DDP segments of at most `mulpdu'
 * payload bytes.  For tagged messages stag/to place it; untagged ones get
 * the next MSN of their queue.  Returns the number of DDP segments.
 */
static int rdmap_queue(struct conn *c, int dir, struct iwarp_rdmap_msg *m,
		       const uint8_t *payload, size_t len, size_t mulpdu)
{
	static uint8_t seg[MAX_ULPDU];
	struct side *s = &c->s[dir];
	size_t off = 0;
	int nseg = 0;
	uint32_t qn = m->ddp.qn;

	if (!m->ddp.tagged) {
		m->ddp.msn = ++s->msn[qn <= IWARP_DDP_QN_ATOMIC_RESPONSE ? qn : 0];
		m->ddp.mo = 0;
	}
	do {
		size_t n = len - off;
		int h;

		if (n > mulpdu)
			n = mulpdu;
		m->ddp.last = off + n == len;
		h = iwarp_rdmap_encode(m, seg, sizeof(seg));
		if (h < 0)
			die("rdmap encode: %s", iwarp_strerror(h));
		if ((size_t)h + n > sizeof(seg))
			die("segment too long");
		memcpy(seg + h, payload + off, n);
		fpdu_queue(c, dir, seg, (size_t)h + n);
		nseg++;
		off += n;
		if (m->ddp.tagged)
			m->ddp.to += n;
		else
			m->ddp.mo += (uint32_t)n;
		/* Opcode-specific headers go only into the first segment. */
	} while (off < len);
	return nseg;
}

static int send_msg(struct conn *c, int dir, unsigned int op, size_t len, size_t mulpdu,
		    unsigned int seed)
{
	static uint8_t buf[1 << 18];
	struct iwarp_rdmap_msg m;

	iwarp_rdmap_init(&m, op);
	if (iwarp_rdmap_op_invalidates(op))
		m.inval_stag = 0x00abcd01;
	fill_payload(buf, len, seed);
	return rdmap_queue(c, dir, &m, buf, len, mulpdu);
}

static int write_msg(struct conn *c, int dir, uint32_t stag, uint64_t to, size_t len,
		     size_t mulpdu, unsigned int op)
{
	static uint8_t buf[1 << 18];
	struct iwarp_rdmap_msg m;

	iwarp_rdmap_init(&m, op);
	m.ddp.stag = stag;
	m.ddp.to = to;
	fill_payload(buf, len, stag);
	return rdmap_queue(c, dir, &m, buf, len, mulpdu);
}

static void read_req(struct conn *c, int dir, uint32_t sink_stag, uint64_t sink_to,
		     uint32_t size, uint32_t src_stag, uint64_t src_to)
{
	struct iwarp_rdmap_msg m;

	iwarp_rdmap_init(&m, IWARP_OP_READ_REQUEST);
	m.rreq.sink_stag = sink_stag;
	m.rreq.sink_to = sink_to;
	m.rreq.size = size;
	m.rreq.src_stag = src_stag;
	m.rreq.src_to = src_to;
	rdmap_queue(c, dir, &m, NULL, 0, 1);
}

static void terminate(struct conn *c, int dir, unsigned int layer, unsigned int etype,
		      unsigned int ecode, int with_hdrs)
{
	struct iwarp_rdmap_msg m, victim;
	uint8_t vhdr[64];
	int vh;

	iwarp_rdmap_init(&m, IWARP_OP_TERMINATE);
	m.term.layer = (uint8_t)layer;
	m.term.etype = (uint8_t)etype;
	m.term.ecode = (uint8_t)ecode;
	if (with_hdrs) {
		/* The segment being terminated: a Read Request (so R applies). */
		iwarp_rdmap_init(&victim, IWARP_OP_READ_REQUEST);
		victim.ddp.msn = 7;
		victim.rreq.sink_stag = 0x1234;
		victim.rreq.sink_to = 0x1000;
		victim.rreq.size = 64;
		victim.rreq.src_stag = 0x5678;
		victim.rreq.src_to = 0x2000;
		vh = iwarp_rdmap_encode(&victim, vhdr, sizeof(vhdr));
		if (vh < 0)
			die("victim encode");
		m.term.flag_m = true;
		m.term.flag_d = true;
		m.term.flag_r = true;
		m.term.ddp_seg_len = (uint16_t)vh;
		m.term.ddp_hdr = vhdr;
		m.term.ddp_hdr_len = IWARP_DDP_UNTAGGED_HDR_LEN;
		m.term.rdmap_hdr = vhdr + IWARP_DDP_UNTAGGED_HDR_LEN;
		m.term.rdmap_hdr_len = IWARP_RDMAP_READ_REQ_LEN;
	}
	rdmap_queue(c, dir, &m, NULL, 0, 1);
}

/* ---- scenarios ------------------------------------------------------------- */

/* Send, Write, Read with a 3-segment response, Sends, Terminate. */
static void traffic_basic(struct conn *c, size_t mss)
{
	uint32_t f;

	send_msg(c, 0, IWARP_OP_SEND, 64, 1400, 1);
	flush(c, 0, mss);
	write_msg(c, 0, 0x2001, 0x10000, 100, 1400, IWARP_OP_WRITE);
	flush(c, 0, mss);
	read_req(c, 0, 0x3001, 0x20000, 3000, 0x4001, 0x50000);
	f = flush(c, 0, mss);
	meta(c, "read_req_frame", f);
	pcapw_advance(c->fl.w, 1200);
	write_msg(c, 1, 0x3001, 0x20000, 3000, 1000, IWARP_OP_READ_RESPONSE);
	f = flush(c, 1, 1100);
	meta(c, "read_resp_frame", f);
	send_msg(c, 1, IWARP_OP_SEND_INVALIDATE, 32, 1400, 2);
	send_msg(c, 1, IWARP_OP_SEND_SE, 48, 1400, 3);
	flush(c, 1, mss);
	terminate(c, 0, IWARP_TERM_LAYER_RDMAP, IWARP_TERM_RDMAP_ETYPE_OPERATION,
		  IWARP_TERM_RDMAP_OPCODE, 1);
	f = flush(c, 0, mss);
	meta(c, "terminate_frame", f);
}

static void scen_handshake(const char *name, int rev, int crc)
{
	struct capture cap;
	struct conn c;
	struct hs h;

	cap_open(&cap, name);
	conn_init(&c, &cap, 10, 7174, 1000, 5000, 1);
	memset(&h, 0, sizeof(h));
	h.rev = rev;
	h.crc_req = crc;
	h.crc_rep = crc;
	if (rev == 2) {
		h.enhanced = 1;
		h.p2p = 1;
		h.rtr_offer = IWARP_MPA_RTR_WRITE | IWARP_MPA_RTR_READ;
		h.rtr_pick = IWARP_MPA_RTR_WRITE;
		h.ird = 16;
		h.ord = 8;
	}
	mpa_handshake(&c, &h);
	if (rev == 2) {
		/* RTR: zero-length RDMA Write from the initiator. */
		struct iwarp_rdmap_msg m;

		iwarp_rdmap_init(&m, IWARP_OP_WRITE);
		rdmap_queue(&c, 0, &m, NULL, 0, 1);
		meta(&c, "rtr_frame", flush(&c, 0, 1460));
	}
	traffic_basic(&c, 1460);
	meta(&c, "fpdus", c.s[0].fpdus + c.s[1].fpdus);
	cap_close(&cap);
}

/* Every RDMAP opcode, in both directions where it makes sense. */
static void scen_opcodes(void)
{
	struct capture cap;
	struct conn c;
	struct hs h;
	struct iwarp_rdmap_msg m;
	/* the two AOpCodes RFC 7306 assigns (1 is reserved) */
	static const uint8_t aops[] = { IWARP_AOP_FETCH_ADD,
					IWARP_AOP_COMPARE_SWAP };
	unsigned int aop, k;
	int ops = 0;

	cap_open(&cap, "opcodes");
	conn_init(&c, &cap, 20, 7174, 77, 99, 1);
	memset(&h, 0, sizeof(h));
	h.rev = 1;
	h.crc_req = 1;
	mpa_handshake(&c, &h);
	write_msg(&c, 0, 0x11, 0x100, 40, 1400, IWARP_OP_WRITE);
	ops++;
	read_req(&c, 0, 0x21, 0x200, 40, 0x22, 0x300);
	ops++;
	flush(&c, 0, 1460);
	write_msg(&c, 1, 0x21, 0x200, 40, 1400, IWARP_OP_READ_RESPONSE);
	ops++;
	flush(&c, 1, 1460);
	send_msg(&c, 0, IWARP_OP_SEND, 20, 1400, 1);
	send_msg(&c, 0, IWARP_OP_SEND_INVALIDATE, 20, 1400, 2);
	send_msg(&c, 0, IWARP_OP_SEND_SE, 20, 1400, 3);
	send_msg(&c, 0, IWARP_OP_SEND_SE_INVALIDATE, 20, 1400, 4);
	ops += 4;
	iwarp_rdmap_init(&m, IWARP_OP_IMMEDIATE);
	m.immediate = 0x0102030405060708ull;
	rdmap_queue(&c, 0, &m, NULL, 0, 1);
	iwarp_rdmap_init(&m, IWARP_OP_IMMEDIATE_SE);
	m.immediate = 0x1112131415161718ull;
	rdmap_queue(&c, 0, &m, NULL, 0, 1);
	ops += 2;
	/* swiwarp's Send with Immediate: flagged Immediate Data, the Send */
	iwarp_rdmap_init(&m, IWARP_OP_IMMEDIATE);
	m.immediate = 0x2122232400000000ull | IWARP_IMM_FLAG_SEND_FOLLOWS;
	rdmap_queue(&c, 0, &m, NULL, 0, 1);
	send_msg(&c, 0, IWARP_OP_SEND, 20, 1400, 5);
	ops += 2;
	for (k = 0; k < sizeof(aops); k++) {
		aop = aops[k];
		iwarp_rdmap_init(&m, IWARP_OP_ATOMIC_REQUEST);
		m.areq.aopcode = (uint8_t)aop;
		m.areq.req_id = 100 + aop;
		m.areq.stag = 0x77;
		m.areq.to = 0x8000 + 8 * aop;
		m.areq.add_swap = 5;
		m.areq.add_swap_mask = ~0ull;
		m.areq.compare = aop == IWARP_AOP_COMPARE_SWAP ? 9 : 0;
		m.areq.compare_mask = aop == IWARP_AOP_COMPARE_SWAP ? ~0ull : 0;
		rdmap_queue(&c, 0, &m, NULL, 0, 1);
		ops++;
	}
	flush(&c, 0, 1460);
	for (k = 0; k < sizeof(aops); k++) {
		aop = aops[k];
		iwarp_rdmap_init(&m, IWARP_OP_ATOMIC_RESPONSE);
		m.aresp.req_id = 100 + aop;
		m.aresp.orig_value = 42 + aop;
		rdmap_queue(&c, 1, &m, NULL, 0, 1);
		ops++;
	}
	flush(&c, 1, 1460);
	terminate(&c, 1, IWARP_TERM_LAYER_DDP, IWARP_TERM_DDP_ETYPE_UNTAGGED,
		  IWARP_TERM_DDP_U_INVALID_QN, 0);
	ops++;
	flush(&c, 1, 1460);
	meta(&c, "segments", (unsigned long long)ops);
	meta(&c, "fpdus", c.s[0].fpdus + c.s[1].fpdus);
	cap_close(&cap);
}

/* One Terminate for every (layer, etype, ecode) the RFCs define. */
static void scen_terminate(void)
{
	struct capture cap;
	struct conn c;
	struct hs h;
	unsigned int layer, etype, ecode, n = 0;

	cap_open(&cap, "terminate");
	conn_init(&c, &cap, 30, 7174, 10, 20, 1);
	memset(&h, 0, sizeof(h));
	h.rev = 2;
	h.enhanced = 1;
	h.crc_req = 1;
	h.ird = h.ord = 4;
	mpa_handshake(&c, &h);
	for (layer = 0; layer < 16; layer++)
		for (etype = 0; etype < 16; etype++)
			for (ecode = 0; ecode < 256; ecode++) {
				if (!iwarp_term_ecode_name(layer, etype, ecode))
					continue;
				terminate(&c, n & 1, layer, etype, ecode, (n % 3) == 0);
				flush(&c, n & 1, 1460);
				n++;
			}
	meta(&c, "terminates", n);
	meta(&c, "fpdus", c.s[0].fpdus + c.s[1].fpdus);
	cap_close(&cap);
}

/* Markers on in both directions, FPDUs of many sizes, and a seq wrap. */
static void scen_markers(const char *name, uint32_t isn0, uint32_t isn1, int m0, int m1)
{
	struct capture cap;
	struct conn c;
	struct hs h;
	unsigned int i;

	cap_open(&cap, name);
	conn_init(&c, &cap, 40, 7174, isn0, isn1, 1);
	memset(&h, 0, sizeof(h));
	h.rev = 1;
	h.crc_req = 1;
	h.m_req = m1;	/* initiator asks the responder to send markers */
	h.m_rep = m0;
	mpa_handshake(&c, &h);
	for (i = 0; i < 40; i++) {
		send_msg(&c, 0, IWARP_OP_SEND, 1 + (i * 37) % 700, 1400, i);
		flush(&c, 0, 1460);
		write_msg(&c, 1, 0x900 + i, 0x1000ull * i, 1 + (i * 53) % 900, 1400,
			  IWARP_OP_WRITE);
		flush(&c, 1, 1460);
	}
	/* several FPDUs in one segment, then one FPDU across three segments */
	for (i = 0; i < 12; i++)
		send_msg(&c, 0, IWARP_OP_SEND, 30 + i, 1400, i);
	flush(&c, 0, 65000);
	write_msg(&c, 0, 0x777, 0x4000, 3000, 4000, IWARP_OP_WRITE);
	flush(&c, 0, 1100);
	/* a long message in many segments, sent as one GSO-like burst */
	write_msg(&c, 1, 0x778, 0x8000, 20000, 1400, IWARP_OP_WRITE);
	flush(&c, 1, 30000);
	meta(&c, "fpdus", c.s[0].fpdus + c.s[1].fpdus);
	meta(&c, "markers", c.s[0].markers_sent + c.s[1].markers_sent);
	meta(&c, "markers_before_header", c.s[0].markers_lead + c.s[1].markers_lead);
	meta(&c, "markers_inside_header", c.s[0].markers_in_hdr + c.s[1].markers_in_hdr);
	meta(&c, "wrap", (uint32_t)(c.fl.nxt[0]) < isn0 || (uint32_t)(c.fl.nxt[1]) < isn1);
	cap_close(&cap);
}

/* Many FPDUs per segment, FPDUs across segments, multi-segment messages. */
static void scen_segmentation(void)
{
	struct capture cap;
	struct conn c;
	struct hs h;
	unsigned int i;
	uint32_t f;

	cap_open(&cap, "segmentation");
	conn_init(&c, &cap, 50, 7174, 3333, 4444, 1);
	memset(&h, 0, sizeof(h));
	h.rev = 2;
	h.enhanced = 1;
	h.crc_req = 1;
	h.ird = h.ord = 2;
	mpa_handshake(&c, &h);
	for (i = 0; i < 20; i++)
		send_msg(&c, 0, IWARP_OP_SEND, 10 + i, 1400, i);
	f = flush(&c, 0, 65000);
	meta(&c, "many_frame", f);
	meta(&c, "many_count", 20);
	/* one 5000-byte FPDU split over 5 segments */
	send_msg(&c, 1, IWARP_OP_SEND, 5000, 6000, 5);
	f = flush(&c, 1, 1000);
	meta(&c, "split_frame", f);
	/* Send in 4 DDP segments -> one reassembled message */
	send_msg(&c, 0, IWARP_OP_SEND, 5000, 1400, 6);
	f = flush(&c, 0, 1460);
	meta(&c, "send_reasm_frame", f);
	meta(&c, "send_reasm_len", 5000);
	/* Write of 10000 bytes in 8 DDP segments, all in one 64K burst */
	write_msg(&c, 1, 0xbeef, 0x100000, 10000, 1300, IWARP_OP_WRITE);
	f = flush(&c, 1, 65000);
	meta(&c, "write_reasm_frame", f);
	meta(&c, "write_reasm_len", 10000);
	/* Read of 8000 bytes answered in 6 segments over several TCP segments */
	read_req(&c, 0, 0xcafe, 0x0, 8000, 0xf00d, 0x40);
	meta(&c, "read_req_frame", flush(&c, 0, 1460));
	write_msg(&c, 1, 0xcafe, 0x0, 8000, 1400, IWARP_OP_READ_RESPONSE);
	meta(&c, "read_resp_frame", flush(&c, 1, 1460));
	meta(&c, "fpdus", c.s[0].fpdus + c.s[1].fpdus);
	cap_close(&cap);
}

/* One FPDU with a flipped payload byte. */
static void scen_badcrc(void)
{
	struct capture cap;
	struct conn c;
	struct hs h;
	unsigned int i;
	uint32_t f;

	cap_open(&cap, "badcrc");
	conn_init(&c, &cap, 60, 7174, 100, 200, 1);
	memset(&h, 0, sizeof(h));
	h.rev = 1;
	h.crc_req = 1;
	mpa_handshake(&c, &h);
	for (i = 0; i < 10; i++) {
		send_msg(&c, i & 1, IWARP_OP_SEND, 100 + i, 1400, i);
		if (i == 5) {
			/* corrupt one payload byte after the CRC was computed */
			c.s[1].pend[40] ^= 0x20;
			f = flush(&c, 1, 1460);
			meta(&c, "badcrc_frame", f);
		} else {
			flush(&c, i & 1, 1460);
		}
	}
	meta(&c, "fpdus", c.s[0].fpdus + c.s[1].fpdus);
	cap_close(&cap);
}

/* Captures that start after the MPA handshake. */
static void scen_midstream(void)
{
	struct capture cap;
	struct conn c, d, e;
	struct hs h;
	unsigned int i;
	uint32_t sent = 0;

	cap_open(&cap, "midstream");
	/* connection 1: CRC on, no markers; capture starts inside an FPDU */
	cap.w.muted = 1;
	conn_init(&c, &cap, 70, 7174, 5555, 6666, 1);
	memset(&h, 0, sizeof(h));
	h.rev = 2;
	h.enhanced = 1;
	h.crc_req = 1;
	mpa_handshake(&c, &h);
	send_msg(&c, 0, IWARP_OP_SEND, 3000, 4000, 1);
	flush(&c, 0, 1460);		/* first 1460 bytes not captured */
	/* connection 2: CRC and markers on */
	conn_init(&d, &cap, 80, 7174, 0xfffff000u, 12, 1);
	memset(&h, 0, sizeof(h));
	h.rev = 1;
	h.crc_req = 1;
	h.m_req = 1;
	h.m_rep = 1;
	mpa_handshake(&d, &h);
	for (i = 0; i < 5; i++) {
		send_msg(&d, 0, IWARP_OP_SEND, 700, 1400, i);
		flush(&d, 0, 1460);
	}
	cap.w.muted = 0;
	/* a segment with the tail of a 3000-byte FPDU: cannot be decoded */
	c.s[0].plen = 0;
	{
		static uint8_t tail[1600];

		fill_payload(tail, sizeof(tail), 99);
		/* same length as the rest of that FPDU would have been */
		seg_send(&c.fl, 0, tail, iwarp_fpdu_len(3000 + IWARP_DDP_UNTAGGED_HDR_LEN) - 1460);
	}
	for (i = 0; i < 6; i++) {
		send_msg(&c, i & 1, IWARP_OP_SEND, 200 + 10 * i, 1400, i);
		flush(&c, i & 1, 1460);
		sent++;
	}
	write_msg(&c, 0, 0x55, 0x0, 4000, 1400, IWARP_OP_WRITE);
	flush(&c, 0, 1460);
	sent += 3;
	meta(&c, "conn1_fpdus", sent);
	/* connection 2 continues: markers wherever the stream happens to be */
	sent = 0;
	for (i = 0; i < 6; i++) {
		send_msg(&d, 0, IWARP_OP_SEND, 300 + 111 * i, 1400, i);
		flush(&d, 0, 1460);
		sent++;
	}
	meta(&d, "conn2_fpdus", sent);
	/* connection 3: no CRC (needs the port preference), port 7175 */
	cap.w.muted = 1;
	conn_init(&e, &cap, 90, 7175, 1, 2, 1);
	memset(&h, 0, sizeof(h));
	h.rev = 1;
	mpa_handshake(&e, &h);
	cap.w.muted = 0;
	sent = 0;
	for (i = 0; i < 4; i++) {
		send_msg(&e, i & 1, IWARP_OP_SEND, 100 + i, 1400, i);
		flush(&e, i & 1, 1460);
		sent++;
	}
	meta(&e, "conn3_fpdus", sent);
	meta(&e, "conn3_port", 7175);
	cap_close(&cap);
}

/*
 * Queue message `m' as two DDP segments of 1000 payload bytes each, one TCP
 * segment apiece.  The first goes where `m' says; the second at
 * `second_off' (its MO when untagged, its TO when tagged), so callers can
 * make the two overlap or leave a gap between them.  Returns the frame
 * number of the second segment.
 */
static uint32_t two_segment_msg(struct conn *c, int dir,
				struct iwarp_rdmap_msg *m, unsigned int seed,
				uint64_t second_off)
{
	static uint8_t buf[2000];
	int n;

	m->ddp.last = false;
	n = iwarp_rdmap_encode(m, buf, sizeof(buf));
	fill_payload(buf + n, 1000, seed);
	fpdu_queue(c, dir, buf, (size_t)n + 1000);
	flush(c, dir, 1460);
	if (m->ddp.tagged)
		m->ddp.to = second_off;
	else
		m->ddp.mo = (uint32_t)second_off;
	m->ddp.last = true;
	n = iwarp_rdmap_encode(m, buf, sizeof(buf));
	fpdu_queue(c, dir, buf, (size_t)n + 1000);
	return flush(c, dir, 1460);
}

/* Deliberate protocol violations for the expert checks. */
static void scen_errors(void)
{
	struct capture cap;
	struct conn c;
	struct hs h;
	struct iwarp_rdmap_msg m;
	uint8_t seg[64];
	int n;

	cap_open(&cap, "errors");
	conn_init(&c, &cap, 100, 7174, 1, 1, 1);
	memset(&h, 0, sizeof(h));
	h.rev = 1;
	h.crc_req = 1;
	mpa_handshake(&c, &h);
	send_msg(&c, 0, IWARP_OP_SEND, 10, 1400, 0);
	meta(&c, "ok_frame", flush(&c, 0, 1460));
	/* MSN gap: skip two MSNs on queue 0 */
	c.s[0].msn[0] += 2;
	send_msg(&c, 0, IWARP_OP_SEND, 10, 1400, 0);
	meta(&c, "msn_gap_frame", flush(&c, 0, 1460));
	/* Send on the Read Request queue */
	iwarp_rdmap_init(&m, IWARP_OP_SEND);
	m.ddp.qn = IWARP_DDP_QN_READ_REQUEST;
	m.ddp.msn = 1;
	n = iwarp_rdmap_encode(&m, seg, sizeof(seg));
	fpdu_queue(&c, 0, seg, (size_t)n);
	meta(&c, "bad_qn_frame", flush(&c, 0, 1460));
	/* reserved opcode 12 */
	iwarp_rdmap_init(&m, IWARP_OP_SEND);
	m.ddp.msn = 99;
	n = iwarp_rdmap_encode(&m, seg, sizeof(seg));
	seg[1] = (uint8_t)((seg[1] & ~IWARP_RDMAP_OPCODE_MASK) | 0xc);
	fpdu_queue(&c, 1, seg, (size_t)n);
	meta(&c, "bad_opcode_frame", flush(&c, 1, 1460));
	/* Read Response nobody asked for */
	write_msg(&c, 1, 0xdead, 0x0, 16, 1400, IWARP_OP_READ_RESPONSE);
	meta(&c, "unmatched_resp_frame", flush(&c, 1, 1460));
	/* overlapping MO: resend the second half of a 2-segment Send */
	iwarp_rdmap_init(&m, IWARP_OP_SEND);
	m.ddp.msn = ++c.s[1].msn[0];
	meta(&c, "mo_overlap_frame", two_segment_msg(&c, 1, &m, 4, 500));
	/* MO gap: a 2-segment Send whose second segment starts 500 bytes late */
	iwarp_rdmap_init(&m, IWARP_OP_SEND);
	m.ddp.msn = ++c.s[1].msn[0];
	meta(&c, "mo_gap_frame", two_segment_msg(&c, 1, &m, 5, 1500));
	/* tagged Write whose second segment goes back into the first one's bytes */
	iwarp_rdmap_init(&m, IWARP_OP_WRITE);
	m.ddp.stag = 0x7001;
	m.ddp.to = 0x1000;
	meta(&c, "to_overlap_frame", two_segment_msg(&c, 0, &m, 6, 0x1200));
	/* an untagged segment carrying the Write opcode (tagged-only) */
	iwarp_rdmap_init(&m, IWARP_OP_SEND);
	m.ddp.msn = ++c.s[0].msn[0];
	n = iwarp_rdmap_encode(&m, seg, sizeof(seg));
	seg[1] = (uint8_t)((seg[1] & ~IWARP_RDMAP_OPCODE_MASK) | IWARP_OP_WRITE);
	fpdu_queue(&c, 0, seg, (size_t)n);
	meta(&c, "bad_model_frame", flush(&c, 0, 1460));
	/* Read Request for 100 bytes answered with 50 (queue 1 saw MSN 1 above) */
	c.s[0].msn[IWARP_DDP_QN_READ_REQUEST] = 1;
	read_req(&c, 0, 0x8001, 0x4000, 100, 0x8002, 0x6000);
	flush(&c, 0, 1460);
	write_msg(&c, 1, 0x8001, 0x4000, 50, 1400, IWARP_OP_READ_RESPONSE);
	meta(&c, "read_size_frame", flush(&c, 1, 1460));
	/* Terminate whose M/D/R bits promise headers that are not there */
	iwarp_rdmap_init(&m, IWARP_OP_TERMINATE);
	m.ddp.msn = ++c.s[1].msn[IWARP_DDP_QN_TERMINATE];
	m.term.layer = IWARP_TERM_LAYER_RDMAP;
	m.term.etype = IWARP_TERM_RDMAP_ETYPE_OPERATION;
	m.term.ecode = IWARP_TERM_RDMAP_UNSPECIFIED;
	n = iwarp_rdmap_encode(&m, seg, sizeof(seg));
	seg[IWARP_DDP_UNTAGGED_HDR_LEN + 2] |= (IWARP_TERM_FLAG_M | IWARP_TERM_FLAG_D) >> 8;
	fpdu_queue(&c, 1, seg, (size_t)n);
	meta(&c, "term_short_frame", flush(&c, 1, 1460));
	cap_close(&cap);
}

/* A responder that rejects the connection (Reply with R). */
static void scen_reject(void)
{
	struct capture cap;
	struct conn c;
	struct hs h;

	cap_open(&cap, "reject");
	conn_init(&c, &cap, 110, 7174, 9, 9, 1);
	memset(&h, 0, sizeof(h));
	h.rev = 2;
	h.enhanced = 1;
	h.crc_req = 1;
	h.ird = h.ord = 1;
	h.reject = 1;
	mpa_handshake(&c, &h);
	cap_close(&cap);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	mkdir(outdir, 0755);
	if (getenv("PCAPGEN_FUZZ_SEED"))
		fuzz_state = strtoull(getenv("PCAPGEN_FUZZ_SEED"), NULL, 0) * 2654435761u + 1;
	if (getenv("PCAPGEN_FUZZ_ONE_IN") && atoi(getenv("PCAPGEN_FUZZ_ONE_IN")) > 0)
		fuzz_one_in = (unsigned int)atoi(getenv("PCAPGEN_FUZZ_ONE_IN"));
	scen_handshake("rev1_crc", 1, 1);
	scen_handshake("rev1_nocrc", 1, 0);
	scen_handshake("rev2_crc", 2, 1);
	scen_handshake("rev2_nocrc", 2, 0);
	scen_opcodes();
	scen_terminate();
	scen_markers("markers", 1000, 2000, 1, 1);
	scen_markers("markers_oneway", 1000, 2000, 0, 1);
	scen_markers("markers_wrap", 0xffffe000u, 0xfffffc00u, 1, 1);
	scen_segmentation();
	scen_badcrc();
	scen_midstream();
	scen_errors();
	scen_reject();
	return 0;
}
