// MPA v1/v2 negotiation: responder computes the Reply from its policy and
// the Request; the initiator validates the Reply.  Each case goes through
// the wire (encode -> parse) so both halves and the codec are exercised.
#include <gtest/gtest.h>

#include <vector>

#include <iwarp/mpa.h>

namespace {

iwarp_mpa_policy policy(uint8_t rev, uint8_t crc)
{
	iwarp_mpa_policy p{};
	p.max_rev = rev;
	p.crc = crc;
	p.ird = 16;
	p.ord = 16;
	p.rtr_mask = IWARP_MPA_RTR_ALL;
	return p;
}

struct Outcome {
	int responder_rc;
	int initiator_rc;
	iwarp_mpa_result resp;
	iwarp_mpa_result init;
	iwarp_mpa_rr rep;
	// The parsed reply's ulp_pdata points into the received bytes, so the
	// outcome keeps its own copy of them: exchange()'s buffers are gone.
	std::vector<uint8_t> rep_wire;
};

// Full exchange through encoded bytes.
Outcome exchange(const iwarp_mpa_policy &ini, const iwarp_mpa_policy &rsp)
{
	Outcome o{};
	iwarp_mpa_rr req{}, req_rx{}, rep{}, rep_rx{};
	std::vector<uint8_t> wreq(600), wrep(600);

	EXPECT_EQ(iwarp_mpa_init_request(&ini, nullptr, 0, &req), IWARP_OK);
	int n = iwarp_mpa_rr_encode(&req, wreq.data(), wreq.size());
	EXPECT_GT(n, 0);
	EXPECT_EQ(iwarp_mpa_rr_parse(wreq.data(), (size_t)n, &req_rx), n);

	static const uint8_t pd[] = {'o', 'k'};
	o.responder_rc = iwarp_mpa_negotiate_reply(&rsp, &req_rx, pd, 2, &rep, &o.resp);
	n = iwarp_mpa_rr_encode(&rep, wrep.data(), wrep.size());
	EXPECT_GT(n, 0);
	EXPECT_EQ(iwarp_mpa_rr_parse(wrep.data(), (size_t)n, &rep_rx), n);
	o.rep_wire.assign(wrep.begin(), wrep.end());
	o.rep = rep_rx;
	if (rep_rx.ulp_pdata)
		o.rep.ulp_pdata = o.rep_wire.data() + (rep_rx.ulp_pdata - wrep.data());
	o.initiator_rc = iwarp_mpa_check_reply(&ini, &req, &rep_rx, &o.init);
	return o;
}

const char *crc_name(uint8_t p)
{
	return p == IWARP_MPA_CRC_REFUSE ? "refuse" : p == IWARP_MPA_CRC_OFFER ? "offer" : "require";
}

} // namespace

// Every revision and CRC policy pairing (RFC 5044 section 7.1: C from
// either side turns CRC on; a side that refuses CRC must reject).
TEST(MpaNegotiation, RevisionAndCrcMatrix)
{
	const uint8_t crcs[] = {IWARP_MPA_CRC_REFUSE, IWARP_MPA_CRC_OFFER, IWARP_MPA_CRC_REQUIRE};
	for (uint8_t irev : {1, 2})
		for (uint8_t rrev : {1, 2})
			for (uint8_t icrc : crcs)
				for (uint8_t rcrc : crcs) {
					SCOPED_TRACE(testing::Message()
						     << "ini rev " << (int)irev << " " << crc_name(icrc)
						     << ", resp rev " << (int)rrev << " " << crc_name(rcrc));
					Outcome o = exchange(policy(irev, icrc), policy(rrev, rcrc));
					const uint8_t rev = irev < rrev ? irev : rrev;
					const bool want = icrc == IWARP_MPA_CRC_REQUIRE ||
							  rcrc == IWARP_MPA_CRC_REQUIRE;
					EXPECT_EQ(o.rep.rev, rev);
					EXPECT_EQ(o.rep.enhanced, rev == 2);
					if (icrc == IWARP_MPA_CRC_REQUIRE && rcrc == IWARP_MPA_CRC_REFUSE) {
						EXPECT_EQ(o.responder_rc, IWARP_ERR_REJECT);
						EXPECT_TRUE(o.rep.reject);
						EXPECT_EQ(o.initiator_rc, IWARP_ERR_PEER_REJECTED);
						continue;
					}
					ASSERT_EQ(o.responder_rc, IWARP_OK);
					EXPECT_FALSE(o.rep.reject);
					EXPECT_EQ(o.resp.crc, want);
					EXPECT_EQ(o.rep.crc, want);
					if (icrc == IWARP_MPA_CRC_REFUSE && rcrc == IWARP_MPA_CRC_REQUIRE) {
						// Responder insists; initiator cannot live with it.
						EXPECT_EQ(o.initiator_rc, IWARP_ERR_REJECT);
						continue;
					}
					ASSERT_EQ(o.initiator_rc, IWARP_OK);
					EXPECT_EQ(o.init.crc, want);
					EXPECT_EQ(o.init.rev, rev);
					EXPECT_EQ(o.init.enhanced, o.resp.enhanced);
				}
}

