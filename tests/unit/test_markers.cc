// MPA markers (RFC 5044 section 5): positions, counts, insertion/removal,
// markers inside the MPA/DDP headers, and 32-bit sequence wrap.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include <iwarp/markers.h>

namespace {

// Brute-force model: walk the TCP stream octet by octet from fpdu_start;
// wherever (seq - base) is a multiple of 512 a marker goes, otherwise the
// next FPDU octet.  Stop when all FPDU octets are placed.  Returns the
// wire offsets of the markers.
std::vector<uint32_t> model_markers(uint32_t base, uint32_t start, uint32_t unmarked)
{
	std::vector<uint32_t> offs;
	uint32_t placed = 0, w = 0;
	while (placed < unmarked) {
		uint32_t seq = start + w;
		if (((seq - base) % 512) == 0) {
			offs.push_back(w);
			w += 4;
		} else {
			placed++;
			w++;
		}
	}
	return offs;
}

std::vector<uint8_t> make_fpdu(size_t ulpdu_len, uint8_t seed)
{
	std::vector<uint8_t> ulpdu(ulpdu_len);
	for (size_t i = 0; i < ulpdu_len; i++)
		ulpdu[i] = (uint8_t)(seed + i * 7);
	std::vector<uint8_t> f(iwarp_fpdu_len((uint32_t)ulpdu_len));
	EXPECT_EQ(iwarp_fpdu_encode(f.data(), f.size(), ulpdu.data(), ulpdu_len, true),
		  (int)f.size());
	return f;
}

std::vector<uint8_t> insert(uint32_t base, uint32_t start, const std::vector<uint8_t> &f)
{
	std::vector<uint8_t> w(f.size() + 4 * (f.size() / 508 + 2));
	int n = iwarp_markers_insert(base, start, f.data(), f.size(), true, w.data(), w.size());
	EXPECT_GT(n, 0) << iwarp_strerror(n);
	w.resize(n > 0 ? (size_t)n : 0);
	return w;
}

} // namespace

TEST(MpaMarkers, FirstOffset)
{
	EXPECT_EQ(iwarp_marker_first_offset(1000, 1000), 0u);
	EXPECT_EQ(iwarp_marker_first_offset(1000, 1004), 508u);
	EXPECT_EQ(iwarp_marker_first_offset(1000, 1000 + 512), 0u);
	EXPECT_EQ(iwarp_marker_first_offset(1000, 1000 + 1020), 4u);
	// Across the 2^32 wrap.
	EXPECT_EQ(iwarp_marker_first_offset(0xfffffff0u, 0x00000000u), 496u);
	EXPECT_EQ(iwarp_marker_first_offset(0xfffffff0u, 0x000001f0u), 0u);
}

TEST(MpaMarkers, CountsMatchStreamModel)
{
	std::mt19937 rng(42);
	const uint32_t bases[] = {0, 1000, 0xfffff000u, 0xffffffe0u, 0x80000000u};
	for (uint32_t base : bases)
		for (int i = 0; i < 400; i++) {
			uint32_t start = base + 4 * (uint32_t)(rng() % 5000);
			uint32_t ulpdu = (uint32_t)(rng() % 3000);
			uint32_t un = iwarp_fpdu_len(ulpdu);
			auto model = model_markers(base, start, un);
			ASSERT_EQ(iwarp_markers_in_fpdu(base, start, un), model.size())
				<< base << " " << start << " " << un;
			std::vector<uint32_t> offs(model.size() + 1);
			ASSERT_EQ(iwarp_marker_offsets(base, start, un, offs.data(), offs.size()),
				  model.size());
			for (size_t k = 0; k < model.size(); k++)
				EXPECT_EQ(offs[k], model[k]);
			EXPECT_EQ(iwarp_fpdu_marked_len(base, start, un), un + 4 * model.size());
		}
}

TEST(MpaMarkers, MarkerAtFpduStartHasZeroPointer)
{
	// The first FPDU of full operation begins with a marker.
	auto f = make_fpdu(30, 1);
	auto w = insert(5000, 5000, f);
	ASSERT_EQ(w.size(), f.size() + 4);
	EXPECT_EQ(iwarp_get_be16(w.data()), 0);	    // reserved
	EXPECT_EQ(iwarp_get_be16(w.data() + 2), 0); // FPDUPTR
	EXPECT_EQ(0, memcmp(w.data() + 4, f.data(), f.size() - 4));
}

