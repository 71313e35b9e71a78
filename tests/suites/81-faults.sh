#!/usr/bin/env bash
# Fault matrix of issue 8 in one 2-guest lab boot (tests/robust/faults-guest.sh,
# load from tests/soak/soak.c): peer vanished (all its frames dropped, like a
# power-off), peer process killed, link down/up, rmmod with live QPs, rdma
# link delete with live QPs, the netdev (a macvlan) deleted under a device.
# Each: the error reaches the app, every outstanding WR completes (flush),
# nothing hangs, the module unloads, no kernel warning.  Results are
# recorded in Documentation/robustness.md.
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
export BUILD=${BUILD:-$top/build} SWIWARP_TOP=$top
cd "$top" || exit 1
source tests/robust/suite-lib.sh
robust_prereq faults "$BUILD/tools/hostile/swiwarp-soak" || exit 0
robust_lab faults "${FAULTS_TIMEOUT:-1800}" 1024 "tests/robust/faults-guest.sh"
exit 0
