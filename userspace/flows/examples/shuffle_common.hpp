// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The shuffle benchmark's data and verdict, shared by flows-shuffle (DPI flow
// and TCP sockets) and flows-mpi-shuffle (MPI_Alltoallv), so every transport
// moves the same tuples to the same nodes and is judged the same way.
#pragma once

#include <dpi/flow.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace shuffleapp
{

struct Job {
	int me = 0;
	int nodes = 1;
	size_t tsize = 64;
	uint64_t tuples = 0; // per source
};

// The tuple sizes and counts of --tuple-size, --mb and --bytes; node id and
// count come from the caller (options or the MPI job).  tsize 0 means a
// size below 8, which cannot carry the key.
inline Job job_from(const std::map<std::string, std::string> &args, int me, int nodes)
{
	auto get = [&](const char *k, long long def) {
		auto it = args.find(k);
		return it == args.end() ? def : std::stoll(it->second);
	};
	Job j;
	j.me = me;
	j.nodes = nodes;
	long long ts = get("tuple-size", 64);
	j.tsize = ts < 8 ? 0 : static_cast<size_t>(ts);
	if (j.tsize == 0)
		return j;
	j.tuples = static_cast<uint64_t>(get("mb", 16)) * (1U << 20) / j.tsize;
	if (args.contains("bytes"))
		j.tuples = static_cast<uint64_t>(get("bytes", 0)) / j.tsize;
	return j;
}

// Tuple i of node n: key = mix64(seed), then filler bytes.
inline void make_tuple(int node, uint64_t i, std::vector<std::byte> &t)
{
	uint64_t key = dpi::flow::mix64((static_cast<uint64_t>(node) << 40) ^ i);
	std::memcpy(t.data(), &key, 8);
	for (size_t o = 8; o < t.size(); o++)
		t[o] = static_cast<std::byte>(key >> (o % 8 * 8));
}

inline uint64_t key_of(const std::byte *t)
{
	uint64_t k = 0;
	std::memcpy(&k, t, 8);
	return k;
}

inline int dest_of(uint64_t key, int nodes)
{
	return static_cast<int>(dpi::flow::mix64(key) % static_cast<uint64_t>(nodes));
}

// What node `me` must receive: count and sum of keys.
inline std::pair<uint64_t, uint64_t> expected(const Job &j)
{
	std::vector<std::byte> t(j.tsize);
	uint64_t n = 0, sum = 0;
	for (int s = 0; s < j.nodes; s++)
		for (uint64_t i = 0; i < j.tuples; i++) {
			make_tuple(s, i, t);
			uint64_t k = key_of(t.data());
			if (dest_of(k, j.nodes) == j.me) {
				n++;
				sum += k;
			}
		}
	return {n, sum};
}

struct Result {
	uint64_t sent_bytes = 0, recv_bytes = 0, recv_tuples = 0, keysum = 0;
	double secs = 0;
};

// Checks r against what this node must receive and prints the benchmark's
// JSON line; returns whether the data were right.
inline bool report(const std::string &transport, const Job &j, const Result &r)
{
	auto [wn, ws] = expected(j);
	bool ok = r.recv_tuples == wn && r.keysum == ws;
	std::printf("{\"transport\":\"%s\",\"nodes\":%d,\"tuple\":%zu,\"node\":%d,\"sent_bytes\":%llu,"
	            "\"recv_bytes\":%llu,\"recv_tuples\":%llu,\"want_tuples\":%llu,\"secs\":%.4f,\"ok\":%s}\n",
	            transport.c_str(), j.nodes, j.tsize, j.me, static_cast<unsigned long long>(r.sent_bytes),
	            static_cast<unsigned long long>(r.recv_bytes), static_cast<unsigned long long>(r.recv_tuples),
	            static_cast<unsigned long long>(wn), r.secs, ok ? "true" : "false");
	std::fflush(stdout);
	return ok;
}

} // namespace shuffleapp
