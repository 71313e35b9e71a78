// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Device-independent bookkeeping of one source's private ring: record
// framing inside a segment, the writer's segment/credit state machine and
// the consumer's in-order segment queue.  Unit-tested on the host.
//
// Ring of N segments of S bytes in the owner's registered memory.  Segment
// number `seq` (counting from 0 for the ring's lifetime) lives at slot
// seq % N.  A segment holds records, each an 8-byte header
// {u32 length, u32 magic} followed by the data, padded to 8 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <string>

namespace dpi::ring
{

inline constexpr uint32_t record_magic = 0x52435044; // "DPCR"
inline constexpr size_t header_size = 8;

struct RecordHeader {
	uint32_t length;
	uint32_t magic;
};
static_assert(sizeof(RecordHeader) == header_size);

constexpr size_t align8(size_t n)
{
	return (n + 7) & ~size_t{7};
}
constexpr size_t record_footprint(size_t len)
{
	return header_size + align8(len);
}
constexpr size_t max_record(size_t seg_size)
{
	return seg_size - header_size;
}

// Writer side.  The caller owns the actual memory; this only decides where
// things go and when segments open, seal and need credit.
class WriterState
{
public:
	WriterState(size_t seg_size, uint32_t nseg) : seg_size_(seg_size), nseg_(nseg), credits_(nseg) {}

	[[nodiscard]] bool segment_open() const noexcept { return open_; }
	[[nodiscard]] bool fits(size_t len) const noexcept
	{
		return open_ && offset_ + record_footprint(len) <= seg_size_;
	}
	[[nodiscard]] bool has_credit() const noexcept { return credits_ > 0; }
	// Takes one credit and opens segment next_seq().  Precondition: has_credit().
	void open_segment()
	{
		--credits_;
		open_ = true;
		offset_ = 0;
	}
	// Reserves room for a record; returns its offset in the segment.
	size_t place(size_t len)
	{
		size_t at = offset_;
		offset_ += record_footprint(len);
		return at;
	}
	// Closes the open segment; returns its used length.
	size_t seal()
	{
		size_t used = offset_;
		open_ = false;
		offset_ = 0;
		++seq_;
		return used;
	}
	void add_credits(uint64_t n) { credits_ += n; }
	[[nodiscard]] uint64_t credits() const noexcept { return credits_; }
	[[nodiscard]] uint64_t seq() const noexcept { return seq_; } // of the open (or next) segment
	[[nodiscard]] size_t offset() const noexcept { return offset_; }
	[[nodiscard]] size_t slot_offset(uint64_t seq) const noexcept { return (seq % nseg_) * seg_size_; }
	[[nodiscard]] size_t segment_size() const noexcept { return seg_size_; }
	[[nodiscard]] uint32_t segments() const noexcept { return nseg_; }
	[[nodiscard]] bool full() const noexcept { return offset_ + header_size > seg_size_; }

private:
	size_t seg_size_;
	uint32_t nseg_;
	uint64_t credits_;
	uint64_t seq_ = 0;
	size_t offset_ = 0;
	bool open_ = false;
};

inline void write_header(std::byte *at, size_t len)
{
	RecordHeader h{static_cast<uint32_t>(len), record_magic};
	std::memcpy(at, &h, sizeof h);
}

// Parses one record at `offset` of a segment of `used` bytes.  Returns the
// data span and advances offset, or nullopt at the end; sets `error` (and
// returns nullopt) on a corrupt header.
inline std::optional<std::span<const std::byte>> next_record(const std::byte *seg, size_t used, size_t &offset,
                                                             std::string &error)
{
	if (offset >= used)
		return std::nullopt;
	if (used - offset < header_size) {
		error = "truncated record header at offset " + std::to_string(offset);
		return std::nullopt;
	}
	RecordHeader h{};
	std::memcpy(&h, seg + offset, sizeof h);
	if (h.magic != record_magic) {
		error = "bad record magic at offset " + std::to_string(offset);
		return std::nullopt;
	}
	if (h.length > used - offset - header_size) {
		error = "record of " + std::to_string(h.length) + " bytes at offset " + std::to_string(offset) +
		        " overruns the segment (" + std::to_string(used) + " bytes used)";
		return std::nullopt;
	}
	std::span<const std::byte> data(seg + offset + header_size, h.length);
	offset += record_footprint(h.length);
	if (offset > used)
		offset = used; // last record's padding may be unwritten
	return data;
}

// Consumer side of one ring: segments announced by the source, in order.
class ReaderState
{
public:
	ReaderState(size_t seg_size, uint32_t nseg) : seg_size_(seg_size), nseg_(nseg) {}

	// A seg notification.  Returns an error message when it is out of order
	// or impossible, empty when accepted.
	std::string announce(uint64_t seq, uint64_t used)
	{
		if (seq != next_seq_)
			return "segment " + std::to_string(seq) + " announced, expected " + std::to_string(next_seq_);
		if (used > seg_size_)
			return "segment " + std::to_string(seq) + " claims " + std::to_string(used) +
			       " bytes, segment size is " + std::to_string(seg_size_);
		if (ready_.size() >= nseg_)
			return "segment " + std::to_string(seq) + " announced while all " + std::to_string(nseg_) +
			       " segments are unconsumed (overwrite)";
		ready_.push_back({seq, used});
		++next_seq_;
		return {};
	}
	[[nodiscard]] bool empty() const noexcept { return ready_.empty(); }
	struct Seg {
		uint64_t seq;
		uint64_t used;
	};
	[[nodiscard]] const Seg &front() const { return ready_.front(); }
	[[nodiscard]] size_t front_slot_offset() const noexcept { return (ready_.front().seq % nseg_) * seg_size_; }
	// Consumer position inside the front segment.
	size_t cursor = 0;
	// Drops the front segment; the caller returns one credit to the source.
	void release()
	{
		ready_.pop_front();
		cursor = 0;
	}
	[[nodiscard]] size_t pending() const noexcept { return ready_.size(); }

private:
	size_t seg_size_;
	uint32_t nseg_;
	uint64_t next_seq_ = 0;
	std::deque<Seg> ready_;
};

} // namespace dpi::ring
