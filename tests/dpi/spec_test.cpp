// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dpi/dpi.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace
{

std::string spec_error(const std::string &text)
{
	try {
		dpi::ClusterSpec::parse(text, "t.spec");
	} catch (const dpi::Error &e) {
		EXPECT_EQ(e.code(), dpi::Errc::spec_error);
		return e.what();
	}
	ADD_FAILURE() << "no error for: " << text;
	return {};
}

} // namespace

TEST(spec, parses_nodes_ports_devices_and_directory)
{
	auto s = dpi::ClusterSpec::parse("# two guests\n"
	                                 "node 0 192.0.2.1:7000 device=rxe0  # receiver\n"
	                                 "\n"
	                                 "node 7 192.0.2.2\n"
	                                 "node 3 [fe80::1]:9\n"
	                                 "directory 7\n");
	ASSERT_EQ(s.nodes().size(), 3U);
	EXPECT_EQ(s.at(0).host, "192.0.2.1");
	EXPECT_EQ(s.at(0).port, 7000);
	EXPECT_EQ(s.at(0).device, "rxe0");
	EXPECT_EQ(s.at(7).port, 7471);
	EXPECT_EQ(s.at(7).device, "");
	EXPECT_EQ(s.at(3).host, "fe80::1");
	EXPECT_EQ(s.at(3).port, 9);
	EXPECT_EQ(s.directory_node(), 7);
	EXPECT_EQ(s.find(5), nullptr);
}

TEST(spec, directory_defaults_to_lowest_id)
{
	auto s = dpi::ClusterSpec::parse("node 4 a\nnode 2 b\nnode 9 c\n");
	EXPECT_EQ(s.directory_node(), 2);
}

TEST(spec, malformed_inputs_name_file_line_and_reason)
{
	EXPECT_NE(spec_error("node 0 a\nnod 1 b\n").find("t.spec:2: unknown keyword 'nod'"), std::string::npos);
	EXPECT_NE(spec_error("node x a\n").find("t.spec:1: node id 'x' is not an integer"), std::string::npos);
	EXPECT_NE(spec_error("node 0\n").find("t.spec:1: expected 'node <id>"), std::string::npos);
	EXPECT_NE(spec_error("node 0 a:0\n").find("port '0' is not in 1..65535"), std::string::npos);
	EXPECT_NE(spec_error("node 0 a:99999\n").find("port '99999'"), std::string::npos);
	EXPECT_NE(spec_error("node 0 a:\n").find("empty port"), std::string::npos);
	EXPECT_NE(spec_error("node 0 :5\n").find("empty host"), std::string::npos);
	EXPECT_NE(spec_error("node 0 [::1\n").find("unterminated '['"), std::string::npos);
	EXPECT_NE(spec_error("node 0 a\nnode 0 b\n").find("t.spec:2: duplicate node id 0"), std::string::npos);
	EXPECT_NE(spec_error("node 0 a\nnode 1 a\n").find("address a:7471 is used twice"), std::string::npos);
	EXPECT_NE(spec_error("node 0 a colour=red\n").find("unknown node attribute 'colour=red'"), std::string::npos);
	EXPECT_NE(spec_error("node 0 a\ndirectory 3\n").find("t.spec:2: directory node 3 is not defined"),
	          std::string::npos);
	EXPECT_NE(spec_error("node 0 a\ndirectory 0\ndirectory 0\n").find("second 'directory'"), std::string::npos);
	EXPECT_NE(spec_error("# nothing\n").find("no 'node' lines"), std::string::npos);
	EXPECT_NE(spec_error("node -1 a\n").find("node id '-1'"), std::string::npos);
}

TEST(spec, load_and_env)
{
	EXPECT_THROW(dpi::ClusterSpec::load("/nonexistent/dpi.spec"), dpi::Error);
	try {
		dpi::ClusterSpec::load("/nonexistent/dpi.spec");
	} catch (const dpi::Error &e) {
		EXPECT_NE(std::string(e.what()).find("cannot open cluster spec '/nonexistent/dpi.spec'"),
		          std::string::npos);
	}
	std::string path = ::testing::TempDir() + "dpi-spec-test.spec";
	{
		std::ofstream f(path);
		f << "node 1 192.0.2.5:7100\n";
	}
	setenv("DPI_CLUSTER", path.c_str(), 1);
	auto s = dpi::ClusterSpec::from_env();
	EXPECT_EQ(s.at(1).port, 7100);
	unsetenv("DPI_CLUSTER");
	try {
		dpi::ClusterSpec::from_env();
		ADD_FAILURE() << "no error without DPI_CLUSTER";
	} catch (const dpi::Error &e) {
		EXPECT_EQ(e.code(), dpi::Errc::spec_error);
		EXPECT_NE(std::string(e.what()).find("DPI_CLUSTER is not set"), std::string::npos);
	}
	try {
		(void)s.at(2);
		ADD_FAILURE() << "no error for unknown node";
	} catch (const dpi::Error &e) {
		EXPECT_EQ(e.code(), dpi::Errc::invalid_argument);
		EXPECT_NE(std::string(e.what()).find("node 2 is not in the cluster spec"), std::string::npos);
	}
}
