// The wire core against traffic from an independent implementation:
// a capture of upstream Linux siw (see data/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "pcap_check.h"

namespace {

const std::string kCapture = std::string(WIRE_TEST_DATA_DIR) + "/siw-rping.pcap";

const wirecheck::StreamReport *find(const wirecheck::Report &rep, bool initiator)
{
	for (const auto &s : rep.streams)
		if (s.initiator == initiator)
			return &s;
	return nullptr;
}

} // namespace

TEST(SiwCapture, RpingParsesCleanly)
{
	wirecheck::Report rep;
	ASSERT_TRUE(wirecheck::check_pcap(kCapture, rep)) << wirecheck::format(rep);
	SCOPED_TRACE(wirecheck::format(rep));
	EXPECT_EQ(rep.error_count(), 0u);
	ASSERT_EQ(rep.streams.size(), 2u);
	const auto *ini = find(rep, true);
	const auto *rsp = find(rep, false);
	ASSERT_NE(ini, nullptr);
	ASSERT_NE(rsp, nullptr);
	for (const auto *s : {ini, rsp}) {
		// siw's defaults: rev 2 + enhanced flag, IRD/ORD 1/1, no CRC/markers.
		EXPECT_EQ(s->rev, 2);
		EXPECT_TRUE(s->enhanced);
		EXPECT_EQ(s->ird, 1);
		EXPECT_EQ(s->ord, 1);
		EXPECT_FALSE(s->crc);
		EXPECT_FALSE(s->markers);
		EXPECT_EQ(s->trailing, 0u);
	}
	// rping: the client sends its buffer advert (Send), the server reads
	// it (Read Request -> Read Response), writes back (Write) and both
	// exchange completions (Sends).  Counts as Wireshark reports them.
	EXPECT_EQ(ini->opcodes.at("Send"), 8u);
	EXPECT_EQ(ini->opcodes.at("RDMA Read Response"), 4u);
	EXPECT_EQ(ini->fpdus, 12u);
	EXPECT_EQ(rsp->opcodes.at("Send"), 8u);
	EXPECT_EQ(rsp->opcodes.at("RDMA Read Request"), 4u);
	EXPECT_EQ(rsp->opcodes.at("RDMA Write"), 4u);
	EXPECT_EQ(rsp->fpdus, 16u);
}

TEST(SiwCapture, CorruptedHeaderIsReported)
{
	std::ifstream f(kCapture, std::ios::binary);
	std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	ASSERT_GT(b.size(), 1000u);
	// First untagged Send in the capture: ULPDU_LENGTH, then DDP control
	// 0x41 (L, DV=1) and RDMAP control 0x43 (RV=1, Send).  Make DV 2.
	size_t at = 0;
	for (size_t i = 2; i + 1 < b.size(); i++)
		if (b[i] == 0x41 && b[i + 1] == 0x43 && b[i - 2] == 0x00) {
			at = i;
			break;
		}
	ASSERT_NE(at, 0u);
	b[at] = 0x42;
	const std::string path = testing::TempDir() + "siw-rping-corrupt.pcap";
	std::ofstream(path, std::ios::binary).write((const char *)b.data(), (std::streamsize)b.size());
	wirecheck::Report rep;
	ASSERT_TRUE(wirecheck::check_pcap(path, rep));
	// The bad header, and then the MSN gap it leaves on queue 0.
	EXPECT_EQ(rep.error_count(), 2u) << wirecheck::format(rep);
	EXPECT_NE(wirecheck::format(rep).find("bad DDP/RDMAP version"), std::string::npos)
		<< wirecheck::format(rep);
	std::remove(path.c_str());
}

TEST(SiwCapture, MissingFileIsAnError)
{
	wirecheck::Report rep;
	EXPECT_FALSE(wirecheck::check_pcap("/nonexistent/capture.pcap", rep));
	EXPECT_GT(rep.error_count(), 0u);
}

// swiwarp (initiator, CRC requested) against upstream siw (responder):
// the CRCs siw computed must verify with our CRC32c and wire byte order.
TEST(SiwCapture, CrcFromSiwVerifies)
{
	wirecheck::Report rep;
	ASSERT_TRUE(wirecheck::check_pcap(std::string(WIRE_TEST_DATA_DIR) +
						  "/swiwarp-siw-crc-rping.pcap",
					  rep));
	SCOPED_TRACE(wirecheck::format(rep));
	EXPECT_EQ(rep.error_count(), 0u);
	ASSERT_EQ(rep.streams.size(), 2u);
	const auto *ini = find(rep, true); // swiwarp
	const auto *rsp = find(rep, false); // siw
	ASSERT_NE(ini, nullptr);
	ASSERT_NE(rsp, nullptr);
	EXPECT_TRUE(ini->crc);
	EXPECT_TRUE(rsp->crc);
	EXPECT_EQ(rsp->crc_checked, 20u);
	EXPECT_EQ(rsp->fpdus, 20u);
	EXPECT_EQ(ini->crc_checked, 15u);
	EXPECT_EQ(rsp->opcodes.at("RDMA Read Request"), 5u);
	EXPECT_EQ(rsp->opcodes.at("RDMA Write"), 5u);
	EXPECT_EQ(rsp->opcodes.at("Send"), 10u);
	EXPECT_EQ(ini->opcodes.at("RDMA Read Response"), 5u);
	EXPECT_EQ(ini->opcodes.at("Send"), 10u);
}

TEST(SiwCapture, FlippedBitInSiwFpduFailsCrc)
{
	const std::string src = std::string(WIRE_TEST_DATA_DIR) + "/swiwarp-siw-crc-rping.pcap";
	std::ifstream f(src, std::ios::binary);
	std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	ASSERT_GT(b.size(), 1000u);
	// Flip one bit in the payload of the first rping Send FPDU:
	// ULPDU_LENGTH 34, DDP control 0x41, RDMAP control 0x43 (Send).
	const uint8_t send_hdr[] = {0x00, 0x22, 0x41, 0x43};
	auto it = std::search(b.begin(), b.end(), std::begin(send_hdr), std::end(send_hdr));
	ASSERT_NE(it, b.end());
	it[2 + 18 + 3] ^= 0x01;
	const std::string path = testing::TempDir() + "swiwarp-siw-crc-flip.pcap";
	std::ofstream(path, std::ios::binary).write((const char *)b.data(), (std::streamsize)b.size());
	wirecheck::Report rep;
	ASSERT_TRUE(wirecheck::check_pcap(path, rep));
	EXPECT_NE(wirecheck::format(rep).find("CRC mismatch"), std::string::npos)
		<< wirecheck::format(rep);
	std::remove(path.c_str());
}
