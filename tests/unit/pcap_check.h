// Reads a capture of iWARP connections and checks every octet of every
// stream with the wire core: MPA Request/Reply, FPDU framing, markers and
// CRC as negotiated, DDP/RDMAP headers, and the DDP sequencing rules
// (untagged MSN per queue, MO continuity, L flag).  Used by the
// iwarp-pcap-check tool and by unit tests on recorded captures.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace wirecheck {

struct StreamReport {
	std::string name;	      // "a.b.c.d:port -> e.f.g.h:port"
	bool initiator = false;	      // sent the MPA Request
	uint8_t rev = 0;
	bool enhanced = false;
	bool crc = false;	      // CRC negotiated on the connection
	bool markers = false;	      // this direction carries markers
	uint16_t ird = 0, ord = 0;    // from this side's IRD/ORD word
	uint64_t octets = 0;	      // stream octets seen
	uint64_t fpdus = 0;
	uint64_t crc_checked = 0;
	uint64_t markers_seen = 0;
	std::map<std::string, uint64_t> opcodes; // RDMAP opcode name -> count
	uint64_t trailing = 0;	      // octets after the last whole FPDU
	std::vector<std::string> errors;
	// Legal but noteworthy (e.g. non-zero pad, which receivers ignore;
	// Linux siw sends it).
	std::vector<std::string> notes;
};

struct Report {
	std::vector<StreamReport> streams;
	std::vector<std::string> errors; // capture-level problems
	size_t error_count() const;
};

// Returns false and fills report.errors if the file cannot be read.
bool check_pcap(const std::string &path, Report &report);

std::string format(const Report &report);

} // namespace wirecheck
