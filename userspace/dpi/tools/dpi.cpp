// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// `dpi`: run a DPI node, create/append/cat buffers, read/write regions,
// generate verifiable append load and benchmark appends.
#include <dpi-internal/calibration.hpp>
#include <dpi-internal/verbs.hpp>

#include <dpi/dpi.hpp>

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sched.h>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace
{

const char *usage_text =
        "usage: dpi [--spec FILE] [--id N] [--timeout-ms MS] COMMAND ...\n"
        "  info                          show the spec, devices and the copy-vs-register costs\n"
        "  node                          host buffers (and the directory) until SIGINT/SIGTERM\n"
        "  create NAME --owner N [--segment-size B] [--segments K] [--region BYTES]\n"
        "         [--append-mode rings|shared|automatic]   (also for cat --create, gen, bench)\n"
        "  append NAME [--data STR]... [--file F|-] [--chunk B]   one record per --data/chunk\n"
        "  cat NAME [--sources K] [--wait-ms MS] [--create [--segment-size B] [--segments K]]\n"
        "           [--verify] [--count M] [--slow-us U] [--quiet] [--discard] [--poll]\n"
        "  gen NAME [--appenders K] [--count M] [--max-size B] [--seed S] [--create-owner N]\n"
        "           [--abort-after N [--unflushed U]] [--pace-us U]   verifiable records, one source per thread\n"
        "  bench NAME [--appenders K] [--chunk B] [--bytes B] [--create-owner N]\n"
        "  write NAME OFFSET --data STR | read NAME OFFSET LEN\n"
        "  probe-restart NAME --owner N --wait-file F\n"
        "  mesh --go-file F --stop-file F [--segment-size B] [--segments K] [--wait-ms MS]\n"
        "         append to every other node's buffer, hold the connections until F\n"
        "--spec defaults to $DPI_CLUSTER, --id to $DPI_NODE_ID (unset: anonymous client).\n"
        "With neither, under mpirun: the cluster and --id (= rank) from PMIx (Documentation/dpi.md).\n";

struct Args {
	std::vector<std::string> pos;
	std::multimap<std::string, std::string> opt;
	[[nodiscard]] bool has(const std::string &k) const { return opt.contains(k); }
	[[nodiscard]] std::string get(const std::string &k, const std::string &d = "") const
	{
		auto it = opt.find(k);
		return it == opt.end() ? d : it->second;
	}
	[[nodiscard]] long long num(const std::string &k, long long d) const
	{
		auto it = opt.find(k);
		if (it == opt.end())
			return d;
		char *end = nullptr;
		long long v = std::strtoll(it->second.c_str(), &end, 0);
		if (*end == 'k' || *end == 'K')
			v <<= 10, ++end;
		else if (*end == 'm' || *end == 'M')
			v <<= 20, ++end;
		else if (*end == 'g' || *end == 'G')
			v <<= 30, ++end;
		if (*end || it->second.empty())
			throw dpi::Error(dpi::Errc::invalid_argument,
			                 "--" + k + " '" + it->second + "' is not a number");
		return v;
	}
};

const std::vector<std::string> flags = {"create", "verify", "quiet", "discard", "newline", "poll", "help"};

Args parse(int argc, char **argv)
{
	Args a;
	for (int i = 1; i < argc; ++i) {
		std::string s = argv[i];
		if (s.rfind("--", 0) == 0 && s.size() > 2) {
			std::string k = s.substr(2);
			if (std::find(flags.begin(), flags.end(), k) != flags.end()) {
				a.opt.emplace(k, "1");
			} else {
				if (i + 1 >= argc)
					throw dpi::Error(dpi::Errc::invalid_argument, s + " needs a value");
				a.opt.emplace(k, argv[++i]);
			}
		} else {
			a.pos.push_back(s);
		}
	}
	return a;
}

std::shared_ptr<dpi::Node> start(const Args &a)
{
	dpi::Options o;
	std::optional<int> id;
	if (a.has("id"))
		id = static_cast<int>(a.num("id", -1));
	auto l = dpi::launch_from_env(a.has("spec") ? a.get("spec") : "", id);
	o.spec = std::move(l.spec);
	o.node_id = l.node_id;
	o.launcher = std::move(l.session);
	o.op_timeout = std::chrono::milliseconds(a.num("timeout-ms", 0));
	o.connect_timeout = std::chrono::milliseconds(a.num("connect-timeout-ms", 5000));
	return dpi::Node::start(o);
}

// ---- verifiable content: record i of source `tag`
uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void fill(std::vector<std::byte> &buf, uint32_t tag, uint32_t idx)
{
	uint64_t head = (static_cast<uint64_t>(idx) << 32) | tag;
	for (size_t j = 0; j < buf.size(); ++j) {
		uint64_t v = j < 8 ? head >> (8 * j) : mix(head * 31 + j / 8) >> (8 * (j % 8));
		buf[j] = static_cast<std::byte>(v & 0xff);
	}
}

size_t pick_size(uint64_t &state, size_t max_size, uint32_t idx)
{
	state = mix(state);
	if (idx == 0)
		return std::max<size_t>(8, state % (max_size + 1));
	switch (state % 20) {
	case 0: return 1;
	case 1: return max_size;
	case 2:
	case 3: return 1 + (state >> 8) % 16;
	default: return 1 + (state >> 8) % max_size;
	}
}

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int)
{
	g_stop = 1;
}

