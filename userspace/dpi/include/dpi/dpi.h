// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The DPI paper's memory API (Alonso et al., CIDR 2019, section 5), C-style:
// every function returns an int, DPI_SUCCESS (0) or one of the DPI_ERR_*
// codes below; DPI_Error_String(code) names it and DPI_Last_Error() gives
// the detailed message of the calling thread's last failure.  The paper's
// Listing 1 compiles as printed with `#include <dpi/dpi.h>` and
// `using namespace std;` (see examples/listing1.cpp).
//
// Environment read by DPI_Init(DPI_Context&):
//   DPI_CLUSTER   path of the cluster spec; unset, the launcher's PMIx
//                 server (mpirun) gives the cluster and the node id (= rank)
//   DPI_NODE_ID   this process's node id (unset: anonymous client)
//   DPI_ADDR, DPI_DEVICE, DPI_PORT, DPI_PMIX_TIMEOUT, DPI_VERBOSE: the PMIx
//                 case, Documentation/dpi.md "Finding the cluster"
//   DPI_TIMEOUT_MS  op timeout for backpressure waits and replies (0 = none)
//   DPI_CRITICAL_SIZE  force the copy-vs-register threshold (bytes)
#pragma once

#include <dpi/dpi.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

enum : int {
	DPI_SUCCESS = 0,
	DPI_ERR_NOT_INITIALIZED = static_cast<int>(dpi::Errc::not_initialized),
	DPI_ERR_INVALID_ARGUMENT = static_cast<int>(dpi::Errc::invalid_argument),
	DPI_ERR_SPEC = static_cast<int>(dpi::Errc::spec_error),
	DPI_ERR_UNKNOWN_BUFFER = static_cast<int>(dpi::Errc::unknown_buffer),
	DPI_ERR_WRONG_KIND = static_cast<int>(dpi::Errc::wrong_kind),
	DPI_ERR_TOO_LARGE = static_cast<int>(dpi::Errc::too_large),
	DPI_ERR_OUT_OF_BOUNDS = static_cast<int>(dpi::Errc::out_of_bounds),
	DPI_ERR_UNREACHABLE = static_cast<int>(dpi::Errc::unreachable),
	DPI_ERR_CONNECTION_LOST = static_cast<int>(dpi::Errc::connection_lost),
	DPI_ERR_TIMEOUT = static_cast<int>(dpi::Errc::timeout),
	DPI_ERR_RESOURCES = static_cast<int>(dpi::Errc::resources),
	DPI_ERR_PROTOCOL = static_cast<int>(dpi::Errc::protocol),
	DPI_ERR_SYSTEM = static_cast<int>(dpi::Errc::system),
	DPI_ERR_CLOSED = static_cast<int>(dpi::Errc::closed),
	DPI_ERR_NOT_LOCAL = static_cast<int>(dpi::Errc::not_local),
};

// A DPI context: one handle on the process-wide runtime (connection pool,
// hosted buffers) plus this context's sources.  Each (context, buffer) pair
// is one source of that buffer with its own private ring, so two contexts
// appending to the same buffer are two independently ordered sources.
// Destroying an initialized context finalizes it.
struct DPI_Context {
	DPI_Context() = default;
	DPI_Context(const DPI_Context &) = delete;
	DPI_Context &operator=(const DPI_Context &) = delete;
	~DPI_Context();

	std::shared_ptr<dpi::Node> node;
	std::mutex mu;
	std::map<std::string, std::unique_ptr<dpi::Appender>> appenders;
	std::map<std::string, std::unique_ptr<dpi::Region>> regions;
};

// Reads $DPI_CLUSTER / $DPI_NODE_ID, or without DPI_CLUSTER asks PMIx.
int DPI_Init(DPI_Context &context);
int DPI_Init(DPI_Context &context, const std::string &spec_path, int node_id);
int DPI_Init(DPI_Context &context, const dpi::Options &options);

// Creates an append buffer (default options) or, with options, any kind.
int DPI_Create_Buffer(const std::string &name, int node_id, DPI_Context &context);
int DPI_Create_Buffer(const std::string &name, int node_id, DPI_Context &context, const dpi::BufferOptions &options);

// Appends one record.  The buffer is found through the directory on first use.
int DPI_Append(const std::string &name, const void *data, size_t size, DPI_Context &context);

// Makes this process's appends to `name` visible at the owner, in every live
// context of the process (the paper's signature carries no context).
int DPI_Flush_Buffer(const std::string &name);
int DPI_Flush_Buffer(const std::string &name, DPI_Context &context);

// One-to-one access to a region buffer.
int DPI_Write(const std::string &name, size_t offset, const void *data, size_t size, DPI_Context &context);
int DPI_Read(const std::string &name, size_t offset, void *data, size_t size, DPI_Context &context);

// One-to-many: Scatter splits `data` into names.size() consecutive parts
// (the last takes the remainder) and appends part i to buffer names[i].
// Gather reads `size_each` bytes at `offset` of region names[i] into
// data + i * size_each.
int DPI_Scatter(const std::vector<std::string> &names, const void *data, size_t size, DPI_Context &context);
int DPI_Gather(const std::vector<std::string> &names, size_t offset, void *data, size_t size_each,
               DPI_Context &context);

// Flushes and closes this context's sources; the runtime stops when its last
// context is finalized.
int DPI_Finalize(DPI_Context &context);

const char *DPI_Error_String(int code);
const char *DPI_Last_Error();
