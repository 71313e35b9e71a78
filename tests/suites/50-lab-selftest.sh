#!/usr/bin/env bash
# check: background (mostly waits on its guests: runs alongside the host-only suites)
# Self-tests of the QEMU lab (tests/lab/lab): the kernel-log scanner on
# fixtures, then real guests: the promised guest environment, results
# pass-through, and that a failing command, a WARNING in the guest's kernel
# log, a crashed guest, a hung guest and a guest that hangs in its boot each
# make `lab run` fail and say why.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/swiwarp/suite-lib.sh
source "$top/tests/swiwarp/suite-lib.sh" # BUILD, lab, fails, pass, fail
fix=$top/tests/lab/fixtures
out=$BUILD/lab/suite-selftest
rm -rf "$out"
mkdir -p "$out"
# expect NAME GREP-REGEX FILE: PASS if FILE has a line matching.
expect() {
	if grep -qE "$2" "$3"; then pass "$1"; else fail "$1" "no line matching '$2' in $3"; fi
}
# failed_after NAME LOG: the seconds `lab run --name NAME` says it ran
# before failing (its clock starts once it has a lab slot; see LAB_SLOTS)
failed_after() {
	sed -n "s/^lab: $1: failed after \([0-9]*\)s.*/\1/p" "$2"
}
# exited_1 NAME PID LOG: the lab run PID, which must fail, exited 1
exited_1() {
	local rc
	wait "$2"
	rc=$?
	if [ $rc -eq 1 ]; then pass "$1"
	else fail "$1" "lab run exited $rc, see $3"; fi
}

# --- the scanner on fixtures ------------------------------------------------
if "$lab" check-dmesg "$fix/dmesg-clean.txt" >"$out/clean.txt"; then
	pass "lab-self/dmesg-clean-accepted"
else
	fail "lab-self/dmesg-clean-accepted" "flagged: $(head -n1 "$out/clean.txt")"
fi
for f in "$fix"/dmesg-*.txt; do
	k=$(basename "$f" .txt)
	[ "$k" = dmesg-clean ] && continue
	if "$lab" check-dmesg "$fix/dmesg-clean.txt" "$f" >"$out/$k.txt"; then
		fail "lab-self/$k-flagged" "scanner accepted $f"
	elif [ -s "$out/$k.txt" ]; then
		pass "lab-self/$k-flagged"
	else
		fail "lab-self/$k-flagged" "scanner failed but printed nothing"
	fi
done

# A report of upstream code listed in tests/known-bugs (lab's
# KNOWN_REPORTS; the fixture is the lockdep report of session 32's debug
# 66) does not fail a run but is named; the same report with a frame of
# ours is flagged (dmesg-lockdep-ours.txt, above), as are a truncated one
# and the whole one under CHECK_STRICT=1.
known=$fix/known-nvmet-rdma-config-sem.txt
if "$lab" check-dmesg "$known" >"$out/known.txt" &&
	grep -q '^known: kernel-report/nvmet-rdma-config-sem: .*possible circular' "$out/known.txt"; then
	pass "lab-self/dmesg-known-upstream-named"
else
	fail "lab-self/dmesg-known-upstream-named" "$(head -n1 "$out/known.txt")"
fi
head -n 60 "$known" >"$out/known-truncated.txt"
if "$lab" check-dmesg "$out/known-truncated.txt" >"$out/known-truncated.out"; then
	fail "lab-self/dmesg-known-truncated-flagged" "a report without its end was taken as known"
else
	pass "lab-self/dmesg-known-truncated-flagged"
fi
if CHECK_STRICT=1 "$lab" check-dmesg "$known" >"$out/known-strict.txt"; then
	fail "lab-self/dmesg-known-strict-flagged" "CHECK_STRICT=1 accepted it"
else
	pass "lab-self/dmesg-known-strict-flagged"
fi

# Command output on the serial console is not kernel log.
printf '%s\n' 'lab-guest[1]: running: echo WARNING: not from the kernel' 'WARNING: not from the kernel' \
	>"$out/console-userspace.txt"
