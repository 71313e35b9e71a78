// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Unit tests of the pure parts of flows: F_dist, reducers, wire format, acks,
// ordering, maps.
#include <dpi/dpi.hpp>
#include <dpi/flow.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>

using namespace dpi::flow;
using dpi::Errc;

namespace
{
View bytes_of(const std::string &s)
{
	return {reinterpret_cast<const std::byte *>(s.data()), s.size()};
}
std::string str_of(View v)
{
	return {reinterpret_cast<const char *>(v.data()), v.size()};
}
template <class F> Errc code_of(F f)
{
	try {
		f();
	} catch (const dpi::Error &e) {
		return e.code();
	}
	return Errc::ok;
}
} // namespace

TEST(dist, hash_single_target_deterministic_balanced)
{
	Dist d = Dist::hash();
	std::vector<uint32_t> out, again;
	std::vector<size_t> hist(4);
	for (uint64_t k = 0; k < 40000; k++) {
		d.targets(k, 4, out);
		ASSERT_EQ(out.size(), 1U);
		ASSERT_LT(out[0], 4U);
		d.targets(k, 4, again);
		ASSERT_EQ(out, again);
		hist[out[0]]++;
	}
	for (size_t h : hist) { // sequential keys spread within 5% of even
		EXPECT_GT(h, 9500U);
		EXPECT_LT(h, 10500U);
	}
	EXPECT_NE(mix64(1), mix64(2));
}

TEST(dist, range_partitions_by_split_points)
{
	Dist d = Dist::range({10, 20, 30});
	d.validate(4);
	std::vector<uint32_t> out;
	auto one = [&](uint64_t k) {
		d.targets(k, 4, out);
		EXPECT_EQ(out.size(), 1U);
		return out.at(0);
	};
	EXPECT_EQ(one(0), 0U);
	EXPECT_EQ(one(9), 0U);
	EXPECT_EQ(one(10), 1U);
	EXPECT_EQ(one(29), 2U);
	EXPECT_EQ(one(30), 3U);
	EXPECT_EQ(one(UINT64_MAX), 3U);
	EXPECT_EQ(code_of([&] { d.validate(3); }), Errc::invalid_argument);
	EXPECT_EQ(code_of([] { Dist::range({5, 1}); }), Errc::invalid_argument);
}

TEST(dist, broadcast_filter_user)
{
	std::vector<uint32_t> out;
	Dist::broadcast().targets(7, 3, out);
	EXPECT_EQ(out, (std::vector<uint32_t>{0, 1, 2}));

	Dist f = Dist::filter([](uint64_t k) { return k % 2 == 0; }, Dist::broadcast());
	f.targets(3, 3, out);
	EXPECT_TRUE(out.empty());
	f.targets(4, 3, out);
	EXPECT_EQ(out.size(), 3U);

	Dist u = Dist::user([](uint64_t k, size_t n, std::vector<uint32_t> &o) {
		o.push_back(static_cast<uint32_t>(k % n));
		o.push_back(static_cast<uint32_t>((k + 1) % n));
	});
	u.targets(5, 3, out);
	EXPECT_EQ(out, (std::vector<uint32_t>{2, 0}));
	Dist bad = Dist::user([](uint64_t, size_t, std::vector<uint32_t> &o) { o.push_back(9); });
	EXPECT_EQ(code_of([&] { bad.targets(1, 3, out); }), Errc::invalid_argument);
	Dist dup = Dist::user([](uint64_t, size_t, std::vector<uint32_t> &o) { o.assign({1, 1}); });
	EXPECT_EQ(code_of([&] { dup.targets(1, 3, out); }), Errc::invalid_argument);
}

