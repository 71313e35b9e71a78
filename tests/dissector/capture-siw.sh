#!/usr/bin/env bash
# Regenerate the golden capture tests/dissector/captures/siw_rping.pcap:
# two lab guests with upstream Linux siw run rping (4 pings of 200 bytes:
# Send, RDMA Read Request/Response, RDMA Write), captured on the link, and
# only the TCP frames are kept (no IPv6 chatter) so the file stays small.
# Needs the lab (tests/lab/lab) and a built siw (the lab builds it).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/tests/dissector/captures/siw_rping.pcap}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$top/tests/lab/lab" run -n 2 --name dissector-golden --capture "$tmp/raw.pcap" --timeout 300 -- '
  source tests/lab/lib.sh; lab_load_siw || exit 1; lab_barrier up
  if [ $LAB_ID = 1 ]; then rping -s -a $LAB_IP -C 4 -S 200 -v & lab_wait_listen 7174; lab_barrier go; wait $!
  else lab_barrier go; rping -c -a $LAB_PEER_IP -C 4 -S 200 -v; fi'
tshark -r "$tmp/raw.pcap" -Y tcp -w "$out" -F pcap
echo "wrote $out ($(stat -c %s "$out") bytes)"
