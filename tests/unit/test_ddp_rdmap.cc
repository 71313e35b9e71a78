// DDP (RFC 5041) and RDMAP (RFC 5040, RFC 7306) headers: exact bytes,
// round trips for every opcode, Terminate layouts, malformed input.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <vector>

#include <iwarp/rdmap.h>

namespace {

std::vector<uint8_t> encode(const iwarp_rdmap_msg &m)
{
	std::vector<uint8_t> out(128);
	int n = iwarp_rdmap_encode(&m, out.data(), out.size());
	EXPECT_GT(n, 0) << iwarp_strerror(n);
	out.resize(n > 0 ? (size_t)n : 0);
	return out;
}

uint64_t r64(std::mt19937_64 &rng)
{
	return rng();
}

} // namespace

TEST(Ddp, TaggedHeaderExactBytes)
{
	iwarp_ddp_hdr h{};
	h.tagged = true;
	h.last = true;
	h.dv = 1;
	h.rsvdulp[0] = 0x40; // RDMAP: RV=1, RDMA Write
	h.stag = 0x11223344;
	h.to = 0x0102030405060708ull;
	uint8_t b[14];
	ASSERT_EQ(iwarp_ddp_hdr_encode(&h, b, sizeof(b)), 14);
	const uint8_t want[14] = {0xc1, 0x40, 0x11, 0x22, 0x33, 0x44, 1, 2, 3, 4, 5, 6, 7, 8};
	EXPECT_EQ(0, memcmp(b, want, 14));
	iwarp_ddp_hdr back;
	ASSERT_EQ(iwarp_ddp_hdr_parse(b, sizeof(b), &back), 14);
	EXPECT_TRUE(back.tagged);
	EXPECT_TRUE(back.last);
	EXPECT_EQ(back.stag, h.stag);
	EXPECT_EQ(back.to, h.to);
}

TEST(Ddp, UntaggedHeaderExactBytes)
{
	iwarp_ddp_hdr h{};
	h.dv = 1;
	h.rsvdulp[0] = 0x43; // RDMAP: RV=1, Send
	h.qn = 0;
	h.msn = 0x01020304;
	h.mo = 0x0a0b0c0d;
	uint8_t b[18];
	ASSERT_EQ(iwarp_ddp_hdr_encode(&h, b, sizeof(b)), 18);
	const uint8_t want[18] = {0x01, 0x43, 0, 0, 0, 0, 0, 0, 0, 0,
				  1,    2,    3, 4, 0x0a, 0x0b, 0x0c, 0x0d};
	EXPECT_EQ(0, memcmp(b, want, 18));
	EXPECT_EQ(iwarp_ddp_hdr_encode(&h, b, 17), IWARP_ERR_NOSPACE);
}

TEST(Ddp, VersionAndReservedBits)
{
	uint8_t b[18] = {0x01, 0x43};
	iwarp_ddp_hdr h;
	for (uint8_t dv : {0, 2, 3}) {
		b[0] = dv;
		EXPECT_EQ(iwarp_ddp_hdr_parse(b, sizeof(b), &h), IWARP_ERR_BAD_VERSION);
		EXPECT_EQ(h.dv, dv);
	}
	b[0] = 0x01 | 0x3c; // reserved bits: reported, not checked
	EXPECT_EQ(iwarp_ddp_hdr_parse(b, sizeof(b), &h), 18);
	EXPECT_EQ(h.rsvd, 0xf);
}

TEST(Ddp, Truncated)
{
	uint8_t b[18] = {0x81, 0x40};
	iwarp_ddp_hdr h;
	EXPECT_EQ(iwarp_ddp_hdr_parse(b, 0, &h), IWARP_ERR_TRUNCATED);
	EXPECT_EQ(iwarp_ddp_hdr_parse(b, 13, &h), IWARP_ERR_TRUNCATED);
	EXPECT_EQ(iwarp_ddp_hdr_parse(b, 14, &h), 14);
	b[0] = 0x01;
	EXPECT_EQ(iwarp_ddp_hdr_parse(b, 17, &h), IWARP_ERR_TRUNCATED);
	EXPECT_EQ(iwarp_ddp_hdr_parse(b, 18, &h), 18);
}

