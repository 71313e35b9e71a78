// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hostile: a misbehaving iWARP peer for robustness tests.
 *
 * Opens plain TCP connections to an iWARP (MPA) listener, e.g. `rping -s -P`
 * on a swiwarp or siw device, and plays one malformed exchange per
 * connection: broken MPA Request frames, or a valid MPA v1 handshake
 * (CRC on, no markers) followed by malformed FPDUs.  Cases are picked from a
 * fixed seed, so a run is reproducible.  For each case it records what the
 * peer did: an MPA Reply (accepted or Reject), a Terminate (layer, type and
 * code decoded), a FIN, a reset, or nothing until the timeout ("hang").
 *
 * A case is "ok" when the peer's reaction is one the protocol allows: bad
 * input must end in a Reject, a Terminate, a close or a reset, never in
 * silence, and a frame that is wrong must never be accepted.  Exit status 0
 * when every case was ok, 1 otherwise, 2 on usage or connection errors.
 *
 * All frames are built with the wire core in include/iwarp.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <iwarp/iwarp.h>

/* ---- options and randomness ---------------------------------------- */

static const char *opt_host;
static const char *opt_port = "7174";
static const char *opt_bait_port;	/* -A: atomic-verify -b, for verbs.* */
static int opt_timeout_ms = 3000;	/* waiting for a reaction */
static int opt_mpa_timeout_ms = 15000;	/* peer's own MPA timeout + slack */
static int opt_verbose;

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: small, fixed and the same everywhere */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static void rnd_fill(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- what the peer did ---------------------------------------------- */

enum reaction {
	R_NONE,		/* nothing yet */
	R_REPLY_OK,	/* MPA Reply accepting the connection */
	R_REPLY_REJECT, /* MPA Reply with the Reject flag */
	R_TERM,		/* Terminate FPDU */
	R_CLOSE,	/* FIN */
	R_RESET,	/* RST / error */
	R_HANG,		/* nothing within the timeout */
	R_GARBAGE	/* bytes we could not parse */
};

static const char *const reaction_name[] = {
	"none", "reply", "reject", "terminate", "close", "reset", "hang", "garbage"
};

struct outcome {
	bool reply;		/* any MPA Reply seen */
	bool reply_reject;
	uint8_t reply_rev;
	bool term;
	struct iwarp_term t;
	bool term_len_bad;	/* its DDP Segment Length is not the segment's */
	bool term_rreq_bad;	/* a Read Request's Terminate without its copy */
	bool reply_7306;	/* the Reply has RFC 7306's Res bit 0x02 */
	bool reply_enhanced;	/* an MPA v2 Reply with the IRD/ORD word */
	uint16_t reply_ird;	/* its IRD: what the responder serves */
	uint8_t reply_pd[32];	/* the first octets of its private data */
	uint16_t reply_pd_len;
	bool bad_answer;	/* a control got a wrong or no answer */
	bool closed, reset, hang, garbage;
	bool setup_failed;	/* the valid part before the bad one failed */
	bool read_req;		/* an RDMA Read Request arrived */
	struct iwarp_rdmap_read_req rreq;
	unsigned int fpdus;	/* FPDUs received after the Reply */
	unsigned int rresps;	/* Read Responses (their last segments) */
	unsigned int aresps;	/* Atomic Responses */
	struct iwarp_rdmap_atomic_resp aresp[16]; /* the first 16 of them */
	long long ms;		/* time until the connection ended */
	char note[160];
};

/* One DDP Segment we sent: its length and its DDP header. */
struct sent_seg {
	uint16_t len;		/* MPA ULPDU Length: DDP header + payload */
	uint8_t hdr_len;	/* 14 tagged, 18 untagged */
	uint8_t hdr[IWARP_DDP_UNTAGGED_HDR_LEN];
	bool rreq;		/* an RDMA Read Request: its header follows */
	uint8_t rreq_hdr[IWARP_RDMAP_READ_REQ_LEN];
};

#define SENT_SEGS 64

/* Stream reader: first the MPA Reply, then FPDUs (CRC on, no markers). */
struct conn {
	int fd;
	bool after_reply;	/* Reply consumed, FPDUs follow */
	uint8_t buf[256 * 1024];
	size_t len;
	struct sent_seg sent[SENT_SEGS]; /* the last SENT_SEGS we sent */
	unsigned int nsent;
};

static void note(struct outcome *o, const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(o->note);

	if (n >= sizeof(o->note) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(o->note + n, sizeof(o->note) - n, fmt, ap);
	va_end(ap);
}

/*
 * A Terminate that copies the DDP header of a segment we sent must give
 * that segment's length (RFC 5040 4.8 "DDP Segment Length"; a DDP Segment
 * is header and payload, RFC 5041), i.e. the ULPDU Length we framed it
 * with.  Several sent segments can share a header (a flood of equal
 * frames); any of them with the reported length will do.  A copy of a
 * header we never framed through tx_fpdu() is not judged here.
 *
 * If that segment was an RDMA Read Request, RFC 5040 4.8 also asks for
 * the R bit and a copy of its 28-octet RDMAP header: required when RDMAP
 * refused it (remote protection error: bad STag, bounds, rights), and
 * whenever R is set the copy must be what we sent.
 */
static void check_term_seg_len(const struct conn *c, struct outcome *o,
			       const struct iwarp_term *t)
{
	unsigned int i, n = c->nsent < SENT_SEGS ? c->nsent : SENT_SEGS;
	const struct sent_seg *rr = NULL;
	bool len_ok = false;
	int want = -1;

	if (!t->flag_m || !t->flag_d)
		return;
	for (i = 0; i < n; i++) {
		const struct sent_seg *s = &c->sent[i];

		if (s->hdr_len != t->ddp_hdr_len || memcmp(s->hdr, t->ddp_hdr, s->hdr_len))
			continue;
		if (s->rreq)
			rr = s;
		if (s->len == t->ddp_seg_len)
			len_ok = true;
		else
			want = s->len;
	}
	if (!len_ok && want >= 0) {
		o->term_len_bad = true;
		note(o, "term-seg-len %u, the segment's %d ", t->ddp_seg_len, want);
	}
	if (!rr)
		return;
	if (!t->flag_r && t->layer == IWARP_TERM_LAYER_RDMAP &&
	    t->etype == IWARP_TERM_RDMAP_ETYPE_PROTECTION) {
		o->term_rreq_bad = true;
		note(o, "no R copy of the Read Request ");
	} else if (t->flag_r && (t->rdmap_hdr_len != IWARP_RDMAP_READ_REQ_LEN ||
				 memcmp(t->rdmap_hdr, rr->rreq_hdr, IWARP_RDMAP_READ_REQ_LEN))) {
		o->term_rreq_bad = true;
		note(o, "R copy is not the Read Request ");
	} else if (t->flag_r) {
		note(o, "R copy ok ");
	}
}

/* Digest whatever complete frames are buffered. */
static void digest(struct conn *c, struct outcome *o)
{
	for (;;) {
		if (!c->after_reply) {
			struct iwarp_mpa_rr rr;
			int n = iwarp_mpa_rr_frame_len(c->buf, c->len);

			if (n < 0 || c->len < (size_t)n)
				return;
			n = iwarp_mpa_rr_parse_ex(c->buf, c->len,
						  IWARP_MPA_PARSE_IGNORE_RESERVED, &rr);
			if (n < 0) {
				o->garbage = true;
				note(o, "bad reply (%s) ", iwarp_strerror(n));
				c->len = 0;
				return;
			}
			o->reply = true;
			o->reply_reject = rr.reject;
			o->reply_rev = rr.rev;
			o->reply_7306 = rr.res_bits & IWARP_MPA_FLAG_RFC7306_REP;
			o->reply_enhanced = rr.enhanced;
			o->reply_ird = rr.ird;
			o->reply_pd_len = rr.ulp_pdata_len < sizeof(o->reply_pd) ?
					  rr.ulp_pdata_len : sizeof(o->reply_pd);
			memcpy(o->reply_pd, rr.ulp_pdata, o->reply_pd_len);
			c->after_reply = true;
			memmove(c->buf, c->buf + n, c->len - (size_t)n);
			c->len -= (size_t)n;
			continue;
		}
		{
			struct iwarp_fpdu f;
			struct iwarp_rdmap_msg m;
			int n = iwarp_fpdu_parse(c->buf, c->len, &f);
			int h;

			if (n < 0)
				return;
			o->fpdus++;
			if (!f.crc_ok)
				note(o, "rx-crc-mismatch ");
			h = iwarp_rdmap_parse(f.ulpdu, f.ulpdu_len, &m);
			if (h < 0) {
				o->garbage = true;
				note(o, "rx-fpdu(%s) ", iwarp_strerror(h));
			} else if (m.opcode == IWARP_OP_TERMINATE && !o->term) {
				o->term = true;
				o->t = m.term;
				check_term_seg_len(c, o, &m.term);
			} else if (m.opcode == IWARP_OP_READ_REQUEST && !o->read_req) {
				o->read_req = true;
				o->rreq = m.rreq;
			} else if (m.opcode == IWARP_OP_READ_RESPONSE && m.ddp.last) {
				o->rresps++;
			} else if (m.opcode == IWARP_OP_ATOMIC_RESPONSE) {
				if (o->aresps < 16)
					o->aresp[o->aresps] = m.aresp;
				o->aresps++;
			}
			memmove(c->buf, c->buf + n, c->len - (size_t)n);
			c->len -= (size_t)n;
		}
	}
}

/*
 * Read for up to ms milliseconds, or until stop() says enough, or until the
 * peer closes/resets.  Returns true when the connection ended.
 */
static bool watch(struct conn *c, struct outcome *o, int ms,
		  bool (*stop)(const struct outcome *))
{
	long long end = now_ms() + ms;

	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		long long left = end - now_ms();
		ssize_t n;

		if (stop && stop(o))
			return false;
		if (left <= 0)
			return false;
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		if (c->len == sizeof(c->buf))
			c->len = 0; /* flood: drop, we only look for frames */
		n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
		if (n == 0) {
			o->closed = true;
			return true;
		}
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			o->reset = true;
			note(o, "%s ", strerror(errno));
			return true;
		}
		c->len += (size_t)n;
		digest(c, o);
	}
}