TEST(reduce, builtins_and_partial_merge)
{
	std::mt19937_64 rng(7);
	std::uniform_int_distribution<int64_t> val(-1000, 1000);
	std::uniform_int_distribution<uint64_t> key(0, 50);
	Aggregator whole;
	std::vector<Aggregator> parts(5);
	std::map<uint64_t, std::vector<int64_t>> ref;
	for (int i = 0; i < 20000; i++) {
		uint64_t k = key(rng);
		int64_t v = val(rng);
		whole.add(k, v);
		parts[static_cast<size_t>(i) % 5].add(k, v);
		ref[k].push_back(v);
	}
	// Merge the partials, through their wire encoding.
	Aggregator merged;
	for (auto &p : parts)
		for (const Aggregate &a : p.drain()) {
			std::byte buf[Aggregate::wire_size];
			a.encode(buf);
			merged.merge(Aggregate::decode(buf));
		}
	auto w = whole.snapshot();
	auto m = merged.snapshot();
	ASSERT_EQ(w, m);
	ASSERT_EQ(w.size(), ref.size());
	for (const Aggregate &a : w) {
		const auto &vs = ref.at(a.key);
		int64_t sum = 0;
		for (int64_t v : vs)
			sum += v;
		EXPECT_EQ(a.value(ReduceOp::sum), static_cast<double>(sum));
		EXPECT_EQ(a.value(ReduceOp::count), static_cast<double>(vs.size()));
		EXPECT_EQ(a.value(ReduceOp::min), static_cast<double>(*std::min_element(vs.begin(), vs.end())));
		EXPECT_EQ(a.value(ReduceOp::max), static_cast<double>(*std::max_element(vs.begin(), vs.end())));
		EXPECT_DOUBLE_EQ(a.value(ReduceOp::avg), static_cast<double>(sum) / static_cast<double>(vs.size()));
	}
	EXPECT_STREQ(reduce_name(ReduceOp::avg), "AVG");
	EXPECT_TRUE(std::isnan(Aggregate{}.value(ReduceOp::avg)));
}

TEST(reduce, evict_coldest_keeps_hot_keys)
{
	Aggregator a;
	for (uint64_t k = 0; k < 10; k++)
		for (uint64_t i = 0; i <= k; i++)
			a.add(k, 1); // key k seen k+1 times
	auto cold = a.evict_coldest(4);
	ASSERT_EQ(cold.size(), 4U);
	for (size_t i = 0; i < 4; i++)
		EXPECT_EQ(cold[i].key, i);
	EXPECT_EQ(a.size(), 6U);
	auto rest = a.evict_coldest(100);
	EXPECT_EQ(rest.size(), 6U);
	EXPECT_EQ(rest.back().count, 10);
	EXPECT_EQ(a.size(), 0U);
}

TEST(wire, header_round_trip_and_rejects)
{
	MsgHeader h;
	h.type = MsgType::partial;
	h.source = 77;
	h.source_node = 3;
	h.first_seq = 0x123456789aULL;
	h.count = 12;
	h.payload = 5;
	Bytes m(MsgHeader::size + 5);
	h.encode(m.data());
	MsgHeader d = MsgHeader::decode(m);
	EXPECT_EQ(d.type, MsgType::partial);
	EXPECT_EQ(d.source, 77U);
	EXPECT_EQ(d.source_node, 3);
	EXPECT_EQ(d.first_seq, 0x123456789aULL);
	EXPECT_EQ(d.count, 12U);
	Bytes shortm(m.begin(), m.end() - 1);
	EXPECT_EQ(code_of([&] { MsgHeader::decode(shortm); }), Errc::protocol);
	Bytes badmagic = m;
	badmagic[0] ^= std::byte{1};
	EXPECT_EQ(code_of([&] { MsgHeader::decode(badmagic); }), Errc::protocol);
	Bytes badtype = m;
	badtype[4] = std::byte{9};
	EXPECT_EQ(code_of([&] { MsgHeader::decode(badtype); }), Errc::protocol);
	EXPECT_EQ(code_of([&] { MsgHeader::decode(View(m.data(), 10)); }), Errc::protocol);
}

TEST(wire, tuple_packing_fixed_and_variable)
{
	Bytes p;
	pack_tuple(p, bytes_of("abcd"), 4);
	pack_tuple(p, bytes_of("efgh"), 4);
	auto v = unpack_tuples(p, 2, 4);
	ASSERT_EQ(v.size(), 2U);
	EXPECT_EQ(str_of(v[1]), "efgh");
	EXPECT_EQ(code_of([&] { pack_tuple(p, bytes_of("xyz"), 4); }), Errc::invalid_argument);
	EXPECT_EQ(code_of([&] { unpack_tuples(p, 3, 4); }), Errc::protocol);
	EXPECT_EQ(code_of([&] { unpack_tuples(p, 1, 4); }), Errc::protocol); // trailing bytes

	Bytes q;
	pack_tuple(q, bytes_of(""), 0);
	pack_tuple(q, bytes_of("hello"), 0);
	pack_tuple(q, bytes_of(std::string(1000, 'z')), 0);
	auto w = unpack_tuples(q, 3, 0);
	EXPECT_EQ(str_of(w[0]), "");
	EXPECT_EQ(str_of(w[1]), "hello");
	EXPECT_EQ(w[2].size(), 1000U);
	Bytes cut(q.begin(), q.end() - 1);
	EXPECT_EQ(code_of([&] { unpack_tuples(cut, 3, 0); }), Errc::protocol);
	Bytes huge = q;
	huge[0] = std::byte{0xff}; // first length now far beyond the payload
	EXPECT_EQ(code_of([&] { unpack_tuples(huge, 3, 0); }), Errc::protocol);
}

