#include "pcap_check.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <tuple>

#include <iwarp/iwarp.h>

namespace wirecheck {
namespace {

struct Key {
	uint32_t src, dst;
	uint16_t sport, dport;
	bool operator<(const Key &o) const
	{
		return std::tie(src, dst, sport, dport) < std::tie(o.src, o.dst, o.sport, o.dport);
	}
};

struct Stream {
	bool have_base = false;
	uint32_t base = 0;	   // sequence number of stream octet 0
	std::vector<uint8_t> data; // reassembled octets
	std::vector<bool> have;	   // which octets were seen
};

std::string addr(uint32_t ip, uint16_t port)
{
	char b[32];
	snprintf(b, sizeof(b), "%u.%u.%u.%u:%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255,
		 ip & 255, port);
	return b;
}

uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

// Classic pcap with Ethernet/IPv4/TCP; everything else is skipped.
bool read_pcap(const std::string &path, std::map<Key, Stream> &streams, Report &rep)
{
	std::ifstream f(path, std::ios::binary);
	if (!f) {
		rep.errors.push_back("cannot open " + path);
		return false;
	}
	std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	if (file.size() < 24) {
		rep.errors.push_back("not a pcap file");
		return false;
	}
	const uint32_t magic = rd32(file.data(), false);
	bool swap;
	if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d)
		swap = false;
	else if (magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1)
		swap = true;
	else {
		rep.errors.push_back("not a classic pcap file (pcapng is not supported)");
		return false;
	}
	if (rd32(file.data() + 20, swap) != 1) {
		rep.errors.push_back("link type is not Ethernet");
		return false;
	}
	size_t off = 24;
	while (off + 16 <= file.size()) {
		const uint32_t caplen = rd32(file.data() + off + 8, swap);
		const uint32_t wirelen = rd32(file.data() + off + 12, swap);
		off += 16;
		if (caplen > file.size() - off) {
			rep.errors.push_back("truncated pcap record");
			break;
		}
		const uint8_t *p = file.data() + off;
		size_t n = caplen;
		off += caplen;
		if (caplen < wirelen) {
			rep.errors.push_back("packet captured short (snaplen)");
			continue;
		}
		if (n < 14 + 20 || iwarp_get_be16(p + 12) != 0x0800)
			continue;
		p += 14;
		n -= 14;
		const size_t ihl = (size_t)(p[0] & 15) * 4;
		if ((p[0] >> 4) != 4 || ihl < 20 || n < ihl || p[9] != 6)
			continue;
		size_t iplen = iwarp_get_be16(p + 2);
		if (iplen > n || iplen < ihl + 20)
			continue;
		Key k{iwarp_get_be32(p + 12), iwarp_get_be32(p + 16), 0, 0};
		const uint8_t *t = p + ihl;
		const size_t tlen = iplen - ihl;
		const size_t doff = (size_t)(t[12] >> 4) * 4;
		if (doff < 20 || doff > tlen)
			continue;
		k.sport = iwarp_get_be16(t);
		k.dport = iwarp_get_be16(t + 2);
		uint32_t seq = iwarp_get_be32(t + 4);
		const bool syn = t[13] & 0x02;
		Stream &s = streams[k];
		if (syn) {
			s.have_base = true;
			s.base = seq + 1;
			continue;
		}
		const size_t plen = tlen - doff;
		if (!plen)
			continue;
		if (!s.have_base) {
			s.have_base = true;
			s.base = seq;
		}
		const uint32_t rel = seq - s.base;
		if (rel > (64u << 20)) // before the stream start, or absurd
			continue;
		if (s.data.size() < rel + plen) {
			s.data.resize(rel + plen);
			s.have.resize(rel + plen);
		}
		memcpy(s.data.data() + rel, t + doff, plen);
		for (size_t i = 0; i < plen; i++)
			s.have[rel + i] = true;
	}
	return true;
}

// DDP sequencing state of one direction (RFC 5041 section 5.3/6).
struct DdpState {
	std::map<uint32_t, uint32_t> next_msn; // per queue, starts at 1
	std::map<uint32_t, uint32_t> next_mo;  // per queue, within the message
};

void check_fpdus(const Stream &s, size_t start, bool crc, bool markers, StreamReport &r)
{
	DdpState ddp;
	std::vector<uint8_t> unmarked(70000);
	size_t pos = start;
	const uint32_t base = (uint32_t)start; // marker grid: first FPDU
	while (pos < s.data.size()) {
		const uint8_t *p = s.data.data() + pos;
		const size_t avail = s.data.size() - pos;
		const uint8_t *fpdu;
		size_t wire_len, flen;
		bool crc_ok;
		if (markers) {
			iwarp_marked_fpdu info;
			int n = iwarp_markers_strip(base, (uint32_t)pos, p, avail, unmarked.data(),
						    unmarked.size(), &info);
			if (n == IWARP_ERR_TRUNCATED) {
				r.trailing = avail;
				return;
			}
			if (n < 0) {
				r.errors.push_back("offset " + std::to_string(pos) + ": " +
						   iwarp_strerror(n));
				return;
			}
			r.markers_seen += info.markers;
			fpdu = unmarked.data();
			flen = (size_t)n;
			wire_len = info.wire_len;
			crc_ok = info.crc_ok;
		} else {
			iwarp_fpdu f;
			int n = iwarp_fpdu_parse(p, avail, &f);
			if (n == IWARP_ERR_TRUNCATED) {
				r.trailing = avail;
				return;
			}
			fpdu = p;
			flen = wire_len = (size_t)n;
			crc_ok = f.crc_ok;
		}
		for (size_t i = 0; i < wire_len; i++)
			if (!s.have[pos + i]) {
				r.errors.push_back("offset " + std::to_string(pos) +
						   ": octets missing from the capture");
				return;
			}
		const std::string at = "FPDU at " + std::to_string(pos) + ": ";
		r.fpdus++;
		if (crc) {
			r.crc_checked++;
			if (!crc_ok)
				r.errors.push_back(at + "CRC mismatch");
		}
		const uint16_t ulen = iwarp_get_be16(fpdu);
		for (size_t i = 2 + ulen; i < flen - 4; i++)
			if (fpdu[i]) {
				r.notes.push_back(at + "non-zero pad (ignored by receivers)");
				break;
			}
		iwarp_rdmap_msg m;
		int h = iwarp_rdmap_parse(fpdu + 2, ulen, &m);
		if (h < 0) {
			r.errors.push_back(at + iwarp_strerror(h));
		} else {
			r.opcodes[iwarp_rdmap_opcode_name(m.opcode)]++;
			if (m.rv != 1 || m.rsvd || m.ddp.rsvd)
				r.errors.push_back(at + "reserved bits set");
			if (!m.ddp.tagged) {
				const uint32_t qn = m.ddp.qn;
				uint32_t &msn = ddp.next_msn.try_emplace(qn, 1).first->second;
				uint32_t &mo = ddp.next_mo.try_emplace(qn, 0).first->second;
				if (m.ddp.msn != msn)
					r.errors.push_back(at + "QN " + std::to_string(qn) + " MSN " +
							   std::to_string(m.ddp.msn) + ", expected " +
							   std::to_string(msn));
				if (m.ddp.mo != mo)
					r.errors.push_back(at + "MO " + std::to_string(m.ddp.mo) +
							   ", expected " + std::to_string(mo));
				if (m.ddp.last) {
					msn = m.ddp.msn + 1;
					mo = 0;
				} else {
					msn = m.ddp.msn;
					mo = m.ddp.mo + (uint32_t)(ulen - h);
				}
			}
		}
		pos += wire_len;
	}
}

} // namespace