static bool stop_on_reply(const struct outcome *o)
{
	return o->reply;
}

static bool stop_on_read_req(const struct outcome *o)
{
	return o->read_req || o->term;
}

/* ---- sending -------------------------------------------------------- */

static int tx(struct conn *c, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int connect_peer(const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int fd, one = 1, rc;

	rc = getaddrinfo(opt_host, port, &hints, &ai);
	if (rc) {
		fprintf(stderr, "hostile: %s: %s\n", opt_host, gai_strerror(rc));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		fprintf(stderr, "hostile: connect %s:%s: %s\n", opt_host, port,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Raw MPA Request header: key, flags octet, rev, PD_Length. */
static size_t mpa_raw(uint8_t *out, const char *key, uint8_t flags, uint8_t rev,
		      uint16_t pd_len)
{
	memcpy(out, key, IWARP_MPA_KEY_LEN);
	out[16] = flags;
	out[17] = rev;
	iwarp_put_be16(out + 18, pd_len);
	return IWARP_MPA_RR_HDR_LEN;
}

/*
 * A correct MPA v1 Request (CRC, no markers) and wait for the Reply; with
 * rfc7306 the Request offers RFC 7306 (Res bit 0x04, as swiwarp does).
 * With v2 it is an MPA v2 Request with the IRD/ORD word (4 each), so the
 * Reply tells the responder's IRD (o->reply_ird).
 */
static int handshake_v(struct conn *c, struct outcome *o, bool rfc7306, bool v2)
{
	struct iwarp_mpa_rr rr = { .kind = IWARP_MPA_REQUEST, .rev = IWARP_MPA_REV1,
				   .crc = true };
	uint8_t f[64];
	int n;

	if (v2) {
		rr.rev = IWARP_MPA_REV2;
		rr.enhanced = true;
		rr.ird = 4;
		rr.ord = 4;
	}
	n = iwarp_mpa_rr_encode(&rr, f, sizeof(f));

	if (n < 0)
		return -1;
	if (rfc7306)
		f[16] |= IWARP_MPA_FLAG_RFC7306_REQ;
	if (tx(c, f, (size_t)n))
		return -1;
	watch(c, o, opt_timeout_ms, stop_on_reply);
	if (!o->reply || o->reply_reject) {
		note(o, "handshake failed ");
		o->setup_failed = true;
		return -1;
	}
	if (rfc7306)
		note(o, o->reply_7306 ? "rfc7306 " : "no-rfc7306-reply ");
	if (v2 && !o->reply_enhanced) {
		note(o, "no IRD/ORD in the reply ");
		o->setup_failed = true;
		return -1;
	}
	return 0;
}

static int handshake_ex(struct conn *c, struct outcome *o, bool rfc7306)
{
	return handshake_v(c, o, rfc7306, false);
}

static int handshake(struct conn *c, struct outcome *o)
{
	return handshake_ex(c, o, false);
}

/* Frame ulpdu as an FPDU (CRC right unless bad_crc) and send it. */
static int tx_fpdu(struct conn *c, const uint8_t *ulpdu, size_t len, bool bad_crc)
{
	static uint8_t f[70000];
	int n = iwarp_fpdu_encode(f, sizeof(f), ulpdu, len, true);
	struct sent_seg *s = &c->sent[c->nsent++ % SENT_SEGS];

	if (n < 0)
		return n;
	s->len = (uint16_t)len;
	s->hdr_len = (uint8_t)(len ? iwarp_ddp_hdr_len(ulpdu[0] & IWARP_DDP_FLAG_TAGGED) : 0);
	if (s->hdr_len > len)
		s->hdr_len = 0; /* shorter than a DDP header: nothing to match */
	memcpy(s->hdr, ulpdu, s->hdr_len);
	s->rreq = s->hdr_len == IWARP_DDP_UNTAGGED_HDR_LEN &&
		  len >= IWARP_DDP_UNTAGGED_HDR_LEN + IWARP_RDMAP_READ_REQ_LEN &&
		  (ulpdu[1] & IWARP_RDMAP_OPCODE_MASK) == IWARP_OP_READ_REQUEST;
	if (s->rreq)
		memcpy(s->rreq_hdr, ulpdu + IWARP_DDP_UNTAGGED_HDR_LEN, IWARP_RDMAP_READ_REQ_LEN);
	if (bad_crc)
		f[n - 1] ^= 0x5a;
	return tx(c, f, (size_t)n);
}

/* DDP/RDMAP headers for op, then payload of plen octets. */
static int tx_msg(struct conn *c, struct iwarp_rdmap_msg *m, size_t plen, bool bad_crc)
{
	static uint8_t u[70000];
	int h = iwarp_rdmap_encode(m, u, sizeof(u));

	if (h < 0 || (size_t)h + plen > 0xffff)
		return -1;
	rnd_fill(u + h, plen);
	return tx_fpdu(c, u, (size_t)h + plen, bad_crc);
}

static void init_send(struct iwarp_rdmap_msg *m, uint32_t msn)
{
	iwarp_rdmap_init(m, IWARP_OP_SEND);
	m->ddp.msn = msn;
}

/* ---- the cases -------------------------------------------------------- */

/* What a case's peer must do. */
enum expect {
	X_ACCEPT,	/* a valid exchange: the peer must accept (control) */
	X_ANY,		/* accept or refuse, but react */
	X_REFUSE,	/* Reject, Terminate, close or reset; no hang, no accept */
	X_TIMEOUT,	/* we stall: the peer must give up (its MPA timeout) */
	X_CUT,		/* valid Request, then we stall (P2P without the RTR):
			 * the peer replies, then must give up (its timeout) */
	X_NOTHING	/* we vanish: only the kernel's cleanup matters */
};

struct hcase {
	const char *name;
	enum expect x;
	int (*run)(struct conn *c, struct outcome *o);
};

/*
 * Cases whose refusal must be a Terminate with exactly this layer, error
 * type and code (RFC 5040 §7 numbering), not just any refusal.
 */
static const struct {
	const char *name;
	uint8_t layer, etype, ecode;
} want_term[] = {
	/* RDMAP remote operation error 0x06, DDP untagged 0x05 */
	{ "fpdu.atomic_bad_aop", 0, 2, 0x06 },
	{ "fpdu.atomic_long", 1, 2, 0x05 },
	{ "fpdu.atomic_resp_unsolicited", 0, 2, 0x06 },
	/*
	 * More Read Requests, or Reads and Atomics, outstanding than the
	 * IRD: swiwarp sends DDP untagged error 0x03, "Invalid MSN - MSN
	 * range is not valid" (the DDP Error Numbers of RFC 5041 section
	 * 7.2): the request's queue-1 MSN is past the IRD slots the queue
	 * has, the code swiwarp uses for Read and Atomic alike
	 * (Documentation/kernel.md, "Atomics"; RFC 7306 puts the Atomic
	 * Request on queue 1 and registered no Terminate codes of its
	 * own).  Which code RFC 5040 asks for here is not checked: its
	 * body (and RFC 7306's) could not be read from this machine
	 * (Documentation/protocol.md section 7).  Upstream siw answers an
	 * IRQ overrun with RDMAP catastrophic instead.
	 */
	{ "rping.read_req_flood_valid", 1, 2, 0x03 },
	{ "verbs.atomic_flood", 1, 2, 0x03 },
};

/* The Terminate code case 'name' must draw; false if any refusal does. */
static bool term_wanted(const char *name, struct iwarp_term *t)
{
	for (size_t i = 0; i < sizeof(want_term) / sizeof(want_term[0]); i++) {
		if (!strcmp(want_term[i].name, name)) {
			t->layer = want_term[i].layer;
			t->etype = want_term[i].etype;
			t->ecode = want_term[i].ecode;
			return true;
		}
	}
	return false;
}

/* --- MPA start-up frames --- */

static int h_valid_v1(struct conn *c, struct outcome *o)
{
	return handshake(c, o);
}

static int h_valid_v2(struct conn *c, struct outcome *o)
{
	struct iwarp_mpa_rr rr = { .kind = IWARP_MPA_REQUEST, .rev = IWARP_MPA_REV2,
				   .crc = true, .enhanced = true, .ird = 4, .ord = 4 };
	uint8_t f[64];
	int n = iwarp_mpa_rr_encode(&rr, f, sizeof(f));

	return n < 0 ? n : tx(c, f, (size_t)n);
}

static int h_bad_key(struct conn *c, struct outcome *o)
{
	uint8_t f[20];
	char key[16];

	memcpy(key, IWARP_MPA_KEY_REQ, 16);
	key[rnd_below(16)] ^= (char)(1 + rnd_below(255));
	mpa_raw(f, key, IWARP_MPA_FLAG_C, 1, 0);
	note(o, "key ");
	return tx(c, f, sizeof(f));
}

static int h_reply_key(struct conn *c, struct outcome *o)
{
	uint8_t f[20];

	mpa_raw(f, IWARP_MPA_KEY_REP, IWARP_MPA_FLAG_C, 1, 0);
	return tx(c, f, sizeof(f));
}

static int h_bad_rev(struct conn *c, struct outcome *o)
{
	static const uint8_t revs[] = { 0, 3, 4, 0x7f, 0xff };
	uint8_t f[20], rev = revs[rnd_below(sizeof(revs))];

	note(o, "rev=%u ", rev);
	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C, rev, 0);
	return tx(c, f, sizeof(f));
}

static int h_reserved_bits(struct conn *c, struct outcome *o)
{
	uint8_t f[20], res = (uint8_t)(1 + rnd_below(IWARP_MPA_RES_MASK_V1));

	note(o, "res=0x%x ", res);
	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C | res, 1, 0);
	return tx(c, f, sizeof(f));
}

static int h_reject_in_request(struct conn *c, struct outcome *o)
{
	uint8_t f[20];

	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C | IWARP_MPA_FLAG_R, 1, 0);
	return tx(c, f, sizeof(f));
}

static int h_enhanced_in_v1(struct conn *c, struct outcome *o)
{
	uint8_t f[24];

	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C | IWARP_MPA_FLAG_E, 1, 4);
	iwarp_put_be16(f + 20, 4);
	iwarp_put_be16(f + 22, 4);
	return tx(c, f, sizeof(f));
}

