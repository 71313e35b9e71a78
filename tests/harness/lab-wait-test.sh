#!/usr/bin/env bash
# Host test of the guests' wait helper (tests/lab/lib.sh lab_wait_until and
# the helpers built on it): its exit statuses, its timeout, LAB_SLOWDOWN.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
LAB_OUT=$(mktemp -d)
trap 'rm -rf "$LAB_OUT"' EXIT
export LAB_OUT
# shellcheck source=tests/lab/lib.sh
source "$top/tests/lab/lib.sh"
failed=0
expect() { # NAME WANT GOT
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAILED: $1 (want $2, got $3)"; failed=1; fi
}

lab_wait_until 5 true
expect "done at once" 0 $?

n=0
third_time() { n=$((n + 1)); [ $n -ge 3 ]; }
t0=$SECONDS
lab_wait_until 5 third_time
expect "not yet twice, then done" "0 3" "$? $n"

# exit status 2 (grep without its file) is "not yet" too
f=$LAB_OUT/appears
(sleep 0.5 && echo ready >"$f") &
lab_wait_until 5 grep -qs ready "$f"
expect "grep waits for the file to appear" 0 $?
wait

found_wrong() { return 4; }
lab_wait_until 5 found_wrong
expect "status 3 or more ends the wait with it" 4 $?

t0=$SECONDS
lab_wait_until 1 false
rc=$?
expect "timeout returns 1" 1 $rc
[ $((SECONDS - t0)) -le 3 ] || expect "timeout of 1 s took at most 3 s" "<=3" $((SECONDS - t0))

t0=$SECONDS
LAB_SLOWDOWN=2 lab_wait_until 1 false
dt=$((SECONDS - t0))
[ $dt -ge 1 ] && [ $dt -le 4 ]
expect "LAB_SLOWDOWN stretches the timeout (1 s x 2 took ${dt} s)" 0 $?

printed=$(lab_wait_until 1 echo found)
expect "the predicate's output passes through" found "$printed"

lab_wait_until 1 lab_not false
expect "lab_not inverts" 0 $?

sleep 30 &
pid=$!
: >"$LAB_OUT/log"
(sleep 0.5 && kill $pid) &
t0=$SECONDS
lab_wait_output "$LAB_OUT/log" 'never' $pid 20
rc=$?
expect "lab_wait_output stops when the process died" "1 yes" "$rc $([ $((SECONDS - t0)) -lt 10 ] && echo yes)"
wait

LAB_SHARED=$LAB_OUT LAB_N=1 LAB_ID=1 lab_barrier solo 5
expect "a barrier of one guest" 0 $?

exit $failed
