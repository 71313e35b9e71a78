#!/usr/bin/env bash
# Runs every test suite and prints one summary line: "N passed, N failed, N skipped".
#
# A suite is an executable tests/suites/NN-name.sh.  It prints one line per test:
#   PASS: <test name>
#   FAIL: <test name> [why]
#   SKIP: <test name> <why>
# and anything else it likes (kept in the log).  A suite that exits non-zero
# without reporting a FAIL counts as one failed test, so a crash cannot pass.
#
# Header lines a suite may carry:
#   # check: runs-private   run from a 0700 directory (tests/run-private.sh)
#   # check: host-only      boots no guest and needs no lab
#   # check: background     mostly waits (on its guests' timeouts): it runs
#                           alongside the host-only suites instead of after
#                           them, and is reported when the first suite that
#                           is neither starts (so no two lab suites overlap).
#                           Without a host-only suite selected it runs in
#                           its turn.
#   # check: alongside-next  mostly waits too (CPU use well below half): it
#                           starts in the background and runs at the same
#                           time as the suite that follows it, and is
#                           reported after that one.  The last suite
#                           selected runs in its turn.
#
# Environment:
#   CHECK_ONLY=regex   run only suites whose file name matches
#   CHECK_LOG_DIR=dir  where logs go (default build/check-logs)
#   CHECK_SUITE_DIR=dir  where the suites are (default tests/suites; the
#                      runner's own test uses made-up ones)
#   CHECK_SERIAL=1     no alongside-next: on a debug kernel those suites
#                      are bound by CPU, not by waiting
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
export SWIWARP_TOP=$top
export BUILD=${BUILD:-$top/build}
# No KDIR here: the build covers every installed kernel (tools/kernels.sh),
# and a KDIR in the environment would narrow every make below to one.
logdir=${CHECK_LOG_DIR:-$BUILD/check-logs}
mkdir -p "$logdir"

passed=0 failed=0 skipped=0
failures=()
start=$(date +%s)

has_tag() { grep -qE "^# check: $2( |\$)" "$1"; }

suites=()
for suite in "${CHECK_SUITE_DIR:-tests/suites}"/*.sh; do
	name=$(basename "$suite" .sh)
	if [ -n "${CHECK_ONLY:-}" ] && ! [[ $name =~ $CHECK_ONLY ]]; then
		continue
	fi
	suites+=("$suite")
done
background=() host_only=0
for suite in "${suites[@]}"; do
	has_tag "$suite" host-only && host_only=1
	has_tag "$suite" background && background+=("$suite")
done
[ "$host_only" = 1 ] || background=()

# run_suite SUITE: run it, its output to its log (and to stdout with
# TEE=1); sets rc.
run_suite() {
	local suite=$1 log
	log=$logdir/$(basename "$1" .sh).log
	# Suites that drop privileges run from a 0700 directory (tests/run-private.sh).
	if has_tag "$suite" runs-private; then
		tests/run-private.sh "$suite"
	else
		"$suite"
	fi 2>&1 | if [ "${TEE:-0}" = 1 ]; then tee "$log" | grep -E '^(PASS|FAIL|SKIP):'; else cat >"$log"; fi
	rc=${PIPESTATUS[0]}
}

# count_suite NAME RC SECONDS: add the suite's results from its log
count_suite() {
	local name=$1 rc=$2 log=$logdir/$1.log p f s
	p=$(grep -c '^PASS:' "$log")
	f=$(grep -c '^FAIL:' "$log")
	s=$(grep -c '^SKIP:' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL: $name (suite exited $rc without reporting a failure; see $log)"
		f=1
	fi
	while IFS= read -r line; do failures+=("$name: ${line#FAIL: }"); done \
		< <(grep '^FAIL:' "$log")
	[ "$rc" -ne 0 ] && [ "$(grep -c '^FAIL:' "$log")" -eq 0 ] && failures+=("$name: exited $rc")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	echo "=== suite $name: $p passed, $f failed, $s skipped in ${3}s"
}

declare -A bg_pid=() bg_t0=()
bg_started=0
# start_one_background SUITE WHERE: run SUITE in the background
start_one_background() {
	local suite=$1 name
	name=$(basename "$suite" .sh)
	echo "=== suite $name (in the background, $2)"
	bg_t0[$name]=$(date +%s)
	(run_suite "$suite"; date +%s >"$logdir/$name.end"; exit "$rc") &
	bg_pid[$name]=$!
}
start_background() {
	local suite
	for suite in "${background[@]}"; do
		start_one_background "$suite" "alongside the host-only suites"
	done
	bg_started=1
}
collect_background() {
	local name rc
	for name in "${!bg_pid[@]}"; do
		wait "${bg_pid[$name]}"
		rc=$?
		echo "=== suite $name (background) results"
		grep -E '^(PASS|FAIL|SKIP):' "$logdir/$name.log"
		count_suite "$name" "$rc" $(($(cat "$logdir/$name.end") - bg_t0[$name]))
	done
	bg_pid=()
}

last=$((${#suites[@]} - 1))
for i in "${!suites[@]}"; do
	suite=${suites[$i]}
	name=$(basename "$suite" .sh)
	if [ ${#background[@]} -gt 0 ] && has_tag "$suite" background; then
		continue
	fi
	if has_tag "$suite" host-only; then
		[ "$bg_started" = 1 ] || start_background
	elif [ ${#bg_pid[@]} -gt 0 ] && [ "${alongside:-}" != 1 ]; then
		collect_background
	fi
	if has_tag "$suite" alongside-next && [ "$i" -lt "$last" ] && [ "${CHECK_SERIAL:-0}" != 1 ]; then
		start_one_background "$suite" "alongside the next suite"
		alongside=1
		continue
	fi
	echo "=== suite $name"
	t0=$(date +%s)
	TEE=1 run_suite "$suite"
	count_suite "$name" "$rc" $(($(date +%s) - t0))
	if [ "${alongside:-}" = 1 ]; then
		collect_background
		alongside=
	fi
done
collect_background

echo
echo "make check took $(($(date +%s) - start))s; logs in $logdir"
if [ ${#failures[@]} -gt 0 ]; then
	echo "Failures:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
