// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// libdpi: the DPI memory API (remote buffers, many-source append, read/write,
// scatter/gather) over RDMA verbs, connected through rdma_cm only, so it runs
// on iWARP (swiwarp, upstream siw) and RoCE (rxe) alike.  No write-with-
// immediate; remote atomics only on the optional shared-log append path,
// and only where both devices support them (AppendMode).
//
// This is the idiomatic C++ layer (namespace dpi).  Errors are reported by
// throwing dpi::Error, which carries a dpi::Errc code and a readable message.
// The paper's C-style functions (DPI_Init, DPI_Append, ...) live in
// <dpi/dpi.h> and turn these exceptions into integer codes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dpi
{

// Error codes.  The numeric values are the DPI_* integer codes of <dpi/dpi.h>.
enum class Errc : int {
	ok = 0,
	not_initialized = 1,  // context used before DPI_Init or after DPI_Finalize
	invalid_argument = 2, // bad name, size, option, node id ...
	spec_error = 3,       // the cluster spec is missing or malformed
	unknown_buffer = 4,   // no buffer of that name exists (directory or owner)
	wrong_kind = 5,       // e.g. DPI_Read on an append buffer
	too_large = 6,        // an append bigger than one segment can hold
	out_of_bounds = 7,    // read/write beyond a region
	unreachable = 8,      // the node could not be connected
	connection_lost = 9,  // an established connection broke
	timeout = 10,         // an operation gave up waiting
	resources = 11,       // out of memory, queue space, rings
	protocol = 12,        // a peer sent something that makes no sense
	system = 13,          // a verbs/rdma_cm/OS call failed
	closed = 14,          // the appender or buffer was already closed
	not_local = 15,       // consuming a buffer owned by another node
};

// The canonical short description of a code ("unknown buffer").
const char *errc_message(Errc code) noexcept;
// The enumerator's name ("unknown_buffer").
const char *errc_name(Errc code) noexcept;

class Error : public std::runtime_error
{
public:
	// what() is "<errc_message(code)>: <detail>"
	Error(Errc code, const std::string &detail);
	[[nodiscard]] Errc code() const noexcept { return code_; }
	[[nodiscard]] const std::string &detail() const noexcept { return detail_; }

private:
	Errc code_;
	std::string detail_;
};

// One node of the cluster spec.
struct NodeAddress {
	int id = -1;
	std::string host;     // IPv4/IPv6 literal or name
	uint16_t port = 7471; // rdma_cm port
	std::string device;   // optional RDMA device name the address must map to
};

// The cluster spec maps node ids to addresses.  Text format, one entry per line:
//   # comment
//   node <id> <host>[:<port>] [device=<name>]
//   directory <id>           (the node holding the buffer directory; default:
//                             the lowest id)
class ClusterSpec
{
public:
	// Throws Error(spec_error) with "origin:line: reason" on malformed text.
	static ClusterSpec parse(std::string_view text, std::string_view origin = "spec");
	static ClusterSpec load(const std::string &path);
	// Uses $DPI_CLUSTER (a path).  Throws spec_error if unset or unreadable.
	static ClusterSpec from_env();

	[[nodiscard]] const NodeAddress *find(int id) const noexcept;
	[[nodiscard]] const NodeAddress &at(int id) const; // throws invalid_argument
	[[nodiscard]] const std::vector<NodeAddress> &nodes() const noexcept { return nodes_; }
	[[nodiscard]] int directory_node() const noexcept { return directory_; }

private:
	std::vector<NodeAddress> nodes_;
	int directory_ = -1;
};

// How a process finds its cluster (Documentation/dpi.md, "Finding the
// cluster"): a spec file ($DPI_CLUSTER or an explicit path), or, without one,
// the PMIx server of the launcher that started it (Open MPI's mpirun): node id
// = PMIx rank, one node per rank, addresses exchanged through PMIx.
enum class ClusterSource { spec_file, pmix };

// The decision alone: a spec file wins; else PMIx when the launcher's
// environment is there; else Errc::spec_error "no PMIx server (and
// DPI_CLUSTER is not set)".
ClusterSource choose_cluster_source(bool spec_given, bool pmix_env);

// True when the environment names a PMIx server's job ($PMIX_NAMESPACE or
// $PMIX_RANK, as Open MPI 4.1's mpirun and Slurm's srun --mpi=pmix set).
bool pmix_environment();

// True when this libdpi was built with PMIx (libpmix-dev).
bool pmix_built() noexcept;

// The PMIx value a rank publishes under pmix_address_key: one spec line,
// "node <rank> <host>:<port> [device=<name>]" (IPv6 hosts in brackets).
inline constexpr const char *pmix_address_key = "dpi.node.v1";
std::string encode_node_address(const NodeAddress &a);
// Parses what rank `rank` published; throws spec_error naming the rank on a
// malformed value or one that claims another id.
NodeAddress decode_node_address(std::string_view value, int rank);
// A spec (directory = lowest id) from the decoded addresses; origin names the
// source in error messages.
ClusterSpec spec_from_addresses(const std::vector<NodeAddress> &nodes, std::string_view origin);

struct Launch {
	ClusterSpec spec;
	int node_id = -1; // -1: anonymous client (spec file without a node id)
	ClusterSource source = ClusterSource::spec_file;
	std::string origin; // the spec path, or "PMIx namespace <ns>"
	// Keeps the PMIx client alive; PMIx_Finalize runs when the last copy goes
	// (Options::launcher hands it to the Node).
	std::shared_ptr<void> session;
};

// Finds the cluster: spec_path (or $DPI_CLUSTER when empty) with node_id (or
// $DPI_NODE_ID when node_id is unset) if a spec is given; otherwise PMIx.
// With $DPI_VERBOSE set (not "0") prints one line naming the source on stderr.
Launch launch_from_env(const std::string &spec_path = {}, std::optional<int> node_id = std::nullopt);

enum class BufferKind : uint32_t { append = 1, region = 2 };

// How the sources of an append buffer place their records.
enum class AppendMode : uint32_t {
	// Each source writes into a private ring of segments; no atomics.
	rings = 0,
	// One log per buffer: a source reserves its record's bytes with a remote
	// fetch-and-add on the log's tail (RFC 7306 / IB atomics), writes the
	// record there and commits it.  Where the owner's or the source's device
	// has no atomics, that source falls back to a ring (logged, not an error).
	shared = 1,
	// The library picks: rings, as measured (Documentation/benchmarks-dpi.md,
	// "Shared log against rings").
	automatic = 2,
};

struct BufferOptions {
	BufferKind kind = BufferKind::append;
	// append buffers: each source gets a private ring of `segments` segments of
	// `segment_size` bytes in the owner's memory.  One append (record) must fit
	// in one segment (segment_size - 8 bytes of framing).
	size_t segment_size = 1U << 20;
	uint32_t segments = 8;
	// region buffers: a flat, zero-filled array for DPI_Read/DPI_Write.
	size_t region_size = 0;
	// append buffers: rings, or a shared log of segment_size * segments bytes
	// (one record at most min(segment_size, log/2) - 8 bytes).
	AppendMode append_mode = AppendMode::automatic;
};

struct Options {
	ClusterSpec spec;
	// This process's node id in the spec, or -1 for an anonymous client (it can
	// use buffers but not host them).  DPI_Init takes it from $DPI_NODE_ID.
	int node_id = -1;
	std::chrono::milliseconds connect_timeout{5000};
	// How long an append waits for ring space (backpressure) or a reply
	// before failing with Errc::timeout.  0 = wait forever.
	std::chrono::milliseconds op_timeout{0};
	// Copy-vs-register threshold.  0 = measure at init on the actual device.
	size_t critical_size = 0;
	// Held until the node stops: the launcher session the cluster came from
	// (Launch::session; PMIx_Finalize when the last holder goes).
	std::shared_ptr<void> launcher;
};

struct Stats {
	uint64_t appends = 0;
	uint64_t bytes_appended = 0;
	uint64_t copied_appends = 0;    // staged by memcpy into a pre-registered block
	uint64_t zero_copy_appends = 0; // registered in place (>= critical size)
	uint64_t segments_sealed = 0;
	uint64_t credit_stalls = 0; // times an appender waited for ring space
	uint64_t signaled_wrs = 0;
	uint64_t posted_wrs = 0;
	uint64_t shared_appends = 0;   // records placed by fetch-and-add in a shared log
	uint64_t shared_pads = 0;      // reservations that hit the log's end and were padded
	uint64_t shared_fallbacks = 0; // appenders that asked for the shared log but got a ring
};

class Node;
class Appender;
class Consumer;
class Region;

// One received record.  `data` points into the owner's ring memory and stays
// valid until the next call to Consumer::next()/poll().
struct Record {
	uint32_t source = 0;  // ring index within the buffer, in join order
	int source_node = -1; // the appending node's id (-1: anonymous)
	uint64_t index = 0;   // record number within that source, from 0
	std::span<const std::byte> data;
};

enum class SourceState { open, closed, aborted };

struct SourceInfo {
	uint32_t source = 0;
	int node = -1;
	SourceState state = SourceState::open;
	uint64_t records = 0; // consumed so far
	std::string reason;   // why it was aborted
};

// The per-process DPI runtime: the cluster spec, the connection pool (one
// rdma_cm connection per peer, created on first use and kept), the buffers
// this node hosts, and a progress thread.
class Node : public std::enable_shared_from_this<Node>
{
public:
	static std::shared_ptr<Node> start(Options opts);
	virtual ~Node() = default;
	Node(const Node &) = delete;
	Node &operator=(const Node &) = delete;

	[[nodiscard]] virtual int id() const noexcept = 0;
	[[nodiscard]] virtual const ClusterSpec &spec() const noexcept = 0;
	// The measured (or configured) copy-vs-register threshold; measured on the
	// first device this node touches.
	[[nodiscard]] virtual size_t critical_size() = 0;
	[[nodiscard]] virtual Stats stats() const = 0;

	// Creates the buffer on `owner` and records it in the buffer directory.
	// Creating an existing buffer of the same kind succeeds (it is shared).
	virtual void create_buffer(const std::string &name, int owner, const BufferOptions &opts) = 0;
	// Which node owns `name` (asks the directory).
	virtual int lookup(const std::string &name) = 0;
	// A new source for `name`: a private ring in the owner's memory.
	virtual std::unique_ptr<Appender> appender(const std::string &name) = 0;
	// Consume a buffer this node owns; waits up to `wait` for it to be created.
	virtual std::unique_ptr<Consumer> consumer(const std::string &name, std::chrono::milliseconds wait) = 0;
	virtual std::unique_ptr<Region> region(const std::string &name) = 0;
	// Stops the progress thread and closes every connection.
	virtual void shutdown() = 0;

protected:
	Node() = default;
};

// One source of one append buffer.  Appends are ordered; each append is one
// record.  Not thread-safe by itself: use one Appender per thread.
class Appender
{
public:
	virtual ~Appender() = default;
	// Copies or writes `data`; returns when the caller may reuse it.  Blocks
	// while the ring is full (backpressure).  Visible to the consumer after the
	// segment fills or after flush().
	virtual void append(std::span<const std::byte> data) = 0;
	// Makes everything appended so far visible to the owner's consumer.
	// Returns after the owner acknowledged it (one round trip) .
	virtual void flush() = 0;
	// flush() and mark this source finished.  The destructor closes too, but
	// swallows errors.
	virtual void close() = 0;
	[[nodiscard]] virtual size_t max_append() const noexcept = 0;
	[[nodiscard]] virtual const std::string &name() const noexcept = 0;
	// True when this source appends through the buffer's shared log.
	[[nodiscard]] virtual bool shared() const noexcept { return false; }
};

class Consumer
{
public:
	virtual ~Consumer() = default;
	// Next record from any source (round-robin over sources, each source in
	// order).  Waits up to `wait`; nullopt when nothing arrived in time.
	virtual std::optional<Record> next(std::chrono::milliseconds wait) = 0;
	std::optional<Record> poll() { return next(std::chrono::milliseconds(0)); }
	[[nodiscard]] virtual std::vector<SourceInfo> sources() const = 0;
	// True when at least `expected` sources joined, every joined source is
	// closed or aborted, and everything they flushed has been consumed.
	[[nodiscard]] virtual bool finished(size_t expected) const = 0;
	// Shared-log buffers: bytes skipped as holes (reservations never
	// committed, e.g. by a source that died holding one).  Each hole is also
	// reported on stderr.
	[[nodiscard]] virtual uint64_t hole_bytes() const { return 0; }
};

// A region buffer: random access with one-sided RDMA Read/Write.
class Region
{
public:
	virtual ~Region() = default;
	virtual void write(size_t offset, std::span<const std::byte> data) = 0;
	virtual void read(size_t offset, std::span<std::byte> out) = 0;
	[[nodiscard]] virtual size_t size() const noexcept = 0;
};

} // namespace dpi
