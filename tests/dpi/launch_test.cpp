// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Finding the cluster without a PMIx server: the PMIx value encoding of a
// node's address, and which source wins (spec file, PMIx, neither).
#include <dpi/dpi.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace
{

std::string error_of(const auto &f)
{
	try {
		f();
	} catch (const dpi::Error &e) {
		EXPECT_EQ(e.code(), dpi::Errc::spec_error) << e.what();
		return e.what();
	}
	ADD_FAILURE() << "no error";
	return {};
}

// Clears what launch_from_env reads, restores nothing: tests set what they need.
void clear_env()
{
	for (const char *v :
	     {"DPI_CLUSTER", "DPI_NODE_ID", "PMIX_NAMESPACE", "PMIX_RANK", "DPI_VERBOSE", "SLURM_JOB_ID"})
		unsetenv(v);
}

} // namespace

TEST(launch, address_round_trips_through_the_pmix_value)
{
	dpi::NodeAddress a{3, "192.0.2.3", 7490, "swiwarp0"};
	std::string v = dpi::encode_node_address(a);
	EXPECT_EQ(v, "node 3 192.0.2.3:7490 device=swiwarp0");
	auto b = dpi::decode_node_address(v, 3);
	EXPECT_EQ(b.id, 3);
	EXPECT_EQ(b.host, "192.0.2.3");
	EXPECT_EQ(b.port, 7490);
	EXPECT_EQ(b.device, "swiwarp0");

	dpi::NodeAddress v6{0, "fd00::2", 7471, ""};
	EXPECT_EQ(dpi::encode_node_address(v6), "node 0 [fd00::2]:7471");
	auto c = dpi::decode_node_address(dpi::encode_node_address(v6), 0);
	EXPECT_EQ(c.host, "fd00::2");
	EXPECT_EQ(c.port, 7471);
	EXPECT_TRUE(c.device.empty());
}

TEST(launch, decoding_names_the_rank_that_published_a_bad_value)
{
	auto e = error_of([] { dpi::decode_node_address("node 2 192.0.2.3:7490", 1); });
	EXPECT_NE(e.find("rank 1 published the address of node 2"), std::string::npos) << e;
	e = error_of([] { dpi::decode_node_address("192.0.2.3", 4); });
	EXPECT_NE(e.find("rank 4 published a bad address '192.0.2.3'"), std::string::npos) << e;
	e = error_of([] { dpi::decode_node_address("node 4 192.0.2.3:0", 4); });
	EXPECT_NE(e.find("rank 4 published a bad address"), std::string::npos) << e;
	EXPECT_NE(e.find("port '0'"), std::string::npos) << e;
	e = error_of([] { dpi::decode_node_address("node 4 a:1\nnode 5 b:1", 4); });
	EXPECT_NE(e.find("more than one line"), std::string::npos) << e;
	e = error_of([] { dpi::decode_node_address("", 0); });
	EXPECT_NE(e.find("rank 0 published a bad address"), std::string::npos) << e;
}

TEST(launch, exchanged_addresses_give_the_spec_file_description)
{
	auto file = dpi::ClusterSpec::parse("node 0 192.0.2.1:7471 device=swiwarp0\n"
	                                    "node 1 192.0.2.2:7471 device=swiwarp0\n"
	                                    "node 2 192.0.2.3:7472\n");
	std::vector<dpi::NodeAddress> got;
	// What ranks 2, 0, 1 would publish, in the order a fence might hand them over.
	for (int r : {2, 0, 1})
		got.push_back(dpi::decode_node_address(dpi::encode_node_address(file.at(r)), r));
	auto s = dpi::spec_from_addresses(got, "PMIx namespace t");
	ASSERT_EQ(s.nodes().size(), file.nodes().size());
	EXPECT_EQ(s.directory_node(), file.directory_node());
	for (const auto &n : file.nodes()) {
		const auto &m = s.at(n.id);
		EXPECT_EQ(m.host, n.host);
		EXPECT_EQ(m.port, n.port);
		EXPECT_EQ(m.device, n.device);
	}
	// Two ranks on one address and port: the spec's own check names it.
	got.push_back({3, "192.0.2.3", 7472, ""});
	auto e = error_of([&] { dpi::spec_from_addresses(got, "PMIx namespace t"); });
	EXPECT_NE(e.find("PMIx namespace t:4: address 192.0.2.3:7472 is used twice"), std::string::npos) << e;
}

