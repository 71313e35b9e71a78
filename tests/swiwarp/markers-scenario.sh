#!/bin/bash
# Guest side of tests/suites/65-swiwarp-markers.sh: MPA markers (RFC 5044)
# in one 3-guest boot.  Guests 1 and 2 run swiwarp, guest 3 upstream siw.
#   markers-scenario.sh VERIFY_BIN
# VERIFY_BIN is tests/swiwarp/data-verify.c built on the host.
# Phases (the module parameter markers is switched between them; M in our
# MPA frames asks the peer for markers, and swiwarp always sends markers
# when the peer asks):
#   both     markers=1 on guests 1 and 2, CRC on: rping 64 B and 60 KB -V,
#            data-verify, ib_write_bw/ib_send_bw/ib_read_bw -R at several
#            sizes; port 7190 is the golden-capture exchange (rping 20 KB);
#            then tests/swiwarp/markers-bad.py sends a wrong FPDUPTR and an
#            FPDU without its marker: both must draw a marker Terminate
#   oneway   markers only toward guest 1 (guest 2 markers=0): rping, verify
#   nocrc    markers both ways, mpa_crc=0 (refuse CRC): rping, verify
#   siw      guest 1 markers=1 against siw (guest 3): siw rejects M in a
#            Request and refuses a Reply with M, so the connection must
#            fail quickly and cleanly in both roles; with markers=0 again
#            siw and swiwarp talk (rping 60 KB)
# Every check prints one PASS:/FAIL:/SKIP: line.
source "$LAB_TOP/tests/lab/lib.sh"
verify=${1:?usage: markers-scenario.sh VERIFY_BIN}
me=g$LAB_ID
work=$LAB_OUT/markers
mkdir -p "$work"
port=7300

next_port() { port=$((port + 1)); }
note() { echo "$me $(date +%T) $*"; }

if [ "$LAB_ID" = 3 ]; then lab_load_or_finish siw "markers/load-$me"; else lab_load_or_finish swiwarp "markers/load-$me"; fi
dev=$(lab_rdma_dev)
# perftest -R reconnects to a port its server is still re-opening (see
# lab_delay_syn in tests/lab/lib.sh): give the server 300 ms.
if [ "$LAB_ID" != 3 ] && ! lab_delay_syn 300; then
	lab_fail "markers/syn-delay-$me" "tc setup failed"
fi
lab_barrier loaded 600

# set_params PHASE M1 M2 CRC: module parameters markers of guests 1 and 2,
# mpa_crc of both (2 = ask for CRC, 0 = refuse it).
set_params() {
	local m
	case $LAB_ID in
	1) m=$2 ;;
	2) m=$3 ;;
	*) m= ;;
	esac
	if [ -n "$m" ]; then
		lab_param markers "$m"
		lab_param mpa_crc "$4"
	fi
	lab_barrier "params-$1" 300
}

# run_pair TAG SERVER CLIENT TIMEOUT SERVER_CMD -- CLIENT_CMD: the server
# runs on guest SERVER, the client on guest CLIENT; the others only wait.
# Logs in $work/TAG-[sc].{log,err}; sets rc_s / rc_c on every guest
# (lab_pair_note: one retry after a perftest clock calibration failure).
# LAB_PAIR_END_SERVER=1: a server whose client failed may wait for ever:
# end it.
run_pair() {
	local tag=$1 sid=$2 cid=$3 t=$4
	shift 4
	note "$tag start"
	lab_pair "$tag" "$sid" "$cid" "$t" "$port" \
		"$work/$tag-s" "$work/$tag-c" -- "$@"
	rc_s=$lab_rc_s rc_c=$lab_rc_c
	note "$tag end"
}

# rping_pair TAG SERVER CLIENT COUNT SIZE: both sides must exit 0, the
# client checks every ping (-V).
rping_pair() {
	local tag=$1 sid=$2 cid=$3 count=$4 size=$5 p=${6:-}
	if [ -n "$p" ]; then port=$p; else next_port; fi
	run_pair "$tag" "$sid" "$cid" 90 rping -s -a "192.0.2.$sid" -C "$count" -S "$size" -V -p $port -- \
		rping -c -a "192.0.2.$sid" -C "$count" -S "$size" -V -p $port
	if [ "$LAB_ID" = "$cid" ]; then
		if [ $rc_c -eq 0 ] && ! grep -qiE 'mismatch|error' "$work/$tag-c.err" "$work/$tag-c.log"; then
			lab_pass "markers/$tag-client"
		else
			lab_fail "markers/$tag-client" "exit $rc_c: $(cat "$work/$tag-c.log" "$work/$tag-c.err" | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
		fi
	elif [ "$LAB_ID" = "$sid" ]; then
		if [ $rc_s -eq 0 ]; then
			lab_pass "markers/$tag-server"
		else
			lab_fail "markers/$tag-server" "exit $rc_s: $(cat "$work/$tag-s.log" "$work/$tag-s.err" | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
		fi
	fi
}

# verify_pair TAG SERVER CLIENT SIZES: data-verify content checks.
verify_pair() {
	local tag=$1 sid=$2 cid=$3 sizes=$4
	next_port
	run_pair "$tag" "$sid" "$cid" 150 "$verify" -s "192.0.2.$sid" -p $port -- \
		"$verify" -c "192.0.2.$sid" -p $port -z "$sizes"
	if [ "$LAB_ID" = "$cid" ]; then
		if [ $rc_c -eq 0 ] && grep -q '^PASSED' "$work/$tag-c.log"; then
			lab_pass "markers/$tag"
		else
			lab_fail "markers/$tag" "exit $rc_c: $(cat "$work/$tag-c.log" "$work/$tag-c.err" | grep -E '^BAD|data-verify:' | head -n 3 | tr '\n' ' ' | cut -c1-300)"
		fi
	elif [ "$LAB_ID" = "$sid" ] && [ $rc_s -ne 0 ]; then
		lab_fail "markers/$tag-server" "exit $rc_s: $(tail -n 2 "$work/$tag-s.err" | tr '\n' ' ')"
	fi
}

