// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// MPI_Alltoall and MPI_Alltoallv among all ranks, for the MPI on swiwarp
// checks (tests/suites/75-flows.sh).  Alltoall runs with blocks of 1 B to
// --max bytes (x8 each step); Alltoallv with a different size for every
// (sender, receiver) pair, some of them empty.  Every received byte is
// checked against a pattern of (round, sender, receiver, offset), so a block
// delivered to the wrong place or from the wrong rank is caught as well as a
// corrupt one.  Rank 0 prints "PASS: NAME" or "FAIL: NAME [why]".
//
//   mpirun -np N flows-mpi-alltoall [--max 262144] [--rounds 3] [--name TAG]
#include "mpi_common.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace
{
uint8_t pattern(int round, int from, int to, size_t off)
{
	uint64_t x = static_cast<uint64_t>(round) * 0x9e3779b97f4a7c15ULL +
	             static_cast<uint64_t>(from) * 0xbf58476d1ce4e5b9ULL +
	             static_cast<uint64_t>(to) * 0x94d049bb133111ebULL + off * 0x2545f4914f6cdd1dULL;
	x ^= x >> 31;
	return static_cast<uint8_t>(x ^ (x >> 11));
}

// Alltoallv: the bytes rank `from` sends to rank `to` in `round` (0 for some
// pairs, up to about `max`).
size_t vsize(int round, int from, int to, size_t max)
{
	uint64_t h = static_cast<uint64_t>(round * 131 + from * 31 + to * 7 + 1) * 0x9e3779b97f4a7c15ULL;
	if ((h >> 60) % 5 == 0)
		return 0;
	return static_cast<size_t>((h >> 20) % max) + 1;
}

struct Checker {
	uint64_t bad = 0, checked = 0;
	std::string first;
	void block(const uint8_t *p, size_t n, int round, int from, int to, const char *what)
	{
		for (size_t i = 0; i < n; i++) {
			if (p[i] == pattern(round, from, to, i))
				continue;
			if (first.empty())
				first = std::string(what) + " round " + std::to_string(round) + ": rank " +
				        std::to_string(to) + " from " + std::to_string(from) + ", byte " +
				        std::to_string(i) + " of " + std::to_string(n) + " wrong";
			bad++;
		}
		checked += n;
	}
};
} // namespace

int main(int argc, char **argv)
{
	auto job = flowapp::mpi_start(&argc, &argv);
	const int me = job.me, nodes = job.nodes;
	const auto &args = job.args;
	auto max = static_cast<size_t>(flowapp::num(args, "max", 262144));
	auto rounds = static_cast<int>(flowapp::num(args, "rounds", 3));
	std::string tag = flowapp::opt(args, "name", "flows.mpi-alltoall");
	if (rounds < 1 || max < 1 || max > (1U << 30) / static_cast<unsigned>(nodes))
		return flowapp::mpi_usage_fail(job, tag, "--rounds must be >= 1, --max 1 .. 1 GiB / ranks");
	auto n = static_cast<size_t>(nodes);
	Checker c;
	int round = 0;
	for (size_t blk = 1;; blk = blk * 8 > max && blk < max ? max : blk * 8) {
		for (int r = 0; r < rounds; r++, round++) {
			std::vector<uint8_t> s(blk * n), d(blk * n, 0);
			for (int to = 0; to < nodes; to++)
				for (size_t i = 0; i < blk; i++)
					s[static_cast<size_t>(to) * blk + i] = pattern(round, me, to, i);
			MPI_Alltoall(s.data(), static_cast<int>(blk), MPI_BYTE, d.data(), static_cast<int>(blk),
			             MPI_BYTE, MPI_COMM_WORLD);
			for (int from = 0; from < nodes; from++)
				c.block(&d[static_cast<size_t>(from) * blk], blk, round, from, me, "alltoall");
		}
		if (blk == max)
			break;
	}
	for (int r = 0; r < rounds; r++, round++) {
		std::vector<int> sc(n), sd(n), rc(n), rd(n);
		size_t st = 0, rt = 0;
		for (int p = 0; p < nodes; p++) {
			auto u = static_cast<size_t>(p);
			sd[u] = static_cast<int>(st);
			sc[u] = static_cast<int>(vsize(round, me, p, max));
			st += static_cast<size_t>(sc[u]);
			rd[u] = static_cast<int>(rt);
			rc[u] = static_cast<int>(vsize(round, p, me, max));
			rt += static_cast<size_t>(rc[u]);
		}
		std::vector<uint8_t> s(st + 1), d(rt + 1, 0);
		for (int to = 0; to < nodes; to++)
			for (size_t i = 0; i < static_cast<size_t>(sc[static_cast<size_t>(to)]); i++)
				s[static_cast<size_t>(sd[static_cast<size_t>(to)]) + i] = pattern(round, me, to, i);
		MPI_Alltoallv(s.data(), sc.data(), sd.data(), MPI_BYTE, d.data(), rc.data(), rd.data(), MPI_BYTE,
		              MPI_COMM_WORLD);
		for (int from = 0; from < nodes; from++) {
			auto u = static_cast<size_t>(from);
			c.block(&d[static_cast<size_t>(rd[u])], static_cast<size_t>(rc[u]), round, from, me,
			        "alltoallv");
		}
	}
	return flowapp::mpi_verdict(job, tag, c.bad, c.checked, c.first,
	                            std::to_string(nodes) + " ranks, " + std::to_string(round) + " rounds");
}
