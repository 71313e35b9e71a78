#!/usr/bin/env bash
# make demo: two lab guests joined by one virtual link talk iWARP with
# unmodified Debian tools (rping, ib_write_bw, ib_read_bw) and our
# examples/hello-iwarp; the link is captured and dissected by tshark with
# OUR Wireshark plugin (dissector/, run as an unprivileged user with the
# plugin in a temporary personal plugin folder).
#
#   DEMO_DRIVER=swiwarp  our kernel/swiwarp.ko and libswiwarp provider (default)
#   DEMO_DRIVER=siw      upstream Linux siw, built out of tree
#   DEMO_READ_BW=0|1     run ib_read_bw -R (default 1)
#   DEMO_OUT=dir         where the capture and logs go (build/demo)
#   DEMO_REUSE=1         no lab run: show the summary of the run already in DEMO_OUT
#   DEMO_JOIN=0          leave out the DPI flows join (tests/flows/demo-join.sh)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export BUILD=${BUILD:-$top/build}
driver=${DEMO_DRIVER:-swiwarp}
out=${DEMO_OUT:-$BUILD/demo}
pcap=$out/link.pcap
plugin=$BUILD/plugins/4.0/epan/swiwarp.so

case $driver in
siw)
	what="UPSTREAM LINUX siw (the reference peer, built from linux-source-6.1) - this is NOT swiwarp"
	;;
swiwarp)
	what="swiwarp (kernel/swiwarp.ko + libswiwarp)"
	;;
*) echo "demo: DEMO_DRIVER must be swiwarp or siw" >&2; exit 2 ;;
esac
read_bw=${DEMO_READ_BW:-1}

rule() { printf '%s\n' "=========================================================================="; }
rule
echo "swiwarp demo: two QEMU guests, one link (192.0.2.1 <-> 192.0.2.2), iWARP over TCP"
echo "RDMA driver in both guests: $what"
echo "(DEMO_DRIVER=siw runs the same with upstream siw)"
[ "$read_bw" = 1 ] || echo "ib_read_bw is left out (DEMO_READ_BW=0)"
rule
if [ "${DEMO_REUSE:-0}" = 1 ] && [ -f "$out/lab.log" ]; then
	echo "(DEMO_REUSE=1: showing the earlier run in $out)"
	grep -q '^lab: .* ok in' "$out/lab.log"
	rc=$?
else
	rm -rf "$out"
	mkdir -p "$out"
	echo "booting the guests (TCG, takes a minute or two)..."
	"$top/tests/lab/lab" run -n 2 --name demo --capture "$pcap" --out "$out/run" --timeout 600 -- \
		tests/lab/scenarios/demo.sh "$driver" "$read_bw" >"$out/lab.log" 2>&1
	rc=$?
fi

echo
echo "== what ran (guest 1 = server, guest 2 = client)"
grep -E '^(PASS|FAIL|SKIP):' "$out/lab.log" | sed 's/^/   /'
echo
echo "== rping (client side, verified payloads)"
grep -a 'ping data' "$out/run/g2/demo/rping.log" 2>/dev/null | cut -c1-76 | sed 's/^/   /'
if [ -s "$out/run/g2/demo/hello.log" ]; then
	echo
	echo "== hello-iwarp (examples/hello-iwarp: Write, Read back, Send)"
	cat "$out/run/g1/demo/hello.log" "$out/run/g2/demo/hello.log" 2>/dev/null | sed 's/^/   /'
fi
for t in write_bw read_bw; do
	[ -f "$out/run/g2/demo/$t.log" ] || continue
	echo
	echo "== ib_$t -R, 64 KiB messages (client side; TCG guests, not a benchmark)"
	grep -aE '#bytes|^ *65536 ' "$out/run/g2/demo/$t.log" 2>/dev/null | sed 's/^/   /'
done

# tshark with our plugin: as root tshark ignores personal plugin folders,
# so run it as nobody with a temporary HOME holding the plugin.
ts_home=$(mktemp -d /tmp/swiwarp-demo.XXXXXX)
trap 'rm -rf "$ts_home"' EXIT
mkdir -p "$ts_home/.local/lib/wireshark/plugins/4.0/epan"
runas=()
[ "$(id -u)" -eq 0 ] && runas=(setpriv --reuid=65534 --regid=65534 --clear-groups)
ts() { (cd / && "${runas[@]}" env HOME="$ts_home" tshark "$@" 2>/dev/null); }

