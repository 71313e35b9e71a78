// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// libdpi_flows: DPI flows (DPI paper §4) on top of the libdpi memory API.
//
// A flow moves tuples from sources to a fixed set of targets R.  Each injected
// tuple t is mapped to a key k = F_group(t), and delivered to every target in
// F_dist(k).  Optional map pipelines and a reducer run at the source or at the
// target; optional acknowledgements flow back to the source that injected the
// tuple and are aggregated there (quorum of k targets).  A hint chooses the
// transport behaviour: bandwidth (tuples batched into large messages, made
// visible on segment fill or close) or latency (one message and one flush per
// tuple).
//
// Delivery: each target pulls tuples with an iterator; the tuples of one source
// reach each target in injection order (checked with per-(source, target)
// sequence numbers); a finite flow ends once every expected source has
// closed; a long-lived flow (sources == 0) serves a stream; a full target ring
// blocks the source (backpressure), nothing is dropped.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace dpi
{
class Node;
}

namespace dpi::flow
{

using View = std::span<const std::byte>;
using Bytes = std::vector<std::byte>;
using Millis = std::chrono::milliseconds;

// Errors are dpi::Error (from <dpi/dpi.hpp>) with Errc::invalid_argument for a
// bad flow definition and Errc::protocol for a corrupt, reordered, lost or
// forged message.

// A 64-bit mixer (splitmix64 finalizer) used by Dist::hash.
uint64_t mix64(uint64_t x) noexcept;

// ---------------------------------------------------------------------------
// F_dist: key -> set of target indices (0..R-1).
class Dist
{
public:
	using Fn = std::function<void(uint64_t key, size_t ntargets, std::vector<uint32_t> &out)>;
	// Exactly one target: mix64(key) mod R.
	static Dist hash();
	// Range partitioning: `splits` are R-1 ascending split points; target i
	// receives keys in [splits[i-1], splits[i]).
	static Dist range(std::vector<uint64_t> splits);
	// Every target.
	static Dist broadcast();
	// Keys for which `keep` is false go nowhere (the empty set); the others are
	// routed by `then`.
	static Dist filter(std::function<bool(uint64_t)> keep, const Dist &then = hash());
	// Any function; its answers are checked (index < R, no duplicates).
	static Dist user(Fn fn);

	// Clears `out` and fills it with the targets of `key`.
	void targets(uint64_t key, size_t ntargets, std::vector<uint32_t> &out) const;
	// Throws invalid_argument if this function cannot serve R targets.
	void validate(size_t ntargets) const;
	[[nodiscard]] const std::string &name() const noexcept { return name_; }

private:
	Dist(std::string name, Fn fn, std::vector<uint64_t> splits = {});
	std::string name_;
	Fn fn_;
	std::vector<uint64_t> splits_;
};

// ---------------------------------------------------------------------------
// Reducers.  A reduced tuple contributes (key, value) with key = F_group(t) and
// value = ReduceSpec::value(t).  One Aggregate holds everything SUM, COUNT,
// MIN, MAX and AVG need, so partial aggregates merge exactly.
enum class ReduceOp { sum, count, min, max, avg };
const char *reduce_name(ReduceOp op) noexcept;

struct Aggregate {
	uint64_t key = 0;
	int64_t count = 0;
	int64_t sum = 0;
	int64_t min = INT64_MAX;
	int64_t max = INT64_MIN;