TEST(MpaMarkers, MarkerInsideMpaAndDdpHeaders)
{
	// FPDU starting 4 octets before a marker position: the marker falls
	// between ULPDU_LENGTH+DDP control and the rest of the DDP header.
	const uint32_t base = 0;
	for (uint32_t before : {4u, 8u, 12u, 16u}) {
		auto f = make_fpdu(18, 2);
		uint32_t start = 512 - before;
		auto w = insert(base, start, f);
		ASSERT_EQ(w.size(), f.size() + 4);
		EXPECT_EQ(iwarp_get_be16(w.data() + before + 2), before) << "FPDUPTR";
		EXPECT_EQ(0, memcmp(w.data(), f.data(), before));
		EXPECT_EQ(0, memcmp(w.data() + before + 4, f.data() + before,
				    f.size() - before - 4));
		std::vector<uint8_t> out(f.size());
		iwarp_marked_fpdu info;
		ASSERT_EQ(iwarp_markers_strip(base, start, w.data(), w.size(), out.data(),
					      out.size(), &info),
			  (int)f.size());
		EXPECT_EQ(info.markers, 1u);
		EXPECT_TRUE(info.crc_ok);
		EXPECT_EQ(0, memcmp(out.data(), f.data(), f.size() - 4));
	}
}

TEST(MpaMarkers, MarkerRightAfterFpduBelongsToNext)
{
	// 4 + 508 = 512: the FPDU ends exactly on a marker position.
	const uint32_t base = 0, start = 4;
	uint32_t ulpdu = 508 - 2 - 4; // 502, fpdu_len 508
	ASSERT_EQ(iwarp_fpdu_len(ulpdu), 508u);
	EXPECT_EQ(iwarp_markers_in_fpdu(base, start, 508), 0u);
	EXPECT_EQ(iwarp_markers_in_fpdu(base, start, 512), 1u);
	// The next FPDU starts with that marker.
	EXPECT_EQ(iwarp_marker_first_offset(base, 512), 0u);
	EXPECT_EQ(iwarp_markers_in_fpdu(base, 512, 24), 1u);
}

TEST(MpaMarkers, MarkerBeforeCrcIsCrcCovered)
{
	// Choose start so a marker lands right before the CRC field.
	auto f = make_fpdu(26, 3); // 32 octets, CRC at 28
	uint32_t start = 512 - 28;
	auto w = insert(0, start, f);
	ASSERT_EQ(w.size(), 36u);
	EXPECT_EQ(iwarp_get_be16(w.data() + 30), 28);
	EXPECT_EQ(iwarp_crc32c_get(w.data() + 32), iwarp_crc32c(w.data(), 32));
}

TEST(MpaMarkers, RoundTripAcrossSequenceWrap)
{
	std::mt19937 rng(3);
	const uint32_t base = 0xffff0000u;
	uint32_t seq = base;
	std::vector<uint8_t> stream;
	std::vector<std::vector<uint8_t>> fpdus;
	// Enough FPDUs to cross 2^32 several hundred octets deep.
	while (seq - base < 0x10000u + 9000u) {
		auto f = make_fpdu(rng() % 2000, (uint8_t)rng());
		auto w = insert(base, seq, f);
		// CRC covers the marked bytes.
		EXPECT_EQ(iwarp_crc32c_get(w.data() + w.size() - 4),
			  iwarp_crc32c(w.data(), w.size() - 4));
		stream.insert(stream.end(), w.begin(), w.end());
		seq += (uint32_t)w.size();
		fpdus.push_back(f);
	}
	ASSERT_LT(seq, base) << "stream must wrap";
	// Now read it back as a receiver would.
	size_t pos = 0;
	seq = base;
	std::vector<uint8_t> out(70000);
	for (const auto &f : fpdus) {
		iwarp_marked_fpdu info;
		int n = iwarp_markers_strip(base, seq, stream.data() + pos, stream.size() - pos,
					    out.data(), out.size(), &info);
		ASSERT_EQ(n, (int)f.size());
		EXPECT_EQ(0, memcmp(out.data(), f.data(), f.size() - 4));
		EXPECT_TRUE(info.crc_ok);
		EXPECT_EQ(info.markers, iwarp_markers_in_fpdu(base, seq, (uint32_t)f.size()));
		pos += info.wire_len;
		seq += info.wire_len;
	}
	EXPECT_EQ(pos, stream.size());
}

