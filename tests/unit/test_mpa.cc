// MPA Request/Reply/Reject frames and FPDU framing.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <iwarp/mpa.h>

namespace {

std::vector<uint8_t> encode(const iwarp_mpa_rr &rr)
{
	std::vector<uint8_t> out(IWARP_MPA_RR_HDR_LEN + IWARP_MPA_MAX_PDATA + 8);
	int n = iwarp_mpa_rr_encode(&rr, out.data(), out.size());
	EXPECT_GT(n, 0) << iwarp_strerror(n);
	out.resize(n > 0 ? (size_t)n : 0);
	return out;
}

iwarp_mpa_rr make(uint8_t kind, uint8_t rev)
{
	iwarp_mpa_rr rr{};
	rr.kind = kind;
	rr.rev = rev;
	return rr;
}

void expect_same(const iwarp_mpa_rr &a, const iwarp_mpa_rr &b)
{
	EXPECT_EQ(a.kind, b.kind);
	EXPECT_EQ(a.rev, b.rev);
	EXPECT_EQ(a.markers, b.markers);
	EXPECT_EQ(a.crc, b.crc);
	EXPECT_EQ(a.reject, b.reject);
	EXPECT_EQ(a.enhanced, b.enhanced);
	if (a.enhanced) {
		EXPECT_EQ(a.p2p, b.p2p);
		EXPECT_EQ(a.rtr, b.rtr);
		EXPECT_EQ(a.ird, b.ird);
		EXPECT_EQ(a.ord, b.ord);
	}
	ASSERT_EQ(a.ulp_pdata_len, b.ulp_pdata_len);
	if (a.ulp_pdata_len) {
		EXPECT_EQ(0, memcmp(a.ulp_pdata, b.ulp_pdata, a.ulp_pdata_len));
	}
}

} // namespace

TEST(MpaFrame, RequestV1ExactBytes)
{
	iwarp_mpa_rr rr = make(IWARP_MPA_REQUEST, 1);
	rr.crc = true;
	const uint8_t pd[] = {'h', 'i'};
	rr.ulp_pdata = pd;
	rr.ulp_pdata_len = 2;
	auto w = encode(rr);
	ASSERT_EQ(w.size(), 22u);
	EXPECT_EQ(std::string(w.begin(), w.begin() + 16), "MPA ID Req Frame");
	EXPECT_EQ(w[16], 0x40); // C only
	EXPECT_EQ(w[17], 1);	// Rev
	EXPECT_EQ(w[18], 0);
	EXPECT_EQ(w[19], 2); // PD_Length
	EXPECT_EQ(w[20], 'h');
	EXPECT_EQ(w[21], 'i');
}

TEST(MpaFrame, ReplyV2ExactBytes)
{
	iwarp_mpa_rr rr = make(IWARP_MPA_REPLY, 2);
	rr.enhanced = true;
	rr.markers = true;
	rr.p2p = true;
	rr.rtr = IWARP_MPA_RTR_READ | IWARP_MPA_RTR_SEND;
	rr.ird = 0x1234;
	rr.ord = 0x0005;
	auto w = encode(rr);
	ASSERT_EQ(w.size(), 24u);
	EXPECT_EQ(std::string(w.begin(), w.begin() + 16), "MPA ID Rep Frame");
	EXPECT_EQ(w[16], 0x80 | 0x10); // M and E
	EXPECT_EQ(w[17], 2);
	EXPECT_EQ(w[19], 4); // PD_Length counts the IRD/ORD word
	EXPECT_EQ(w[20], 0x80 | 0x40 | 0x12); // P2P, Send RTR, IRD high bits
	EXPECT_EQ(w[21], 0x34);
	EXPECT_EQ(w[22], 0x40); // Read RTR, ORD high bits 0
	EXPECT_EQ(w[23], 0x05);
}

