#!/usr/bin/env bash
# make soak: the long soak of issue 8: 64 QPs between two guests, mixed
# Send/Write/Read, data verified end to end, module refcount and slab caches
# compared before/after, bounded time (SOAK_SECS, default 600 s of load),
# then a churn of SOAK_CONNS (default 10000) connections (SOAK_VERBS=0
# leaves this part out); then NVMe over Fabrics with 2 GiB verified each
# way (below).
# The same scenario runs short in make check (tests/suites/85-soak.sh).
# SOAK_DEV=siw runs it on upstream siw as a control.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
export BUILD=${BUILD:-$top/build} SWIWARP_TOP=$top
cd "$top" || exit 1
res=${TMPDIR:-/tmp}/soak-results.$$
if [ "${SOAK_VERBS:-1}" != 0 ]; then
	SOAK_SECS=${SOAK_SECS:-600} SOAK_CONNS=${SOAK_CONNS:-10000} tests/suites/85-soak.sh | tee "$res"
fi
# NVMe over Fabrics (issue 14): fio verify runs of SOAK_NVMEOF_MIB MiB x
# SOAK_NVMEOF_PASSES (1024 x 2: 2 GiB each way by default) between two swiwarp
# guests (tests/soak/nvmeof-guest.sh); SOAK_NVMEOF=0 leaves it out.  The
# lab timeout allows 2 MiB/s for both ways together; one pass (1024 MiB
# written and read back) took 432 s, 4.7 MiB/s, at host load 6-7.
if [ "${SOAK_NVMEOF:-1}" != 0 ]; then
	source tests/robust/suite-lib.sh
	mib=${SOAK_NVMEOF_MIB:-1024} passes=${SOAK_NVMEOF_PASSES:-2}
	robust_lab soak-nvmeof $((600 + mib * 2 * passes / 2)) $(((mib + 1023) / 1024 * 1024 + 1024)) \
		"SOAK_NVMEOF_MIB=$mib SOAK_NVMEOF_PASSES=$passes tests/soak/nvmeof-guest.sh" | tee -a "$res"
fi
! grep -q '^FAIL:' "$res"
rc=$?
if [ "${SOAK_VERBS:-1}" != 0 ]; then grep -q '^PASS: soak.run.client' "$res" || rc=1; fi
if [ "${SOAK_NVMEOF:-1}" != 0 ]; then grep -q "^PASS: soak.nvmeof/pass${SOAK_NVMEOF_PASSES:-2}-" "$res" || rc=1; fi
rm -f "$res"
exit $rc
