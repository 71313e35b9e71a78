#!/usr/bin/env bash
# Fault matrix of issue 8, one 2-guest lab boot (tests/suites/81-faults.sh).
# Guest 1 runs swiwarp-soak servers, guest 2 the streaming clients (-F:
# a fault is expected; exit 3 = the error reached the app and every
# outstanding WR completed, i.e. the QP was flushed; 4 = hang).  Phases:
#   peer_vanish  guest 1 drops every frame (netem loss 100%) and freezes
#                its server, like a powered-off peer; guest 2 must get
#                errors once TCP gives up (tcp_retries2=5 there, ~10 s)
#   peer_vanish_acked  the same, but for 1 s only large frames are dropped
#                (the client's data are acknowledged, the Read Responses
#                lost): the client has nothing to retransmit and only TCP
#                keepalive can find the peer gone
#   peer_killed  guest 1's server is killed with SIGKILL mid-stream
#   link_flap    guest 2: ip link set eth0 down, 3 s, up; then a fresh run
#                must pass (recover)
#   rmmod_busy   rmmod swiwarp on guest 1 during a run must be refused
#                (EBUSY) and the run must go on and verify; guest 2's client
#                streams until guest 1 has tried (then SIGUSR1 ends its run),
#                and guest 2 checks that it was still streaming by then
#   link_delete  rdma link delete on guest 1 during a run: must finish, the
#                apps must end (with an error), the device must go
#   netdev_gone  a macvlan on each guest carries swiwarp1; guest 1 deletes
#                its macvlan mid-stream
# At the end both guests unload the module (rmmod).  The lab fails the run
# on any kernel warning.
set -uo pipefail
source "$LAB_TOP/tests/lab/lib.sh"

soak=${SOAK_BIN:-$BUILD/tests/soak/swiwarp-soak}
p=faults
nqp=4
lab_verbs_up swiwarp "$p" "$soak" || exit 0
sysctl -qw net.ipv4.tcp_retries2=5
modprobe sch_netem
lab_barrier up 300 || { lab_fail "$p.barrier.g$LAB_ID" "peer never came up"; lab_finish; }

