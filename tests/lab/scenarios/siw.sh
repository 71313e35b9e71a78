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

# rping_self TAG COUNT SIZE: rping between this guest's server and client
# (port 7176: in the trio case the pair case listens on 7174 next).
rping_self() {
	local out=$work/$1 pid
	local args=(-a "$LAB_IP" -C "$2" -S "$3" -v -p 7176)
	timeout 180 rping -s "${args[@]}" >"$out-server.log" 2>"$out-server.err" &
	pid=$!
	lab_wait_listen 7176 180
	timeout 180 rping -c "${args[@]}" -V >"$out-client.log" 2>"$out-client.err"
	lab_rping_verdict "$mode/$1-client" "$out-client" $? "$2" "$3" "ping data: "
	wait $pid
	lab_rping_verdict "$mode/$1-server" "$out-server" $? "$2" "$3" "server ping data: "
}

# pair_case: guest 1 serves, guest 2 is the client; any further guest only
# meets the barriers.  The suite checks the capture of these ports (7174,
# 7175, ib_write_bw's 18515).
pair_case() {
	lab_rping_pair "$mode/rping-small" 1 2 10 64 7174 180
	lab_rping_pair "$mode/rping-60k" 1 2 3 60000 7175 180
	# ib_write_bw -R (rdma_cm) from guest 2 to guest 1; the result row:
	# bytes, iterations, peak, average, message rate.
	# shellcheck disable=SC2016  # an awk program
	LAB_PAIR_LISTEN=180 lab_perf_pair "$mode/ib_write_bw" 1 2 300 18515 \
		'$1 == 65536 && $2 == 200 && NF >= 5 && $4 + 0 > 0 { print $4 " Gb/s average" }' \
		ib_write_bw -R -d siw0 -n 200 -s 65536 -F --report_gbits
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
	args=(-a 192.0.2.1 -C 5 -S 64 -v) pids=()
	if [ "$LAB_ID" = 1 ]; then
		for g in 2 3; do
			timeout 180 rping -s "${args[@]}" -p $((7180 + g)) >"$work/t$g-server.log" 2>"$work/t$g-server.err" &
			pids[g]=$!
		done
		lab_wait_listen 7182 180
		lab_wait_listen 7183 180
	fi
	lab_barrier trio-listen 600
	if [ "$LAB_ID" != 1 ]; then
		timeout 180 rping -c "${args[@]}" -V -p $((7180 + LAB_ID)) >"$work/client.log" 2>"$work/client.err"
		lab_rping_verdict "$mode/rping-client-$me" "$work/client" $? 5 64 "ping data: "
	else
		for g in 2 3; do
			wait "${pids[g]}"
			lab_rping_verdict "$mode/rping-server-for-g$g" "$work/t$g-server" $? 5 64 "server ping data: "
		done
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