int cmd_info(const Args &a)
{
	std::optional<int> id;
	if (a.has("id"))
		id = static_cast<int>(a.num("id", -1));
	auto l = dpi::launch_from_env(a.has("spec") ? a.get("spec") : "", id);
	const auto &spec = l.spec;
	std::cout << "cluster from " << l.origin << ", this is node " << l.node_id << "\n";
	std::cout << "directory node " << spec.directory_node() << "\n";
	for (auto &n : spec.nodes())
		std::cout << "node " << n.id << " " << n.host << ":" << n.port
		          << (n.device.empty() ? "" : " device=" + n.device) << "\n";
	int num = 0;
	dpi::detail::DeviceListPtr list(ibv_get_device_list(&num));
	for (int i = 0; i < num; ++i) {
		dpi::detail::ContextPtr ctx(ibv_open_device(list.get()[i]));
		if (!ctx)
			continue;
		dpi::detail::PdPtr pd(ibv_alloc_pd(ctx.get()));
		if (!pd)
			continue;
		auto samples = dpi::detail::measure_costs(pd.get());
		std::cout << "device " << ibv_get_device_name(list.get()[i])
		          << ": size reg+dereg_us memcpy_us (medians of " << dpi::detail::kMeasureRounds
		          << " rounds)\n";
		for (auto &s : samples)
			std::printf("  %8zu %10.1f %10.1f\n", s.size, s.reg_us, s.copy_us);
		std::cout << "  critical size " << dpi::detail::critical_from(samples) << "\n";
	}
	if (num == 0)
		std::cout << "no RDMA devices\n";
	return 0;
}

int cmd_node(const Args &a)
{
	auto node = start(a);
	std::signal(SIGINT, on_signal);
	std::signal(SIGTERM, on_signal);
	std::cerr << "dpi: node " << node->id() << " up, critical size " << node->critical_size() << std::endl;
	while (!g_stop)
		std::this_thread::sleep_for(100ms);
	node->shutdown();
	return 0;
}

dpi::BufferOptions buffer_opts(const Args &a)
{
	dpi::BufferOptions o;
	o.segment_size = static_cast<size_t>(a.num("segment-size", static_cast<long long>(o.segment_size)));
	o.segments = static_cast<uint32_t>(a.num("segments", o.segments));
	std::string mode = a.get("append-mode", "automatic");
	if (mode == "rings")
		o.append_mode = dpi::AppendMode::rings;
	else if (mode == "shared")
		o.append_mode = dpi::AppendMode::shared;
	else if (mode == "automatic")
		o.append_mode = dpi::AppendMode::automatic;
	else
		throw dpi::Error(dpi::Errc::invalid_argument,
		                 "--append-mode must be rings, shared or automatic, not '" + mode + "'");
	if (a.has("region")) {
		o.kind = dpi::BufferKind::region;
		o.region_size = static_cast<size_t>(a.num("region", 0));
	}
	return o;
}

int cmd_create(const Args &a)
{
	if (a.pos.size() != 2 || !a.has("owner"))
		throw dpi::Error(dpi::Errc::invalid_argument, "usage: dpi create NAME --owner N");
	auto node = start(a);
	node->create_buffer(a.pos[1], static_cast<int>(a.num("owner", -1)), buffer_opts(a));
	return 0;
}