# server PHASE PORT [ADDR]: start a soak server in the background
server() {
	# no timeout(1) wrapper: $spid must be the server itself (-w bounds it)
	"$soak" server "${3:-$LAB_IP}" "$2" -q $nqp -w 90 -F >"$LAB_OUT/$1-server.out" 2>&1 &
	spid=$!
	lab_wait_listen "$2" 30
}
# client PHASE PORT SECS [ADDR]: stream until SECS or a fault; sets crc, took.
# Once every QP is connected and streaming (or the client gave up) it starts
# $on_stream (if set) in the background, streams $lead seconds more
# (default 5) and meets guest 1 at barrier PHASE-go, where guest 1 injects
# its fault at once.  So no fault hits the connection setup, and the delay
# is measured on this guest's clock: the lab's guests may keep very
# different time (one whose TSC calibration failed ran ~9x slow, so a
# "sleep 4" there outlasted a whole 10 s run).
# Right after the barrier it runs $at_go (if set; a function) with the
# client's pid, SECS and the time streaming began ($SECONDS).
client() {
	local t0=$SECONDS cpid ts
	timeout 600 "$soak" client "${4:-$LAB_PEER_IP}" "$2" -q $nqp -t "$3" -w 90 -F \
		>"$LAB_OUT/$1-client.out" 2>&1 &
	cpid=$!
	lab_wait_output "$LAB_OUT/$1-client.out" 'QPs connected' $cpid 120
	ts=$SECONDS
	echo "[$1] streaming after $((ts - t0)) s"
	[ -n "${on_stream:-}" ] && bash -c "$on_stream" &
	kill -0 $cpid 2>/dev/null && sleep "${lead:-5}"
	lab_barrier "$1-go" 300
	[ -n "${at_go:-}" ] && "$at_go" $cpid "$3" $ts
	wait $cpid
	crc=$?
	took=$((SECONDS - t0))
	sed "s/^/[$1] /" "$LAB_OUT/$1-client.out"
}
# gone PID SECS: the process must be gone within SECS (not stuck in the kernel)
gone() {
	# a zombie is gone too (the kernel let go of it)
	lab_wait_until "$2" lab_not grep -qs '^State:[[:space:]]*[^Z]' /proc/"$1"/status && return 0
	grep State /proc/"$1"/status
	cat /proc/"$1"/stack 2>/dev/null
	return 1
}
# device_gone PHASE IBDEV CMD...: guest 1 of a device-removal phase, server
# running: at barrier PHASE-go (the client streams) run CMD; it must
# succeed, the server must exit and IBDEV must be gone within 20 s.
device_gone() {
	local phase=$1 ibdev=$2 t0 drc dt sexit
	shift 2
	lab_barrier "$phase-go" 300
	t0=$SECONDS
	timeout 120 "$@"
	drc=$?
	dt=$((SECONDS - t0))
	if gone $spid 60; then sexit=ok; else sexit=stuck; kill -KILL $spid; fi
	lab_wait_until 20 test ! -e /sys/class/infiniband/"$ibdev"
	if [ $drc -eq 0 ] && [ ! -e /sys/class/infiniband/"$ibdev" ] && [ $sexit = ok ]; then
		lab_pass "$p.$phase.device_gone ($* took ${dt} s)"
	else
		lab_fail "$p.$phase.device_gone" "$* rc $drc after ${dt} s, server $sexit, $ibdev $( [ -e /sys/class/infiniband/"$ibdev" ] && echo still there || echo gone)"
	fi
}
# verdict NAME: the client must have seen the fault (exit 3)
verdict() {
	local why
	why=$(grep -m1 'ERROR after' "$LAB_OUT/$1-client.out" | sed 's/^soak client: //')
	case $crc in
	3) lab_pass "$p.$1 (client: $why; took ${took} s)" ;;
	0) lab_fail "$p.$1" "the run finished without seeing the fault" ;;
	4) lab_fail "$p.$1" "client hung: $(tail -n 1 "$LAB_OUT/$1-client.out")" ;;
	124) lab_fail "$p.$1" "client still running after 600 s" ;;
	*) lab_fail "$p.$1" "client exit $crc: $(grep -m1 -E 'DUPLICATE|wrong|bad' "$LAB_OUT/$1-client.out" || tail -n 1 "$LAB_OUT/$1-client.out")" ;;
	esac
}

# ---- peer_vanish ---------------------------------------------------------
if [ "$LAB_ID" = 1 ]; then
	server peer_vanish 7201
	lab_barrier pv-listen 120
	lab_barrier peer_vanish-go 300
	kill -STOP $spid
	tc qdisc replace dev eth0 root netem loss 100%
	lab_barrier pv-client-done 700
	tc qdisc del dev eth0 root
	kill -KILL $spid
	kill -CONT $spid 2>/dev/null
	if gone $spid 30; then lab_pass "$p.peer_vanish.server_exit"; else lab_fail "$p.peer_vanish.server_exit" "frozen server did not go away after SIGKILL"; fi
else
	lab_barrier pv-listen 120
	client peer_vanish 7201 240
	verdict peer_vanish
	lab_barrier pv-client-done 700
fi
lab_barrier pv-done 120

# ---- peer_vanish_acked ---------------------------------------------------
# Like peer_vanish, but guest 1 first drops only the frames of 256 octets
# or more for 1 s: its TCP still acknowledges what the client sends (Read
# Requests, Sends) while the Read Responses are lost.  The client then has
# nothing unacknowledged and TCP never gives up on its own; the QPs wait
# for their Reads until TCP keepalive (swiwarp's keepalive_s) finds the
# peer gone.  Without keepalive this is the "FLUSH INCOMPLETE" hang.
if [ "$LAB_ID" = 1 ]; then
	server peer_vanish_acked 7208
	# set up beforehand (a slow guest takes seconds per tc): frames of
	# 256 octets or more go to band 3, for now a plain FIFO
	tc qdisc replace dev eth0 root handle 1: prio
	tc qdisc add dev eth0 parent 1:3 handle 30: pfifo
	for b in 0100 0200 0400 0800 1000 2000 4000 8000; do
		# IPv4 total length with bit b set, i.e. >= 256 octets
		tc filter add dev eth0 parent 1: protocol ip prio 1 u32 \
			match u16 0x$b 0x$b at 2 flowid 1:3
	done
	lab_barrier pa-listen 300
	lab_barrier peer_vanish_acked-go 300
	kill -STOP $spid
	tc qdisc replace dev eth0 parent 1:3 netem loss 100%
	# long enough for the ACKs of the client's last data (the server
	# is frozen, so that is under one round trip); short, so that guest
	# 1's TCP does not give up on its lost Read Responses first and reset
	# the connections with an RST that would still get through
	sleep 1
	tc qdisc replace dev eth0 root netem loss 100%
	lab_barrier pa-client-done 700
	tc qdisc del dev eth0 root
	kill -KILL $spid
	kill -CONT $spid 2>/dev/null
	gone $spid 30 || lab_fail "$p.peer_vanish_acked.server_exit" "frozen server did not go away after SIGKILL"
