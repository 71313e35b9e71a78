#!/bin/bash
# Guest side of tests/suites/75-flows.sh: DPI flow applications on libdpi, on
# N lab guests (guest I is DPI node I-1; node 0 holds the buffer directory).
# Usage (in a lab guest): lab-guest.sh DRIVER      (siw | rxe | swiwarp)
#   FLOWS_TESTS="join-uniform hint"   only these tests (default: all)
#   FLOWS_ROWS=20000                  rows per join table
#   FLOWS_DELAY_MS=100                netem delay on every guest (siw's race)
# Result names: flows.DRIVER.TEST[.detail]; each application prints its own
# PASS/FAIL lines, which are copied into $LAB_OUT/results.
source "$LAB_TOP/tests/lab/lib.sh"
drv=${1:?usage: lab-guest.sh siw|rxe|swiwarp}
bin=${FLOWS_BIN:-$BUILD/userspace/flows}
t=flows.$drv
work=/tmp/flows
out=$LAB_OUT/flows-$drv
mkdir -p "$work" "$out"
me=$((LAB_ID - 1))

"lab_load_$drv"
rc=$?
if [ $rc -ne 0 ]; then
	if [ "$LAB_ID" = 1 ]; then
		if [ $rc -eq 2 ]; then lab_skip "$t" "driver $drv not built"; else lab_fail "$t.load" "lab_load_$drv returned $rc"; fi
	fi
	lab_barrier loaded 300
	[ $rc -eq 2 ] && exit 0
	lab_finish
fi
# FLOWS_DELAY_MS=N: netem-delay everything this guest sends by N ms.  On
# upstream siw every guest of the mesh is the passive side of some
# connection, and its MPA Reply must reach the peer only after its QP owns
# the socket (see lab_delay_egress), so the delay goes on every guest.
if [ "${FLOWS_DELAY_MS:-0}" != 0 ]; then
	lab_delay_egress "$FLOWS_DELAY_MS" || lab_fail "$t.netem-g$LAB_ID" "could not add the netem delay"
fi
lab_barrier loaded 300 || { lab_fail "$t.barrier-loaded-g$LAB_ID" "$LAB_BARRIER_WHY"; lab_finish; }

# spec PORT NODES: node i = guest i+1; each test has its own port so no
# listener is ever reused.
spec() {
	local f=$work/spec.$1 i
	: >"$f"
	for i in $(seq 0 $(($2 - 1))); do
		echo "node $i 192.0.2.$((i + 1)):$1" >>"$f"
	done
	echo "$f"
}

want() { [ -z "${FLOWS_TESTS:-}" ] || [[ " $FLOWS_TESTS " == *" $1 "* ]]; }

# app NAME PORT NODES PROGRAM ARGS...: run PROGRAM on the first NODES guests
# (the others wait at the barrier), copy its result lines, fail if it exited
# non-zero without saying why.
app() {
	local name=$1 port=$2 nodes=$3 prog=$4 log rc
	shift 4
	log=$out/$name.g$LAB_ID.log
	if [ "$LAB_ID" -le "$nodes" ]; then
		timeout "${FLOWS_APP_TIMEOUT:-300}" "$bin/$prog" --spec "$(spec "$port" "$nodes")" --id "$me" \
			--nodes "$nodes" --name "$t.$name" "$@" >"$log" 2>&1
		rc=$?
		# logship's victim dies by SIGKILL on purpose.
		[ "$name" = logship ] && [ "$LAB_ID" = "$nodes" ] && [ $rc -eq 137 ] && rc=0
		# so does the crashing source of the crash test (node 1).
		[ "$name" = crash ] && [ "$LAB_ID" = 2 ] && [ $rc -eq 137 ] && rc=0
		grep -E '^(PASS|FAIL|SKIP):' "$log" >>"$LAB_OUT/results"
		grep -E '^(PASS|FAIL|SKIP):|^# ' "$log"
		if grep -q '^FAIL:' "$log"; then
			LAB_FAILURES=$((LAB_FAILURES + 1))
		elif [ $rc -ne 0 ]; then
			lab_fail "$t.$name.g$LAB_ID" "exit $rc: $(tail -3 "$log" | tr '\n' ' ')"
		fi
	fi
	lab_barrier "$name-done" 600 || lab_fail "$t.$name.barrier-g$LAB_ID"
}

rows=${FLOWS_ROWS:-20000}
want join-uniform && app join-uniform 7481 "$LAB_N" flows-join --rows "$rows" --dist uniform --prefix ju
want join-zipf && app join-zipf 7482 "$LAB_N" flows-join --rows "$rows" --dist zipf --theta 1.0 --prefix jz
want hint && app hint 7483 2 flows-hint --tuples 1000
want crash && app crash 7487 2 flows-hint --crash-after 500
want stream && app stream 7484 "$LAB_N" flows-stream
want ps && app ps 7485 "$LAB_N" flows-ps
if want logship; then
	mkdir -p "$LAB_SHARED/logship"
	app logship 7486 "$LAB_N" flows-logship --logdir "$LAB_SHARED/logship" --records "${FLOWS_LOG_RECORDS:-300}" --kill-after "${FLOWS_LOG_KILL:-100}"
fi
lab_finish
