// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The tuple and flow spec the flows unit tests share (flow_test.cpp,
// ackkey_crash_test.cpp): a 16-byte tuple carrying its key, its source and
// its index within that source, and a FlowSpec for it.
#ifndef SWIWARP_TESTS_FLOWS_FLOW_FIXTURE_HPP
#define SWIWARP_TESTS_FLOWS_FLOW_FIXTURE_HPP

#include <dpi/flow.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace flow_fixture
{
struct Tup {
	uint64_t key;
	uint32_t src;
	uint32_t idx;
};
static_assert(sizeof(Tup) == 16);

inline dpi::flow::View view_of(const Tup &t)
{
	return {reinterpret_cast<const std::byte *>(&t), sizeof(t)};
}

// The tuple in v, which must be exactly one Tup (a shorter view is not read
// past its end).
inline Tup tup_of(dpi::flow::View v)
{
	Tup t{};
	EXPECT_EQ(v.size(), sizeof(Tup));
	std::memcpy(&t, v.data(), std::min(v.size(), sizeof(t)));
	return t;
}

inline dpi::flow::FlowSpec base_spec(const std::string &name, std::vector<int> targets, size_t sources)
{
	dpi::flow::FlowSpec s;
	s.name = name;
	s.targets = std::move(targets);
	s.sources = sources;
	s.tuple_size = sizeof(Tup);
	return s;
}
} // namespace flow_fixture

#endif
