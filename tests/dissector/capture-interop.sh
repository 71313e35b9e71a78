#!/usr/bin/env bash
# Golden captures of swiwarp <-> upstream siw interoperation: hello-iwarp in
# its own 3-guest lab (examples/hello-iwarp/lab-guest.sh), cut by port into
#   tests/dissector/captures/interop_siw_to_swiwarp.pcap.gz  (port 7473)
#   tests/dissector/captures/interop_swiwarp_to_siw.pcap.gz  (port 7474)
#   tests/dissector/capture-interop.sh [EXISTING.pcap]
# With a capture of that lab given, no lab is booted.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/tests/dissector/captures
export BUILD=${BUILD:-$top/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
raw=${1:-}
if [ -z "$raw" ]; then
	raw=$tmp/raw.pcap
	"$top/tests/lab/lab" run -n 3 --name dissector-golden-interop --capture "$raw" \
		--timeout 600 -- examples/hello-iwarp/lab-guest.sh
fi
for pair in siw_to_swiwarp:7473 swiwarp_to_siw:7474; do
	name=interop_${pair%%:*}
	port=${pair##*:}
	tshark -r "$raw" -Y "tcp.port == $port" -w "$tmp/$name.pcap" -F pcap
	gzip -9 -n -c "$tmp/$name.pcap" >"$out/$name.pcap.gz"
	echo "wrote $out/$name.pcap.gz ($(stat -c %s "$out/$name.pcap.gz") bytes)"
done
