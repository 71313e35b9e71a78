// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Shared-log bookkeeping (shared.hpp) without a device: reservation by a
// simulated fetch-and-add, pads at the end of the log, commits out of
// order, backpressure, holes and wrap, over a plain byte array standing in
// for the owner's log.
#include "ring.hpp"
#include "shared.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <vector>

using dpi::ring::record_footprint;
using dpi::shared::Reader;

TEST(shared, placement_pads_and_limits)
{
	auto p = dpi::shared::place(1008, 24, 1024);
	EXPECT_EQ(p.offset, 1008U);
	EXPECT_TRUE(p.pad); // 1008 + 24 > 1024
	p = dpi::shared::place(1000, 24, 1024);
	EXPECT_FALSE(p.pad); // ends exactly at the end
	p = dpi::shared::place(3 * 1024 + 16, 24, 1024);
	EXPECT_EQ(p.offset, 16U);
	EXPECT_FALSE(p.pad);
	// backpressure: the writer may use bytes up to consumed + capacity
	EXPECT_TRUE(dpi::shared::may_write(1000, 24, 0, 1024));
	EXPECT_FALSE(dpi::shared::may_write(1008, 24, 0, 1024));
	EXPECT_TRUE(dpi::shared::may_write(1008, 24, 8, 1024));
	// a record takes at most half the log, and at most a segment
	EXPECT_EQ(dpi::shared::max_record(1024, 4096), 504U);
	EXPECT_EQ(dpi::shared::max_record(1 << 20, 4096), 4088U);
	EXPECT_LE(record_footprint(dpi::shared::max_record(1000, 4096)), 500U);
}

TEST(shared, reader_delivers_in_position_order_once_contiguous)
{
	Reader rd(1024);
	uint64_t tail = 3 * 16; // three reservations of one 8-byte record each
	EXPECT_EQ(rd.commit(32, 8, false, 2, tail), "");
	EXPECT_FALSE(rd.front()); // bytes 0..31 are not committed yet
	EXPECT_TRUE(rd.gap(tail));
	EXPECT_EQ(rd.commit(16, 8, false, 1, tail), "");
	EXPECT_FALSE(rd.front());
	EXPECT_EQ(rd.commit(0, 8, false, 0, tail), "");
	for (uint32_t want = 0; want < 3; ++want) {
		auto e = rd.front();
		ASSERT_TRUE(e);
		EXPECT_EQ(e->source, want);
		EXPECT_EQ(rd.front_offset(), want * 16U);
		rd.pop();
	}
	EXPECT_FALSE(rd.front());
	EXPECT_FALSE(rd.gap(tail));
	EXPECT_EQ(rd.head(), tail);
}

TEST(shared, reader_rejects_impossible_commits)
{
	Reader rd(256);
	uint64_t tail = 64;
	EXPECT_NE(rd.commit(4, 8, false, 0, tail).find("aligned"), std::string::npos);
	EXPECT_NE(rd.commit(64, 8, false, 0, tail).find("never reserved"), std::string::npos);
	EXPECT_EQ(rd.commit(0, 8, false, 0, tail), "");
	EXPECT_NE(rd.commit(0, 8, false, 0, tail).find("overlaps"), std::string::npos);
	EXPECT_NE(rd.commit(8, 8, false, 0, tail).find("overlaps"), std::string::npos);
	rd.pop();
	EXPECT_NE(rd.commit(0, 8, false, 0, tail).find("before the consumer"), std::string::npos);
	// a record that would span the end, a pad that would not reach it
	tail = 256 + 64;
	EXPECT_NE(rd.commit(240, 24, false, 0, tail).find("spans the end"), std::string::npos);
	EXPECT_NE(rd.commit(16, 24, true, 0, tail).find("does not reach the end"), std::string::npos);
	EXPECT_EQ(rd.commit(240, 24, true, 0, tail), ""); // the pad 240..263
	// writing into the next lap before the consumer released those bytes
	EXPECT_NE(rd.commit(264, 8, false, 0, tail).find("overwrites unconsumed"), std::string::npos);
	// a length so large the range wraps the 64-bit stream
	EXPECT_NE(rd.commit(272, UINT64_MAX - 7, true, 0, tail).find("never reserved"), std::string::npos);
}

TEST(shared, holes_are_skipped_to_the_next_commit_or_the_tail)
{
	Reader rd(1024);
	uint64_t tail = 64;
	EXPECT_EQ(rd.commit(32, 8, false, 1, tail), "");
	ASSERT_TRUE(rd.gap(tail));
	EXPECT_EQ(rd.skip_hole(tail), 32U); // 0..31 never committed
	ASSERT_TRUE(rd.front());
	rd.pop();
	EXPECT_EQ(rd.head(), 48U);
	EXPECT_TRUE(rd.gap(tail));
	EXPECT_EQ(rd.skip_hole(tail), 16U); // 48..63, up to the tail
	EXPECT_FALSE(rd.gap(tail));
	EXPECT_EQ(rd.skip_hole(tail), 0U);
	// the late commit of a skipped range is refused
	EXPECT_NE(rd.commit(0, 8, false, 0, tail).find("hole"), std::string::npos);
}

