#!/bin/bash
# examples/ in the lab: hello-iwarp (the thesis's "Hello iWARP") between two
# swiwarp guests and between swiwarp and upstream siw, both directions, in
# one 3-guest boot (guest side: examples/hello-iwarp/lab-guest.sh).  The
# link capture is kept in $BUILD/lab/suite-examples/hello.pcap.
set -uo pipefail
# One vCPU per guest: a functional suite, about 15-35 % faster so (Documentation/lab.md,
# "The time budget of make check"); LAB_SMP overrides it.
export LAB_SMP=${LAB_SMP:-1}
top=$(cd "$(dirname "$0")/../.." && pwd)
source "$top/tests/swiwarp/suite-lib.sh"
swiwarp_suite_start examples/hello "$BUILD/lab/suite-examples" || exit 0
if [ ! -x "$BUILD/examples/hello-iwarp/hello-iwarp" ]; then
	skip examples/hello "hello-iwarp not built (make all)"
	exit 0
fi

"$lab" run -n 3 --name examples-hello --out "$out/run" --capture "$out/hello.pcap" --timeout 600 \
	-- examples/hello-iwarp/lab-guest.sh >"$out/lab.log" 2>&1
rc=$?
grep -E '^g[0-9]+[|] g[0-9] [a-z0-9-]+: ' "$out/lab.log" | sed 's/^/  /'
grep -E '^(PASS|FAIL|SKIP):' "$out/lab.log"
# 3 guests load, and 4 exchanges pass on both of their guests
n=$(grep -c '^PASS: examples/' "$out/lab.log")
if [ "$n" -eq 11 ]; then
	pass examples/hello-all-exchanges
else
	fail examples/hello-all-exchanges "$n of 11 PASS lines; lab run exit $rc, log $out/lab.log"
fi
