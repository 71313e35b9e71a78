#!/usr/bin/env python3
"""Check MPA markers (RFC 5044) in a lab capture, independently of the
kernel module and of the Wireshark plugin.

  markers-check.py CAPTURE.pcap [PORT | -PORT ...]

Every TCP connection (only those on the PORTs if any are given, never
those on a -PORT: connections that break the rules on purpose) that
starts with an MPA Request and an accepting Reply is reassembled per
direction.  A direction carries markers iff the frame of the other side
(its receiver) had M set.  From the first octet after the sender's own
MPA frame, every 512th stream octet must start a marker: 16 zero bits and
the distance back to the first octet of the FPDU it sits in (0 when it
opens an FPDU).  Each FPDU is walked with its markers removed and, when C
was negotiated, its CRC32c is checked over the wire octets in front of the
CRC field, markers included.  Prints one line per direction and
"markers-check: ok" when nothing was wrong.
"""
import struct
import sys

PERIOD = 512


def crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        end = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        end = ">"
    else:
        sys.exit("markers-check: %s is not a pcap file" % path)
    linktype = struct.unpack(end + "I", data[20:24])[0]
    if linktype != 1:
        sys.exit("markers-check: link type %d, want Ethernet" % linktype)
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + "I", data[off + 8:off + 12])[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def tcp_segments(path):
    for frame in read_pcap(path):
        if len(frame) < 14 + 20 or frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        ihl = (ip[0] & 15) * 4
        if ip[9] != 6:
            continue
        tot = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:tot]
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        doff = (tcp[12] >> 4) * 4
        flags = tcp[13]
        yield (ip[12:16], sport, ip[16:20], dport), seq, flags, tcp[doff:]


def streams(path):
    """{direction key: bytes from ISN + 1}"""
    isn, chunks = {}, {}
    for key, seq, flags, payload in tcp_segments(path):
        if flags & 0x02:  # SYN: a new connection on this 4-tuple
            isn[key] = seq
            chunks[key] = {}
            continue
        if key not in isn or not payload:
            continue
        chunks[key].setdefault((seq - isn[key] - 1) & 0xFFFFFFFF, payload)
    out = {}
    for key, parts in chunks.items():
        buf = bytearray()
        for off in sorted(parts):
            p = parts[off]
            if off > len(buf):
                break  # a hole: stop there
            buf += p[len(buf) - off:]
        out[key] = bytes(buf)
    return out


def mpa_frame(buf):
    """(kind, M, C, R, length) of the MPA Request/Reply at buf[0], or None."""
    if len(buf) < 20:
        return None
    key = buf[:16]
    if key not in (b"MPA ID Req Frame", b"MPA ID Rep Frame"):
        return None
    flags = buf[16]
    pd_len = struct.unpack(">H", buf[18:20])[0]
    return (key[7:10].decode(), bool(flags & 0x80), bool(flags & 0x40),
            bool(flags & 0x20), 20 + pd_len)


def walk(buf, markers, crc):
    """Walk the FPDUs of buf; returns (fpdus, markers, errors[])."""
    pos, nf, nm, errs = 0, 0, 0, []
    while pos < len(buf):
        start, w, unmarked = pos, pos, bytearray()
        need, seen, complete = 2, 0, False
        while True:
            if markers and w % PERIOD == 0 and len(unmarked) < need:
                if w + 4 > len(buf):
                    break
                res, ptr = struct.unpack(">HH", buf[w:w + 4])
                nm += 1
                seen += 1
                if res != 0 or ptr != w - start:
                    errs.append("marker at %d: reserved %#x FPDUPTR %d, want 0 and %d"
                                % (w, res, ptr, w - start))
                w += 4
                continue
            if len(unmarked) >= need:
                complete = True
                break
            if w >= len(buf):
                break
            unmarked.append(buf[w])
            w += 1
            if len(unmarked) == 2:
                ulpdu = struct.unpack(">H", unmarked)[0]
                need = 2 + ulpdu + (-(2 + ulpdu) % 4) + 4
        if not complete:
            break  # the capture ends inside an FPDU
        nf += 1
        if crc:
            got = struct.unpack("<I", bytes(unmarked[-4:]))[0]  # RFC 3720 order
            calc = crc32c(buf[start:w - 4])
            if got != calc:
                errs.append("FPDU at %d: CRC %#010x, computed %#010x" % (start, got, calc))
        if len(errs) > 5:
            break
        pos = w
    return nf, nm, errs


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ports = {int(p) for p in sys.argv[2:] if not p.startswith("-")}
    skip = {-int(p) for p in sys.argv[2:] if p.startswith("-")}
    st = streams(sys.argv[1])
    bad = 0
    total_markers = 0
    for key, buf in sorted(st.items()):
        src, sport, dst, dport = key
        rkey = (dst, dport, src, sport)
        if ports and sport not in ports and dport not in ports:
            continue
        if sport in skip or dport in skip:
            continue
        me, peer = mpa_frame(buf), mpa_frame(st.get(rkey, b""))
        if not me or not peer or me[3] or peer[3]:
            continue
        req = me if me[0] == "Req" else peer
        rep = peer if me[0] == "Req" else me
        crc = req[2] or rep[2]
        marked = peer[1]
        nf, nm, errs = walk(buf[me[4]:], marked, crc)
        name = "%d.%d.%d.%d:%d -> %d.%d.%d.%d:%d" % (*src, sport, *dst, dport)
        print("%s: %s, markers %s, CRC %s: %d FPDUs, %d markers%s"
              % (name, "initiator" if me[0] == "Req" else "responder",
                 "on" if marked else "off", "on" if crc else "off", nf, nm,
                 "".join("\n  BAD " + e for e in errs)))
        if errs or (marked and nf and not nm):
            bad += 1
        total_markers += nm
    if bad:
        print("markers-check: %d directions with errors" % bad)
        sys.exit(1)
    print("markers-check: ok, %d markers" % total_markers)


if __name__ == "__main__":
    main()
