// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Distributed hash join on DPI flows (DPI paper §6).  Every node holds a share
// of two tables R and S (generated deterministically from --seed), shuffles
// both through hash-partitioned flows so matching keys meet on one node,
// builds a hash table of its R partition and probes it with its S partition.
// A third flow SUM-reduces the per-node results at node 0, which compares
// them with a single-node join of the complete tables.  Every node also checks
// its own partition against a local computation.
//
//   flows-join --spec FILE --id I --nodes N [--rows 20000] [--keys 5000]
//              [--dist uniform|zipf] [--theta 1.0] [--seed 1] [--name TAG]
//              [--warmup 1]   (set up every connection before the timed part)
#include "common.hpp"
#include "join_common.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_map>
#include <vector>

using namespace dpi::flow;
using namespace joinapp;
using flowapp::num;
using flowapp::opt;

namespace
{
FlowSpec shuffle_spec(const std::string &name, int nodes)
{
	FlowSpec f;
	f.name = name;
	for (int i = 0; i < nodes; i++)
		f.targets.push_back(i);
	f.sources = static_cast<size_t>(nodes);
	f.tuple_size = sizeof(Row);
	f.group = [](View t) {
		Row r{};
		std::memcpy(&r, t.data(), sizeof(r));
		return r.key;
	};
	f.dist = Dist::hash();
	f.hint = Hint::bandwidth;
	return f;
}

std::vector<Row> collect(Target &t)
{
	std::vector<Row> v;
	for (const Delivered &d : t) {
		Row r{};
		std::memcpy(&r, d.data.data(), sizeof(r));
		v.push_back(r);
	}
	return v;
}
} // namespace

// Every node sends one tuple to every node and waits for one from every
// node: the whole mesh of connections is set up, and every node has got
// this far, before the timed part (for benchmarks).
void warm_up(const std::shared_ptr<Transport> &tr, int nodes, const std::string &p)
{
	FlowSpec f = shuffle_spec(p + "W", nodes);
	f.dist = Dist::broadcast();
	int me = tr->node_id();
	auto t = flowapp::retry([&] { return Target::open(tr, f, static_cast<size_t>(me)); });
	{
		auto s = flowapp::retry([&] { return Source::open(tr, f, static_cast<uint32_t>(me)); });
		Row r{0, 0};
		s->push({reinterpret_cast<const std::byte *>(&r), sizeof(r)});
		s->close();
	}
	for ([[maybe_unused]] const Delivered &d : *t) {
	}
}

