#!/bin/bash
# Guest side of tests/suites/63-swiwarp-data.sh (the swiwarp data path).
# Usage (in a lab guest, 2 guests):
#   data-scenario.sh pair VERIFY_BIN      swiwarp on both guests
#   data-scenario.sh interop VERIFY_BIN   guest 1 upstream siw, guest 2 swiwarp
#   data-scenario.sh zc VERIFY_BIN        only the zero-copy loss check
#   data-scenario.sh imm VERIFY_BIN       only the Immediate Data checks
#                                         (IMM_PEER=siw: against siw)
#   data-scenario.sh atomic VERIFY_BIN    only the atomics checks (pair;
#                                         ATOMIC_PEER=siw: against siw)
# VERIFY_BIN is tests/swiwarp/data-verify.c built on the host.
# Checks (names carry the mode and the guest id):
#   verify-*     data-verify: multi-SGE, multi-FPDU Send/Write/Read content
#   rping-*      rping -v with 60 KB and odd sizes, every ping's content
#   read-bw-*    ib_read_bw -R 64 KiB, many outstanding Reads (-q 1, -q 2)
#   imm-*        imm-verify (tests/swiwarp/imm-verify.c, built next to
#                VERIFY_BIN): pair: RDMA Write with Immediate Data (RFC
#                7306) in a row, values and order, solicited-only
#                notification for both kinds, a Write's data in place at
#                the completion of the Write/Send with Immediate after it;
#                interop: the post fails locally on swiwarp (the client;
#                both roles in mode imm), nothing reaches siw (a Send
#                each way still works, and no Terminate shows in
#                swiwarp's log)
#   atomic-cap-*, atomic-limits-*, atomic-bw-*, atomic-lat-*  pair:
#                ibv_devinfo -v says ATOMIC_GLOB and max_qp_rd_atom,
#                max_qp_init_rd_atom, max_res_rd_atom >= 1; unmodified
#                perftest ib_atomic_bw -R and ib_atomic_lat -R, each with
#                -A FETCH_AND_ADD and -A CMP_AND_SWAP (RFC 7306 Atomic
#                Request/Response between the swiwarp guests)
#   atomic-verify-*  pair: atomic-verify (tests/swiwarp/atomic-verify.c):
#                4 QPs x 200 Fetch-and-Adds on one counter while the
#                server's CPU adds too, Compare-and-Swaps on another, final
#                values and distinct originals checked; misaligned, no
#                REMOTE_ATOMIC right, out-of-bounds and another PD's
#                requests complete in error with the right Terminate,
#                memory around untouched; then the ordering of Atomics
#                against Writes, Reads and a fenced Write, each guest
#                requester once (both directions)
#   imm-wr-api-*, atomic-verify-wr-api-*  pair: imm-verify and
#                atomic-verify again with -X: the same steps and checks,
#                the QPs made with rdma_create_qp_ex (send_ops_flags) and
#                every post through ibv_wr_start .. ibv_wr_complete
#   atomic-none-*  interop: the atomics post fails locally on swiwarp
#                toward siw (swiwarp the client; both roles in mode atomic
#                with ATOMIC_PEER=siw), a Send still goes through
#   verify-zc-loss-*  pair only: data-verify -P (the client poisons every
#                Send/Write source the instant it completes) with 64 KB to
#                4 MB messages while guest 2 (the client) drops 2% of its
#                frames (netem), so TCP retransmits; zc-used-* checks that
#                the device's zero-copy counter (zc_wqes) rose
#   counters-*   pair: the device counters (rdma statistic show link)
#                around the first data-verify run: each guest's received
#                FPDUs and payload bytes equal what the other sent, the
#                client sent at least its Sends and Writes, the server its
#                Read Responses, in at least bytes / (MTU - 40) FPDUs
# Every check prints one PASS:/FAIL:/SKIP: line.
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
# the middle of the last ping's 60 KB line).  Sets rc_s / rc_c, and note
# when lab_pair retried a perftest pair after a clock calibration failure.
run_pair() {
	local tag=$1 sid=$2 t=$3
	shift 3
	lab_pair "$tag" "$sid" $((3 - sid)) "$t" "$port" "$work/$tag-s" "$work/$tag-c" -- "$@"
	rc_s=$lab_rc_s rc_c=$lab_rc_c note=${lab_pair_note:+ ($lab_pair_note)}
}

