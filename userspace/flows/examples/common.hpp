// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Shared bits of the flow example applications: option parsing, starting a
// DPI node from a cluster spec, retrying while peers come up, PASS/FAIL lines.
#pragma once

#include <dpi/dpi.hpp>
#include <dpi/flow.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace flowapp
{

using namespace std::chrono_literals;

// --key value options into a map; bare words are errors.
inline std::map<std::string, std::string> parse_args(int argc, char **argv)
{
	std::map<std::string, std::string> m;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a.rfind("--", 0) != 0 || i + 1 >= argc) {
			std::fprintf(stderr, "bad argument '%s' (options are --name value)\n", a.c_str());
			std::exit(2);
		}
		m[a.substr(2)] = argv[++i];
	}
	return m;
}

inline std::string opt(const std::map<std::string, std::string> &m, const std::string &k, const std::string &def)
{
	auto it = m.find(k);
	return it == m.end() ? def : it->second;
}

inline long long num(const std::map<std::string, std::string> &m, const std::string &k, long long def)
{
	auto it = m.find(k);
	return it == m.end() ? def : std::stoll(it->second);
}

inline std::shared_ptr<dpi::Node> start_node(const std::map<std::string, std::string> &m)
{
	// --spec FILE (or $DPI_CLUSTER) with --id; without either, the launcher's
	// PMIx server (mpirun) gives the node id and every node's address.
	dpi::Options o;
	std::optional<int> id;
	if (m.contains("id"))
		id = static_cast<int>(num(m, "id", -1));
	auto l = dpi::launch_from_env(opt(m, "spec", ""), id);
	o.spec = std::move(l.spec);
	o.node_id = l.node_id;
	o.launcher = std::move(l.session);
	o.op_timeout = std::chrono::milliseconds(num(m, "op-timeout-ms", 120000));
	auto n = dpi::Node::start(o);
	std::fprintf(stderr, "flows: node %d up\n", n->id());
	return n;
}

// Peers start at slightly different times: retry what fails because a peer
// (or the directory) is not up yet.
template <class F> auto retry(F f, std::chrono::seconds budget = 60s)
{
	auto deadline = std::chrono::steady_clock::now() + budget;
	for (;;) {
		try {
			return f();
		} catch (const dpi::Error &e) {
			bool transient = e.code() == dpi::Errc::unreachable || e.code() == dpi::Errc::unknown_buffer;
			if (!transient || std::chrono::steady_clock::now() > deadline)
				throw;
		}
		std::this_thread::sleep_for(200ms);
	}
}

// Test result lines in the suite format.
inline void result(bool ok, const std::string &name, const std::string &detail)
{
	if (ok)
		std::printf("PASS: %s\n", name.c_str());
	else
		std::printf("FAIL: %s [%s]\n", name.c_str(), detail.c_str());
	std::printf("# %s: %s\n", name.c_str(), detail.c_str());
	std::fflush(stdout);
}

// Ends this node at once: a FAIL line for tag naming node me's error e,
// then exit status 1.  For errors while a Worker runs (below).
[[noreturn]] inline void fail_now(const std::string &tag, int me, const std::exception_ptr &e)
{
	std::string what = "unknown exception";
	try {
		std::rethrow_exception(e);
	} catch (const std::exception &x) {
		what = x.what();
	} catch (...) {
	}
	result(false, tag, "node " + std::to_string(me) + " error: " + what);
	std::fflush(nullptr);
	std::_Exit(1);
}

// A thread of a node beside its main logic, such as the collector of a
// target.  It may wait for good on sources that failed, and nothing can
// stop it; a std::thread still joinable when an exception unwinds past it
// aborts the process with no word of why ("terminate called without an
// active exception", seen when a peer was unreachable).  So an error in
// the thread, or in the logic beside it (run that through beside()),
// ends the node at once with a FAIL line that names the error.
class Worker
{
public:
	template <class F> Worker(std::string tag, int me, F f) : tag_(std::move(tag)), me_(me)
	{
		thread_ = std::thread([this, f = std::move(f)]() mutable {
			try {
				f();
			} catch (...) {
				fail_now(tag_, me_, std::current_exception());
			}
		});
	}
	Worker(const Worker &) = delete;
	Worker &operator=(const Worker &) = delete;
	Worker(Worker &&) = delete;
	Worker &operator=(Worker &&) = delete;
	~Worker()
	{
		if (thread_.joinable())
			fail_now(tag_, me_,
			         std::make_exception_ptr(std::logic_error("a worker thread was left running")));
	}
	// Runs f, the node's logic while this worker runs; its error ends the node.
	template <class F> void beside(F f)
	{
		try {
			f();
		} catch (...) {
			fail_now(tag_, me_, std::current_exception());
		}
	}
	void join() { thread_.join(); }

private:
	std::string tag_;
	int me_;
	std::thread thread_;
};

