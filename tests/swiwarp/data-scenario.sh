#!/bin/bash
# Guest side of tests/suites/63-swiwarp-data.sh (the swiwarp data path; what
# each boot covers: that suite's header and Documentation/lab.md).
# Usage (in a lab guest, 2 guests): data-scenario.sh MODE VERIFY_BIN
#   pair      swiwarp on both guests
#   interop   guest 1 upstream siw, guest 2 swiwarp
#   zc, imm, atomic   quick runs of one part of pair: the zero-copy loss
#             check, the Immediate Data or the atomics checks (IMM_PEER=siw
#             or ATOMIC_PEER=siw: guest 1 upstream siw, the refusals)
# VERIFY_BIN is tests/swiwarp/data-verify.c built on the host, imm-verify
# and atomic-verify next to it.  Check names carry the mode and the guest:
#   verify-*, counters-*   data-verify content, the device counters around
#                 its first run (counted_verify)
#   rping-*, read-bw-*     rping -v -V, ib_read_bw -R (-q 1, -q 2)
#   imm-*, atomic-verify-*, atomic-none-*   imm-verify and atomic-verify
#                 (prog_pair; *-wr-api-*: again with -X, every post through
#                 ibv_wr_*; *-none-*: the post refused towards siw)
#   atomic-cap-*, atomic-limits-*, atomic-bw-*, atomic-lat-*   ibv_devinfo
#                 -v and perftest's ib_atomic_bw/lat -R (atomic_checks)
#   verify-zc-loss-*, zc-used-*   zero-copy through 2% loss (zc_loss)
source "$LAB_TOP/tests/lab/lib.sh"
mode=${1:?usage: data-scenario.sh pair|interop|zc|imm|atomic VERIFY_BIN}
verify=${2:?usage: data-scenario.sh pair|interop VERIFY_BIN}
me=g$LAB_ID
work=$LAB_OUT/data-$mode
mkdir -p "$work"
port=7300

next_port() { port=$((port + 1)); }

load_driver() {
	lab_load_or_finish "$1" "$mode/load-$1-$me"
	dev=$(lab_rdma_dev)
}

# run_pair TAG SERVER_ID TIMEOUT SERVER_CMD -- CLIENT_CMD: the server runs
# on guest SERVER_ID, the client on the other guest; stdout in
# $work/TAG-[sc].log, stderr in $work/TAG-[sc].err (kept apart: rping prints
# its DISCONNECT message on stderr, and mixed into the same file it lands in
# the middle of the last ping's 60 KB line).  Sets rc_s / rc_c.
run_pair() {
	local tag=$1 sid=$2 t=$3
	shift 3
	lab_pair "$tag" "$sid" $((3 - sid)) "$t" "$port" "$work/$tag-s" "$work/$tag-c" -- "$@"
	rc_s=$lab_rc_s rc_c=$lab_rc_c
}

# verify_pair TAG SERVER_ID TIMEOUT SIZES [CLIENT_ARGS...]
verify_pair() {
	local tag=$1 sid=$2 t=$3 sizes=$4 log why
	shift 4
	next_port
	run_pair "$tag" "$sid" "$t" "$verify" -s "192.0.2.$sid" -p $port -- \
		"$verify" -c "192.0.2.$sid" -p $port -z "$sizes" "$@"
	if [ "$LAB_ID" != "$sid" ]; then
		log=$work/$tag-c.log
		if [ $rc_c -eq 0 ] && grep -q '^PASSED' "$log"; then
			lab_pass "$mode/$tag-$me"
		else
			why=$(cat "$log" "$work/$tag-c.err" | grep -E '^BAD|data-verify:' | head -n 3 | tr '\n' ' ')
			lab_fail "$mode/$tag-$me" "exit $rc_c: ${why:-$(tail -n 2 "$log" | tr '\n' ' ')}; $(lab_klog)"
		fi
		grep -E '^(ok|BAD)' "$log" | tr '\n' ' ' | cut -c1-600
		echo
	elif [ $rc_s -ne 0 ]; then
		lab_fail "$mode/$tag-server-$me" "exit $rc_s: $(cat "$work/$tag-s.log" "$work/$tag-s.err" | tail -n 2 | tr '\n' ' '); $(lab_klog)"
	fi
}