TEST(Rdmap, HeaderLengthsPerOpcode)
{
	// DDP header + RDMAP header for each defined opcode.
	const uint32_t want[12] = {14, 18 + 28, 14, 18, 18, 18, 18, 18 + 4,
				   18 + 8, 18 + 8, 18 + 52, 18 + 12};
	for (unsigned op = 0; op < 12; op++) {
		iwarp_rdmap_msg m;
		ASSERT_EQ(iwarp_rdmap_init(&m, op), IWARP_OK);
		auto w = encode(m);
		EXPECT_EQ(w.size(), want[op]) << op;
		iwarp_rdmap_msg back;
		EXPECT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &back), (int)want[op]) << op;
		EXPECT_EQ(back.opcode, op);
	}
	iwarp_rdmap_msg m;
	for (unsigned op = 12; op < 20; op++)
		EXPECT_EQ(iwarp_rdmap_init(&m, op), IWARP_ERR_BAD_OPCODE);
}

TEST(Rdmap, SendWithInvalidateExactBytes)
{
	iwarp_rdmap_msg m;
	ASSERT_EQ(iwarp_rdmap_init(&m, IWARP_OP_SEND_SE_INVALIDATE), IWARP_OK);
	m.inval_stag = 0xdeadbeef;
	m.ddp.msn = 7;
	auto w = encode(m);
	ASSERT_EQ(w.size(), 18u);
	EXPECT_EQ(w[0], 0x41); // L, DV=1
	EXPECT_EQ(w[1], 0x46); // RV=1, opcode 6
	EXPECT_EQ(iwarp_get_be32(&w[2]), 0xdeadbeefu);
	EXPECT_EQ(iwarp_get_be32(&w[6]), 0u); // QN 0
	EXPECT_EQ(iwarp_get_be32(&w[10]), 7u);
}

TEST(Rdmap, ReadRequestExactBytes)
{
	iwarp_rdmap_msg m;
	ASSERT_EQ(iwarp_rdmap_init(&m, IWARP_OP_READ_REQUEST), IWARP_OK);
	m.ddp.msn = 1;
	m.rreq.sink_stag = 0xa0a0a0a0;
	m.rreq.sink_to = 0x1000;
	m.rreq.size = 4096;
	m.rreq.src_stag = 0xb0b0b0b0;
	m.rreq.src_to = 0xffffffff00000000ull;
	auto w = encode(m);
	ASSERT_EQ(w.size(), 46u);
	EXPECT_EQ(w[1], 0x41);
	EXPECT_EQ(iwarp_get_be32(&w[6]), 1u); // QN 1
	EXPECT_EQ(iwarp_get_be32(&w[18]), 0xa0a0a0a0u);
	EXPECT_EQ(iwarp_get_be64(&w[22]), 0x1000u);
	EXPECT_EQ(iwarp_get_be32(&w[30]), 4096u);
	EXPECT_EQ(iwarp_get_be32(&w[34]), 0xb0b0b0b0u);
	EXPECT_EQ(iwarp_get_be64(&w[38]), 0xffffffff00000000ull);
}

