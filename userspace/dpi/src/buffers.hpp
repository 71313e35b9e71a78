// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// What this node hosts: its buffers (append buffers with one ring per source,
// and regions), the buffer directory if this node is the directory, and the
// cache of owners this process has looked up.  One lock guards all of it,
// including the state of every Ring and Buffer: the consumer scans rings
// while the progress thread announces segments into them.
#pragma once

#include "ring.hpp"
#include "shared.hpp"
#include "util.hpp"
#include <dpi-internal/verbs.hpp>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace dpi::detail
{

class Conn;
struct Buffer;

// The owner's side of one source: its ring of segments in our memory.
// Fields other than the constant ones are guarded by the BufferTable lock.
struct Ring {
	Ring(size_t seg, uint32_t n) : rd(seg, n) {}

	uint64_t id = 0;
	uint32_t index = 0;
	int node = -1;
	std::weak_ptr<Conn> conn;
	MemPtr mem;
	MrPtr mr; // declared after mem: deregistered first
	ring::ReaderState rd;
	SourceState state = SourceState::open;
	std::string reason;
	uint64_t records = 0;
	// a source of the buffer's shared log (no ring memory of its own)
	bool shared = false;
	std::weak_ptr<Buffer> buffer;
};

// The shared log of an append buffer (shared.hpp), registered on the
// protection domain of the first source that uses it, and its tail word,
// which sources fetch-and-add.  The consumer's position is not published in
// memory for sources to RDMA-read: swiwarp sends Read Responses zero-copy
// from the registered pages, and a word that changes while TCP still holds
// them goes out with a wrong MPA CRC.  A source that needs room asks with a
// `room` request instead, answered when the consumer got there.
struct SharedLog {
	explicit SharedLog(size_t capacity) : rd(capacity) {}
	MemPtr mem;
	MemPtr ctl;
	MrPtr mr; // declared after mem and ctl: deregistered first
	MrPtr ctl_mr;
	struct Waiter {
		std::weak_ptr<Conn> conn;
		uint32_t req_id;
		uint64_t needed;
	};
	std::vector<Waiter> waiters; // room requests not answered yet
	shared::Reader rd;
	uint64_t hole_bytes = 0;
	uint64_t holes = 0;
	// the consumer's last record is popped on its next call (its data stays
	// valid until then)
	bool pop_pending = false;
	// when the current gap at rd.head() was first seen
	uint64_t gap_head = UINT64_MAX;
	Deadline gap_since{};
	uint64_t aborts_seen = 0; // sources aborted when the gap was first seen

	[[nodiscard]] uint64_t tail() const;
	// Moves the waiters the consumer's position satisfies to `out`.
	void take_satisfied(std::vector<Waiter> &out);
};

struct Buffer {
	std::string name;
	uint64_t id = 0;
	BufferOptions opts;
	std::vector<std::shared_ptr<Ring>> rings;
	MemPtr region;
	MrPtr region_mr; // declared after region: deregistered first
	bool has_consumer = false;
	std::unique_ptr<SharedLog> log; // made when the first source is granted it
	uint64_t aborted_sources = 0;
};

class BufferTable
{
public:
	explicit BufferTable(int node_id) : node_id_(node_id) {}

	struct Created {
		uint64_t handle;
		bool existed;
	};
	// Creates buffer `name` (a region is allocated and, when `pd` is given,
	// registered on it), or finds the one of the same kind.
	Created create(const std::string &name, const BufferOptions &opts, ibv_pd *pd);
	// The append buffer `name`; throws unknown_buffer / wrong_kind.
	[[nodiscard]] std::shared_ptr<Buffer> append_buffer(const std::string &name) const;
	// Makes `r` the next source of `b`.
	void add_ring(Buffer &b, const std::shared_ptr<Ring> &r);
	// Segment `seq` of `r` holds `len` bytes.  A bad announcement aborts the
	// source (`from` names the peer) and returns the error; "" when fine.
	std::string announce(Ring &r, uint64_t seq, uint64_t len, const std::string &from);
	// The source closed its ring.
	void close_ring(Ring &r);

	struct LogGrant {
		uint64_t addr;
		uint32_t rkey;
		uint64_t ctl_addr;
		uint32_t ctl_rkey;
		size_t capacity;
	};
	// The shared log of `b` for a source on `pd`: made and registered there on
	// first use; nullopt (and `why`) when it lives on another device.
	std::optional<LogGrant> share_log(Buffer &b, ibv_pd *pd, std::string &why);
	// Shared-log ranges committed by source `r`.  A bad commit aborts the
	// source and returns the error; "" when fine.
	std::string commit(Ring &r, const shared::Packed *ranges, size_t n, const std::string &from);
	// A room request of log source `r`: the consumer's position if it is at
	// `needed` already, else nullopt (the request is parked until it is).
	std::optional<uint64_t> room(Ring &r, const std::shared_ptr<Conn> &c, uint32_t req_id, uint64_t needed);
	// The sources' connection died: abort those rings still open.
	void abort_open(const std::vector<std::shared_ptr<Ring>> &rings, const std::string &reason);

	struct RegionInfo {
		uint64_t addr;
		uint32_t rkey;
		uint64_t size;
	};
	// Region `name` for a peer on `pd` (registered there on first use).
	RegionInfo open_region(const std::string &name, ibv_pd *pd);
	// Region `name` for this process's own use.
	[[nodiscard]] std::shared_ptr<Buffer> local_region(const std::string &name) const;

	// The directory: name -> owner node.
	[[nodiscard]] std::optional<int> directory_owner(const std::string &name) const;
	void enroll(const std::string &name, int node);
	// This process's cache of create/lookup results.
	[[nodiscard]] std::optional<int> cached_owner(const std::string &name) const;
	void remember_owner(const std::string &name, int node);

	// Waits up to `wait` for append buffer `name` and makes the caller its
	// one consumer.
	std::shared_ptr<Buffer> claim_consumer(const std::string &name, std::chrono::milliseconds wait);
	void release_consumer(Buffer &b);

	// For the consumer, which reads rings under the lock and sleeps on it.
	[[nodiscard]] std::unique_lock<std::mutex> lock() const { return std::unique_lock<std::mutex>(mu_); }
	std::cv_status wait_until(std::unique_lock<std::mutex> &g, Deadline deadline) const
	{
		return cv_.wait_until(g, deadline);
	}
	void notify() const { cv_.notify_all(); }

	// Drops every buffer (their memory is deregistered and freed).
	void clear();

private:
	// name -> owner node: the directory and this process's cache.
	using OwnerMap = std::map<std::string, int>;

	[[nodiscard]] std::string no_buffer(const std::string &name) const;
	// The owner of `name` in `owners` / set it (each takes mu_).
	[[nodiscard]] std::optional<int> owner_in(const OwnerMap &owners, const std::string &name) const;
	void set_owner(OwnerMap &owners, const std::string &name, int node);

	const int node_id_;
	mutable std::mutex mu_;
	mutable std::condition_variable cv_;
	std::map<std::string, std::shared_ptr<Buffer>> buffers_;
	OwnerMap directory_;
	OwnerMap known_owner_;
	uint64_t next_id_ = 1;
};

} // namespace dpi::detail
