#!/usr/bin/env bash
# The test runner itself (tests/run-checks.sh), on made-up suites that
# record when they ran: the summary counts, a suite that exits non-zero
# without a FAIL counts as one, a background suite overlaps the host-only
# ones, an alongside-next suite overlaps the one after it (and not with
# CHECK_SERIAL=1), and the last selected suite runs in its turn.
set -uo pipefail
runner=$(cd "$(dirname "$0")/.." && pwd)/run-checks.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/run-checks-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
bad=0
check() { # check NAME CONDITION-RESULT(0/1) WHY
	if [ "$2" = 0 ]; then echo "ok: $1"; else echo "not ok: $1: $3"; bad=1; fi
}

# suite NAME TAGS SECONDS BODY: a suite that logs its start and end times
suite() {
	local f=$work/suites/$1.sh
	mkdir -p "$work/suites"
	{
		echo '#!/usr/bin/env bash'
		[ -n "$2" ] && printf '# check: %s\n' "$2"
		echo "date +%s.%N >>$work/$1.start"
		echo "sleep $3"
		printf '%s\n' "$4"
		echo "date +%s.%N >>$work/$1.end"
	} >"$f"
	chmod +x "$f"
}
# overlap A B: 0 when the runs of A and B overlapped in time
overlap() {
	awk -v as="$(cat "$work/$1.start")" -v ae="$(cat "$work/$1.end")" \
		-v bs="$(cat "$work/$2.start")" -v be="$(cat "$work/$2.end")" \
		'BEGIN { exit !(as < be && bs < ae) }'
}
run() { # run LOG [ENV...]: the runner on the made-up suites
	local log=$1
	shift
	rm -f "$work"/*.start "$work"/*.end
	# Not what the runner this test runs under was given (CHECK_ONLY, ...).
	env -u CHECK_ONLY -u CHECK_SERIAL -u CHECK_STRICT -u TEE \
		CHECK_SUITE_DIR="$work/suites" CHECK_LOG_DIR="$work/logs" "$@" \
		bash "$runner" >"$work/$log" 2>&1
}

suite 10-host host-only 2 'echo "PASS: host.a"; echo "PASS: host.b"'
suite 20-bg background 2 'echo "PASS: bg.a"; echo "SKIP: bg.b (why)"'
suite 30-lab "" 0 'echo "PASS: lab.a"'
suite 40-waits alongside-next 2 'echo "PASS: waits.a"'
suite 50-next "" 2 'echo "FAIL: next.a [why]"'
suite 60-crash "" 0 'exit 3'
suite 70-tail alongside-next 0 'echo "PASS: tail.a"'

run all.log
rc=$?
check summary "$([ "$(tail -n 1 "$work/all.log")" = "6 passed, 2 failed, 1 skipped" ]; echo $?)" \
	"last line: $(tail -n 1 "$work/all.log")"
check exit-status "$([ $rc -ne 0 ]; echo $?)" "exit $rc with failures"
check crash-counts "$(grep -q '^FAIL: 60-crash (suite exited 3' "$work/all.log"; echo $?)" \
	"no FAIL for the suite that exited 3"
check background "$(overlap 20-bg 10-host; echo $?)" "20-bg did not run beside 10-host"
check bg-before-lab "$(awk -v e="$(cat "$work/20-bg.end")" -v s="$(cat "$work/30-lab.start")" \
	'BEGIN { exit !(e <= s) }'; echo $?)" "30-lab started before 20-bg ended"
check alongside "$(overlap 40-waits 50-next; echo $?)" "40-waits did not run beside 50-next"
check alongside-reported "$(grep -A1 '^=== suite 50-next: ' "$work/all.log" |
	grep -q '^=== suite 40-waits (background) results$'; echo $?)" "40-waits not reported right after 50-next"
check last-in-turn "$(grep -q '^=== suite 70-tail$' "$work/all.log"; echo $?)" \
	"the last suite did not run in its turn"

run serial.log CHECK_SERIAL=1 CHECK_ONLY='^(40|50)-'
check serial "$(! overlap 40-waits 50-next; echo $?)" "40-waits overlapped 50-next with CHECK_SERIAL=1"
check serial-summary "$([ "$(tail -n 1 "$work/serial.log")" = "1 passed, 1 failed, 0 skipped" ]; echo $?)" \
	"last line: $(tail -n 1 "$work/serial.log")"

[ $bad = 0 ] || { echo "--- runner output"; cat "$work/all.log"; }
exit $bad