// k sources append records of random size; each step one source advances
// one stage (reserve, write, commit) in random order, and the consumer
// takes what is contiguous.  Many laps of a small log: every record must
// arrive exactly once, intact, in per-source order, and no write may ever
// land on bytes the consumer has not released.
TEST(shared, simulated_sources_wrap_many_laps)
{
	constexpr size_t cap = 512;
	constexpr uint32_t k = 3;
	constexpr uint32_t per_source = 400;
	std::vector<std::byte> log(cap);
	std::vector<bool> unconsumed(cap, false); // bytes holding a record not yet consumed
	Reader rd(cap);
	uint64_t tail = 0;
	std::mt19937 rng(7);
	size_t max_len = dpi::shared::max_record(cap, 4096);

	struct Src {
		uint32_t made = 0;
		int stage = 0; // 0 idle, 1 reserved, 2 written
		uint64_t pos = 0;
		size_t len = 0;
		uint64_t consumed_seen = 0; // the owner's published position, as last read
	};
	std::vector<Src> src(k);
	std::vector<uint32_t> got(k, 0);
	uint64_t pads = 0;
	uint64_t delivered = 0;
	auto byte_of = [](uint32_t s, uint32_t n, size_t i) {
		return std::byte(static_cast<uint8_t>(s * 31 + n * 7 + i));
	};

	for (int step = 0; step < 1000000 && delivered < k * per_source; ++step) {
		uint32_t s = rng() % (k + 1);
		if (s == k) { // the consumer
			while (auto e = rd.front()) {
				size_t off = rd.front_offset();
				if (!e->pad) {
					std::string err;
					size_t cur = 0;
					auto data = dpi::ring::next_record(log.data() + off, e->footprint(), cur, err);
					ASSERT_TRUE(data) << err;
					ASSERT_EQ(data->size(), e->length);
					uint32_t n = got[e->source]++;
					for (size_t i = 0; i < data->size(); ++i)
						ASSERT_EQ((*data)[i], byte_of(e->source, n, i))
						        << "source " << e->source << " #" << n;
					for (size_t i = 0; i < e->footprint(); ++i)
						unconsumed[off + i] = false;
					++delivered;
				} else {
					++pads;
				}
				rd.pop();
				if (rng() % 3 == 0)
					break;
			}
			continue;
		}
		Src &x = src[s];
		if (x.stage == 0) {
			if (x.made == per_source)
				continue;
			x.len = rng() % (max_len + 1);
			x.pos = tail; // the fetch-and-add
			tail += record_footprint(x.len);
			x.stage = 1;
		} else if (x.stage == 1) {
			size_t fp = record_footprint(x.len);
			auto p = dpi::shared::place(x.pos, fp, cap);
			if (p.pad) {
				ASSERT_EQ(rd.commit(x.pos, fp, true, s, tail), "");
				x.stage = 0; // reserve again
				continue;
			}
			if (!dpi::shared::may_write(x.pos, fp, x.consumed_seen, cap)) {
				x.consumed_seen = rd.head(); // read the published position
				continue;
			}
			for (size_t i = 0; i < fp; ++i)
				ASSERT_FALSE(unconsumed[p.offset + i]) << "overwrote an unconsumed byte";
			dpi::ring::write_header(log.data() + p.offset, x.len);
			for (size_t i = 0; i < x.len; ++i)
				log[p.offset + dpi::ring::header_size + i] = byte_of(s, x.made, i);
			for (size_t i = 0; i < fp; ++i)
				unconsumed[p.offset + i] = true;
			x.stage = 2;
		} else {
			ASSERT_EQ(rd.commit(x.pos, x.len, false, s, tail), "");
			++x.made;
			x.stage = 0;
		}
	}
	EXPECT_EQ(delivered, uint64_t{k} * per_source);
	for (uint32_t s = 0; s < k; ++s)
		EXPECT_EQ(got[s], per_source);
	EXPECT_GT(tail, 20 * cap) << "the log should have wrapped many times";
	EXPECT_GT(pads, 0U);
	EXPECT_EQ(rd.head(), tail);
}

// A source dies holding a reservation: the others' records behind it wait
// until the hole is declared, then arrive; the dead source's range is never
// delivered.
TEST(shared, dead_source_hole_releases_the_others)
{
	Reader rd(1024);
	uint64_t tail = 0;
	uint64_t dead = tail; // source 0 reserves and dies
	tail += record_footprint(10);
	uint64_t live = tail;
	tail += record_footprint(20);
	EXPECT_EQ(rd.commit(live, 20, false, 1, tail), "");
	EXPECT_FALSE(rd.front());
	EXPECT_TRUE(rd.gap(tail));
	EXPECT_EQ(rd.skip_hole(tail), record_footprint(10));
	EXPECT_EQ(rd.head(), dead + record_footprint(10));
	auto e = rd.front();
	ASSERT_TRUE(e);
	EXPECT_EQ(e->source, 1U);
	rd.pop();
	EXPECT_FALSE(rd.gap(tail));
}