TEST(MpaFrame, RoundTripAllFlagCombinations)
{
	std::mt19937 rng(7);
	std::vector<uint8_t> pd(IWARP_MPA_MAX_PDATA);
	for (auto &b : pd)
		b = (uint8_t)rng();
	for (uint8_t kind : {IWARP_MPA_REQUEST, IWARP_MPA_REPLY})
		for (uint8_t rev : {1, 2})
			for (int bits = 0; bits < 64; bits++) {
				iwarp_mpa_rr rr = make(kind, rev);
				rr.markers = bits & 1;
				rr.crc = bits & 2;
				rr.reject = (bits & 4) && kind == IWARP_MPA_REPLY;
				rr.enhanced = (bits & 8) && rev == 2;
				rr.p2p = bits & 16;
				rr.rtr = (uint8_t)(rng() & 7);
				rr.ird = (uint16_t)(rng() & 0x3fff);
				rr.ord = (uint16_t)(rng() & 0x3fff);
				size_t max = IWARP_MPA_MAX_PDATA - (rr.enhanced ? 4 : 0);
				rr.ulp_pdata_len = (uint16_t)((bits & 32) ? max : rng() % 40);
				rr.ulp_pdata = pd.data();
				auto w = encode(rr);
				iwarp_mpa_rr back;
				ASSERT_EQ(iwarp_mpa_rr_parse(w.data(), w.size(), &back), (int)w.size());
				expect_same(rr, back);
				EXPECT_EQ(back.pd_len, rr.ulp_pdata_len + (rr.enhanced ? 4 : 0));
				EXPECT_EQ(iwarp_mpa_rr_frame_len(w.data(), w.size()), (int)w.size());
			}
}

TEST(MpaFrame, ParseIgnoresBytesAfterFrame)
{
	iwarp_mpa_rr rr = make(IWARP_MPA_REQUEST, 2);
	rr.enhanced = true;
	auto w = encode(rr);
	size_t n = w.size();
	w.push_back(0x00); // e.g. a first FPDU right behind the frame
	w.push_back(0x12);
	iwarp_mpa_rr back;
	EXPECT_EQ(iwarp_mpa_rr_parse(w.data(), w.size(), &back), (int)n);
}

TEST(MpaFrame, RejectsBadKey)
{
	auto w = encode(make(IWARP_MPA_REQUEST, 1));
	iwarp_mpa_rr back;
	for (size_t i = 0; i < IWARP_MPA_KEY_LEN; i++) {
		auto bad = w;
		bad[i] ^= 0x20;
		EXPECT_EQ(iwarp_mpa_rr_parse(bad.data(), bad.size(), &back), IWARP_ERR_BAD_KEY)
			<< "byte " << i;
	}
}

TEST(MpaFrame, RejectsBadRevision)
{
	auto w = encode(make(IWARP_MPA_REQUEST, 1));
	iwarp_mpa_rr back;
	for (int rev : {0, 3, 4, 0x80, 0xff}) {
		w[17] = (uint8_t)rev;
		EXPECT_EQ(iwarp_mpa_rr_parse(w.data(), w.size(), &back), IWARP_ERR_BAD_REV)
			<< "rev " << rev;
	}
}

TEST(MpaFrame, RejectsReservedBits)
{
	iwarp_mpa_rr back;
	auto v1 = encode(make(IWARP_MPA_REPLY, 1));
	for (uint8_t bit : {0x10, 0x08, 0x04, 0x02, 0x01}) {
		auto bad = v1;
		bad[16] |= bit;
		EXPECT_EQ(iwarp_mpa_rr_parse(bad.data(), bad.size(), &back), IWARP_ERR_RESERVED)
			<< "v1 bit " << (int)bit;
		// Lenient parsing reports the bits but accepts the frame; E is
		// only a flag in rev 2, so in rev 1 it never turns "enhanced" on.
		EXPECT_EQ(iwarp_mpa_rr_parse_ex(bad.data(), bad.size(),
						IWARP_MPA_PARSE_IGNORE_RESERVED, &back),
			  (int)bad.size());
		EXPECT_EQ(back.res_bits, bit);
		EXPECT_FALSE(back.enhanced);
	}
	iwarp_mpa_rr v2rr = make(IWARP_MPA_REPLY, 2);
	v2rr.enhanced = true;
	auto v2 = encode(v2rr);
	for (uint8_t bit : {0x08, 0x04, 0x02, 0x01}) {
		auto bad = v2;
		bad[16] |= bit;
		EXPECT_EQ(iwarp_mpa_rr_parse(bad.data(), bad.size(), &back), IWARP_ERR_RESERVED);
	}
	// The Reject flag has no meaning in a Request.
	auto req = encode(make(IWARP_MPA_REQUEST, 2));
	req[16] |= IWARP_MPA_FLAG_R;
	EXPECT_EQ(iwarp_mpa_rr_parse(req.data(), req.size(), &back), IWARP_ERR_RESERVED);
}

