// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// libdpi internal interface: the critical-size measurement (copy below it,
// register at or above it).  The runtime uses it, and so do the `dpi info`
// tool and the unit tests, through the CMake target dpi_internal.  These
// symbols are exported by libdpi.so but are not part of the installed API:
// the header is not installed and may change with any release.
#pragma once

#include <cstddef>
#include <vector>

struct ibv_pd;

namespace dpi::detail
{

struct CostSample {
	size_t size;
	double reg_us;  // ibv_reg_mr + ibv_dereg_mr on resident pages
	double copy_us; // memcpy of the same bytes
};

// Rounds of the measurement at init; each size keeps its median.
inline constexpr int kMeasureRounds = 7;

// Times registration against copying for 4 KiB .. 8 MiB on `pd`, `rounds`
// times over, and returns each size's median (see median_costs).
std::vector<CostSample> measure_costs(ibv_pd *pd, int rounds = kMeasureRounds);
// Per size, the median registration and the median copy time over rounds
// (each round one sample per size, in the same size order).
std::vector<CostSample> median_costs(const std::vector<std::vector<CostSample>> &rounds);
// The threshold t (a measured size) that minimises the summed log cost
// ratio ln(reg/copy) over all sizes >= t; past the table when copying wins
// overall.
size_t critical_from(const std::vector<CostSample> &samples);

} // namespace dpi::detail
