#!/usr/bin/env bash
# Regenerate the golden captures of real swiwarp <-> swiwarp traffic: one
# 2-guest lab boot runs tests/dissector/capture-swiwarp-guest.sh (one exchange
# per TCP port, module parameters switched between them), the link capture is
# cut by port into tests/dissector/captures/swiwarp_*.pcap.gz (TCP frames
# only).  The .expect files next to them are written by hand from what each
# exchange does and checked by tests/suites/40-dissector.sh.
#   tests/dissector/capture-swiwarp.sh [OUTDIR]
# Needs kernel/swiwarp.ko (make kernel) and $BUILD (default build/) with the
# provider, tools/hostile and examples/hello-iwarp.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/dissector/captures}
export BUILD=${BUILD:-$top/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$top/tests/lab/lab" run -n 2 --name dissector-golden-swiwarp --capture "$tmp/raw.pcap" \
	--timeout 600 -- tests/dissector/capture-swiwarp-guest.sh
for pair in rev2_crc:7174 rev2_nocrc:7175 rev1_crc:7176 rev1_nocrc:7177 rping_20k:7178 \
	hello:7471 hostile:7180; do
	name=swiwarp_${pair%%:*}
	port=${pair##*:}
	tshark -r "$tmp/raw.pcap" -Y "tcp.port == $port" -w "$tmp/$name.pcap" -F pcap
	gzip -9 -n -c "$tmp/$name.pcap" >"$out/$name.pcap.gz"
	echo "wrote $out/$name.pcap.gz ($(stat -c %s "$out/$name.pcap.gz") bytes)"
done