static int h_markers(struct conn *c, struct outcome *o)
{
	uint8_t f[20];

	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C | IWARP_MPA_FLAG_M, 1, 0);
	return tx(c, f, sizeof(f));
}

static int h_no_crc(struct conn *c, struct outcome *o)
{
	uint8_t f[20];

	mpa_raw(f, IWARP_MPA_KEY_REQ, 0, 1, 0);
	return tx(c, f, sizeof(f));
}

/* PD_Length over 512 with all the octets really sent. */
static int h_pdlen_over_max(struct conn *c, struct outcome *o)
{
	static uint8_t f[20 + 0xffff];
	uint16_t pd = rnd_below(2) ? 513 : (uint16_t)(513 + rnd_below(0xffff - 513));

	note(o, "pd_len=%u ", pd);
	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C, 1, pd);
	rnd_fill(f + 20, pd);
	return tx(c, f, 20 + (size_t)pd);
}

/* PD_Length 0xffff, only the header sent: the peer must not wait forever. */
static int h_pdlen_huge_stall(struct conn *c, struct outcome *o)
{
	uint8_t f[20];

	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C, 1, 0xffff);
	return tx(c, f, sizeof(f));
}

/* PD_Length says more than we send, then we stall. */
static int h_pdlen_past_frame(struct conn *c, struct outcome *o)
{
	uint8_t f[20 + 512];
	uint16_t pd = (uint16_t)(16 + rnd_below(496));
	uint16_t sent = (uint16_t)rnd_below(pd);

	note(o, "pd_len=%u sent=%u ", pd, sent);
	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C, 1, pd);
	rnd_fill(f + 20, sent);
	return tx(c, f, 20 + (size_t)sent);
}

/* A truncated header, then we close. */
static int h_truncated_close(struct conn *c, struct outcome *o)
{
	uint8_t f[20];
	size_t n = 1 + rnd_below(19);

	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C, 1, 0);
	note(o, "sent=%zu ", n);
	return tx(c, f, n);
}

/* Connect and say nothing at all. */
static int h_silent(struct conn *c, struct outcome *o)
{
	return 0;
}

/* Part of a header, then silence. */
static int h_truncated_stall(struct conn *c, struct outcome *o)
{
	uint8_t f[20];
	size_t n = 1 + rnd_below(19);

	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C, 1, 0);
	note(o, "sent=%zu ", n);
	return tx(c, f, n);
}

/*
 * A valid Request one octet per segment (slow but correct).  A responder
 * may give the whole Request a deadline (swiwarp: mpa_timeout_ms from the
 * TCP accept, 3 s in the lab), so that a slow sender cannot hold an
 * endpoint for ever; the dribble must stay well inside it.  19 gaps of
 * 5 ms are about 0.1 s here, 1/30 of the lab's 3 s: enough for lab guests
 * whose clocks run up to ~10x apart (a miscalibrated TSC; seen in the lab).
 */
static int h_dribble(struct conn *c, struct outcome *o)
{
	uint8_t f[20];
	size_t i;

	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C, 1, 0);
	for (i = 0; i < sizeof(f); i++) {
		if (i)
			usleep(5000);
		if (tx(c, f + i, 1))
			return -1;
	}
	return 0;
}

/*
 * A v2 Request (enhanced: the IRD/ORD word, then private data) one octet
 * at a time, so the peer meets a segment boundary after every octet of
 * the key, the flags, PD_Length, the word and the private data.  Its
 * 36 octets take ~0.2 s, far inside any MPA timeout.
 */
static int h_dribble_v2(struct conn *c, struct outcome *o)
{
	uint8_t pd[12], f[64];
	struct iwarp_mpa_rr rr = { .kind = IWARP_MPA_REQUEST, .rev = IWARP_MPA_REV2,
				   .crc = true, .enhanced = true, .ird = 4, .ord = 4,
				   .ulp_pdata = pd, .ulp_pdata_len = sizeof(pd) };
	int i, n;

	rnd_fill(pd, sizeof(pd));
	n = iwarp_mpa_rr_encode(&rr, f, sizeof(f));
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (i)
			usleep(5000);
		if (tx(c, f + i, 1))
			return -1;
	}
	return 0;
}

static int h_pd_512(struct conn *c, struct outcome *o)
{
	uint8_t f[20 + 512];

	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C, 1, 512);
	rnd_fill(f + 20, 512);
	return tx(c, f, sizeof(f));
}

/* v2 with E but PD_Length too short for the IRD/ORD word. */
static int h_v2_short_word(struct conn *c, struct outcome *o)
{
	uint8_t f[22];
	uint16_t pd = (uint16_t)rnd_below(4);

	note(o, "pd_len=%u ", pd);
	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C | IWARP_MPA_FLAG_E, 2, pd);
	rnd_fill(f + 20, 2);
	return tx(c, f, 20 + (size_t)(pd < 2 ? pd : 2));
}

