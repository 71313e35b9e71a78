#!/usr/bin/env bash
# make demo, part "flows": a distributed hash join on DPI flows across three
# lab guests over swiwarp.  Each guest holds a third of two tables R and S;
# two hash-shuffle flows bring matching keys together, every guest joins its
# partition, and a SUM-reduce flow collects the totals at guest 1, which
# compares them with a single-node join of the complete tables.
#
# If swiwarp cannot run the join (module not built, or the join fails on it),
# the demo says so and runs the same join on Soft-RoCE (rxe) instead, so the
# flows part is still shown.  (Upstream siw is not used as the fallback: its
# passive-side connection race hangs this mesh of connections intermittently,
# see Documentation/flows.md.)
#
#   tests/flows/demo-join.sh            (BUILD=... for another build tree)
#   DEMO_JOIN_ROWS=20000 DEMO_JOIN_DIST=uniform|zipf DEMO_JOIN_DRIVERS="swiwarp rxe"
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}

if [ "${1:-}" = --guest ]; then
	# --- in each lab guest --------------------------------------------------
	source "$LAB_TOP/tests/lab/lib.sh"
	bin=$FLOWS_BIN
	me=$((LAB_ID - 1))
	spec=/tmp/demo-join.spec
	note() { [ "$LAB_ID" = 1 ] && echo "$*" >>"$LAB_SHARED/story"; }
	ok=0
	for drv in ${DEMO_JOIN_DRIVERS:-swiwarp rxe}; do
		port=$((7600 + ${#drv}))
		: >"$spec"
		for i in $(seq 0 $((LAB_N - 1))); do echo "node $i 192.0.2.$((i + 1)):$port" >>"$spec"; done
		"lab_load_$drv" >/tmp/load.$drv.log 2>&1
		echo $? >"$LAB_SHARED/load.$drv.$LAB_ID"
		# Generous timeouts: on a busy host one guest can boot minutes late.
		lab_barrier "loaded-$drv" 400
		if [ "$(cat "$LAB_SHARED"/load."$drv".* | grep -c '^0$')" != "$LAB_N" ]; then
			note "$drv: could not be loaded on every guest in time ($(tail -1 /tmp/load.$drv.log)); trying the next driver"
			rdma link del "${drv}0" >/dev/null 2>&1
			lab_barrier "unloaded-$drv" 300
			continue
		fi
		timeout "${DEMO_JOIN_TIMEOUT:-120}" "$bin/flows-join" --spec "$spec" --id "$me" --nodes "$LAB_N" \
			--rows "${DEMO_JOIN_ROWS:-20000}" --dist "${DEMO_JOIN_DIST:-uniform}" --prefix "d$port" \
			--name "demo.$drv" --op-timeout-ms 30000 >"$LAB_OUT/join.$drv" 2>&1
		echo $? >"$LAB_SHARED/rc.$drv.$LAB_ID"
		lab_barrier "joined-$drv" 400
		if [ "$(cat "$LAB_SHARED"/rc."$drv".* | grep -c '^0$')" = "$LAB_N" ] && grep -q "^PASS: demo.$drv$" "$LAB_SHARED/../g1/join.$drv"; then
			note "driver: $drv"
			ok=1
			break
		fi
		note "$drv: the join did not complete on it ($(grep -h -m1 -E '^FAIL:|error' "$LAB_OUT/join.$drv" | cut -c1-160)); falling back to the next driver"
		rdma link del "${drv}0" >/dev/null 2>&1
		lab_barrier "unloaded-$drv" 300
	done
	[ $ok = 1 ]
	exit $?
fi

# --- on the host ------------------------------------------------------------
build=${BUILD:-$top/build}
cd "$top" || exit 1
bin=$build/userspace/flows
if [ ! -x "$bin/flows-join" ] || [ ! -x tests/lab/lab ]; then
	echo "demo-join: $bin/flows-join or the lab is missing (make all)" >&2
	exit 1
fi
# A private copy of the binaries: the build tree may be rebuilt meanwhile.
snap=$build/flows-demo-snap
rm -rf "$snap" && mkdir -p "$snap"
cp -L "$bin/flows-join" "$bin/libdpi_flows.so.0" "$build/userspace/dpi/libdpi.so.0" "$snap/" || exit 1
out=$build/lab/runs/flows-demo-$(date +%Y%m%d-%H%M%S)
echo "== DPI flows demo: distributed hash join, 3 lab guests (booting, about a minute) =="
tests/lab/lab run -n 3 --name flows-demo --out "$out" --quiet --timeout "${DEMO_JOIN_LAB_TIMEOUT:-900}" -- \
	"LD_LIBRARY_PATH='$snap' FLOWS_BIN='$snap' DEMO_JOIN_ROWS='${DEMO_JOIN_ROWS:-20000}' DEMO_JOIN_DIST='${DEMO_JOIN_DIST:-uniform}' DEMO_JOIN_DRIVERS='${DEMO_JOIN_DRIVERS:-swiwarp rxe}' tests/flows/demo-join.sh --guest"
rc=$?
[ -f "$out/shared/story" ] && sed 's/^/  /' "$out/shared/story"
drv=$(sed -n 's/^driver: //p' "$out/shared/story" 2>/dev/null | tail -1)
if [ -n "$drv" ]; then
	for g in 1 2 3; do
		sed -n "s/^# demo\.$drv\.partition[0-9]*: /  guest $g: /p" "$out/g$g/join.$drv"
	done
	line=$(sed -n "s/^# demo\.$drv: //p" "$out/g1/join.$drv")
	res=$(grep -E "^(PASS|FAIL): demo\.$drv$" "$out/g1/join.$drv" | cut -d: -f1)
	echo "  result: $line"
	m=$(echo "$line" | sed -n 's/.*distributed \([0-9-]*\) matches.*single-node \([0-9-]*\) matches.*/\1 \2/p')
	if [ "$res" = PASS ]; then
		echo "== join on $drv: $res: ${m%% *} rows matched, the same as a single-node join of the full tables (${m##* }) =="
	else
		echo "== join on $drv: FAIL (see $out) =="
		rc=1
	fi
else
	echo "== join: FAIL: no driver completed it (run dir $out) =="
	rc=1
fi
exit $rc
