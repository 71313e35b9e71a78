// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Ring/segment bookkeeping and ordering, driven without a device: a writer
// and a reader share a plain byte array standing in for the owner's ring.
#include "proto.hpp"
#include "ring.hpp"

#include <algorithm>
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <random>
#include <vector>

using dpi::ring::ReaderState;
using dpi::ring::WriterState;

TEST(ring, framing_and_footprint)
{
	EXPECT_EQ(dpi::ring::record_footprint(0), 8U);
	EXPECT_EQ(dpi::ring::record_footprint(1), 16U);
	EXPECT_EQ(dpi::ring::record_footprint(8), 16U);
	EXPECT_EQ(dpi::ring::record_footprint(9), 24U);
	EXPECT_EQ(dpi::ring::max_record(4096), 4088U);
	WriterState w(64, 2);
	EXPECT_FALSE(w.fits(1)); // no segment open
	w.open_segment();
	EXPECT_TRUE(w.fits(56));
	EXPECT_FALSE(w.fits(57));
	EXPECT_EQ(w.place(56), 0U);
	EXPECT_TRUE(w.full());
}

TEST(ring, writer_needs_credit_and_wraps_slots)
{
	WriterState w(128, 3);
	for (uint64_t s = 0; s < 3; ++s) {
		ASSERT_TRUE(w.has_credit());
		w.open_segment();
		EXPECT_EQ(w.seq(), s);
		EXPECT_EQ(w.slot_offset(w.seq()), s * 128);
		w.place(10);
		EXPECT_EQ(w.seal(), 24U);
	}
	EXPECT_FALSE(w.has_credit()); // ring full: backpressure
	w.add_credits(1);
	w.open_segment();
	EXPECT_EQ(w.seq(), 3U);
	EXPECT_EQ(w.slot_offset(3), 0U); // slot 0 again, after it was freed
}

TEST(ring, reader_rejects_gaps_overfull_and_oversize)
{
	ReaderState r(256, 2);
	EXPECT_EQ(r.announce(0, 100), "");
	EXPECT_NE(r.announce(2, 10).find("segment 2 announced, expected 1"), std::string::npos);
	EXPECT_NE(r.announce(1, 300).find("claims 300 bytes"), std::string::npos);
	EXPECT_EQ(r.announce(1, 256), "");
	EXPECT_NE(r.announce(2, 8).find("overwrite"), std::string::npos);
	r.release();
	EXPECT_EQ(r.announce(2, 8), "");
	EXPECT_EQ(r.front().seq, 1U);
	EXPECT_EQ(r.front_slot_offset(), 256U);
}

TEST(ring, corrupt_records_are_reported_not_read)
{
	std::vector<std::byte> seg(64);
	std::string err;
	size_t off = 0;
	dpi::ring::write_header(seg.data(), 100); // longer than the segment
	EXPECT_FALSE(dpi::ring::next_record(seg.data(), 64, off, err));
	EXPECT_NE(err.find("overruns the segment"), std::string::npos);
	err.clear();
	off = 0;
	std::memset(seg.data(), 0, 8);
	EXPECT_FALSE(dpi::ring::next_record(seg.data(), 64, off, err));
	EXPECT_NE(err.find("bad record magic"), std::string::npos);
	err.clear();
	off = 0;
	EXPECT_FALSE(dpi::ring::next_record(seg.data(), 4, off, err));
	EXPECT_NE(err.find("truncated"), std::string::npos);
}