TEST(Rdmap, RoundTripRandomFieldsEveryOpcode)
{
	std::mt19937_64 rng(11);
	for (int iter = 0; iter < 200; iter++)
		for (unsigned op = 0; op < 12; op++) {
			if (op == IWARP_OP_TERMINATE)
				continue; // own test
			iwarp_rdmap_msg m;
			ASSERT_EQ(iwarp_rdmap_init(&m, op), IWARP_OK);
			m.ddp.last = r64(rng) & 1;
			if (m.ddp.tagged) {
				m.ddp.stag = (uint32_t)r64(rng);
				m.ddp.to = r64(rng);
			} else {
				m.ddp.msn = (uint32_t)r64(rng);
				m.ddp.mo = (uint32_t)r64(rng);
				m.inval_stag = (uint32_t)r64(rng);
			}
			m.rreq.sink_stag = (uint32_t)r64(rng);
			m.rreq.sink_to = r64(rng);
			m.rreq.size = (uint32_t)r64(rng);
			m.rreq.src_stag = (uint32_t)r64(rng);
			m.rreq.src_to = r64(rng);
			m.immediate = r64(rng);
			m.areq.rsvd = (uint32_t)r64(rng) & 0x0fffffff;
			m.areq.aopcode = (uint8_t)(r64(rng) % 3);
			m.areq.req_id = (uint32_t)r64(rng);
			m.areq.stag = (uint32_t)r64(rng);
			m.areq.to = r64(rng);
			m.areq.add_swap = r64(rng);
			m.areq.add_swap_mask = r64(rng);
			m.areq.compare = r64(rng);
			m.areq.compare_mask = r64(rng);
			m.aresp.req_id = (uint32_t)r64(rng);
			m.aresp.orig_value = r64(rng);
			auto w = encode(m);
			iwarp_rdmap_msg b;
			ASSERT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &b), (int)w.size());
			EXPECT_EQ(b.opcode, op);
			EXPECT_EQ(b.rv, 1);
			EXPECT_EQ(b.ddp.dv, 1);
			EXPECT_EQ(b.ddp.last, m.ddp.last);
			EXPECT_EQ(b.ddp.tagged, m.ddp.tagged);
			if (m.ddp.tagged) {
				EXPECT_EQ(b.ddp.stag, m.ddp.stag);
				EXPECT_EQ(b.ddp.to, m.ddp.to);
			} else {
				EXPECT_EQ(b.ddp.qn, m.ddp.qn);
				EXPECT_EQ(b.ddp.msn, m.ddp.msn);
				EXPECT_EQ(b.ddp.mo, m.ddp.mo);
				EXPECT_EQ(b.inval_stag, m.inval_stag);
			}
			switch (op) {
			case IWARP_OP_READ_REQUEST:
				EXPECT_EQ(b.rreq.sink_stag, m.rreq.sink_stag);
				EXPECT_EQ(b.rreq.sink_to, m.rreq.sink_to);
				EXPECT_EQ(b.rreq.size, m.rreq.size);
				EXPECT_EQ(b.rreq.src_stag, m.rreq.src_stag);
				EXPECT_EQ(b.rreq.src_to, m.rreq.src_to);
				break;
			case IWARP_OP_IMMEDIATE:
			case IWARP_OP_IMMEDIATE_SE:
				EXPECT_EQ(b.immediate, m.immediate);
				break;
			case IWARP_OP_ATOMIC_REQUEST:
				EXPECT_EQ(b.areq.rsvd, m.areq.rsvd);
				EXPECT_EQ(b.areq.aopcode, m.areq.aopcode);
				EXPECT_EQ(b.areq.req_id, m.areq.req_id);
				EXPECT_EQ(b.areq.stag, m.areq.stag);
				EXPECT_EQ(b.areq.to, m.areq.to);
				EXPECT_EQ(b.areq.add_swap, m.areq.add_swap);
				EXPECT_EQ(b.areq.add_swap_mask, m.areq.add_swap_mask);
				EXPECT_EQ(b.areq.compare, m.areq.compare);
				EXPECT_EQ(b.areq.compare_mask, m.areq.compare_mask);
				break;
			case IWARP_OP_ATOMIC_RESPONSE:
				EXPECT_EQ(b.aresp.req_id, m.aresp.req_id);
				EXPECT_EQ(b.aresp.orig_value, m.aresp.orig_value);
				break;
			}
			// Byte-exact re-encode.
			EXPECT_EQ(encode(b), w);
		}
}

