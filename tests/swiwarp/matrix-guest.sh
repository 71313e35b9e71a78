#!/bin/bash
# Guest side of tests/suites/62-swiwarp-matrix.sh: the application and
# interop matrix, many unmodified Debian programs per boot.  Usage (in a
# 2-guest lab):
#   matrix-guest.sh pair     swiwarp on both guests
#   matrix-guest.sh interop  guest 1 upstream siw, guest 2 swiwarp
#   matrix-guest.sh siw      upstream siw on both, built with its settings
#                            as parameters (SIW_KO=): only the MPA rev 1
#                            evidence (part siwrev1, below)
# Each application runs with either guest serving.  Then, in the same
# boot, the swiwarp module parameters are changed (CRC policy, MPA
# revision, peer-to-peer with each RTR kind) and a connection checked for
# each setting.  Every check prints one PASS:/FAIL:/SKIP: line; names
# carry the role and, where both guests report, the guest id.
# CHECK_STRICT=1 runs the known-bug items (tests/known-bugs) instead of SKIP.
# MATRIX_PARTS (default "apps loop wire raw") picks parts, for debugging.
source "$LAB_TOP/tests/lab/lib.sh"
mode=${1:?usage: matrix-guest.sh pair|interop}
me=g$LAB_ID
work=$LAB_OUT/matrix-$mode
mkdir -p "$work"
step_no=0
parts=" ${MATRIX_PARTS:-apps loop wire raw} "
[ "$mode" = siw ] && parts=" siwrev1 "
part() { [[ $parts == *" $1 "* ]]; }
T=90

drv_of() { # guest id -> driver name on it
	if [ "$mode" = siw ] || { [ "$mode" = interop ] && [ "$1" = 1 ]; }; then echo siw; else echo swiwarp; fi
}

load() {
	lab_load_or_finish "$(drv_of "$LAB_ID")" "matrix/$mode/load-$me" 200
	dev=$(lab_rdma_dev)
}

# set_param NAME VALUE: on swiwarp guests only (lab_param).
set_param() {
	[ "$(drv_of "$LAB_ID")" != swiwarp ] || lab_param "$1" "$2"
}

step_prefix=matrix/$mode
# check_perf and step
# shellcheck source=tests/swiwarp/guest-steps.sh
source "$LAB_TOP/tests/swiwarp/guest-steps.sh"

# run_unless_known NAME: 0 when the step matrix/MODE/NAME is to run; for a
# [norun] entry of tests/known-bugs (a bug owned elsewhere) guest 2 reports
# the SKIP instead.
source "$LAB_TOP/tests/known-bugs.sh"
run_unless_known() {
	local why
	why=$(known_norun "matrix/$mode/$1") || return 0
	[ "$LAB_ID" = 2 ] && lab_skip "matrix/$mode/$1" "$(known_skip_note "$why")"
	return 1
}

