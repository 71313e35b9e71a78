#!/usr/bin/env bash
# check: background (mostly waits on its guests: runs alongside the host-only suites)
# Fault matrix of issue 8 in one 2-guest lab boot (tests/robust/faults-guest.sh,
# load from tests/soak/soak.c): peer vanished (all its frames dropped, like a
# power-off), peer process killed, link down/up, rmmod with live QPs, rdma
# link delete with live QPs, the netdev (a macvlan) deleted under a device.
# Each: the error reaches the app, every outstanding WR completes (flush),
# nothing hangs, the module unloads, no kernel warning.  Results are
# recorded in Documentation/robustness.md.
# Guest 2 (the clients: errors and flushes reach the app, the link flap,
# its rmmod) boots Debian 13's 6.12, guest 1 (the servers and the device
# removals: rmmod refused, rdma link delete, macvlan deleted) stays on 6.1;
# the names start with "g1-6.1,g2-6.12/" (Documentation/lab.md "Kernels").
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
export BUILD=${BUILD:-$top/build} SWIWARP_TOP=$top
cd "$top" || exit 1
source tests/robust/suite-lib.sh
robust_prereq faults "$BUILD/tests/soak/swiwarp-soak" || exit 0
robust_mixed faults swiwarp || exit 0
robust_lab faults 1800 1024 "tests/robust/faults-guest.sh"
exit 0