# counted_verify SIZES: verify_pair verify 1 SIZES with the device
# counters (lab_hw_counters) taken on both guests before and after, once
# both programs have exited (the link is quiet then).  Guest 2, the
# client, sends each size as a Send and as a Write, guest 1 each as Read
# Responses; each guest checks what it sent and received against what the
# other guest's counters say.
counted_verify() {
	local sizes=$1 sum me_pre me_post peer_pre peer_post d min mtu fp bytes why
	local peer=$((3 - LAB_ID))
	me_pre=$LAB_SHARED/ctr.pre.$LAB_ID me_post=$LAB_SHARED/ctr.post.$LAB_ID
	peer_pre=$LAB_SHARED/ctr.pre.$peer peer_post=$LAB_SHARED/ctr.post.$peer
	lab_hw_counters "$dev" >"$me_pre"
	lab_barrier ctr-pre 300
	verify_pair verify 1 240 "$sizes"
	lab_nap 1
	lab_hw_counters "$dev" >"$me_post"
	lab_barrier ctr-post 300
	if ! grep -q '^tx_payload_bytes ' "$me_post"; then
		lab_fail "$mode/counters-$me" "no tx_payload_bytes in rdma statistic show link $dev/1: $(rdma statistic show link "$dev/1" 2>&1 | head -c 300)"
		return
	fi
	tr '\n' ' ' <"$me_post"
	echo
	# what the other guest sent, this one received (both directions)
	why=
	for d in fpdus payload_bytes; do
		[ "$(lab_ctr_delta "$me_pre" "$me_post" rx_$d)" = "$(lab_ctr_delta "$peer_pre" "$peer_post" tx_$d)" ] ||
			why="$why rx_$d rose by $(lab_ctr_delta "$me_pre" "$me_post" rx_$d), g$peer's tx_$d by $(lab_ctr_delta "$peer_pre" "$peer_post" tx_$d);"
	done
	if [ -z "$why" ]; then lab_pass "$mode/counters-rx-is-peer-tx-$me"
	else lab_fail "$mode/counters-rx-is-peer-tx-$me" "$why"; fi
	sum=$(tr ',' '\n' <<<"$sizes" | awk '{ s += $1 } END { print s }')
	min=$sum
	[ "$LAB_ID" = 2 ] && min=$((2 * sum))
	bytes=$(lab_ctr_delta "$me_pre" "$me_post" tx_payload_bytes)
	if [ "${bytes:-0}" -ge "$min" ]; then
		lab_pass "$mode/counters-tx-bytes-$me ($bytes >= $min)"
	else
		lab_fail "$mode/counters-tx-bytes-$me" "tx_payload_bytes rose by ${bytes:-nothing}, the payload was $min"
	fi
	# Two swiwarp ends send each other FPDUs longer than a segment
	# (large_fpdu, Documentation/kernel.md): fewer FPDUs than segments of
	# payload, but none longer than the ULPDU field allows.
	mtu=$(cat /sys/class/net/eth0/mtu)
	fp=$(lab_ctr_delta "$me_pre" "$me_post" tx_fpdus)
	if [ "${fp:-0}" -gt 0 ] && [ $((fp * (mtu - 40))) -lt "${bytes:-0}" ] &&
		[ "${fp:-0}" -ge $(((${bytes:-0} + 65534) / 65535)) ]; then
		lab_pass "$mode/counters-tx-fpdus-$me ($fp FPDUs, $((${bytes:-0} / fp)) B each, MTU $mtu)"
	else
		lab_fail "$mode/counters-tx-fpdus-$me" "tx_fpdus rose by ${fp:-nothing} for ${bytes:-0} B at MTU $mtu, want FPDUs longer than a segment"
	fi
}