/* v2 IRD/ORD word with random nonsense (all 16 bits of both halves). */
static int h_v2_ird_ord_nonsense(struct conn *c, struct outcome *o)
{
	uint8_t f[24];
	uint16_t ird = (uint16_t)rnd(), ord = (uint16_t)rnd();

	if (rnd_below(2)) { /* peer-to-peer without any RTR kind */
		ird = (uint16_t)(IWARP_MPA_V2_IRD_P2P | (ird & 0x3fff));
		ord &= 0x3fff;
	}
	note(o, "ird=0x%04x ord=0x%04x ", ird, ord);
	mpa_raw(f, IWARP_MPA_KEY_REQ, IWARP_MPA_FLAG_C | IWARP_MPA_FLAG_E, 2, 4);
	iwarp_put_be16(f + 20, ird);
	iwarp_put_be16(f + 22, ord);
	return tx(c, f, sizeof(f));
}

/* v2 peer-to-peer asking for a Write RTR, and never sending it. */
static int h_v2_p2p_no_rtr(struct conn *c, struct outcome *o)
{
	struct iwarp_mpa_rr rr = { .kind = IWARP_MPA_REQUEST, .rev = IWARP_MPA_REV2,
				   .crc = true, .enhanced = true, .p2p = true,
				   .rtr = IWARP_MPA_RTR_WRITE, .ird = 1, .ord = 1 };
	uint8_t f[64];
	int n = iwarp_mpa_rr_encode(&rr, f, sizeof(f));

	return n < 0 ? n : tx(c, f, (size_t)n);
}

/* v2 peer-to-peer, Write RTR agreed, then a Send instead of the RTR. */
static int h_v2_p2p_wrong_rtr(struct conn *c, struct outcome *o)
{
	struct iwarp_mpa_rr rr = { .kind = IWARP_MPA_REQUEST, .rev = IWARP_MPA_REV2,
				   .crc = true, .enhanced = true, .p2p = true,
				   .rtr = IWARP_MPA_RTR_WRITE, .ird = 1, .ord = 1 };
	struct iwarp_rdmap_msg m;
	uint8_t f[64];
	int n = iwarp_mpa_rr_encode(&rr, f, sizeof(f));

	if (n < 0 || tx(c, f, (size_t)n))
		return -1;
	watch(c, o, opt_timeout_ms, stop_on_reply);
	if (!o->reply || o->reply_reject)
		return 0; /* refused: fine, judged by the outcome */
	init_send(&m, 1);
	return tx_msg(c, &m, 0, false) ? -1 : 1;
}

static int h_garbage(struct conn *c, struct outcome *o)
{
	uint8_t f[600];
	size_t n = 20 + rnd_below(580);

	rnd_fill(f, n);
	note(o, "len=%zu ", n);
	return tx(c, f, n);
}

/* --- malformed FPDUs after a good handshake --- */

/* Each returns 1 when it sent its FPDU(s), so the caller watches. */
#define HS()                                  \
	do {                                  \
		if (handshake(c, o))          \
			return -1;            \
		o->reply = false;             \
	} while (0)

static int f_bad_crc(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	init_send(&m, 1);
	return tx_msg(c, &m, 16, true) ? -1 : 1;
}

static int f_ulpdu_len_zero(struct conn *c, struct outcome *o)
{
	HS();
	return tx_fpdu(c, NULL, 0, false) ? -1 : 1;
}

/* ULPDU shorter than any DDP header. */
static int f_ulpdu_short(struct conn *c, struct outcome *o)
{
	uint8_t u[13];
	size_t n = 1 + rnd_below(13);

	HS();
	rnd_fill(u, n);
	u[0] &= 0x7f; /* untagged */
	note(o, "ulpdu=%zu ", n);
	return tx_fpdu(c, u, n, false) ? -1 : 1;
}

/* ULPDU length 65535 with data: bigger than any MULPDU. */
static int f_ulpdu_huge(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	init_send(&m, 1);
	return tx_msg(c, &m, 0xffff - IWARP_DDP_UNTAGGED_HDR_LEN, false) ? -1 : 1;
}

/* Half an FPDU, then close. */
static int f_torn_close(struct conn *c, struct outcome *o)
{
	static uint8_t u[2048], f[4096];
	struct iwarp_rdmap_msg m;
	int h, n;
	size_t cut;

	HS();
	init_send(&m, 1);
	h = iwarp_rdmap_encode(&m, u, sizeof(u));
	rnd_fill(u + h, 1000);
	n = iwarp_fpdu_encode(f, sizeof(f), u, (size_t)h + 1000, true);
	if (n < 0)
		return -1;
	cut = 1 + rnd_below((uint32_t)n - 1);
	note(o, "cut=%zu/%d ", cut, n);
	return tx(c, f, cut);
}

/* Half an FPDU, then silence. */
static int f_torn_stall(struct conn *c, struct outcome *o)
{
	int rc = f_torn_close(c, o);

	return rc ? rc : 1;
}

/* Raw garbage right after the handshake (length field random). */
static int f_garbage(struct conn *c, struct outcome *o)
{
	uint8_t g[512];
	size_t n = 8 + rnd_below(504);

	HS();
	rnd_fill(g, n);
	return tx(c, g, n) ? -1 : 1;
}

static int f_write_bad_stag(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	iwarp_rdmap_init(&m, IWARP_OP_WRITE);
	m.ddp.stag = rnd_below(2) ? 0 : (uint32_t)rnd();
	m.ddp.to = rnd();
	note(o, "stag=0x%08x to=0x%llx ", m.ddp.stag, (unsigned long long)m.ddp.to);
	return tx_msg(c, &m, 64, false) ? -1 : 1;
}

static int f_read_resp_unsolicited(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	iwarp_rdmap_init(&m, IWARP_OP_READ_RESPONSE);
	m.ddp.stag = (uint32_t)rnd();
	m.ddp.to = rnd();
	return tx_msg(c, &m, 64, false) ? -1 : 1;
}

static int f_bad_qn(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	init_send(&m, 1);
	m.ddp.qn = 5 + rnd_below(1000);
	note(o, "qn=%u ", m.ddp.qn);
	return tx_msg(c, &m, 8, false) ? -1 : 1;
}

static int f_bad_msn(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	init_send(&m, rnd_below(2) ? 0 : 2 + (uint32_t)rnd_below(0x7fffffff));
	note(o, "msn=%u ", m.ddp.msn);
	return tx_msg(c, &m, 8, false) ? -1 : 1;
}

static int f_bad_mo(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	init_send(&m, 1);
	m.ddp.mo = rnd_below(2) ? 0xffffffffu - 3 : 1u << (10 + rnd_below(20));
	note(o, "mo=0x%x ", m.ddp.mo);
	return tx_msg(c, &m, 8, false) ? -1 : 1;
}

/* Untagged Send much bigger than any receive buffer rping posts. */
static int f_send_too_long(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;
	uint32_t mo = 0;
	int i;

	HS();
	for (i = 0; i < 4; i++) {
		init_send(&m, 1);
		m.ddp.mo = mo;
		m.ddp.last = i == 3;
		if (tx_msg(c, &m, 8000, false))
			return -1;
		mo += 8000;
	}
	return 1;
}

static int f_bad_versions(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	init_send(&m, 1);
	if (rnd_below(2))
		m.ddp.dv = (uint8_t)(2 + rnd_below(2));
	else
		m.rv = (uint8_t)(2 + rnd_below(2));
	note(o, "dv=%u rv=%u ", m.ddp.dv, m.rv);
	return tx_msg(c, &m, 8, false) ? -1 : 1;
}

/* Reserved opcodes 12..15, and atomics/immediates nobody negotiated. */
static int f_bad_opcode(struct conn *c, struct outcome *o)
{
	static const uint8_t ops[] = { 0xc, 0xd, 0xe, 0xf, 0x8, 0xa, 0xb };
	struct iwarp_rdmap_msg m;
	uint8_t op = ops[rnd_below(sizeof(ops))];
	uint8_t u[128];
	int h;

	HS();
	note(o, "op=0x%x ", op);
	if (op >= 0xc) {
		init_send(&m, 1);
		h = iwarp_rdmap_encode(&m, u, sizeof(u));
		u[1] = (uint8_t)((u[1] & 0xf0) | op); /* RDMAP control octet */
		rnd_fill(u + h, 8);
		return tx_fpdu(c, u, (size_t)h + 8, false) ? -1 : 1;
	}
	iwarp_rdmap_init(&m, op);
	m.ddp.msn = 1;
	m.areq.stag = (uint32_t)rnd();
	return tx_msg(c, &m, 0, false) ? -1 : 1;
}

