// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The consumer of an append buffer hosted here (dpi::Consumer): reads
// records in place, round-robin over the sources, and returns credits.
#pragma once

#include <dpi/dpi.hpp>

#include <memory>

namespace dpi::detail
{

class Runtime;
struct Buffer;

// `b` was claimed for this consumer (BufferTable::claim_consumer).
std::unique_ptr<Consumer> make_consumer(std::shared_ptr<Runtime> rt, std::shared_ptr<Buffer> b);

} // namespace dpi::detail
