#!/bin/bash
# hello-iwarp exchanges between lab guests, for the example's own 3-guest
# lab (lab-guest.sh) and for the boots of tests/suites/60-swiwarp-basic.sh
# (tests/swiwarp/scenario.sh).  Source after tests/lab/lib.sh.
#   hello_exchange TAG PORT RESPONDER INITIATOR [initiator options...]
# The responder listens on PORT, the initiator (guest INITIATOR) writes into
# its buffer and reads it back; each exits 0 only when the data matched.
# Every guest of the boot must call it (a barrier per exchange); the two
# that take part print examples/hello-TAG-gN.
hello_bin=${HELLO_BIN:-$BUILD/examples/hello-iwarp/hello-iwarp}

hello_exchange() {
	local tag=$1 port=$2 resp=$3 init=$4 rc pid work=$LAB_OUT/hello
	shift 4
	mkdir -p "$work"
	if [ ! -x "$hello_bin" ]; then
		[ "$LAB_ID" = "$init" ] && lab_skip "examples/hello-$tag" "$hello_bin not built (make all)"
		return 0
	fi
	if [ "$LAB_ID" = "$resp" ]; then
		timeout 120 "$hello_bin" -s -a "$LAB_IP" -p "$port" >"$work/$tag.log" 2>&1 &
		pid=$!
		lab_wait_listen "$port" 60
		lab_barrier "hello-$tag" 300
		wait $pid
		rc=$?
	elif [ "$LAB_ID" = "$init" ]; then
		lab_barrier "hello-$tag" 300
		timeout 120 "$hello_bin" -c "192.0.2.$resp" -p "$port" "$@" >"$work/$tag.log" 2>&1
		rc=$?
	else
		lab_barrier "hello-$tag" 300
		return 0
	fi
	sed "s/^/g$LAB_ID $tag: /" "$work/$tag.log"
	if [ $rc -eq 0 ]; then
		lab_pass "examples/hello-$tag-g$LAB_ID"
	else
		lab_fail "examples/hello-$tag-g$LAB_ID" "exit $rc: $(tail -n 2 "$work/$tag.log" | tr '\n' ' '); $(lab_klog 3)"
	fi
}