else
	lab_barrier pa-listen 300
	client peer_vanish_acked 7208 240
	verdict peer_vanish_acked
	lab_barrier pa-client-done 700
fi
lab_barrier pa-done 120

# ---- peer_killed ---------------------------------------------------------
if [ "$LAB_ID" = 1 ]; then
	server peer_killed 7202
	lab_barrier pk-listen 120
	lab_barrier peer_killed-go 300
	kill -KILL $spid
	if gone $spid 30; then lab_pass "$p.peer_killed.server_exit"; else lab_fail "$p.peer_killed.server_exit" "killed server stuck"; fi
	lab_barrier pk-client-done 700
else
	lab_barrier pk-listen 120
	client peer_killed 7202 240
	verdict peer_killed
	lab_barrier pk-client-done 700
fi

# ---- link_flap -----------------------------------------------------------
if [ "$LAB_ID" = 1 ]; then
	server link_flap 7203
	lab_barrier lf-listen 120
	lab_barrier link_flap-go 300
	lab_barrier lf-client-done 700
	kill $spid 2>/dev/null
	gone $spid 20 || { kill -KILL $spid; lab_fail "$p.link_flap.server_exit" "server stuck"; }
	server link_flap_after 7204
	lab_barrier lf2-listen 120
	lab_barrier link_flap_after-go 300
	wait $spid
	src=$?
	if [ $src -eq 0 ]; then lab_pass "$p.link_flap.recover_server"; else lab_fail "$p.link_flap.recover_server" "exit $src: $(tail -n 1 "$LAB_OUT/link_flap_after-server.out")"; fi
else
	lab_barrier lf-listen 120
	on_stream='sleep 5; ip link set eth0 down; sleep 3; ip link set eth0 up' \
		client link_flap 7203 240
	wait
	verdict link_flap
	# the link is back: wait for the route, then a clean run must pass
	lab_wait_until 30 ping -c1 -W1 "$LAB_PEER_IP" >/dev/null 2>&1
	lab_barrier lf-client-done 700
	lab_barrier lf2-listen 120
	lead=0 client link_flap_after 7204 10
	if [ $crc -eq 0 ]; then lab_pass "$p.link_flap.recover"; else lab_fail "$p.link_flap.recover" "fresh run after the flap: exit $crc"; fi
fi

# ---- rmmod_busy ----------------------------------------------------------
if [ "$LAB_ID" = 1 ]; then
	server rmmod_busy 7205
	lab_barrier rb-listen 120
	lab_barrier rmmod_busy-go 300
	# guest 2 checks that its client was still streaming when this is
	# done (rb_live), so a success here is a module unloaded under live
	# QPs, not a run that had ended already
	if rmmod swiwarp 2>"$LAB_OUT/rmmod_busy.err"; then
		lab_fail "$p.rmmod_busy.refused" "rmmod succeeded with live QPs"
	else
		lab_pass "$p.rmmod_busy.refused ($(tr -d '\n' <"$LAB_OUT/rmmod_busy.err"))"
	fi
	lab_barrier rb-tried 300
	wait $spid
	src=$?
	if [ $src -eq 0 ]; then lab_pass "$p.rmmod_busy.server"; else lab_fail "$p.rmmod_busy.server" "exit $src"; fi