# verify_pair TAG SERVER_ID SIZES [CLIENT_ARGS...]
verify_pair() {
	local tag=$1 sid=$2 sizes=$3 log why
	shift 3
	next_port
	run_pair "$tag" "$sid" "${VERIFY_TIMEOUT:-240}" "$verify" -s "192.0.2.$sid" -p $port -- \
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
	verify_pair verify 1 "$sizes"
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

# imm_pair TAG SERVER_ID [-n|-X]: imm-verify with the server on SERVER_ID.
imm_pair() {
	local tag=$1 sid=$2 neg=${3:-} imm terms log
	imm=$(dirname "$verify")/imm-verify
	terms=$(rx_terms)
	next_port
	run_pair "$tag" "$sid" 120 "$imm" -s "192.0.2.$sid" -p $port $neg -- \
		"$imm" -c "192.0.2.$sid" -p $port $neg
	if [ "$LAB_ID" = "$sid" ]; then log=$work/$tag-s.log; else log=$work/$tag-c.log; fi
	# A Terminate from the peer (siw answering an opcode it does not
	# know) shows in swiwarp's counters even if both programs got through.
	if [ "$(rx_terms)" != "$terms" ]; then
		lab_fail "$mode/$tag-$me" "Terminate from the peer ($terms -> $(rx_terms) received): $(lab_klog)"
	elif [ $((rc_s + rc_c)) -eq 0 ] && grep -q '^PASSED' "$log"; then
		lab_pass "$mode/$tag-$me"
	else
		lab_fail "$mode/$tag-$me" "exit $rc_s/$rc_c: $(cat "$log" "${log%.log}.err" | grep -E '^BAD|imm-verify:' | head -n 3 | tr '\n' ' '); $(lab_klog)"
	fi
	grep -E '^(ok|BAD)' "$log" | cut -c1-200
}

# check_rping LOG RC COUNT SIZE PREFIX: prints why it is bad, or nothing.
# rping -v prints each ping's buffer: "rdma-ping-K: " and SIZE-1 bytes of
# letters cycling through ASCII 65..122, starting at 65 + K mod 58.
check_rping() {
	local log=$1 rc=$2 count=$3 size=$4 prefix=$5
	if [ "$rc" -ne 0 ]; then
		echo "rping exited $rc: $(cat "${log%.log}.err" | tail -n 2 | tr '\n' ' ' | cut -c1-160)"
		return
	fi
	# the client validates every ping itself (-V) and complains on stderr
	if grep -qiE 'mismatch|error' "${log%.log}.err"; then
		echo "rping said: $(grep -iE 'mismatch|error' "${log%.log}.err" | head -n 1)"
		return
	fi
	awk -v n="$count" -v sz="$size" -v pre="$prefix" '
		BEGIN { for (i = 0; i < 58; i++) chr[i] = sprintf("%c", 65 + i) }
		/[Ee]rror|mismatch/ { print "rping said: " $0; bad = 1; exit }
		index($0, pre) == 1 {
			s = substr($0, length(pre) + 1)
			h = "rdma-ping-" k + 0 ": "
			if (index(s, h) != 1) { print "ping " k + 0 " missing or out of order"; bad = 1; exit }
			if (length(s) != sz - 1) { print "ping " k + 0 ": " length(s) + 1 " bytes, want " sz; bad = 1; exit }
			body = substr(s, length(h) + 1)
			c = k % 58
			for (i = 1; i <= length(body); i++) {
				want = chr[c]
				if (substr(body, i, 1) != want) {
					print "ping " k + 0 ": byte " length(h) + i - 1 " is \"" substr(body, i, 1) "\", want \"" want "\""
					bad = 1; exit
				}
				c = (c + 1) % 58
			}
			k++
		}
		END { if (!bad && k != n) print "saw " k + 0 " pings, want " n }' "$log"
}

# rping_pair TAG SERVER_ID COUNT SIZE (the client also compares with -V)
rping_pair() {
	local tag=$1 sid=$2 count=$3 size=$4 why
	next_port
	run_pair "$tag" "$sid" 120 rping -s -a "192.0.2.$sid" -C "$count" -S "$size" -v -p $port -- \
		rping -c -a "192.0.2.$sid" -C "$count" -S "$size" -v -V -p $port
	if [ "$LAB_ID" != "$sid" ]; then
		why=$(check_rping "$work/$tag-c.log" $rc_c "$count" "$size" "ping data: ")
		lab_verdict "$mode/$tag-client-$me" "${why:+$why; $(lab_klog)}"
	else
		why=$(check_rping "$work/$tag-s.log" $rc_s "$count" "$size" "server ping data: ")
		lab_verdict "$mode/$tag-server-$me" "${why:+$why; $(lab_klog)}"
	fi
}

# perf_verdict TAG SERVER_ID OK WHAT: after a perftest run_pair, on the
# server its exit status, on the client its verdict: PASS (WHAT shown) when
# it exited 0 and OK is 0, else FAIL with WHAT and the end of its log.
perf_verdict() {
	local tag=$1 sid=$2 ok=$3 what=$4 side=client r=c rc=$rc_c
	if [ "$LAB_ID" = "$sid" ]; then
		side=server r=s rc=$rc_s ok=0 what=
	fi
	if [ "$ok" = 0 ] && [ "$rc" -eq 0 ]; then
		lab_pass "$mode/$tag-$side-$me$note"
		[ -n "$what" ] && echo "$tag: $what (TCG guest, not a benchmark)"
	else
		lab_fail "$mode/$tag-$side-$me" "exit $rc${what:+, $what}: $(cat "$work/$tag-$r.log" "$work/$tag-$r.err" | tail -n 3 | tr '\n' ' ' | cut -c1-160); $(lab_klog)$note"
	fi
}

# readbw_pair TAG SERVER_ID QPS ITERS: ib_read_bw -R with QPS QPs; the
# client's average in bw.
readbw_pair() {
	local tag=$1 sid=$2 qps=$3 iters=$4 ok=1
	bw=
	local args=(-R -d "$dev" -n "$iters" -s 65536 -q "$qps" -F --report_gbits)
	next_port
	run_pair "$tag" "$sid" 180 ib_read_bw "${args[@]}" -p $port -- \
		ib_read_bw "${args[@]}" -p $port "192.0.2.$sid"
	if [ "$LAB_ID" != "$sid" ]; then
		# perftest reports iterations per run (QPS x ITERS with -q)
		bw=$(awk '$1 == 65536 && $2 ~ /^[0-9]+$/ && NF >= 5 { print $4 }' "$work/$tag-c.log")
		awk -v b="$bw" 'BEGIN { exit !(b + 0 > 0) }' && ok=0
	fi
	perf_verdict "$tag" "$sid" $ok "average '$bw' Gb/s"
}

# atomic_pair TAG SERVER_ID TOOL OP ITERS: unmodified perftest TOOL
# (ib_atomic_bw or ib_atomic_lat) -R -A OP between the guests; the client
# must exit 0 with its 8-octet result line (bw: a message rate above zero;
# the MB/s columns have two decimals and read 0.00 on a loaded host).
atomic_pair() {
	local tag=$1 sid=$2 tool=$3 op=$4 iters=$5 line='' ok=1
	local args=(-R -d "$dev" -n "$iters" -A "$op" -F)
	next_port
	run_pair "$tag" "$sid" 120 "$tool" "${args[@]}" -p $port -- \
		"$tool" "${args[@]}" -p $port "192.0.2.$sid"
	if [ "$LAB_ID" != "$sid" ]; then
		line=$(awk -v n="$iters" '$1 == 8 && $2 == n && NF >= 5' "$work/$tag-c.log")
		[ -n "$line" ] &&
			{ [ "$tool" != ib_atomic_bw ] || awk -v b="$(echo "$line" | awk '{ print $5 }')" 'BEGIN { exit !(b + 0 > 0) }'; } &&
			ok=0
	fi
	perf_verdict "$tag" "$sid" $ok "result '$line'"
}

# averify_pair TAG SERVER_ID [-n|-X]: atomic-verify (built next to
# VERIFY_BIN) with the server on SERVER_ID.  Without -n the client also
# sends four bad requests and checks the Terminate its QP received for
# each (op 0xA refused with RDMAP remote protection: base or bounds 0x01
# for misaligned and past the end, access rights 0x02 without
# REMOTE_ATOMIC, STag not associated with the stream 0x03 for another
# PD's region), as swiwarp reports it per QP (rdma res show qp -dd).
averify_pair() {
	local tag=$1 sid=$2 neg=${3:-} bin log
	bin=$(dirname "$verify")/atomic-verify
	next_port
	run_pair "$tag" "$sid" 240 "$bin" -s "192.0.2.$sid" -p $port $neg -- \
		"$bin" -c "192.0.2.$sid" -p $port $neg
	port=$((port + 9))	# it used ports port .. port+8
	if [ "$LAB_ID" = "$sid" ]; then log=$work/$tag-s.log; else log=$work/$tag-c.log; fi
	if [ $((rc_s + rc_c)) -eq 0 ] && grep -q '^PASSED' "$log"; then
		lab_pass "$mode/$tag-$me"
	else
		lab_fail "$mode/$tag-$me" "exit $rc_s/$rc_c: $(cat "$log" "${log%.log}.err" | grep -E '^BAD|atomic-verify:' | head -n 3 | tr '\n' ' '); $(lab_klog)"
	fi
	grep -E '^(ok|BAD|time)' "$log" | cut -c1-200
}

# The atomics checks of pair (RFC 7306): the capability ibv_devinfo shows,
# then the four perftest runs, servers on both guests, and atomic-verify.
atomic_checks() {
	local iters=${ATOMIC_ITERS:-200} t0=$SECONDS lim
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
	averify_pair atomic-verify 1
	averify_pair atomic-verify-wr-api 1 -X
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
	VERIFY_TIMEOUT=900 verify_pair verify-zc-loss 1 "${ZC_SIZES:-65536,131101,1000003,4194304}" -P -r 2
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
	counted_verify "${DATA_SIZES:-17,4095,4097,9000,60000,65536,131101,1000003}"
	imm_pair imm 1
	imm_pair imm-wr-api 1 -X
	atomic_checks
	rping_pair rping-60k 1 5 60000
	rping_pair rping-odd 2 4 33333
	# Read Responses from the pinned pages (zcopy_rresp=1, the default),
	# then copied (0); the ratio is printed, it is not a pass criterion.
	# Zero-copy Read Responses need a connection without CRC (the source
	# may change under TCP: swiwarp_qp_tx.c), so both sides only accept
	# CRC here; read-bw-crc then runs with CRC, where they are copied.
	lab_param mpa_crc 1
	readbw_pair read-bw 1 1 "${READ_ITERS:-500}"
	bw_zcopy=$bw
	readbw_pair read-bw-q2 2 2 "${READ_ITERS:-500}"
	lab_param zcopy_rresp 0
	readbw_pair read-bw-copy 1 1 "${READ_ITERS:-500}"
	lab_param_restore zcopy_rresp mpa_crc
	readbw_pair read-bw-crc 1 1 "${READ_ITERS:-500}"
	if [ "$LAB_ID" = 2 ]; then
		awk -v z="$bw_zcopy" -v c="$bw" 'BEGIN { if (c > 0) printf "ib_read_bw -R 64 KiB, zero-copy vs copied Read Responses: %.2f\n", z / c }'
	fi
	zc_loss
	;;
imm)
	# Only the Immediate Data checks of pair and interop (quick runs):
	# guest 1 swiwarp or, with IMM_PEER=siw, upstream siw.
	if [ "$LAB_ID" = 1 ] && [ "${IMM_PEER:-}" = siw ]; then load_driver siw; else load_driver swiwarp; fi
	if [ "$LAB_ID" = 2 ] && [ "${IMM_PEER:-}" = siw ]; then
		lab_delay_connect 100 || lab_fail "$mode/netem-$me" "could not add the netem delay"
	fi
	lab_barrier loaded 600
	if [ "${IMM_PEER:-}" = siw ]; then
		imm_pair imm-none-siw-server 1 -n
		imm_pair imm-none-swiwarp-server 2 -n
	else
		imm_pair imm 1
		imm_pair imm-server-g2 2
	fi
	;;
atomic)
	# Only the atomics checks of pair (quick runs); with ATOMIC_PEER=siw
	# guest 1 is upstream siw and the refusal runs both ways.
	if [ "$LAB_ID" = 1 ] && [ "${ATOMIC_PEER:-}" = siw ]; then load_driver siw; else load_driver swiwarp; fi
	if [ "$LAB_ID" = 2 ] && [ "${ATOMIC_PEER:-}" = siw ]; then
		lab_delay_connect 100 || lab_fail "$mode/netem-$me" "could not add the netem delay"
	fi
	lab_barrier loaded 600
	if [ "${ATOMIC_PEER:-}" = siw ]; then
		averify_pair atomic-none-siw-server 1 -n
		averify_pair atomic-none-swiwarp-server 2 -n
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
	verify_pair verify-siw-server 1 "${DATA_SIZES:-17,4097,60000,131101,1000003}"
	verify_pair verify-swiwarp-server 2 "${DATA_SIZES:-17,4097,60000,131101,1000003}"
	# swiwarp as initiator: siw echoes the Request's 0x04 in its Reply
	# (the other direction, ~9 s more, is in the quick mode imm).
	imm_pair imm-none-siw-server 1 -n
	averify_pair atomic-none-siw-server 1 -n
	rping_pair rping-60k-siw-server 1 5 60000
	rping_pair rping-60k-swiwarp-server 2 5 60000
	readbw_pair read-bw-siw-server 1 1 "${READ_ITERS:-500}"
	readbw_pair read-bw-swiwarp-server 2 1 "${READ_ITERS:-500}"
	;;
*)
	echo "unknown mode $mode" >&2
	exit 2
	;;
esac
lab_finish