TEST(Rdmap, QueueNumbers)
{
	const struct {
		unsigned op;
		uint32_t qn;
	} want[] = {
		{IWARP_OP_READ_REQUEST, 1}, {IWARP_OP_SEND, 0}, {IWARP_OP_SEND_INVALIDATE, 0},
		{IWARP_OP_SEND_SE, 0}, {IWARP_OP_SEND_SE_INVALIDATE, 0}, {IWARP_OP_TERMINATE, 2},
		{IWARP_OP_IMMEDIATE, 0}, {IWARP_OP_IMMEDIATE_SE, 0},
		{IWARP_OP_ATOMIC_REQUEST, 1}, {IWARP_OP_ATOMIC_RESPONSE, 3},
	};
	for (auto &c : want) {
		const struct iwarp_rdmap_opinfo *info = iwarp_rdmap_opcode_info(c.op);
		ASSERT_NE(info, nullptr);
		EXPECT_FALSE(info->tagged);
		EXPECT_EQ(info->qn, c.qn) << c.op;
	}
	EXPECT_TRUE(iwarp_rdmap_opcode_info(IWARP_OP_WRITE)->tagged);
	EXPECT_TRUE(iwarp_rdmap_opcode_info(IWARP_OP_READ_RESPONSE)->tagged);
}

TEST(Rdmap, MalformedRejected)
{
	iwarp_rdmap_msg m, b;
	ASSERT_EQ(iwarp_rdmap_init(&m, IWARP_OP_SEND), IWARP_OK);
	auto good = encode(m);

	auto w = good;
	w[0] = (uint8_t)((w[0] & ~0x03) | 0x02); // DV 2
	EXPECT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &b), IWARP_ERR_BAD_VERSION);
	for (uint8_t rv : {0x00, 0x80, 0xc0}) {
		w = good;
		w[1] = (uint8_t)((w[1] & 0x3f) | rv);
		EXPECT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &b), IWARP_ERR_BAD_VERSION);
	}
	for (uint8_t op = 12; op < 16; op++) {
		w = good;
		w[1] = (uint8_t)(0x40 | op);
		EXPECT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &b), IWARP_ERR_BAD_OPCODE);
		EXPECT_EQ(b.opcode, op);
	}
	// Send on the Read Request queue.
	w = good;
	w[9] = 1;
	EXPECT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &b), IWARP_ERR_BAD_QN);
	// Read Request on the Send queue.
	ASSERT_EQ(iwarp_rdmap_init(&m, IWARP_OP_READ_REQUEST), IWARP_OK);
	m.ddp.qn = 0;
	w = encode(m);
	EXPECT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &b), IWARP_ERR_BAD_QN);
	// Tagged Send, untagged Write.
	ASSERT_EQ(iwarp_rdmap_init(&m, IWARP_OP_SEND), IWARP_OK);
	m.ddp.tagged = true;
	w = encode(m);
	EXPECT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &b), IWARP_ERR_BAD_QN);
	ASSERT_EQ(iwarp_rdmap_init(&m, IWARP_OP_WRITE), IWARP_OK);
	m.ddp.tagged = false;
	w = encode(m);
	EXPECT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &b), IWARP_ERR_BAD_QN);
	// Atomic Request with the Atomic Response QN.
	ASSERT_EQ(iwarp_rdmap_init(&m, IWARP_OP_ATOMIC_REQUEST), IWARP_OK);
	m.ddp.qn = 3;
	w = encode(m);
	EXPECT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &b), IWARP_ERR_BAD_QN);
	// Reserved opcode cannot be encoded.
	m.opcode = 13;
	uint8_t out[128];
	EXPECT_EQ(iwarp_rdmap_encode(&m, out, sizeof(out)), IWARP_ERR_BAD_OPCODE);
}

TEST(Rdmap, TruncatedAtEveryLength)
{
	for (unsigned op = 0; op < 12; op++) {
		iwarp_rdmap_msg m, b;
		ASSERT_EQ(iwarp_rdmap_init(&m, op), IWARP_OK);
		auto w = encode(m);
		for (size_t len = 0; len < w.size(); len++) {
			std::vector<uint8_t> part(w.begin(), w.begin() + len);
			EXPECT_EQ(iwarp_rdmap_parse(part.data(), part.size(), &b),
				  IWARP_ERR_TRUNCATED)
				<< "op " << op << " len " << len;
		}
	}
}

// ---- Terminate --------------------------------------------------------

