#!/bin/bash
# MPA markers (RFC 5044) in swiwarp: one 3-guest lab boot (guest side:
# tests/swiwarp/markers-scenario.sh; guests 1 and 2 swiwarp, guest 3
# upstream siw): rping, data-verify and perftest with markers both ways,
# one way, without CRC, and the connection failures against siw.  The link
# capture is then checked by tests/swiwarp/markers-check.py, which walks
# every FPDU itself: a marker every 512 octets with the right FPDUPTR, CRCs
# over the marked octets, markers only in the directions that asked.
# MARKERS_GOLDEN=1 also writes the port-7190 exchange (rping 20 KB, markers
# both ways, CRC on) to tests/dissector/captures/swiwarp_markers.pcap.gz.
# The lab's dmesg scanner fails a run on any kernel warning or lockup.
# Guest 2 boots Debian 13's 6.12 (issue 16), guests 1 and 3 Debian 12's
# 6.1: markers between swiwarp on 6.1 and on 6.12 both ways, inserted only
# by the 6.12 side (oneway) and without CRC; the raw peer's broken markers
# and siw's refusals still meet swiwarp on 6.1 (guest 1), and siw stays
# on the kernel it is built for here.  The guests' result names start
# with "g1-6.1,g2-6.12,g3-6.1/" (Documentation/lab.md "Kernels").
set -uo pipefail
# One vCPU per guest: a functional suite, about 15-35 % faster so (Documentation/lab.md,
# "The time budget of make check"); LAB_SMP overrides it.
export LAB_SMP=${LAB_SMP:-1}
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/swiwarp/suite-lib.sh
source "$top/tests/swiwarp/suite-lib.sh"
swiwarp_suite_start swiwarp-markers "$BUILD/lab/suite-markers" || exit 0
# siw for guest 3's 6.1, built here (a no-op when up to date): with mixed
# kernels lab run gets LAB_NO_SIW=1, or it would build siw for 6.12, which
# no guest loads.
"$top/tests/lab/build-siw.sh" >"$out/build-siw.log" 2>&1
if [ ! -f "$BUILD/siw/siw.ko" ]; then
	skip swiwarp-markers/lab "upstream siw not built ($BUILD/siw/siw.ko, see $out/build-siw.log)"
	exit 0
fi
build_data_verify || exit 1
mixed_kernels 6.1,6.12,6.1 || exit 1
nosiw=0
[ -n "$ktag" ] && nosiw=1

pcap=$out/markers.pcap
echo "=== lab run markers"
LAB_NO_SIW=$nosiw "$lab" run -n 3 --kernel "$kmix" --name swiwarp-markers --out "$out/run" \
	--capture "$pcap" --timeout 900 \
	-- LAB_RESULT_PREFIX="$ktag" tests/swiwarp/markers-scenario.sh "$verify" >"$out/run.log" 2>&1
rc=$?
grep -v '^\(PASS\|FAIL\|SKIP\):' "$out/run.log" | sed 's/^/  /' | cut -c1-300
grep -E '^(PASS|FAIL|SKIP):' "$out/run.log"
fails=$((fails + $(grep -c '^FAIL:' "$out/run.log")))
if [ $rc -ne 0 ] && ! grep -q '^FAIL:' "$out/run.log"; then
	fail swiwarp-markers/run "lab run exited $rc without saying why"
fi

# The wire, checked by our own walker (not the module, not the plugin).
if [ ! -s "$pcap" ]; then
	fail swiwarp-markers/wire "no capture at $pcap"
else
	python3 "$top/tests/swiwarp/markers-check.py" "$pcap" -7290 -7291 >"$out/check.log" 2>&1
	crc=$?
	sed 's/^/  /' "$out/check.log" | cut -c1-200 | head -n 60
	# markers must be on in both directions of the "both" exchanges, in
	# exactly one of the "oneway" ones, and seen with CRC off too
	on=$(grep -c 'markers on, CRC on: [1-9][0-9]* FPDUs, [1-9]' "$out/check.log")
	nocrc=$(grep -c 'markers on, CRC off: [1-9][0-9]* FPDUs, [1-9]' "$out/check.log")
	off=$(grep -c 'markers off, CRC on: [1-9][0-9]* FPDUs, 0 markers' "$out/check.log")
	if [ $crc -eq 0 ] && [ "$on" -ge 10 ] && [ "$nocrc" -ge 4 ] && [ "$off" -ge 2 ]; then
		pass swiwarp-markers/wire
	else
		fail swiwarp-markers/wire "checker exit $crc; directions with markers+CRC $on (want >= 10), markers without CRC $nocrc (>= 4), unmarked $off (>= 2)"
	fi
	if [ "${MARKERS_GOLDEN:-0}" = 1 ]; then
		g=$top/tests/dissector/captures/swiwarp_markers
		tshark -r "$pcap" -Y 'tcp.port == 7190' -w "$out/golden.pcap" -F pcap &&
			gzip -9 -n -c "$out/golden.pcap" >"$g.pcap.gz" &&
			echo "wrote $g.pcap.gz ($(stat -c %s "$g.pcap.gz") bytes)"
	fi
	[ $fails -eq 0 ] && rm -f "$pcap"	# large; kept only when something failed
fi
[ $fails -eq 0 ]
