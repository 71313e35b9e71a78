// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// What a flow costs per tuple, apart from any network (issue 19: "flows
// overhead per tuple measured").  One source pushes --tuples tuples of each
// --sizes through a flow to one target, both on the in-process transport
// (mem_transport: a bounded queue per source, no RDMA), with the bandwidth
// hint and 256 KiB batches as the benchmarks use; the target reads every key.
// The baseline does the least any transport must: copy each tuple into a
// 256 KiB batch buffer and read its key back.  Run natively on the host (TCG
// would make both numbers meaningless).  One JSON line per size:
//   {"kind":"overhead","tuple":..,"tuples":..,"flow_ns":..,"copy_ns":..,"ratio":..,"ok":..}
// with nanoseconds per tuple, best of --reps runs each.
//
//   flows-overhead [--tuples 2000000] [--sizes 16,64,256,1024] [--reps 3]
#include "common.hpp"
#include "shuffle_common.hpp"

#include <sstream>

using namespace dpi::flow;
using Clock = std::chrono::steady_clock;

namespace
{
constexpr size_t batch = 256U << 10;

struct Run {
	double ns = 0;
	uint64_t keysum = 0;
	uint64_t tuples = 0;
};

Run through_flow(size_t tsize, uint64_t n, int rep)
{
	auto hub = mem_hub();
	FlowSpec f;
	f.name = "overhead-" + std::to_string(tsize) + "-" + std::to_string(rep);
	f.targets = {0};
	f.sources = 1;
	f.tuple_size = tsize;
	f.segment_size = 1U << 20; // as flows-shuffle
	f.batch_bytes = batch;
	auto tgt = Target::open(mem_transport(hub, 0), f, 0);
	Run r;
	auto t0 = Clock::now();
	std::thread rx([&] {
		for (const Delivered &d : *tgt) {
			r.keysum += shuffleapp::key_of(d.data.data());
			r.tuples++;
		}
	});
	{
		auto src = Source::open(mem_transport(hub, 1), f, 0);
		std::vector<std::byte> t(tsize);
		for (uint64_t i = 0; i < n; i++) {
			shuffleapp::make_tuple(0, i, t);
			src->push(t);
		}
		src->close();
	}
	rx.join();
	r.ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n);
	return r;
}

Run copy_only(size_t tsize, uint64_t n)
{
	std::vector<std::byte> buf(batch), t(tsize);
	Run r;
	size_t used = 0;
	auto drain = [&] {
		for (size_t o = 0; o + tsize <= used; o += tsize) {
			r.keysum += shuffleapp::key_of(buf.data() + o);
			r.tuples++;
		}
		used = 0;
	};
	auto t0 = Clock::now();
	for (uint64_t i = 0; i < n; i++) {
		shuffleapp::make_tuple(0, i, t);
		if (used + tsize > buf.size())
			drain();
		std::memcpy(buf.data() + used, t.data(), tsize);
		used += tsize;
	}
	drain();
	r.ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n);
	return r;
}
} // namespace

int main(int argc, char **argv)
try {
	auto args = flowapp::parse_args(argc, argv);
	auto n = static_cast<uint64_t>(flowapp::num(args, "tuples", 2000000));
	int reps = static_cast<int>(flowapp::num(args, "reps", 3));
	std::stringstream sizes(flowapp::opt(args, "sizes", "16,64,256,1024"));
	int rc = 0;
	for (std::string s; std::getline(sizes, s, ',');) {
		size_t tsize = std::stoul(s);
		if (tsize < 8) {
			std::fprintf(stderr, "flows-overhead: tuple size %zu < 8\n", tsize);
			return 2;
		}
		Run best_flow, best_copy;
		bool ok = true;
		for (int rep = 0; rep < reps; rep++) {
			// alternated, so that drift hits both alike
			Run c = copy_only(tsize, n);
			Run f = through_flow(tsize, n, rep);
			ok = ok && f.tuples == n && c.tuples == n && f.keysum == c.keysum;
			if (rep == 0 || f.ns < best_flow.ns)
				best_flow = f;
			if (rep == 0 || c.ns < best_copy.ns)
				best_copy = c;
		}
		std::printf("{\"kind\":\"overhead\",\"tuple\":%zu,\"tuples\":%llu,\"flow_ns\":%.1f,\"copy_ns\":%.1f,"
		            "\"ratio\":%.2f,\"ok\":%s}\n",
		            tsize, static_cast<unsigned long long>(n), best_flow.ns, best_copy.ns,
		            best_flow.ns / best_copy.ns, ok ? "true" : "false");
		std::fflush(stdout);
		rc |= ok ? 0 : 1;
	}
	return rc;
} catch (const std::exception &e) {
	std::fprintf(stderr, "flows-overhead: %s\n", e.what());
	return 1;
}