if "$lab" check-dmesg "$out/console-userspace.txt" >"$out/console-userspace.out"; then
	pass "lab-self/dmesg-userspace-output-ignored"
else
	fail "lab-self/dmesg-userspace-output-ignored" "flagged: $(head -n1 "$out/console-userspace.out")"
fi

# --- tests/known-bugs.sh on a fixture, and the real file's format --------------
kb=$out/known-bugs
printf '# comment\n\nflows.*.slow\t[norun] hangs\nasan.t1\tflaky\nrobust.neg.crash\t[norun] oops\n' >"$kb"
kb_got=$(
	known_bugs_file=$kb
	unset CHECK_STRICT
	printf 'FAIL: g1-6.1/flows.rxe.slow [x]\nFAIL: asan.t1 (y)\nFAIL: asan.t2\nPASS: asan.t1\n' |
		known_filter g1-6.1/ | cut -c1-60
	echo "norun: $(known_norun_under robust.neg. | tr '\n' ' ')| $(known_norun asan.t1 || echo none)"
	echo "strict: $(CHECK_STRICT=1 known_bug asan.t1 || echo none)"
)
kb_want="SKIP: g1-6.1/flows.rxe.slow known bug: hangs (CHECK_STRICT=1
SKIP: asan.t1 known bug: flaky (CHECK_STRICT=1 runs it)
FAIL: asan.t2
PASS: asan.t1
norun: crash | none
strict: none"
if [ "$kb_got" = "$kb_want" ]; then
	pass lab-self/known-bugs-reader
else
	fail lab-self/known-bugs-reader "got: $(echo "$kb_got" | tr '\n' '|')"
fi
kb_bad=$(grep -vE '^(#|$)' "$known_bugs_file" | grep -vnE $'^[^\t ]+\t[^\t]+$')
if [ -z "$kb_bad" ]; then
	pass lab-self/known-bugs-format
else
	fail lab-self/known-bugs-format "lines not \"pattern<TAB>reason\": $kb_bad"
fi

# --- a good two-guest run: environment, helpers, results ----------------------
read -r -d '' good <<'EOS'
source "$LAB_TOP/tests/lab/lib.sh"
me=g$LAB_ID
peer=$((3 - LAB_ID))
[ "$LAB_N" = 2 ] && [ "$LAB_IP" = "192.0.2.$LAB_ID" ] && [ "$LAB_PEER_IP" = "192.0.2.$peer" ] &&
	[ "$LAB_IPS" = "192.0.2.1 192.0.2.2" ] && [ "$PWD" = "$LAB_TOP" ] && [ -n "$BUILD" ] &&
	[ -f "$LAB_TOP/tests/lab/lab" ] && lab_pass "env-$me" || lab_fail "env-$me" "$(env | grep ^LAB_ | tr '\n' ' ')"
ip -4 -o addr show dev eth0 | grep -q "inet $LAB_IP/24" && ip link show lo | grep -q UP &&
	lab_pass "net-$me" || lab_fail "net-$me" "eth0/lo not set up"
for m in ib_core ib_uverbs iw_cm rdma_cm rdma_ucm; do [ -e /sys/module/$m ] || missing+=" $m"; done
[ -z "${missing:-}" ] && lab_pass "rdma-core-modules-$me" || lab_fail "rdma-core-modules-$me" "missing$missing"
[ "$(ulimit -l)" = unlimited ] && lab_pass "memlock-$me" || lab_fail "memlock-$me" "ulimit -l $(ulimit -l)"
# --smp 1,2 below: a vCPU count per guest.
[ "$(nproc)" = "$LAB_ID" ] && lab_pass "smp-per-guest-$me" || lab_fail "smp-per-guest-$me" "nproc $(nproc), want $LAB_ID"
# The root is the host's, read-only underneath, writable on top.
echo "overlay $me" >/usr/share/lab-overlay-test && grep -q "overlay $me" /usr/share/lab-overlay-test &&
	[ -x /usr/bin/rping ] && lab_pass "overlay-root-$me" || lab_fail "overlay-root-$me"
