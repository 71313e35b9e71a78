#!/bin/bash
# swiwarp.ko in lab guests with unmodified Debian RDMA tools, two boots:
#   pair     swiwarp <-> swiwarp: device checks, rping (64 B with CRC,
#            1000 B without), examples/hello-iwarp (13 B and 100000 B),
#            rdma link delete, rmmod; the capture is checked with tshark
#            (MPA frames, RDMAP Send/Write/Read)
#   interop  upstream siw (guest 1) <-> swiwarp (guest 2): rping 64 B and
#            hello-iwarp with either side as server, ib_write_bw -R
#            (swiwarp client)
# Known bugs are reported as SKIP with a reason (Documentation/kernel.md).
# Guest side: tests/swiwarp/scenario.sh.
set -uo pipefail
# One vCPU per guest: a functional suite, about 15-35 % faster so (Documentation/lab.md,
# "The time budget of make check"); LAB_SMP overrides it.
export LAB_SMP=${LAB_SMP:-1}
top=$(cd "$(dirname "$0")/../.." && pwd)
scen=tests/swiwarp/scenario.sh
# shellcheck source=tests/swiwarp/suite-lib.sh
source "$top/tests/swiwarp/suite-lib.sh"
swiwarp_suite_start swiwarp "$BUILD/lab/suite-swiwarp" || exit 0

pcap=$out/pair.pcap
# Both boots side by side (suite-lib.sh, run_lab_start).
run_lab_start pair -n 2 --capture "$pcap" --timeout 700 -- "$scen" pair
run_lab_start interop -n 2 --timeout 700 -- "$scen" interop
run_lab_end pair
if [ -s "$pcap" ]; then
	# What the pair run must have put on the wire, as Wireshark's own
	# iWARP dissectors see it (an independent check of our framing).
	for c in "mpa-request:iwarp_mpa.key.req" "mpa-reply:iwarp_mpa.key.rep" \
		"rdmap-send:iwarp_rdma.opcode == 3 || iwarp_rdma.opcode == 5" \
		"rdmap-write:iwarp_rdma.opcode == 0" \
		"rdmap-read-request:iwarp_rdma.opcode == 1" \
		"rdmap-read-response:iwarp_rdma.opcode == 2"; do
		n=$(tshark -r "$pcap" -Y "${c#*:}" 2>/dev/null | wc -l)
		if [ "$n" -gt 0 ]; then pass "swiwarp/pcap-${c%%:*}"
		else fail "swiwarp/pcap-${c%%:*}" "no frame matches '${c#*:}'"; fi
	done
else
	fail swiwarp/pcap "no capture at $pcap"
fi

run_lab_end interop

[ $fails -eq 0 ]