else
	lab_barrier rb-listen 120
	# rb_live PID SECS TS (at_go of the client): wait until guest 1 has
	# tried rmmod, then the client must still be streaming: alive, its run
	# not ended (it prints no summary before it ends, and it ends on its
	# own only SECS after TS); then end its run with SIGUSR1
	rb_live() {
		local why= soakpid
		lab_barrier rb-tried 300 || why="guest 1 never finished trying rmmod"
		# $1 is timeout(1), which SIGUSR1 would kill; the client is its child
		soakpid=$(pgrep -P "$1" -x swiwarp-soak)
		if [ -z "$why" ] && { [ -z "$soakpid" ] ||
			! grep -qs '^State:[[:space:]]*[^Z]' /proc/"$soakpid"/status ||
			grep -qE 'QPs, .* s: |STALL|FLUSH' "$LAB_OUT/rmmod_busy-client.out" ||
			[ $((SECONDS - $3)) -ge $(($2 - 2)) ]; }; then
			# either its run had ended (guest 1's refusal then proves
			# nothing) or it had failed (as when the module went away)
			why="the client was no longer streaming once guest 1 had tried rmmod ($(tail -n 1 "$LAB_OUT/rmmod_busy-client.out"))"
		fi
		[ -n "$soakpid" ] && kill -USR1 "$soakpid"
		rb_why=$why
	}
	rb_why=
	lead=2 at_go=rb_live client rmmod_busy 7205 240
	if [ -n "$rb_why" ]; then
		lab_fail "$p.rmmod_busy.client" "$rb_why (exit $crc)"
	elif [ $crc -eq 0 ]; then
		lab_pass "$p.rmmod_busy.client (streamed until guest 1 had tried rmmod, then verified; took ${took} s)"
	else
		lab_fail "$p.rmmod_busy.client" "exit $crc"
	fi
fi
lab_barrier rb-done 120

# ---- link_delete ---------------------------------------------------------
if [ "$LAB_ID" = 1 ]; then
	server link_delete 7206
	lab_barrier ld-listen 120
	device_gone link_delete swiwarp0 rdma link delete swiwarp0
	_lab_rdma_link_add swiwarp0 swiwarp eth0 || lab_fail "$p.link_delete.readd"
	lab_barrier ld-client-done 700
else
	lab_barrier ld-listen 120
	client link_delete 7206 240
	verdict link_delete
	lab_barrier ld-client-done 700
fi

# ---- netdev_gone ---------------------------------------------------------
mv_ip=192.0.2.$((100 + LAB_ID))
mv_peer=192.0.2.$((100 + 3 - LAB_ID))
ip link add mv0 link eth0 type macvlan mode bridge &&
	ip addr add "$mv_ip/32" dev mv0 && ip link set mv0 up &&
	ip route add "$mv_peer/32" dev mv0 src "$mv_ip" &&
	_lab_rdma_link_add swiwarp1 swiwarp mv0
mrc=$?
lab_barrier ng-up 120
if [ $mrc -ne 0 ]; then
	lab_fail "$p.netdev_gone.setup.g$LAB_ID" "macvlan/swiwarp1 setup failed"
elif [ "$LAB_ID" = 1 ]; then
	server netdev_gone 7207 "$mv_ip"
	lab_barrier ng-listen 120
	device_gone netdev_gone swiwarp1 ip link del mv0
	lab_barrier ng-client-done 700
else
	lab_barrier ng-listen 120
	client netdev_gone 7207 240 "$mv_peer"
	verdict netdev_gone
	lab_barrier ng-client-done 700
	timeout 60 rdma link delete swiwarp1
	ip link del mv0
fi

# ---- the module unloads --------------------------------------------------
lab_barrier end 300
sleep 2
timeout 60 rdma link delete swiwarp0 && timeout 60 rmmod swiwarp && [ ! -e /sys/module/swiwarp ]
rc=$?
if [ $rc -eq 0 ]; then lab_pass "$p.rmmod.g$LAB_ID"; else lab_fail "$p.rmmod.g$LAB_ID" "rc $rc, refcnt $(cat /sys/module/swiwarp/refcnt 2>/dev/null)"; fi
dmesg | grep -iE 'swiwarp' | tail -n 30
exit 0