TEST(Terminate, ControlWordBits)
{
	iwarp_rdmap_msg m;
	ASSERT_EQ(iwarp_rdmap_init(&m, IWARP_OP_TERMINATE), IWARP_OK);
	m.term.layer = IWARP_TERM_LAYER_LLP;
	m.term.etype = IWARP_TERM_ETYPE_MPA;
	m.term.ecode = IWARP_TERM_MPA_CRC;
	auto w = encode(m);
	ASSERT_EQ(w.size(), 22u);
	EXPECT_EQ(iwarp_get_be32(&w[6]), 2u); // QN 2
	EXPECT_EQ(w[18], 0x20); // layer 2, etype 0
	EXPECT_EQ(w[19], 0x02);
	EXPECT_EQ(w[20], 0x00); // no M/D/R
	EXPECT_EQ(w[21], 0x00);
}

TEST(Terminate, WithTerminatedHeaders)
{
	// Failed inbound Read Request: its DDP and RDMAP headers are copied.
	iwarp_rdmap_msg rr;
	ASSERT_EQ(iwarp_rdmap_init(&rr, IWARP_OP_READ_REQUEST), IWARP_OK);
	rr.rreq.sink_stag = 0x1234;
	rr.rreq.size = 64;
	auto rrw = encode(rr);
	ASSERT_EQ(rrw.size(), 46u);

	iwarp_rdmap_msg m;
	ASSERT_EQ(iwarp_rdmap_init(&m, IWARP_OP_TERMINATE), IWARP_OK);
	m.term.layer = IWARP_TERM_LAYER_RDMAP;
	m.term.etype = IWARP_TERM_RDMAP_ETYPE_PROTECTION;
	m.term.ecode = IWARP_TERM_RDMAP_INVALID_STAG;
	m.term.flag_m = m.term.flag_d = m.term.flag_r = true;
	m.term.ddp_seg_len = 46;
	m.term.ddp_hdr = rrw.data();
	m.term.ddp_hdr_len = 18;
	m.term.rdmap_hdr = rrw.data() + 18;
	m.term.rdmap_hdr_len = 28;
	auto w = encode(m);
	ASSERT_EQ(w.size(), 18u + 4 + 2 + 18 + 28);
	EXPECT_EQ(w[20], 0xe0); // M D R
	EXPECT_EQ(iwarp_get_be16(&w[22]), 46);
	EXPECT_EQ(0, memcmp(&w[24], rrw.data(), 46));

	iwarp_rdmap_msg b;
	ASSERT_EQ(iwarp_rdmap_parse(w.data(), w.size(), &b), (int)w.size());
	EXPECT_EQ(b.term.layer, IWARP_TERM_LAYER_RDMAP);
	EXPECT_EQ(b.term.etype, IWARP_TERM_RDMAP_ETYPE_PROTECTION);
	EXPECT_TRUE(b.term.flag_m && b.term.flag_d && b.term.flag_r);
	EXPECT_EQ(b.term.ddp_seg_len, 46);
	ASSERT_EQ(b.term.ddp_hdr_len, 18);
	ASSERT_EQ(b.term.rdmap_hdr_len, 28);
	// The copied headers parse as the original Read Request.
	iwarp_rdmap_msg inner;
	std::vector<uint8_t> copy(b.term.ddp_hdr, b.term.ddp_hdr + 46);
	ASSERT_EQ(iwarp_rdmap_parse(copy.data(), copy.size(), &inner), 46);
	EXPECT_EQ(inner.rreq.sink_stag, 0x1234u);
	EXPECT_EQ(inner.rreq.size, 64u);
	EXPECT_EQ(encode(b), w);
}

