// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A region buffer (dpi::Region): RDMA Write/Read of a remote region, or
// memcpy when the region lives in this process.
#pragma once

#include <dpi/dpi.hpp>

#include <memory>
#include <string>

namespace dpi::detail
{

class Runtime;

std::unique_ptr<Region> make_region(std::shared_ptr<Runtime> rt, const std::string &name);

} // namespace dpi::detail
