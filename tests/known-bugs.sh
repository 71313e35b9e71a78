# shellcheck shell=bash
# The one reader of tests/known-bugs (the file's header gives its format),
# for suites on the host and scripts in the guests alike.  Each function
# answers "not known" when CHECK_STRICT=1.
#
#   known_bug NAME         prints the reason ("[norun]" taken off) and
#                          returns 0 when a pattern of the file matches NAME
#   known_norun NAME       the same for the entries marked [norun] only
#   known_norun_under PFX  the [norun] entries whose pattern starts with PFX,
#                          PFX taken off, one per line (for a program's own
#                          exclusion list, which wants plain names)
#   known_skip_note WHY    the note of a known bug's SKIP line, the same
#                          everywhere: "known bug: WHY (CHECK_STRICT=1 runs it)"
#   known_filter [TAG]     copies result lines from stdin to stdout and turns
#                          the FAIL of a known bug into "SKIP: NAME known
#                          bug: REASON"; TAG is taken off the front of NAME
#                          before the match (a suite's kernel tag)
known_bugs_file=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/known-bugs

# _known_entries: the file's "pattern<TAB>reason" lines, comments left out.
_known_entries() {
	[ "${CHECK_STRICT:-0}" = 1 ] && return 0
	[ -f "$known_bugs_file" ] || return 0
	grep -vE '^(#|[[:space:]]*$)' "$known_bugs_file"
}

_known_match() { # norun|any NAME
	local pat why
	while IFS=$'\t' read -r pat why; do
		# shellcheck disable=SC2053 # pat is a glob on purpose
		[[ $2 == $pat ]] || continue
		[[ $1 == norun && $why != "[norun]"* ]] && continue
		echo "${why#\[norun\] }"
		return 0
	done < <(_known_entries)
	return 1
}

known_bug() { _known_match any "$1"; }
known_norun() { _known_match norun "$1"; }

known_norun_under() {
	local pat why
	while IFS=$'\t' read -r pat why; do
		[[ $pat == "$1"* && $why == "[norun]"* ]] && echo "${pat#"$1"}"
	done < <(_known_entries)
	return 0
}

known_skip_note() { echo "known bug: $1 (CHECK_STRICT=1 runs it)"; }

known_filter() {
	local line name why
	while IFS= read -r line; do
		if [[ $line == FAIL:* ]]; then
			name=${line#FAIL: }
			name=${name%% *}
			if why=$(known_bug "${name#"${1:-}"}"); then
				line="SKIP: $name $(known_skip_note "$why")"
			fi
		fi
		printf '%s\n' "$line"
	done
}