TEST(MpaNegotiation, ResponderKeepsRequestCrc)
{
	// A Reply that drops C after the Request set it breaks RFC 5044.
	iwarp_mpa_policy ini = policy(2, IWARP_MPA_CRC_REQUIRE);
	iwarp_mpa_rr req{}, rep{};
	iwarp_mpa_result res;
	ASSERT_EQ(iwarp_mpa_init_request(&ini, nullptr, 0, &req), IWARP_OK);
	ASSERT_TRUE(req.crc);
	rep = req;
	rep.kind = IWARP_MPA_REPLY;
	rep.crc = false;
	rep.p2p = false;
	EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_ERR_MALFORMED);
	EXPECT_EQ(res.term_ecode, IWARP_TERM_MPA_INVALID_RR);
}

// P2P: every offered mask against every accepted mask.
TEST(MpaNegotiation, PeerToPeerRtrMatrix)
{
	for (uint8_t offer = 1; offer <= 7; offer++)
		for (uint8_t accept = 0; accept <= 7; accept++) {
			SCOPED_TRACE(testing::Message() << "offer " << (int)offer << " accept "
							<< (int)accept);
			iwarp_mpa_policy ini = policy(2, IWARP_MPA_CRC_OFFER);
			ini.p2p = true;
			ini.rtr_mask = offer;
			iwarp_mpa_policy rsp = policy(2, IWARP_MPA_CRC_OFFER);
			rsp.p2p = true;
			rsp.rtr_mask = accept;
			Outcome o = exchange(ini, rsp);
			const uint8_t common = offer & accept;
			uint8_t expect = 0;
			if (common & IWARP_MPA_RTR_WRITE)
				expect = IWARP_MPA_RTR_WRITE;
			else if (common & IWARP_MPA_RTR_READ)
				expect = IWARP_MPA_RTR_READ;
			else if (common & IWARP_MPA_RTR_SEND)
				expect = IWARP_MPA_RTR_SEND;
			if (!expect) {
				EXPECT_EQ(o.responder_rc, IWARP_ERR_REJECT);
				EXPECT_EQ(o.resp.term_ecode, IWARP_TERM_MPA_NO_MATCHING_RTR);
				EXPECT_EQ(o.initiator_rc, IWARP_ERR_PEER_REJECTED);
				continue;
			}
			ASSERT_EQ(o.responder_rc, IWARP_OK);
			EXPECT_TRUE(o.rep.p2p);
			EXPECT_EQ(o.rep.rtr, expect);
			ASSERT_EQ(o.initiator_rc, IWARP_OK);
			EXPECT_TRUE(o.init.p2p);
			EXPECT_EQ(o.init.rtr, expect);
			EXPECT_EQ(o.resp.rtr, expect);
		}
}

TEST(MpaNegotiation, ResponderWithoutP2pRejectsP2pRequest)
{
	iwarp_mpa_policy ini = policy(2, IWARP_MPA_CRC_OFFER);
	ini.p2p = true;
	iwarp_mpa_policy rsp = policy(2, IWARP_MPA_CRC_OFFER);
	rsp.p2p = false;
	Outcome o = exchange(ini, rsp);
	EXPECT_EQ(o.responder_rc, IWARP_ERR_REJECT);
	EXPECT_EQ(o.resp.term_ecode, IWARP_TERM_MPA_NO_MATCHING_RTR);
}

TEST(MpaNegotiation, NoP2pWhenInitiatorDoesNotAsk)
{
	iwarp_mpa_policy ini = policy(2, IWARP_MPA_CRC_OFFER);
	iwarp_mpa_policy rsp = policy(2, IWARP_MPA_CRC_OFFER);
	rsp.p2p = true;
	Outcome o = exchange(ini, rsp);
	ASSERT_EQ(o.responder_rc, IWARP_OK);
	ASSERT_EQ(o.initiator_rc, IWARP_OK);
	EXPECT_FALSE(o.rep.p2p);
	EXPECT_EQ(o.rep.rtr, 0);
	EXPECT_FALSE(o.init.p2p);
}