int cmd_append(const Args &a)
{
	if (a.pos.size() != 2)
		throw dpi::Error(dpi::Errc::invalid_argument, "usage: dpi append NAME [--data STR]... [--file F]");
	auto node = start(a);
	auto app = node->appender(a.pos[1]);
	for (auto [it, end] = a.opt.equal_range("data"); it != end; ++it)
		app->append(std::as_bytes(std::span(it->second.data(), it->second.size())));
	if (a.has("file")) {
		std::string f = a.get("file");
		std::ifstream in;
		std::istream *is = &std::cin;
		if (f != "-") {
			in.open(f, std::ios::binary);
			if (!in)
				throw dpi::Error(dpi::Errc::invalid_argument, "cannot open " + f);
			is = &in;
		}
		size_t chunk = static_cast<size_t>(a.num("chunk", static_cast<long long>(app->max_append())));
		std::vector<char> buf(chunk);
		while (*is) {
			is->read(buf.data(), static_cast<std::streamsize>(chunk));
			auto n = static_cast<size_t>(is->gcount());
			if (n)
				app->append(std::as_bytes(std::span(buf.data(), n)));
		}
	}
	app->close();
	return 0;
}

const char *state_name(dpi::SourceState s)
{
	switch (s) {
	case dpi::SourceState::open: return "open";
	case dpi::SourceState::closed: return "closed";
	case dpi::SourceState::aborted: return "aborted";
	}
	return "?";
}

int cmd_cat(const Args &a)
{
	if (a.pos.size() != 2)
		throw dpi::Error(dpi::Errc::invalid_argument, "usage: dpi cat NAME[,NAME...] --id N [--sources K]");
	auto node = start(a);
	std::vector<std::string> names;
	{
		std::stringstream ss(a.pos[1]);
		for (std::string n; std::getline(ss, n, ',');)
			names.push_back(n);
	}
	std::cerr << "dpi: node " << node->id() << " up" << std::endl;
	if (a.has("create"))
		for (auto &n : names)
			node->create_buffer(n, node->id(), buffer_opts(a));
	std::vector<std::unique_ptr<dpi::Consumer>> cons;
	cons.reserve(names.size());
	for (auto &n : names)
		cons.push_back(node->consumer(n, std::chrono::milliseconds(a.num("wait-ms", 60000))));
	size_t sources = static_cast<size_t>(a.num("sources", 1));
	long long slow = a.num("slow-us", 0);
	bool verify = a.has("verify");
	bool quiet = a.has("quiet") || a.has("discard");
	bool poll = a.has("poll");
	uint64_t empty_polls = 0;
	long long expect_count = a.num("count", -1);
	std::signal(SIGINT, on_signal);
	std::signal(SIGTERM, on_signal);
	struct Src {
		uint32_t tag = 0;
		uint64_t n = 0;
	};
	std::map<std::pair<size_t, uint32_t>, Src> src;
	uint64_t records = 0;
	uint64_t bytes = 0;
	uint64_t errors = 0;
	std::vector<std::byte> expect;
	auto t0 = Clock::now();
	auto first = Clock::time_point{};
	auto all_finished = [&] {
		return std::ranges::all_of(cons, [&](const auto &c) { return c->finished(sources); });
	};
	while (!g_stop && !all_finished()) {
		for (size_t b = 0; b < cons.size(); ++b) {
			// --poll: the non-blocking iterator, spinning with a yield
			auto r = poll ? cons[b]->poll() : cons[b]->next(cons.size() == 1 ? 200ms : 20ms);
			if (!r) {
				if (poll) {
					++empty_polls;
					sched_yield();
				}
				continue;
			}
			if (records == 0)
				first = Clock::now();
			++records;
			bytes += r->data.size();
			if (verify) {
				auto &s = src[{b, r->source}];
				if (r->index == 0) {
					if (r->data.size() < 8) {
						std::cerr << "dpi: source " << r->source
						          << ": first record shorter than 8 bytes\n";
						++errors;
					} else {
						std::memcpy(&s.tag, r->data.data(), 4);
					}
				}
				expect.resize(r->data.size());
				fill(expect, s.tag, static_cast<uint32_t>(s.n));
				if (r->index != s.n || std::memcmp(expect.data(), r->data.data(), expect.size()) != 0) {
					if (errors < 10)
						std::cerr << "dpi: source " << r->source << " record " << r->index
						          << " (expected #" << s.n << ", " << r->data.size()
						          << " bytes): content or order mismatch\n";
					++errors;
				}
				++s.n;
			} else if (!quiet) {
				std::fwrite(r->data.data(), 1, r->data.size(), stdout);
				if (a.has("newline"))
					std::fputc('\n', stdout);
			}
			if (slow > 0)
				std::this_thread::sleep_for(std::chrono::microseconds(slow));
		}
	}
	std::fflush(stdout);
	double secs = std::chrono::duration<double>(Clock::now() - (records ? first : t0)).count();
	for (size_t b = 0; b < cons.size(); ++b) {
		for (auto &s : cons[b]->sources()) {
			std::cerr << "dpi: " << (cons.size() > 1 ? names[b] + " " : std::string()) << "source "
			          << s.source << " node " << s.node << " " << state_name(s.state)
			          << " records=" << s.records << (s.reason.empty() ? "" : " reason: " + s.reason)
			          << "\n";
			if (expect_count >= 0 && s.state == dpi::SourceState::closed &&
			    s.records != static_cast<uint64_t>(expect_count)) {
				std::cerr << "dpi: source " << s.source << " delivered " << s.records
				          << " records, expected " << expect_count << "\n";
				++errors;
			}
		}
	}
	uint64_t holes = 0;
	for (auto &c : cons)
		holes += c->hole_bytes();
	std::cerr << "dpi: cat " << a.pos[1] << ": records=" << records << " bytes=" << bytes << " errors=" << errors
	          << " hole_size=" << holes << " seconds=" << secs
	          << " MBps=" << (secs > 0 ? static_cast<double>(bytes) / secs / 1e6 : 0)
	          << (poll ? " empty_polls=" + std::to_string(empty_polls) : std::string())
	          << (g_stop ? " (interrupted)" : "") << "\n";
	return errors || g_stop ? 1 : 0;
}