# rx_terms: Terminates this guest's device received, all layers.
rx_terms() { lab_hw_counters "$dev" | awk '$1 ~ /^rx_term_/ { s += $2 } END { print s + 0 }'; }

# rping_pair TAG SERVER_ID COUNT SIZE (lab_rping_pair)
rping_pair() {
	next_port
	lab_rping_pair "$mode/$1" "$2" $((3 - $2)) "$3" "$4" $port
}

# readbw_pair TAG SERVER_ID QPS: ib_read_bw -R with QPS QPs, 500
# iterations; the client's average in bw (perftest reports iterations per
# run, QPS x 500 with -q).
readbw_pair() {
	next_port
	# shellcheck disable=SC2016  # an awk program
	lab_perf_pair "$mode/$1" "$2" $((3 - $2)) 180 $port '$1 == 65536 && $2 ~ /^[0-9]+$/ && NF >= 5 && $4 + 0 > 0 { print $4 }' \
		ib_read_bw -R -d "$dev" -n 500 -s 65536 -q "$3" -F --report_gbits
	bw=$lab_perf_value
}

# atomic_pair TAG SERVER_ID TOOL OP ITERS: unmodified perftest TOOL
# (ib_atomic_bw or ib_atomic_lat) -R -A OP between the guests; the client
# must exit 0 with its 8-octet result line (bw: a message rate above zero;
# the MB/s columns have two decimals and read 0.00 on a loaded host).
atomic_pair() {
	# shellcheck disable=SC2016  # an awk program
	local ok='$1 == 8 && $2 == n && NF >= 5'
	[ "$3" = ib_atomic_bw ] && ok="$ok && \$5 + 0 > 0"
	next_port
	lab_perf_pair "$mode/$1" "$2" $((3 - $2)) 120 $port "BEGIN { n = $5 } $ok" \
		"$3" -R -d "$dev" -n "$5" -A "$4" -F
}

# prog_pair PROG TAG SERVER_ID [-n|-X]: PROG (imm-verify or atomic-verify,
# built next to VERIFY_BIN) with the server on SERVER_ID; both must exit 0
# and this guest's side print PASSED.  For imm-verify a Terminate from the
# peer (siw answering an opcode it does not know) fails it too: it shows in
# swiwarp's counters even if both programs got through.  Without -n
# atomic-verify's client sends four bad requests and checks the Terminate
# its QP received for each (op 0xA refused with RDMAP remote protection:
# base or bounds 0x01 for misaligned and past the end, access rights 0x02
# without REMOTE_ATOMIC, STag not associated with the stream 0x03 for
# another PD's region), as swiwarp reports it per QP (rdma res show qp -dd).
prog_pair() {
	local prog=$1 tag=$2 sid=$3 neg=${4:-} bin terms='' t=120 log
	bin=$(dirname "$verify")/$prog
	if [ "$prog" = imm-verify ]; then terms=$(rx_terms); else t=240; fi
	next_port
	run_pair "$tag" "$sid" $t "$bin" -s "192.0.2.$sid" -p $port $neg -- \
		"$bin" -c "192.0.2.$sid" -p $port $neg
	[ "$prog" = atomic-verify ] && port=$((port + 9))	# it used ports port .. port+8
	if [ "$LAB_ID" = "$sid" ]; then log=$work/$tag-s.log; else log=$work/$tag-c.log; fi
	if [ "$prog" = imm-verify ] && [ "$(rx_terms)" != "$terms" ]; then
		lab_fail "$mode/$tag-$me" "Terminate from the peer ($terms -> $(rx_terms) received): $(lab_klog)"
	elif [ $((rc_s + rc_c)) -eq 0 ] && grep -q '^PASSED' "$log"; then
		lab_pass "$mode/$tag-$me"
	else
		lab_fail "$mode/$tag-$me" "exit $rc_s/$rc_c: $(cat "$log" "${log%.log}.err" | grep -E "^BAD|$prog:" | head -n 3 | tr '\n' ' '); $(lab_klog)"
	fi
	grep -E '^(ok|BAD|time)' "$log" | cut -c1-200
}

