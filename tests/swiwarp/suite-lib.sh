# shellcheck shell=bash
# The host side of the suites (tests/suites/*.sh) takes its helpers from
# here; the robustness suites add tests/robust/suite-lib.sh.  Source it
# after setting top (the source tree).  It sets BUILD (unless set), lab
# and fails (the FAIL count the suite exits on), defines pass NAME [NOTE],
# fail NAME [WHY] and skip NAME WHY, brings tests/known-bugs.sh, and:
#   ctest_verdicts LOG PREFIX: the PASS/FAIL/SKIP lines of a CTest run.
#   suite_missing FILE...: why a lab suite cannot run, if it cannot.
#   swiwarp_suite_start NAME OUT: NAME names the suite's tests ("NAME/...");
#     OUT becomes $out, an empty output directory.  Returns 1 after
#     "SKIP: NAME/lab why" if swiwarp.ko, the lab or the provider is missing.
#   run_lab RUN ARGS...: one `lab run ARGS` named NAME-RUN with its output in
#     $out/RUN and $out/RUN.log; prints the run's progress (indented, ping
#     data left out) and passes its PASS/FAIL/SKIP lines through; FAILs count
#     in fails, as does a failed run that says no FAIL.  Returns the run's
#     exit status.
#   run_lab_start RUN ARGS... and run_lab_end RUN: run_lab in two halves,
#     the run in the background between them (boots side by side).
#   build_data_verify: compile tests/swiwarp/data-verify.c into
#     $out/data-verify and set verify to it, and imm-verify.c next to it
#     (both with verify-cm.c); FAILs NAME/build-verify and
#     returns 1 if it does not build.
#   mixed_kernels [SERIES,...]: kernels for a boot with guests on different
#     kernels (issue 16: 6.12 coverage inside boots make check already has).
#     Guest I boots the I-th series of the list (the last one repeating),
#     default "6.1,6.12": guest 1 on Debian 12's 6.1, guest 2 on Debian
#     13's 6.12.  Sets kmix (the `lab run --kernel` value) and ktag (a
#     LAB_RESULT_PREFIX naming each guest's series, "g1-6.1,g2-6.12/").
#     Without an image of a series every guest runs the default kernel,
#     ktag is "" and it prints "SKIP: NAME/k612 why"; FAILs NAME/k612-module
#     and returns 1 when a non-default kernel is installed but swiwarp.ko
#     was not built for it.  LAB_KVER set by the caller wins: every guest
#     boots it, ktag is "".
export BUILD=${BUILD:-$top/build}
# known_bug, known_filter, ...: the reader of tests/known-bugs
source "$top/tests/known-bugs.sh"
lab=$top/tests/lab/lab
fails=0
suite=
out=

pass() { echo "PASS: $1${2:+ ($2)}"; }
fail() { echo "FAIL: $1${2:+ [$2]}"; fails=$((fails + 1)); }
skip() { echo "SKIP: $1 ${2:-}"; }

# ctest_verdicts LOG PREFIX: one line per test of the CTest output in LOG,
# named PREFIX and the test's name; the FAIL of a known bug is a SKIP.
# Sets ctest_skipped to the tests reported as SKIP (so a caller can tell
# whether they explain a nonzero exit status of ctest).
ctest_verdicts() {
	local status name why
	ctest_skipped=0
	# "  1/12 Test  #3: wire.crc32c .........   Passed    0.01 sec"
	while read -r status name; do
		case $status in
		Passed) pass "$2$name" ;;
		Not | Skipped)
			skip "$2$name" "(skipped by the test itself)"
			ctest_skipped=$((ctest_skipped + 1))
			;;
		*)
			if why=$(known_bug "$2$name"); then
				skip "$2$name" "$(known_skip_note "$why")"
				ctest_skipped=$((ctest_skipped + 1))
			else
				fail "$2$name" "$status; see $1"
			fi
			;;
		esac
	done < <(sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.+ *(\*\*\*)?([A-Za-z]+).*$/\3 \1/p' "$1")
}

# suite_missing FILE...: why a lab suite cannot run (the lab, swiwarp.ko or
# one of the FILEs missing); nothing when it can.
suite_missing() {
	local f k
	if [ ! -x "$lab" ]; then
		echo "no lab: tests/lab/lab missing"
		return
	fi
	for f in "$@"; do
		[ -e "$f" ] || { echo "not built: $f; run make all"; return; }
	done
	for k in "${SWIWARP_KO:-}" "$top/kernel/swiwarp.ko" "$BUILD/kernel/swiwarp.ko"; do
		[ -n "$k" ] && [ -f "$k" ] && return
	done
	echo "swiwarp.ko not built (make kernel)"
}

