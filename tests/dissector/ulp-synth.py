#!/usr/bin/env python3
"""Write a small synthetic capture of three iWARP connections whose Send
payloads belong to ULPs Wireshark dissects (tests/dissector/ulp-check.sh).

    ulp-synth.py OUT.pcap

Each connection: TCP handshake, MPA rev 1 Request/Reply (no CRC, no
markers), then untagged Sends (DDP/RDMAP headers as RFC 5041/5040 lay them
out), one per TCP segment:
  - port 4420, NVMe over Fabrics: the Request carries a 32-byte NVMe RDMA CM
    request (record format 0, queue 0); the host sends a Fabrics Connect
    command capsule with 1024 bytes of in-capsule data (command id 1), the
    controller a completion for command id 1; then an Identify command
    (command id 2) whose keyed SGL names 4096 bytes at STag 0x1234, TO
    0x7000, the controller's RDMA Write of them and the completion;
  - port 20049, RPC-over-RDMA version 1: RDMA_MSG with empty chunk lists
    carrying an NFSv3 NULL call (XID 0x1234), and the RDMA_MSG reply; then
    an NFSv3 READ of 8192 bytes (XID 0x1235) whose call offers a write
    chunk of one segment (STag 0x5678, TO 0x9000, 8192 bytes), the
    server's RDMA Write of the data there (a known pattern), and the
    RDMA_MSG reply, whose READ3res stops after the data's length (the data
    itself went in the chunk);
  - port 3260, iSER: an iSCSI control PDU header (no STags) and an iSCSI
    NOP-Out basic header segment.
"""
import struct
import sys

frames = []


