#!/bin/bash
# Guest side of tests/suites/64-examples.sh: hello-iwarp in a 3-guest lab.
# Guests 1 and 2 run swiwarp, guest 3 runs upstream siw.
#   port 7471  g2 -> g1  swiwarp <-> swiwarp, "Hello iWARP!"
#   port 7472  g2 -> g1  swiwarp <-> swiwarp, 100000 bytes (multi-segment)
#   port 7473  g3 -> g1  siw initiator -> swiwarp responder
#   port 7474  g2 -> g3  swiwarp initiator -> siw responder
# Each exchange: responder and initiator exit 0 only when the data matched.
source "$LAB_TOP/tests/lab/lib.sh"
hello=$BUILD/examples/hello-iwarp/hello-iwarp
work=$LAB_OUT/hello
mkdir -p "$work"
if [ "$LAB_ID" = 3 ]; then
	lab_load_siw
else
	lab_load_swiwarp
fi
rc=$?
[ $rc -eq 0 ] && lab_pass "examples/load-g$LAB_ID" || lab_fail "examples/load-g$LAB_ID" "loader exit $rc"
lab_barrier loaded 600

# one TAG PORT RESPONDER INITIATOR [initiator options...]
one() {
	local tag=$1 port=$2 resp=$3 init=$4 rc pid
	shift 4
	if [ "$LAB_ID" = "$resp" ]; then
		timeout 120 "$hello" -s -a "$LAB_IP" -p "$port" >"$work/$tag.log" 2>&1 &
		pid=$!
		lab_wait_listen "$port" 60
		lab_barrier "$tag" 300
		wait $pid
		rc=$?
	elif [ "$LAB_ID" = "$init" ]; then
		lab_barrier "$tag" 300
		timeout 120 "$hello" -c "192.0.2.$resp" -p "$port" "$@" >"$work/$tag.log" 2>&1
		rc=$?
	else
		lab_barrier "$tag" 300
		return 0
	fi
	sed "s/^/g$LAB_ID $tag: /" "$work/$tag.log"
	if [ $rc -eq 0 ]; then
		lab_pass "examples/hello-$tag-g$LAB_ID"
	else
		lab_fail "examples/hello-$tag-g$LAB_ID" "exit $rc: $(tail -n 2 "$work/$tag.log" | tr '\n' ' '); $(lab_klog 3)"
	fi
}

one swiwarp 7471 1 2
one swiwarp-100k 7472 1 2 -S 100000 -m "iWARP says hello. "
one siw-to-swiwarp 7473 1 3
# Upstream siw as responder: delay the initiator's frames (see
# lab_delay_egress in lib.sh for the siw connection-setup race this avoids).
[ "$LAB_ID" = 2 ] && { lab_delay_egress 100 || echo "could not add the netem delay"; }
one swiwarp-to-siw 7474 3 2
lab_finish
