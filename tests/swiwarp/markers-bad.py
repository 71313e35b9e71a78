#!/usr/bin/env python3
"""A raw MPA initiator that sends broken markers to a swiwarp listener that
asked for markers (module parameter markers=1, e.g. `rping -s`).

  markers-bad.py HOST PORT CASE

CASE is
  badptr    the first FPDU opens with a marker whose FPDUPTR is 8, not 0
  nomarker  the FPDU is sent without markers although the Reply had M

The MPA Request is rev 1 with CRC on and M clear (we do not want markers
back).  The Reply must be an accepting one with M set; then the peer must
answer the broken stream with a Terminate: layer LLP (2), error type MPA
(0), code 0x03 (marker error, RFC 5044 / RFC 5040 Terminate codes).
Exit 0 when it did, 1 with a reason otherwise.
"""
import socket
import struct
import sys
import time

PERIOD = 512


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def recv_exact(s, n, deadline):
    buf = b""
    while len(buf) < n:
        s.settimeout(max(0.1, deadline - time.time()))
        try:
            chunk = s.recv(n - len(buf))
        except socket.timeout:
            return buf
        if not chunk:
            return buf
        buf += chunk
    return buf


def send_fpdu(ulpdu, marker_ptr):
    """FPDU (length, ULPDU, pad, CRC) with a leading marker if marker_ptr
    is not None; the CRC covers the marker (RFC 5044)."""
    body = struct.pack(">H", len(ulpdu)) + ulpdu
    body += b"\0" * (-len(body) % 4)
    if marker_ptr is not None:
        body = struct.pack(">HH", 0, marker_ptr) + body
    return body + struct.pack("<I", crc32c(body))


def main():
    host, port, case = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(b"MPA ID Req Frame" + bytes([0x40, 1]) + struct.pack(">H", 0))
    deadline = time.time() + 20
    rep = recv_exact(s, 20, deadline)
    if len(rep) < 20 or rep[:16] != b"MPA ID Rep Frame":
        print("no MPA Reply: %r" % rep[:20])
        return 1
    pd = recv_exact(s, struct.unpack(">H", rep[18:20])[0], deadline)
    flags = rep[16]
    if flags & 0x20 or not flags & 0x80:
        print("Reply flags %#x: want accepted (R clear) with M set" % flags)
        return 1
    print("Reply flags %#x, %d octets of private data" % (flags, len(pd)))
    # An untagged Send (DDP control 0x41: L, version 1; RDMAP 0x43: version
    # 1, opcode Send), QN 0, MSN 1, MO 0, 16 octets of payload.
    ulpdu = bytes([0x41, 0x43]) + struct.pack(">IIII", 0, 0, 1, 0) + b"x" * 16
    s.sendall(send_fpdu(ulpdu, 8 if case == "badptr" else None))
    # The peer sends without markers (our M was clear): a Terminate FPDU.
    deadline = time.time() + 20
    hdr = recv_exact(s, 2, deadline)
    if len(hdr) < 2:
        print("no Terminate: the peer sent nothing or closed (%r)" % hdr)
        return 1
    ulen = struct.unpack(">H", hdr)[0]
    ulp = recv_exact(s, ulen, deadline)
    if len(ulp) < 20 or ulp[1] & 0x0F != 7:
        print("first FPDU back is not a Terminate: %s" % ulp[:20].hex())
        return 1
    layer, etype, code = ulp[18] >> 4, ulp[18] & 15, ulp[19]
    print("Terminate layer %d type %d code %#x" % (layer, etype, code))
    if (layer, etype, code) != (2, 0, 3):
        print("want layer 2 (LLP) type 0 (MPA) code 0x3 (marker)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
