// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// libdpi control messages.  They travel as RDMA Sends on the same RC
// connection as the data (never on a side channel), so a Send that follows a
// run of RDMA Writes is delivered only after those Writes were placed: that
// is how an owner learns, without remote atomics or write-with-immediate,
// that a segment is complete.  Fixed size, little-endian host order.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace dpi::proto
{

inline constexpr uint32_t magic = 0x44504931; // "DPI1"
inline constexpr size_t name_max = 95;

enum class Type : uint16_t {
	create = 1,   // client -> owner: create a buffer
	created,      // reply
	join,         // client -> owner: become a source, get a ring
	joined,       // reply: ring address/rkey/geometry
	seg,          // source -> owner: segment `seq` holds `len` bytes
	seg_ack,      // owner -> source: reply to a seg with flag_ack
	credit,       // owner -> source: `len` segments of ring `ring` were freed
	close,        // source -> owner: no more segments on this ring
	closed,       // reply
	lookup,       // client -> directory: who owns `name`?
	lookup_reply, // reply: `node`
	enroll,       // client -> directory: `name` lives on `node`
	enrolled,     // reply
	open_region,  // client -> owner: address of a region buffer
	region_info,  // reply
	commit,       // source -> owner: shared-log ranges written (shared.hpp)
	room,         // source -> owner: reply once the consumer passed position `len`
	room_ok,      // reply: `seq` = the consumer's position
};

inline constexpr uint16_t flag_ack = 1;     // seg: reply with seg_ack
inline constexpr uint16_t flag_existed = 2; // created: buffer existed already
inline constexpr uint16_t flag_shared = 4;  // joined: this source uses the shared log
inline constexpr uint16_t flag_rings = 8;   // join: give me a ring whatever the mode

// Field use beyond the names below:
//  create:  len = AppendMode.
//  joined with flag_shared: ring = source id, addr/rkey = the log,
//           seg_size = log capacity, len = largest record, seq = address of
//           the tail word, region_size = its rkey, nseg = 0.  A ring
//           joined may carry a text: why not the log.
//  commit:  ring = source id, len = ranges (1..8), text = shared::Packed[len].
//  room:    ring = source id, len = the consumer position the source needs;
//           the owner holds the request until the consumer got there.

struct Msg {
	uint32_t magic;
	uint16_t type;
	uint16_t flags;
	uint32_t req_id; // matches replies to requests; 0 = none
	int32_t status;  // replies: Errc value
	uint64_t handle; // buffer id at the owner
	uint64_t ring;   // ring id at the owner
	uint64_t seq;    // segment sequence number
	uint64_t len;    // bytes in segment / credit count
	uint64_t addr;   // ring or region base address
	uint64_t seg_size;
	uint64_t region_size;
	uint32_t rkey;
	uint32_t nseg;
	int32_t node;
	uint32_t kind;
	char text[128]; // buffer name, or an error message in replies

	void set_text(std::string_view s)
	{
		size_t n = s.size() < sizeof(text) - 1 ? s.size() : sizeof(text) - 1;
		std::memcpy(text, s.data(), n);
		text[n] = '\0';
	}
	[[nodiscard]] std::string get_text() const { return {text, strnlen(text, sizeof(text))}; }
};

static_assert(sizeof(Msg) == 216, "control message layout changed");

inline Msg make(Type t, uint32_t req_id = 0)
{
	Msg m{};
	m.magic = magic;
	m.type = static_cast<uint16_t>(t);
	m.req_id = req_id;
	return m;
}

} // namespace dpi::proto
