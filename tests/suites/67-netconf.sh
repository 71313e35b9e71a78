#!/bin/bash
# Wildcard listens with several RDMA devices per host (issue 21), one
# 2-guest lab boot with two links (--nics 2): in each guest swiwarp0 on
# eth0 and swiwarp1 on the VLAN eth0.100; on the second NIC eth1 swiwarp2
# (guest 1, the server) and upstream siw (guest 2, the client).  Wildcard
# servers (rping -P, ucmatose, rdma_server, ib_write_bw -R) on guest 1 are
# reached through each device's addresses, IPv4 and IPv6 (global,
# link-local, v4-mapped), with data verified where the tool allows;
# addresses added and removed during a listen; an MTU change on a live
# link (1500 -> 9000 -> 1500: the old connection keeps moving verified
# data, new ones follow the new MSS by the device counters); a device of
# each guest in a network namespace with applications there (part netns,
# tests/swiwarp/netconf-netns.sh); an active-backup bond over both NICs
# with swiwarp on bond0, failed over under a connection by pulling the
# active slave's cable and back (part bond, tests/swiwarp/netconf-bond.sh;
# the host pulls it: lab_cable); no listener left and a clean unload at
# the end.  Guest side: tests/swiwarp/netconf-scenario.sh.
# The scenario runs twice, in two boots side by side: on 6.1 and on 6.12.
# The lab's dmesg scanner fails the run on any kernel warning.
set -uo pipefail
# One vCPU per guest: a functional suite, about 15-35 % faster so (Documentation/lab.md,
# "The time budget of make check"); LAB_SMP overrides it.
export LAB_SMP=${LAB_SMP:-1}
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/swiwarp/suite-lib.sh
source "$top/tests/swiwarp/suite-lib.sh"
swiwarp_suite_start netconf "$BUILD/lab/suite-netconf" || exit 0
if [ ! -f "$BUILD/siw/siw.ko" ] && ! "$top/tests/lab/build-siw.sh" >"$out/build-siw.log" 2>&1; then
	skip netconf/lab "upstream siw not built ($BUILD/siw/siw.ko, tests/lab/build-siw.sh)"
	exit 0
fi
# Two boots side by side: both guests on Debian 12's 6.1, and both on
# Debian 13's 6.12 (issue 21 asks for every supported kernel; names start
# with g1-6.12,g2-6.12/).  lab run builds upstream siw for 6.12 before
# that boot (about 100 s of one core in a clean tree), while the 6.1
# boot runs.
mixed_kernels 6.12,6.12 || exit 1
t0=$(date +%s)
run_lab_start multi -n 2 --nics 2 --timeout 900 -- tests/swiwarp/netconf-scenario.sh
[ -n "$ktag" ] && run_lab_start multi-k612 -n 2 --nics 2 --kernel "$kmix" --timeout 900 \
	-- LAB_RESULT_PREFIX="$ktag" tests/swiwarp/netconf-scenario.sh
run_lab_end multi
[ -n "$ktag" ] && run_lab_end multi-k612
echo "netconf: $(($(date +%s) - t0)) s"
[ $fails -eq 0 ]
