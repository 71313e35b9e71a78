#!/usr/bin/env bash
# The stack benchmark's harness (tests/bench/stack.sh) on one tiny
# configuration: one guest, loopback, 64 KB ib_write_bw, 64 B ib_send_lat
# and connbench, siw and swiwarp once each.  Tests that every planned run
# leaves a record, that the report parses numbers out of perftest and
# connbench output and writes results.json.  It times nothing: the numbers
# are not judged here (that is `make bench`).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
export BUILD=${BUILD:-$top/build}
out=$BUILD/bench/stack-smoke
rm -rf "$out"
if [ ! -f kernel/swiwarp.ko ] && [ ! -f "$BUILD/kernel/swiwarp.ko" ]; then
	echo "SKIP: bench-smoke swiwarp.ko not built"
	exit 0
fi
STACK_MODES=lo STACK_SIZES=65536 STACK_REPS=1 STACK_BYTES=4194304 STACK_BW_TESTS=write \
	STACK_LAT_TESTS=send STACK_LAT_ITERS=200 STACK_STACKS="siw swiwarp" STACK_CONN_N=3 \
	STACK_RUN_TIMEOUT=60 STACK_NO_DOC=1 STACK_OUT=$out STACK_TIMEOUT=600 \
	tests/bench/stack.sh >"$out.log" 2>&1
rc=$?
res=$out/results.json
if [ -s "$res" ]; then echo "PASS: bench-smoke/report-written"; else
	echo "FAIL: bench-smoke/report-written [no $res; stack.sh exit $rc, log $out.log]"
	exit 1
fi
/usr/bin/python3 - "$res" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
want = {(t, s) for t in ("write", "lat_send", "conn") for s in ("siw", "swiwarp")} | {("write", "tcp")}
got = {(r["test"], r["stack"]) for r in runs}
miss = want - got
print("PASS: bench-smoke/every-run-recorded" if not miss else f"FAIL: bench-smoke/every-run-recorded [missing {sorted(miss)}]")
def numbers(test, stack, key):
    ok = [r for r in runs if r["test"] == test and r["stack"] == stack and r["rc"] == "0"]
    return [r for r in ok if (r.get(key) or 0) > 0]
for test, stack, key, name in (("write", "siw", "Bps", "siw-write-bw-parsed"),
                               ("write", "tcp", "Bps", "iperf3-parsed"),
                               ("lat_send", "siw", "lat_typical_us", "siw-latency-parsed")):
    print(f"PASS: bench-smoke/{name}" if numbers(test, stack, key) else f"FAIL: bench-smoke/{name} [no successful run with {key}]")
c = [r for r in runs if r["test"] == "conn" and r["stack"] == "siw" and r.get("conn")]
print("PASS: bench-smoke/connbench-parsed" if c and c[0]["conn"]["tcp_connect_us_median"] > 0
      else "FAIL: bench-smoke/connbench-parsed [no connbench numbers for siw]")
# swiwarp runs must be either numbers or an honest failure record.
for r in runs:
    if r["stack"] == "swiwarp" and r["rc"] == "0" and not any(k in r for k in ("Bps", "lat_typical_us", "conn")):
        print(f"FAIL: bench-smoke/swiwarp-{r['test']}-consistent [exit 0 but nothing parsed: {r['file']}]")
        break
else:
    print("PASS: bench-smoke/swiwarp-runs-consistent")
PY