TEST(Terminate, TaggedHeaderCopy)
{
	iwarp_rdmap_msg wr;
	ASSERT_EQ(iwarp_rdmap_init(&wr, IWARP_OP_WRITE), IWARP_OK);
	wr.ddp.stag = 0x99;
	auto wrw = encode(wr);
	iwarp_term t{};
	t.layer = IWARP_TERM_LAYER_DDP;
	t.etype = IWARP_TERM_DDP_ETYPE_TAGGED;
	t.ecode = IWARP_TERM_DDP_T_INVALID_STAG;
	t.flag_m = t.flag_d = true;
	t.ddp_seg_len = 1000;
	t.ddp_hdr = wrw.data();
	t.ddp_hdr_len = 14;
	uint8_t out[64];
	ASSERT_EQ(iwarp_term_encode(&t, out, sizeof(out)), 4 + 2 + 14);
	iwarp_term b;
	ASSERT_EQ(iwarp_term_parse(out, 20, &b), 20);
	EXPECT_EQ(b.ddp_hdr_len, 14);
	EXPECT_EQ(iwarp_get_be32(b.ddp_hdr + 2), 0x99u);
	for (size_t len = 0; len < 20; len++) {
		std::vector<uint8_t> part(out, out + len);
		EXPECT_EQ(iwarp_term_parse(part.data(), part.size(), &b), IWARP_ERR_TRUNCATED)
			<< len;
	}
	// Length that does not match the copied header's T bit.
	t.ddp_hdr_len = 18;
	EXPECT_EQ(iwarp_term_encode(&t, out, sizeof(out)), IWARP_ERR_INVAL);
	t.ddp_hdr_len = 14;
	EXPECT_EQ(iwarp_term_encode(&t, out, 19), IWARP_ERR_NOSPACE);
}

TEST(Terminate, RWithoutDIsMalformed)
{
	uint8_t b[64] = {0x00, 0x01, 0x20, 0x00};
	iwarp_term t;
	EXPECT_EQ(iwarp_term_parse(b, sizeof(b), &t), IWARP_ERR_MALFORMED);
	iwarp_term e{};
	e.flag_r = true;
	uint8_t rd[28] = {};
	e.rdmap_hdr = rd;
	e.rdmap_hdr_len = 28;
	EXPECT_EQ(iwarp_term_encode(&e, b, sizeof(b)), IWARP_ERR_INVAL);
}

TEST(Terminate, MOnlyHasSegmentLength)
{
	uint8_t b[8] = {0x10, 0x02, 0x80, 0x00, 0x01, 0x00};
	iwarp_term t;
	ASSERT_EQ(iwarp_term_parse(b, 6, &t), 6);
	EXPECT_TRUE(t.flag_m);
	EXPECT_FALSE(t.flag_d);
	EXPECT_EQ(t.ddp_seg_len, 256);
	EXPECT_EQ(t.ddp_hdr, nullptr);
	EXPECT_EQ(iwarp_term_parse(b, 5, &t), IWARP_ERR_TRUNCATED);
}

TEST(Terminate, ReservedBitsReportedAndKept)
{
	uint8_t b[4] = {0x01, 0x00, 0x1f, 0xff};
	iwarp_term t;
	ASSERT_EQ(iwarp_term_parse(b, 4, &t), 4);
	EXPECT_EQ(t.rsvd, 0x1fff);
	uint8_t out[4];
	ASSERT_EQ(iwarp_term_encode(&t, out, 4), 4);
	EXPECT_EQ(0, memcmp(out, b, 4));
}

