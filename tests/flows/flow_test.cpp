// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Whole flows over the in-process transport (bounded queues, real threads):
// routing, per-source order, end of flow, backpressure, hints, reducers,
// acknowledgements, codecs and forged messages.
#include <dpi/dpi.hpp>
#include <dpi/flow.hpp>

#include <gtest/gtest.h>

#include "flow_fixture.hpp"

#include <cstring>
#include <map>
#include <random>
#include <thread>

using namespace dpi::flow;
using namespace flow_fixture;
using namespace std::chrono_literals;

namespace
{
// Runs `nsrc` source threads (node ids 10+i) pushing `per` tuples each with
// keys from `keygen`, and R target threads (node ids 0..R-1) collecting what
// they receive.  Returns, per target, the tuples in delivery order.
std::vector<std::vector<Tup>> run_flow(const FlowSpec &spec, size_t nsrc, uint32_t per,
                                       const std::function<uint64_t(uint32_t, uint32_t)> &keygen,
                                       std::vector<FlowStats> *src_stats = nullptr,
                                       std::vector<TransportStats> *tr_stats = nullptr, Millis consumer_delay = 0ms)
{
	auto hub = mem_hub();
	size_t r = spec.targets.size();
	std::vector<std::vector<Tup>> got(r);
	std::vector<std::thread> th;
	std::vector<std::shared_ptr<Transport>> src_tr(nsrc);
	for (size_t i = 0; i < nsrc; i++)
		src_tr[i] = mem_transport(hub, static_cast<int>(10 + i));
	std::vector<std::unique_ptr<Target>> targets;
	for (size_t t = 0; t < r; t++)
		targets.push_back(Target::open(mem_transport(hub, spec.targets[t]), spec, t));
	for (size_t t = 0; t < r; t++)
		th.emplace_back([&, t] {
			for (const Delivered &d : *targets[t]) {
				got[t].push_back(tup_of(d.data));
				EXPECT_EQ(d.source, got[t].back().src);
				if (consumer_delay.count())
					std::this_thread::sleep_for(consumer_delay);
			}
		});
	if (src_stats)
		src_stats->resize(nsrc);
	for (size_t i = 0; i < nsrc; i++)
		th.emplace_back([&, i] {
			auto s = Source::open(src_tr[i], spec, static_cast<uint32_t>(i));
			for (uint32_t k = 0; k < per; k++) {
				Tup tu{keygen(static_cast<uint32_t>(i), k), static_cast<uint32_t>(i), k};
				s->push(view_of(tu));
			}
			s->close();
			if (src_stats)
				(*src_stats)[i] = s->stats();
		});
	for (auto &t : th)
		t.join();
	if (tr_stats)
		for (auto &t : src_tr)
			tr_stats->push_back(t->stats());
	for (auto &t : targets)
		EXPECT_TRUE(t->ended());
	return got;
}

void check_order(const std::vector<Tup> &v)
{
	std::map<uint32_t, int64_t> last;
	for (const Tup &t : v) {
		auto it = last.find(t.src);
		if (it != last.end()) {
			ASSERT_LT(it->second, static_cast<int64_t>(t.idx)) << "source " << t.src << " out of order";
		}
		last[t.src] = t.idx;
	}
}
} // namespace

TEST(flow, hash_shuffle_delivers_everything_once_in_order)
{
	auto spec = base_spec("shuffle", {0, 1, 2}, 4);
	auto keygen = [](uint32_t s, uint32_t k) { return mix64(s * 1000003ULL + k); };
	auto got = run_flow(spec, 4, 5000, keygen);
	std::vector<uint32_t> dests;
	size_t total = 0;
	std::set<std::pair<uint32_t, uint32_t>> seen;
	for (size_t t = 0; t < 3; t++) {
		check_order(got[t]);
		for (const Tup &tu : got[t]) {
			spec.dist.targets(tu.key, 3, dests);
			ASSERT_EQ(dests.at(0), t) << "tuple routed to the wrong target";
			ASSERT_EQ(tu.key, keygen(tu.src, tu.idx));
			ASSERT_TRUE(seen.insert({tu.src, tu.idx}).second) << "duplicate";
		}
		total += got[t].size();
		EXPECT_GT(got[t].size(), 0U);
	}
	EXPECT_EQ(total, 4U * 5000U);
}

