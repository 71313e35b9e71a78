// CRC32c: RFC 3720 Appendix B.4 vectors, an independent bitwise reference,
// the lookup table and the incremental API.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include <iwarp/crc32c.h>

namespace {

// Straightforward bit-at-a-time CRC32c, written from the definition
// (reflected Castagnoli polynomial, preset ~0, final complement).
uint32_t reference_crc32c(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ ((crc & 1u) ? 0x82f63b78u : 0u);
	}
	return ~crc;
}

// RFC 3720 B.4 lists the CRC as the four bytes that go on the wire.
void expect_wire_bytes(const std::vector<uint8_t> &data, uint8_t b0, uint8_t b1,
		       uint8_t b2, uint8_t b3)
{
	uint8_t out[4];
	iwarp_crc32c_put(out, iwarp_crc32c(data.data(), data.size()));
	EXPECT_EQ(out[0], b0);
	EXPECT_EQ(out[1], b1);
	EXPECT_EQ(out[2], b2);
	EXPECT_EQ(out[3], b3);
	EXPECT_EQ(iwarp_crc32c_get(out), iwarp_crc32c(data.data(), data.size()));
}

} // namespace

TEST(Crc32c, Rfc3720ThirtyTwoZeros)
{
	expect_wire_bytes(std::vector<uint8_t>(32, 0x00), 0xaa, 0x36, 0x91, 0x8a);
}

TEST(Crc32c, Rfc3720ThirtyTwoOnes)
{
	expect_wire_bytes(std::vector<uint8_t>(32, 0xff), 0x43, 0xab, 0xa8, 0x62);
}

TEST(Crc32c, Rfc3720Incrementing)
{
	std::vector<uint8_t> d(32);
	for (int i = 0; i < 32; i++)
		d[i] = (uint8_t)i;
	expect_wire_bytes(d, 0x4e, 0x79, 0xdd, 0x46);
}

TEST(Crc32c, Rfc3720Decrementing)
{
	std::vector<uint8_t> d(32);
	for (int i = 0; i < 32; i++)
		d[i] = (uint8_t)(31 - i);
	expect_wire_bytes(d, 0x5c, 0xdb, 0x3f, 0x11);
}

TEST(Crc32c, Rfc3720IscsiReadCommandPdu)
{
	const std::vector<uint8_t> pdu = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	ASSERT_EQ(pdu.size(), 48u);
	expect_wire_bytes(pdu, 0x56, 0x3a, 0x96, 0xd9);
}

TEST(Crc32c, CheckValue123456789)
{
	const char *s = "123456789";
	EXPECT_EQ(iwarp_crc32c(s, 9), 0xe3069283u);
	EXPECT_EQ(reference_crc32c((const uint8_t *)s, 9), 0xe3069283u);
}

TEST(Crc32c, EmptyInput)
{
	EXPECT_EQ(iwarp_crc32c(nullptr, 0), 0u);
}

TEST(Crc32c, TableMatchesBitwiseDefinition)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int bit = 0; bit < 8; bit++)
			c = (c >> 1) ^ ((c & 1u) ? IWARP_CRC32C_POLY_REFLECTED : 0u);
		EXPECT_EQ(iwarp_crc32c_table_entry((uint8_t)i), c) << "entry " << i;
	}
}

TEST(Crc32c, MatchesReferenceOnRandomData)
{
	std::mt19937 rng(1234);
	std::vector<uint8_t> d(2048);
	for (auto &b : d)
		b = (uint8_t)rng();
	for (size_t len = 0; len <= d.size(); len += (len < 300 ? 1 : 97))
		ASSERT_EQ(iwarp_crc32c(d.data(), len), reference_crc32c(d.data(), len))
			<< "len " << len;
}

TEST(Crc32c, IncrementalEqualsOneShotAtEverySplit)
{
	std::mt19937 rng(99);
	std::vector<uint8_t> d(333);
	for (auto &b : d)
		b = (uint8_t)rng();
	const uint32_t whole = iwarp_crc32c(d.data(), d.size());
	for (size_t split = 0; split <= d.size(); split++) {
		uint32_t c = IWARP_CRC32C_INIT;
		c = iwarp_crc32c_update(c, d.data(), split);
		c = iwarp_crc32c_update(c, d.data() + split, d.size() - split);
		ASSERT_EQ(iwarp_crc32c_final(c), whole) << "split " << split;
	}
}

TEST(Crc32c, DetectsEverySingleBitFlip)
{
	std::vector<uint8_t> d(64, 0x5a);
	const uint32_t good = iwarp_crc32c(d.data(), d.size());
	for (size_t i = 0; i < d.size() * 8; i++) {
		d[i / 8] ^= (uint8_t)(1u << (i % 8));
		EXPECT_NE(iwarp_crc32c(d.data(), d.size()), good) << "bit " << i;
		d[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
}
