#!/usr/bin/env bash
# check: host-only (boots no guest: runs alongside the background suites)
# All host userspace (wire core, provider, libdpi, tools) built a second time
# with AddressSanitizer + UndefinedBehaviorSanitizer (Debug, no recovery) in
# $BUILD-asan, and its whole CTest suite run with leak detection on.  One
# PASS/FAIL/SKIP line per CTest test, prefixed "asan.".
#
# The Wireshark plugin is left out of this tree: it is a module dlopen()ed by
# tshark, which is not built with ASan, so an ASan plugin only loads with the
# runtime preloaded into tshark (and then reports tshark's own leaks).  It has
# no CTest tests either; 40-dissector covers it with the normal build.
# So are the DPI and flows example applications (SWIWARP_EXAMPLE_APPS=OFF):
# no CTest test runs them, the lab runs the normal build's.
#
# Environment: ASAN_BUILD (tree, default $BUILD-asan), ASAN_JOBS (default 2).
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$top/tests/swiwarp/suite-lib.sh"
build=$BUILD
abuild=${ASAN_BUILD:-$build-asan}
jobs=${ASAN_JOBS:-2}
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

# -g1 instead of Debug's -g: line tables are all a sanitizer report needs
# to name file:line in every frame; the full variable and type information
# of -g cost 7 % more compile time (243 s against 226 s summed, alone), in
# make check's longest phase.
mkdir -p "$abuild"
log=$abuild/asan-build.log
if ! { nice cmake -S "$top" -B "$abuild" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	-DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
	-DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
	-DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
	-DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
	-DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined" \
	-DCMAKE_DISABLE_FIND_PACKAGE_Wireshark=TRUE -DSWIWARP_EXAMPLE_APPS=OFF &&
	nice cmake --build "$abuild" -j "$jobs"; } >"$log" 2>&1; then
	tail -n 40 "$log"
	fail asan.build "see $log"
	exit 1
fi
pass asan.build

# halt_on_error/abort: a sanitizer report must fail the test, never scroll by.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Leaks inside other projects' libraries only (each entry says why).
export LSAN_OPTIONS=suppressions=$top/tests/robust/lsan-third-party.supp
# The CTest tree was configured in this same run, so the paths are right.
cd "$abuild" || exit 1
nice ctest --output-on-failure -j "$jobs" --timeout 600 >ctest.log 2>&1
rc=$?
cat ctest.log
if grep -q 'No tests were found' ctest.log; then
	fail asan.ctest "no tests registered in the ASan tree"
	exit 1
fi
# Known bugs (tests/known-bugs, "asan.NAME"): a FAIL becomes a SKIP.
ctest_verdicts "$abuild/ctest.log" asan.
# Every sanitizer report aborts its test (halt_on_error, LSan's exit code),
# so the per-test verdicts above cover them; ctest's own status is the net
# for a failure no line accounts for.
if [ $rc -ne 0 ] && [ $fails -eq 0 ] && [ $ctest_skipped -eq 0 ]; then
	fail asan.ctest "ctest exited $rc, yet no test failed; see $abuild/ctest.log"
fi
[ $fails -eq 0 ]
