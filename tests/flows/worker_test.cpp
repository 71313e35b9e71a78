// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// flowapp::Worker (userspace/flows/examples/common.hpp): a node whose logic
// fails while one of its threads waits for good must end with a FAIL line
// naming the error and exit status 1, not abort with no word of why (what a
// joinable std::thread does when an exception unwinds past it).
#include "common.hpp"

#include <gtest/gtest.h>

#include <future>
#include <stdexcept>
#include <unistd.h>

namespace
{

// The FAIL line goes to stdout; death tests match stderr.
void stdout_to_stderr()
{
	std::fflush(stdout);
	::dup2(STDERR_FILENO, STDOUT_FILENO);
}

TEST(worker, an_error_beside_a_blocked_worker_ends_the_node_with_its_reason)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(
	        {
		        stdout_to_stderr();
		        std::promise<void> never;
		        auto blocked = never.get_future();
		        flowapp::Worker w("flows.t", 2, [&] { blocked.wait(); });
		        w.beside([] { throw std::runtime_error("node unreachable: node 0"); });
		        w.join();
	        },
	        ::testing::ExitedWithCode(1), "FAIL: flows.t \\[node 2 error: node unreachable: node 0\\]");
}

TEST(worker, an_error_in_the_worker_ends_the_node_with_its_reason)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(
	        {
		        stdout_to_stderr();
		        flowapp::Worker w("flows.t", 1, [] { throw std::runtime_error("peer disconnected"); });
		        w.beside([] { std::this_thread::sleep_for(std::chrono::seconds(30)); });
		        w.join();
	        },
	        ::testing::ExitedWithCode(1), "FAIL: flows.t \\[node 1 error: peer disconnected\\]");
}

TEST(worker, without_errors_the_node_goes_on)
{
	int collected = 0, sent = 0;
	flowapp::Worker w("flows.t", 0, [&] { collected = 7; });
	w.beside([&] { sent = 5; });
	w.join();
	EXPECT_EQ(collected, 7);
	EXPECT_EQ(sent, 5);
}

} // namespace