TEST(flow, broadcast_filter_and_variable_size_tuples)
{
	auto hub = mem_hub();
	FlowSpec spec;
	spec.name = "var";
	spec.targets = {0, 1};
	spec.sources = 1;
	spec.group = [](View t) { return static_cast<uint64_t>(t.size()); };
	spec.dist = Dist::filter([](uint64_t len) { return len % 3 != 0; }, Dist::broadcast());
	spec.batch_bytes = 1000;
	auto t0 = Target::open(mem_transport(hub, 0), spec, 0);
	auto t1 = Target::open(mem_transport(hub, 1), spec, 1);
	std::vector<std::string> sent;
	std::thread src([&] {
		auto s = Source::open(mem_transport(hub, 5), spec, 9);
		for (size_t n = 0; n < 300; n++) {
			std::string v(n, static_cast<char>('a' + n % 26));
			s->push({reinterpret_cast<const std::byte *>(v.data()), v.size()});
			if (n % 3 != 0)
				sent.push_back(v);
		}
		s->close();
	});
	// Both targets consume at once: a target that is not read blocks the
	// source (backpressure), which would stall the other one too.
	std::vector<std::string> got[2];
	std::vector<std::thread> th;
	for (size_t i = 0; i < 2; i++)
		th.emplace_back([&, i] {
			uint64_t seq = 0;
			for (const Delivered &d : *(i ? t1 : t0)) {
				got[i].emplace_back(reinterpret_cast<const char *>(d.data.data()), d.data.size());
				EXPECT_EQ(d.seq, seq++);
				EXPECT_EQ(d.source, 9U);
				EXPECT_EQ(d.source_node, 5);
			}
		});
	for (auto &t : th)
		t.join();
	src.join();
	EXPECT_EQ(got[0], sent);
	EXPECT_EQ(got[1], sent);
}

TEST(flow, long_lived_flow_serves_a_stream_and_never_ends)
{
	auto hub = mem_hub();
	auto spec = base_spec("stream", {0}, 0);
	auto t = Target::open(mem_transport(hub, 0), spec, 0);
	auto s = Source::open(mem_transport(hub, 1), spec, 1);
	for (uint32_t round = 0; round < 3; round++) {
		Tup tu{round, 1, round};
		s->push(view_of(tu));
		s->flush();
		auto d = t->next(2000ms);
		ASSERT_TRUE(d);
		EXPECT_EQ(tup_of(d->data).idx, round);
	}
	s->close(); // a source leaving a long-lived flow does not end it
	auto s2 = Source::open(mem_transport(hub, 2), spec, 2);
	Tup tu{9, 2, 0};
	s2->push(view_of(tu));
	s2->flush();
	auto d = t->next(2000ms);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->source, 2U);
	EXPECT_FALSE(t->next(50ms));
	EXPECT_FALSE(t->ended());
}