size_t Report::error_count() const
{
	size_t n = errors.size();
	for (const auto &s : streams)
		n += s.errors.size();
	return n;
}

bool check_pcap(const std::string &path, Report &rep)
{
	std::map<Key, Stream> streams;
	if (!read_pcap(path, streams, rep))
		return false;
	for (auto &[k, s] : streams) {
		if (s.data.size() < IWARP_MPA_RR_HDR_LEN)
			continue;
		iwarp_mpa_rr mine, peer;
		if (iwarp_mpa_rr_parse_ex(s.data.data(), s.data.size(),
					  IWARP_MPA_PARSE_IGNORE_RESERVED, &mine) < 0)
			continue; // not an iWARP stream (or it started before the capture)
		StreamReport r;
		r.name = addr(k.src, k.sport) + " -> " + addr(k.dst, k.dport);
		r.octets = s.data.size();
		r.initiator = mine.kind == IWARP_MPA_REQUEST;
		r.rev = mine.rev;
		r.enhanced = mine.enhanced;
		r.ird = mine.ird;
		r.ord = mine.ord;
		const int n = iwarp_mpa_rr_parse(s.data.data(), s.data.size(), &mine);
		if (n < 0)
			r.errors.push_back(std::string("MPA frame: ") + iwarp_strerror(n));
		// Find the other direction for the negotiated parameters.
		Key rk{k.dst, k.src, k.dport, k.sport};
		auto other = streams.find(rk);
		bool have_peer = other != streams.end() &&
				 iwarp_mpa_rr_parse_ex(other->second.data.data(),
						       other->second.data.size(),
						       IWARP_MPA_PARSE_IGNORE_RESERVED, &peer) >= 0;
		if (!have_peer) {
			r.errors.push_back("no MPA frame from the peer in the capture");
		} else if (peer.kind == mine.kind) {
			r.errors.push_back("both sides sent the same MPA frame kind");
		} else {
			const iwarp_mpa_rr &req = r.initiator ? mine : peer;
			const iwarp_mpa_rr &reply = r.initiator ? peer : mine;
			r.crc = req.crc || reply.crc;
			// Markers go to whoever asked for them.
			r.markers = r.initiator ? reply.markers : req.markers;
			if (reply.reject) {
				rep.streams.push_back(r);
				continue;
			}
			if (n >= 0)
				check_fpdus(s, (size_t)n, r.crc, r.markers, r);
		}
		rep.streams.push_back(r);
	}
	if (rep.streams.empty())
		rep.errors.push_back("no iWARP connection in the capture");
	return true;
}

