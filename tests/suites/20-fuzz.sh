#!/usr/bin/env bash
# check: host-only (boots no guest: runs alongside the background suites)
# Bounded libFuzzer smoke runs of the wire-core parsers (include/iwarp).
# Builds tests/fuzz/* with clang (ASan + UBSan + libFuzzer) into
# $BUILD/fuzz, then runs each target for FUZZ_SECONDS (default 15), FUZZ_JOBS
# (default 2) targets at a time, from the seed corpus in
# tests/fuzz/corpus/<target>.  New inputs go to a scratch
# directory, never into the source tree; a crash leaves its input in
# $BUILD/fuzz/artifacts/.  One PASS/FAIL line per target.
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$top/tests/swiwarp/suite-lib.sh"
build=${BUILD:-$top/build}
out=$build/fuzz
seconds=${FUZZ_SECONDS:-15}
targets=(mpa_rr fpdu_markers rdmap term)

mkdir -p "$out/artifacts"
"$top/tests/fuzz/build.sh" "$out" >"$out/build.log" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
	for t in "${targets[@]}"; do skip "fuzz.$t" "no clang installed"; done
	exit 0
elif [ $rc -ne 0 ]; then
	cat "$out/build.log"
	fail "fuzz.build" "see $out/build.log"
	exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Two targets at a time (FUZZ_JOBS): each keeps its full FUZZ_SECONDS on a
# core of its own, and the suite takes half the wall time.  Verdicts are
# printed afterwards in target order.
fuzz_one() { # target
	local t=$1
	mkdir -p "$scratch/$t"
	# The outer timeout only guards against a hung target.
	timeout $((seconds + 60)) nice "$out/fuzz_$t" -max_total_time="$seconds" \
		-timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
		-artifact_prefix="$out/artifacts/$t-" \
		"$scratch/$t" "$top/tests/fuzz/corpus/$t" >"$out/$t.log" 2>&1
	echo $? >"$scratch/$t.rc"
}
export -f fuzz_one
export out scratch seconds top
printf '%s\n' "${targets[@]}" | xargs -r -n 1 -P "${FUZZ_JOBS:-2}" bash -c 'fuzz_one "$1"' _
for t in "${targets[@]}"; do
	log=$out/$t.log
	rc=$(cat "$scratch/$t.rc" 2>/dev/null || echo missing)
	runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -1)
	if [ "$rc" = 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
		echo "fuzz.$t: $runs executions in ${seconds}s, no crash"
		pass "fuzz.$t"
	else
		tail -30 "$log"
		fail "fuzz.$t" "exit $rc; log $log, inputs in $out/artifacts"
	fi
done
exit 0