// The named field offsets the dissector reads with, against the layouts of
// RFC 5041 section 5.2/5.3, RFC 5040 section 4 and RFC 7306 section 4
// written out here as plain numbers, and each header's last field ending
// where its length says.
TEST(Offsets, MatchTheRfcLayouts)
{
	EXPECT_EQ(IWARP_DDP_CTRL_OFF, 0);
	EXPECT_EQ(IWARP_DDP_RSVDULP_OFF, 1);
	EXPECT_EQ(IWARP_DDP_STAG_OFF, 2);
	EXPECT_EQ(IWARP_DDP_TO_OFF, 6);
	EXPECT_EQ(IWARP_DDP_TO_OFF + 8, IWARP_DDP_TAGGED_HDR_LEN);
	EXPECT_EQ(IWARP_DDP_QN_OFF, 6);
	EXPECT_EQ(IWARP_DDP_MSN_OFF, 10);
	EXPECT_EQ(IWARP_DDP_MO_OFF, 14);
	EXPECT_EQ(IWARP_DDP_MO_OFF + 4, IWARP_DDP_UNTAGGED_HDR_LEN);
	EXPECT_EQ(IWARP_DDP_MIN_HDR_LEN, 14);
	EXPECT_EQ(IWARP_RDMAP_CTRL_OFF, 1);
	EXPECT_EQ(IWARP_RDMAP_INVAL_STAG_OFF, 2);

	EXPECT_EQ(IWARP_RDMAP_RR_SINK_STAG_OFF, 0);
	EXPECT_EQ(IWARP_RDMAP_RR_SINK_TO_OFF, 4);
	EXPECT_EQ(IWARP_RDMAP_RR_SIZE_OFF, 12);
	EXPECT_EQ(IWARP_RDMAP_RR_SRC_STAG_OFF, 16);
	EXPECT_EQ(IWARP_RDMAP_RR_SRC_TO_OFF, 20);
	EXPECT_EQ(IWARP_RDMAP_RR_SRC_TO_OFF + 8, IWARP_RDMAP_READ_REQ_LEN);

	EXPECT_EQ(IWARP_RDMAP_IMM_FLAGS_OFF + 4, IWARP_RDMAP_IMMEDIATE_LEN);

	EXPECT_EQ(IWARP_RDMAP_AREQ_AOP_OFF, 0);
	EXPECT_EQ(IWARP_RDMAP_AREQ_REQID_OFF, 4);
	EXPECT_EQ(IWARP_RDMAP_AREQ_STAG_OFF, 8);
	EXPECT_EQ(IWARP_RDMAP_AREQ_TO_OFF, 12);
	EXPECT_EQ(IWARP_RDMAP_AREQ_ADD_SWAP_OFF, 20);
	EXPECT_EQ(IWARP_RDMAP_AREQ_ADD_SWAP_MASK_OFF, 28);
	EXPECT_EQ(IWARP_RDMAP_AREQ_CMP_OFF, 36);
	EXPECT_EQ(IWARP_RDMAP_AREQ_CMP_MASK_OFF, 44);
	EXPECT_EQ(IWARP_RDMAP_AREQ_CMP_MASK_OFF + 8, IWARP_RDMAP_ATOMIC_REQ_LEN);
	EXPECT_EQ(IWARP_RDMAP_AREQ_AOP_MASK | IWARP_RDMAP_AREQ_RSVD_MASK, 0xffffffffU);
	EXPECT_EQ(IWARP_RDMAP_AREQ_AOP_MASK & IWARP_RDMAP_AREQ_RSVD_MASK, 0U);
	EXPECT_EQ(IWARP_RDMAP_ARESP_REQID_OFF, 0);
	EXPECT_EQ(IWARP_RDMAP_ARESP_VALUE_OFF, 4);
	EXPECT_EQ(IWARP_RDMAP_ARESP_VALUE_OFF + 8, IWARP_RDMAP_ATOMIC_RESP_LEN);

	// Terminate control word: Layer(4) EType(4) ErrCode(8) M D R Rsvd(13).
	EXPECT_EQ(IWARP_TERM_LAYER_MASK | IWARP_TERM_ETYPE_MASK | IWARP_TERM_ECODE_MASK |
			  IWARP_TERM_FLAG_M | IWARP_TERM_FLAG_D | IWARP_TERM_FLAG_R |
			  IWARP_TERM_RSVD_MASK,
		  0xffffffffU);
	EXPECT_EQ(IWARP_TERM_LAYER_MASK >> IWARP_TERM_LAYER_SHIFT, 0xfU);
	EXPECT_EQ(IWARP_TERM_ETYPE_MASK >> IWARP_TERM_ETYPE_SHIFT, 0xfU);
	EXPECT_EQ(IWARP_TERM_ECODE_MASK >> IWARP_TERM_ECODE_SHIFT, 0xffU);
}

