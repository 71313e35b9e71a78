// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The distributed hash join of flows-join written with MPI, for the
// benchmark: the same table shares (join_common.hpp), the same hash
// partitioning (mix64(key) mod ranks), shuffled with MPI_Alltoallv (Open MPI,
// TCP), joined locally, totals MPI_Reduce'd to rank 0 and compared with a
// single-node join there.  The timed part runs from a barrier after MPI_Init
// to the end of the local join, like flows-join --warmup 1.
//
//   mpirun -np N flows-mpi-join [--rows 20000] [--keys 5000] [--dist uniform|zipf]
//                               [--theta 1.0] [--seed 1] [--name TAG]
#include "join_common.hpp"
#include "mpi_common.hpp"

#include <chrono>
#include <cstdio>
#include <string>

using namespace joinapp;

namespace
{
std::vector<Row> shuffle(const std::vector<Row> &mine, int nodes)
{
	std::vector<std::vector<Row>> parts(static_cast<size_t>(nodes));
	for (const Row &r : mine)
		parts[mix64(r.key) % static_cast<uint64_t>(nodes)].push_back(r);
	std::vector<int> scount(static_cast<size_t>(nodes)), sdispl(static_cast<size_t>(nodes)),
	        rcount(static_cast<size_t>(nodes)), rdispl(static_cast<size_t>(nodes));
	std::vector<Row> sendbuf;
	for (int i = 0; i < nodes; i++) {
		auto u = static_cast<size_t>(i);
		sdispl[u] = static_cast<int>(sendbuf.size() * sizeof(Row));
		scount[u] = static_cast<int>(parts[u].size() * sizeof(Row));
		sendbuf.insert(sendbuf.end(), parts[u].begin(), parts[u].end());
	}
	MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, MPI_COMM_WORLD);
	int total = 0;
	for (int i = 0; i < nodes; i++) {
		rdispl[static_cast<size_t>(i)] = total;
		total += rcount[static_cast<size_t>(i)];
	}
	std::vector<Row> out(static_cast<size_t>(total) / sizeof(Row));
	MPI_Alltoallv(sendbuf.data(), scount.data(), sdispl.data(), MPI_BYTE, out.data(), rcount.data(), rdispl.data(),
	              MPI_BYTE, MPI_COMM_WORLD);
	return out;
}
} // namespace

int main(int argc, char **argv)
{
	auto job = flowapp::mpi_start(&argc, &argv);
	const int me = job.me, nodes = job.nodes;
	const auto &args = job.args;
	auto get = [&](const char *k, const char *def) { return flowapp::opt(args, k, def); };
	Gen g{std::stoull(get("rows", "20000")), std::stoull(get("keys", "5000")), get("dist", "uniform") == "zipf",
	      std::stod(get("theta", "1.0")),    std::stoull(get("seed", "1")),    {}};
	g.init();
	std::string tag = get("name", "flows.mpi-join");
	auto rshare = g.share(0, me, nodes);
	auto sshare = g.share(1, me, nodes);
	// One int to and from every rank first: the transport connects lazily
	// (ofi_rxm on the first message to a peer), and flows-join's warm-up
	// sets up its whole mesh before its clock too.
	std::vector<int> warm_out(static_cast<size_t>(nodes), me), warm_in(static_cast<size_t>(nodes));
	MPI_Alltoall(warm_out.data(), 1, MPI_INT, warm_in.data(), 1, MPI_INT, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	auto t0 = std::chrono::steady_clock::now();
	auto rpart = shuffle(rshare, nodes);
	auto spart = shuffle(sshare, nodes);
	double exchange_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	JoinResult mine = hash_join(rpart, spart);
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	int64_t v[4] = {mine.matches, mine.checksum, mine.r_rows, mine.s_rows}, sum[4] = {};
	MPI_Reduce(v, sum, 4, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	std::printf("# %s.partition%d: rank %d: %lld matches, %.4f s, exchange %.4f s\n", tag.c_str(), me, me,
	            static_cast<long long>(mine.matches), secs, exchange_secs);
	int rc = 0;
	if (me == 0) {
		std::vector<Row> all_r, all_s;
		for (int n = 0; n < nodes; n++) {
			auto x = g.share(0, n, nodes);
			auto y = g.share(1, n, nodes);
			all_r.insert(all_r.end(), x.begin(), x.end());
			all_s.insert(all_s.end(), y.begin(), y.end());
		}
		JoinResult single = hash_join(all_r, all_s);
		bool ok = sum[0] == single.matches && sum[1] == single.checksum && sum[2] == single.r_rows &&
		          sum[3] == single.s_rows;
		std::printf("%s: %s\n# %s: %d ranks: distributed %lld matches checksum %lld, single-node %lld matches "
		            "checksum %lld\n",
		            ok ? "PASS" : "FAIL", tag.c_str(), tag.c_str(), nodes, static_cast<long long>(sum[0]),
		            static_cast<long long>(sum[1]), static_cast<long long>(single.matches),
		            static_cast<long long>(single.checksum));
		rc = ok ? 0 : 1;
	}
	std::fflush(stdout);
	MPI_Finalize();
	return rc;
}
