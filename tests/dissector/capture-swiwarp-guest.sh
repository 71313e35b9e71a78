#!/bin/bash
# Guest side of tests/dissector/capture-swiwarp.sh: one 2-guest boot, one
# exchange per TCP port so the host can cut the capture into goldens.
#   port 7174  rping, MPA rev 2, CRC on
#   port 7175  rping, MPA rev 2, CRC off
#   port 7176  rping, MPA rev 1, CRC on
#   port 7177  rping, MPA rev 1, CRC off
#   port 7178  rping, MPA rev 2, CRC on, 20000-byte pings (multi-segment)
#   port 7471  hello-iwarp, MPA rev 2 peer-to-peer (RTR), CRC on
#   port 7180  tools/hostile against rping -s -P: bad CRC, Write to a bad
#              STag, reserved opcode, MSN gap (swiwarp answers Terminates)
# With the argument rfc7306 (tests/dissector/capture-swiwarp-rfc7306.sh)
# only the RFC 7306 exchange instead, MPA rev 2, CRC on:
#   port 7190  imm-verify -k 3 -S 1500: three RDMA Writes with Immediate
#              Data (0, 1 and 7 bytes); a 1500-byte Write, eight Sends
#              with Immediate (0 .. 1500 bytes); a 1500-byte Write, a
#              Write with Immediate with Solicited Event (1000 bytes); a
#              Send with Immediate with Solicited Event (777 bytes); a
#              plain Send.  -S 1500 keeps the ordering Writes (200000
#              bytes by default, for 63-swiwarp-data) and the Sends (up to
#              16384) small enough for a golden file, the longest still two FPDUs.
#   ports 7191-7195  atomic-verify -q 1 -t 2 -w 2: two Fetch-and-Adds and
#              two Compare-and-Swaps (Atomic Request and Response), then
#              four connections whose first Atomic the responder refuses
#              with a Terminate (misaligned, no REMOTE_ATOMIC, past the
#              end, another PD)
# Guest 1 serves, guest 2 is the client.
# Usage: capture-swiwarp-guest.sh [rfc7306]
source "$LAB_TOP/tests/lab/lib.sh"
work=$LAB_OUT/cap
mkdir -p "$work"
lab_load_swiwarp || { lab_fail "capture/load-g$LAB_ID" "lab_load_swiwarp"; exit 1; }
lab_pass "capture/load-g$LAB_ID"
lab_barrier loaded 600

# run TAG PORT REV CRC P2P SERVER-CMD... -- CLIENT-CMD...
run() {
	local tag=$1 port=$2 rev=$3 crc=$4 p2p=$5 srv=() cli=() pid rc
	shift 5
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	lab_param mpa_rev "$rev"
	lab_param mpa_crc "$crc"
	lab_param peer_to_peer "$p2p"
	if [ "$LAB_ID" = 1 ]; then
		timeout 120 "${srv[@]}" >"$work/$tag.log" 2>&1 &
		pid=$!
		lab_wait_listen "$port" 60
		lab_barrier "$tag" 300
		if [ "$tag" = hostile ]; then
			lab_barrier "$tag-done" 300
			kill "$pid"
			wait "$pid"
			rc=0
		else
			wait "$pid"
			rc=$?
		fi
	else
		lab_barrier "$tag" 300
		timeout 120 "${cli[@]}" >"$work/$tag.log" 2>&1
		rc=$?
		[ "$tag" = hostile ] && lab_barrier "$tag-done" 300
	fi
	if [ $rc -eq 0 ]; then lab_pass "capture/$tag-g$LAB_ID"; else lab_fail "capture/$tag-g$LAB_ID" "exit $rc"; fi
	sleep 1
}

peer=192.0.2.1
hello=$BUILD/examples/hello-iwarp/hello-iwarp
if [ "${1:-}" = rfc7306 ]; then
	bin=${RFC7306_BIN:?RFC7306_BIN: where imm-verify and atomic-verify are}
	run imm 7190 2 2 0 "$bin/imm-verify" -s "$LAB_IP" -p 7190 -k 3 -S 1500 -- \
		"$bin/imm-verify" -c $peer -p 7190 -k 3 -S 1500
	run atomic 7191 2 2 0 "$bin/atomic-verify" -s "$LAB_IP" -p 7191 -q 1 -t 2 -w 2 -- \
		"$bin/atomic-verify" -c $peer -p 7191 -q 1 -t 2 -w 2
	lab_finish
	exit
fi
run rev2_crc 7174 2 2 0 rping -s -a "$LAB_IP" -p 7174 -C 4 -S 200 -v -- \
	rping -c -a $peer -p 7174 -C 4 -S 200 -v
run rev2_nocrc 7175 2 0 0 rping -s -a "$LAB_IP" -p 7175 -C 4 -S 200 -v -- \
	rping -c -a $peer -p 7175 -C 4 -S 200 -v
run rev1_crc 7176 1 2 0 rping -s -a "$LAB_IP" -p 7176 -C 4 -S 200 -v -- \
	rping -c -a $peer -p 7176 -C 4 -S 200 -v
run rev1_nocrc 7177 1 0 0 rping -s -a "$LAB_IP" -p 7177 -C 4 -S 200 -v -- \
	rping -c -a $peer -p 7177 -C 4 -S 200 -v
run big 7178 2 2 0 rping -s -a "$LAB_IP" -p 7178 -C 2 -S 20000 -- \
	rping -c -a $peer -p 7178 -C 2 -S 20000
run hello 7471 2 2 1 "$hello" -s -a "$LAB_IP" -p 7471 -- "$hello" -c $peer -p 7471
# hostile exits 1 when a reaction is not one it allows; the capture is what
# matters here, its verdicts are 80-robust's business.
run hostile 7180 2 2 0 rping -s -P -a "$LAB_IP" -p 7180 -- \
	sh -c "$BUILD/tools/hostile/hostile -p 7180 -c fpdu.bad_crc -c fpdu.write_bad_stag -c fpdu.bad_opcode -c fpdu.bad_msn $peer; true"
lab_finish