	void add(int64_t v) noexcept;
	void merge(const Aggregate &o) noexcept;
	[[nodiscard]] double value(ReduceOp op) const noexcept;
	static constexpr size_t wire_size = 40;
	void encode(std::byte *out) const noexcept;
	static Aggregate decode(const std::byte *in) noexcept;
	bool operator==(const Aggregate &) const = default;
};

// A hash table of aggregates by key.
class Aggregator
{
public:
	void add(uint64_t key, int64_t v);
	void merge(const Aggregate &a);
	[[nodiscard]] size_t size() const noexcept { return table_.size(); }
	// All aggregates sorted by key; the table is emptied.
	std::vector<Aggregate> drain();
	// Removes and returns the `n` aggregates with the lowest counts (the cold
	// keys), sorted by key, so hot keys stay resident and keep aggregating.
	std::vector<Aggregate> evict_coldest(size_t n);
	// A copy, sorted by key.
	[[nodiscard]] std::vector<Aggregate> snapshot() const;

private:
	std::unordered_map<uint64_t, Aggregate> table_;
};

enum class Placement { source, target };

struct ReduceSpec {
	ReduceOp op = ReduceOp::sum;
	std::function<int64_t(View)> value; // required
	// source: eager partial aggregation at each source (when the table holds
	// `partial_capacity` keys, its coldest half is sent as partial aggregates;
	// everything is sent at close), merged lazily at the target.  target: raw tuples travel, the target
	// aggregates.
	Placement where = Placement::source;
	size_t partial_capacity = 1U << 16;
};

// ---------------------------------------------------------------------------
// Codecs: invertible byte transforms (compression, authenticated encryption).
class Codec
{
public:
	virtual ~Codec() = default;
	// `ad` is authenticated but not encrypted (used by AEAD only).
	virtual void encode(View in, Bytes &out, View ad) const = 0;
	// Throws dpi::Error(protocol) on corrupt or forged input.
	virtual void decode(View in, Bytes &out, View ad) const = 0;
	[[nodiscard]] virtual const char *name() const noexcept = 0;
};
std::shared_ptr<const Codec> lz4_codec();
std::shared_ptr<const Codec> zstd_codec(int level = 3);
// XChaCha20-Poly1305 (libsodium); `key` must be 32 bytes.  Output is
// nonce(24) | ciphertext | tag(16).
std::shared_ptr<const Codec> aead_codec(View key);
constexpr size_t aead_key_size = 32;

// ---------------------------------------------------------------------------
// F_map: one tuple in, one tuple out (or none: return false to drop it).
struct Map {
	using Fn = std::function<bool(View in, Bytes &out)>;
	std::string name;
	Fn fn;
	Placement where = Placement::source;

	// Keeps the byte ranges {offset, length} of the tuple, concatenated.
	static Map projection(std::vector<std::pair<size_t, size_t>> fields, Placement where = Placement::source);
	// Per-tuple codec application.
	static Map encode(std::shared_ptr<const Codec> c, Placement where = Placement::source);
	static Map decode(std::shared_ptr<const Codec> c, Placement where = Placement::target);
	static Map user(std::string name, Fn fn, Placement where = Placement::source);
};

// ---------------------------------------------------------------------------
enum class Hint { bandwidth, latency };

struct AckSpec {
	bool enabled = false;
	// A tuple counts as acknowledged once min(quorum, |F_dist|) of its
	// targets acknowledged it; 0 means all of them.
	uint32_t quorum = 0;
	// true: a target acknowledges a tuple when its iterator hands it out
	// (sent after the last tuple of each message); false: the application
	// calls Target::ack() (e.g. after making the tuple durable).
	bool automatic = true;
	// F_ack (optional): a user-defined acknowledgement key a = key(t).  A
	// target sends back, with each acknowledgement, the keys of the tuples it
	// acknowledges (with how many tuples carried each key); the source that
	// injected them aggregates them per key over the targets: a key counts as
	// acknowledged once `key_quorum` distinct targets reported it (0 = every
	// target of the flow).  Works with automatic and manual acks.
	std::function<uint64_t(View)> key;
	uint32_t key_quorum = 1;
};

// Per-key acknowledgement state at a source (AckSpec::key).
struct KeyAck {
	uint32_t targets = 0; // distinct targets that reported the key
	uint64_t tuples = 0;  // tuple acknowledgements carrying the key, summed over targets
	bool acked = false;   // targets >= the key quorum
};

// What a target does when a source vanishes without closing (its process
// crashed or its connection broke): with `fail`, next()/results() throw
// Errc::connection_lost naming the source (a finite flow cannot complete);
// with `end`, the source counts as ended (its tuples flushed before the crash
// are delivered, the rest is lost) and Target::crashed() lists it.
enum class OnSourceCrash { fail, end };

struct FlowSpec {
	std::string name;                    // 1..40 bytes, [A-Za-z0-9_.-]
	std::vector<int> targets;            // R: node ids, fixed
	size_t sources = 0;                  // expected sources; 0 = long-lived (never ends)
	size_t tuple_size = 0;               // 0 = variable-size tuples
	std::function<uint64_t(View)> group; // F_group; default: first 8 bytes, little endian
	Dist dist = Dist::hash();
	std::vector<Map> maps; // applied in order, the source ones before routing
	std::optional<ReduceSpec> reduce;
	// Whole-message codecs, applied in order at the source and undone in reverse
	// at the target (e.g. zstd then AEAD).  The header is authenticated.
	std::vector<std::shared_ptr<const Codec>> codecs;
	AckSpec ack;
	// A target whose connection breaks (Errc::connection_lost/unreachable) is
	// dropped by each source instead of failing it: its tuples are skipped and
	// never acknowledged, so quorum acks tell what the survivors hold.
	bool tolerate_target_loss = false;
	OnSourceCrash on_source_crash = OnSourceCrash::fail;
	Hint hint = Hint::bandwidth;
	size_t batch_bytes = 32U << 10;   // bandwidth hint: message size
	size_t segment_size = 256U << 10; // transport ring per (source, target)
	uint32_t segments = 8;

