#!/usr/bin/env python3
"""Move a TCP stream of a capture to another port.

    rewrite-port.py IN.pcap OUT.pcap OLD_PORT NEW_PORT

Reads a classic pcap file with Ethernet frames, replaces OLD_PORT by NEW_PORT
wherever it is the source or destination port of an IPv4 or IPv6 TCP segment,
and recomputes the TCP checksum of every segment it changed (when the whole
segment was captured; a truncated one keeps its old, now wrong, checksum,
which Wireshark does not check by default).  Everything else is copied byte
for byte.  Used to make golden captures whose MPA stream runs on a port that
another Wireshark dissector owns (tests/dissector/captures/*_port4420).
"""
import struct
import sys


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def rewrite(frame, old, new):
    """Return (frame, changed)."""
    if len(frame) < 14:
        return frame, False
    off = 12
    etype = struct.unpack_from("!H", frame, off)[0]
    off += 2
    while etype in (0x8100, 0x88A8) and len(frame) >= off + 4:
        etype = struct.unpack_from("!H", frame, off + 2)[0]
        off += 4
    if etype == 0x0800 and len(frame) >= off + 20:
        ihl = (frame[off] & 0x0F) * 4
        if frame[off + 9] != 6:
            return frame, False
        total = struct.unpack_from("!H", frame, off + 2)[0]
        tcp = off + ihl
        tcp_len = total - ihl
        pseudo = frame[off + 12:off + 20] + struct.pack("!BBH", 0, 6, tcp_len)
    elif etype == 0x86DD and len(frame) >= off + 40:
        if frame[off + 6] != 6:  # no extension headers in our captures
            return frame, False
        tcp = off + 40
        tcp_len = struct.unpack_from("!H", frame, off + 4)[0]
        pseudo = frame[off + 8:off + 40] + struct.pack("!IxxxB", tcp_len, 6)
    else:
        return frame, False
    if len(frame) < tcp + 4:
        return frame, False
    sport, dport = struct.unpack_from("!HH", frame, tcp)
    if old not in (sport, dport):
        return frame, False
    buf = bytearray(frame)
    struct.pack_into("!HH", buf, tcp, new if sport == old else sport,
                     new if dport == old else dport)
    if len(buf) >= tcp + tcp_len and tcp_len >= 20:
        struct.pack_into("!H", buf, tcp + 16, 0)
        struct.pack_into("!H", buf, tcp + 16,
                         csum(pseudo + bytes(buf[tcp:tcp + tcp_len])))
    return bytes(buf), True


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    src, dst, old, new = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    data = open(src, "rb").read()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        sys.exit("%s: not a classic pcap file" % src)
    linktype = struct.unpack_from(endian + "I", data, 20)[0]
    if linktype != 1:
        sys.exit("%s: link type %d, only Ethernet (1) is supported" % (src, linktype))
    out = [data[:24]]
    off, changed, frames = 24, 0, 0
    while off + 16 <= len(data):
        hdr = data[off:off + 16]
        incl = struct.unpack_from(endian + "I", hdr, 8)[0]
        frame = data[off + 16:off + 16 + incl]
        frame, did = rewrite(frame, old, new)
        changed += did
        frames += 1
        out.append(hdr + frame)
        off += 16 + incl
    open(dst, "wb").write(b"".join(out))
    print("%s: %d of %d frames moved from port %d to %d" % (dst, changed, frames, old, new))
    if not changed:
        sys.exit(1)


if __name__ == "__main__":
    main()