# perf_pair TAG SERVER CLIENT PROGRAM SIZE ITERS
perf_pair() {
	local tag=$1 sid=$2 cid=$3 prog=$4 size=$5 iters=$6 bw r
	local args=(-R -d "$dev" -n "$iters" -s "$size" -F --report_gbits)
	next_port
	run_pair "$tag" "$sid" "$cid" 120 "$prog" "${args[@]}" -p $port -- \
		"$prog" "${args[@]}" -p $port "192.0.2.$sid"
	r=${lab_pair_note:+ ($lab_pair_note)}
	if [ "$LAB_ID" = "$cid" ]; then
		bw=$(awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 5 { print $4 }' "$work/$tag-c.log")
		if [ $rc_c -eq 0 ] && awk -v b="$bw" 'BEGIN { exit !(b + 0 > 0) }'; then
			lab_pass "markers/$tag$r"
			echo "$tag: $bw Gb/s (TCG guest, not a benchmark)"
		else
			lab_fail "markers/$tag" "exit $rc_c, bw '$bw': $(cat "$work/$tag-c.log" "$work/$tag-c.err" | tail -n 3 | tr '\n' ' ' | cut -c1-200)$r"
		fi
	elif [ "$LAB_ID" = "$sid" ] && [ $rc_s -ne 0 ]; then
		lab_fail "markers/$tag-server" "exit $rc_s: $(tail -n 3 "$work/$tag-s.log" | tr '\n' ' ' | cut -c1-200)$r"
	fi
}

# ---- both directions, CRC on
set_params both 1 1 2
rping_pair both-rping-64 1 2 10 64
rping_pair both-rping-60k 2 1 4 60000
rping_pair both-golden 1 2 2 20000 7190
verify_pair both-verify 1 2 17,4095,4097,9000,60000,131101
perf_pair both-write-bw-1k 2 1 ib_write_bw 1000 200
perf_pair both-write-bw-64k 1 2 ib_write_bw 65536 100
perf_pair both-send-bw-4k 1 2 ib_send_bw 4096 200
perf_pair both-read-bw-64k 2 1 ib_read_bw 65536 100
perf_pair both-read-bw-333 1 2 ib_read_bw 333 200
# a raw peer breaks the markers toward guest 1: Terminate, marker error
# (ports 7290 and 7291: the suite's wire check leaves them out)
port=7289
for c in badptr nomarker; do
	next_port
	LAB_PAIR_END_SERVER=1 run_pair "bad-$c" 1 2 60 rping -s -a 192.0.2.1 -C 1 -S 64 -p $port -- \
		python3 "$LAB_TOP/tests/swiwarp/markers-bad.py" 192.0.2.1 $port $c
	if [ "$LAB_ID" = 2 ]; then
		if [ $rc_c -eq 0 ]; then
			lab_pass "markers/terminate-$c"
		else
			lab_fail "markers/terminate-$c" "exit $rc_c: $(tail -n 2 "$work/bad-$c-c.log" | tr '\n' ' ')"
		fi
	fi
done
port=7310

# ---- markers only toward guest 1 (guest 1 asks, guest 2 does not)
set_params oneway 1 0 2
rping_pair oneway-rping-60k 1 2 4 60000
verify_pair oneway-verify 2 1 17,4097,60000,131101

# ---- both directions, no CRC
set_params nocrc 1 1 0
rping_pair nocrc-rping-60k 2 1 4 60000
verify_pair nocrc-verify 1 2 17,4097,60000,131101
perf_pair nocrc-write-bw-64k 1 2 ib_write_bw 65536 100

# ---- against upstream siw, which has no markers
set_params siw 1 0 2
# swiwarp (markers=1) connects to siw: siw answers with a Reject
next_port
LAB_PAIR_END_SERVER=1 run_pair siw-client-rejected 3 1 60 rping -s -a 192.0.2.3 -C 1 -S 64 -p $port -- \
	rping -c -a 192.0.2.3 -C 1 -S 64 -p $port
if [ "$LAB_ID" = 1 ]; then
	if [ $rc_c -ne 0 ] && [ $rc_c -ne 124 ] &&
		dmesg | grep -q 'peer rejected the MPA Request; it asked for markers'; then
		lab_pass markers/siw-client-rejected
	else
		lab_fail markers/siw-client-rejected "rping exit $rc_c (want a quick failure, 124 is a timeout); dmesg: $(dmesg | grep swiwarp | tail -n 2 | tr '\n' ' ')"
	fi
fi
# siw connects to swiwarp (markers=1): siw refuses our Reply (M set)
next_port
LAB_PAIR_END_SERVER=1 run_pair siw-server-refused 1 3 60 rping -s -a 192.0.2.1 -C 1 -S 64 -p $port -- \
	rping -c -a 192.0.2.1 -C 1 -S 64 -p $port
if [ "$LAB_ID" = 3 ]; then
	if [ $rc_c -ne 0 ] && [ $rc_c -ne 124 ]; then
		lab_pass markers/siw-server-refused
	else
		lab_fail markers/siw-server-refused "siw rping exit $rc_c (want a quick failure, 124 is a timeout)"
	fi
fi
# markers=0 again: the usual siw interop (siw as client: it sends first)
set_params siw-off 0 0 2
rping_pair siw-after-off 1 3 4 60000
lab_finish
