#!/usr/bin/env bash
# Regenerate the golden captures of the kernel's RDMA ULPs over swiwarp,
# tests/dissector/captures/swiwarp_nvmeof.pcap.gz (NVMe-oF, port 4420),
# swiwarp_nfsrdma.pcap.gz (NFS v4.2 over RDMA, port 20049) and
# swiwarp_iser.pcap.gz (iSER, port 3260): one 2-guest lab boot runs
# tests/dissector/capture-ulp-guest.sh (NVMe-oF: connect, one 4 KiB write
# and read, disconnect; NFS: mount, one 1 KiB and one 16 KiB file written
# and read, umount; iSER: login, one 4 KiB write and read, logout), the
# link capture is cut to each port (TCP frames only).  The .expect files
# next to them are written by hand from what the exchanges do and checked by
# tests/suites/40-dissector.sh, which thereby checks the plugin's hand-off
# of Send payloads to Wireshark's nvme-rdma, rpcordma and iser dissectors,
# and of RPC-over-RDMA chunk traffic to rpcordma, on real traffic.
#   tests/dissector/capture-ulp.sh [OUTDIR [NAME...]]
# NAMEs (swiwarp_nvmeof, swiwarp_nfsrdma, swiwarp_iser) write only those
# captures: a new recording differs in the kernel's own traffic, so a
# capture whose .expect was written against an earlier one is kept.
# Needs kernel/swiwarp.ko (make kernel) and $BUILD (default build/).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/dissector/captures}
export BUILD=${BUILD:-$top/build}
tmp=$(mktemp -d "$BUILD/capture-ulp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$top/tests/lab/lab" run -n 2 --name dissector-golden-ulp --capture "$tmp/raw.pcap" \
	--timeout 900 -- tests/dissector/capture-ulp-guest.sh
shift || true
for cut in swiwarp_nvmeof:4420 swiwarp_nfsrdma:20049 swiwarp_iser:3260; do
	name=${cut%:*}
	[ $# -eq 0 ] || [[ " $* " == *" $name "* ]] || continue
	tshark -r "$tmp/raw.pcap" -Y "tcp.port == ${cut#*:}" -w "$tmp/$name.pcap" -F pcap
	gzip -9 -n -c "$tmp/$name.pcap" >"$out/$name.pcap.gz"
	echo "wrote $out/$name.pcap.gz ($(stat -c %s "$out/$name.pcap.gz") bytes)"
done