// The offsets read the fields of a header built by hand (not by the
// encoder): an untagged Atomic Request and a Read Request.
TEST(Offsets, ReadHandBuiltHeaders)
{
	const uint8_t untagged[18] = { 0x41, 0x4a, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1,
				       0, 0, 0, 7, 0, 0, 0, 0 };
	uint8_t rr[28], areq[52];

	EXPECT_EQ(untagged[IWARP_RDMAP_CTRL_OFF] & IWARP_RDMAP_OPCODE_MASK, IWARP_OP_ATOMIC_REQUEST);
	EXPECT_EQ(iwarp_get_be32(untagged + IWARP_RDMAP_INVAL_STAG_OFF), 0xdeadbeefU);
	EXPECT_EQ(iwarp_get_be32(untagged + IWARP_DDP_QN_OFF), 1U);
	EXPECT_EQ(iwarp_get_be32(untagged + IWARP_DDP_MSN_OFF), 7U);
	EXPECT_EQ(iwarp_get_be32(untagged + IWARP_DDP_MO_OFF), 0U);

	for (unsigned i = 0; i < sizeof(rr); i++)
		rr[i] = (uint8_t)(0x10 + i);
	EXPECT_EQ(iwarp_get_be32(rr + IWARP_RDMAP_RR_SINK_STAG_OFF), 0x10111213U);
	EXPECT_EQ(iwarp_get_be64(rr + IWARP_RDMAP_RR_SINK_TO_OFF), 0x1415161718191a1bULL);
	EXPECT_EQ(iwarp_get_be32(rr + IWARP_RDMAP_RR_SIZE_OFF), 0x1c1d1e1fU);
	EXPECT_EQ(iwarp_get_be32(rr + IWARP_RDMAP_RR_SRC_STAG_OFF), 0x20212223U);
	EXPECT_EQ(iwarp_get_be64(rr + IWARP_RDMAP_RR_SRC_TO_OFF), 0x2425262728292a2bULL);

	for (unsigned i = 0; i < sizeof(areq); i++)
		areq[i] = (uint8_t)i;
	EXPECT_EQ(iwarp_get_be32(areq + IWARP_RDMAP_AREQ_AOP_OFF) & IWARP_RDMAP_AREQ_AOP_MASK, 3U);
	EXPECT_EQ(iwarp_get_be32(areq + IWARP_RDMAP_AREQ_REQID_OFF), 0x04050607U);
	EXPECT_EQ(iwarp_get_be32(areq + IWARP_RDMAP_AREQ_STAG_OFF), 0x08090a0bU);
	EXPECT_EQ(iwarp_get_be64(areq + IWARP_RDMAP_AREQ_TO_OFF), 0x0c0d0e0f10111213ULL);
	EXPECT_EQ(iwarp_get_be64(areq + IWARP_RDMAP_AREQ_ADD_SWAP_OFF), 0x1415161718191a1bULL);
	EXPECT_EQ(iwarp_get_be64(areq + IWARP_RDMAP_AREQ_ADD_SWAP_MASK_OFF), 0x1c1d1e1f20212223ULL);
	EXPECT_EQ(iwarp_get_be64(areq + IWARP_RDMAP_AREQ_CMP_OFF), 0x2425262728292a2bULL);
	EXPECT_EQ(iwarp_get_be64(areq + IWARP_RDMAP_AREQ_CMP_MASK_OFF), 0x2c2d2e2f30313233ULL);
}

// Which opcodes carry ULP payload after their headers (RFC 5040 section 4,
// RFC 7306 section 4: Immediate Data and atomics carry operands only).
TEST(Rdmap, OpcodesWithPayload)
{
	const std::set<unsigned> with = { IWARP_OP_WRITE, IWARP_OP_READ_RESPONSE, IWARP_OP_SEND,
					  IWARP_OP_SEND_INVALIDATE, IWARP_OP_SEND_SE,
					  IWARP_OP_SEND_SE_INVALIDATE };

	for (unsigned op = 0; op < 16; op++)
		EXPECT_EQ(iwarp_rdmap_op_has_payload(op), with.count(op) == 1) << "opcode " << op;
}