int cmd_gen(const Args &a)
{
	if (a.pos.size() != 2)
		throw dpi::Error(dpi::Errc::invalid_argument, "usage: dpi gen NAME [--appenders K] [--count M]");
	auto node = start(a);
	const std::string &name = a.pos[1];
	if (a.has("create-owner")) {
		dpi::BufferOptions o = buffer_opts(a);
		node->create_buffer(name, static_cast<int>(a.num("create-owner", 0)), o);
	}
	int k = static_cast<int>(a.num("appenders", 1));
	long long count = a.num("count", 100);
	long long abort_after = a.num("abort-after", -1);
	long long unflushed = a.num("unflushed", 0);
	long long pace_us = a.num("pace-us", 0);
	uint64_t seed = static_cast<uint64_t>(a.num("seed", 1));
	std::atomic<uint64_t> bytes{0};
	std::atomic<int> failures{0};
	std::vector<std::thread> th;
	th.reserve(static_cast<size_t>(k));
	std::mutex emu;
	for (int t = 0; t < k; ++t) {
		th.emplace_back([&, t] {
			try {
				auto app = node->appender(name);
				size_t max_size = static_cast<size_t>(
				        a.num("max-size", static_cast<long long>(app->max_append())));
				max_size = std::min(max_size, app->max_append());
				auto tag = static_cast<uint32_t>(mix(seed * 1000 + static_cast<uint64_t>(t)) | 1);
				uint64_t st = mix(tag);
				std::vector<std::byte> buf;
				for (long long i = 0; i < count; ++i) {
					buf.resize(pick_size(st, max_size, static_cast<uint32_t>(i)));
					fill(buf, tag, static_cast<uint32_t>(i));
					app->append(buf);
					bytes += buf.size();
					if (pace_us > 0)
						std::this_thread::sleep_for(std::chrono::microseconds(pace_us));
					if (abort_after >= 0 && i + 1 == abort_after) {
						app->flush();
						// --unflushed U: U more appends the owner never hears of
						// (on a shared log: reservations left as a hole).  The
						// pause lets the consumer drain the log first, so that
						// backpressure does not commit them.
						if (unflushed > 0)
							std::this_thread::sleep_for(1s);
						for (long long u = 0; u < unflushed; ++u) {
							buf.resize(pick_size(st, max_size,
							                     static_cast<uint32_t>(i + 1 + u)));
							fill(buf, tag, static_cast<uint32_t>(i + 1 + u));
							app->append(buf);
						}
						std::cerr << "dpi: gen: crashing after " << abort_after
						          << " flushed records and " << unflushed << " unflushed\n";
						std::_Exit(3); // no close: the owner must notice the vanished source
					}
				}
				app->close();
			} catch (const dpi::Error &e) {
				std::lock_guard<std::mutex> g(emu);
				std::cerr << "dpi: gen appender " << t << ": " << dpi::errc_name(e.code()) << ": "
				          << e.what() << "\n";
				++failures;
			}
		});
	}
	for (auto &x : th)
		x.join();
	auto s = node->stats();
	std::cerr << "dpi: gen " << name << ": appenders=" << k << " records=" << count * k << " bytes=" << bytes.load()
	          << " copied=" << s.copied_appends << " zero_copy=" << s.zero_copy_appends
	          << " segments=" << s.segments_sealed << " stalls=" << s.credit_stalls
	          << " signaled=" << s.signaled_wrs << "/" << s.posted_wrs << " shared=" << s.shared_appends
	          << " pads=" << s.shared_pads << " fallbacks=" << s.shared_fallbacks << " failures=" << failures.load()
	          << "\n";
	return failures ? 1 : 0;
}

