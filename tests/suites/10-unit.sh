#!/usr/bin/env bash
# check: host-only (boots no guest: runs alongside the background suites)
# Host-side unit tests registered with CTest (wire core, provider, libdpi,
# dissector helpers).  Each CTest test becomes one PASS/FAIL line.
set -uo pipefail
build=${BUILD:?}
cd "$build" || exit 1
ctest --output-on-failure -j2 --timeout 600 >ctest.log 2>&1
rc=$?
cat ctest.log
# "  1/12 Test  #3: wire.crc32c .........   Passed    0.01 sec"
sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.+ *(\*\*\*)?([A-Za-z]+).*$/\3 \1/p' ctest.log |
	while read -r status name; do
		case $status in
		Passed) echo "PASS: $name" ;;
		Not | Skipped) echo "SKIP: $name" ;;
		*) echo "FAIL: $name ($status)" ;;
		esac
	done
grep -q 'No tests were found' ctest.log && echo "SKIP: ctest (no unit tests registered yet)"
exit $rc
