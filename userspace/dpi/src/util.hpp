// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Small helpers every part of the runtime uses: errors from errno, resident
// memory, deadlines and the DPI_DEBUG trace.
#pragma once

#include <dpi/dpi.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <unistd.h>

namespace dpi::detail
{

using Clock = std::chrono::steady_clock;
using Deadline = std::chrono::time_point<Clock>;

// Throws Errc::system with "<what>: <strerror(err)>".
[[noreturn]] void fail_sys(const std::string &what, int err);

struct FreeDeleter {
	void operator()(std::byte *p) const noexcept;
};
using MemPtr = std::unique_ptr<std::byte, FreeDeleter>;

// Page-aligned, zeroed memory of at least n bytes: resident pages register
// much faster than untouched ones (thesis 4.4).
MemPtr alloc_touched(size_t n);

// now + ms, or "never" for ms <= 0 (0 means wait forever in Options).
Deadline deadline_after(std::chrono::milliseconds ms);

// "node N (host:port)"
std::string node_desc(const NodeAddress &a);

// "%p" of a pointer, for the trace.
std::string ptr(const void *p);

bool debug_on();

// One line on stderr, with the pid, when $DPI_DEBUG is set (and not "0").
template <class... T> void debug(const T &...parts)
{
	if (!debug_on())
		return;
	std::string line = "dpi[" + std::to_string(getpid()) + "]: ";
	((line += parts), ...);
	line += "\n";
	(void)!::write(2, line.data(), line.size());
}

// One line on stderr, always: things an operator must see (a fallback, a
// hole in a shared log).
template <class... T> void warn(const T &...parts)
{
	std::string line = "dpi[" + std::to_string(getpid()) + "]: ";
	((line += parts), ...);
	line += "\n";
	(void)!::write(2, line.data(), line.size());
}

} // namespace dpi::detail