swiwarp_suite_start() {
	local why
	suite=$1 out=$2
	rm -rf "$out"
	mkdir -p "$out"
	why=$(suite_missing "$BUILD/userspace/provider/libswiwarp-rdmav34.so")
	if [ -n "$why" ]; then
		skip "$suite/lab" "$why"
		return 1
	fi
}

run_lab() {
	run_lab_start "$@"
	run_lab_end "$1"
}

# run_lab_start RUN ARGS... / run_lab_end RUN: the same run in the
# background, so that two boots of a suite share the host's two cores: a
# 2-guest boot leaves a core idle whenever one guest waits for the other
# (a server for its client, a barrier, a TCP timeout).  run_lab_end waits
# for it, then reports and returns as run_lab does.
declare -A run_lab_pid=()
run_lab_start() {
	local name=$1
	shift
	"$lab" run --name "$suite-$name" --out "$out/$name" "$@" >"$out/$name.log" 2>&1 &
	run_lab_pid[$name]=$!
}
run_lab_end() {
	local name=$1 rc
	wait "${run_lab_pid[$name]}"
	rc=$?
	echo "=== lab run $name"
	grep -v '^g[0-9]*| \(server \)\?ping data' "$out/$name.log" | grep -v '^\(PASS\|FAIL\|SKIP\):' |
		sed 's/^/  /' | cut -c1-400
	grep -E '^(PASS|FAIL|SKIP):' "$out/$name.log"
	fails=$((fails + $(grep -c '^FAIL:' "$out/$name.log")))
	if [ $rc -ne 0 ] && ! grep -q '^FAIL:' "$out/$name.log"; then
		fail "$suite/$name-run" "lab run exited $rc without saying why"
	fi
	return $rc
}

build_data_verify() {
	verify=$out/data-verify
	# Both link verify-cm.c, their shared rdma_cm connection set-up.
	if ! cc -O2 -Wall -o "$verify" "$top/tests/swiwarp/data-verify.c" \
		"$top/tests/swiwarp/verify-cm.c" -lrdmacm -libverbs >"$out/cc.log" 2>&1 ||
		! cc -O2 -Wall -o "$out/imm-verify" "$top/tests/swiwarp/imm-verify.c" \
			"$top/tests/swiwarp/verify-cm.c" -lrdmacm -libverbs >>"$out/cc.log" 2>&1 ||
		! cc -O2 -Wall -pthread -o "$out/atomic-verify" "$top/tests/swiwarp/atomic-verify.c" \
			"$top/tests/swiwarp/verify-cm.c" -lrdmacm -libverbs >>"$out/cc.log" 2>&1; then
		fail "$suite/build-verify" "$(head -n 3 "$out/cc.log" | tr '\n' ' ')"
		return 1
	fi
}

# shellcheck disable=SC2034 # kmix and ktag are for the caller
mixed_kernels() {
	local want=${1:-6.1,6.12} s rel def list= tag= i=0
	local -a series
	kmix=${LAB_KVER:-default} ktag=
	if [ -n "${LAB_KVER:-}" ]; then
		echo "  LAB_KVER=$LAB_KVER: every guest on it, no mixed kernels"
		return 0
	fi
	def=$("$top/tools/kernels.sh" default 2>/dev/null)
	IFS=, read -ra series <<<"$want"
	for s in "${series[@]}"; do
		i=$((i + 1))
		if ! rel=$("$top/tools/kernels.sh" resolve "$s" 2>&1); then
			skip "$suite/k612" "(no Debian $s kernel installed, every guest on the default kernel: $rel)"
			return 0
		fi
		# kernel/swiwarp.ko is the default kernel's; the others are built
		# into $BUILD/kernel/RELEASE (make kernel).
		if [ "$rel" != "$def" ] && [ ! -f "$BUILD/kernel/$rel/kernel/swiwarp.ko" ]; then
			fail "$suite/k612-module" "swiwarp.ko for $rel not built ($BUILD/kernel/$rel/kernel/swiwarp.ko; make kernel)"
			return 1
		fi
		list+=${list:+,}$rel tag+=${tag:+,}g$i-$s
	done
	kmix=$list ktag=$tag/
	echo "  guests on $kmix (names start with $ktag)"
}