std::string format(const Report &rep)
{
	std::ostringstream o;
	for (const auto &s : rep.streams) {
		o << s.name << (s.initiator ? " (initiator)" : " (responder)") << ": MPA rev "
		  << (int)s.rev << (s.enhanced ? " enhanced" : "");
		if (s.enhanced)
			o << " IRD " << s.ird << " ORD " << s.ord;
		o << ", CRC " << (s.crc ? "on" : "off") << ", markers " << (s.markers ? "on" : "off")
		  << "; " << s.octets << " octets, " << s.fpdus << " FPDUs";
		if (s.crc)
			o << " (" << s.crc_checked << " CRCs checked)";
		if (s.markers)
			o << ", " << s.markers_seen << " markers";
		if (s.trailing)
			o << ", " << s.trailing << " octets of an incomplete FPDU at the end";
		o << "\n";
		for (const auto &[name, count] : s.opcodes)
			o << "    " << name << ": " << count << "\n";
		for (size_t i = 0; i < s.notes.size() && i < 5; i++)
			o << "    note: " << s.notes[i] << "\n";
		if (s.notes.size() > 5)
			o << "    ... " << s.notes.size() - 5 << " more notes\n";
		for (size_t i = 0; i < s.errors.size() && i < 20; i++)
			o << "    ERROR " << s.errors[i] << "\n";
		if (s.errors.size() > 20)
			o << "    ... " << s.errors.size() - 20 << " more errors\n";
	}
	for (const auto &e : rep.errors)
		o << "ERROR " << e << "\n";
	o << rep.error_count() << " errors\n";
	return o.str();
}

} // namespace wirecheck
