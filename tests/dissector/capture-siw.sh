#!/usr/bin/env bash
# Regenerate a golden capture of real upstream Linux siw traffic: two lab
# guests run rping (Send, RDMA Read Request/Response, RDMA Write per ping),
# captured on the link; only the TCP frames are kept so the file stays small,
# and OUT ending in .gz is compressed (tshark reads .pcap.gz directly).
#   tests/dissector/capture-siw.sh [OUT [COUNT [SIZE]]]
# The committed goldens were made with:
#   capture-siw.sh tests/dissector/captures/siw_rping.pcap 4 200
#   capture-siw.sh tests/dissector/captures/siw_rping_20k.pcap.gz 2 20000
# Needs the lab (tests/lab/lab), which builds siw out of tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/dissector/captures/siw_rping.pcap}
count=${2:-4}
size=${3:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$top/tests/lab/lab" run -n 2 --name dissector-golden --capture "$tmp/raw.pcap" --timeout 300 -- "
  source tests/lab/lib.sh; lab_load_siw || exit 1; lab_barrier up
  if [ \$LAB_ID = 1 ]; then rping -s -a \$LAB_IP -C $count -S $size & lab_wait_listen 7174; lab_barrier go; wait \$!
  else lab_barrier go; rping -c -a \$LAB_PEER_IP -C $count -S $size; fi"
case $out in
*.gz)
	tshark -r "$tmp/raw.pcap" -Y tcp -w "$tmp/tcp.pcap" -F pcap
	gzip -9 -c "$tmp/tcp.pcap" >"$out"
	;;
*) tshark -r "$tmp/raw.pcap" -Y tcp -w "$out" -F pcap ;;
esac
echo "wrote $out ($(stat -c %s "$out") bytes)"
