// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A source of an append buffer (dpi::Appender): joins the owner's buffer,
// stages or registers records, RDMA-writes them into its ring and seals
// segments with `seg` Sends.
#pragma once

#include <dpi/dpi.hpp>

#include <memory>
#include <string>

namespace dpi::detail
{

class Runtime;

std::unique_ptr<Appender> make_appender(std::shared_ptr<Runtime> rt, std::string name);

} // namespace dpi::detail