int cmd_bench(const Args &a)
{
	if (a.pos.size() != 2)
		throw dpi::Error(dpi::Errc::invalid_argument,
		                 "usage: dpi bench NAME [--appenders K] [--chunk B] [--bytes B]");
	auto setup0 = Clock::now();
	auto node = start(a);
	const std::string &name = a.pos[1];
	if (a.has("create-owner"))
		node->create_buffer(name, static_cast<int>(a.num("create-owner", 0)), buffer_opts(a));
	int k = static_cast<int>(a.num("appenders", 1));
	size_t chunk = static_cast<size_t>(a.num("chunk", 65536));
	auto total = static_cast<uint64_t>(a.num("bytes", 256LL << 20));
	std::vector<std::unique_ptr<dpi::Appender>> apps;
	apps.reserve(static_cast<size_t>(k));
	for (int t = 0; t < k; ++t)
		apps.push_back(node->appender(name));
	std::atomic<int> failures{0};
	std::vector<std::thread> th;
	th.reserve(static_cast<size_t>(k));
	auto t0 = Clock::now();
	double setup = std::chrono::duration<double>(t0 - setup0).count();
	for (int t = 0; t < k; ++t) {
		th.emplace_back([&, t] {
			try {
				std::vector<std::byte> buf(chunk, std::byte{0x5a});
				uint64_t per = total / static_cast<uint64_t>(k);
				for (uint64_t done = 0; done < per; done += chunk)
					apps[static_cast<size_t>(t)]->append(buf);
				apps[static_cast<size_t>(t)]->close();
			} catch (const dpi::Error &e) {
				std::cerr << "dpi: bench: " << e.what() << "\n";
				++failures;
			}
		});
	}
	for (auto &x : th)
		x.join();
	double secs = std::chrono::duration<double>(Clock::now() - t0).count();
	uint64_t per = total / static_cast<uint64_t>(k);
	uint64_t sent = ((per + chunk - 1) / chunk) * chunk * static_cast<uint64_t>(k);
	auto s = node->stats();
	std::printf("{\"chunk\": %zu, \"appenders\": %d, \"bytes\": %llu, \"seconds\": %.6f, \"MBps\": %.3f, "
	            "\"setup_seconds\": %.6f, \"critical_size\": %zu, \"zero_copy\": %llu, \"stalls\": %llu, "
	            "\"posted_wrs\": %llu, \"signaled_wrs\": %llu, \"shared_appends\": %llu, \"shared_pads\": %llu, "
	            "\"shared_fallbacks\": %llu}\n",
	            chunk, k, static_cast<unsigned long long>(sent), secs, static_cast<double>(sent) / secs / 1e6,
	            setup, node->critical_size(), static_cast<unsigned long long>(s.zero_copy_appends),
	            static_cast<unsigned long long>(s.credit_stalls), static_cast<unsigned long long>(s.posted_wrs),
	            static_cast<unsigned long long>(s.signaled_wrs), static_cast<unsigned long long>(s.shared_appends),
	            static_cast<unsigned long long>(s.shared_pads),
	            static_cast<unsigned long long>(s.shared_fallbacks));
	return failures ? 1 : 0;
}

