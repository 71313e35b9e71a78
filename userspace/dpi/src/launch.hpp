// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Internal: the PMIx side of launch_from_env (pmix.cpp).
#pragma once

#include <dpi/dpi.hpp>

namespace dpi::detail
{

// PMIx_Init, rank and job size, this rank's address (local_rdma_address)
// published and every rank's fetched after a collecting fence.  Throws
// Errc::spec_error naming what is missing; without PMIx support built in,
// says so.
Launch pmix_launch();

// The address this process serves on: $DPI_ADDR, or the first IP address
// (IPv4 first) that rdma_cm binds to an RDMA device ($DPI_DEVICE, or any).
// With both $DPI_ADDR and $DPI_DEVICE set, no RDMA device is looked at (an
// address-only exchange, e.g. the host test).  Returns {host, device}.
std::pair<std::string, std::string> local_rdma_address();

} // namespace dpi::detail