TEST(MpaMarkers, StripRejectsBadPointer)
{
	auto f = make_fpdu(1000, 4);
	auto w = insert(0, 0, f);
	std::vector<uint8_t> out(f.size());
	iwarp_marked_fpdu info;
	auto bad = w;
	bad[3] = 4; // first marker claims the FPDU started 4 octets earlier
	EXPECT_EQ(iwarp_markers_strip(0, 0, bad.data(), bad.size(), out.data(), out.size(),
				      &info),
		  IWARP_ERR_MARKER);
	bad = w;
	bad[512 + 2] ^= 0x01; // second marker at wire offset 512
	EXPECT_EQ(iwarp_markers_strip(0, 0, bad.data(), bad.size(), out.data(), out.size(),
				      &info),
		  IWARP_ERR_MARKER);
	// Low two bits and the reserved half are ignored by receivers.
	bad = w;
	bad[512 + 3] |= 0x03;
	bad[512] = 0xff;
	EXPECT_EQ(iwarp_markers_strip(0, 0, bad.data(), bad.size(), out.data(), out.size(),
				      &info),
		  (int)f.size());
	EXPECT_FALSE(info.crc_ok); // but the CRC covers the marker octets
}

TEST(MpaMarkers, StripTruncatedAndNoSpace)
{
	auto f = make_fpdu(600, 5);
	auto w = insert(0, 508, f);
	std::vector<uint8_t> out(f.size());
	iwarp_marked_fpdu info;
	for (size_t len = 0; len < w.size(); len++) {
		std::vector<uint8_t> part(w.begin(), w.begin() + len);
		ASSERT_EQ(iwarp_markers_strip(0, 508, part.data(), part.size(), out.data(),
					      out.size(), &info),
			  IWARP_ERR_TRUNCATED)
			<< len;
	}
	EXPECT_EQ(iwarp_markers_strip(0, 508, w.data(), w.size(), out.data(), out.size() - 1,
				      &info),
		  IWARP_ERR_NOSPACE);
}

TEST(MpaMarkers, InvalidArguments)
{
	auto f = make_fpdu(10, 6);
	std::vector<uint8_t> w(64), out(64);
	iwarp_marked_fpdu info;
	EXPECT_EQ(iwarp_markers_insert(0, 2, f.data(), f.size(), true, w.data(), w.size()),
		  IWARP_ERR_INVAL);
	EXPECT_EQ(iwarp_markers_insert(0, 0, f.data(), f.size() - 1, true, w.data(), w.size()),
		  IWARP_ERR_INVAL);
	EXPECT_EQ(iwarp_markers_insert(0, 0, f.data(), f.size(), true, w.data(), f.size()),
		  IWARP_ERR_NOSPACE);
	EXPECT_EQ(iwarp_markers_strip(0, 6, w.data(), w.size(), out.data(), out.size(), &info),
		  IWARP_ERR_INVAL);
}

TEST(MpaMarkers, PointerOverflowRefused)
{
	// The largest FPDU, starting just after a marker position, would need
	// a marker more than 65535 octets in: FPDUPTR cannot express that.
	auto f = make_fpdu(65535, 7);
	std::vector<uint8_t> w(f.size() + 4 * 200);
	EXPECT_EQ(iwarp_markers_insert(0, 4, f.data(), f.size(), true, w.data(), w.size()),
		  IWARP_ERR_TOO_LONG);
}

// Marker layout (RFC 5044 section 4.3): 16 reserved bits, then the 16-bit
// FPDUPTR, whose two low bits receivers ignore.
TEST(Markers, Layout)
{
	EXPECT_EQ(IWARP_MPA_MARKER_RSVD_LEN, 2);
	EXPECT_EQ(IWARP_MPA_MARKER_PTR_OFF, IWARP_MPA_MARKER_RSVD_LEN);
	EXPECT_EQ(IWARP_MPA_MARKER_PTR_OFF + IWARP_MPA_MARKER_PTR_LEN, IWARP_MPA_MARKER_LEN);
	EXPECT_EQ(IWARP_MPA_MARKER_PTR_IGNORED, 3U);
}
