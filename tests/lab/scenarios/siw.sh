#!/bin/bash
# Guest side of tests/suites/50-lab-siw.sh: upstream siw with unmodified
# Debian RDMA tools.  Usage (in a lab guest): siw.sh pair|single|trio
#   pair   (2 guests): devices, rping small and 60 KB, ib_write_bw -R
#   single (1 guest):  rping to our own address through siw on eth0
#   trio   (3 guests): guest 1 does the single case, guests 1 and 2 the
#                      pair case (guest 3 waits; results named pair/), then
#                      guests 2 and 3 rping guest 1 at the same time
# Result names carry the scenario and the guest id.
source "$LAB_TOP/tests/lab/lib.sh"
mode=${1:?usage: siw.sh pair|single|trio}
me=g$LAB_ID
work=$LAB_OUT/siw-$mode
mkdir -p "$work"

lab_load_siw
rc=$?
if [ $rc -ne 0 ]; then
	lab_fail "$mode/siw-load-$me" "lab_load_siw returned $rc"
	lab_barrier loaded 600
	lab_finish
fi
lab_pass "$mode/siw-load-$me"
# Clients (every guest but 1 when there are several) delay what they send:
# see lab_delay_connect in lib.sh for the upstream siw race this avoids.
if [ "$LAB_N" -gt 1 ] && [ "$LAB_ID" != 1 ]; then
	lab_delay_connect "${LAB_SIW_CLIENT_DELAY_MS:-100}" ||
		lab_fail "$mode/netem-$me" "could not add the netem delay"
	# ib_write_bw -R client: perftest's re-listen race (lab_delay_syn).
	lab_delay_syn "${LAB_PERFTEST_SYN_DELAY_MS:-300}" ||
		lab_fail "$mode/syn-delay-$me" "tc setup failed"
fi
rdma link show | tee "$work/link"
if grep -q '^link siw0/1 state ACTIVE .*netdev eth0' "$work/link"; then
	lab_pass "$mode/rdma-link-$me"
else
	lab_fail "$mode/rdma-link-$me" "siw0 not ACTIVE on eth0: $(tr '\n' ' ' <"$work/link")"
fi
if ibv_devices | grep -qw siw0 && ibv_devinfo -d siw0 | grep -q 'transport:.*iWARP'; then
	lab_pass "$mode/ibv-devices-$me"
else
	lab_fail "$mode/ibv-devices-$me" "libibverbs does not list siw0 as an iWARP device"
fi

# check_rping NAME LOG RC COUNT SIZE PREFIX: rping exited 0, printed COUNT
# ping lines rdma-ping-0..COUNT-1 whose payload has SIZE-1 characters
# (rping -v prints the buffer without its final NUL), no verify error.
check_rping() {
	local name=$1 log=$2 rc=$3 count=$4 size=$5 prefix=$6 why=
	if [ "$rc" -ne 0 ]; then
		why="rping exited $rc"
	elif cat "$log" "$log.err" 2>/dev/null | grep -qi 'mismatch\|error'; then
		why="$(cat "$log" "$log.err" 2>/dev/null | grep -i -m1 'mismatch\|error' | cut -c1-120)"
	else
		why=$(awk -v n="$count" -v size="$size" -v pre="$prefix" '
			index($0, pre) == 1 {
				line = substr($0, length(pre) + 1)
				if (line !~ "^rdma-ping-" got + 0 ": ") { print "ping " got + 0 " out of order"; bad = 1; exit }
				if (length(line) != size - 1) { print "ping " got + 0 " has " length(line) + 1 " bytes, want " size; bad = 1; exit }
				got++
			}
			END { if (!bad && got != n) print "saw " got + 0 " pings, want " n }' "$log")
	fi
	lab_verdict "$name" "$why"
}

# rping_pair TAG SERVER_ID PORT CLIENT_ID COUNT SIZE: one rping exchange.
# Every guest calls it; only the two involved act, all meet at the barrier.
rping_pair() {
	local tag=$1 sid=$2 port=$3 cid=$4 count=$5 size=$6 pid rc
	local args=(-C "$count" -S "$size" -v -V -p "$port")
	if [ "$LAB_ID" = "$sid" ]; then
		timeout 180 rping -s -a "192.0.2.$sid" "${args[@]}" >"$work/$tag-server.log" 2>"$work/$tag-server.log.err" &
		pid=$!
		lab_wait_listen "$port" 180
	fi
	lab_barrier "$tag-listen" 600
	if [ "$LAB_ID" = "$cid" ]; then
		timeout 180 rping -c -a "192.0.2.$sid" "${args[@]}" >"$work/$tag-client.log" 2>"$work/$tag-client.log.err"
		rc=$?
		head -c 2000 "$work/$tag-client.log"; echo
		check_rping "$mode/$tag-client-$me" "$work/$tag-client.log" $rc "$count" "$size" "ping data: "
	fi
	if [ "$LAB_ID" = "$sid" ]; then
		wait $pid
		rc=$?
		check_rping "$mode/$tag-server-$me" "$work/$tag-server.log" $rc "$count" "$size" "server ping data: "
	fi
}

# The same, with the server and the client in this one guest.
rping_self() {
	local tag=$1 count=$2 size=$3 pid rc
	# Not 7174: in the trio case the pair case listens there next.
	local args=(-C "$count" -S "$size" -v -V -p 7176)
	timeout 180 rping -s -a "$LAB_IP" "${args[@]}" >"$work/$tag-server.log" 2>"$work/$tag-server.log.err" &
	pid=$!
	lab_wait_listen 7176 180
	timeout 180 rping -c -a "$LAB_IP" "${args[@]}" >"$work/$tag-client.log" 2>"$work/$tag-client.log.err"
	rc=$?
	head -c 2000 "$work/$tag-client.log"; echo
	check_rping "$mode/$tag-client" "$work/$tag-client.log" $rc "$count" "$size" "ping data: "
	wait $pid
	rc=$?
	check_rping "$mode/$tag-server" "$work/$tag-server.log" $rc "$count" "$size" "server ping data: "
}

# write_bw: ib_write_bw -R (rdma_cm) from guest 2 to guest 1 (lab_pair:
# one retry after a perftest clock calibration failure).
write_bw() {
	local bw note
	local args=(-R -d siw0 -n 200 -s 65536 -F --report_gbits)
	LAB_PAIR_LISTEN=180 lab_pair bw 1 2 300 18515 "$work/bw-server" "$work/bw-client" -- \
		ib_write_bw "${args[@]}" -- ib_write_bw "${args[@]}" 192.0.2.1
	note=${lab_pair_note:+ ($lab_pair_note)}
	if [ "$LAB_ID" = 2 ]; then
		cat "$work/bw-client.log" "$work/bw-client.err"
		# The result row: bytes, iterations, peak, average, msg rate.
		bw=$(awk '$1 == 65536 && $2 == 200 && NF >= 5 { print $4 }' "$work/bw-client.log")
		if [ "$lab_rc_c" = 0 ] && awk -v b="$bw" 'BEGIN { exit !(b + 0 > 0) }'; then
			lab_pass "$mode/ib_write_bw-client-$me$note"
			echo "ib_write_bw over siw: $bw Gb/s average (TCG, not a benchmark)"
		else
			lab_fail "$mode/ib_write_bw-client-$me" "exit $lab_rc_c, average '${bw}'$note"
		fi
	fi
	if [ "$LAB_ID" = 1 ]; then
		cat "$work/bw-server.log" "$work/bw-server.err"
		if [ "$lab_rc_s" = 0 ]; then lab_pass "$mode/ib_write_bw-server-$me$note"
		else lab_fail "$mode/ib_write_bw-server-$me" "exit $lab_rc_s$note"; fi
	fi
}

# pair_case: guest 1 serves, guest 2 is the client; any further guest only
# meets the barriers.  The suite checks the capture of these ports (7174,
# 7175, ib_write_bw's 18515).
pair_case() {
	rping_pair rping-small 1 7174 2 10 64
	rping_pair rping-60k 1 7175 2 3 60000
	write_bw
}

case $mode in
pair)
	lab_barrier loaded 600
	pair_case
	;;