/* Tagged flag on an untagged opcode and the reverse. */
static int f_tag_mismatch(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	if (rnd_below(2)) {
		init_send(&m, 1);
		m.ddp.tagged = true;
		note(o, "tagged-send ");
	} else {
		iwarp_rdmap_init(&m, IWARP_OP_WRITE);
		m.ddp.tagged = false;
		m.ddp.msn = 1;
		note(o, "untagged-write ");
	}
	return tx_msg(c, &m, 16, false) ? -1 : 1;
}

static int f_read_req_huge(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	iwarp_rdmap_init(&m, IWARP_OP_READ_REQUEST);
	m.ddp.msn = 1;
	m.rreq.sink_stag = 0x1234;
	m.rreq.sink_to = 0;
	m.rreq.size = rnd_below(2) ? 0xffffffffu : 0x80000000u + (uint32_t)rnd_below(1 << 30);
	m.rreq.src_stag = rnd_below(2) ? 0 : (uint32_t)rnd();
	m.rreq.src_to = rnd();
	note(o, "size=0x%x src_stag=0x%x ", m.rreq.size, m.rreq.src_stag);
	return tx_msg(c, &m, 0, false) ? -1 : 1;
}

/* Many Read Requests, more than any IRD. */
static int f_read_req_flood(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;
	uint32_t i;

	HS();
	for (i = 1; i <= 256; i++) {
		iwarp_rdmap_init(&m, IWARP_OP_READ_REQUEST);
		m.ddp.msn = i;
		m.rreq.size = 64;
		m.rreq.src_stag = (uint32_t)rnd();
		m.rreq.sink_stag = 0x77;
		if (tx_msg(c, &m, 0, false))
			break;
	}
	return 1;
}

/*
 * A Send with a bad CRC, then 64 more FPDUs without a pause: valid Sends
 * and more bad CRCs in turn.  The peer must still end the stream at the
 * first violation (Terminate, or close) and survive what follows; a send
 * that fails because the peer has closed ends the flood early, which is
 * fine.
 */
static int f_keep_sending(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;
	uint32_t i;

	HS();
	init_send(&m, 1);
	if (tx_msg(c, &m, 16, true))
		return -1;
	for (i = 0; i < 64; i++) {
		init_send(&m, 2 + i);
		if (tx_msg(c, &m, 16 + rnd_below(64), i & 1))
			break;
	}
	note(o, "sent=%u ", i);
	return 1;
}

/* Terminates with random layer/type/code and flags (maybe inconsistent). */
static int f_garbage_term(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;
	uint8_t u[128];
	int h;

	HS();
	iwarp_rdmap_init(&m, IWARP_OP_TERMINATE);
	h = iwarp_ddp_hdr_len(false);
	m.ddp.msn = 1;
	m.term.layer = 0; /* encode something valid, then scribble */
	if (iwarp_rdmap_encode(&m, u, sizeof(u)) < 0)
		return -1;
	rnd_fill(u + h, 4);
	{
		size_t extra = rnd_below(48);

		rnd_fill(u + h + 4, extra);
		note(o, "term=%02x%02x%02x%02x+%zu ", u[h], u[h + 1], u[h + 2], u[h + 3],
		     extra);
		return tx_fpdu(c, u, (size_t)h + 4 + extra, false) ? -1 : 1;
	}
}

/* Terminate on the wrong queue, with a bogus MSN. */
static int f_term_bad_qn(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	iwarp_rdmap_init(&m, IWARP_OP_TERMINATE);
	m.ddp.qn = 0;
	m.ddp.msn = (uint32_t)rnd();
	m.term.layer = IWARP_TERM_LAYER_RDMAP;
	return tx_msg(c, &m, 0, false) ? -1 : 1;
}

/*
 * rping's client protocol: our first Send announces a buffer (addr, rkey,
 * size, 16 octets), and the rping server then reads it with an RDMA Read.
 * Its Read Request names a real sink STag and TO on the server: answer it
 * with Read Responses that break the rules.
 */
static int rping_bait_v(struct conn *c, struct outcome *o, uint32_t size, bool v2)
{
	struct iwarp_rdmap_msg m;
	uint8_t u[64];
	int h;

	if (handshake_v(c, o, false, v2))
		return -1;
	o->reply = false;
	init_send(&m, 1);
	h = iwarp_rdmap_encode(&m, u, sizeof(u));
	iwarp_put_be64(u + h, 0x10000);	/* buf */
	iwarp_put_be32(u + h + 8, 0x4242); /* rkey */
	iwarp_put_be32(u + h + 12, size);
	if (tx_fpdu(c, u, (size_t)h + 16, false))
		return -1;
	watch(c, o, opt_timeout_ms, stop_on_read_req);
	if (!o->read_req) {
		note(o, "no read request (not an rping server?) ");
		o->setup_failed = true;
		return -1;
	}
	note(o, "rreq sink=0x%x to=0x%llx size=%u ", o->rreq.sink_stag,
	     (unsigned long long)o->rreq.sink_to, o->rreq.size);
	return 0;
}

static int rping_bait(struct conn *c, struct outcome *o, uint32_t size)
{
	return rping_bait_v(c, o, size, false);
}

static int f_rresp_oob(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;
	uint32_t over = 1 + rnd_below(4096);

	if (rping_bait(c, o, 64))
		return -1;
	iwarp_rdmap_init(&m, IWARP_OP_READ_RESPONSE);
	m.ddp.stag = o->rreq.sink_stag;
	m.ddp.to = o->rreq.sink_to;
	note(o, "len=%u ", o->rreq.size + over);
	return tx_msg(c, &m, o->rreq.size + over, false) ? -1 : 1;
}

static int f_rresp_to_below(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;
	uint32_t under = 1 + rnd_below(4096);

	if (rping_bait(c, o, 64))
		return -1;
	iwarp_rdmap_init(&m, IWARP_OP_READ_RESPONSE);
	m.ddp.stag = o->rreq.sink_stag;
	m.ddp.to = o->rreq.sink_to - under;
	note(o, "to-%u ", under);
	return tx_msg(c, &m, o->rreq.size, false) ? -1 : 1;
}

static int f_rresp_wrong_stag(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	if (rping_bait(c, o, 64))
		return -1;
	iwarp_rdmap_init(&m, IWARP_OP_READ_RESPONSE);
	m.ddp.stag = o->rreq.sink_stag ^ (1u << (8 + rnd_below(24)));
	m.ddp.to = o->rreq.sink_to;
	note(o, "stag=0x%x ", m.ddp.stag);
	return tx_msg(c, &m, o->rreq.size, false) ? -1 : 1;
}

/*
 * A Write into the server's Read sink (rping registers it for remote
 * access, so the STag itself is fair game) that runs past its end.
 */
static int f_write_sink_oob(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;
	uint32_t over = 1 + rnd_below(256);

	if (rping_bait(c, o, 64))
		return -1;
	iwarp_rdmap_init(&m, IWARP_OP_WRITE);
	m.ddp.stag = o->rreq.sink_stag;
	m.ddp.to = o->rreq.sink_to;
	note(o, "len=%u ", o->rreq.size + over);
	return tx_msg(c, &m, o->rreq.size + over, false) ? -1 : 1;
}

/* A correct Read Response: the control for the cases above. */
static int f_rresp_valid(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	if (rping_bait(c, o, 64))
		return -1;
	iwarp_rdmap_init(&m, IWARP_OP_READ_RESPONSE);
	m.ddp.stag = o->rreq.sink_stag;
	m.ddp.to = o->rreq.sink_to;
	return tx_msg(c, &m, o->rreq.size, false) ? -1 : 2;
}

/*
 * swiwarp's Send with Immediate (Documentation/protocol.md): an Immediate
 * Data message (opcode op) whose octets 4-7 carry flags, with the next
 * Send MSN.
 */
static int tx_imm(struct conn *c, unsigned int op, uint32_t msn, uint32_t flags)
{
	struct iwarp_rdmap_msg m;

	iwarp_rdmap_init(&m, op);
	m.ddp.msn = msn;
	m.immediate = 0x1d5e0000ull << 32 | flags;
	return tx_msg(c, &m, 0, false);
}

#define HS7306()                              \
	do {                                  \
		if (handshake_ex(c, o, true)) \
			return -1;            \
		o->reply = false;             \
	} while (0)

/* Flagged Immediate Data and its Send from a peer that did not offer 7306. */
static int f_imm_send_no_rfc7306(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS();
	if (tx_imm(c, IWARP_OP_IMMEDIATE, 1, IWARP_IMM_FLAG_SEND_FOLLOWS))
		return -1;
	init_send(&m, 2);
	return tx_msg(c, &m, 16, false) ? -1 : 1;
}