int cmd_write(const Args &a)
{
	if (a.pos.size() != 3 || !a.has("data"))
		throw dpi::Error(dpi::Errc::invalid_argument, "usage: dpi write NAME OFFSET --data STR");
	auto node = start(a);
	auto r = node->region(a.pos[1]);
	std::string d = a.get("data");
	r->write(std::stoull(a.pos[2]), std::as_bytes(std::span(d.data(), d.size())));
	return 0;
}

int cmd_read(const Args &a)
{
	if (a.pos.size() != 4)
		throw dpi::Error(dpi::Errc::invalid_argument, "usage: dpi read NAME OFFSET LEN");
	auto node = start(a);
	auto r = node->region(a.pos[1]);
	std::vector<std::byte> out(std::stoull(a.pos[3]));
	r->read(std::stoull(a.pos[2]), out);
	std::fwrite(out.data(), 1, out.size(), stdout);
	return 0;
}

// A client that outlives its owner's restart: the old source fails with a
// clear error, the connection pool reconnects for new work.
int cmd_probe_restart(const Args &a)
{
	if (a.pos.size() != 2 || !a.has("owner") || !a.has("wait-file"))
		throw dpi::Error(dpi::Errc::invalid_argument, "usage: dpi probe-restart NAME --owner N --wait-file F");
	auto node = start(a);
	const std::string &name = a.pos[1];
	int owner = static_cast<int>(a.num("owner", 0));
	dpi::BufferOptions o;
	o.segment_size = 4096;
	node->create_buffer(name, owner, o);
	auto app = node->appender(name);
	std::string one = "before-restart";
	app->append(std::as_bytes(std::span(one.data(), one.size())));
	app->flush();
	std::cerr << "dpi: probe: appended before restart; waiting for " << a.get("wait-file") << "\n";
	while (access(a.get("wait-file").c_str(), F_OK) != 0)
		std::this_thread::sleep_for(100ms);
	int rc = 0;
	try {
		app->append(std::as_bytes(std::span(one.data(), one.size())));
		app->flush();
		std::cerr << "dpi: probe: the old source still works after the owner restarted (unexpected)\n";
		rc = 1;
	} catch (const dpi::Error &e) {
		std::cerr << "dpi: probe: old source: " << dpi::errc_name(e.code()) << ": " << e.what() << "\n";
		if (e.code() != dpi::Errc::connection_lost)
			rc = 1;
	}
	app.reset();
	node->create_buffer(name, owner, o);
	auto app2 = node->appender(name);
	std::string two = "after-restart";
	app2->append(std::as_bytes(std::span(two.data(), two.size())));
	app2->close();
	std::cerr << "dpi: probe: new source after reconnect: ok\n";
	return rc;
}