// swiwarp's large-FPDU announcement counts only beside the RFC 7306 bit of
// the frame's own kind: upstream siw echoes a Request's Res bits into its
// Reply, so a Reply carrying our Request's bits says nothing.
TEST(MpaFrame, LargeFpduAnnouncement)
{
	const uint8_t req = IWARP_MPA_FLAG_RFC7306_REQ | IWARP_MPA_FLAG_LARGE_FPDU;
	const uint8_t rep = IWARP_MPA_FLAG_RFC7306_REP | IWARP_MPA_FLAG_LARGE_FPDU;
	EXPECT_TRUE(iwarp_mpa_peer_large_fpdu(req, false));
	EXPECT_TRUE(iwarp_mpa_peer_large_fpdu(rep, true));
	EXPECT_FALSE(iwarp_mpa_peer_large_fpdu(req, true)) << "siw's echo";
	EXPECT_FALSE(iwarp_mpa_peer_large_fpdu(req | IWARP_MPA_FLAG_SIW_GSO, true));
	EXPECT_FALSE(iwarp_mpa_peer_large_fpdu(IWARP_MPA_FLAG_LARGE_FPDU, false));
	EXPECT_FALSE(iwarp_mpa_peer_large_fpdu(IWARP_MPA_FLAG_RFC7306_REQ, false));
	EXPECT_FALSE(iwarp_mpa_peer_large_fpdu(IWARP_MPA_FLAG_RFC7306_REP, true));
	// The bits survive the wire in both revisions (set after encoding, as
	// the kernel does, and read back by the lenient parser).
	for (uint8_t rev : {1, 2}) {
		auto w = encode(make(IWARP_MPA_REPLY, rev));
		iwarp_mpa_rr back;
		w[16] |= rep;
		ASSERT_EQ(iwarp_mpa_rr_parse_ex(w.data(), w.size(), IWARP_MPA_PARSE_IGNORE_RESERVED,
						&back),
			  (int)w.size());
		EXPECT_TRUE(iwarp_mpa_peer_large_fpdu(back.res_bits, true)) << "rev " << (int)rev;
	}
}

TEST(MpaFrame, RejectsOverlongPrivateData)
{
	std::vector<uint8_t> w(IWARP_MPA_RR_HDR_LEN + 600, 0);
	memcpy(w.data(), IWARP_MPA_KEY_REQ, 16);
	w[17] = 1;
	iwarp_mpa_rr back;
	for (unsigned pd : {513u, 600u, 0xffffu}) {
		w[18] = (uint8_t)(pd >> 8);
		w[19] = (uint8_t)pd;
		EXPECT_EQ(iwarp_mpa_rr_parse(w.data(), w.size(), &back), IWARP_ERR_TOO_LONG);
	}
	w[18] = 0x02; // 512 exactly is fine
	w[19] = 0x00;
	EXPECT_EQ(iwarp_mpa_rr_parse(w.data(), w.size(), &back), 20 + 512);
}