/* Two flagged Immediate Data in a row, then the Send. */
static int f_imm_send_twice(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS7306();
	if (tx_imm(c, IWARP_OP_IMMEDIATE, 1, IWARP_IMM_FLAG_SEND_FOLLOWS) ||
	    tx_imm(c, IWARP_OP_IMMEDIATE, 2, IWARP_IMM_FLAG_SEND_FOLLOWS))
		return -1;
	init_send(&m, 3);
	return tx_msg(c, &m, 16, false) ? -1 : 1;
}

/* A flagged Immediate Data with SE (the SE belongs on the Send). */
static int f_imm_send_se(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS7306();
	if (tx_imm(c, IWARP_OP_IMMEDIATE_SE, 1, IWARP_IMM_FLAG_SEND_FOLLOWS))
		return -1;
	init_send(&m, 2);
	return tx_msg(c, &m, 16, false) ? -1 : 1;
}

/* A flagged Immediate Data followed by another message than a Send. */
static int f_imm_send_not_send(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;
	unsigned int k = rnd_below(2);

	HS7306();
	if (tx_imm(c, IWARP_OP_IMMEDIATE, 1, IWARP_IMM_FLAG_SEND_FOLLOWS))
		return -1;
	if (!k) {
		note(o, "then-immediate ");
		return tx_imm(c, IWARP_OP_IMMEDIATE, 2, 0) ? -1 : 1;
	}
	note(o, "then-send-inv ");
	iwarp_rdmap_init(&m, IWARP_OP_SEND_INVALIDATE);
	m.ddp.msn = 2;
	m.inval_stag = 0x4242;
	return tx_msg(c, &m, 16, false) ? -1 : 1;
}

/*
 * RFC 7306 negotiated, then an Atomic Request the responder must refuse
 * before it looks at the (random) STag: an AOpCode IANA does not assign
 * (1 reserved, 3-15), RDMAP operation error 0x06.
 */
static int f_atomic_bad_aop(struct conn *c, struct outcome *o)
{
	static const uint8_t aops[] = { 1, 3, 4, 7, 15 };
	struct iwarp_rdmap_msg m;
	uint8_t aop = aops[rnd_below(sizeof(aops))];

	HS7306();
	note(o, "aop=%u ", aop);
	iwarp_rdmap_init(&m, IWARP_OP_ATOMIC_REQUEST);
	m.ddp.msn = 1;
	m.areq.aopcode = aop;
	m.areq.stag = (uint32_t)rnd();
	m.areq.to = 8;
	m.areq.add_swap = 1;
	return tx_msg(c, &m, 0, false) ? -1 : 1;
}

/*
 * RFC 7306 negotiated, then a Fetch-and-Add Atomic Request with payload
 * behind its 52-octet header (DDP untagged 0x05, message too long), or
 * not Last (the same).
 */
static int f_atomic_long(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;
	unsigned int k = rnd_below(2);

	HS7306();
	iwarp_rdmap_init(&m, IWARP_OP_ATOMIC_REQUEST);
	m.ddp.msn = 1;
	m.areq.aopcode = IWARP_AOP_FETCH_ADD;
	m.areq.stag = (uint32_t)rnd();
	m.areq.add_swap = 1;
	if (k) {
		note(o, "not-last ");
		m.ddp.last = false;
		return tx_msg(c, &m, 0, false) ? -1 : 1;
	}
	note(o, "payload=8 ");
	return tx_msg(c, &m, 8, false) ? -1 : 1;
}

/*
 * RFC 7306 negotiated, then an Atomic Response although we asked for
 * nothing (RDMAP operation error 0x06).
 */
static int f_atomic_resp_unsolicited(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;

	HS7306();
	iwarp_rdmap_init(&m, IWARP_OP_ATOMIC_RESPONSE);
	m.ddp.msn = 1;
	m.aresp.req_id = (uint32_t)rnd();
	m.aresp.orig_value = rnd();
	return tx_msg(c, &m, 0, false) ? -1 : 1;
}

/*
 * The control: rping's first message (its buffer's address, rkey and
 * size) as a Send with Immediate.  A server that takes the pair as one
 * receive answers with its RDMA Read Request, as for a plain Send.
 */
static int f_imm_send_valid(struct conn *c, struct outcome *o)
{
	struct iwarp_rdmap_msg m;
	uint8_t u[64];
	int h;

	HS7306();
	if (tx_imm(c, IWARP_OP_IMMEDIATE, 1, IWARP_IMM_FLAG_SEND_FOLLOWS))
		return -1;
	init_send(&m, 2);
	h = iwarp_rdmap_encode(&m, u, sizeof(u));
	iwarp_put_be64(u + h, 0x10000);	/* buf */
	iwarp_put_be32(u + h + 8, 0x4242); /* rkey */
	iwarp_put_be32(u + h + 12, 64);
	if (tx_fpdu(c, u, (size_t)h + 16, false))
		return -1;
	watch(c, o, opt_timeout_ms, stop_on_read_req);
	if (!o->read_req) {
		note(o, "no read request after the Send with Immediate ");
		o->setup_failed = true;
		return -1;
	}
	return 2;
}

/*
 * IRD floods (issue 18): more valid Read or Atomic Requests than the IRD
 * the responder's MPA v2 Reply announced, against a target that has a
 * buffer with the right (REMOTE_READ: rping's Read sink; REMOTE_ATOMIC:
 * atomic-verify -b, reached at -A PORT), so nothing refuses them before
 * the IRD check.  What exceeds the IRD is not that we never read the
 * responses: the responder frees a slot when its TX engine takes the
 * request to answer it (swiwarp: swiwarp_tx_start_rresp()), and the
 * answers of a peer that does not read wait in TCP's buffers, thousands
 * of them.  It is requests arriving faster than they are answered: all
 * FLOOD_REQS go corked into one TCP segment (16 Atomic Requests of 76
 * octets, or Read Requests of 52, fit one MSS), so the responder's RX
 * takes them in one pass before its TX worker can have answered more
 * than a few, and one finds every slot taken.  An honest requester never
 * gets there: a request of its own is outstanding until its response
 * arrives, and it keeps at most its ORD outstanding, which MPA v2 made no
 * more than our IRD.  The controls send exactly IRD requests the same
 * way and must get every answer, right.
 */
#define FLOOD_REQS 16

static unsigned int want_rresps, want_aresps;

static bool stop_on_answers(const struct outcome *o)
{
	return o->term || (o->rresps >= want_rresps && o->aresps >= want_aresps);
}

static int tx_cork(struct conn *c, int on)
{
	return setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on));
}

/* n RDMA Read Requests (queue 1, MSN 1..n) for the rping server's sink. */
static int tx_read_reqs(struct conn *c, struct outcome *o, unsigned int n)
{
	struct iwarp_rdmap_msg m;
	unsigned int i;
	int rc = 0;

	tx_cork(c, 1);
	for (i = 1; i <= n && !rc; i++) {
		iwarp_rdmap_init(&m, IWARP_OP_READ_REQUEST);
		m.ddp.msn = i;
		m.rreq.sink_stag = 0x7700 + i; /* ours: never looked at */
		m.rreq.sink_to = 0;
		m.rreq.size = o->rreq.size < 64 ? o->rreq.size : 64;
		m.rreq.src_stag = o->rreq.sink_stag;
		m.rreq.src_to = o->rreq.sink_to;
		rc = tx_msg(c, &m, 0, false);
	}
	tx_cork(c, 0);
	return rc;
}

/* The rping server's Read sink as our source, IRD learnt from its Reply. */
static int rping_ird_bait(struct conn *c, struct outcome *o)
{
	if (rping_bait_v(c, o, 64, true))
		return -1;
	note(o, "ird=%u ", o->reply_ird);
	if (!o->reply_ird || o->reply_ird >= FLOOD_REQS) {
		note(o, "IRD out of the flood's range ");
		o->setup_failed = true;
		return -1;
	}
	return 0;
}

static int f_read_req_within_ird(struct conn *c, struct outcome *o)
{
	if (rping_ird_bait(c, o) || tx_read_reqs(c, o, o->reply_ird))
		return -1;
	want_rresps = o->reply_ird;
	want_aresps = 0;
	watch(c, o, opt_timeout_ms, stop_on_answers);
	note(o, "%u read responses ", o->rresps);
	if (o->rresps != o->reply_ird)
		o->bad_answer = true;
	return 2;
}

static int f_read_req_flood_valid(struct conn *c, struct outcome *o)
{
	if (rping_ird_bait(c, o) || tx_read_reqs(c, o, FLOOD_REQS))
		return -1;
	note(o, "sent=%u ", FLOOD_REQS);
	return 1;
}

