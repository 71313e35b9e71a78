// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Streaming aggregation two ways (Slash-style): every node produces a stream of
// (key, value) events with Zipf-skewed keys; the per-key SUM/COUNT/MIN/MAX is
// computed (a) by re-partitioning the raw events to the key's owner (reducer at
// the target), and (b) by eager partial aggregation at each source (a small
// table spilled when full and at the end) with a lazy merge at the owner.
// Both results are checked against a single-node computation; the bytes each
// way puts on the wire are reported and compared.
//
//   flows-stream --spec FILE --id I --nodes N [--events 100000] [--keys 20000]
//                [--capacity 4096] [--local 1]
#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace dpi::flow;
using flowapp::num;
using flowapp::opt;

namespace
{
struct Ev {
	uint64_t key;
	int64_t value;
};

std::vector<Ev> events(int node, uint64_t n, uint64_t keys, const std::vector<double> &cdf)
{
	std::mt19937_64 rng(mix64(0x5712ea + static_cast<uint64_t>(node)));
	std::uniform_real_distribution<double> u(0, 1);
	std::vector<Ev> v;
	v.reserve(n);
	for (uint64_t i = 0; i < n; i++) {
		auto r = static_cast<uint64_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
		v.push_back({std::min(r, keys - 1), static_cast<int64_t>(rng() % 2001) - 1000});
	}
	return v;
}

FlowSpec agg_spec(const std::string &name, int nodes, Placement where, size_t capacity)
{
	FlowSpec f;
	f.name = name;
	for (int i = 0; i < nodes; i++)
		f.targets.push_back(i);
	f.sources = static_cast<size_t>(nodes);
	f.tuple_size = sizeof(Ev);
	f.reduce = ReduceSpec{ReduceOp::sum,
	                      [](View t) {
		                      Ev e{};
		                      std::memcpy(&e, t.data(), sizeof(e));
		                      return e.value;
	                      },
	                      where, capacity};
	return f;
}

int run(const std::shared_ptr<Transport> &tr, int nodes, uint64_t n, uint64_t keys, size_t cap, const std::string &tag)
{
	int me = tr->node_id();
	try {
		std::vector<double> cdf(keys);
		double h = 0;
		for (uint64_t k = 0; k < keys; k++)
			cdf[k] = (h += 1.0 / static_cast<double>(k + 1));
		for (auto &c : cdf)
			c /= h;
		auto mine = events(me, n, keys, cdf);
		Aggregator ref;
		for (int i = 0; i < nodes; i++)
			for (const Ev &e : events(i, n, keys, cdf))
				ref.add(e.key, e.value);
		uint64_t bytes[2] = {0, 0};
		double secs[2] = {0, 0};
		bool ok[2] = {true, true};
		const char *how[2] = {"repartition", "partial"};
		for (int w = 0; w < 2; w++) {
			auto spec = agg_spec(std::string("st") + how[w], nodes,
			                     w ? Placement::source : Placement::target, cap);
			auto t = flowapp::retry([&] { return Target::open(tr, spec, static_cast<size_t>(me)); });
			auto t0 = std::chrono::steady_clock::now();
			std::vector<Aggregate> res;
			flowapp::Worker c(tag, me, [&] { res = t->results(std::chrono::minutes(5)); });
			c.beside([&] {
				auto s = flowapp::retry(
				        [&] { return Source::open(tr, spec, static_cast<uint32_t>(me)); });
				for (const Ev &e : mine)
					s->push({reinterpret_cast<const std::byte *>(&e), sizeof(e)});
				s->close();
				bytes[w] = s->stats().payload_bytes + s->stats().messages * MsgHeader::size;
			});
			c.join();
			secs[w] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
			// My share of the reference: the keys the hash sends to me.
			std::vector<uint32_t> d;
			size_t checked = 0;
			std::unordered_map<uint64_t, Aggregate> got;
			for (const Aggregate &a : res)
				got[a.key] = a;
			for (const Aggregate &a : ref.snapshot()) {
				spec.dist.targets(a.key, static_cast<size_t>(nodes), d);
				if (d[0] != static_cast<uint32_t>(me))
					continue;
				checked++;
				auto it = got.find(a.key);
				if (it == got.end() || !(it->second == a))
					ok[w] = false;
			}
			ok[w] = ok[w] && checked == res.size();
		}
		char buf[300];
		std::snprintf(buf, sizeof(buf),
		              "node %d, %llu zipf events over %llu keys: re-partitioning sent %llu B, eager partial "
		              "aggregation (table of %zu keys) sent %llu B (%.1f%%); %.3f s vs %.3f s",
		              me, static_cast<unsigned long long>(n), static_cast<unsigned long long>(keys),
		              static_cast<unsigned long long>(bytes[0]), cap, static_cast<unsigned long long>(bytes[1]),
		              100.0 * static_cast<double>(bytes[1]) / static_cast<double>(bytes[0]), secs[0], secs[1]);
		flowapp::result(ok[0], tag + ".repartition" + std::to_string(me), buf);
		flowapp::result(ok[1], tag + ".partial" + std::to_string(me), buf);
		// Skewed keys: partial aggregation must have saved bytes.
		flowapp::result(bytes[1] < bytes[0], tag + ".partial-saves" + std::to_string(me), buf);
		flowapp::flow_barrier(tr, "stdone", nodes, 0);
		return ok[0] && ok[1] && bytes[1] < bytes[0] ? 0 : 1;
	} catch (const std::exception &e) {
		flowapp::result(false, tag, "node " + std::to_string(me) + " error: " + e.what());
		return 1;
	}
}
} // namespace

int main(int argc, char **argv)
{
	auto args = flowapp::parse_args(argc, argv);
	int nodes = static_cast<int>(num(args, "nodes", 2));
	std::string tag = opt(args, "name", "flows.stream");
	auto n = static_cast<uint64_t>(num(args, "events", 100000));
	auto keys = static_cast<uint64_t>(num(args, "keys", 20000));
	auto cap = static_cast<size_t>(num(args, "capacity", 4096));
	return flowapp::run_app(args, nodes, tag, [&](auto tr) { return run(tr, nodes, n, keys, cap, tag); });
}
