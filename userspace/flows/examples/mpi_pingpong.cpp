// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// MPI ping-pong between rank 0 and every other rank in turn, for the MPI on
// swiwarp checks (tests/suites/75-flows.sh) and Documentation/mpi.md.  Sizes
// run from 1 B to --max bytes (x4 each step), so eager, send/receive and
// RDMA rendezvous paths of the transport all carry messages.  Every byte of
// every message is checked: its value depends on the size, the iteration,
// the direction and its offset, so a stale, shifted or truncated buffer is
// caught.  Prints one "# " line per peer and size (round-trip latency and
// one-way bandwidth) and "PASS: NAME" or "FAIL: NAME [why]" on rank 0.
//
//   mpirun -np N flows-mpi-pingpong [--max 4194304] [--iters 20] [--name TAG]
#include "mpi_common.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace
{
uint8_t pattern(size_t size, int iter, int dir, size_t off)
{
	uint64_t x = size * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(iter) * 0xbf58476d1ce4e5b9ULL +
	             static_cast<uint64_t>(dir) * 0x94d049bb133111ebULL + off * 0x2545f4914f6cdd1dULL;
	x ^= x >> 29;
	return static_cast<uint8_t>(x ^ (x >> 8));
}

void fill(std::vector<uint8_t> &b, size_t size, int iter, int dir)
{
	for (size_t i = 0; i < size; i++)
		b[i] = pattern(size, iter, dir, i);
}

// The number of wrong bytes in b[0, size), and the first one in *first.
size_t check(const std::vector<uint8_t> &b, size_t size, int iter, int dir, size_t *first)
{
	size_t bad = 0;
	for (size_t i = 0; i < size; i++) {
		if (b[i] != pattern(size, iter, dir, i)) {
			if (bad == 0)
				*first = i;
			bad++;
		}
	}
	return bad;
}
} // namespace

int main(int argc, char **argv)
{
	auto job = flowapp::mpi_start(&argc, &argv);
	const int me = job.me, nodes = job.nodes;
	const auto &args = job.args;
	auto max = static_cast<size_t>(flowapp::num(args, "max", 4194304));
	auto iters = static_cast<int>(flowapp::num(args, "iters", 20));
	std::string tag = flowapp::opt(args, "name", "flows.mpi-pingpong");
	if (nodes < 2 || iters < 1 || max < 1)
		return flowapp::mpi_usage_fail(job, tag, "needs 2 or more ranks, --iters >= 1 and --max >= 1");
	std::vector<uint8_t> buf(max);
	uint64_t bad = 0, checked = 0;
	std::string first_bad;
	for (int peer = 1; peer < nodes; peer++) {
		for (size_t size = 1; size <= max; size = size * 4 > max && size < max ? max : size * 4) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			for (int it = 0; it < iters; it++) {
				size_t off = 0, n = 0;
				if (me == 0) {
					fill(buf, size, it, 0);
					MPI_Send(buf.data(), static_cast<int>(size), MPI_BYTE, peer, it,
					         MPI_COMM_WORLD);
					std::memset(buf.data(), 0, size);
					MPI_Recv(buf.data(), static_cast<int>(size), MPI_BYTE, peer, it, MPI_COMM_WORLD,
					         MPI_STATUS_IGNORE);
					n = check(buf, size, it, 1, &off);
				} else if (me == peer) {
					std::memset(buf.data(), 0, size);
					MPI_Recv(buf.data(), static_cast<int>(size), MPI_BYTE, 0, it, MPI_COMM_WORLD,
					         MPI_STATUS_IGNORE);
					n = check(buf, size, it, 0, &off);
					fill(buf, size, it, 1);
					MPI_Send(buf.data(), static_cast<int>(size), MPI_BYTE, 0, it, MPI_COMM_WORLD);
				}
				if (me == 0 || me == peer)
					checked += size;
				if (n != 0 && first_bad.empty())
					first_bad = "rank " + std::to_string(me) + " from " +
					            std::to_string(me ? 0 : peer) + ": " + std::to_string(n) + " of " +
					            std::to_string(size) + " bytes wrong, first at " +
					            std::to_string(off) + " (iteration " + std::to_string(it) + ")";
				bad += n;
			}
			double secs = MPI_Wtime() - t0;
			if (me == 0)
				std::printf("# %s: rank 0 <-> %d, %zu B: %.1f us round trip, %.2f MB/s one way\n",
				            tag.c_str(), peer, size, secs / iters * 1e6,
				            2.0 * static_cast<double>(size) * iters / secs / 1e6);
			if (size == max)
				break;
		}
	}
	return flowapp::mpi_verdict(job, tag, bad, checked, first_bad, std::to_string(nodes) + " ranks");
}