TEST(flow, forged_reordered_and_corrupt_messages_are_rejected)
{
	auto hub = mem_hub();
	auto spec = base_spec("forge", {0}, 1);
	Bytes key(aead_key_size, std::byte{42});
	spec.codecs = {zstd_codec(), aead_codec(key)};
	auto t = Target::open(mem_transport(hub, 0), spec, 0);
	auto raw = mem_transport(hub, 1)->sink("forge.t0", 0);
	// A genuine message captured from a real source on another hub.
	auto hub2 = mem_hub();
	auto t2 = Target::open(mem_transport(hub2, 0), spec, 0);
	auto cap = mem_transport(hub2, 0)->inbox("forge.t0");
	auto s = Source::open(mem_transport(hub2, 1), spec, 1);
	Tup tu{1, 1, 0};
	s->push(view_of(tu));
	s->flush();
	auto m = cap->next(1000ms);
	ASSERT_TRUE(m);
	// Flip a ciphertext byte: authentication fails.
	Bytes bad = m->data;
	bad[MsgHeader::size + 30] ^= std::byte{1};
	raw->send(bad);
	EXPECT_THROW(t->next(1000ms), dpi::Error);
	// A forged header (different source) with the same payload also fails:
	// the header is associated data.
	auto t3 = Target::open(
	        mem_transport(hub, 0),
	        [&] {
		        auto sp = spec;
		        sp.name = "forge2";
		        return sp;
	        }(),
	        0);
	auto raw3 = mem_transport(hub, 1)->sink("forge2.t0", 0);
	Bytes forged = m->data;
	forged[8] = std::byte{7};
	raw3->send(forged);
	try {
		t3->next(1000ms);
		ADD_FAILURE() << "forged header accepted";
	} catch (const dpi::Error &e) {
		EXPECT_EQ(e.code(), dpi::Errc::protocol);
	}
	// The genuine message, sent twice: the repeat is caught by the order check.
	auto sp4 = spec;
	sp4.name = "forge3";
	auto t4 = Target::open(mem_transport(hub, 0), sp4, 0);
	auto raw4 = mem_transport(hub, 1)->sink("forge3.t0", 0);
	// Re-encrypt for this flow name is unnecessary: the name is not in the AD.
	raw4->send(m->data);
	raw4->send(m->data);
	auto d = t4->next(1000ms);
	ASSERT_TRUE(d);
	EXPECT_EQ(tup_of(d->data).key, 1U);
	EXPECT_THROW(t4->next(1000ms), dpi::Error);
}

TEST(flow, codecs_and_maps_preserve_tuples)
{
	auto spec = base_spec("codec", {0, 1}, 2);
	Bytes key(aead_key_size, std::byte{3});
	spec.codecs = {lz4_codec(), aead_codec(key)};
	spec.maps = {Map::encode(zstd_codec()), Map::decode(zstd_codec())};
	spec.tuple_size = 0; // the per-tuple codec changes the size
	auto got = run_flow(spec, 2, 3000, [](uint32_t, uint32_t k) { return k % 100; });
	size_t n = 0;
	for (auto &v : got) {
		check_order(v);
		for (const Tup &t : v)
			EXPECT_EQ(t.key, t.idx % 100);
		n += v.size();
	}
	EXPECT_EQ(n, 6000U);
}

TEST(flow, reduce_at_source_and_at_target_agree_with_reference)
{
	for (ReduceOp op : {ReduceOp::sum, ReduceOp::count, ReduceOp::min, ReduceOp::max, ReduceOp::avg}) {
		std::map<uint64_t, std::pair<int64_t, int64_t>> ref_sum_count;
		std::vector<std::vector<Aggregate>> results;
		for (Placement where : {Placement::source, Placement::target}) {
			auto hub = mem_hub();
			auto spec = base_spec("agg", {0, 1}, 3);
			ReduceSpec r;
			r.op = op;
			r.where = where;
			r.partial_capacity = 7; // forces many spills of partial aggregates
			r.value = [](View t) { return static_cast<int64_t>(tup_of(t).idx) - 500; };
			spec.reduce = r;
			auto t0 = Target::open(mem_transport(hub, 0), spec, 0);
			auto t1 = Target::open(mem_transport(hub, 1), spec, 1);
			std::vector<std::thread> th;
			std::vector<FlowStats> st(3);
			for (uint32_t s = 0; s < 3; s++)
				th.emplace_back([&, s] {
					auto src = Source::open(mem_transport(hub, static_cast<int>(10 + s)), spec, s);
					for (uint32_t k = 0; k < 2000; k++) {
						Tup tu{(k * 7 + s) % 20, s, k};
						src->push(view_of(tu));
					}
					src->close();
					st[s] = src->stats();
				});
			std::vector<Aggregate> all;
			for (auto *t : {t0.get(), t1.get()}) {
				auto part = t->results(10000ms);
				all.insert(all.end(), part.begin(), part.end());
			}
			for (auto &x : th)
				x.join();
			std::sort(all.begin(), all.end(), [](auto &a, auto &b) { return a.key < b.key; });
			results.push_back(all);
			if (where == Placement::source) {
				EXPECT_EQ(st[0].tuples_sent, 0U);
				EXPECT_GT(st[0].partials_sent, 0U);
			} else {
				EXPECT_EQ(st[0].tuples_sent, 2000U);
			}
		}
		// Reference computed directly.
		Aggregator ref;
		for (uint32_t s = 0; s < 3; s++)
			for (uint32_t k = 0; k < 2000; k++)
				ref.add((k * 7 + s) % 20, static_cast<int64_t>(k) - 500);
		auto want = ref.snapshot();
		ASSERT_EQ(results[0].size(), 20U);
		for (size_t i = 0; i < want.size(); i++) {
			EXPECT_EQ(results[0][i].value(op), want[i].value(op)) << reduce_name(op);
			EXPECT_EQ(results[1][i].value(op), want[i].value(op)) << reduce_name(op);
		}
	}
}

