#!/usr/bin/env bash
# make demo: two lab guests joined by one virtual link talk iWARP with
# unmodified Debian tools (rping, ib_write_bw, ib_read_bw); the link is
# captured and the capture dissected by tshark.
#
#   DEMO_DRIVER=siw      upstream Linux siw, built out of tree (default for
#                        now: swiwarp is not ready yet)
#   DEMO_DRIVER=swiwarp  our kernel/swiwarp.ko and libswiwarp provider
#   DEMO_OUT=dir         where the capture and logs go (build/demo)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export BUILD=${BUILD:-$top/build}
driver=${DEMO_DRIVER:-siw}
out=${DEMO_OUT:-$BUILD/demo}
pcap=$out/link.pcap

case $driver in
siw) what="UPSTREAM LINUX siw (the reference peer, built from linux-source-6.1) - this is NOT swiwarp" ;;
swiwarp) what="swiwarp (kernel/swiwarp.ko + libswiwarp)" ;;
*) echo "demo: DEMO_DRIVER must be siw or swiwarp" >&2; exit 2 ;;
esac

rule() { printf '%s\n' "=========================================================================="; }
rule
echo "swiwarp demo: two QEMU guests, one link (192.0.2.1 <-> 192.0.2.2), iWARP over TCP"
echo "RDMA driver in both guests: $what"
echo "(set DEMO_DRIVER=swiwarp to use ours)"
rule
rm -rf "$out"
mkdir -p "$out"
echo "booting the guests (TCG, takes a minute or two)..."
"$top/tests/lab/lab" run -n 2 --name demo --capture "$pcap" --out "$out/run" --timeout 600 -- \
	tests/lab/scenarios/demo.sh "$driver" >"$out/lab.log" 2>&1
rc=$?

echo
echo "== what ran (guest 1 = server, guest 2 = client)"
grep -E '^(PASS|FAIL|SKIP):' "$out/lab.log" | sed 's/^/   /'
echo
echo "== rping (client side, verified payloads)"
grep -a 'ping data' "$out/run/g2/demo/rping.log" 2>/dev/null | cut -c1-76 | sed 's/^/   /'
for t in write_bw read_bw; do
	echo
	echo "== ib_$t -R, 64 KiB messages (client side; TCG guests, not a benchmark)"
	grep -aE '#bytes|^ *65536 ' "$out/run/g2/demo/$t.log" 2>/dev/null | sed 's/^/   /'
done

echo
if [ -s "$pcap" ]; then
	echo "== capture: $pcap ($(stat -c %s "$pcap") bytes)"
	echo
	echo "-- protocol hierarchy (tshark -z io,phs)"
	# (cut at depth 5: the heuristic dissector nests MPA in MPA in odd frames)
	tshark -r "$pcap" -q -z io,phs 2>/dev/null | sed -n '/^eth/,/^====/p' | sed '$d' |
		awk 'match($0, /^ */) && RLENGTH <= 10' | sed 's/^/   /'
	echo
	echo "-- iWARP message counts"
	count() { tshark -r "$pcap" -Y "$1" 2>/dev/null | wc -l; }
	printf '   %-28s %s\n' \
		"MPA Request" "$(count iwarp_mpa.key.req)" \
		"MPA Reply" "$(count iwarp_mpa.key.rep)" \
		"RDMAP Send (all kinds)" "$(count 'iwarp_rdma.opcode == 3 || iwarp_rdma.opcode == 4 || iwarp_rdma.opcode == 5 || iwarp_rdma.opcode == 6')" \
		"RDMAP Write" "$(count 'iwarp_rdma.opcode == 0')" \
		"RDMAP Read Request" "$(count 'iwarp_rdma.opcode == 1')" \
		"RDMAP Read Response" "$(count 'iwarp_rdma.opcode == 2')" \
		"RDMAP Terminate" "$(count 'iwarp_rdma.opcode == 7')"
	echo "   (frames in which Wireshark's built-in heuristic dissector found an MPA FPDU"
	echo "    at the start of a TCP segment; FPDUs in the middle of segments are not counted)"
	echo
	echo "-- the rping connection, first decoded frames"
	tshark -r "$pcap" -Y 'tcp.port == 7174 && iwarp_mpa' 2>/dev/null | head -n 10 | cut -c1-110 | sed 's/^/   /'
	echo
	echo "-- one RDMA Read Request in detail"
	tshark -r "$pcap" -Y 'iwarp_rdma.opcode == 1' -O iwarp_mpa,iwarp_ddp_rdmap -c 100000 2>/dev/null |
		awk '/^Frame /{n++} n==1' | sed -n '/iWARP Marker/,$p' | head -n 30 | sed 's/^/   /'
else
	echo "== no capture was written ($pcap)"
	rc=1
fi
echo
rule
if [ $rc -eq 0 ] && ! grep -q '^FAIL:' "$out/lab.log"; then
	echo "demo: OK with $driver. Logs: $out/lab.log, guest logs: $out/run/"
	echo "open the capture: wireshark $pcap   or   tshark -r $pcap -Y iwarp_mpa"
else
	echo "demo: FAILED (lab run exit $rc). Details: $out/lab.log"
	grep '^FAIL:' "$out/lab.log" | sed 's/^/   /'
	rc=1
fi
rule
exit $rc
