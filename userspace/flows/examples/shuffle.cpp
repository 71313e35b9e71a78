// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Shuffle benchmark: every node sends --mb MiB of --tuple-size byte tuples
// (random 64-bit keys) hash-partitioned over all nodes, and receives its
// partition.  --transport dpi uses a DPI flow (bandwidth hint); --transport
// tcp does the same all-to-all over plain TCP sockets (one connection per
// ordered pair of nodes, node i listening on --tcp-port + i, 32 KiB batches, the local partition stays local in
// both).  Each node checks it received exactly the tuples the hash sends it
// (count and a key checksum, recomputed from the generators' seeds) and
// prints one JSON line:
//   {"transport":..,"nodes":..,"tuple":..,"node":..,"sent_bytes":..,"recv_bytes":..,"secs":..,"ok":..}
// The time runs from a start barrier (all connections up) to the end of this
// node's receiving.
//
//   flows-shuffle --spec FILE --id I --nodes N [--tuple-size 64] [--mb 16]
//                 [--bytes B (instead of --mb)] [--transport dpi|tcp] [--tcp-port 7700] [--prefix sh]
#include "common.hpp"
#include "shuffle_common.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

using namespace dpi::flow;
using flowapp::num;
using flowapp::opt;
using Clock = std::chrono::steady_clock;
using namespace shuffleapp;

namespace
{
Result run_dpi(const std::shared_ptr<Transport> &tr, const Job &j, const std::string &prefix)
{
	FlowSpec f;
	f.name = prefix + "-t" + std::to_string(j.tsize);
	for (int i = 0; i < j.nodes; i++)
		f.targets.push_back(i);
	f.sources = static_cast<size_t>(j.nodes);
	f.tuple_size = j.tsize;
	f.dist = Dist::user([](uint64_t key, size_t n, std::vector<uint32_t> &out) {
		out.push_back(static_cast<uint32_t>(dest_of(key, static_cast<int>(n))));
	});
	f.segment_size = 1U << 20;
	f.batch_bytes = 256U << 10;
	auto tgt = flowapp::retry([&] { return Target::open(tr, f, static_cast<size_t>(j.me)); });
	auto src = flowapp::retry([&] { return Source::open(tr, f, static_cast<uint32_t>(j.me)); });
	flowapp::flow_barrier(tr, f.name + "-go", j.nodes, 0);
	Result r;
	auto t0 = Clock::now();
	std::thread rx([&] {
		for (const Delivered &d : *tgt) {
			r.keysum += key_of(d.data.data());
			r.recv_tuples++;
			r.recv_bytes += d.data.size();
		}
	});
	std::vector<std::byte> t(j.tsize);
	for (uint64_t i = 0; i < j.tuples; i++) {
		make_tuple(j.me, i, t);
		src->push(t);
	}
	src->close();
	rx.join();
	r.secs = std::chrono::duration<double>(Clock::now() - t0).count();
	r.sent_bytes = src->stats().payload_bytes;
	return r;
}

// ---- plain TCP ----------------------------------------------------------
void write_all(int fd, const std::byte *p, size_t n)
{
	while (n) {
		ssize_t w = ::write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			throw std::runtime_error(std::string("write: ") + std::strerror(errno));
		}
		p += w;
		n -= static_cast<size_t>(w);
	}
}

