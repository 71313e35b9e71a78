# shellcheck shell=bash
# Shared by tests/suites/80-robust.sh, 80-robust-neg.sh, 81-faults.sh, 85-soak.sh and
# tests/soak/run.sh (host side).  robust_lab NAME TIMEOUT MEM GUEST_CMD runs
# one 2-guest lab boot and prints its result lines, the FAILs of known bugs
# (tests/known-bugs) as SKIPs.
# robust_mixed NAME (below) first puts guest 2 on 6.12: robust_lab then
# boots the guests on $kmix and names the results with $ktag in front.
# pass/fail/skip, suite_missing and tests/known-bugs.sh (callers set top)
source "$top/tests/swiwarp/suite-lib.sh"
robust_lab() {
	local name=$1 tmo=$2 mem=$3 cmd=$4 out rc
	out=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
	[ -n "${ktag:-}" ] && cmd="LAB_RESULT_PREFIX=$ktag $cmd"
	# another build of the module (robust_prereq accepted it) for the guests
	[ -n "${SWIWARP_KO:-}" ] && cmd="SWIWARP_KO=$(printf %q "$SWIWARP_KO") $cmd"
	LAB_NO_SIW=${robust_nosiw:-${LAB_NO_SIW:-0}} nice tests/lab/lab run -n 2 --name "$name" \
		--kernel "${kmix:-${LAB_KVER:-default}}" --timeout "$tmo" --mem "$mem" -- "$cmd" \
		>"$out/log" 2>&1
	rc=$?
	grep -vE '^(PASS|FAIL|SKIP):' "$out/log"
	grep -E '^(PASS|FAIL|SKIP):' "$out/log" | known_filter "${ktag:-}"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL:' "$out/log"; then
		fail "$name.lab" "lab run exited $rc"
	fi
	rm -rf "$out"
}

# robust_prereq NAME BIN...: print SKIP and return 1 if the lab, a program
# or swiwarp.ko is missing.
robust_prereq() {
	local name=$1 why
	shift
	why=$(suite_missing "$@")
	[ -z "$why" ] && return 0
	skip "$name.all" "($why)"
	return 1
}

# robust_mixed NAME DEV: guest 1 on Debian 12's 6.1, guest 2 on Debian 13's
# 6.12 (issue 16: 6.12 inside a boot make check has anyway), through
# mixed_kernels of tests/swiwarp/suite-lib.sh: sets kmix and ktag
# ("g1-6.1,g2-6.12/"), or leaves both guests on the default kernel (SKIP
# NAME/k612) without a 6.12 image.  Only for DEV swiwarp without SWIWARP_KO: siw is built for
# 6.1 here, so a siw run keeps both guests there; a swiwarp run needs no
# siw at all (robust_nosiw=1: lab run does not build it for 6.12).
# Returns 1 (after a FAIL) when swiwarp.ko was not built for 6.12.
robust_mixed() {
	local name=$1 dev=$2 top=$SWIWARP_TOP suite
	kmix= ktag= robust_nosiw=
	# SWIWARP_KO (another build of the module) is built for one kernel
	[ "$dev" = swiwarp ] && [ -z "${SWIWARP_KO:-}" ] || return 0
	# shellcheck source=tests/swiwarp/suite-lib.sh
	source "$top/tests/swiwarp/suite-lib.sh"
	suite=$name
	mixed_kernels || return 1
	[ -n "$ktag" ] && robust_nosiw=1
	return 0
}