TEST(launch, a_spec_file_wins_and_neither_is_an_error)
{
	EXPECT_EQ(dpi::choose_cluster_source(true, true), dpi::ClusterSource::spec_file);
	EXPECT_EQ(dpi::choose_cluster_source(true, false), dpi::ClusterSource::spec_file);
	EXPECT_EQ(dpi::choose_cluster_source(false, true), dpi::ClusterSource::pmix);
	auto e = error_of([] { dpi::choose_cluster_source(false, false); });
	EXPECT_NE(e.find("no PMIx server (and DPI_CLUSTER is not set)"), std::string::npos) << e;
}

TEST(launch, environment_decides_without_a_pmix_server)
{
	clear_env();
	EXPECT_FALSE(dpi::pmix_environment());
	auto e = error_of([] { dpi::launch_from_env(); });
	EXPECT_NE(e.find("no PMIx server (and DPI_CLUSTER is not set)"), std::string::npos) << e;
	EXPECT_NE(e.find("mpirun or srun --mpi=pmix"), std::string::npos) << e;

	// Started by srun without --mpi=pmix: a Slurm job, no PMIx.  The error
	// names the job and the missing option.
	setenv("SLURM_JOB_ID", "42", 1);
	e = error_of([] { dpi::launch_from_env(); });
	EXPECT_NE(e.find("no PMIx server (and DPI_CLUSTER is not set): Slurm job 42 started this process "
	                 "without PMIx: run it with srun --mpi=pmix"),
	          std::string::npos)
	        << e;
	unsetenv("SLURM_JOB_ID");

	// Under mpirun with a spec file given, the spec file and DPI_NODE_ID win:
	// no PMIx call is made (there is no server here to answer one).
	std::string path = ::testing::TempDir() + "dpi-launch-test.spec";
	{
		std::ofstream f(path);
		f << "node 0 192.0.2.1:7600\nnode 1 192.0.2.2:7600\n";
	}
	setenv("PMIX_NAMESPACE", "no-such-job", 1);
	setenv("PMIX_RANK", "0", 1);
	EXPECT_TRUE(dpi::pmix_environment());
	setenv("DPI_CLUSTER", path.c_str(), 1);
	setenv("DPI_NODE_ID", "1", 1);
	auto l = dpi::launch_from_env();
	EXPECT_EQ(l.source, dpi::ClusterSource::spec_file);
	EXPECT_EQ(l.node_id, 1);
	EXPECT_EQ(l.spec.at(1).host, "192.0.2.2");
	EXPECT_EQ(l.origin, "spec file " + path);
	EXPECT_FALSE(l.session);
	// An explicit path and id beat the environment.
	unsetenv("DPI_CLUSTER");
	auto k = dpi::launch_from_env(path, 0);
	EXPECT_EQ(k.source, dpi::ClusterSource::spec_file);
	EXPECT_EQ(k.node_id, 0);
	// In a Slurm job without PMIx a spec file works as anywhere else.
	unsetenv("PMIX_NAMESPACE");
	unsetenv("PMIX_RANK");
	setenv("SLURM_JOB_ID", "42", 1);
	EXPECT_EQ(dpi::launch_from_env(path, 0).source, dpi::ClusterSource::spec_file);
	clear_env();
}

TEST(launch, pmix_support_is_reported)
{
	// The build says which; under PMIx without support the error says so.
#ifdef DPI_TEST_EXPECT_PMIX
	EXPECT_TRUE(dpi::pmix_built());
#else
	EXPECT_FALSE(dpi::pmix_built());
	clear_env();
	setenv("PMIX_RANK", "0", 1);
	auto e = error_of([] { dpi::launch_from_env(); });
	EXPECT_NE(e.find("built without PMIx support"), std::string::npos) << e;
	clear_env();
#endif
}