# apps TAG SERVER_ID: the application list with guest SERVER_ID serving.
apps() {
	local t=$1 sid=$2 sip=192.0.2.$2 perf
	perf="-R -d $dev -F --report_gbits"
	step "$t/rping-64" "$sid" 7174 rping:10:64 \
		"rping -s -a $sip -p 7174 -C 10 -S 64 -v" "rping -c -a $sip -p 7174 -C 10 -S 64 -v"
	step "$t/rping-60k" "$sid" 7174 rping:3:60000 \
		"rping -s -a $sip -p 7174 -C 3 -S 60000 -v -V" "rping -c -a $sip -p 7174 -C 3 -S 60000 -v -V"
	step "$t/ucmatose" "$sid" 7471 plain "ucmatose -b $sip -C 20" "ucmatose -s $sip -C 20"
	step "$t/ucmatose-c8" "$sid" 7471 plain "ucmatose -b $sip -c 8 -C 5" "ucmatose -s $sip -c 8 -C 5"
	step "$t/rdma-server-client" "$sid" 7471 plain "rdma_server -s $sip" "rdma_client -s $sip"
	# rsockets: both sides send right after connecting and the server
	# destroys its QP as soon as its last Sends completed (swiwarp as
	# server: RFC 5044 7.1.2 hold and the graceful close, see
	# Documentation/kernel.md).
	step "$t/rstream" "$sid" 7472 plain "rstream -b $sip -p 7472 -S 64 -C 100 -I 2 -T v" \
		"rstream -s $sip -p 7472 -S 64 -C 100 -I 2 -T v"
	step "$t/ib_send_bw" "$sid" 18515 perf "ib_send_bw $perf -p 18515 -n 40 -s 65536" \
		"ib_send_bw $perf -p 18515 -n 40 -s 65536 $sip"
	step "$t/ib_write_bw" "$sid" 18516 perf "ib_write_bw $perf -p 18516 -n 40 -s 65536" \
		"ib_write_bw $perf -p 18516 -n 40 -s 65536 $sip"
	step "$t/ib_write_bw-q4" "$sid" 18517 perf "ib_write_bw $perf -p 18517 -q 4 -n 40 -s 16384" \
		"ib_write_bw $perf -p 18517 -q 4 -n 40 -s 16384 $sip"
	step "$t/ib_read_bw" "$sid" 18518 perf "ib_read_bw $perf -p 18518 -n 40 -s 65536" \
		"ib_read_bw $perf -p 18518 -n 40 -s 65536 $sip"
	step "$t/ib_send_lat" "$sid" 18519 perf "ib_send_lat $perf -p 18519 -n 100 -s 64" \
		"ib_send_lat $perf -p 18519 -n 100 -s 64 $sip"
	step "$t/ib_write_lat" "$sid" 18520 perf "ib_write_lat $perf -p 18520 -n 100 -s 64" \
		"ib_write_lat $perf -p 18520 -n 100 -s 64 $sip"
	step "$t/ib_read_lat" "$sid" 18521 perf "ib_read_lat $perf -p 18521 -n 100 -s 64" \
		"ib_read_lat $perf -p 18521 -n 100 -s 64 $sip"
}

# wire TAG SERVER_ID [KIND]: one rping over the current parameter setting.
wire() {
	local sip=192.0.2.$2
	step "$1" "$2" 7174 "${3:-rping:3:200}" "rping -s -a $sip -p 7174 -C 3 -S 200 -v" \
		"rping -c -a $sip -p 7174 -C 3 -S 200 -v"
}

load
if [ "$mode" = siw ] && [ ! -w /sys/module/siw/parameters/mpa_version ]; then
	[ "$LAB_ID" = 2 ] && lab_skip "matrix/siw/all" "(siw built without its settings as parameters)"
	lab_finish
fi
if [ "$mode" != pair ] && [ "$LAB_ID" = 2 ]; then
	# Upstream siw as server drops a first Send that arrives before its QP
	# is in RTS (tests/lab/README.md): delay what swiwarp sends.
	lab_delay_connect "${LAB_SIW_CLIENT_DELAY_MS:-100}" || lab_fail "matrix/$mode/netem-$me" "no netem"
fi
# Both guests run perftest -R clients, whose second connect can beat the
# server's re-listen (lab_delay_syn in tests/lab/lib.sh).
if part apps; then
	lab_delay_syn "${LAB_PERFTEST_SYN_DELAY_MS:-300}" || lab_fail "matrix/$mode/syn-delay-$me" "tc setup failed"
fi
lab_barrier loaded 200

# Evidence for the upstream siw MPA rev 1 bug that the interop boot SKIPs
# (wire/mpa-rev1-g1-serves, Documentation/kernel.md "Known bugs"), with no
# swiwarp involved: siw serving siw.  First rev 2 (must work, so the setup
# is sound), then guest 2 initiates with mpa_version=1: it PASSes only if
# rping's server fails as documented (its RDMA Read refused, "post send
# error"), and FAILs if it works, which would make that SKIP wrong.
if part siwrev1; then
	wire "siw-rev2-g1-serves" 1
	dd=/sys/kernel/debug/dynamic_debug/control
	# siw's own account of the connection (its IRD/ORD) for the log.
	[ -w $dd ] && echo 'module siw +p' >$dd
	d0=$(dmesg | wc -l)
	echo 1 >/sys/module/siw/parameters/mpa_version
	lab_barrier siwrev1 100
	step "siw-rev1-g1-serves-fails-as-documented" 1 7174 siwrev1 \
		"rping -s -a 192.0.2.1 -p 7174 -C 3 -S 200 -v" "rping -c -a 192.0.2.1 -p 7174 -C 3 -S 200 -v"
	[ -w $dd ] && echo 'module siw -p' >$dd
	echo 2 >/sys/module/siw/parameters/mpa_version
	dmesg | tail -n +$((d0 + 1)) >"$work/siw-debug"
	echo "$me: siw debug log of the rev 1 step: $(wc -l <"$work/siw-debug") lines in $work/siw-debug"
	[ "$LAB_ID" = 1 ] && echo "rev 1 rping server said: $(grep -v 'ping data' "$LAB_SHARED/s$step_no-server.err" "$LAB_SHARED/s$step_no-server.log" | tail -n 4 | tr '\n' ' ')"