TEST(flow, acks_with_quorum)
{
	auto hub = mem_hub();
	auto spec = base_spec("acks", {0, 1, 2}, 1);
	spec.dist = Dist::broadcast();
	spec.ack.enabled = true;
	spec.ack.quorum = 2;
	spec.hint = Hint::latency;
	auto t0 = Target::open(mem_transport(hub, 0), spec, 0);
	auto t1 = Target::open(mem_transport(hub, 1), spec, 1);
	auto t2 = Target::open(mem_transport(hub, 2), spec, 2); // never consumes
	auto s = Source::open(mem_transport(hub, 7), spec, 3);
	for (uint32_t i = 0; i < 5; i++) {
		Tup tu{i, 3, i};
		EXPECT_EQ(s->push(view_of(tu)), i);
	}
	EXPECT_FALSE(s->wait_acked(1, 100ms)); // nobody consumed yet
	for (int i = 0; i < 5; i++)
		ASSERT_TRUE(t0->next(1000ms));
	EXPECT_FALSE(s->wait_acked(1, 100ms)); // one of three is not a quorum of 2
	for (int i = 0; i < 3; i++)
		ASSERT_TRUE(t1->next(1000ms));
	EXPECT_TRUE(s->wait_acked(3, 2000ms));
	EXPECT_EQ(s->acked(), 3U);
	for (int i = 0; i < 2; i++)
		ASSERT_TRUE(t1->next(1000ms));
	EXPECT_TRUE(s->wait_acked(5, 2000ms));
	(void)t2;
}

TEST(flow, manual_acks_all_targets)
{
	auto hub = mem_hub();
	auto spec = base_spec("macks", {0, 1}, 1);
	spec.dist = Dist::broadcast();
	spec.ack.enabled = true;
	spec.ack.quorum = 0; // all
	spec.ack.automatic = false;
	auto t0 = Target::open(mem_transport(hub, 0), spec, 0);
	auto t1 = Target::open(mem_transport(hub, 1), spec, 1);
	auto s = Source::open(mem_transport(hub, 7), spec, 4);
	for (uint32_t i = 0; i < 10; i++) {
		Tup tu{i, 4, i};
		s->push(view_of(tu));
	}
	s->flush();
	for (int i = 0; i < 10; i++) {
		ASSERT_TRUE(t0->next(1000ms));
		ASSERT_TRUE(t1->next(1000ms));
	}
	EXPECT_FALSE(s->wait_acked(1, 100ms)); // delivered but not acknowledged
	t0->ack(4, 10);
	t1->ack(4, 6);
	EXPECT_TRUE(s->wait_acked(6, 2000ms));
	EXPECT_FALSE(s->wait_acked(7, 100ms));
	t1->ack(4, 10);
	EXPECT_TRUE(s->wait_acked(10, 2000ms));
	s->close();
	EXPECT_FALSE(t0->next(1000ms));
	EXPECT_TRUE(t0->ended());
}