# The atomics checks of pair (RFC 7306): the capability ibv_devinfo shows,
# then the four perftest runs, servers on both guests, and atomic-verify.
atomic_checks() {
	local iters=200 t0=$SECONDS lim
	if ibv_devinfo -v -d "$dev" | grep -q 'atomic_cap:.*ATOMIC_GLOB'; then
		lab_pass "$mode/atomic-cap-$me"
	else
		lab_fail "$mode/atomic-cap-$me" "ibv_devinfo -v: $(ibv_devinfo -v -d "$dev" | grep atomic_cap | tr -s ' \t' ' ')"
	fi
	# The limits a verbs program sizes its atomics by: responder
	# resources and initiator depth per QP, and for the device.
	lim=$(ibv_devinfo -v -d "$dev" | awk -F: '
		/^[ \t]*max_(qp_rd|qp_init_rd|res_rd)_atom:/ { gsub(/[ \t]/, ""); print }' | tr '\n' ' ')
	if awk -v l="$lim" 'BEGIN { n = split(l, f, " "); ok = n == 3
		for (i = 1; i <= n; i++) { split(f[i], kv, ":"); if (kv[2] + 0 < 1) ok = 0 }
		exit !ok }'; then
		lab_pass "$mode/atomic-limits-$me"
		echo "  ibv_devinfo -v: $lim"
	else
		lab_fail "$mode/atomic-limits-$me" "ibv_devinfo -v: '$lim', want max_qp_rd_atom, max_qp_init_rd_atom and max_res_rd_atom, each at least 1"
	fi
	atomic_pair atomic-bw-fa 1 ib_atomic_bw FETCH_AND_ADD "$iters"
	atomic_pair atomic-bw-cs 2 ib_atomic_bw CMP_AND_SWAP "$iters"
	atomic_pair atomic-lat-fa 2 ib_atomic_lat FETCH_AND_ADD "$iters"
	atomic_pair atomic-lat-cs 1 ib_atomic_lat CMP_AND_SWAP "$iters"
	prog_pair atomic-verify atomic-verify 1
	prog_pair atomic-verify atomic-verify-wr-api 1 -X
	echo "atomic checks: $((SECONDS - t0)) s in this boot"
}

# Zero-copy Sends and Writes must not complete while TCP may still need
# their pages: guest 2 sends (Send and Write, three SGEs at odd offsets,
# poisoned on completion) through 2% loss; guest 1 checks every message.
zc_stat() { lab_hw_counter zc_wqes "$dev"; }
zc_loss() {
	local before after
	before=$(zc_stat)
	if [ "$LAB_ID" = 2 ]; then
		# whatever the default: this check is about zero-copy
		lab_param zcopy_tx_min 16384
		lab_loss_egress 2 || lab_fail "$mode/zc-netem-$me" "could not add netem loss"
	fi
	lab_barrier zc-loss 300
	verify_pair verify-zc-loss 1 900 65536,131101,1000003,4194304 -P -r 2
	if [ "$LAB_ID" = 2 ]; then
		lab_loss_egress 0
		lab_param_restore zcopy_tx_min
		after=$(zc_stat)
		echo "zero-copy counters after the loss run: $(lab_hw_counters "$dev" | grep '^zc_' | tr '\n' ' ')"
		if [ -n "$before" ] && [ -n "$after" ] && [ "$after" -gt "$before" ]; then
			lab_pass "$mode/zc-used-$me"
		else
			lab_fail "$mode/zc-used-$me" "zero-copy WQE counter did not rise ('$before' -> '$after')"
		fi
	fi
}

# Both guests run ib_read_bw -R clients, whose second connect can beat the
# server's re-listen (lab_delay_syn in tests/lab/lib.sh).
syn_delay() {
	lab_delay_syn "${LAB_PERFTEST_SYN_DELAY_MS:-300}" || lab_fail "$mode/syn-delay-$me" "tc setup failed"
}

