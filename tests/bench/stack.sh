#!/usr/bin/env bash
# Stack benchmark (issue 7): swiwarp vs upstream siw vs TCP (iperf3), all
# in the same boot, A/B/A/B.  Two lab runs: "lo" (one guest, 2 vCPUs,
# devices on the loopback netdev) and "link" (two guests on the virtual
# link).  Writes build/bench/stack/results.json (kept as
# Documentation/data/bench-stack-DATE.json), plots
# Documentation/images/bench-*.png and the stack section of
# Documentation/benchmarks.md.  Numbers are same-boot ratios only.
#
# Environment (all optional):
#   STACK_MODES="lo link"   STACK_SIZES="64 4096 65536 1048576 4194304"
#   STACK_REPS=3   STACK_BYTES=4194304 (per bandwidth run)
#       (defaults per mode: lo 3 rounds of 16 MB, link 3 of 4 MB; the
#       STACK_LO_* / STACK_LINK_* form sets one mode only, e.g. STACK_LINK_REPS)
#   STACK_MIN_MSGS=5 (fewest messages per bandwidth run; perftest needs 5)
#   STACK_BW_TESTS="write read send"   STACK_LAT_TESTS="send write read"
#   STACK_STACKS="siw swiwarp swiwarp-crc" (link: + swiwarp-mss swiwarp-zc)   STACK_RUN_TIMEOUT=90 (per run)
#                           (also: swiwarp-zc, swiwarp-copy: zero-copy forced on/off;
#                           swiwarp-mss: large_fpdu=0, every FPDU within a segment;
#                           swiwarp-gather, swiwarp-wq, swiwarp-dN: TX design variants,
#                           from the bench build of the module, built here when asked for)
#   STACK_PIN=1             lo mode: server on vCPU 0, client on vCPU 1 (0: unpinned)
#   STACK_CONNBENCH=PATH    connbench binary (a missing path skips set-up runs)
#   STACK_SYN_DELAY_MS=300  link client: delay of perftest's connecting SYNs
#   STACK_TIMEOUT_RATE=65536 (bandwidth runs get 1 s more per this many bytes)
#   STACK_CONN_N=20 (connections per connbench run)
#   STACK_PERF=REGEX        profile matching runs ("write.65536.swiwarp$") with perf
#   STACK_PERF_BYTES=67108864  what a profiled bandwidth run moves
#   STACK_PARALLEL=1        boot both modes at once (default: one after the other)
#   STACK_NO_DOC=1          do not touch Documentation/ (smoke tests)
#   STACK_OUT=DIR           where the lab run directories go
#   STACK_TIMEOUT=3600      whole-lab timeout per mode
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
build=${BUILD:-$top/build}
out=${STACK_OUT:-$build/bench/stack}
modes=${STACK_MODES:-lo link}
mkdir -p "$out"

[ -f kernel/swiwarp.ko ] || [ -f "$build/kernel/swiwarp.ko" ] || {
	echo "stack bench: swiwarp.ko not built (make kernel)" >&2
	exit 1
}
# The TX design variants exist only in the benchmark's build of the module
# (kernel/Makefile BENCH=1); build it when a run asks for one of them.
if echo "${STACK_STACKS:-} ${STACK_LO_STACKS:-} ${STACK_LINK_STACKS:-}" |
	grep -qE '(^| )swiwarp-(gather|wq|d[0-9]+)( |$)'; then
	make -s -C kernel BENCH=1 BUILD="$build" || {
		echo "stack bench: the bench build of swiwarp.ko failed" >&2
		exit 1
	}
fi
[ -x "$build/tools/connbench/connbench" ] ||
	echo "stack bench: $build/tools/connbench/connbench missing: no connection set-up numbers" >&2

# Per-mode defaults (the published run): 3 rounds each (issue 20: median
# and spread need three); lo is cheap, so 16 MB per bandwidth run, the link
# 4 MB, plus two variants only the link can show: zero-copy (on loopback
# TCP copies zero-copy pages on delivery) and swiwarp-mss, every FPDU
# within one segment (large_fpdu=0): what FPDUs larger than the MSS give,
# which on lo, whose MSS is larger than any FPDU, they cannot.  STACK_REPS etc. override both modes,
# STACK_LO_REPS / STACK_LINK_REPS (and _BYTES, _STACKS) one mode.
mode_default() { # MODE VAR
	case $1.$2 in
	*.REPS) echo 3 ;;
	lo.BYTES) echo 16777216 ;;
	link.STACKS) echo "siw swiwarp swiwarp-mss swiwarp-crc swiwarp-zc" ;;
	esac
}

# Guests get no environment from lab run: pass our knobs on the command line.
env_for() { # MODE
	local mode=$1 v m val args="BUILD=$build"
	m=$(echo "$mode" | tr a-z A-Z)
	for v in SIZES REPS BYTES BW_TESTS LAT_TESTS STACKS RUN_TIMEOUT CONN_N LAT_ITERS PERF PERF_BYTES \
		MIN_MSGS TIMEOUT_RATE PIN CONNBENCH SYN_DELAY_MS; do
		val=STACK_${m}_$v
		val=${!val:-}
		[ -n "$val" ] || { val=STACK_$v; val=${!val:-}; }
		[ -n "$val" ] || val=$(mode_default "$mode" "$v")
		[ -n "$val" ] && args="$args STACK_$v='$val'"
	done
	echo "$args"
}

run_mode() {
	local mode=$1 n=1 env_args
	[ "$mode" = link ] && n=2
	env_args=$(env_for "$mode")
	rm -rf "$out/$mode"
	BUILD=$build tests/lab/lab run -n "$n" --smp 2 --name "bench-stack-$mode" --out "$out/$mode" \
		--timeout "${STACK_TIMEOUT:-3600}" --quiet -- "$env_args tests/bench/stack/guest.sh $mode"
}

rc=0
start=$(date +%s)
if [ "${STACK_PARALLEL:-0}" = 1 ]; then
	pids=()
	for m in $modes; do
		run_mode "$m" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
else
	for m in $modes; do run_mode "$m" || rc=1; done
fi
lab_secs=$(($(date +%s) - start))
echo "stack bench: lab runs took $lab_secs s (host clock)"

doc_args=()
[ "${STACK_NO_DOC:-0}" = 1 ] || doc_args=(--doc Documentation/benchmarks.md --images Documentation/images --data Documentation/data)
/usr/bin/python3 tests/bench/stack/report.py --out "$out" --lab-secs "$lab_secs" "${doc_args[@]}" $modes || rc=1
exit $rc