// An idle all-to-all mesh for measuring what connections cost
// (tests/dpi/scale-guest.sh, Documentation/flows.md "Running at 100+
// nodes").  Node I owns buffer mesh.I; once --go-file exists it appends one
// record to every other node's buffer, which makes one outgoing connection
// per peer, and reads one record from every peer, which proves the peer's
// connection to it exists too.  It then holds everything until --stop-file
// exists, so that the memory of N-1 connections each way can be read from
// outside.  Small segments by default, so that the rings and staging blocks
// (per source, not per connection) stay small next to the connections.
int cmd_mesh(const Args &a)
{
	if (a.pos.size() != 1 || !a.has("go-file") || !a.has("stop-file"))
		throw dpi::Error(dpi::Errc::invalid_argument,
		                 "usage: dpi --id N mesh --go-file F --stop-file F [--segment-size B] [--segments K]");
	auto node = start(a);
	const int me = node->id();
	if (me < 0)
		throw dpi::Error(dpi::Errc::invalid_argument, "mesh needs a node id (--id)");
	std::vector<int> peers;
	for (const auto &n : node->spec().nodes())
		if (n.id != me)
			peers.push_back(n.id);
	const auto wait = std::chrono::milliseconds(a.num("wait-ms", 600000));
	auto wait_file = [&](const std::string &f) {
		auto end = Clock::now() + wait;
		while (access(f.c_str(), F_OK) != 0) {
			if (Clock::now() > end)
				throw dpi::Error(dpi::Errc::timeout, "mesh: " + f + " did not appear");
			std::this_thread::sleep_for(100ms);
		}
	};
	std::cerr << "dpi: mesh: node " << me << " up, pid " << getpid() << ", " << peers.size() << " peers"
	          << std::endl;
	wait_file(a.get("go-file"));

	auto t0 = Clock::now();
	dpi::BufferOptions o;
	o.segment_size = static_cast<size_t>(a.num("segment-size", 4096));
	o.segments = static_cast<uint32_t>(a.num("segments", 2));
	const std::string mine = "mesh." + std::to_string(me);
	node->create_buffer(mine, me, o);
	auto cons = node->consumer(mine, wait);

	std::vector<std::unique_ptr<dpi::Appender>> apps;
	for (int p : peers) {
		// the peer creates its buffer when it sees the go file too, so it
		// may not be in the directory yet
		auto end = Clock::now() + wait;
		for (;;) {
			try {
				apps.push_back(node->appender("mesh." + std::to_string(p)));
				break;
			} catch (const dpi::Error &e) {
				if (e.code() != dpi::Errc::unknown_buffer || Clock::now() > end)
					throw;
				std::this_thread::sleep_for(200ms);
			}
		}
		std::string rec = "mesh from node " + std::to_string(me);
		apps.back()->append(std::as_bytes(std::span(rec.data(), rec.size())));
		apps.back()->flush();
	}
	auto t_out = Clock::now();

	// one record from each peer, each naming the node that sent it
	std::vector<bool> seen(peers.empty() ? 0
	                                     : static_cast<size_t>(*std::max_element(peers.begin(), peers.end())) + 1);
	size_t got = 0;
	auto end = Clock::now() + wait;
	while (got < peers.size()) {
		if (Clock::now() > end)
			throw dpi::Error(dpi::Errc::timeout, "mesh: " + std::to_string(got) + " of " +
			                                             std::to_string(peers.size()) + " peers appended");
		auto r = cons->next(1000ms);
		if (!r)
			continue;
		std::string text(reinterpret_cast<const char *>(r->data.data()), r->data.size());
		int from = r->source_node;
		if (from < 0 || static_cast<size_t>(from) >= seen.size() || from == me ||
		    seen[static_cast<size_t>(from)] || text != "mesh from node " + std::to_string(from))
			throw dpi::Error(dpi::Errc::protocol,
			                 "mesh: unexpected record '" + text + "' from node " + std::to_string(from));
		seen[static_cast<size_t>(from)] = true;
		++got;
	}
	auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
	std::cerr << "dpi: mesh: node " << me << " ready: out=" << apps.size() << " in=" << got
	          << " out_ms=" << ms(t_out - t0) << " all_ms=" << ms(Clock::now() - t0) << std::endl;

	wait_file(a.get("stop-file"));
	for (auto &ap : apps)
		ap->close();
	apps.clear();
	// Stop only once every peer closed its source here: a node that shut
	// down earlier would fail the close of a peer that is slower to see
	// the stop file.
	end = Clock::now() + wait;
	while (!cons->finished(peers.size())) {
		if (Clock::now() > end)
			throw dpi::Error(dpi::Errc::timeout, "mesh: peers did not close their sources");
		(void)cons->next(200ms);
	}
	cons.reset();
	node->shutdown();
	std::cerr << "dpi: mesh: node " << me << " done" << std::endl;
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	Args a;
	try {
		a = parse(argc, argv);
	} catch (const dpi::Error &e) {
		std::cerr << "dpi: " << e.what() << "\n" << usage_text;
		return 2;
	}
	if (a.pos.empty() || a.has("help")) {
		std::cerr << usage_text;
		return a.has("help") ? 0 : 2;
	}
	const std::string &cmd = a.pos[0];
	try {
		if (cmd == "info")
			return cmd_info(a);
		if (cmd == "node")
			return cmd_node(a);
		if (cmd == "create")
			return cmd_create(a);
		if (cmd == "append")
			return cmd_append(a);
		if (cmd == "cat")
			return cmd_cat(a);
		if (cmd == "gen")
			return cmd_gen(a);
		if (cmd == "bench")
			return cmd_bench(a);
		if (cmd == "write")
			return cmd_write(a);
		if (cmd == "read")
			return cmd_read(a);
		if (cmd == "probe-restart")
			return cmd_probe_restart(a);
		if (cmd == "mesh")
			return cmd_mesh(a);
		std::cerr << "dpi: unknown command '" << cmd << "'\n" << usage_text;
		return 2;
	} catch (const dpi::Error &e) {
		std::cerr << "dpi: " << dpi::errc_name(e.code()) << ": " << e.what() << "\n";
		return 1;
	}
}
