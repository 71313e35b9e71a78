#!/usr/bin/env bash
# Regenerate the golden capture of RFC 7306 traffic between two swiwarp
# guests, tests/dissector/captures/swiwarp_rfc7306.pcap.gz: one 2-guest lab
# boot runs tests/dissector/capture-swiwarp-guest.sh rfc7306 (RDMA Writes
# with Immediate Data, Fetch-and-Add and Compare-and-Swap, four Atomics the
# responder refuses with a Terminate; ports 7190-7195), the link capture is
# cut to those ports (TCP frames only).  swiwarp_rfc7306.expect next to it
# is written by hand from what the exchange does and checked by
# tests/suites/40-dissector.sh.
#   tests/dissector/capture-swiwarp-rfc7306.sh [OUTDIR]
# Needs kernel/swiwarp.ko (make kernel) and $BUILD (default build/) with the
# provider; imm-verify and atomic-verify are compiled here.  LAB_TIMEOUT
# (default 600 s) bounds the boot, for a slow or busy host.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/dissector/captures}
export BUILD=${BUILD:-$top/build}
tmp=$(mktemp -d "$BUILD/capture-rfc7306.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for p in imm-verify atomic-verify; do
	cc -O2 -Wall -pthread -o "$tmp/$p" "$top/tests/swiwarp/$p.c" \
		"$top/tests/swiwarp/verify-cm.c" -lrdmacm -libverbs
done
"$top/tests/lab/lab" run -n 2 --name dissector-golden-rfc7306 --capture "$tmp/raw.pcap" \
	--timeout "${LAB_TIMEOUT:-600}" -- RFC7306_BIN="$tmp" tests/dissector/capture-swiwarp-guest.sh rfc7306
name=swiwarp_rfc7306
tshark -r "$tmp/raw.pcap" -Y "tcp.port >= 7190 && tcp.port <= 7195" -w "$tmp/$name.pcap" -F pcap
gzip -9 -n -c "$tmp/$name.pcap" >"$out/$name.pcap.gz"
echo "wrote $out/$name.pcap.gz ($(stat -c %s "$out/$name.pcap.gz") bytes)"
