#!/usr/bin/env bash
# make bench, part "flows" (issues 6, 19): one boot of FLOWS_BENCH_NODES lab
# guests (default 4; vCPUs per guest: LAB_SMP, the lab's default 2) running
# tests/bench/flows/guest.sh:
#   - shuffle throughput vs tuple size and node count: DPI flow vs plain TCP,
#     with ib_write_bw between two guests as the RDMA baseline;
#   - the distributed join: DPI flows vs MPI (Open MPI, MPI_Alltoallv over
#     TCP, and with FLOWS_BENCH_DRIVER=swiwarp also over swiwarp through the
#     ofi MTL: impl mpi-swiwarp) vs a TCP shuffle of the same bytes, uniform
#     and Zipf keys;
#   - streaming aggregation: eager partial aggregation + lazy merge vs
#     re-partitioning;
#   - before the guests boot, natively on the host: what a flow costs per
#     tuple over an in-process transport against a bare copy (flows-overhead;
#     part "overhead" of FLOWS_BENCH_PARTS, which runs when the list is unset
#     or names it).
# JSON goes to build/bench/flows/ and is kept as
# Documentation/data/bench-flows-DRIVER-STAMP.jsonl, plots go to
# Documentation/images/flows-*-DRIVER.png;
# Documentation/benchmarks-flows.md discusses them.  All numbers come from
# TCG guests on a shared host: compare ratios within one run only.
#   FLOWS_BENCH_DRIVER=swiwarp|rxe|siw (default swiwarp, the stack we ship)
#   FLOWS_BENCH_MB=8  FLOWS_BENCH_NODES=4
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
cd "$top" || exit 1
drv=${FLOWS_BENCH_DRIVER:-swiwarp}
bin=$build/userspace/flows
for f in flows-shuffle flows-join flows-stream flows-overhead; do
	[ -x "$bin/$f" ] || { echo "flows bench: $bin/$f missing (make all)"; exit 1; }
done
[ -x "$bin/flows-mpi-join" ] || echo "flows bench: no flows-mpi-join (Open MPI not installed): the MPI join is skipped"
stamp=$(date -u +%Y%m%d-%H%M%S)
# A private copy of the binaries and the guest script for this run: the build
# tree and the checkout may change while the guests run.
snap=$build/flows-bench-snap-$stamp
rm -rf "$snap" && mkdir -p "$snap"
cp -L "$bin"/flows-* "$bin/libdpi_flows.so.0" "$build/userspace/dpi/libdpi.so.0" tests/bench/flows/guest.sh "$snap/" ||
	exit 1
res=$build/bench/flows
mkdir -p "$res"
out=$build/lab/runs/flows-bench-$stamp
nodes=${FLOWS_BENCH_NODES:-4}
# What a flow costs per tuple apart from the network, natively on the host
# before the guests boot (flows-overhead; TCG would distort it), with the
# host's load average next to it.
overhead=$res/overhead-$stamp.jsonl
: >"$overhead"
if [[ " ${FLOWS_BENCH_PARTS:-overhead} " == *" overhead "* ]]; then
	load=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)
	"$bin/flows-overhead" | sed "s/^{/{\"where\":\"host\",\"loadavg\":[$load],/" >"$overhead" ||
		echo "flows bench: flows-overhead failed"
fi
tests/lab/lab run -n "$nodes" --name flows-bench --out "$out" --timeout "${FLOWS_BENCH_TIMEOUT:-1500}" --quiet -- \
	"LD_LIBRARY_PATH='$snap' FLOWS_BIN='$snap' FLOWS_BENCH_NODES=$nodes FLOWS_BENCH_MB='${FLOWS_BENCH_MB:-8}' FLOWS_BENCH_ROWS='${FLOWS_BENCH_ROWS:-200000}' FLOWS_BENCH_ZIPF_ROWS='${FLOWS_BENCH_ZIPF_ROWS:-20000}' FLOWS_BENCH_PARTS='${FLOWS_BENCH_PARTS:-bw shuffle join stream}' '$snap/guest.sh' $drv"
rc=$?
cat "$overhead" "$out"/g*/bench.jsonl >"$res/results-$drv-$stamp.jsonl" 2>/dev/null
cp "$res/results-$drv-$stamp.jsonl" "$res/results-$drv.jsonl"
[ -s "$res/results-$drv-$stamp.jsonl" ] &&
	cp "$res/results-$drv-$stamp.jsonl" "Documentation/data/bench-flows-$drv-$stamp.jsonl"
py=/usr/bin/python3 # Debian's, with python3-matplotlib
[ -x "$py" ] || py=python3
"$py" tests/bench/flows/plot.py "$res/results-$drv.jsonl" "$drv" Documentation/images "$res/summary-$drv.json" ||
	rc=1
rm -rf "$snap"
[ $rc -eq 0 ] || echo "flows bench: lab run exit $rc (see $out)"
exit $rc
