# shellcheck shell=bash
# Shared by tests/suites/80-robust-neg.sh, 81-faults.sh, 85-soak.sh and
# tests/soak/run.sh (host side).  robust_lab NAME TIMEOUT MEM GUEST_CMD runs
# one 2-guest lab boot and prints its result lines; FAILs of tests listed in
# tests/robust/known-bugs ("prefix<TAB>reason"; the prefix is matched
# against the name with and without its leading "robust.") become
# "SKIP: ... known bug: ..." unless ROBUST_STRICT=1.
robust_lab() {
	local name=$1 tmo=$2 mem=$3 cmd=$4 out rc line n pat why
	local known=${SWIWARP_TOP:-.}/tests/robust/known-bugs
	out=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
	nice tests/lab/lab run -n 2 --name "$name" --timeout "$tmo" --mem "$mem" -- "$cmd" \
		>"$out/log" 2>&1
	rc=$?
	grep -vE '^(PASS|FAIL|SKIP):' "$out/log"
	while IFS= read -r line; do
		if [[ $line == FAIL:* ]] && [ "${ROBUST_STRICT:-0}" != 1 ] && [ -f "$known" ]; then
			n=${line#FAIL: }
			n=${n%% *}
			while IFS=$'\t' read -r pat why; do
				[[ -z $pat || $pat == \#* ]] && continue
				if [[ $n == "$pat"* || $n == robust."$pat"* ]]; then
					line="SKIP: $n known bug: ${why#\[norun\] } (run with ROBUST_STRICT=1)"
					break
				fi
			done <"$known"
		fi
		echo "$line"
	done < <(grep -E '^(PASS|FAIL|SKIP):' "$out/log")
	if [ $rc -ne 0 ] && ! grep -q '^FAIL:' "$out/log"; then
		echo "FAIL: $name.lab [lab run exited $rc]"
	fi
	rm -rf "$out"
}

# robust_prereq BIN...: print SKIP and return 1 if the lab, a program or
# swiwarp.ko is missing.
robust_prereq() {
	local name=$1 f k
	shift
	[ -x tests/lab/lab ] || { echo "SKIP: $name.all (no lab: tests/lab/lab missing)"; return 1; }
	for f in "$@"; do
		[ -x "$f" ] || { echo "SKIP: $name.all (not built: $f; run make all)"; return 1; }
	done
	for k in "${SWIWARP_KO:-}" kernel/swiwarp.ko "$BUILD/kernel/swiwarp.ko"; do
		[ -n "$k" ] && [ -f "$k" ] && return 0
	done
	echo "SKIP: $name.all (swiwarp.ko not built yet)"
	return 1
}
