#!/usr/bin/env bash
# Reproducer for the QP flush after connection loss (faults.peer_vanish,
# faults.peer_killed of tests/robust/faults-guest.sh), repeated in one
# 2-guest lab boot with varied timing and QP counts:
#   tests/lab/lab run -n 2 --timeout 3000 -- \
#       'REPS=10 tests/robust/flush-repeat-guest.sh'
# REPS iterations; iteration i cycles through KINDS (default "vanish
# killed acked"), 4 or 8 QPs, and 1..8 s of streaming before the fault:
#   vanish  guest 1 freezes its server and drops every frame it sends
#   killed  guest 1's server is killed (SIGKILL)
#   acked   like vanish, but for 1 s only frames of 256 octets or more are
#           dropped first: the client's Read Requests and Sends are
#           acknowledged while the Read Responses are lost, so the client
#           has nothing left to retransmit and only TCP keepalive (module
#           parameter keepalive_s) can find out that the peer is gone
#   acked0  acked with keepalive_s=0 for this iteration (the hang the
#           keepalive fixes: expect FLUSH INCOMPLETE, exit 4)
# KEEPALIVE=N sets the module parameter keepalive_s on both guests.  Guest 2 runs the clients (-F: exit 3 = the error
# reached the app and every outstanding WR completed).
set -uo pipefail
source "$LAB_TOP/tests/lab/lib.sh"

soak=${SOAK_BIN:-$BUILD/tests/soak/swiwarp-soak}
reps=${REPS:-10}
read -r -a kinds <<<"${KINDS:-vanish killed acked}"
p=flushrep
lab_load_swiwarp eth0 swiwarp0 || { lab_fail "$p.load.g$LAB_ID"; exit 1; }
[ -n "${KEEPALIVE:-}" ] && lab_param keepalive_s "$KEEPALIVE"
sysctl -qw net.ipv4.tcp_retries2=5
modprobe sch_netem
lab_barrier up 300 || { lab_fail "$p.barrier.g$LAB_ID" "peer never came up"; lab_finish; }

for i in $(seq "$reps"); do
	kind=${kinds[$(((i - 1) % ${#kinds[@]}))]}
	nqp=$((i % 2 ? 4 : 8))
	port=$((7300 + i))
	wait_s=$((1 + (i * 7) % 8))
	name=$kind.$i
	ka=$(cat /sys/module/swiwarp/parameters/keepalive_s)
	if [ "$kind" = acked0 ]; then
		lab_param keepalive_s 0
		kind=acked
	fi
	if [ "$LAB_ID" = 1 ]; then
		"$soak" server "$LAB_IP" $port -q $nqp -w 90 -F >"$LAB_OUT/$name-server.out" 2>&1 &
		spid=$!
		lab_wait_listen $port 30
		lab_barrier "l$i" 120
		lab_barrier "s$i" 300
		if [ "$kind" = vanish ] || [ "$kind" = acked ]; then
			kill -STOP $spid
			if [ "$kind" = acked ]; then
				tc qdisc replace dev eth0 root handle 1: prio
				tc qdisc add dev eth0 parent 1:3 handle 30: netem loss 100%
				for b in 0100 0200 0400 0800 1000 2000 4000 8000; do
					tc filter add dev eth0 parent 1: protocol ip prio 1 u32 \
						match u16 0x$b 0x$b at 2 flowid 1:3
				done
				sleep 1
			fi
			tc qdisc replace dev eth0 root netem loss 100%
			lab_barrier "c$i" 300
			tc qdisc del dev eth0 root
			kill -KILL $spid
			kill -CONT $spid 2>/dev/null
		else
			kill -KILL $spid
			lab_barrier "c$i" 300
		fi
		wait $spid 2>/dev/null
	else
		lab_barrier "l$i" 120
		t0=$SECONDS
		timeout 300 "$soak" client "$LAB_PEER_IP" $port -q $nqp -t 120 -w 90 -F \
			>"$LAB_OUT/$name-client.out" 2>&1 &
		cpid=$!
		# the fault comes only once every QP is connected and streaming
		lab_wait_output "$LAB_OUT/$name-client.out" 'QPs connected' $cpid 120
		# the delay runs on this guest's clock (guest 1's may be far off)
		kill -0 $cpid 2>/dev/null && sleep $wait_s
		lab_barrier "s$i" 300
		wait $cpid
		crc=$?
		took=$((SECONDS - t0))
		echo "[$name nqp $nqp after ${wait_s}s] exit $crc in ${took}s: $(grep -m1 'ERROR after' "$LAB_OUT/$name-client.out")"
		if [ $crc -eq 3 ]; then
			lab_pass "$p.$name (nqp $nqp, ${took} s)"
		else
			sed "s/^/[$name] /" "$LAB_OUT/$name-client.out"
			rdma res show qp
			lab_fail "$p.$name" "nqp $nqp exit $crc: $(tail -n 1 "$LAB_OUT/$name-client.out")"
		fi
		lab_barrier "c$i" 300
	fi
	lab_barrier "d$i" 120
	lab_param keepalive_s "$ka"
done
dmesg | grep -iE 'swiwarp' | tail -n 30
lab_finish
