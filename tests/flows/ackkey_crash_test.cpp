// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// User-defined acknowledgement keys (F_ack, aggregated per key over targets at
// the source) and sources that crash instead of closing, over the in-process
// transport.
#include <dpi/dpi.hpp>
#include <dpi/flow.hpp>

#include <gtest/gtest.h>

#include "flow_fixture.hpp"

#include <cstring>
#include <thread>

using namespace dpi::flow;
using namespace flow_fixture;
using namespace std::chrono_literals;

// Four tuples per "transaction"; F_ack = transaction id; quorum: 2 of 3
// targets.  Targets acknowledge different prefixes by hand.
TEST(ackkey, keys_flow_back_and_aggregate_to_a_quorum)
{
	auto hub = mem_hub();
	auto spec = base_spec("keys", {0, 1, 2}, 1);
	spec.dist = Dist::broadcast();
	spec.ack.enabled = true;
	spec.ack.automatic = false;
	spec.ack.key = [](View t) { return uint64_t{tup_of(t).idx / 4}; };
	spec.ack.key_quorum = 2;
	std::vector<std::unique_ptr<Target>> t;
	for (size_t i = 0; i < 3; i++)
		t.push_back(Target::open(mem_transport(hub, static_cast<int>(i)), spec, i));
	auto s = Source::open(mem_transport(hub, 9), spec, 5);
	for (uint32_t i = 0; i < 20; i++)
		s->push(view_of(Tup{1000 + i, 5, i}));
	s->flush();
	for (auto &tg : t)
		for (int i = 0; i < 20; i++)
			ASSERT_TRUE(tg->next(1000ms));
	EXPECT_FALSE(s->wait_key(0, 100ms)); // delivered, nobody acknowledged
	t[0]->ack(5, 20);                    // everything
	t[1]->ack(5, 10);                    // transactions 0, 1 and half of 2
	EXPECT_TRUE(s->wait_key(2, 2000ms));
	EXPECT_TRUE(s->wait_key(0, 100ms));
	EXPECT_TRUE(s->wait_key(1, 100ms));
	EXPECT_FALSE(s->wait_key(3, 100ms)); // one target of the two needed
	EXPECT_EQ(s->keys_acked(), 3U);
	KeyAck k0 = s->key_ack(0);
	EXPECT_EQ(k0.targets, 2U);
	EXPECT_EQ(k0.tuples, 8U);
	EXPECT_TRUE(k0.acked);
	KeyAck k2 = s->key_ack(2);
	EXPECT_EQ(k2.targets, 2U);
	EXPECT_EQ(k2.tuples, 6U); // 4 from target 0, 2 from target 1
	KeyAck k4 = s->key_ack(4);
	EXPECT_EQ(k4.targets, 1U);
	EXPECT_FALSE(k4.acked);
	EXPECT_EQ(s->key_ack(77).targets, 0U); // never sent
	t[2]->ack(5, 20);
	EXPECT_TRUE(s->wait_key(4, 2000ms));
	EXPECT_EQ(s->keys_acked(), 5U);
	EXPECT_EQ(s->key_ack(2).targets, 3U);
	EXPECT_EQ(s->key_ack(2).tuples, 10U);
	// The sequence-number watermark keeps working alongside (quorum 0 = all
	// three targets, and target 1 acknowledged only 10).
	EXPECT_TRUE(s->wait_acked(10, 2000ms));
	EXPECT_FALSE(s->wait_acked(11, 100ms));
}

// Automatic acks on a hash shuffle: each key goes to one target, so a quorum
// of one; a target-side map that drops tuples sends no key for them.
TEST(ackkey, automatic_keys_on_a_shuffle)
{
	auto hub = mem_hub();
	auto spec = base_spec("akeys", {0, 1, 2}, 1);
	spec.ack.enabled = true;
	spec.ack.key = [](View t) { return tup_of(t).key; };
	spec.maps = {Map::user(
	        "drop-multiples-of-7",
	        [](View in, Bytes &out) {
		        if (tup_of(in).key % 7 == 0)
			        return false;
		        out.assign(in.begin(), in.end());
		        return true;
	        },
	        Placement::target)};
	std::vector<std::unique_ptr<Target>> t;
	std::vector<std::thread> th;
	for (size_t i = 0; i < 3; i++)
		t.push_back(Target::open(mem_transport(hub, static_cast<int>(i)), spec, i));
	for (size_t i = 0; i < 3; i++)
		th.emplace_back([&, i] {
			for ([[maybe_unused]] const Delivered &d : *t[i]) {
			}
		});
	auto s = Source::open(mem_transport(hub, 9), spec, 1);
	for (uint32_t i = 0; i < 300; i++)
		s->push(view_of(Tup{i % 100, 1, i})); // keys 0..99, three tuples each
	s->close();
	for (auto &x : th)
		x.join();
	for (uint64_t k = 0; k < 100; k++) {
		KeyAck a = s->key_ack(k);
		if (k % 7 == 0) {
			EXPECT_EQ(a.targets, 0U) << k;
		} else {
			EXPECT_TRUE(s->wait_key(k, 2000ms)) << k;
			EXPECT_EQ(s->key_ack(k).tuples, 3U) << k;
			EXPECT_EQ(s->key_ack(k).targets, 1U) << k;
		}
	}
	EXPECT_EQ(s->keys_acked(), 100U - 15U); // 0, 7, ..., 98 dropped
}