/*
 * atomic-verify -b's target: its accept private data starts with the
 * 8-octet counter's address and its rkey (REMOTE_ATOMIC), in its host
 * byte order, which is ours (both run in the lab's x86 guests); the
 * counter is 0 on every new connection.
 */
static int atomic_bait(struct conn *c, struct outcome *o, uint64_t *addr, uint32_t *rkey)
{
	if (handshake_v(c, o, true, true))
		return -1;
	o->reply = false;
	if (!o->reply_7306 || o->reply_pd_len < 12) {
		note(o, "not atomic-verify -b (no RFC 7306 or no address) ");
		o->setup_failed = true;
		return -1;
	}
	memcpy(addr, o->reply_pd, 8);
	memcpy(rkey, o->reply_pd + 8, 4);
	note(o, "ird=%u stag=0x%x ", o->reply_ird, *rkey);
	if (!o->reply_ird || o->reply_ird >= FLOOD_REQS) {
		note(o, "IRD out of the flood's range ");
		o->setup_failed = true;
		return -1;
	}
	return 0;
}

#define FLOOD_ADD 0x10001ull	/* each Fetch-and-Add's addend */

/* n Fetch-and-Adds of FLOOD_ADD on the counter (queue 1, MSN 1..n). */
static int tx_fetch_adds(struct conn *c, uint64_t addr, uint32_t rkey, unsigned int n)
{
	struct iwarp_rdmap_msg m;
	unsigned int i;
	int rc = 0;

	tx_cork(c, 1);
	for (i = 1; i <= n && !rc; i++) {
		iwarp_rdmap_init(&m, IWARP_OP_ATOMIC_REQUEST);
		m.ddp.msn = i;
		m.areq.aopcode = IWARP_AOP_FETCH_ADD;
		m.areq.req_id = 0xa000 + i;
		m.areq.stag = rkey;
		m.areq.to = addr;
		m.areq.add_swap = FLOOD_ADD;
		rc = tx_msg(c, &m, 0, false);
	}
	tx_cork(c, 0);
	return rc;
}

/* The control: IRD Fetch-and-Adds, answered in order with 0, 1, 2.. adds. */
static int v_atomic_within_ird(struct conn *c, struct outcome *o)
{
	uint64_t addr;
	uint32_t rkey;
	unsigned int i;

	if (atomic_bait(c, o, &addr, &rkey) || tx_fetch_adds(c, addr, rkey, o->reply_ird))
		return -1;
	want_rresps = 0;
	want_aresps = o->reply_ird;
	watch(c, o, opt_timeout_ms, stop_on_answers);
	note(o, "%u atomic responses ", o->aresps);
	if (o->aresps != o->reply_ird)
		o->bad_answer = true;
	for (i = 0; i < o->aresps && i < 16; i++) {
		if (o->aresp[i].req_id == 0xa001 + i && o->aresp[i].orig_value == i * FLOOD_ADD)
			continue;
		note(o, "response %u: id 0x%x original 0x%llx, want 0x%x 0x%llx ", i,
		     o->aresp[i].req_id, (unsigned long long)o->aresp[i].orig_value,
		     0xa001 + i, (unsigned long long)(i * FLOOD_ADD));
		o->bad_answer = true;
		break;
	}
	return 2;
}

static int v_atomic_flood(struct conn *c, struct outcome *o)
{
	uint64_t addr;
	uint32_t rkey;

	if (atomic_bait(c, o, &addr, &rkey) || tx_fetch_adds(c, addr, rkey, FLOOD_REQS))
		return -1;
	note(o, "sent=%u ", FLOOD_REQS);
	return 1;
}