int run(const std::shared_ptr<Transport> &tr, int nodes, const Gen &g, const std::string &tag, const std::string &p,
        bool warmup)
{
	int me = tr->node_id();
	try {
		auto rs = shuffle_spec(p + "R", nodes);
		auto ss = shuffle_spec(p + "S", nodes);
		// Opening is timed apart from the join: a source's open waits until
		// every peer has created its target buffer, which measures the
		// peers' start skew, not the flow.  mpi_join starts its clock
		// after an MPI_Barrier; the warm-up, after the opens, is ours (no
		// node gets past it before every node has opened its flows), so a
		// node that opened early does not count its wait for the others
		// as exchange.  This node's rows exist before the clock starts,
		// as in mpi_join.
		auto rshare = g.share(0, me, nodes);
		auto sshare = g.share(1, me, nodes);
		auto t_open = std::chrono::steady_clock::now();
		auto tr_r = flowapp::retry([&] { return Target::open(tr, rs, static_cast<size_t>(me)); });
		auto tr_s = flowapp::retry([&] { return Target::open(tr, ss, static_cast<size_t>(me)); });
		auto src_r = flowapp::retry([&] { return Source::open(tr, rs, static_cast<uint32_t>(me)); });
		auto src_s = flowapp::retry([&] { return Source::open(tr, ss, static_cast<uint32_t>(me)); });
		double open_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_open).count();
		if (warmup)
			warm_up(tr, nodes, p);
		auto t0 = std::chrono::steady_clock::now();
		std::vector<Row> rpart, spart;
		flowapp::Worker cr(tag, me, [&] { rpart = collect(*tr_r); });
		flowapp::Worker cs(tag, me, [&] { spart = collect(*tr_s); });
		uint64_t sent_bytes = 0, msgs = 0;
		double close_secs = 0;
		cr.beside([&] {
			for (const Row &x : rshare)
				src_r->push({reinterpret_cast<const std::byte *>(&x), sizeof(x)});
			for (const Row &x : sshare)
				src_s->push({reinterpret_cast<const std::byte *>(&x), sizeof(x)});
			// Ending a flow is a round trip to every target (side by side
			// in the library), a fixed cost that weighs most on a small
			// exchange; the two flows end side by side too.  Timed apart.
			auto t_close = std::chrono::steady_clock::now();
			flowapp::Worker close_s(tag, me, [&] { src_s->close(); });
			close_s.beside([&] { src_r->close(); });
			close_s.join();
			close_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_close).count();
			sent_bytes = src_r->stats().payload_bytes + src_s->stats().payload_bytes;
			msgs = src_r->stats().messages + src_s->stats().messages;
		});
		cr.join();
		cs.join();
		double exchange_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		JoinResult mine = hash_join(rpart, spart);
		double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

		// Local check: my partition, computed from the complete tables.
		std::vector<Row> all_r, all_s, exp_r, exp_s;
		for (int n = 0; n < nodes; n++) {
			auto a = g.share(0, n, nodes);
			auto b = g.share(1, n, nodes);
			all_r.insert(all_r.end(), a.begin(), a.end());
			all_s.insert(all_s.end(), b.begin(), b.end());
		}
		std::vector<uint32_t> d;
		for (const Row &x : all_r) {
			rs.dist.targets(x.key, static_cast<size_t>(nodes), d);
			if (d[0] == static_cast<uint32_t>(me))
				exp_r.push_back(x);
		}
		for (const Row &x : all_s) {
			ss.dist.targets(x.key, static_cast<size_t>(nodes), d);
			if (d[0] == static_cast<uint32_t>(me))
				exp_s.push_back(x);
		}
		JoinResult want_mine = hash_join(exp_r, exp_s);
		auto by_payload = [](const Row &a, const Row &b) { return a.payload < b.payload; };
		std::sort(rpart.begin(), rpart.end(), by_payload);
		std::sort(exp_r.begin(), exp_r.end(), by_payload);
		std::sort(spart.begin(), spart.end(), by_payload);
		std::sort(exp_s.begin(), exp_s.end(), by_payload);
		auto same = [](const std::vector<Row> &a, const std::vector<Row> &b) {
			return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](auto &x, auto &y) {
				       return x.key == y.key && x.payload == y.payload;
			       });
		};
		bool ok_part = same(rpart, exp_r) && same(spart, exp_s) && mine.matches == want_mine.matches &&
		               mine.checksum == want_mine.checksum;
		char buf[400];
		std::snprintf(
		        buf, sizeof(buf),
		        "node %d: R %lld/%zu S %lld/%zu rows, %lld matches (want %lld), %.2f s, %llu msgs %llu B, "
		        "open %.3f s, close %.3f s, exchange %.3f s",
		        me, static_cast<long long>(mine.r_rows), exp_r.size(), static_cast<long long>(mine.s_rows),
		        exp_s.size(), static_cast<long long>(mine.matches), static_cast<long long>(want_mine.matches),
		        secs, static_cast<unsigned long long>(msgs), static_cast<unsigned long long>(sent_bytes),
		        open_secs, close_secs, exchange_secs);
		flowapp::result(ok_part, tag + ".partition" + std::to_string(me), buf);

		// Global: SUM-reduce the per-node results at node 0 (partial aggregation
		// at the source), compare with a single-node join.
		FlowSpec res;
		res.name = p + "res";
		res.targets = {0};
		res.sources = static_cast<size_t>(nodes);
		res.tuple_size = 16;
		res.dist = Dist::hash();
		res.reduce = ReduceSpec{ReduceOp::sum,
		                        [](View t) {
			                        int64_t v = 0;
			                        std::memcpy(&v, t.data() + 8, 8);
			                        return v;
		                        },
		                        Placement::source, 16};
		std::unique_ptr<Target> rt;
		if (me == 0)
			rt = flowapp::retry([&] { return Target::open(tr, res, 0); });
		{
			auto src = flowapp::retry([&] { return Source::open(tr, res, static_cast<uint32_t>(me)); });
			int64_t vals[4] = {mine.matches, mine.checksum, mine.r_rows, mine.s_rows};
			for (uint64_t k = 0; k < 4; k++) {
				uint64_t tup[2] = {k, static_cast<uint64_t>(vals[k])};
				src->push({reinterpret_cast<const std::byte *>(tup), sizeof(tup)});
			}
			src->close();
		}
		int rc = ok_part ? 0 : 1;
		if (me == 0) {
			auto agg = rt->results(std::chrono::minutes(5));
			JoinResult single = hash_join(all_r, all_s);
			int64_t want[4] = {single.matches, single.checksum, single.r_rows, single.s_rows};
			bool ok = agg.size() == 4;
			for (size_t k = 0; ok && k < 4; k++)
				ok = agg[k].key == k && agg[k].sum == want[k] && agg[k].count == nodes;
			std::snprintf(buf, sizeof(buf),
			              "%d nodes, %s keys, %llu+%llu rows: distributed %lld matches checksum %lld, "
			              "single-node %lld matches checksum %lld",
			              nodes, g.zipf ? "zipf" : "uniform", static_cast<unsigned long long>(g.rows),
			              static_cast<unsigned long long>(g.rows),
			              static_cast<long long>(agg.size() == 4 ? agg[0].sum : -1),
			              static_cast<long long>(agg.size() == 4 ? agg[1].sum : -1),
			              static_cast<long long>(single.matches), static_cast<long long>(single.checksum));
			flowapp::result(ok, tag, buf);
			if (!ok)
				rc = 1;
		}
		flowapp::flow_barrier(tr, p + "done", nodes, 0);
		return rc;
	} catch (const std::exception &e) {
		flowapp::result(false, tag, "node " + std::to_string(me) + " error: " + e.what());
		return 1;
	}
}

int main(int argc, char **argv)
{
	auto args = flowapp::parse_args(argc, argv);
	int nodes = static_cast<int>(num(args, "nodes", 2));
	std::string tag = opt(args, "name", "flows.join");
	Gen g{static_cast<uint64_t>(num(args, "rows", 20000)), static_cast<uint64_t>(num(args, "keys", 5000)),
	      opt(args, "dist", "uniform") == "zipf",          std::stod(opt(args, "theta", "1.0")),
	      static_cast<uint64_t>(num(args, "seed", 1)),     {}};
	g.init();
	std::string p = opt(args, "prefix", "j");
	// A warm-up round only measures something on a real network.
	bool warmup = num(args, "local", 0) == 0 && num(args, "warmup", 0) != 0;
	return flowapp::run_app(args, nodes, tag, [&](auto tr) { return run(tr, nodes, g, tag, p, warmup); });
}