echo "hello from $me" >"$LAB_OUT/hello" && lab_pass "out-share-$me" || lab_fail "out-share-$me"
lab_barrier met 600 && lab_pass "barrier-$me" || lab_fail "barrier-$me"
# Each guest sees the other's file through the shared directory.
echo "$me" >"$LAB_SHARED/from-$me"
lab_barrier written 120
[ "$(cat "$LAB_SHARED/from-g$peer" 2>/dev/null)" = "g$peer" ] && lab_pass "shared-dir-$me" ||
	lab_fail "shared-dir-$me"
# A TCP connection over the link; lab_wait_tcp's own probe is one of them.
if [ "$LAB_ID" = 1 ]; then
	( while :; do busybox nc -l -p 5555 >>"$LAB_OUT/nc.txt"; done ) &
	loop=$!
	lab_barrier sent 120
	kill $loop
	grep -q "tcp from g2" "$LAB_OUT/nc.txt" && lab_pass "tcp-link-g1" || lab_fail "tcp-link-g1"
else
	if lab_wait_tcp 192.0.2.1 5555 300; then
		lab_pass "wait-tcp-g2"
		sleep 0.5
		echo "tcp from g2" | busybox nc 192.0.2.1 5555
	else
		lab_fail "wait-tcp-g2"
	fi
	lab_barrier sent 120
fi
lab_finish
EOS
# The three runs below (good, bad, hang) need no fresh host between them:
# they start together, each its own lab run (the lab's slots still bound how
# many boot at once), and are judged in order once each has finished.  The
# hung guest mostly sleeps and the others wait on barriers, so the suite
# takes about as long as its longest run.
"$lab" run -n 2 --smp 1,2 --name self-good --out "$out/good" --timeout 900 -- "$good" >"$out/good.log" 2>&1 &
good_pid=$!

# --- failures must be reported -------------------------------------------
# One two-guest run.  Guest 1: a command that fails, after reporting a PASS
# and putting a WARNING line in its kernel log (through /dev/kmsg: harmless,
# but exactly what the scanner sees).  Guest 2: its kernel crashes.
bad='if [ $LAB_ID = 1 ]; then
	echo "PASS: lab-self/results-pass-through" >>$LAB_OUT/results
	echo "<4>lab-selftest: WARNING: injected by 50-lab-selftest" >/dev/kmsg
	exit 3
fi
echo c >/proc/sysrq-trigger
sleep 100000'
"$lab" run -n 2 --name self-bad --out "$out/bad" --timeout 900 -- "$bad" >"$out/bad.log" 2>&1 &
bad_pid=$!

# A hung guest is killed at the timeout and reported.
"$lab" run --name self-hang --out "$out/hang" --timeout 30 -- 'sleep 100000' >"$out/hang.log" 2>&1 &
hang_pid=$!
t0=$(date +%s)

# A guest whose kernel never reaches the command (here its initramfs init
# is a sleep; under TCG, a kernel hang early in its boot) is found by the
# boot watchdog: the run boots once more, then fails at once, long before
# its timeout, and keeps the hung vCPUs' registers.
LAB_BOOT_TIMEOUT=25 LAB_APPEND='rdinit=/bin/busybox -- sleep 100000' \
	"$lab" run --name self-boothang --out "$out/boothang" --timeout 600 -- true >"$out/boothang.log" 2>&1 &
boothang_pid=$!
# A guest whose kernel dies in its boot (no init to run: a panic) makes
# the run boot once more, then fail as it is.
LAB_APPEND='rdinit=/nonexistent' \
	"$lab" run --name self-bootdeath --out "$out/bootdeath" --timeout 300 -- true >"$out/bootdeath.log" 2>&1 &
bootdeath_pid=$!

