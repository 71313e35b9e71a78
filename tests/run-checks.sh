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
# Environment:
#   CHECK_ONLY=regex   run only suites whose file name matches
#   CHECK_LOG_DIR=dir  where logs go (default build/check-logs)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export SWIWARP_TOP=$top
export BUILD=${BUILD:-$top/build}
# No KDIR here: the build covers every installed kernel (tools/kernels.sh),
# and a KDIR in the environment would narrow every make below to one.
logdir=${CHECK_LOG_DIR:-$BUILD/check-logs}
mkdir -p "$logdir"

passed=0 failed=0 skipped=0
failures=()
start=$(date +%s)

for suite in tests/suites/*.sh; do
	name=$(basename "$suite" .sh)
	if [ -n "${CHECK_ONLY:-}" ] && ! [[ $name =~ $CHECK_ONLY ]]; then
		continue
	fi
	echo "=== suite $name"
	log=$logdir/$name.log
	t0=$(date +%s)
	# Suites that drop privileges run from a 0700 directory (tests/run-private.sh).
	if grep -q '^# check: runs-private' "$suite"; then
		tests/run-private.sh "$suite"
	else
		"$suite"
	fi 2>&1 | tee "$log" | grep -E '^(PASS|FAIL|SKIP):'
	rc=${PIPESTATUS[0]}
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
	echo "=== suite $name: $p passed, $f failed, $s skipped in $(($(date +%s) - t0))s"
done

echo
echo "make check took $(($(date +%s) - start))s; logs in $logdir"
if [ ${#failures[@]} -gt 0 ]; then
	echo "Failures:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