fi

if part apps; then
	apps g1-serves 1
	apps g2-serves 2
fi

# Connection storm: rping connects one after another (the connection setup
# race of Documentation/kernel.md).
loops=${MATRIX_LOOPS:-4}
# Servers alternate; every other pair of connections has the initiator
# speak MPA rev 1.
part loop || loops=0
for i in $(seq "$loops"); do
	r=$((i % 4 < 2 ? 1 : 2))
	# Upstream siw serving a rev 1 initiator: its bug (below).
	[ "$mode" = interop ] && [ $(((i % 2) + 1)) = 1 ] && r=2
	set_param mpa_rev $r
	wire "loop/rping-$i" $(((i % 2) + 1))
done
set_param mpa_rev 2

# The wire matrix: both sides change their own settings.  swiwarp through
# its module parameters; upstream siw only when it was built with its
# settings as parameters (tests/swiwarp/matrix-siw-params.sh, SIW_KO=).
if part wire; then
	siwp=/sys/module/siw/parameters
	siw_set() { [ -w "$siwp/$1" ] && echo "$2" >"$siwp/$1"; }
	[ "$(drv_of "$LAB_ID")" = siw ] && [ ! -w "$siwp/peer_to_peer" ] &&
		echo "matrix: siw settings are constants in this build; only swiwarp's side varies"
	# crc: 0 refuse, 1 accept, 2 request (siw: strict / neither / required)
	for crc in 0 1 2; do
		set_param mpa_crc $crc
		siw_set mpa_crc_required "$([ $crc = 2 ] && echo Y || echo N)"
		siw_set mpa_crc_strict "$([ $crc = 0 ] && echo Y || echo N)"
		lab_barrier "crc$crc" 100
		wire "wire/crc$crc-g1-serves" 1
		wire "wire/crc$crc-g2-serves" 2
	done
	set_param mpa_crc 2
	siw_set mpa_crc_required N
	siw_set mpa_crc_strict N
	set_param mpa_rev 1
	siw_set mpa_version 1
	lab_barrier rev1 100
	# Upstream siw bug: for an MPA rev 1 Request (no IRD/ORD on the wire)
	# its CONNECT_REQUEST event carries IRD = ORD = 0; rping's
	# rdma_accept(NULL) takes those, and siw then refuses the server's
	# RDMA Read ("post send error -1").  siw<->siw fails the same way
	# (checked by the siw boot, part siwrev1 above).
	if run_unless_known "wire/mpa-rev1-g1-serves"; then
		wire "wire/mpa-rev1-g1-serves" 1
	fi
	wire "wire/mpa-rev1-g2-serves" 2
	set_param mpa_rev 2
	siw_set mpa_version 2
	# rtr_type bits: 1 Send, 2 Write, 4 Read (siw offers Write and Read).
	for rtr in 1 2 4; do
		set_param peer_to_peer 1
		set_param rtr_type $rtr
		siw_set peer_to_peer Y
		lab_barrier "rtr$rtr" 100
		# A swiwarp responder takes every RTR kind (a Send RTR is
		# consumed without a receive buffer).  siw as responder answers
		# any offer with Write or Read, which we send.
		wire "wire/p2p-rtr$rtr-g1-serves" 1
		wire "wire/p2p-rtr$rtr-g2-serves" 2
	done
	set_param peer_to_peer 0
	set_param rtr_type 6
	siw_set peer_to_peer N
