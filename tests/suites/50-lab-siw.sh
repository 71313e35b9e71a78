#!/usr/bin/env bash
# Upstream siw (built out of tree from linux-source-6.1) in lab guests with
# unmodified Debian RDMA tools: devices, rping, ib_write_bw, the capture
# dissected by tshark; plus the one-guest (loopback) case and three guests on
# a hub, all in one three-guest boot.
# This proves the lab and gives swiwarp its reference peer.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/swiwarp/suite-lib.sh
source "$top/tests/swiwarp/suite-lib.sh"
scen=tests/lab/scenarios/siw.sh
suite=lab-siw out=$BUILD/lab/suite-siw
rm -rf "$out"
mkdir -p "$out"

# build-siw.sh is what `lab run` calls too; do it here to report it as a test.
if "$top/tests/lab/build-siw.sh" >"$out/build-siw.log" 2>&1; then
	pass "lab-siw/build-upstream-siw"
else
	fail "lab-siw/build-upstream-siw" "see $out/build-siw.log"
	exit 1
fi

# tshark_count PCAP FILTER: number of frames matching FILTER.
tshark_count() {
	tshark -r "$1" -Y "$2" 2>/dev/null | wc -l
}

# One boot of three guests on a hub does the single case (guest 1), the
# pair case (guests 1 and 2) and the trio case; the capture on guest 1's hub
# port sees every frame of the segment.
pcap=$out/trio.pcap
run_lab trio -n 3 --capture "$pcap" --timeout 900 -- "$scen" trio
if [ -s "$pcap" ]; then
	tshark -r "$pcap" -q -z io,phs 2>/dev/null | sed 's/^/  /'
	# What the pair case's rping and ib_write_bw must have put on the wire,
	# on their ports only (the trio case's rpings use 7182 and 7183).
	# Wireshark's built-in dissector finds MPA by heuristics, at the start
	# of segments.
	pairport='tcp.port in {7174, 7175, 18515} && '
	checks=(
		"mpa-request:iwarp_mpa.key.req"
		"mpa-reply:iwarp_mpa.key.rep"
		"rdmap-send:iwarp_rdma.opcode == 3 || iwarp_rdma.opcode == 5"
		"rdmap-write:iwarp_rdma.opcode == 0"
		"rdmap-read-request:iwarp_rdma.opcode == 1"
		"rdmap-read-response:iwarp_rdma.opcode == 2"
	)
	for c in "${checks[@]}"; do
		n=$(tshark_count "$pcap" "$pairport(${c#*:})")
		if [ "$n" -gt 0 ]; then
			pass "lab-siw/capture-${c%%:*}"
			echo "  ${c%%:*}: $n frames"
		else
			fail "lab-siw/capture-${c%%:*}" "no frame matches '$pairport(${c#*:})' in $pcap"
		fi
	done
else
	fail "lab-siw/capture" "no capture at $pcap"
fi
# Both trio clients' MPA handshakes, on their own ports.
for g in 2 3; do
	n=$(tshark_count "$pcap" "ip.src == 192.0.2.$g && tcp.port == 718$g && iwarp_mpa.key.req")
	if [ "$n" -gt 0 ]; then pass "lab-siw/trio-capture-mpa-request-from-g$g"
	else fail "lab-siw/trio-capture-mpa-request-from-g$g" "none in $pcap"; fi
done

[ "$fails" -eq 0 ]
