// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Shared start and verdict of the MPI example programs (flows-mpi-*): they
// differ in what they send, not in how a run begins or is judged.
#pragma once
#define OMPI_SKIP_MPICXX 1 // the C API only: the C++ bindings header does not build warning-free
#include "common.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

namespace flowapp
{

// This rank, the job size and the --key value options.
struct MpiJob {
	int me = 0;
	int nodes = 1;
	std::map<std::string, std::string> args;
};

inline MpiJob mpi_start(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	MpiJob job;
	MPI_Comm_rank(MPI_COMM_WORLD, &job.me);
	MPI_Comm_size(MPI_COMM_WORLD, &job.nodes);
	job.args = parse_args(*argc, *argv);
	return job;
}

// A command line the program cannot run with: rank 0 says so as the test's
// FAIL line, every rank leaves MPI, exit status 1.
inline int mpi_usage_fail(const MpiJob &job, const std::string &tag, const char *why)
{
	if (job.me == 0)
		std::printf("FAIL: %s [%s]\n", tag.c_str(), why);
	MPI_Finalize();
	return 1;
}

// The verdict of a data check: every rank's count of wrong and checked bytes
// summed on rank 0, which prints PASS or FAIL (the summary line says `what`,
// e.g. "3 ranks, 9 rounds"); a rank that saw a wrong byte first prints where.
// Ends MPI; returns the exit status (non-zero on rank 0 only).
inline int mpi_verdict(const MpiJob &job, const std::string &tag, uint64_t bad, uint64_t checked,
                       const std::string &first_bad, const std::string &what)
{
	uint64_t v[2] = {bad, checked}, sum[2] = {};
	MPI_Reduce(v, sum, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if (!first_bad.empty())
		std::printf("# %s: %s\n", tag.c_str(), first_bad.c_str());
	std::fflush(stdout);
	// Rank 0's verdict comes after every rank's detail line.
	MPI_Barrier(MPI_COMM_WORLD);
	if (job.me == 0) {
		if (sum[0] == 0)
			std::printf("PASS: %s\n# %s: %s, %llu bytes received and checked\n", tag.c_str(), tag.c_str(),
			            what.c_str(), static_cast<unsigned long long>(sum[1]));
		else
			std::printf("FAIL: %s [%llu of %llu bytes received were wrong]\n", tag.c_str(),
			            static_cast<unsigned long long>(sum[0]), static_cast<unsigned long long>(sum[1]));
	}
	std::fflush(stdout);
	MPI_Finalize();
	return sum[0] == 0 || job.me != 0 ? 0 : 1;
}

} // namespace flowapp
