// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Internal: critical-size measurement helpers shared by the runtime and the
// CLI's `dpi info`.
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

// Times registration against copying for 4 KiB .. 8 MiB on `pd`.
std::vector<CostSample> measure_costs(ibv_pd *pd);
// The smallest measured size from which registering is cheaper than
// copying for it and every larger size; past the table when copying always wins.
size_t critical_from(const std::vector<CostSample> &samples);

} // namespace dpi::detail