TEST(ackkey, spec_checks)
{
	auto spec = base_spec("bad", {0, 1}, 1);
	spec.ack.key = [](View) { return uint64_t{0}; };
	EXPECT_THROW(spec.validate(), dpi::Error); // keys without acks
	spec.ack.enabled = true;
	spec.validate();
	spec.ack.key_quorum = 3;
	EXPECT_THROW(spec.validate(), dpi::Error); // more than the targets
}

namespace
{
// Source 0 (node 10) sends 5 tuples and closes; source 1 (node 11) flushes 7
// and crashes; source 2 (node 12, optional) opens and crashes before sending.
struct CrashRun {
	std::vector<Tup> got;
	std::unique_ptr<Target> target;
	std::string error;
};
CrashRun crash_run(OnSourceCrash policy, bool silent_third)
{
	auto hub = mem_hub();
	auto spec = base_spec("crash", {0}, silent_third ? 3 : 2);
	spec.on_source_crash = policy;
	spec.ack.enabled = true; // acks to the crashed source must not fail the target
	CrashRun r;
	r.target = Target::open(mem_transport(hub, 0), spec, 0);
	{
		auto a = Source::open(mem_transport(hub, 10), spec, 0);
		for (uint32_t i = 0; i < 5; i++)
			a->push(view_of(Tup{i, 0, i}));
		a->close();
	}
	auto b = Source::open(mem_transport(hub, 11), spec, 1);
	for (uint32_t i = 0; i < 7; i++)
		b->push(view_of(Tup{i, 1, i}));
	b->flush();
	std::unique_ptr<Source> c;
	if (silent_third)
		c = Source::open(mem_transport(hub, 12), spec, 2);
	mem_crash(hub, 11);
	if (silent_third)
		mem_crash(hub, 12);
	try {
		for (const Delivered &d : *r.target)
			r.got.push_back(tup_of(d.data));
	} catch (const dpi::Error &e) {
		EXPECT_EQ(e.code(), dpi::Errc::connection_lost);
		r.error = e.what();
	}
	// The crashed sources' destructors fail to send their end; that is swallowed.
	return r;
}
} // namespace

TEST(crash, source_crash_fails_a_finite_flow_by_default)
{
	auto r = crash_run(OnSourceCrash::fail, false);
	EXPECT_EQ(r.got.size(), 12U); // everything flushed before the crash
	EXPECT_NE(r.error.find("source 1 (node 11) vanished without closing after 7 tuples"), std::string::npos)
	        << r.error;
	EXPECT_FALSE(r.target->ended());
}

TEST(crash, source_crash_ends_the_flow_when_asked)
{
	auto r = crash_run(OnSourceCrash::end, true);
	EXPECT_EQ(r.error, "");
	EXPECT_TRUE(r.target->ended());
	ASSERT_EQ(r.got.size(), 12U);
	uint32_t n1 = 0;
	for (const Tup &t : r.got)
		if (t.src == 1) {
			EXPECT_EQ(t.idx, n1++); // in order, a prefix
		}
	EXPECT_EQ(n1, 7U);
	auto c = r.target->crashed();
	ASSERT_EQ(c.size(), 2U);
	EXPECT_EQ(c[0].source, 1U);
	EXPECT_EQ(c[0].node, 11);
	EXPECT_EQ(c[0].delivered, 7U);
	EXPECT_EQ(c[1].source, UINT32_MAX); // crashed before sending anything
	EXPECT_EQ(c[1].node, 12);
}

TEST(crash, closed_source_that_dies_later_is_not_a_crash)
{
	auto hub = mem_hub();
	auto spec = base_spec("closed", {0}, 1);
	spec.on_source_crash = OnSourceCrash::fail;
	auto t = Target::open(mem_transport(hub, 0), spec, 0);
	auto s = Source::open(mem_transport(hub, 10), spec, 0);
	s->push(view_of(Tup{1, 0, 0}));
	s->close();
	mem_crash(hub, 10);
	size_t n = 0;
	for ([[maybe_unused]] const Delivered &d : *t)
		n++;
	EXPECT_EQ(n, 1U);
	EXPECT_TRUE(t->crashed().empty());
}

// A target that crashes (its ack sink to the source aborts) must not break the
// source's acknowledgements: the survivors' quorum acks carry on.
TEST(crash, target_crash_with_acks_keeps_quorum_acks_working)
{
	auto hub = mem_hub();
	auto spec = base_spec("tcrash", {0, 1}, 1);
	spec.dist = Dist::broadcast();
	spec.ack.enabled = true;
	spec.ack.quorum = 1;
	spec.hint = Hint::latency;
	spec.tolerate_target_loss = true;
	auto t0 = Target::open(mem_transport(hub, 0), spec, 0);
	auto t1 = Target::open(mem_transport(hub, 1), spec, 1);
	auto s = Source::open(mem_transport(hub, 7), spec, 1);
	for (uint32_t i = 0; i < 3; i++)
		s->push(view_of(Tup{i, 1, i}));
	for (int i = 0; i < 3; i++)
		ASSERT_TRUE(t1->next(1000ms)); // target 1 acknowledges (opens its ack sink) ...
	EXPECT_TRUE(s->wait_acked(3, 2000ms));
	mem_crash(hub, 1); // ... and crashes
	std::thread survivor([&] {
		uint32_t n = 0;
		for (const Delivered &d : *t0)
			EXPECT_EQ(tup_of(d.data).idx, n++);
		EXPECT_EQ(n, 20U);
	});
	for (uint32_t i = 3; i < 20; i++)
		s->push(view_of(Tup{i, 1, i}));
	s->close();
	survivor.join();
	EXPECT_NO_THROW(EXPECT_TRUE(s->wait_acked(20, 5000ms)));
	EXPECT_EQ(s->stats().targets_lost, 1U);
}
