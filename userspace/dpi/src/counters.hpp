// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The runtime's statistics (dpi::Stats), counted lock-free by appenders and
// connections and read as one snapshot.
#pragma once

#include <dpi/dpi.hpp>

#include <atomic>
#include <cstdint>

namespace dpi::detail
{

class Counters
{
public:
	void append(size_t bytes, bool zero_copy) noexcept
	{
		(zero_copy ? zero_ : copied_)++;
		appends_++;
		bytes_ += bytes;
	}
	void sealed() noexcept { sealed_++; }
	void shared_append() noexcept { shared_++; }
	void shared_pad() noexcept { pads_++; }
	void shared_fallback() noexcept { fallbacks_++; }
	void stalled() noexcept { stalls_++; }
	void posted(bool signaled) noexcept
	{
		if (signaled)
			signaled_++;
		posted_++;
	}
	[[nodiscard]] Stats snapshot() const noexcept
	{
		Stats s;
		s.appends = appends_;
		s.bytes_appended = bytes_;
		s.copied_appends = copied_;
		s.zero_copy_appends = zero_;
		s.segments_sealed = sealed_;
		s.credit_stalls = stalls_;
		s.signaled_wrs = signaled_;
		s.posted_wrs = posted_;
		s.shared_appends = shared_;
		s.shared_pads = pads_;
		s.shared_fallbacks = fallbacks_;
		return s;
	}

private:
	std::atomic<uint64_t> appends_{0}, bytes_{0}, copied_{0}, zero_{0}, sealed_{0}, stalls_{0}, signaled_{0},
	        posted_{0}, shared_{0}, pads_{0}, fallbacks_{0};
};

} // namespace dpi::detail
