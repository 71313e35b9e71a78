// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dpi/dpi.h>

#include "runtime.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

TEST(errors, every_code_has_a_distinct_name_and_message)
{
	std::set<std::string> names;
	std::set<std::string> msgs;
	for (int c = 0; c <= static_cast<int>(dpi::Errc::not_local); ++c) {
		auto e = static_cast<dpi::Errc>(c);
		EXPECT_TRUE(names.insert(dpi::errc_name(e)).second) << c;
		EXPECT_TRUE(msgs.insert(dpi::errc_message(e)).second) << c;
		EXPECT_STRNE(dpi::errc_name(e), "unknown_error");
		EXPECT_STREQ(DPI_Error_String(c), dpi::errc_message(e));
	}
	EXPECT_STREQ(DPI_Error_String(999), "unknown error code");
}

TEST(errors, error_carries_code_and_readable_text)
{
	dpi::Error e(dpi::Errc::too_large, "append of 5000 bytes");
	EXPECT_EQ(e.code(), dpi::Errc::too_large);
	EXPECT_STREQ(e.what(), "append larger than a segment: append of 5000 bytes");
}

TEST(errors, c_api_reports_uninitialized_context_and_bad_spec)
{
	DPI_Context ctx;
	std::string name = "b";
	char data[] = "x";
	EXPECT_EQ(DPI_Append(name, data, 1, ctx), DPI_ERR_NOT_INITIALIZED);
	EXPECT_NE(std::string(DPI_Last_Error()).find("call DPI_Init first"), std::string::npos);
	EXPECT_EQ(DPI_Create_Buffer(name, 0, ctx), DPI_ERR_NOT_INITIALIZED);
	EXPECT_EQ(DPI_Flush_Buffer(name), DPI_ERR_NOT_INITIALIZED);
	EXPECT_EQ(DPI_Finalize(ctx), DPI_ERR_NOT_INITIALIZED);
	unsetenv("DPI_CLUSTER");
	EXPECT_EQ(DPI_Init(ctx), DPI_ERR_SPEC);
	EXPECT_NE(std::string(DPI_Last_Error()).find("DPI_CLUSTER is not set"), std::string::npos);
	EXPECT_EQ(DPI_Init(ctx, "/nonexistent.spec", 0), DPI_ERR_SPEC);
	EXPECT_EQ(ctx.node, nullptr);
}

TEST(errors, critical_size_picks_the_stable_crossover)
{
	using dpi::detail::CostSample;
	// copying wins up to 16 KiB, registering from 32 KiB on
	std::vector<CostSample> s = {{4096, 10, 1}, {8192, 10, 2}, {16384, 10, 5}, {32768, 10, 11}, {65536, 11, 20}};
	EXPECT_EQ(dpi::detail::critical_from(s), 32768U);
	// a noisy win at 8 KiB followed by a loss does not count
	s = {{4096, 10, 1}, {8192, 1, 2}, {16384, 10, 5}, {32768, 10, 11}};
	EXPECT_EQ(dpi::detail::critical_from(s), 32768U);
	// copying always wins: past the table
	s = {{4096, 10, 1}, {8192, 10, 2}};
	EXPECT_EQ(dpi::detail::critical_from(s), 16384U);
	// registering always wins
	s = {{4096, 1, 2}, {8192, 1, 3}};
	EXPECT_EQ(dpi::detail::critical_from(s), 4096U);
}
