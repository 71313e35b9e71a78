// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The shuffle of flows-shuffle written with MPI, for the benchmark: the same
// tuples (shuffle_common.hpp), the same partitioning, moved with one
// MPI_Alltoallv; the local partition stays local, as in the DPI flow and TCP
// versions.  Like them, the timed part runs from a start barrier (here after
// one MPI_Alltoall of an int, so that lazily connecting transports such as
// ofi_rxm are connected) to the end of this rank's receiving, and covers
// generating and partitioning the tuples, the exchange and reading the keys
// of what arrived.  Every rank prints flows-shuffle's JSON line, with the
// transport named by --label (e.g. mpi-swiwarp), and rank 0 the verdict of
// all ranks' checks as a PASS or FAIL line named --name.
//
//   mpirun -np N flows-mpi-shuffle [--tuple-size 64] [--mb 16 | --bytes B] [--label mpi]
//                                  [--name flows.mpi-shuffle]
#include "mpi_common.hpp"
#include "shuffle_common.hpp"

#include <chrono>
#include <climits>

using namespace shuffleapp;

int main(int argc, char **argv)
{
	auto job = flowapp::mpi_start(&argc, &argv);
	const std::string label = flowapp::opt(job.args, "label", "mpi");
	const std::string tag = flowapp::opt(job.args, "name", "flows.mpi-shuffle");
	Job j = job_from(job.args, job.me, job.nodes);
	if (j.tsize == 0)
		return flowapp::mpi_usage_fail(job, tag, "--tuple-size must be >= 8");
	// MPI_Alltoallv counts are ints: what one rank sends must fit.
	if (j.tuples * j.tsize > static_cast<uint64_t>(INT_MAX))
		return flowapp::mpi_usage_fail(job, tag, "more than INT_MAX bytes per rank");
	const auto n = static_cast<size_t>(j.nodes);
	std::vector<int> warm_out(n, j.me), warm_in(n);
	MPI_Alltoall(warm_out.data(), 1, MPI_INT, warm_in.data(), 1, MPI_INT, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);

	Result r;
	auto t0 = std::chrono::steady_clock::now();
	std::vector<std::vector<std::byte>> parts(n);
	std::vector<std::byte> t(j.tsize);
	for (uint64_t i = 0; i < j.tuples; i++) {
		make_tuple(j.me, i, t);
		uint64_t k = key_of(t.data());
		int d = dest_of(k, j.nodes);
		if (d == j.me) {
			r.recv_tuples++;
			r.keysum += k;
			continue;
		}
		auto &p = parts[static_cast<size_t>(d)];
		p.insert(p.end(), t.begin(), t.end());
	}
	std::vector<int> scount(n), sdispl(n), rcount(n), rdispl(n);
	std::vector<std::byte> sendbuf;
	for (size_t d = 0; d < n; d++) {
		sdispl[d] = static_cast<int>(sendbuf.size());
		scount[d] = static_cast<int>(parts[d].size());
		sendbuf.insert(sendbuf.end(), parts[d].begin(), parts[d].end());
		r.sent_bytes += parts[d].size();
	}
	MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, MPI_COMM_WORLD);
	size_t total = 0;
	for (size_t d = 0; d < n; d++) {
		rdispl[d] = static_cast<int>(total);
		total += static_cast<size_t>(rcount[d]);
	}
	std::vector<std::byte> recvbuf(total);
	MPI_Alltoallv(sendbuf.data(), scount.data(), sdispl.data(), MPI_BYTE, recvbuf.data(), rcount.data(),
	              rdispl.data(), MPI_BYTE, MPI_COMM_WORLD);
	for (size_t o = 0; o + j.tsize <= total; o += j.tsize) {
		r.keysum += key_of(recvbuf.data() + o);
		r.recv_tuples++;
	}
	r.recv_bytes = r.recv_tuples * j.tsize;
	r.secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	bool ok = report(label, j, r);
	int bad = ok ? 0 : 1, bad_sum = 0;
	MPI_Reduce(&bad, &bad_sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (job.me == 0) {
		if (bad_sum == 0)
			std::printf("PASS: %s\n# %s: %d ranks, %zu-byte tuples, every rank got its tuples\n",
			            tag.c_str(), tag.c_str(), j.nodes, j.tsize);
		else
			std::printf("FAIL: %s [%d of %d ranks received the wrong tuples]\n", tag.c_str(), bad_sum,
			            j.nodes);
		std::fflush(stdout);
	}
	MPI_Finalize();
	return job.me == 0 && bad_sum ? 1 : 0;
}
