#!/usr/bin/env bash
# make soak: the long soak of issue 8: 64 QPs between two guests, mixed
# Send/Write/Read, data verified end to end, module refcount and slab caches
# compared before/after, bounded time (SOAK_SECS, default 600 s of load),
# then a churn of SOAK_CONNS (default 10000) connections.
# The same scenario runs short in make check (tests/suites/85-soak.sh).
# SOAK_DEV=siw runs it on upstream siw as a control.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export BUILD=${BUILD:-$top/build} SWIWARP_TOP=$top
cd "$top" || exit 1
SOAK_SECS=${SOAK_SECS:-600} SOAK_CONNS=${SOAK_CONNS:-10000} tests/suites/85-soak.sh | tee "${TMPDIR:-/tmp}/soak-results.$$"
! grep -q '^FAIL:' "${TMPDIR:-/tmp}/soak-results.$$"
rc=$?
grep -q '^PASS: soak.run.client' "${TMPDIR:-/tmp}/soak-results.$$" || rc=1
rm -f "${TMPDIR:-/tmp}/soak-results.$$"
exit $rc