// k sources, random sizes including 1 byte and exactly one segment's worth,
// a consumer that frees segments late: every record arrives once, in order.
TEST(ring, many_sources_random_sizes_in_order_without_overwrite)
{
	constexpr size_t seg = 512;
	constexpr uint32_t nseg = 3;
	constexpr int k = 4;
	constexpr int per = 400;
	std::mt19937 rng(42);
	struct Src {
		WriterState w{seg, nseg};
		ReaderState r{seg, nseg};
		std::vector<std::byte> mem = std::vector<std::byte>(seg * nseg);
		std::vector<std::byte> stage = std::vector<std::byte>(seg);
		std::deque<std::pair<uint64_t, size_t>> wire; // seg notifications in flight
		int sent = 0;
		int got = 0;
		size_t cursor_records = 0;
	};
	std::vector<Src> s(k);
	auto payload = [](int src, int idx, size_t len) {
		std::vector<std::byte> v(len);
		for (size_t j = 0; j < len; ++j)
			v[j] = static_cast<std::byte>((src * 131 + idx * 7 + static_cast<int>(j)) & 0xff);
		return v;
	};
	std::vector<std::vector<size_t>> sizes(k);
	int stalls = 0;
	for (int round = 0; round < 100000; ++round) {
		int i = static_cast<int>(rng() % k);
		auto &x = s[i];
		int action = static_cast<int>(rng() % 3);
		if (action < 2 && x.sent < per) { // writer step
			size_t len = rng() % 5 == 0 ? (rng() % 2 ? 1 : dpi::ring::max_record(seg)) : rng() % 300;
			if (!x.w.fits(len)) {
				if (x.w.segment_open()) {
					uint64_t sq = x.w.seq();
					std::memcpy(x.mem.data() + x.w.slot_offset(sq), x.stage.data(), x.w.offset());
					x.wire.emplace_back(sq, x.w.seal());
				}
				if (!x.w.has_credit()) {
					++stalls;
					continue; // blocked: nothing may be written
				}
				x.w.open_segment();
			}
			size_t at = x.w.place(len);
			dpi::ring::write_header(x.stage.data() + at, len);
			auto p = payload(i, x.sent, len);
			// std::copy, not memcpy: an empty payload's data() may be null.
			std::copy(p.begin(), p.end(), x.stage.data() + at + 8);
			sizes[i].push_back(len);
			++x.sent;
			if (x.sent == per) { // close: seal the tail
				uint64_t sq = x.w.seq();
				std::memcpy(x.mem.data() + x.w.slot_offset(sq), x.stage.data(), x.w.offset());
				x.wire.emplace_back(sq, x.w.seal());
			}
		} else if (!x.wire.empty()) { // owner sees a seg message
			auto [sq, used] = x.wire.front();
			x.wire.pop_front();
			ASSERT_EQ(x.r.announce(sq, used), "");
		} else if (!x.r.empty()) { // consumer reads one segment and frees it
			std::string err;
			const auto &f = x.r.front();
			while (auto d = dpi::ring::next_record(x.mem.data() + x.r.front_slot_offset(), f.used,
			                                       x.r.cursor, err)) {
				ASSERT_LT(x.got, per);
				ASSERT_EQ(d->size(), sizes[i][static_cast<size_t>(x.got)]);
				auto p = payload(i, x.got, d->size());
				ASSERT_TRUE(std::equal(p.begin(), p.end(), d->begin(), d->end()))
				        << "source " << i << " record " << x.got;
				++x.got;
			}
			ASSERT_EQ(err, "");
			x.r.release();
			x.w.add_credits(1);
		}
	}
	for (int i = 0; i < k; ++i) {
		EXPECT_EQ(s[i].sent, per);
		EXPECT_EQ(s[i].got, per) << "source " << i;
	}
	EXPECT_GT(stalls, 0); // the small ring did push back
}

TEST(ring, control_message_text_is_bounded)
{
	auto m = dpi::proto::make(dpi::proto::Type::join, 7);
	m.set_text(std::string(500, 'a'));
	EXPECT_EQ(m.get_text().size(), sizeof(m.text) - 1);
	m.set_text("buffer");
	EXPECT_EQ(m.get_text(), "buffer");
	EXPECT_EQ(m.req_id, 7U);
	EXPECT_EQ(m.magic, dpi::proto::magic);
}