Result run_tcp(const std::vector<std::string> &ips, const Job &j, int port)
{
	int ls = ::socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(static_cast<uint16_t>(port + j.me));
	a.sin_addr.s_addr = INADDR_ANY;
	if (::bind(ls, reinterpret_cast<sockaddr *>(&a), sizeof(a)) || ::listen(ls, 64))
		throw std::runtime_error(std::string("bind/listen: ") + std::strerror(errno));
	std::vector<int> out(static_cast<size_t>(j.nodes), -1), in;
	std::thread acc([&] {
		for (int i = 0; i < j.nodes - 1; i++) {
			int fd = ::accept(ls, nullptr, nullptr);
			if (fd >= 0)
				in.push_back(fd);
		}
	});
	for (int d = 0; d < j.nodes; d++) {
		if (d == j.me)
			continue;
		sockaddr_in pa{};
		pa.sin_family = AF_INET;
		pa.sin_port = htons(static_cast<uint16_t>(port + d));
		::inet_pton(AF_INET, ips[static_cast<size_t>(d)].c_str(), &pa.sin_addr);
		auto deadline = Clock::now() + std::chrono::seconds(60);
		for (;;) {
			int fd = ::socket(AF_INET, SOCK_STREAM, 0);
			if (::connect(fd, reinterpret_cast<sockaddr *>(&pa), sizeof(pa)) == 0) {
				out[static_cast<size_t>(d)] = fd;
				break;
			}
			::close(fd);
			if (Clock::now() > deadline)
				throw std::runtime_error("connect to " + ips[static_cast<size_t>(d)] + " timed out");
			std::this_thread::sleep_for(std::chrono::milliseconds(100));
		}
	}
	acc.join();
	// Start barrier: one byte to every peer, one byte from every peer.
	for (int d = 0; d < j.nodes; d++)
		if (d != j.me) {
			std::byte b{1};
			write_all(out[static_cast<size_t>(d)], &b, 1);
		}
	for (int fd : in) {
		std::byte b;
		if (::read(fd, &b, 1) != 1)
			throw std::runtime_error("start barrier read failed");
	}
	Result r;
	std::atomic<uint64_t> rt{0}, rb{0}, ks{0};
	auto t0 = Clock::now();
	std::vector<std::thread> rx;
	rx.reserve(in.size());
	for (int fd : in)
		rx.emplace_back([&, fd] {
			std::vector<std::byte> buf(1U << 18);
			size_t have = 0;
			uint64_t n = 0, b = 0, s = 0;
			for (;;) {
				ssize_t got = ::read(fd, buf.data() + have, buf.size() - have);
				if (got <= 0)
					break;
				have += static_cast<size_t>(got);
				size_t o = 0;
				for (; o + j.tsize <= have; o += j.tsize) {
					s += key_of(buf.data() + o);
					n++;
					b += j.tsize;
				}
				std::memmove(buf.data(), buf.data() + o, have - o);
				have -= o;
			}
			rt += n;
			rb += b;
			ks += s;
		});
	std::vector<std::vector<std::byte>> batch(static_cast<size_t>(j.nodes));
	std::vector<std::byte> t(j.tsize);
	uint64_t local_n = 0, local_s = 0;
	for (uint64_t i = 0; i < j.tuples; i++) {
		make_tuple(j.me, i, t);
		uint64_t k = key_of(t.data());
		int d = dest_of(k, j.nodes);
		if (d == j.me) {
			local_n++;
			local_s += k;
			continue;
		}
		auto &b = batch[static_cast<size_t>(d)];
		b.insert(b.end(), t.begin(), t.end());
		if (b.size() >= (32U << 10)) {
			write_all(out[static_cast<size_t>(d)], b.data(), b.size());
			r.sent_bytes += b.size();
			b.clear();
		}
	}
	for (int d = 0; d < j.nodes; d++)
		if (d != j.me) {
			auto &b = batch[static_cast<size_t>(d)];
			write_all(out[static_cast<size_t>(d)], b.data(), b.size());
			r.sent_bytes += b.size();
			::shutdown(out[static_cast<size_t>(d)], SHUT_WR);
		}
	for (auto &x : rx)
		x.join();
	r.secs = std::chrono::duration<double>(Clock::now() - t0).count();
	r.recv_tuples = rt + local_n;
	r.recv_bytes = rb + local_n * j.tsize;
	r.keysum = ks + local_s;
	for (int fd : out)
		if (fd >= 0)
			::close(fd);
	for (int fd : in)
		::close(fd);
	::close(ls);
	return r;
}

std::vector<std::string> spec_ips(const std::string &file)
{
	std::ifstream in(file);
	std::vector<std::string> ips;
	std::string line;
	while (std::getline(in, line)) {
		std::istringstream ss(line);
		std::string w, id, addr;
		if (ss >> w >> id >> addr && w == "node")
			ips.push_back(addr.substr(0, addr.find(':')));
	}
	return ips;
}
} // namespace

int main(int argc, char **argv)
{
	auto args = flowapp::parse_args(argc, argv);
	Job j = job_from(args, static_cast<int>(num(args, "id", 0)), static_cast<int>(num(args, "nodes", 2)));
	if (j.tsize == 0) {
		std::fprintf(stderr, "--tuple-size must be >= 8\n");
		return 2;
	}
	std::string transport = opt(args, "transport", "dpi");
	try {
		Result r;
		if (transport == "tcp") {
			r = run_tcp(spec_ips(opt(args, "spec", "")), j, static_cast<int>(num(args, "tcp-port", 7700)));
		} else {
			auto node = flowapp::start_node(args);
			auto tr = dpi_transport(node);
			r = run_dpi(tr, j, opt(args, "prefix", "sh"));
			// Keep node 0 (the buffer directory) up until everyone is done (the
			// barrier gathers at node 0 first).  An error here comes after the
			// shuffle itself is over and checked, so it is only reported.
			try {
				flowapp::flow_barrier(
				        tr, opt(args, "prefix", "sh") + "-t" + std::to_string(j.tsize) + "-done",
				        j.nodes, 0);
			} catch (const dpi::Error &e) {
				std::fprintf(stderr, "flows-shuffle: end barrier: %s (ignored)\n", e.what());
			}
			node->shutdown();
		}
		return report(transport, j, r) ? 0 : 1;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "flows-shuffle: %s\n", e.what());
		return 1;
	}
}
