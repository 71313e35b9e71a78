// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Calibration: the critical size, measured on the actual device by timing
// ibv_reg_mr + ibv_dereg_mr against memcpy (Documentation/dpi.md, memory
// policy).
#include <dpi-internal/calibration.hpp>

#include "util.hpp"
#include <dpi-internal/verbs.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace dpi::detail
{

std::vector<CostSample> measure_costs(ibv_pd *pd, int rounds)
{
	// Sizes 4 KiB .. 8 MiB.  All sizes are timed once per round, rounds
	// repeated, and each size keeps the median of its rounds: a guest that is
	// descheduled or a host that is busy for a moment spoils single samples,
	// not a whole size.  The rounds sweep the sizes in alternating directions
	// and alternate which of the two operations goes first, so slow drift
	// and cache warmth do not favour one side.  One untimed pass first
	// faults in the code paths (provider, kernel pinning).
	std::vector<size_t> sizes;
	for (size_t size = 4096; size <= (8U << 20); size *= 2)
		sizes.push_back(size);
	MemPtr src = alloc_touched(sizes.back());
	MemPtr dst = alloc_touched(sizes.back());
	auto reg_once = [&](size_t size) {
		auto t0 = Clock::now();
		MrPtr mr(ibv_reg_mr(pd, src.get(), size, IBV_ACCESS_LOCAL_WRITE));
		if (!mr)
			fail_sys("ibv_reg_mr while measuring the critical size", errno);
		mr.reset();
		return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
	};
	auto copy_once = [&](size_t size) {
		auto t0 = Clock::now();
		std::memcpy(dst.get(), src.get(), size);
		return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
	};
	for (size_t size : sizes) {
		(void)reg_once(size);
		(void)copy_once(size);
	}
	rounds = std::max(rounds, 1);
	std::vector<std::vector<CostSample>> all(static_cast<size_t>(rounds));
	for (int r = 0; r < rounds; ++r) {
		auto &round = all[static_cast<size_t>(r)];
		round.resize(sizes.size());
		for (size_t k = 0; k < sizes.size(); ++k) {
			size_t i = (r % 2) ? sizes.size() - 1 - k : k;
			double reg = 0;
			double copy = 0;
			if ((r + static_cast<int>(i)) % 2) {
				reg = reg_once(sizes[i]);
				copy = copy_once(sizes[i]);
			} else {
				copy = copy_once(sizes[i]);
				reg = reg_once(sizes[i]);
			}
			round[i] = {sizes[i], reg, copy};
		}
	}
	return median_costs(all);
}

std::vector<CostSample> median_costs(const std::vector<std::vector<CostSample>> &rounds)
{
	std::vector<CostSample> out;
	if (rounds.empty())
		return out;
	auto median = [](std::vector<double> v) {
		std::sort(v.begin(), v.end());
		size_t n = v.size();
		return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	};
	for (size_t i = 0; i < rounds.front().size(); ++i) {
		std::vector<double> reg;
		std::vector<double> copy;
		for (const auto &round : rounds) {
			if (i < round.size() && round[i].size == rounds.front()[i].size) {
				reg.push_back(round[i].reg_us);
				copy.push_back(round[i].copy_us);
			}
		}
		out.push_back({rounds.front()[i].size, median(reg), median(copy)});
	}
	return out;
}

size_t critical_from(const std::vector<CostSample> &samples)
{
	// Choosing threshold t means copying below t and registering from t
	// on.  Against always copying, registering a size s costs
	// ln(reg(s)/copy(s)) (relative, so every size counts alike whatever its
	// magnitude).  Pick the t that minimises the sum of that over all sizes
	// >= t; past the table (copy everything) the sum is 0.  One size spoiled
	// by noise only adds one term, so it cannot drag the threshold to the
	// end of the table the way a "wins at every larger size" rule does.
	// Ties go to the larger size: copying needs no pinning.
	size_t crit = samples.empty() ? 0 : samples.back().size * 2;
	double best = 0;
	double suffix = 0;
	for (size_t i = samples.size(); i-- > 0;) {
		double reg = std::max(samples[i].reg_us, 1e-3);
		double copy = std::max(samples[i].copy_us, 1e-3);
		suffix += std::log(reg / copy);
		if (suffix < best - 1e-9) {
			best = suffix;
			crit = samples[i].size;
		}
	}
	return crit;
}

} // namespace dpi::detail
