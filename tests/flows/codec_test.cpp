// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Codecs: compression round trips and corruption, AEAD round trip and tamper
// detection.
#include <dpi/dpi.hpp>
#include <dpi/flow.hpp>

#include <gtest/gtest.h>

#include <random>

using namespace dpi::flow;

namespace
{
Bytes random_bytes(size_t n, uint64_t seed, bool compressible)
{
	std::mt19937_64 rng(seed);
	Bytes b(n);
	for (size_t i = 0; i < n; i++)
		b[i] = static_cast<std::byte>(compressible ? (i / 64) % 7 : rng() & 0xff);
	return b;
}
bool throws_protocol(const std::function<void()> &f)
{
	try {
		f();
	} catch (const dpi::Error &e) {
		return e.code() == dpi::Errc::protocol;
	}
	return false;
}
} // namespace

TEST(codec, compression_round_trips)
{
	for (const auto &c : {lz4_codec(), zstd_codec(1), zstd_codec(9)}) {
		for (size_t n : {0UL, 1UL, 100UL, 65536UL, 1000003UL}) {
			for (bool comp : {false, true}) {
				Bytes in = random_bytes(n, n + 1, comp);
				Bytes enc, dec;
				c->encode(in, enc, {});
				c->decode(enc, dec, {});
				ASSERT_EQ(dec, in) << c->name() << " n=" << n;
				if (comp && n >= 65536) {
					EXPECT_LT(enc.size() * 10, n) << c->name() << " did not compress";
				}
			}
		}
	}
}

TEST(codec, compression_rejects_corrupt_input)
{
	Bytes in = random_bytes(5000, 3, true);
	for (const auto &c : {lz4_codec(), zstd_codec()}) {
		Bytes enc, dec;
		c->encode(in, enc, {});
		Bytes cut(enc.begin(), enc.begin() + static_cast<ptrdiff_t>(enc.size() / 2));
		EXPECT_TRUE(throws_protocol([&] { c->decode(cut, dec, {}); })) << c->name();
		EXPECT_TRUE(throws_protocol([&] { c->decode(Bytes(3), dec, {}); })) << c->name();
	}
	// A length prefix claiming more than the block holds.
	Bytes enc, dec;
	lz4_codec()->encode(in, enc, {});
	enc[0] = std::byte{0xff};
	EXPECT_TRUE(throws_protocol([&] { lz4_codec()->decode(enc, dec, {}); }));
}

TEST(codec, aead_round_trip_and_tamper_detection)
{
	Bytes key = random_bytes(aead_key_size, 11, false);
	auto c = aead_codec(key);
	Bytes in = random_bytes(3000, 12, false);
	Bytes ad = random_bytes(24, 13, false);
	Bytes enc, enc2, dec;
	c->encode(in, enc, ad);
	c->encode(in, enc2, ad);
	EXPECT_NE(enc, enc2) << "nonces must differ";
	EXPECT_EQ(enc.size(), in.size() + 24 + 16);
	c->decode(enc, dec, ad);
	EXPECT_EQ(dec, in);
	// Every flipped byte (nonce, ciphertext, tag) is detected.
	for (size_t i = 0; i < enc.size(); i += 97) {
		Bytes t = enc;
		t[i] ^= std::byte{0x20};
		EXPECT_TRUE(throws_protocol([&] { c->decode(t, dec, ad); })) << "byte " << i;
	}
	Bytes t = enc;
	t.back() ^= std::byte{1};
	EXPECT_TRUE(throws_protocol([&] { c->decode(t, dec, ad); }));
	// Wrong associated data, wrong key, truncation.
	Bytes ad2 = ad;
	ad2[0] ^= std::byte{1};
	EXPECT_TRUE(throws_protocol([&] { c->decode(enc, dec, ad2); }));
	Bytes key2 = key;
	key2[5] ^= std::byte{1};
	EXPECT_TRUE(throws_protocol([&] { aead_codec(key2)->decode(enc, dec, ad); }));
	EXPECT_TRUE(throws_protocol([&] { c->decode(Bytes(enc.begin(), enc.begin() + 30), dec, ad); }));
	// Bad key size.
	EXPECT_THROW(aead_codec(Bytes(16)), dpi::Error);
}

TEST(codec, per_tuple_maps)
{
	Bytes key = random_bytes(aead_key_size, 5, false);
	Map enc = Map::encode(aead_codec(key));
	Map dec = Map::decode(aead_codec(key));
	EXPECT_EQ(enc.where, Placement::source);
	EXPECT_EQ(dec.where, Placement::target);
	Bytes in = random_bytes(77, 6, false), mid, out;
	ASSERT_TRUE(enc.fn(in, mid));
	ASSERT_TRUE(dec.fn(mid, out));
	EXPECT_EQ(out, in);
}