def csum(d):
    if len(d) % 2:
        d += b"\0"
    s = sum(struct.unpack("!%dH" % (len(d) // 2), d))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def pkt(src, dst, sport, dport, seq, ack, flags, payload):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0,
                     bytes(src), bytes(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    pseudo = bytes(src) + bytes(dst) + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    eth = bytes.fromhex("020000000002" "020000000001" "0800")
    frames.append(eth + ip + tcp)


def connection(port, pdata, sends):
    a, b = [192, 0, 2, 1], [192, 0, 2, 2]
    aport = 40000 + port % 1000
    seq = [1000, 5000]
    pkt(a, b, aport, port, seq[0], 0, 0x02, b"")
    pkt(b, a, port, aport, seq[1], seq[0] + 1, 0x12, b"")
    seq = [seq[0] + 1, seq[1] + 1]
    pkt(a, b, aport, port, seq[0], seq[1], 0x10, b"")

    def send(side, data):
        if side == 0:
            pkt(a, b, aport, port, seq[0], seq[1], 0x18, data)
        else:
            pkt(b, a, port, aport, seq[1], seq[0], 0x18, data)
        seq[side] += len(data)

    send(0, b"MPA ID Req Frame" + bytes([0, 1]) + struct.pack("!H", len(pdata)) + pdata)
    send(1, b"MPA ID Rep Frame" + bytes([0, 1]) + struct.pack("!H", 0))
    msn = [0, 0]
    for item in sends:
        side, payload = item[0], item[1]
        if len(item) == 4:
            # DDP tagged, L=1; RDMAP RDMA Write; STag, TO
            ulpdu = bytes([0xC1, 0x40]) + struct.pack("!IQ", item[2], item[3]) + payload
        else:
            msn[side] += 1
            # DDP untagged, L=1, version 1; RDMAP version 1, Send; QN 0, MSN, MO 0
            ulpdu = bytes([0x41, 0x43]) + struct.pack("!IIII", 0, 0, msn[side], 0) + payload
        fpdu = struct.pack("!H", len(ulpdu)) + ulpdu
        fpdu += b"\0" * (-len(fpdu) % 4) + b"\0" * 4  # pad, CRC field (CRC not in use)
        send(side, fpdu)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    # NVMe RDMA CM request: recfmt 0, qid 0, hrqsize 32, hsqsize 31, reserved
    nvme_pd = struct.pack("<HHHH", 0, 0, 32, 31) + bytes(24)
    sqe = bytearray(64)
    sqe[0] = 0x7F  # Fabrics command
    sqe[2:4] = struct.pack("<H", 1)  # command id
    sqe[4] = 0x01  # Connect
    cqe = bytearray(16)
    cqe[12:14] = struct.pack("<H", 1)
    # Identify (controller) with a keyed SGL for 4096 bytes: the controller
    # RDMA-Writes the data to STag 0x1234 at 0x7000, then completes.
    ident = bytearray(64)
    ident[0] = 0x06
    ident[2:4] = struct.pack("<H", 2)
    ident[24:32] = struct.pack("<Q", 0x7000)
    ident[32:35] = (4096).to_bytes(3, "little")
    ident[35:39] = struct.pack("<I", 0x1234)
    ident[39] = 0x40  # keyed data block
    ident[40:44] = struct.pack("<I", 1)  # CNS 1: controller
    cqe2 = bytearray(16)
    cqe2[12:14] = struct.pack("<H", 2)
    connection(4420, nvme_pd, [(0, bytes(sqe) + bytes(1024)), (1, bytes(cqe)),
                               (0, bytes(ident)), (1, bytes(4096), 0x1234, 0x7000),
                               (1, bytes(cqe2))])

    call = struct.pack("!IIIIIIIIII", 0x1234, 0, 2, 100003, 3, 0, 0, 0, 0, 0)
    reply = struct.pack("!IIIIII", 0x1234, 1, 0, 0, 0, 0)
    hdr = struct.pack("!IIIIIII", 0x1234, 1, 32, 0, 0, 0, 0)  # RDMA_MSG, no chunks
    # NFSv3 READ through a write chunk.  RPC-over-RDMA header of call and
    # reply: a write list of one chunk of one segment, no read list, no
    # reply chunk.
    wlist = struct.pack("!IIIIQI", 1, 1, 0x5678, 8192, 0x9000, 0)
    rhdr = struct.pack("!IIII", 0x1235, 1, 32, 0) + struct.pack("!I", 0) + wlist + \
        struct.pack("!I", 0)
    fh = b"swiwarp-fh-synth"
    # call: XID, CALL, RPC 2, NFS, v3, READ (6), AUTH_NULL cred and verifier;
    # READ3args: file handle, offset 0, count 8192
    rcall = struct.pack("!IIIIIIIIII", 0x1235, 0, 2, 100003, 3, 6, 0, 0, 0, 0) + \
        struct.pack("!I", len(fh)) + fh + struct.pack("!QI", 0, 8192)
    # reply: XID, REPLY, accepted, AUTH_NULL verifier, SUCCESS; READ3res:
    # NFS3_OK, no attributes, count 8192, eof, then the opaque's length only
    rreply = struct.pack("!IIIIII", 0x1235, 1, 0, 0, 0, 0) + \
        struct.pack("!IIIII", 0, 0, 8192, 1, 8192)
    data = (b"swiwarp synthetic write chunk.\n\0" * 256)[:8192]
    connection(20049, b"", [(0, hdr + call), (1, hdr + reply),
                            (0, rhdr + rcall), (1, data, 0x5678, 0x9000),
                            (1, rhdr + rreply)])

    iser = struct.pack("!B3xIQIQ", 0x10, 0, 0, 0, 0)
    bhs = bytearray(48)
    bhs[0] = 0x40  # NOP-Out, immediate
    bhs[1] = 0x80  # F
    bhs[16:20] = struct.pack("!I", 5)  # initiator task tag
    bhs[20:24] = b"\xff\xff\xff\xff"  # target transfer tag
    connection(3260, b"", [(0, iser + bytes(bhs))])

    with open(sys.argv[1], "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, f in enumerate(frames):
            out.write(struct.pack("<IIII", 1700000000 + i, 0, len(f), len(f)) + f)


if __name__ == "__main__":
    main()
