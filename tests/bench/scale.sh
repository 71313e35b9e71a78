#!/usr/bin/env bash
# Scale benchmark (issue 20): connection rate, kernel memory per idle QP and
# per MR, MR registration rate, aggregate RDMA Write bandwidth over 1 to 256
# QPs; upstream siw against swiwarp as a user runs it (module defaults), in
# one boot of two guests (2 vCPUs each), stacks alternated A/B, B/A, A/B.
# The guest side is tests/bench/scale/guest.sh.  Writes
# build/bench/scale/results.json (kept as
# Documentation/data/bench-scale-DATE.json), plots
# Documentation/images/bench-scale-*.png and the scale section of
# Documentation/benchmarks.md.  Numbers are same-boot ratios only.  The
# host's /proc/loadavg is sampled every 5 s during the run
# (OUT/hostload.txt); the report puts the samples around each run next to
# it.
#
# Environment (all optional):
#   SCALE_STACKS="siw swiwarp-defaults"  (swiwarp: the same with mpa_crc=0)
#   SCALE_TESTS="rate hold mr qp"   SCALE_REPS=3
#   SCALE_QPS="1 4 16 64 255"   SCALE_QP_SIZE=65536
#   SCALE_QP_BYTES=8388608  (per qp run; at least 5 messages per QP)
#   SCALE_RATE_N=200   SCALE_RATE_INFLIGHT=32 (rate and hold)
#   SCALE_HOLD_N=64    SCALE_MR_ARGS="" (mrbench options, e.g. -t 1 -n 20)
#   SCALE_RUN_TIMEOUT=120 (per run, plus what the run moves or connects)
#   SCALE_TIMEOUT=5400 (the whole lab run)
#   SCALE_NO_DOC=1     do not touch Documentation/ (smoke tests)
#   SCALE_OUT=DIR      where the lab run directory goes
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
build=${BUILD:-$top/build}
out=${SCALE_OUT:-$build/bench/scale}
mkdir -p "$out"

[ -f kernel/swiwarp.ko ] || [ -f "$build/kernel/swiwarp.ko" ] || {
	echo "scale bench: swiwarp.ko not built (make kernel)" >&2
	exit 1
}
for t in connbench mrbench; do
	[ -x "$build/tools/$t/$t" ] || {
		echo "scale bench: $build/tools/$t/$t not built (make userspace)" >&2
		exit 1
	}
done

# Guests get no environment from lab run: pass our knobs on the command line.
args="BUILD=$build"
for v in STACKS TESTS REPS QPS QP_SIZE QP_BYTES RATE_N RATE_INFLIGHT HOLD_N MR_ARGS RUN_TIMEOUT; do
	val=SCALE_$v
	[ -n "${!val:-}" ] && args="$args SCALE_$v='${!val}'"
done

hostload() { echo "$(date +%s.%N) $(cat /proc/loadavg)"; }
hostload >"$out/hostload.txt"
(while sleep 5; do hostload; done) >>"$out/hostload.txt" &
sampler=$!
rm -rf "$out/link"
start=$(date +%s)
BUILD=$build tests/lab/lab run -n 2 --smp 2 --name bench-scale --out "$out/link" \
	--timeout "${SCALE_TIMEOUT:-5400}" --quiet -- "$args tests/bench/scale/guest.sh"
rc=$?
lab_secs=$(($(date +%s) - start))
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
hostload >>"$out/hostload.txt"
echo "scale bench: lab run took $lab_secs s (host clock), exit $rc"

doc_args=()
[ "${SCALE_NO_DOC:-0}" = 1 ] ||
	doc_args=(--doc Documentation/benchmarks.md --images Documentation/images --data Documentation/data)
/usr/bin/python3 tests/bench/scale/report.py --out "$out" --lab-secs "$lab_secs" "${doc_args[@]}" || rc=1
exit $rc