TEST(MpaFrame, TruncatedAtEveryLength)
{
	iwarp_mpa_rr rr = make(IWARP_MPA_REQUEST, 2);
	rr.enhanced = true;
	const uint8_t pd[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	rr.ulp_pdata = pd;
	rr.ulp_pdata_len = sizeof(pd);
	auto w = encode(rr);
	iwarp_mpa_rr back;
	for (size_t len = 0; len < w.size(); len++) {
		// Exact-size copies so a sanitizer would catch any over-read.
		std::vector<uint8_t> part(w.begin(), w.begin() + len);
		EXPECT_EQ(iwarp_mpa_rr_parse(part.data(), part.size(), &back),
			  IWARP_ERR_TRUNCATED)
			<< "len " << len;
	}
	EXPECT_EQ(iwarp_mpa_rr_frame_len(w.data(), 19), IWARP_ERR_TRUNCATED);
}

TEST(MpaFrame, EnhancedNeedsIrdOrdWord)
{
	auto w = encode(make(IWARP_MPA_REQUEST, 2));
	w[16] |= IWARP_MPA_FLAG_E;
	iwarp_mpa_rr back;
	for (int pd = 0; pd < 4; pd++) {
		auto bad = w;
		bad[19] = (uint8_t)pd;
		bad.resize(20 + pd, 0);
		EXPECT_EQ(iwarp_mpa_rr_parse(bad.data(), bad.size(), &back), IWARP_ERR_V2_PDATA);
	}
}

TEST(MpaFrame, EncodeRejectsInvalidInput)
{
	uint8_t out[600];
	std::vector<uint8_t> pd(600, 0);
	iwarp_mpa_rr rr = make(IWARP_MPA_REQUEST, 1);
	rr.ulp_pdata = pd.data();
	rr.ulp_pdata_len = 513;
	EXPECT_EQ(iwarp_mpa_rr_encode(&rr, out, sizeof(out)), IWARP_ERR_TOO_LONG);
	rr = make(IWARP_MPA_REQUEST, 2);
	rr.enhanced = true;
	rr.ulp_pdata = pd.data();
	rr.ulp_pdata_len = 509; // + 4-byte word = 513
	EXPECT_EQ(iwarp_mpa_rr_encode(&rr, out, sizeof(out)), IWARP_ERR_TOO_LONG);
	rr.ulp_pdata_len = 508;
	EXPECT_EQ(iwarp_mpa_rr_encode(&rr, out, sizeof(out)), 532);
	EXPECT_EQ(iwarp_mpa_rr_encode(&rr, out, 531), IWARP_ERR_NOSPACE);
	rr.ird = 0x4000;
	EXPECT_EQ(iwarp_mpa_rr_encode(&rr, out, sizeof(out)), IWARP_ERR_INVAL);
	rr = make(IWARP_MPA_REQUEST, 1);
	rr.enhanced = true; // E needs rev 2
	EXPECT_EQ(iwarp_mpa_rr_encode(&rr, out, sizeof(out)), IWARP_ERR_INVAL);
	rr = make(IWARP_MPA_REQUEST, 1);
	rr.reject = true;
	EXPECT_EQ(iwarp_mpa_rr_encode(&rr, out, sizeof(out)), IWARP_ERR_INVAL);
	rr = make(IWARP_MPA_REQUEST, 3);
	EXPECT_EQ(iwarp_mpa_rr_encode(&rr, out, sizeof(out)), IWARP_ERR_INVAL);
	rr = make(0, 1);
	EXPECT_EQ(iwarp_mpa_rr_encode(&rr, out, sizeof(out)), IWARP_ERR_INVAL);
}

// ---- FPDU framing -------------------------------------------------------

TEST(MpaFpdu, PadAndLength)
{
	// 2 + ulpdu + pad must be a multiple of 4.
	for (uint32_t n = 0; n < 64; n++) {
		uint32_t pad = iwarp_mpa_pad_len(n);
		EXPECT_LT(pad, 4u);
		EXPECT_EQ((2 + n + pad) % 4, 0u) << n;
		EXPECT_EQ(iwarp_fpdu_len(n), 2 + n + pad + 4);
	}
	EXPECT_EQ(iwarp_mpa_pad_len(2), 0u);
	EXPECT_EQ(iwarp_mpa_pad_len(0), 2u);
	EXPECT_EQ(iwarp_fpdu_len(18), 24u); // a zero-length Send
	EXPECT_EQ(iwarp_fpdu_len(65535), 65544u);
}

TEST(MpaFpdu, Mulpdu)
{
	// RFC 5044 section 4.2/11.1 arithmetic for common MSS values.
	EXPECT_EQ(iwarp_mpa_mulpdu(1460, false), 1454u);
	EXPECT_EQ(iwarp_mpa_mulpdu(1460, true), 1460u - (6 + 4 * 3));
	EXPECT_EQ(iwarp_mpa_mulpdu(1448, false), 1442u);
	EXPECT_EQ(iwarp_mpa_mulpdu(1450, false), 1450u - 8);
	EXPECT_EQ(iwarp_mpa_mulpdu(8948, true), 8948u - (6 + 4 * 18));
	EXPECT_EQ(iwarp_mpa_mulpdu(6, false), 0u);
	// A full FPDU of MULPDU octets fits the segment.
	for (uint32_t emss = 64; emss < 9000; emss += 7)
		EXPECT_LE(iwarp_fpdu_len(iwarp_mpa_mulpdu(emss, false)), emss) << emss;
}

TEST(MpaFpdu, EncodeParseRoundTripWithCrc)
{
	std::mt19937 rng(5);
	for (size_t n = 0; n < 100; n++) {
		std::vector<uint8_t> ulpdu(n);
		for (auto &b : ulpdu)
			b = (uint8_t)rng();
		std::vector<uint8_t> w(iwarp_fpdu_len((uint32_t)n));
		ASSERT_EQ(iwarp_fpdu_encode(w.data(), w.size(), ulpdu.data(), n, true),
			  (int)w.size());
		// Pad is zero, CRC covers everything before it.
		for (size_t i = 2 + n; i < w.size() - 4; i++)
			EXPECT_EQ(w[i], 0);
		EXPECT_EQ(iwarp_crc32c_get(w.data() + w.size() - 4),
			  iwarp_crc32c(w.data(), w.size() - 4));
		iwarp_fpdu f;
		ASSERT_EQ(iwarp_fpdu_check(w.data(), w.size(), true, &f), (int)w.size());
		EXPECT_TRUE(f.crc_ok);
		EXPECT_EQ(f.ulpdu_len, n);
		EXPECT_EQ(f.pad_len, iwarp_mpa_pad_len((uint32_t)n));
		if (n) {
			EXPECT_EQ(0, memcmp(f.ulpdu, ulpdu.data(), n));
		}
	}
}

TEST(MpaFpdu, CrcMismatchDetectedOnlyWhenNegotiated)
{
	const uint8_t ulpdu[20] = {0x41, 0x43};
	uint8_t w[32];
	int n = iwarp_fpdu_encode(w, sizeof(w), ulpdu, sizeof(ulpdu), true);
	ASSERT_EQ(n, 28);
	iwarp_fpdu f;
	for (int i = 0; i < n; i++) {
		if (i < 2)
			continue; // flipping the length changes the framing itself
		w[i] ^= 0x01;
		EXPECT_EQ(iwarp_fpdu_check(w, (size_t)n, true, &f), IWARP_ERR_CRC) << i;
		EXPECT_EQ(iwarp_fpdu_check(w, (size_t)n, false, &f), n) << i;
		EXPECT_FALSE(f.crc_ok);
		w[i] ^= 0x01;
	}
	// Without CRC the field is present but zero.
	n = iwarp_fpdu_encode(w, sizeof(w), ulpdu, sizeof(ulpdu), false);
	EXPECT_EQ(n, 28);
	EXPECT_EQ(iwarp_crc32c_get(w + 24), 0u);
}

TEST(MpaFpdu, TruncatedAndNoSpace)
{
	uint8_t ulpdu[30] = {};
	uint8_t w[40];
	int n = iwarp_fpdu_encode(w, sizeof(w), ulpdu, sizeof(ulpdu), true);
	ASSERT_EQ(n, 36);
	iwarp_fpdu f;
	for (int len = 0; len < n; len++) {
		std::vector<uint8_t> part(w, w + len);
		EXPECT_EQ(iwarp_fpdu_parse(part.data(), part.size(), &f), IWARP_ERR_TRUNCATED);
	}
	EXPECT_EQ(iwarp_fpdu_encode(w, 35, ulpdu, sizeof(ulpdu), true), IWARP_ERR_NOSPACE);
	std::vector<uint8_t> big(70000);
	EXPECT_EQ(iwarp_fpdu_encode(big.data(), big.size(), big.data(), 65536, false),
		  IWARP_ERR_TOO_LONG);
}

// The key alone tells a Request from a Reply (RFC 5044 section 7.1); the
// flags, revision and PD_Length follow it at octets 16, 17 and 18.
TEST(MpaFrame, KeyKindAndFieldOffsets)
{
	const std::string req = "MPA ID Req Frame", rep = "MPA ID Rep Frame";
	std::string other = req;

	other[15] = 'X';
	EXPECT_EQ(iwarp_mpa_key_kind((const uint8_t *)req.data(), req.size()), IWARP_MPA_REQUEST);
	EXPECT_EQ(iwarp_mpa_key_kind((const uint8_t *)rep.data(), rep.size()), IWARP_MPA_REPLY);
	EXPECT_EQ(iwarp_mpa_key_kind((const uint8_t *)other.data(), other.size()), 0);
	EXPECT_EQ(iwarp_mpa_key_kind((const uint8_t *)req.data(), req.size() - 1), 0);

	EXPECT_EQ(IWARP_MPA_RR_FLAGS_OFF, 16);
	EXPECT_EQ(IWARP_MPA_RR_REV_OFF, 17);
	EXPECT_EQ(IWARP_MPA_RR_PDLEN_OFF, 18);
	EXPECT_EQ(IWARP_MPA_RR_PDLEN_OFF + 2, IWARP_MPA_RR_HDR_LEN);

	iwarp_mpa_rr rr = make(IWARP_MPA_REPLY, IWARP_MPA_REV2);
	rr.crc = true;
	rr.enhanced = true;
	auto b = encode(rr);
	ASSERT_EQ(b.size(), (size_t)IWARP_MPA_RR_HDR_LEN + IWARP_MPA_V2_WORD_LEN);
	EXPECT_EQ(iwarp_mpa_key_kind(b.data(), b.size()), IWARP_MPA_REPLY);
	EXPECT_EQ(b[IWARP_MPA_RR_FLAGS_OFF], IWARP_MPA_FLAG_C | IWARP_MPA_FLAG_E);
	EXPECT_EQ(b[IWARP_MPA_RR_REV_OFF], IWARP_MPA_REV2);
	EXPECT_EQ(iwarp_get_be16(b.data() + IWARP_MPA_RR_PDLEN_OFF), IWARP_MPA_V2_WORD_LEN);
}