case $mode in
pair)
	load_driver swiwarp
	syn_delay
	lab_barrier loaded 600
	counted_verify 17,4095,4097,9000,60000,65536,131101,1000003
	prog_pair imm-verify imm 1
	prog_pair imm-verify imm-wr-api 1 -X
	atomic_checks
	rping_pair rping-60k 1 5 60000
	rping_pair rping-odd 2 4 33333
	# Read Responses from the pinned pages (zcopy_rresp=1, the default),
	# then copied (0); the ratio is printed, it is not a pass criterion.
	# Zero-copy Read Responses need a connection without CRC (the source
	# may change under TCP: swiwarp_qp_tx.c), so both sides only accept
	# CRC here; read-bw-crc then runs with CRC, where they are copied.
	lab_param mpa_crc 1
	readbw_pair read-bw 1 1
	bw_zcopy=$bw
	readbw_pair read-bw-q2 2 2
	lab_param zcopy_rresp 0
	readbw_pair read-bw-copy 1 1
	lab_param_restore zcopy_rresp mpa_crc
	readbw_pair read-bw-crc 1 1
	if [ "$LAB_ID" = 2 ]; then
		awk -v z="$bw_zcopy" -v c="$bw" 'BEGIN { if (c > 0) printf "ib_read_bw -R 64 KiB, zero-copy vs copied Read Responses: %.2f\n", z / c }'
	fi
	zc_loss
	;;
imm | atomic)
	# Only the Immediate Data or the atomics checks of pair (quick runs):
	# guest 1 swiwarp or, with IMM_PEER=siw / ATOMIC_PEER=siw, upstream siw,
	# and then the refusal runs both ways.
	peer=${IMM_PEER:-} prog=imm-verify tag=imm
	[ "$mode" = atomic ] && peer=${ATOMIC_PEER:-} prog=atomic-verify tag=atomic
	if [ "$LAB_ID" = 1 ] && [ "$peer" = siw ]; then load_driver siw; else load_driver swiwarp; fi
	if [ "$LAB_ID" = 2 ] && [ "$peer" = siw ]; then
		lab_delay_connect 100 || lab_fail "$mode/netem-$me" "could not add the netem delay"
	fi
	lab_barrier loaded 600
	if [ "$peer" = siw ]; then
		prog_pair $prog $tag-none-siw-server 1 -n
		prog_pair $prog $tag-none-swiwarp-server 2 -n
	elif [ "$mode" = imm ]; then
		prog_pair imm-verify imm 1
		prog_pair imm-verify imm-server-g2 2
	else
		atomic_checks
	fi
	;;
zc)
	# Only the zero-copy loss check (for quick runs, tests/lab/lab run).
	load_driver swiwarp
	lab_barrier loaded 600
	zc_loss
	;;
interop)
	if [ "$LAB_ID" = 1 ]; then load_driver siw; else load_driver swiwarp; fi
	# Upstream siw drops a first Send that lands before its QP is in RTS
	# (tests/lab/lib.sh lab_delay_connect): delay swiwarp's frames.
	if [ "$LAB_ID" = 2 ]; then
		lab_delay_connect 100 || lab_fail "$mode/netem-$me" "could not add the netem delay"
	fi
	syn_delay
	lab_barrier loaded 600
	verify_pair verify-siw-server 1 240 17,4097,60000,131101,1000003
	verify_pair verify-swiwarp-server 2 240 17,4097,60000,131101,1000003
	# swiwarp as initiator: siw echoes the Request's 0x04 in its Reply
	# (the other direction, ~9 s more, is in the quick mode imm).
	prog_pair imm-verify imm-none-siw-server 1 -n
	prog_pair atomic-verify atomic-none-siw-server 1 -n
	rping_pair rping-60k-siw-server 1 5 60000
	rping_pair rping-60k-swiwarp-server 2 5 60000
	readbw_pair read-bw-siw-server 1 1
	readbw_pair read-bw-swiwarp-server 2 1
	;;
*)
	echo "unknown mode $mode" >&2
	exit 2
	;;
esac
lab_finish