TEST(MpaNegotiation, P2pNeedsRevision2)
{
	iwarp_mpa_policy ini = policy(2, IWARP_MPA_CRC_OFFER);
	ini.p2p = true;
	iwarp_mpa_policy rsp = policy(1, IWARP_MPA_CRC_OFFER);
	rsp.p2p = true;
	Outcome o = exchange(ini, rsp);
	ASSERT_EQ(o.responder_rc, IWARP_OK);
	EXPECT_EQ(o.rep.rev, 1);
	EXPECT_FALSE(o.rep.enhanced);
	ASSERT_EQ(o.initiator_rc, IWARP_OK);
	EXPECT_FALSE(o.init.p2p); // v1 peer: no RTR, caller decides
	EXPECT_FALSE(o.init.enhanced);
}

TEST(MpaNegotiation, InitiatorRejectsBadRtrChoice)
{
	iwarp_mpa_policy ini = policy(2, IWARP_MPA_CRC_OFFER);
	ini.p2p = true;
	ini.rtr_mask = IWARP_MPA_RTR_READ;
	iwarp_mpa_rr req{};
	ASSERT_EQ(iwarp_mpa_init_request(&ini, nullptr, 0, &req), IWARP_OK);
	iwarp_mpa_rr rep = req;
	rep.kind = IWARP_MPA_REPLY;
	iwarp_mpa_result res;
	for (uint8_t rtr : {0, IWARP_MPA_RTR_WRITE, IWARP_MPA_RTR_SEND,
			    IWARP_MPA_RTR_READ | IWARP_MPA_RTR_WRITE}) {
		rep.rtr = rtr;
		EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_ERR_MALFORMED)
			<< (int)rtr;
		EXPECT_EQ(res.term_ecode, IWARP_TERM_MPA_NO_MATCHING_RTR);
	}
	rep.rtr = IWARP_MPA_RTR_READ;
	EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_OK);
	rep.p2p = false;
	EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_ERR_MALFORMED);
}

TEST(MpaNegotiation, IrdOrd)
{
	struct Case {
		uint16_t ini_ird, ini_ord, rsp_ird, rsp_ord;
		bool relaxed;
		bool ok;
		uint16_t final_ini_ord, final_rsp_ord;
	} cases[] = {
		// Plenty on both sides: each ORD is capped by the peer's IRD.
		{16, 16, 16, 16, false, true, 16, 16},
		{4, 8, 16, 32, false, true, 8, 4},
		// Initiator wants more reads than the responder can take.
		{16, 32, 8, 8, false, false, 0, 0},
		{16, 32, 8, 8, true, true, 8, 8},
		// Zero IRD on one side means no reads toward it.
		{0, 4, 4, 4, false, true, 4, 0},
		// 14-bit maximum survives the wire.
		{0x3fff, 0x3fff, 0x3fff, 0x3fff, false, true, 0x3fff, 0x3fff},
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(testing::Message() << c.ini_ird << "/" << c.ini_ord << " vs "
						<< c.rsp_ird << "/" << c.rsp_ord << " relaxed "
						<< c.relaxed);
		iwarp_mpa_policy ini = policy(2, IWARP_MPA_CRC_OFFER);
		ini.ird = c.ini_ird;
		ini.ord = c.ini_ord;
		ini.relaxed_ird_ord = c.relaxed;
		iwarp_mpa_policy rsp = policy(2, IWARP_MPA_CRC_OFFER);
		rsp.ird = c.rsp_ird;
		rsp.ord = c.rsp_ord;
		rsp.relaxed_ird_ord = c.relaxed;
		Outcome o = exchange(ini, rsp);
		if (!c.ok) {
			EXPECT_EQ(o.responder_rc, IWARP_ERR_REJECT);
			EXPECT_EQ(o.resp.term_ecode, IWARP_TERM_MPA_INSUFFICIENT_IRD);
			continue;
		}
		ASSERT_EQ(o.responder_rc, IWARP_OK);
		ASSERT_EQ(o.initiator_rc, IWARP_OK);
		EXPECT_EQ(o.init.ord, c.final_ini_ord);
		EXPECT_EQ(o.resp.ord, c.final_rsp_ord);
		EXPECT_EQ(o.rep.ird, c.rsp_ird);
		// Neither side may issue more reads than the other can take.
		EXPECT_LE(o.init.ord, o.resp.ird);
		EXPECT_LE(o.resp.ord, o.init.ird);
	}
}

TEST(MpaNegotiation, InitiatorChecksResponderOrd)
{
	iwarp_mpa_policy ini = policy(2, IWARP_MPA_CRC_OFFER);
	ini.ird = 2;
	iwarp_mpa_rr req{};
	ASSERT_EQ(iwarp_mpa_init_request(&ini, nullptr, 0, &req), IWARP_OK);
	iwarp_mpa_rr rep = req;
	rep.kind = IWARP_MPA_REPLY;
	rep.ird = 16;
	rep.ord = 3; // more than our IRD of 2
	iwarp_mpa_result res;
	EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_ERR_REJECT);
	EXPECT_EQ(res.term_ecode, IWARP_TERM_MPA_INSUFFICIENT_IRD);
	rep.ord = 2;
	EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_OK);
}