	// Throws invalid_argument with the reason.
	void validate() const;
};

// ---------------------------------------------------------------------------
// Transports.  A channel is a named many-source inbox owned by one node.
struct TransportStats {
	uint64_t messages = 0;       // messages sent
	uint64_t flushes = 0;        // explicit flushes (each is a visibility round trip on DPI)
	uint64_t bytes = 0;          // message bytes sent
	uint64_t stalls = 0;         // sends that waited for ring space (backpressure)
	uint64_t dpi_posted_wrs = 0; // libdpi Stats of the node (DPI transport only)
	uint64_t dpi_segments = 0;
	uint64_t dpi_appends = 0;
};

class Sink
{
public:
	virtual ~Sink() = default;
	virtual void send(View msg) = 0; // blocks while the channel is full
	virtual void flush() = 0;
	// Flushes, then ends the channel.  A flow's close calls only this, for
	// all its targets at once (one thread per sink).
	virtual void close() = 0;
};

struct InMessage {
	int source_node = -1;
	Bytes data;
	// The transport's id of the sending sink (a libdpi ring; ids of local
	// in-process sinks have bit 32 set).  Stable for the sink's life.
	uint64_t sink = 0;
	// Set (with `data` empty) once, when sink `sink` vanished without closing,
	// after everything it made visible was delivered.
	bool aborted = false;
	std::string reason;
};

class Inbox
{
public:
	virtual ~Inbox() = default;
	virtual std::optional<InMessage> next(Millis wait) = 0;
};

class Transport
{
public:
	virtual ~Transport() = default;
	[[nodiscard]] virtual int node_id() const noexcept = 0;
	// Creates channel `name` on `owner` (idempotent).  `segment_size` x
	// `segments` bounds what may be in flight from one source.
	virtual void create(const std::string &name, int owner, size_t segment_size, uint32_t segments) = 0;
	virtual std::unique_ptr<Sink> sink(const std::string &name, int owner) = 0;
	virtual std::unique_ptr<Inbox> inbox(const std::string &name) = 0;
	[[nodiscard]] virtual TransportStats stats() const = 0;
};

// In-process transport: every "node" is an id on one hub; channels are bounded
// queues (capacity = segments messages per source), so backpressure is real.
class MemHub;
std::shared_ptr<MemHub> mem_hub();
std::shared_ptr<Transport> mem_transport(std::shared_ptr<MemHub> hub, int node_id);
// Simulates the crash of `node_id`: its channels stop accepting messages and
// every sink to them fails with Errc::connection_lost.
void mem_kill(const std::shared_ptr<MemHub> &hub, int node_id);
// Simulates a crash of `node_id` as a sender: every sink it opened and did not
// close is aborted (its inboxes get an `aborted` message after its queued
// messages) and fails from then on; its own channels die as with mem_kill.
void mem_crash(const std::shared_ptr<MemHub> &hub, int node_id);

// libdpi transport: a channel is an append buffer on its owner; every source
// is a libdpi Appender (one ring), the inbox is the owner's Consumer.  A
// source on the owner's own node (which libdpi does not allow to append to
// itself) uses an in-process queue that the inbox merges.
std::shared_ptr<Transport> dpi_transport(std::shared_ptr<dpi::Node> node);

// ---------------------------------------------------------------------------
// Wire format of one message (all little endian), 32-byte header:
//   u32 magic 'DFL1' | u8 type | u8 flags | u16 header version (1)
//   u32 source id    | i32 source node
//   u64 first seq    (per (source, target) sequence number of the first tuple)
//   u32 count        | u32 payload bytes
enum class MsgType : uint8_t { data = 1, partial = 2, end = 3, ack = 4 };
struct MsgHeader {
	MsgType type = MsgType::data;
	uint8_t flags = 0;
	uint32_t source = 0;
	int32_t source_node = -1;
	uint64_t first_seq = 0;
	uint32_t count = 0;
	uint32_t payload = 0;
	static constexpr size_t size = 32;
	static constexpr uint32_t magic = 0x314c4644; // "DFL1"
	void encode(std::byte *out) const noexcept;
	// Throws protocol on a bad magic/version/type or a payload length that
	// does not match `total`.
	static MsgHeader decode(View msg);
};

// Tuple packing inside a data payload: fixed size (concatenated) or variable
// size (u32 length + bytes).
void pack_tuple(Bytes &out, View t, size_t tuple_size);
// Splits a payload into `count` tuples; throws protocol if it does not parse.
std::vector<View> unpack_tuples(View payload, uint32_t count, size_t tuple_size);

// Acknowledgement bookkeeping at a source: global injection sequence numbers,
// their target sets, cumulative per-target acknowledgements, quorum.
class AckTracker
{
public:
	AckTracker(size_t ntargets, uint32_t quorum);
	// Registers the next tuple (global seq = return value) routed to `dests`.
	uint64_t sent(std::span<const uint32_t> dests);
	// Target `t` has everything routed to it with per-target seq < upto.
	// Throws protocol if it acknowledges more than was sent.
	void acked(uint32_t t, uint64_t upto);
	// Every tuple with global seq < watermark() is acknowledged.
	[[nodiscard]] uint64_t watermark() const noexcept { return watermark_; }
	[[nodiscard]] bool is_acked(uint64_t g) const;
	[[nodiscard]] uint64_t sent_count() const noexcept { return next_; }

private:
	struct Entry {
		uint32_t needed = 0;
		uint32_t got = 0;
	};
	size_t ntargets_;
	uint32_t quorum_;
	uint64_t next_ = 0;
	uint64_t watermark_ = 0;
	std::deque<Entry> entries_; // global seqs [watermark_, next_)
	struct PerTarget {
		uint64_t acked = 0;          // per-target seqs < acked are acknowledged
		std::deque<uint64_t> global; // global seqs of per-target seqs [acked, ...)
	};
	std::vector<PerTarget> targets_;
};

// Per-source order check at a target.
class OrderCheck
{
public:
	// Throws protocol unless `first` continues `source`'s sequence exactly.
	void accept(uint32_t source, uint64_t first, uint32_t count);
	[[nodiscard]] uint64_t expected(uint32_t source) const;

private:
	std::map<uint32_t, uint64_t> next_;
};

// ---------------------------------------------------------------------------
struct FlowStats {
	uint64_t tuples_in = 0;   // pushed by the application
	uint64_t tuples_sent = 0; // tuple copies sent (after filter/replication/reduce)
	uint64_t partials_sent = 0;
	uint64_t messages = 0;
	uint64_t flushes = 0;
	uint64_t payload_bytes = 0; // after codecs
	uint64_t raw_bytes = 0;     // before codecs
	uint64_t targets_lost = 0;  // with tolerate_target_loss
};

// One source of a flow.  Not thread-safe (one Source per thread).
class Source
{
public:
	// `id` must be unique among the flow's sources (e.g. the node id).
	static std::unique_ptr<Source> open(std::shared_ptr<Transport> tr, FlowSpec spec, uint32_t id);
	virtual ~Source() = default;
	// Injects one tuple; returns its global sequence number (for acks).
	virtual uint64_t push(View tuple) = 0;
	// Sends what is batched and makes it visible at the targets.
	virtual void flush() = 0;
	// Flushes partial aggregates and batches, tells every target this source
	// ended.  The destructor closes too (swallowing errors).
	virtual void close() = 0;
	// Acknowledgements (FlowSpec::ack): tuples [0, acked()) are acknowledged.
	[[nodiscard]] virtual uint64_t acked() const = 0;
	virtual bool wait_acked(uint64_t n, Millis timeout) = 0;
	// User-defined ack keys (AckSpec::key): the aggregated state of `key`,
	// and a wait until it reached its quorum.
	[[nodiscard]] virtual KeyAck key_ack(uint64_t key) const = 0;
	virtual bool wait_key(uint64_t key, Millis timeout) = 0;
	// Number of distinct keys that reached their quorum.
	[[nodiscard]] virtual size_t keys_acked() const = 0;
	[[nodiscard]] virtual FlowStats stats() const = 0;
};

struct Delivered {
	uint32_t source = 0;
	int source_node = -1;
	uint64_t seq = 0; // per (source, target) sequence number
	View data;        // valid until the next call to next()
};

// One target of a flow: a pull iterator over delivered tuples.
class Target
{
public:
	static std::unique_ptr<Target> open(std::shared_ptr<Transport> tr, FlowSpec spec, size_t index);
	virtual ~Target() = default;
	// The next tuple; nullopt when nothing came within `wait` or the flow ended.
	virtual std::optional<Delivered> next(Millis wait) = 0;
	// Every expected source ended and everything was delivered.
	[[nodiscard]] virtual bool ended() const = 0;
	// With a reducer: consumes the flow up to its end (or `wait`) and returns
	// the merged aggregates sorted by key.  Throws timeout if it did not end.
	virtual std::vector<Aggregate> results(Millis wait) = 0;
	// Manual acknowledgement (AckSpec::automatic == false): everything of
	// `source` with per-target seq < upto.
	virtual void ack(uint32_t source, uint64_t upto) = 0;
	[[nodiscard]] virtual FlowStats stats() const = 0;
	// Sources that vanished without closing (OnSourceCrash::end).
	struct Crashed {
		uint32_t source = UINT32_MAX; // UINT32_MAX: crashed before sending anything
		int node = -1;
		uint64_t delivered = 0; // its tuples received before the crash
		std::string reason;
	};
	[[nodiscard]] virtual std::vector<Crashed> crashed() const = 0;

	// Range-for support: blocks until the next tuple or the end of the flow.
	class iterator
	{
	public:
		iterator() = default;
		explicit iterator(Target *t) : t_(t) { advance(); }
		const Delivered &operator*() const { return cur_; }
		const Delivered *operator->() const { return &cur_; }
		iterator &operator++()
		{
			advance();
			return *this;
		}
		bool operator==(const iterator &o) const { return t_ == o.t_; }

	private:
		void advance();
		Target *t_ = nullptr;
		Delivered cur_;
	};
	iterator begin() { return iterator(this); }
	iterator end() { return {}; }
};

} // namespace dpi::flow