static const struct hcase cases[] = {
	{ "mpa.valid_v1", X_ACCEPT, h_valid_v1 },
	{ "mpa.valid_v2", X_ACCEPT, h_valid_v2 },
	{ "mpa.bad_key", X_REFUSE, h_bad_key },
	{ "mpa.reply_key", X_REFUSE, h_reply_key },
	{ "mpa.bad_rev", X_REFUSE, h_bad_rev },
	{ "mpa.reserved_bits", X_ANY, h_reserved_bits },
	{ "mpa.reject_in_request", X_ANY, h_reject_in_request },
	{ "mpa.enhanced_in_v1", X_ANY, h_enhanced_in_v1 },
	{ "mpa.markers", X_ANY, h_markers },
	{ "mpa.no_crc", X_ANY, h_no_crc },
	{ "mpa.pdlen_over_max", X_REFUSE, h_pdlen_over_max },
	{ "mpa.pdlen_huge_stall", X_REFUSE, h_pdlen_huge_stall },
	{ "mpa.pdlen_past_frame", X_TIMEOUT, h_pdlen_past_frame },
	{ "mpa.truncated_close", X_NOTHING, h_truncated_close },
	{ "mpa.truncated_stall", X_TIMEOUT, h_truncated_stall },
	{ "mpa.silent", X_TIMEOUT, h_silent },
	{ "mpa.dribble", X_ACCEPT, h_dribble },
	{ "mpa.dribble_v2", X_ACCEPT, h_dribble_v2 },
	{ "mpa.pd_512", X_ACCEPT, h_pd_512 },
	{ "mpa.v2_short_word", X_REFUSE, h_v2_short_word },
	{ "mpa.v2_ird_ord_nonsense", X_ANY, h_v2_ird_ord_nonsense },
	{ "mpa.v2_p2p_no_rtr", X_CUT, h_v2_p2p_no_rtr },
	{ "mpa.v2_p2p_wrong_rtr", X_ANY, h_v2_p2p_wrong_rtr },
	{ "mpa.garbage", X_REFUSE, h_garbage },
	{ "fpdu.bad_crc", X_REFUSE, f_bad_crc },
	{ "fpdu.ulpdu_len_zero", X_REFUSE, f_ulpdu_len_zero },
	{ "fpdu.ulpdu_short", X_REFUSE, f_ulpdu_short },
	{ "fpdu.ulpdu_huge", X_REFUSE, f_ulpdu_huge },
	{ "fpdu.torn_close", X_NOTHING, f_torn_close },
	{ "fpdu.torn_stall", X_NOTHING, f_torn_stall },
	{ "fpdu.garbage", X_REFUSE, f_garbage },
	{ "fpdu.write_bad_stag", X_REFUSE, f_write_bad_stag },
	{ "fpdu.read_resp_unsolicited", X_REFUSE, f_read_resp_unsolicited },
	{ "fpdu.bad_qn", X_REFUSE, f_bad_qn },
	{ "fpdu.bad_msn", X_REFUSE, f_bad_msn },
	{ "fpdu.bad_mo", X_REFUSE, f_bad_mo },
	{ "fpdu.send_too_long", X_REFUSE, f_send_too_long },
	{ "fpdu.bad_versions", X_REFUSE, f_bad_versions },
	{ "fpdu.bad_opcode", X_REFUSE, f_bad_opcode },
	{ "fpdu.tag_mismatch", X_REFUSE, f_tag_mismatch },
	{ "fpdu.read_req_huge", X_REFUSE, f_read_req_huge },
	{ "fpdu.read_req_flood", X_REFUSE, f_read_req_flood },
	{ "fpdu.keep_sending", X_REFUSE, f_keep_sending },
	{ "fpdu.garbage_term", X_REFUSE, f_garbage_term },
	{ "fpdu.term_bad_qn", X_REFUSE, f_term_bad_qn },
	{ "rping.rresp_valid", X_ANY, f_rresp_valid },
	{ "rping.rresp_oob", X_REFUSE, f_rresp_oob },
	{ "rping.rresp_to_below", X_REFUSE, f_rresp_to_below },
	{ "rping.rresp_wrong_stag", X_REFUSE, f_rresp_wrong_stag },
	{ "rping.write_sink_oob", X_REFUSE, f_write_sink_oob },
	{ "fpdu.imm_send_no_rfc7306", X_REFUSE, f_imm_send_no_rfc7306 },
	{ "fpdu.imm_send_twice", X_REFUSE, f_imm_send_twice },
	{ "fpdu.imm_send_se", X_REFUSE, f_imm_send_se },
	{ "fpdu.imm_send_not_send", X_REFUSE, f_imm_send_not_send },
	{ "rping.imm_send_valid", X_ANY, f_imm_send_valid },
	{ "fpdu.atomic_bad_aop", X_REFUSE, f_atomic_bad_aop },
	{ "fpdu.atomic_long", X_REFUSE, f_atomic_long },
	{ "fpdu.atomic_resp_unsolicited", X_REFUSE, f_atomic_resp_unsolicited },
	{ "rping.read_req_within_ird", X_ANY, f_read_req_within_ird },
	{ "rping.read_req_flood_valid", X_REFUSE, f_read_req_flood_valid },
	{ "verbs.atomic_within_ird", X_ANY, v_atomic_within_ird },
	{ "verbs.atomic_flood", X_REFUSE, v_atomic_flood },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static enum reaction main_reaction(const struct outcome *o)
{
	if (o->term)
		return R_TERM;
	if (o->reply)
		return o->reply_reject ? R_REPLY_REJECT : R_REPLY_OK;
	if (o->reset)
		return R_RESET;
	if (o->closed)
		return R_CLOSE;
	if (o->garbage)
		return R_GARBAGE;
	if (o->hang)
		return R_HANG;
	return R_NONE;
}

/* Judge one case; returns true when ok. */
static bool judge(const struct hcase *hc, int rc, struct outcome *o)
{
	enum reaction r = main_reaction(o);
	struct iwarp_term w;

	if (o->term_len_bad || o->term_rreq_bad || o->bad_answer)
		return false;
	if (rc == 2) /* a valid exchange: anything but a Terminate */
		return !o->term;
	if (o->setup_failed) {
		note(o, "setup failed ");
		return false;
	}
	if (rc < 0 && hc->x != X_NOTHING && r == R_NONE) {
		note(o, "case could not run ");
		return false;
	}
	switch (hc->x) {
	case X_ACCEPT:
		return r == R_REPLY_OK;
	case X_ANY:
		return r != R_HANG && r != R_NONE && r != R_GARBAGE;
	case X_REFUSE:
	case X_TIMEOUT:
		if (term_wanted(hc->name, &w) &&
		    (!o->term || o->t.layer != w.layer ||
		     o->t.etype != w.etype || o->t.ecode != w.ecode)) {
			note(o, "want terminate %u/%u/0x%02x ", w.layer,
			     w.etype, w.ecode);
			return false;
		}
		return r == R_REPLY_REJECT || r == R_TERM || r == R_CLOSE || r == R_RESET;
	case X_CUT:
		return o->reply && !o->reply_reject && !o->hang &&
		       (o->term || o->closed || o->reset);
	case X_NOTHING:
		return true;
	}
	return false;
}

static bool run_case(unsigned int idx, const struct hcase *hc, uint64_t seed)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct outcome o = { 0 };
	long long t0 = now_ms();
	int rc, wait_ms;
	bool ok;

	if (!c)
		exit(2);
	rng_state = seed ? seed : 1;
	/* verbs.* cases attack atomic-verify -b, the others the -p listener */
	c->fd = connect_peer(strncmp(hc->name, "verbs.", 6) ? opt_port : opt_bait_port);
	if (c->fd < 0) {
		free(c);
		printf("case %03u %-28s seed=%016llx -> connect failed [BAD]\n", idx, hc->name,
		       (unsigned long long)seed);
		return false;
	}
	rc = hc->run(c, &o);
	wait_ms = hc->x == X_TIMEOUT || hc->x == X_CUT ? opt_mpa_timeout_ms : opt_timeout_ms;
	if (hc->x == X_NOTHING && rc == 0) {
		/* we walk away mid-frame */
		note(&o, "we closed ");
	} else if (rc == 2) {
		/* a valid exchange finished: just see that nothing bad comes */
		watch(c, &o, 1500, NULL);
		note(&o, "%u fpdu(s) after ", o.fpdus);
	} else if (hc->x == X_NOTHING) {
		if (!watch(c, &o, wait_ms, NULL))
			note(&o, "we closed ");
	} else {
		bool ended;

		/* an accepted Reply is enough for accept-only controls */
		ended = watch(c, &o, wait_ms, hc->x == X_ACCEPT ? stop_on_reply : NULL);
		if (!ended && !o.term && !o.reply)
			o.hang = true;
		/* after a Terminate the peer should also close; give it a moment */
		if (o.term && !ended)
			ended = watch(c, &o, opt_timeout_ms, NULL);
		if (o.term && !ended)
			note(&o, "no close after terminate ");
	}
	o.ms = now_ms() - t0;
	close(c->fd);
	free(c);
	ok = judge(hc, rc, &o);
	printf("case %03u %-28s seed=%016llx -> %s", idx, hc->name,
	       (unsigned long long)seed, reaction_name[main_reaction(&o)]);
	if (o.term)
		printf(" %s/%s/%s(%u/%u/0x%02x)", iwarp_term_layer_name(o.t.layer),
		       iwarp_term_etype_name(o.t.layer, o.t.etype),
		       iwarp_term_ecode_name(o.t.layer, o.t.etype, o.t.ecode), o.t.layer,
		       o.t.etype, o.t.ecode);
	if (o.reply)
		printf(" reply-rev%u%s", o.reply_rev, o.reply_reject ? "-reject" : "");
	if (o.closed)
		printf(" +close");
	if (o.reset)
		printf(" +reset");
	printf(" %lldms %s[%s]\n", o.ms, o.note, ok ? "ok" : "BAD");
	fflush(stdout);
	return ok;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: hostile [-p PORT] [-A PORT] [-s SEED] [-n N] [-a] [-c NAME]... [-x NAME]... [-t MS] [-T MS] HOST\n"
		"       hostile -l\n"
		"  -A PORT  atomic-verify -b listens there: run the verbs.* cases\n"
		"           (left out without it)\n"
		"  -a       run every case once, in table order (seeds derived from -s)\n"
		"  -n N     then N cases picked at random from the seed (default 0)\n"
		"  -c NAME  run only cases whose name starts with NAME (repeatable)\n"
		"  -x NAME  leave out cases whose name starts with NAME (repeatable)\n"
		"  -s SEED  the seed (default 1)\n"
		"  -t MS    how long to wait for a reaction (default 3000)\n"
		"  -T MS    how long to wait for the peer's MPA timeout (default 15000)\n"
		"  -l       list the cases\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *only[32], *skip[32];
	unsigned int nonly = 0, nskip = 0, i, n = 0, bad = 0, total = 0;
	uint64_t seed = 1, master;
	bool all = false;
	int ch;

	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt(argc, argv, "p:A:s:n:ac:x:t:T:lv")) != -1) {
		switch (ch) {
		case 'p': opt_port = optarg; break;
		case 'A': opt_bait_port = optarg; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': n = (unsigned int)atoi(optarg); break;
		case 'a': all = true; break;
		case 'c':
			if (nonly < 32)
				only[nonly++] = optarg;
			break;
		case 'x':
			if (nskip < 32)
				skip[nskip++] = optarg;
			break;
		case 't': opt_timeout_ms = atoi(optarg); break;
		case 'T': opt_mpa_timeout_ms = atoi(optarg); break;
		case 'v': opt_verbose++; break;
		case 'l':
			for (i = 0; i < NCASES; i++)
				printf("%s\n", cases[i].name);
			return 0;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	opt_host = argv[optind];
	if (!all && !n && !nonly)
		all = true;
	if (!opt_bait_port && nskip < 32)
		skip[nskip++] = "verbs.";

	rng_state = seed ? seed : 1;
	master = rnd();
	printf("hostile: target %s:%s seed %llu\n", opt_host, opt_port,
	       (unsigned long long)seed);
	for (i = 0; i < NCASES && (all || nonly); i++) {
		unsigned int k;
		bool pick = !nonly;

		for (k = 0; k < nonly; k++)
			pick |= !strncmp(cases[i].name, only[k], strlen(only[k]));
		for (k = 0; k < nskip; k++)
			pick &= !!strncmp(cases[i].name, skip[k], strlen(skip[k]));
		if (!pick)
			continue;
		total++;
		if (!run_case(total, &cases[i], master ^ (0x9e3779b97f4a7c15ULL * (i + 1))))
			bad++;
	}
	for (i = 0; i < n; i++) {
		uint64_t s;
		unsigned int k;

		rng_state = master + i + 1;
		s = rnd();
		k = (unsigned int)(s % NCASES);
		{
			unsigned int j;
			bool excluded = false;

			for (j = 0; j < nskip; j++)
				excluded |= !strncmp(cases[k].name, skip[j], strlen(skip[j]));
			if (excluded)
				continue;
		}
		total++;
		if (!run_case(total, &cases[k], s))
			bad++;
	}
	printf("hostile: %u cases, %u ok, %u bad\n", total, total - bad, bad);
	return bad ? 1 : 0;
}
