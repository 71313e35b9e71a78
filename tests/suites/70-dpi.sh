#!/usr/bin/env bash
# libdpi end to end in the QEMU lab: one boot of two guests per RDMA driver,
# running tests/dpi/lab-guest.sh (Listing 1, k x m verified appends, slow
# consumer backpressure, source and owner restarts, bad input, regions,
# unsignaled WRs, critical-size stability).  The drivers' boots run at the
# same time (each is its own lab run), so the suite takes about as long as
# the slowest driver.
#   DPI_DRIVERS="siw swiwarp"   drivers to run (rxe also works)
#   DPI_TESTS="1 5"             only these sections of lab-guest.sh
set -uo pipefail
# One vCPU per guest: a functional suite, about 15-35 % faster so (Documentation/lab.md,
# "The time budget of make check"); LAB_SMP overrides it.
export LAB_SMP=${LAB_SMP:-1}
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BUILD:-$top/build}
cd "$top" || exit 1
drivers=${DPI_DRIVERS:-siw swiwarp}

for f in dpi dpi-listing1; do
	if [ ! -x "$build/userspace/dpi/$f" ]; then
		echo "FAIL: dpi.build ($build/userspace/dpi/$f missing: run make all)"
		exit 1
	fi
done
if [ ! -x tests/lab/lab ]; then
	echo "SKIP: dpi.lab tests/lab/lab does not exist yet"
	exit 0
fi

declare -A pids
for drv in $drivers; do
	log=$build/check-logs/70-dpi.$drv.lab.log
	mkdir -p "$(dirname "$log")"
	tests/lab/lab run -n 2 --name "dpi-$drv" --timeout 600 -- \
		"DPI_TESTS='${DPI_TESTS:-}' tests/dpi/lab-guest.sh $drv" >"$log" 2>&1 &
	pids[$drv]=$!
done
rc=0
for drv in $drivers; do
	wait "${pids[$drv]}"
	r=$?
	log=$build/check-logs/70-dpi.$drv.lab.log
	echo "--- dpi on $drv"
	grep -E '^(PASS|FAIL|SKIP):' "$log"
	if [ $r -ne 0 ]; then
		rc=1
		grep -q '^FAIL:' "$log" || echo "FAIL: dpi.$drv.lab (lab run exited $r; see $log)"
	fi
done
exit $rc
