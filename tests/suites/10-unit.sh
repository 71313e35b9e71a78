#!/usr/bin/env bash
# check: host-only (boots no guest: runs alongside the background suites)
# Host-side unit tests registered with CTest (wire core, provider, libdpi,
# dissector helpers).  Each CTest test becomes one PASS/FAIL line.
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$top/tests/swiwarp/suite-lib.sh"
cd "$BUILD" || exit 1
ctest --output-on-failure -j2 --timeout 600 >ctest.log 2>&1
rc=$?
cat ctest.log
ctest_verdicts "$BUILD/ctest.log" ""
grep -q 'No tests were found' ctest.log && skip ctest "no unit tests registered yet"
exit $rc
