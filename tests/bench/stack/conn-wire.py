#!/usr/bin/env python3
"""Where connection set-up spends its time on the wire (issue 20).

usage: conn-wire.py CAPTURE.pcap [RDMA_PORT]

CAPTURE is a lab capture (`lab run --capture`) of `connbench client ADDR
PORT N` against `connbench server PORT`: rdma_cm connections to PORT
alternated with TCP connects to PORT+1.  For each kind it prints, per event
of a connection's TCP stream (SYN, SYN-ACK, every segment with data in
either direction, up to the first FIN), the median, minimum and maximum time
after the SYN, in milliseconds of the host's capture clock.
"""
import statistics
import subprocess
import sys
from collections import defaultdict

pcap = sys.argv[1]
rdma_port = int(sys.argv[2]) if len(sys.argv) > 2 else 9100
out = subprocess.run(["tshark", "-r", pcap, "-o", "tcp.relative_sequence_numbers:TRUE", "-T", "fields",
                      "-e", "frame.time_epoch", "-e", "tcp.stream", "-e", "tcp.srcport", "-e", "tcp.dstport",
                      "-e", "tcp.flags.syn", "-e", "tcp.flags.ack", "-e", "tcp.flags.fin", "-e", "tcp.len",
                      "-Y", "tcp"], capture_output=True, text=True).stdout
st = defaultdict(list)
for l in out.splitlines():
    t, s, sp, dp, syn, ack, fin, ln = l.split("\t")
    st[int(s)].append((float(t), int(sp), int(dp), syn == "1", ack == "1", fin == "1", int(ln or 0)))
rows = defaultdict(list)
for s, pk in st.items():
    t0 = pk[0][0]
    srv = pk[0][2]
    kind = "rdma" if srv == rdma_port else "tcp" if srv == rdma_port + 1 else None
    if kind is None:
        continue
    ev = []
    for (t, sp, dp, syn, ack, fin, ln) in pk:
        d = "c>s" if dp == srv else "s>c"
        if syn and not ack:
            ev.append(("SYN", t))
        elif syn and ack:
            ev.append(("SYNACK", t))
        elif fin:
            ev.append(("FIN " + d, t))
            break
        elif ln > 0:
            ev.append((f"data {d} {ln}", t))
    rows[kind].append([(n, (t - t0) * 1e3) for n, t in ev])
for kind, rs in rows.items():
    print(f"== {kind}: {len(rs)} connections")
    cols = defaultdict(list)
    for r in rs:
        for i, (n, ms) in enumerate(r[:8]):
            cols[(i, n)].append(ms)
    for (i, n), v in sorted(cols.items()):
        if len(v) >= len(rs) // 2:
            print(f"  #{i} {n:18s} n={len(v):2d} median {statistics.median(v):7.2f} ms  min {min(v):7.2f}  max {max(v):7.2f}")
