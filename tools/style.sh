#!/usr/bin/env bash
# Userspace style: clang-format (every C/C++ file under the directories listed
# below) and, with --tidy, clang-tidy on libdpi and the flows
# library with their own .clang-tidy profiles.
# Usage: tools/style.sh [--tidy] [BUILD_DIR]
# Prints "FAIL: style.format FILE" per badly formatted file, or with --tidy
# "FAIL: style.tidy FILE" per file with findings, and "PASS: style.format" /
# "PASS: style.tidy" when clean.  Exit status 1 on any finding.
# clang-tidy takes ~18 s of CPU per file (~8 min for all), too long for every `make check`:
# it runs as `make tidy`; `make check` runs the format half (suite 12-style).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
tidy=0
[ "${1:-}" = --tidy ] && { tidy=1; shift; }
build=${1:-${BUILD:-$top/build}}
rc=0

# The directories whose C/C++ is formatted with clang-format.  Each file gets
# the nearest .clang-format above it: the top-level one (libdpi, flows and
# their tests) or userspace/provider's (the provider and, by a symbolic link,
# its tests).  The kernel, the dissector, include/ and tools/ follow the
# kernel's style instead (suite 30-kernel-style for the module).
dirs=(userspace/provider tests/provider userspace/dpi tests/dpi userspace/flows tests/flows)
mapfile -t files < <(for d in "${dirs[@]}"; do git ls-files "$d" | grep -E '\.(c|h|cpp|hpp)$'; done | sort -u)
bad=0
# One clang-format run for all files; it names each file it would change.
while read -r f; do
	echo "FAIL: style.format $f (clang-format -i $f)"
	bad=1
done < <(clang-format --dry-run --Werror "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
[ $bad -eq 0 ] && echo "PASS: style.format (${#files[@]} files under ${dirs[*]})"
rc=$bad

if [ $tidy = 1 ]; then
	if [ ! -f "$build/compile_commands.json" ]; then
		echo "FAIL: style.tidy (no $build/compile_commands.json: make userspace first)"
		exit 1
	fi
	mapfile -t srcs < <(git ls-files 'userspace/dpi/*.cpp' 'userspace/flows/*.cpp')
	log=$(mktemp -d)
	# Two at a time: the machines we run on have two cores.
	printf '%s\n' "${srcs[@]}" | xargs -P 2 -I{} sh -c \
		'clang-tidy --quiet -p "$1" "$2" >"$3/$(echo "$2" | tr / _).log" 2>&1' _ "$build" {} "$log"
	bad=0
	for f in "${srcs[@]}"; do
		l=$log/$(echo "$f" | tr / _).log
		if grep -qE '(warning|error):' "$l"; then
			echo "FAIL: style.tidy $f"
			grep -E '(warning|error):' "$l" | sed 's/^/  /' | head -n 20
			bad=1
		fi
	done
	[ $bad -eq 0 ] && echo "PASS: style.tidy (${#srcs[@]} files)"
	rm -rf "$log"
	[ $bad -ne 0 ] && rc=1
fi
exit $rc