TEST(MpaNegotiation, MarkersPerDirection)
{
	for (int ini_rx = 0; ini_rx < 2; ini_rx++)
		for (int rsp_rx = 0; rsp_rx < 2; rsp_rx++)
			for (int can_tx = 0; can_tx < 2; can_tx++) {
				SCOPED_TRACE(testing::Message() << ini_rx << rsp_rx << can_tx);
				iwarp_mpa_policy ini = policy(2, IWARP_MPA_CRC_OFFER);
				ini.rx_markers = ini_rx;
				ini.tx_markers_ok = can_tx;
				iwarp_mpa_policy rsp = policy(2, IWARP_MPA_CRC_OFFER);
				rsp.rx_markers = rsp_rx;
				rsp.tx_markers_ok = can_tx;
				Outcome o = exchange(ini, rsp);
				if (ini_rx && !can_tx) {
					EXPECT_EQ(o.responder_rc, IWARP_ERR_REJECT);
					continue;
				}
				ASSERT_EQ(o.responder_rc, IWARP_OK);
				EXPECT_EQ(o.resp.tx_markers, (bool)ini_rx);
				EXPECT_EQ(o.resp.rx_markers, (bool)rsp_rx);
				if (rsp_rx && !can_tx) {
					EXPECT_EQ(o.initiator_rc, IWARP_ERR_REJECT);
					continue;
				}
				ASSERT_EQ(o.initiator_rc, IWARP_OK);
				EXPECT_EQ(o.init.tx_markers, (bool)rsp_rx);
				EXPECT_EQ(o.init.rx_markers, (bool)ini_rx);
			}
}

TEST(MpaNegotiation, ReplyChecks)
{
	iwarp_mpa_policy ini = policy(1, IWARP_MPA_CRC_OFFER);
	iwarp_mpa_rr req{};
	ASSERT_EQ(iwarp_mpa_init_request(&ini, nullptr, 0, &req), IWARP_OK);
	iwarp_mpa_rr rep = req;
	iwarp_mpa_result res;
	// A Request where a Reply is expected.
	EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_ERR_BAD_KEY);
	rep.kind = IWARP_MPA_REPLY;
	EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_OK);
	rep.rev = 2; // higher than what we asked for
	EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_ERR_BAD_REV);
	rep.rev = 1;
	rep.enhanced = true; // E although we did not set it
	EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_ERR_MALFORMED);
	rep.enhanced = false;
	rep.reject = true;
	EXPECT_EQ(iwarp_mpa_check_reply(&ini, &req, &rep, &res), IWARP_ERR_PEER_REJECTED);
}

TEST(MpaNegotiation, RejectCarriesPrivateData)
{
	iwarp_mpa_policy ini = policy(2, IWARP_MPA_CRC_REQUIRE);
	iwarp_mpa_policy rsp = policy(2, IWARP_MPA_CRC_REFUSE);
	Outcome o = exchange(ini, rsp);
	ASSERT_EQ(o.responder_rc, IWARP_ERR_REJECT);
	ASSERT_TRUE(o.rep.reject);
	ASSERT_EQ(o.rep.ulp_pdata_len, 2);
	EXPECT_EQ(o.rep.ulp_pdata[0], 'o');
}

TEST(MpaNegotiation, InvalidArguments)
{
	iwarp_mpa_policy p = policy(3, IWARP_MPA_CRC_OFFER);
	iwarp_mpa_rr req{}, rep{};
	iwarp_mpa_result res;
	EXPECT_EQ(iwarp_mpa_init_request(&p, nullptr, 0, &req), IWARP_ERR_INVAL);
	p = policy(2, IWARP_MPA_CRC_OFFER);
	p.ird = 0x4000;
	EXPECT_EQ(iwarp_mpa_init_request(&p, nullptr, 0, &req), IWARP_ERR_INVAL);
	p = policy(2, IWARP_MPA_CRC_OFFER);
	p.p2p = true;
	p.rtr_mask = 0;
	EXPECT_EQ(iwarp_mpa_init_request(&p, nullptr, 0, &req), IWARP_ERR_INVAL);
	p = policy(2, IWARP_MPA_CRC_OFFER);
	ASSERT_EQ(iwarp_mpa_init_request(&p, nullptr, 0, &req), IWARP_OK);
	req.kind = IWARP_MPA_REPLY; // not a Request
	EXPECT_EQ(iwarp_mpa_negotiate_reply(&p, &req, nullptr, 0, &rep, &res), IWARP_ERR_INVAL);
}
