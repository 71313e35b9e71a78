#!/usr/bin/env bash
# Host side of tests/dpi/scale-guest.sh: one lab boot that measures what an
# all-to-all libdpi mesh on swiwarp costs per connection (Documentation/
# flows.md, "Running at 100+ nodes").  NOT part of make check (one boot of
# several guests for numbers, not for a regression); run it by hand after
# `make all` and `make -C kernel`:
#   tests/dpi/scale-measure.sh [N...]     cluster sizes, default "2 4 8"
#   SCALE_GUESTS=4 SCALE_MEM=1024 LAB_SMP=1 SCALE_TIMEOUT=900   (defaults)
# Prints guest 1's scale.txt (before/after, differences, per new QP) and
# the host's load, and exits non-zero unless every size was measured.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
cd "$top" || exit 1
export LAB_SMP=${LAB_SMP:-1}
guests=${SCALE_GUESTS:-4}
sizes=${*:-2 4 8}
for f in "$build/userspace/dpi/dpi" kernel/swiwarp.ko "$build/userspace/provider/libswiwarp-rdmav34.so"; do
	[ -e "$f" ] || { echo "FAIL: dpi.scale ($f missing: make all, make -C kernel)"; exit 1; }
done
for n in $sizes; do
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 2 ]; then
		echo "scale-measure: bad size '$n'" >&2
		exit 2
	fi
done
dir=$build/lab/runs/dpi-scale-$(date -u +%Y%m%d-%H%M%S)
echo "scale-measure: $(date -u '+%F %T') UTC, host load $(cut -d' ' -f1-3 /proc/loadavg), $guests guests, sizes $sizes, run dir $dir"
tests/lab/lab run -n "$guests" --mem "${SCALE_MEM:-1024}" --timeout "${SCALE_TIMEOUT:-900}" --name dpi-scale \
	--out "$dir" -- "tests/dpi/scale-guest.sh $sizes"
rc=$?
echo "scale-measure: done $(date -u '+%F %T') UTC, host load $(cut -d' ' -f1-3 /proc/loadavg), lab exit $rc"
res=$dir/g1/scale.txt
[ -f "$res" ] && cat "$res"
measured=$(grep -hc '^PASS: dpi\.scale\.n[0-9]*\.measured' "$dir/g1/results" 2>/dev/null)
want=$(echo "$sizes" | wc -w)
if [ "${measured:-0}" -ne "$want" ]; then
	echo "FAIL: dpi.scale (${measured:-0} of $want sizes measured; see $dir)"
	exit 1
fi
exit $rc
