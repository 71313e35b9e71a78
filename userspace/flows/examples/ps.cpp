// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Parameter-server aggregation: node 0 holds a model of --params integer
// parameters and broadcasts it to the workers (nodes 1..N-1) over one
// long-lived model flow; each round every worker checks the model it received,
// computes a deterministic update and sends it over that round's update flow,
// which SUM-reduces at the workers (partial aggregation) and merges at node 0.
// The final model is compared with a locally computed one.
//
//   flows-ps --spec FILE --id I --nodes N [--params 1000] [--rounds 3] [--local 1]
#include "common.hpp"

#include <algorithm>
#include <vector>

using namespace dpi::flow;
using flowapp::num;
using flowapp::opt;

namespace
{
int64_t grad(int worker, uint64_t j, int round)
{
	return static_cast<int64_t>((static_cast<uint64_t>(worker) * 31 + j * 7 + static_cast<uint64_t>(round)) % 11) -
	       5;
}

std::vector<int64_t> expected_model(int nodes, uint64_t params, int rounds)
{
	std::vector<int64_t> m(params, 0);
	for (int r = 0; r < rounds; r++)
		for (int w = 1; w < nodes; w++)
			for (uint64_t j = 0; j < params; j++)
				m[j] += grad(w, j, r);
	return m;
}

struct Param {
	uint64_t idx;
	int64_t value;
};

FlowSpec model_spec(int nodes)
{
	FlowSpec f;
	f.name = "psmodel";
	for (int i = 1; i < nodes; i++)
		f.targets.push_back(i);
	f.sources = 0; // long-lived: serves every round
	f.tuple_size = sizeof(Param);
	f.dist = Dist::broadcast();
	return f;
}

FlowSpec update_spec(int nodes, int round)
{
	FlowSpec f;
	f.name = "psupd" + std::to_string(round);
	f.targets = {0};
	f.sources = static_cast<size_t>(nodes - 1);
	f.tuple_size = sizeof(Param);
	f.reduce = ReduceSpec{ReduceOp::sum,
	                      [](View t) {
		                      Param p{};
		                      std::memcpy(&p, t.data(), sizeof(p));
		                      return p.value;
	                      },
	                      Placement::source, 1U << 16};
	return f;
}

int run(const std::shared_ptr<Transport> &tr, int nodes, uint64_t params, int rounds, const std::string &tag)
{
	int me = tr->node_id();
	try {
		bool ok = true;
		std::string detail;
		if (me == 0) {
			std::vector<int64_t> model(params, 0);
			auto src = flowapp::retry([&] { return Source::open(tr, model_spec(nodes), 0); });
			for (int r = 0; r < rounds; r++) {
				auto upd = flowapp::retry([&] { return Target::open(tr, update_spec(nodes, r), 0); });
				for (uint64_t j = 0; j < params; j++) {
					Param p{j, model[j]};
					src->push({reinterpret_cast<const std::byte *>(&p), sizeof(p)});
				}
				src->flush();
				auto agg = upd->results(std::chrono::minutes(3));
				if (agg.size() != params)
					ok = false;
				for (const Aggregate &a : agg) {
					if (a.key >= params || a.count != nodes - 1) {
						ok = false;
						continue;
					}
					model[a.key] += a.sum;
				}
			}
			src->close();
			ok = ok && model == expected_model(nodes, params, rounds);
			detail = std::to_string(nodes - 1) + " workers, " + std::to_string(params) + " parameters, " +
			         std::to_string(rounds) + " rounds: final model " + (ok ? "matches" : "differs from") +
			         " the local computation";
		} else {
			auto mt = flowapp::retry(
			        [&] { return Target::open(tr, model_spec(nodes), static_cast<size_t>(me - 1)); });
			for (int r = 0; r < rounds; r++) {
				std::vector<int64_t> want = expected_model(nodes, params, r);
				uint64_t got = 0;
				while (got < params) {
					auto d = mt->next(std::chrono::minutes(2));
					if (!d)
						throw dpi::Error(dpi::Errc::timeout,
						                 "model of round " + std::to_string(r) + " incomplete");
					Param p{};
					std::memcpy(&p, d->data.data(), sizeof(p));
					if (p.idx != got || p.value != want[got])
						ok = false;
					got++;
				}
				auto src = flowapp::retry([&] {
					return Source::open(tr, update_spec(nodes, r), static_cast<uint32_t>(me));
				});
				for (uint64_t j = 0; j < params; j++) {
					Param p{j, grad(me, j, r)};
					src->push({reinterpret_cast<const std::byte *>(&p), sizeof(p)});
				}
				src->close();
			}
			detail = "worker " + std::to_string(me) + ": " + std::to_string(rounds) + " models " +
			         (ok ? "as expected" : "wrong");
		}
		flowapp::result(ok, tag + (me == 0 ? std::string() : ".worker" + std::to_string(me)), detail);
		flowapp::flow_barrier(tr, "psdone", nodes, 0);
		return ok ? 0 : 1;
	} catch (const std::exception &e) {
		flowapp::result(false, tag, "node " + std::to_string(me) + " error: " + e.what());
		return 1;
	}
}
} // namespace

int main(int argc, char **argv)
{
	auto args = flowapp::parse_args(argc, argv);
	int nodes = static_cast<int>(num(args, "nodes", 3));
	std::string tag = opt(args, "name", "flows.ps");
	auto params = static_cast<uint64_t>(num(args, "params", 1000));
	int rounds = static_cast<int>(num(args, "rounds", 3));
	return flowapp::run_app(args, nodes, tag, [&](auto tr) { return run(tr, nodes, params, rounds, tag); });
}
