// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Lab check of the C-style API beyond Listing 1: DPI_Scatter over two append
// buffers, DPI_Write/DPI_Read/DPI_Gather on two regions, DPI_Finalize, and
// error codes.  Run as a client with DPI_CLUSTER set; node 0 must run
// `dpi --id 0 cat sa,sb --sources 1 --newline`.
#include <dpi/dpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace
{

int failures = 0;

void check(bool ok, const char *what)
{
	std::printf("%s: %s%s%s\n", ok ? "ok" : "FAILED", what, ok ? "" : " -- ", ok ? "" : DPI_Last_Error());
	if (!ok)
		++failures;
}

} // namespace

int main()
{
	DPI_Context ctx;
	check(DPI_Init(ctx) == DPI_SUCCESS, "DPI_Init");
	check(DPI_Create_Buffer("sa", 0, ctx) == DPI_SUCCESS, "create append buffer sa");
	check(DPI_Create_Buffer("sb", 0, ctx) == DPI_SUCCESS, "create append buffer sb");
	dpi::BufferOptions region;
	region.kind = dpi::BufferKind::region;
	region.region_size = 4096;
	check(DPI_Create_Buffer("ra", 0, ctx, region) == DPI_SUCCESS, "create region ra");
	check(DPI_Create_Buffer("rb", 0, ctx, region) == DPI_SUCCESS, "create region rb");

	const char scatter[] = "scatter-Ascatter-B";
	check(DPI_Scatter({"sa", "sb"}, scatter, std::strlen(scatter), ctx) == DPI_SUCCESS, "DPI_Scatter");
	check(DPI_Flush_Buffer("sa", ctx) == DPI_SUCCESS && DPI_Flush_Buffer("sb") == DPI_SUCCESS, "flush");

	check(DPI_Write("ra", 100, "region-A", 8, ctx) == DPI_SUCCESS, "DPI_Write ra");
	check(DPI_Write("rb", 100, "region-B", 8, ctx) == DPI_SUCCESS, "DPI_Write rb");
	char one[8] = {};
	check(DPI_Read("rb", 100, one, 8, ctx) == DPI_SUCCESS && std::memcmp(one, "region-B", 8) == 0, "DPI_Read rb");
	std::vector<char> both(16);
	check(DPI_Gather({"ra", "rb"}, 100, both.data(), 8, ctx) == DPI_SUCCESS &&
	              std::memcmp(both.data(), "region-Aregion-B", 16) == 0,
	      "DPI_Gather");

	check(DPI_Read("ra", 4090, one, 8, ctx) == DPI_ERR_OUT_OF_BOUNDS,
	      "read past the region -> DPI_ERR_OUT_OF_BOUNDS");
	check(std::strstr(DPI_Last_Error(), "8 bytes at offset 4090 of region 'ra' (4096 bytes)") != nullptr,
	      "out-of-bounds message");
	check(DPI_Append("nosuch", "x", 1, ctx) == DPI_ERR_UNKNOWN_BUFFER, "append to unknown buffer");
	check(DPI_Read("sa", 0, one, 1, ctx) == DPI_ERR_WRONG_KIND,
	      "DPI_Read on an append buffer -> DPI_ERR_WRONG_KIND");
	std::vector<char> huge((1U << 20) + 1);
	check(DPI_Append("sa", huge.data(), huge.size(), ctx) == DPI_ERR_TOO_LARGE, "append above segment size");
	check(DPI_Finalize(ctx) == DPI_SUCCESS, "DPI_Finalize");
	check(DPI_Append("sa", "x", 1, ctx) == DPI_ERR_NOT_INITIALIZED, "append after DPI_Finalize");
	std::printf("%d failures\n", failures);
	return failures ? 1 : 0;
}