TEST(ack, quorum_watermark)
{
	AckTracker t(3, 2);
	uint32_t all[] = {0, 1, 2};
	uint32_t one[] = {1};
	EXPECT_EQ(t.sent(all), 0U); // needs 2 of 3
	EXPECT_EQ(t.sent(one), 1U); // needs target 1 (quorum capped at 1)
	EXPECT_EQ(t.sent({}), 2U);  // filtered: needs nothing
	EXPECT_EQ(t.sent(all), 3U);
	EXPECT_EQ(t.watermark(), 0U);
	t.acked(0, 2); // target 0 has global 0 and 3
	EXPECT_EQ(t.watermark(), 0U);
	EXPECT_FALSE(t.is_acked(0));
	t.acked(1, 1); // target 1 has global 0 (seq 0), 1 (seq 1), 3 (seq 2)
	EXPECT_TRUE(t.is_acked(0));
	EXPECT_FALSE(t.is_acked(1));
	EXPECT_EQ(t.watermark(), 1U);
	t.acked(1, 2);
	EXPECT_EQ(t.watermark(), 3U); // 1 acked, 2 needed nothing, 3 has only target 0
	EXPECT_TRUE(t.is_acked(2));
	t.acked(1, 1); // stale: ignored
	t.acked(2, 2);
	EXPECT_EQ(t.watermark(), 4U);
	EXPECT_EQ(code_of([&] { t.acked(2, 3); }), Errc::protocol); // more than was sent
	EXPECT_EQ(code_of([&] { t.acked(5, 1); }), Errc::protocol);
}

TEST(ack, all_targets)
{
	AckTracker t(2, 0);
	uint32_t both[] = {0, 1};
	for (int i = 0; i < 10; i++)
		t.sent(both);
	t.acked(0, 10);
	EXPECT_EQ(t.watermark(), 0U);
	t.acked(1, 4);
	EXPECT_EQ(t.watermark(), 4U);
	t.acked(1, 10);
	EXPECT_EQ(t.watermark(), 10U);
	EXPECT_EQ(t.sent_count(), 10U);
}

TEST(order, detects_loss_and_reorder)
{
	OrderCheck o;
	o.accept(1, 0, 5);
	o.accept(2, 0, 1);
	o.accept(1, 5, 2);
	EXPECT_EQ(o.expected(1), 7U);
	EXPECT_EQ(code_of([&] { o.accept(1, 9, 1); }), Errc::protocol); // gap
	EXPECT_EQ(code_of([&] { o.accept(2, 0, 1); }), Errc::protocol); // repeat
	EXPECT_EQ(o.expected(3), 0U);
}

TEST(map, projection_and_user)
{
	Map p = Map::projection({{4, 4}, {0, 2}});
	Bytes out;
	ASSERT_TRUE(p.fn(bytes_of("abcdefgh"), out));
	EXPECT_EQ(str_of(out), "efghab");
	EXPECT_EQ(code_of([&] { p.fn(bytes_of("abc"), out); }), Errc::invalid_argument);
	Map u = Map::user("drop-odd", [](View in, Bytes &o) {
		o.assign(in.begin(), in.end());
		return in.size() % 2 == 0;
	});
	EXPECT_TRUE(u.fn(bytes_of("ab"), out));
	EXPECT_FALSE(u.fn(bytes_of("abc"), out));
}

TEST(map, flowspec_validation)
{
	FlowSpec s;
	s.name = "ok";
	s.targets = {0, 1};
	EXPECT_NO_THROW(s.validate());
	FlowSpec bad = s;
	bad.name = "no spaces";
	EXPECT_EQ(code_of([&] { bad.validate(); }), Errc::invalid_argument);
	bad = s;
	bad.targets.clear();
	EXPECT_EQ(code_of([&] { bad.validate(); }), Errc::invalid_argument);
	bad = s;
	bad.dist = Dist::range({1, 2, 3});
	EXPECT_EQ(code_of([&] { bad.validate(); }), Errc::invalid_argument);
	bad = s;
	bad.batch_bytes = bad.segment_size;
	EXPECT_EQ(code_of([&] { bad.validate(); }), Errc::invalid_argument);
	bad = s;
	bad.reduce = ReduceSpec{};
	EXPECT_EQ(code_of([&] { bad.validate(); }), Errc::invalid_argument); // no value function
}