// A barrier made of two flows, so nobody shuts its DPI node down while
// others still need it: every node sends one tuple to node `from` (which
// waits for all of them), then `from` sends one tuple to every node.  The
// gather matters: a source's open creates its targets' buffers itself, so
// a broadcast alone let `from` finish at once and leave while a slower
// node was still at work with it.
inline void flow_barrier(const std::shared_ptr<dpi::flow::Transport> &tr, const std::string &name, int nodes, int from)
{
	using namespace dpi::flow;
	const int me = tr->node_id();
	// A one-tuple broadcast flow.  A peer may leave as soon as it saw the
	// end of one, before the sender's last flush/close round trip
	// completes: that is not an error.
	auto flow = [](const std::string &n, std::vector<int> targets, uint32_t sources) {
		FlowSpec f;
		f.name = n;
		f.targets = std::move(targets);
		f.sources = sources;
		f.dist = Dist::broadcast();
		f.hint = Hint::latency;
		f.tolerate_target_loss = true;
		return f;
	};
	auto send_one = [&](const FlowSpec &f, uint32_t id) {
		auto src = retry([&] { return Source::open(tr, f, id); });
		uint64_t one = 1;
		src->push({reinterpret_cast<const std::byte *>(&one), sizeof(one)});
		src->close();
	};
	auto drain = [](Target &t) {
		for ([[maybe_unused]] const Delivered &d : t) {
		}
	};
	FlowSpec in = flow(name + ".in", {from}, static_cast<uint32_t>(nodes));
	std::unique_ptr<Target> gather;
	if (me == from)
		gather = retry([&] { return Target::open(tr, in, 0); });
	send_one(in, static_cast<uint32_t>(me));
	if (gather)
		drain(*gather);
	std::vector<int> all(static_cast<size_t>(nodes));
	for (int i = 0; i < nodes; i++)
		all[static_cast<size_t>(i)] = i;
	FlowSpec out = flow(name, std::move(all), 1);
	auto release = retry([&] { return Target::open(tr, out, static_cast<size_t>(me)); });
	if (me == from)
		send_one(out, 0);
	drain(*release);
}

// --local 1: every node is a thread of this process on the in-process
// transport (a host check of the application logic; no RDMA).  Runs
// run_node(transport) for node ids 0..nodes-1 at once and returns
// the largest of their exit codes.
template <class F> int run_local(int nodes, F run_node)
{
	auto hub = dpi::flow::mem_hub();
	std::vector<std::thread> th;
	th.reserve(static_cast<size_t>(nodes));
	std::vector<int> rcs(static_cast<size_t>(nodes));
	for (int i = 0; i < nodes; i++)
		th.emplace_back([&, i] { rcs[static_cast<size_t>(i)] = run_node(dpi::flow::mem_transport(hub, i)); });
	for (auto &t : th)
		t.join();
	return *std::max_element(rcs.begin(), rcs.end());
}

// The main() of an application whose node logic is run_node(transport):
// with --local 1 every node runs as a thread (run_local); otherwise this
// process is the DPI node --id of --spec.  A node that cannot start, or
// whose logic throws, is a FAIL line for tag and exit status 1.
template <class F>
int run_app(const std::map<std::string, std::string> &args, int nodes, const std::string &tag, F run_node)
{
	if (num(args, "local", 0))
		return run_local(nodes, run_node);
	try {
		auto node = start_node(args);
		int rc = run_node(dpi::flow::dpi_transport(node));
		node->shutdown();
		return rc;
	} catch (const std::exception &e) {
		result(false, tag, std::string("node error: ") + e.what());
		return 1;
	}
}

} // namespace flowapp