fi

# A peer-to-peer initiator that never sends its RTR (a raw MPA client):
# the accepted rping server must learn that the connection is gone
# (iw_cm: ESTABLISHED with an error status, then CLOSE) after the RTR
# timeout ("hold") or the peer's FIN ("fin"), without a kernel BUG and
# without hanging.  "early": the initiator closes right after its
# Request, before or while the server accepts.
mpa_raw_client() { # IP PORT hold|fin HOLD_S
	python3 - "$@" <<'PY'
import socket, struct, sys, time
ip, port, mode, hold = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
s = socket.create_connection((ip, port), timeout=30)
pd = struct.pack(">HH", 0x8000 | 8, 0x8000 | 8)  # P2P + IRD 8, Write RTR + ORD 8
s.sendall(b"MPA ID Req Frame" + bytes([0x10, 2]) + struct.pack(">H", len(pd)) + pd)
if mode == "early":
    s.close()
    sys.exit(0)
def take(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            sys.exit("connection closed before the MPA Reply was complete")
        b += c
    return b
hdr = take(20)
take(struct.unpack(">H", hdr[18:20])[0])
if hdr[:16] != b"MPA ID Rep Frame" or hdr[16] & 0x20:
    sys.exit("no accepting MPA Reply: %r" % hdr)
if mode == "fin":
    s.close()
    sys.exit(0)
time.sleep(hold)
try:
    s.settimeout(10)
    left = s.recv(100)
except ConnectionResetError:
    left = b""
if left:
    sys.exit("server sent %d bytes instead of closing" % len(left))
PY
}
# The swiwarp guest serves (guest 1 in the pair, guest 2 in interop).
rs=1
[ "$mode" = interop ] && rs=2
if part raw; then
	for how in hold fin early; do
		step_no=$((step_no + 1))
		tag=s$step_no
		if [ "$LAB_ID" = $rs ]; then
			set_param mpa_timeout_ms 3000
			timeout 40 rping -s -a 192.0.2.$rs -p 7174 -C 1 -v >"$work/$tag-server.log" 2>&1 &
			pid=$!
			lab_wait_listen 7174 30 || true
		fi
		lab_barrier "$tag-listen" 100
		if [ "$LAB_ID" != $rs ]; then
			if mpa_raw_client 192.0.2.$rs 7174 $how 6 >"$work/$tag-client.log" 2>&1; then
				lab_pass "matrix/$mode/p2p-no-rtr-$how-client"
			else
				lab_fail "matrix/$mode/p2p-no-rtr-$how-client" "$(tail -n 1 "$work/$tag-client.log")"
			fi
		fi
		if [ "$LAB_ID" = $rs ]; then
			wait "$pid"
			rc=$?
			if [ $rc -ne 124 ]; then lab_pass "matrix/$mode/p2p-no-rtr-$how-server-ends"
			else lab_fail "matrix/$mode/p2p-no-rtr-$how-server-ends" "rping server still waiting after 40 s"; fi
			set_param mpa_timeout_ms 10000
		fi
		lab_barrier "$tag-done" 100
	done
fi

# The SYN band of lab_delay_syn (netem 40:) must have carried this guest's
# connects: both guests were clients.
if part apps; then
	tc -s qdisc show dev eth0 >"$work/qdisc" 2>&1
	syns=$(awk '$1 == "qdisc" { q = $3 } q == "40:" && $1 == "Sent" { print $4; exit }' "$work/qdisc")
	if [ "${syns:-0}" -gt 0 ]; then lab_pass "matrix/$mode/syn-delay-$me"
	else lab_fail "matrix/$mode/syn-delay-$me" "no packet through the SYN band: $(tr '\n' ' ' <"$work/qdisc" | cut -c1-300)"; fi
	echo "$me qdisc: $(grep -E '^qdisc|Sent' "$work/qdisc" | tr -s ' ' | tr '\n' ' ')"
fi

if [ "$(drv_of "$LAB_ID")" = swiwarp ]; then
	lab_check "matrix/$mode/rdma-link-delete-$me" rdma link delete swiwarp0
	lab_check "matrix/$mode/rmmod-$me" rmmod swiwarp
fi
lab_finish
