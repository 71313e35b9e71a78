// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Shows that the flow hint changes the transport: node 1 sends the same tuples
// to node 0 through a latency-hinted flow and a bandwidth-hinted flow, and
// compares libdpi's counters (RDMA work requests posted, segments sealed) for
// each.  Node 0 checks that both flows delivered every tuple in order.
//
//   flows-hint --spec FILE --id 0|1 [--tuples 1000] [--name TAG]
//
// With --crash-after K it tests a crashing source instead: node 1 sends
// tuples, flushing every 100, and SIGKILLs itself right after flushing the
// first K; node 0's target (OnSourceCrash::end) must see libdpi's aborted
// ring end the flow, with every flushed tuple delivered in order and the
// crash reported.
#include "common.hpp"

#include <csignal>
#include <unistd.h>
#include <vector>

using namespace dpi::flow;
using flowapp::num;
using flowapp::opt;

namespace
{
FlowSpec spec_for(Hint h)
{
	FlowSpec f;
	f.name = h == Hint::latency ? "hint-lat" : "hint-bw";
	f.targets = {0};
	f.sources = 1;
	f.tuple_size = 16;
	f.hint = h;
	return f;
}

int crash_test(const std::shared_ptr<dpi::Node> &node, const std::shared_ptr<Transport> &tr, const std::string &tag,
               uint64_t k)
{
	FlowSpec f = spec_for(Hint::bandwidth);
	f.name = "crash";
	f.on_source_crash = OnSourceCrash::end;
	if (node->id() == 1) {
		auto src = flowapp::retry([&] { return Source::open(tr, f, 1); });
		for (uint64_t i = 0;; i++) {
			uint64_t v[2] = {i, ~i};
			src->push({reinterpret_cast<const std::byte *>(v), sizeof(v)});
			if ((i + 1) % 100 == 0) {
				src->flush();
				if (i + 1 >= k) {
					std::fprintf(stderr, "flows-hint: flushed %llu tuples, crashing\n",
					             static_cast<unsigned long long>(i) + 1);
					std::raise(SIGKILL);
				}
			}
		}
	}
	auto t = flowapp::retry([&] { return Target::open(tr, f, 0); });
	auto start = std::chrono::steady_clock::now();
	uint64_t want = 0;
	bool order = true;
	std::string err;
	try {
		while (!t->ended()) {
			auto d = t->next(Millis(1000));
			if (!d) {
				if (std::chrono::steady_clock::now() - start > std::chrono::seconds(180)) {
					err = "flow did not end within 180 s";
					break;
				}
				continue;
			}
			uint64_t v[2];
			std::memcpy(v, d->data.data(), sizeof(v));
			order = order && v[0] == want && v[1] == ~want;
			want++;
		}
	} catch (const std::exception &e) {
		err = e.what();
	}
	auto c = t->crashed();
	char buf[400];
	std::snprintf(
	        buf, sizeof(buf), "%llu tuples delivered in order=%d (>= %llu flushed), ended=%d, crashed=%zu%s%s",
	        static_cast<unsigned long long>(want), order ? 1 : 0, static_cast<unsigned long long>(k),
	        t->ended() ? 1 : 0, c.size(), c.empty() ? "" : ": ", c.empty() ? err.c_str() : c[0].reason.c_str());
	bool ok = err.empty() && order && want >= k && t->ended() && c.size() == 1 && c[0].source == 1 &&
	          c[0].delivered == want;
	flowapp::result(ok, tag + ".source-crash-ends-flow", buf);
	node->shutdown();
	return ok ? 0 : 1;
}
} // namespace

int main(int argc, char **argv)
{
	auto args = flowapp::parse_args(argc, argv);
	std::string tag = opt(args, "name", "flows.hint");
	auto n = static_cast<uint64_t>(num(args, "tuples", 1000));
	try {
		auto node = flowapp::start_node(args);
		auto tr = dpi_transport(node);
		if (args.contains("crash-after"))
			return crash_test(node, tr, tag, static_cast<uint64_t>(num(args, "crash-after", 500)));
		int rc = 0;
		if (node->id() == 0) {
			for (Hint h : {Hint::latency, Hint::bandwidth}) {
				auto t = flowapp::retry([&] { return Target::open(tr, spec_for(h), 0); });
				uint64_t want = 0;
				bool ok = true;
				for (const Delivered &d : *t) {
					uint64_t v[2];
					std::memcpy(v, d.data.data(), sizeof(v));
					ok = ok && v[0] == want && v[1] == ~want && d.seq == want;
					want++;
				}
				ok = ok && want == n;
				std::string name =
				        tag + (h == Hint::latency ? ".latency-delivery" : ".bandwidth-delivery");
				flowapp::result(ok, name,
				                std::to_string(want) + " of " + std::to_string(n) + " tuples in order");
				if (!ok)
					rc = 1;
			}
		} else {
			TransportStats st[2];
			for (Hint h : {Hint::latency, Hint::bandwidth}) {
				auto src = flowapp::retry([&] { return Source::open(tr, spec_for(h), 1); });
				TransportStats before = tr->stats();
				for (uint64_t i = 0; i < n; i++) {
					uint64_t v[2] = {i, ~i};
					src->push({reinterpret_cast<const std::byte *>(v), sizeof(v)});
				}
				src->close();
				TransportStats after = tr->stats();
				TransportStats &d = st[h == Hint::latency ? 0 : 1];
				d.messages = after.messages - before.messages;
				d.flushes = after.flushes - before.flushes;
				d.dpi_posted_wrs = after.dpi_posted_wrs - before.dpi_posted_wrs;
				d.dpi_segments = after.dpi_segments - before.dpi_segments;
			}
			char buf[300];
			std::snprintf(buf, sizeof(buf),
			              "%llu tuples: latency %llu msgs %llu flushes %llu WRs %llu segments; bandwidth "
			              "%llu msgs "
			              "%llu flushes %llu WRs %llu segments",
			              static_cast<unsigned long long>(n),
			              static_cast<unsigned long long>(st[0].messages),
			              static_cast<unsigned long long>(st[0].flushes),
			              static_cast<unsigned long long>(st[0].dpi_posted_wrs),
			              static_cast<unsigned long long>(st[0].dpi_segments),
			              static_cast<unsigned long long>(st[1].messages),
			              static_cast<unsigned long long>(st[1].flushes),
			              static_cast<unsigned long long>(st[1].dpi_posted_wrs),
			              static_cast<unsigned long long>(st[1].dpi_segments));
			// Latency: every tuple is its own message and segment (made visible
			// at once).  Bandwidth: a few large messages, segments sealed only
			// when full or at close.
			bool ok = st[0].dpi_segments >= n && st[1].dpi_segments * 50 <= n &&
			          st[0].dpi_posted_wrs >= 5 * st[1].dpi_posted_wrs && st[1].dpi_posted_wrs > 0;
			flowapp::result(ok, tag + ".transport-differs", buf);
			if (!ok)
				rc = 1;
		}
		flowapp::flow_barrier(tr, "hint-done", 2, 0);
		node->shutdown();
		return rc;
	} catch (const std::exception &e) {
		flowapp::result(false, tag, std::string("node error: ") + e.what());
		return 1;
	}
}
