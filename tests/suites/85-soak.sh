#!/usr/bin/env bash
# Short soak (make check): 64 QPs between two swiwarp guests, mixed
# Send/Write/Read for SOAK_SECS (default 60) seconds, every byte verified,
# then SOAK_CONNS (default 1000) connections opened and closed one after the
# other; module refcount and slab caches back to their baseline; clean rmmod.
# The long one is `make soak` (tests/soak/run.sh).
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
export BUILD=${BUILD:-$top/build} SWIWARP_TOP=$top
cd "$top" || exit 1
source tests/robust/suite-lib.sh
robust_prereq soak "$BUILD/tests/soak/swiwarp-soak" || exit 0
# Allocation tracking on every kmalloc cache, so the leak check counts the
# objects each call site holds instead of estimating from /proc/slabinfo
# (tests/robust/slab-lib.sh, slab_sites; Documentation/robustness.md).
export LAB_APPEND="slub_debug=U,kmalloc-*${LAB_APPEND:+ $LAB_APPEND}"
cmd="SOAK_QP=${SOAK_QP:-64} SOAK_SECS=${SOAK_SECS:-60} SOAK_CONNS=${SOAK_CONNS:-1000} "
[ -n "${SOAK_DEV:-}" ] && cmd+="SOAK_DEV=$(printf '%q' "$SOAK_DEV") "
# The lab timeout: the load phase, 420 s for boots, warm-up and checks, and
# 120 ms per churned connection (one rdma_cm + one TCP connect took 30 ms
# in make check at load 3, 63 ms in a 10,000 churn at load 6-7).
robust_lab soak "$((${SOAK_SECS:-60} + 420 + ${SOAK_CONNS:-1000} * 120 / 1000))" 1024 "${cmd}tests/soak/lab-guest.sh"
exit 0