single)
	rping_self rping-self 10 64
	;;
trio)
	# Guest 1 first does the one-guest case (rping to its own address over
	# siw0 on eth0), then guests 1 and 2 the pair case under its own names:
	# each saves the suite a boot.
	[ "$LAB_ID" = 1 ] && rping_self rping-self 10 64
	lab_barrier loaded 600
	mode=pair
	pair_case
	mode=trio
	for ip in $LAB_IPS; do
		if ! busybox ping -c 1 -W 10 "$ip" >/dev/null; then
			lab_fail "$mode/icmp-$me-to-$ip" "no ping reply"
		fi
	done
	# Guests 2 and 3 each talk to their own rping server on guest 1, at once.
	if [ "$LAB_ID" = 1 ]; then
		timeout 180 rping -s -a "$LAB_IP" -C 5 -v -V -p 7182 >"$work/t2-server.log" 2>"$work/t2-server.log.err" &
		p2=$!
		timeout 180 rping -s -a "$LAB_IP" -C 5 -v -V -p 7183 >"$work/t3-server.log" 2>"$work/t3-server.log.err" &
		p3=$!
		lab_wait_listen 7182 180
		lab_wait_listen 7183 180
	fi
	lab_barrier trio-listen 600
	if [ "$LAB_ID" != 1 ]; then
		timeout 180 rping -c -a 192.0.2.1 -C 5 -v -V -p $((7180 + LAB_ID)) >"$work/client.log" 2>"$work/client.log.err"
		check_rping "$mode/rping-client-$me" "$work/client.log" $? 5 64 "ping data: "
	else
		wait $p2
		check_rping "$mode/rping-server-for-g2" "$work/t2-server.log" $? 5 64 "server ping data: "
		wait $p3
		check_rping "$mode/rping-server-for-g3" "$work/t3-server.log" $? 5 64 "server ping data: "
	fi
	;;
*)
	lab_fail "siw-scenario" "unknown mode $mode"
	;;
esac
# The clients' connection delay saw their connections' first frames (the
# siw race's workaround is in force, not a no-op).
if [ "$LAB_N" -gt 1 ] && [ "$LAB_ID" != 1 ]; then
	n=$(lab_delay_connect_frames)
	if [ "${n:-0}" -gt 0 ]; then
		lab_pass "$mode/connect-delay-$me"
	else
		lab_fail "$mode/connect-delay-$me" "no frame delayed by lab_delay_connect: $(nft list table inet lab_delay 2>&1 | tr '\n' ' ')"
	fi
	echo "$me: lab_delay_connect delayed ${n:-0} frames"
fi
lab_finish