echo
if [ -s "$pcap" ] && [ -f "$plugin" ]; then
	install -m 644 "$plugin" "$ts_home/.local/lib/wireshark/plugins/4.0/epan/"
	cp "$pcap" "$ts_home/link.pcap"
	chmod -R a+rX "$ts_home"
	cap=$ts_home/link.pcap
	echo "== capture: $pcap ($(stat -c %s "$pcap") bytes), decoded by our plugin ($(
		ts -G plugins | awk '$1 == "swiwarp.so" { print $1, $2 }'))"
	echo
	echo "-- protocol hierarchy (tshark -z io,phs)"
	ts -r "$cap" -q -z io,phs | sed -n '/^eth/,/^====/p' | sed '$d' | sed 's/^/   /'
	echo
	echo "-- iWARP messages (each DDP segment counted, also several per TCP segment)"
	ts -r "$cap" -T fields -e mpa.req -e mpa.rep -e rdmap.opcode -e mpa.crc.status -E occurrence=a \
		>"$ts_home/fields.txt"
	opc() { cut -f3 "$ts_home/fields.txt" | tr ',' '\n' | grep -c "^$1\$"; }
	printf '   %-30s %s\n' \
		"MPA Request / Reply" "$(cut -f1 "$ts_home/fields.txt" | grep -c 1) / $(cut -f2 "$ts_home/fields.txt" | grep -c 1)" \
		"RDMAP Send" "$(opc 0x03)" \
		"RDMAP RDMA Write" "$(opc 0x00)" \
		"RDMAP Read Request" "$(opc 0x01)" \
		"RDMAP Read Response" "$(opc 0x02)" \
		"RDMAP Terminate" "$(opc 0x07)" \
		"FPDUs with a good CRC32c" "$(cut -f4 "$ts_home/fields.txt" | tr ',' '\n' | grep -c '^1$')" \
		"FPDUs with a BAD CRC32c" "$(cut -f4 "$ts_home/fields.txt" | tr ',' '\n' | grep -c '^0$')" \
		"malformed frames" "$(ts -r "$cap" -Y _ws.malformed | grep -c .)"
	echo
	echo "-- the rping connection, first decoded frames"
	ts -r "$cap" -Y 'tcp.port == 7174 && (mpa || rdmap)' | head -n 12 | cut -c1-118 | sed 's/^/   /'
	echo
	echo "-- RDMA Reads matched to their Responses (rping + hello-iwarp; tshark -2)"
	ts -2 -r "$cap" -Y '(tcp.port == 7174 || tcp.port == 7471) && rdmap.read.time' -T fields \
		-e rdmap.read.request_in -e frame.number -e rdmap.read.time -e rddp.stag -E occurrence=l |
		awk -F'\t' 'BEGIN { printf "   %-16s %-16s %-22s %s\n", "request frame", "response frame", "response time (s)", "sink STag" }
			{ printf "   %-16s %-16s %-22s %s\n", $1, $2, $3, $4 }'
	echo
	echo "-- one RDMA Read Request in detail"
	ts -r "$cap" -Y 'tcp.port == 7174 && rdmap.opcode == 1' -O mpa,rddp,rdmap -c 100000 |
		awk '/^Frame /{n++} n==1' | sed -n '/^iWARP MPA/,$p' | head -n 40 | sed 's/^/   /'
	ts -r "$cap" -Y 'tcp.port == 7471 && rdmap.opcode == 0 && rddp.payload_len > 0' -T fields \
		-e frame.number -e rddp.stag -e rddp.to -e rdmap.payload >"$ts_home/hello.txt"
	if [ -s "$ts_home/hello.txt" ]; then
		echo
		echo "-- hello-iwarp's RDMA Write (frame, STag, TO, payload as text)"
		while IFS=$'\t' read -r fr stag to pl; do
			printf '   %s  %s  %s  "%s"\n' "$fr" "$stag" "$to" "$(echo "$pl" | xxd -r -p | tr -d '\0')"
		done <"$ts_home/hello.txt"
	fi
	echo
	echo "-- per-connection statistics (tshark -q -z rdmap,tree)"
	ts -2 -r "$cap" -q -z rdmap,tree |
		awk '/^Topic/ { on = 1 } on && /^-----/ { if (++dash == 2) exit; next } on' |
		cut -c1-108 | sed 's/^/   /'
elif [ -s "$pcap" ]; then
	echo "== capture $pcap written, but the plugin $plugin is not built (make all)"
	rc=1
else
	echo "== no capture was written ($pcap)"
	rc=1
fi

# DPI flows: a distributed join in three more guests, when it exists
# (tests/flows/demo-join.sh: on swiwarp, falling back to rxe and saying so).
if [ -x "$top/tests/flows/demo-join.sh" ] && [ "${DEMO_JOIN:-1}" = 1 ]; then
	echo
	"$top/tests/flows/demo-join.sh" 2>&1 | sed 's/^/   /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "   demo-join FAILED"; rc=1; }
fi

echo
rule
if [ $rc -eq 0 ] && ! grep -q '^FAIL:' "$out/lab.log"; then
	echo "demo: OK with $driver. Logs: $out/lab.log, guest logs: $out/run/"
	echo "open the capture: wireshark $pcap   (install the plugin: make install)"
else
	echo "demo: FAILED (lab run exit $rc). Details: $out/lab.log"
	grep '^FAIL:' "$out/lab.log" | sed 's/^/   /'
	rc=1
fi
rule
exit $rc