TEST(hint, latency_sends_per_tuple_bandwidth_batches)
{
	std::map<Hint, FlowStats> st;
	for (Hint h : {Hint::bandwidth, Hint::latency}) {
		auto spec = base_spec(h == Hint::latency ? "lat" : "bw", {0}, 1);
		spec.hint = h;
		std::vector<FlowStats> ss;
		auto got = run_flow(
		        spec, 1, 4000, [](uint32_t, uint32_t k) { return k; }, &ss);
		EXPECT_EQ(got[0].size(), 4000U);
		check_order(got[0]);
		st[h] = ss[0];
	}
	// Latency: one message and one flush per tuple (+ the end marker).
	EXPECT_EQ(st[Hint::latency].messages, 4001U);
	EXPECT_GE(st[Hint::latency].flushes, 4000U);
	// Bandwidth: 32 KiB messages of 16-byte tuples, one flush at close.
	EXPECT_LE(st[Hint::bandwidth].messages, 4000U * 16 / (32U << 10) + 2);
	EXPECT_LE(st[Hint::bandwidth].flushes, 1U);
}

TEST(backpressure, slow_target_blocks_sources_without_loss)
{
	auto spec = base_spec("bp", {0}, 2);
	spec.segments = 2;
	spec.batch_bytes = 1024;
	std::vector<TransportStats> ts;
	auto got = run_flow(
	        spec, 2, 1500, [](uint32_t, uint32_t k) { return k; }, nullptr, &ts, 1ms);
	EXPECT_EQ(got[0].size(), 3000U);
	check_order(got[0]);
	uint64_t stalls = 0;
	for (auto &t : ts)
		stalls += t.stalls;
	EXPECT_GT(stalls, 0U) << "sources never had to wait for the slow target";
}

TEST(flow, target_loss_tolerated_acks_tell_survivors)
{
	auto hub = mem_hub();
	auto spec = base_spec("loss", {0, 1}, 1);
	spec.dist = Dist::broadcast();
	spec.ack.enabled = true;
	spec.ack.quorum = 1;
	spec.hint = Hint::latency;
	spec.tolerate_target_loss = true;
	auto t0 = Target::open(mem_transport(hub, 0), spec, 0);
	auto t1 = Target::open(mem_transport(hub, 1), spec, 1);
	auto s = Source::open(mem_transport(hub, 7), spec, 1);
	std::thread survivor([&] {
		uint32_t n = 0;
		for (const Delivered &d : *t0)
			EXPECT_EQ(tup_of(d.data).idx, n++);
		EXPECT_EQ(n, 100U);
	});
	for (uint32_t i = 0; i < 100; i++) {
		if (i == 5) // target 1 (never read: its ring holds 8) crashes mid-stream
			mem_kill(hub, 1);
		Tup tu{i, 1, i};
		s->push(view_of(tu));
	}
	s->close();
	survivor.join();
	EXPECT_TRUE(s->wait_acked(100, 5000ms));
	EXPECT_EQ(s->stats().targets_lost, 1U);
	(void)t1;

	// Without the option the loss is an error.
	auto hub2 = mem_hub();
	spec.tolerate_target_loss = false;
	spec.ack.enabled = false;
	auto u0 = Target::open(mem_transport(hub2, 0), spec, 0);
	auto u1 = Target::open(mem_transport(hub2, 1), spec, 1);
	auto s2 = Source::open(mem_transport(hub2, 7), spec, 1);
	mem_kill(hub2, 1);
	Tup tu{1, 1, 0};
	try {
		s2->push(view_of(tu));
		ADD_FAILURE() << "push to a dead target succeeded";
	} catch (const dpi::Error &e) {
		EXPECT_EQ(e.code(), dpi::Errc::connection_lost);
	}
}
