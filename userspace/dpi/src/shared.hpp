// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Device-independent bookkeeping of a shared-log append buffer (the
// fetch-and-add path, Documentation/dpi.md "Append: shared log").
// Unit-tested on the host.
//
// The owner keeps one log of C bytes per buffer and a 64-bit tail word.  A
// source reserves the footprint of its record (8-byte header + data padded
// to 8, as in ring.hpp) with a remote fetch-and-add on the tail; the value
// it gets back is the record's position in an endless byte stream, the log
// offset is that position modulo C.  A record never spans the end of the
// log: a reservation that would is committed as a pad and the source
// reserves again.  The source RDMA-writes the record, then commits the range
// in a Send after the Writes.  The owner hands records out in position
// order, each only once everything before it was committed.
#pragma once

#include "ring.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>

namespace dpi::shared
{

// Where a reservation of `footprint` bytes at stream position `pos` lands.
struct Placement {
	size_t offset; // in the log
	bool pad;      // it would span the end: commit it as a pad, reserve again
};

constexpr Placement place(uint64_t pos, size_t footprint, size_t capacity)
{
	auto off = static_cast<size_t>(pos % capacity);
	return {off, off + footprint > capacity};
}

// A source may write [pos, pos + footprint) only once the consumer released
// everything up to pos + footprint - capacity.
constexpr bool may_write(uint64_t pos, size_t footprint, uint64_t consumed, size_t capacity)
{
	return pos + footprint <= consumed + capacity;
}

// The largest record a log of `capacity` bytes takes: its footprint must not
// exceed half the log, so that a pad and the retried reservation fit.
constexpr size_t max_record(size_t capacity, size_t seg_size)
{
	size_t half = (capacity / 2) & ~size_t{7};
	size_t by_log = half > ring::header_size ? half - ring::header_size : 0;
	size_t by_seg = ring::max_record(seg_size);
	return by_log < by_seg ? by_log : by_seg;
}

// One committed range, as the source announced it.
struct Entry {
	uint64_t length; // record data bytes; for a pad, the whole range's bytes
	bool pad;
	uint32_t source; // ring index of the source that committed it
	[[nodiscard]] uint64_t footprint() const { return pad ? length : ring::record_footprint(length); }
};

// The owner's view of the log.
class Reader
{
public:
	explicit Reader(size_t capacity) : capacity_(capacity) {}

	// A commit of [pos, pos + footprint) by `source`.  `tail` is the tail
	// word now: nothing beyond it was reserved.  Returns an error message,
	// or "" when accepted.
	std::string commit(uint64_t pos, uint64_t length, bool pad, uint32_t source, uint64_t tail)
	{
		Entry e{length, pad, source};
		uint64_t fp = e.footprint();
		std::string at = "range at " + std::to_string(pos) + " (+" + std::to_string(fp) + ")";
		if (pos % 8 || fp == 0 || fp % 8)
			return at + " is not 8-byte aligned or empty";
		if (pos < head_)
			return at + " lies before the consumer's position " + std::to_string(head_) +
			       " (committed twice, or after it was declared a hole)";
		if (pos + fp > tail || pos + fp < pos)
			return at + " was never reserved (tail is " + std::to_string(tail) + ")";
		Placement p = place(pos, static_cast<size_t>(fp), capacity_);
		if (pad && !p.pad)
			return at + " is a pad that does not reach the end of the log";
		if (!pad && p.pad)
			return at + " spans the end of the log";
		if (!pad && !may_write(pos, static_cast<size_t>(fp), head_, capacity_))
			return at + " overwrites unconsumed bytes (consumer at " + std::to_string(head_) + ")";
		auto next = committed_.lower_bound(pos);
		if (next != committed_.end() && next->first < pos + fp)
			return at + " overlaps a committed range at " + std::to_string(next->first);
		if (next != committed_.begin()) {
			auto prev = std::prev(next);
			if (prev->first + prev->second.footprint() > pos)
				return at + " overlaps a committed range at " + std::to_string(prev->first);
		}
		committed_.emplace(pos, e);
		return {};
	}

	// The committed entry at the consumer's position, if any.
	[[nodiscard]] std::optional<Entry> front() const
	{
		auto it = committed_.begin();
		if (it == committed_.end() || it->first != head_)
			return std::nullopt;
		return it->second;
	}
	[[nodiscard]] size_t front_offset() const { return static_cast<size_t>(head_ % capacity_); }
	// Consumes the front entry.
	void pop()
	{
		auto it = committed_.begin();
		head_ += it->second.footprint();
		committed_.erase(it);
	}
	// True when bytes before `tail` are reserved but the front is not
	// committed: someone holds the reservation at head().
	[[nodiscard]] bool gap(uint64_t tail) const { return head_ < tail && !front(); }
	// Declares [head, next committed range or tail) a hole and skips it;
	// returns its size in bytes.
	uint64_t skip_hole(uint64_t tail)
	{
		uint64_t to = committed_.empty() ? tail : committed_.begin()->first;
		if (to <= head_)
			return 0;
		uint64_t n = to - head_;
		head_ = to;
		return n;
	}
	[[nodiscard]] uint64_t head() const noexcept { return head_; }
	[[nodiscard]] size_t capacity() const noexcept { return capacity_; }
	[[nodiscard]] size_t pending() const noexcept { return committed_.size(); }

private:
	size_t capacity_;
	uint64_t head_ = 0;
	std::map<uint64_t, Entry> committed_;
};

// A commit message carries up to this many ranges, packed into Msg::text.
inline constexpr size_t commit_batch = 8;
// Every commit_window-th commit message of a source waits for the owner's
// ack, so at most that many are ever unprocessed (receives reserved per
// source).
inline constexpr uint32_t commit_window = 16;
inline constexpr uint64_t pad_bit = uint64_t{1} << 63;

struct Packed {
	uint64_t pos;
	uint64_t length_flags; // length | pad_bit
};
static_assert(sizeof(Packed) * commit_batch == 128, "commit ranges must fill Msg::text");

} // namespace dpi::shared
