// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "util.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dpi::detail
{

void fail_sys(const std::string &what, int err)
{
	throw Error(Errc::system, what + ": " + std::strerror(err));
}

void FreeDeleter::operator()(std::byte *p) const noexcept
{
	std::free(p);
}

MemPtr alloc_touched(size_t n)
{
	size_t sz = (n + 4095) & ~size_t{4095};
	void *p = std::aligned_alloc(4096, sz ? sz : 4096);
	if (!p)
		throw Error(Errc::resources, "cannot allocate " + std::to_string(n) + " bytes");
	std::memset(p, 0, sz);
	return MemPtr(static_cast<std::byte *>(p));
}

Deadline deadline_after(std::chrono::milliseconds ms)
{
	if (ms.count() <= 0)
		return Deadline::max();
	return Clock::now() + ms;
}

std::string node_desc(const NodeAddress &a)
{
	return "node " + std::to_string(a.id) + " (" + a.host + ":" + std::to_string(a.port) + ")";
}

std::string ptr(const void *p)
{
	char b[32];
	std::snprintf(b, sizeof b, "%p", p);
	return b;
}

bool debug_on()
{
	static const bool on = [] {
		const char *d = std::getenv("DPI_DEBUG");
		return d && *d && *d != '0';
	}();
	return on;
}

} // namespace dpi::detail