wait $good_pid
rc=$?
grep -E '^(PASS|FAIL|SKIP):' "$out/good.log" | sed 's/^\(PASS\|FAIL\|SKIP\): /&lab-self\/good-/'
fails=$((fails + $(grep -c '^FAIL:' "$out/good.log")))
if [ $rc -eq 0 ]; then pass "lab-self/good-run-exit-0"
else fail "lab-self/good-run-exit-0" "lab run exited $rc, see $out/good.log"; fi
expect "lab-self/good-results-shared-back" '^hello from g2$' "$out/good/g2/hello"

exited_1 lab-self/bad-run-exit-1 $bad_pid "$out/bad.log"
expect "lab-self/failing-command-reported" '^FAIL: lab self-bad: guest 1 command exited 3$' "$out/bad.log"
expect "lab-self/dmesg-warning-reported" '^FAIL: lab self-bad: guest 1 kernel log: .*WARNING: injected' "$out/bad.log"
# The guest's own PASS line must come through even when the run fails.
grep -q '^PASS: lab-self/results-pass-through$' "$out/bad.log" && pass "lab-self/results-pass-through" ||
	fail "lab-self/results-pass-through" "guest PASS line not printed"
expect "lab-self/crashed-guest-reported" '^FAIL: lab self-bad: guest 2 stopped without finishing' "$out/bad.log"
expect "lab-self/crash-in-kernel-log" '^FAIL: lab self-bad: guest 2 kernel log: .*(sysrq|Kernel panic|Oops)' "$out/bad.log"
if grep -q '^FAIL: lab self-bad: guest 1 \(stopped\|timed\)' "$out/bad.log"; then
	fail "lab-self/failures-attributed" "guest 1 blamed for guest 2's crash"
else
	pass "lab-self/failures-attributed"
fi

exited_1 lab-self/hang-exit-1 $hang_pid "$out/hang.log"
dt=$(($(date +%s) - t0))
expect "lab-self/hung-guest-reported" '^FAIL: lab self-hang: guest 1 timed out after 30s' "$out/hang.log"
ran=$(failed_after self-hang "$out/hang.log")
qpid=$(cat "$out/hang/g1/qemu.pid" 2>/dev/null)
if [ -n "$ran" ] && [ "$ran" -lt 45 ] && [ -n "$qpid" ] && ! kill -0 "$qpid" 2>/dev/null; then
	pass "lab-self/hung-guest-killed"
else
	fail "lab-self/hung-guest-killed" "ran '${ran}'s of ${dt}s wall; qemu pid '${qpid}' $(kill -0 "$qpid" 2>/dev/null && echo still running)"
fi

exited_1 lab-self/boot-hang-exit-1 $boothang_pid "$out/boothang.log"
expect "lab-self/boot-hang-retried" '^lab: self-boothang: guest 1 died while booting, before its command \(no command after 25s, kernel hung' "$out/boothang.log"
expect "lab-self/boot-hang-reported" '^FAIL: lab self-boothang: guest 1 hung while booting \(the run.s second boot\)' "$out/boothang.log"
expect "lab-self/boot-hang-registers" '^RIP=' "$out/boothang/g1/boot-hang.registers"
ran=$(failed_after self-boothang "$out/boothang.log")
if [ -n "$ran" ] && [ "$ran" -lt 200 ]; then
	pass "lab-self/boot-hang-not-waiting-out-timeout"
else
	fail "lab-self/boot-hang-not-waiting-out-timeout" "ran '${ran}'s of its 600 s timeout, see $out/boothang.log"
fi

exited_1 lab-self/boot-death-exit-1 $bootdeath_pid "$out/bootdeath.log"
expect "lab-self/boot-death-retried" '^lab: self-bootdeath: guest 1 died while booting, before its command \(.*Kernel panic.*\); booting the run once more' "$out/bootdeath.log"
expect "lab-self/boot-death-reported" '^FAIL: lab self-bootdeath: guest 1 stopped without finishing' "$out/bootdeath.log"

[ "$fails" -eq 0 ]
