# shellcheck shell=bash
# Part "netns" of tests/swiwarp/netconf-scenario.sh (sourced there, after
# the parts that use guest 1's swiwarp2 on eth1): swiwarp devices in
# network namespaces, one per guest (Documentation/kernel.md, "Network
# namespaces").
#
#   guest 1, "exclusive" RDMA netns mode: the second NIC eth1 moves into
#     namespace nsa (its device swiwarp2 goes away: a netdev that changes
#     namespace takes its device along), swiwarp3 is added on it from
#     inside nsa (the device is created in init_net) and moved into nsa
#     with rdma dev set.  Apps in nsa (rping both roles, rdma_server)
#     reach upstream siw0 on guest 2's eth1.  Then, with an rping server
#     holding a user context, the device moves on to nsb (its context is
#     disassociated); nsb is deleted (the device comes back to init_net)
#     and nsa is deleted (eth1 comes back, the device goes).
#   guest 2, "shared" mode (the default): a macvlan mv0 of eth0 in
#     namespace nsb with swiwarp3 added from inside nsb (visible in every
#     namespace); apps in nsb (rping both roles) reach guest 1's swiwarp0.
#     A wildcard rping server of init_net is up while nsb is deleted:
#     the device goes with the macvlan and the server keeps serving.
#
# The end part then deletes the remaining links and unloads the module;
# the lab fails the boot on any kernel warning.
# shellcheck disable=SC2154  # i, me, work, T: set by netconf-scenario.sh
nsdev=swiwarp3
# The server of a step may run in a namespace: lab_pair's wait for its
# listening socket must look there.  lab_listen_ns names it ("" for
# init_net); both guests set it, only the server's guest uses it.
lab_listen_ns=
eval "$(declare -f lab_wait_listen | sed '1s/^lab_wait_listen/lab_wait_listen_here/')"
lab_wait_listen() {
	[ -z "$lab_listen_ns" ] && { lab_wait_listen_here "$@"; return; }
	lab_wait_until "${2:-60}" ns_listens "$lab_listen_ns" "$1"
}
ns_listens() { ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .; } # NS PORT
nsstep() { # NS-OF-THE-SERVER step-args...: step, the server in NS
	lab_listen_ns=$1
	shift
	step "$@"
	lab_listen_ns=
}
rdev() { rdma dev show "$nsdev" >/dev/null 2>&1; }           # in init_net?
rdev_in() { ip netns exec "$1" rdma dev show "$nsdev" >/dev/null 2>&1; }
ok() { lab_verdict "netconf/netns-$1" "$2"; }

# ------------------------------------------------------------- setup
why=
if [ "$i" = 1 ]; then
	rdma system set netns exclusive || why="rdma system set netns exclusive failed;"
	rdma system show | grep -q 'netns exclusive' || why+=" mode: $(rdma system show | tr '\n' ' ')"
	ok exclusive-mode-g1 "$why"
	ip netns add nsa || die netns "ip netns add nsa"
	ip link set eth1 netns nsa || die netns "ip link set eth1 netns nsa"
	why=
	lab_wait_until 10 lab_not rdma dev show swiwarp2 || why="swiwarp2 still there 10 s after eth1 left;"
	dmesg | grep -q 'swiwarp2: eth1 is moving to another network namespace: device removed' ||
		why+=" no message in dmesg: $(dmesg | grep swiwarp2 | tail -n 2 | tr '\n' ' ')"
	ok nic-move-removes-device "$why"
	ip netns exec nsa rdma link add "$nsdev" type swiwarp netdev eth1 ||
		die netns "rdma link add $nsdev from inside nsa"
	why=
	rdev || why="not in init_net after rdma link add in nsa;"
	rdev_in nsa && why+=" visible in nsa before rdma dev set (exclusive mode)"
	ok link-add-creates-in-init-net "$why"
	why=
	rdma dev set "$nsdev" netns nsa || why="rdma dev set $nsdev netns nsa failed;"
	rdev && why+=" still in init_net;"
	rdev_in nsa || why+=" not in nsa;"
	ip netns exec nsa ibv_devices | grep -qw "$nsdev" || why+=" ibv_devices in nsa: $(ip netns exec nsa ibv_devices | tr '\n' ' ')"
	ok dev-set-netns "$why"
	ip netns exec nsa sh -c "ip link set lo up && ip link set eth1 up && ip addr add 10.0.1.$i/24 dev eth1" ||
		die netns "addresses in nsa"
	# nsa's client meets upstream siw's server (netns-rping-nsa-client-of-siw):
	# delay what nsa sends, for siw's passive-side race (tests/lab/README.md,
	# "upstream siw connection-setup race"); without it the step hung in 2 of
	# 5 boots (siw's server waiting, the client giving up before its first ping).
	modprobe sch_netem && ip netns exec nsa tc qdisc replace dev eth1 root netem delay 100ms ||
		die netns "netem delay on nsa's eth1"
else
	why=
	rdma system show | grep -q 'netns shared' || why="mode: $(rdma system show | tr '\n' ' ')"
	ok shared-mode-default-g2 "$why"
	ip netns add nsb || die netns "ip netns add nsb"
	ip link add mv0 link eth0 type macvlan mode bridge || die netns "no macvlan on eth0"
	ip link set mv0 netns nsb || die netns "ip link set mv0 netns nsb"
	ip netns exec nsb sh -c "ip link set lo up && ip link set mv0 up && ip addr add 192.0.2.1$i/24 dev mv0" ||
		die netns "addresses in nsb"
	ip netns exec nsb rdma link add "$nsdev" type swiwarp netdev mv0 ||
		die netns "rdma link add $nsdev from inside nsb"
	why=
	rdev || why="not visible in init_net;"
	rdev_in nsb || why+=" not visible in nsb"
	ok shared-visible-everywhere "$why"
fi
lab_barrier netns-setup 200 || die netns "barrier"

# ------------------------------------------------- apps in the namespaces
# guest 1's nsa against upstream siw0 on guest 2's eth1
nsstep nsa netns-rping-nsa-serves-siw 1 7190 rping:5:200 \
	"ip netns exec nsa rping -s -a 0.0.0.0 -p 7190 -C 5 -S 200 -V -v" \
	"rping -c -a 10.0.1.1 -p 7190 -C 5 -S 200 -V -v"
nsstep "" netns-rping-nsa-client-of-siw 2 7191 rping:5:200 \
	"rping -s -a 10.0.1.2 -p 7191 -C 5 -S 200 -V -v" \
	"ip netns exec nsa rping -c -a 10.0.1.2 -p 7191 -C 5 -S 200 -V -v"
nsstep nsa netns-rdma-server-nsa 1 7471 plain "ip netns exec nsa rdma_server" "rdma_client -s 10.0.1.1"
# Guest 2 keeps siw0 (eth1, init_net) for its wildcard servers below:
# siw's wildcard socket is tied to its netdev and swiwarp's sockets to
# theirs, so they share the port ("Listening" in Documentation/kernel.md).
# guest 2's nsb (shared mode) against guest 1's swiwarp0 on eth0
nsstep nsb netns-shared-rping-nsb-serves 2 7192 rping:5:200 \
	"ip netns exec nsb rping -s -a 0.0.0.0 -p 7192 -C 5 -S 200 -V -v" \
	"rping -c -a 192.0.2.12 -p 7192 -C 5 -S 200 -V -v"
nsstep "" netns-shared-rping-nsb-client 1 7193 rping:5:200 \
	"rping -s -a 192.0.2.1 -p 7193 -C 5 -S 200 -V -v" \
	"ip netns exec nsb rping -c -a 192.0.2.1 -p 7193 -C 5 -S 200 -V -v"

# ------------------------------------- moves and deletions, in each guest
if [ "$i" = 1 ]; then
	# An rping server bound to nsa's address holds a user context of
	# the device (librdmacm opens it at bind) and a listen on it.
	ip netns exec nsa rping -s -a 10.0.1.1 -p 7194 -v >"$work/netns-holder.log" 2>&1 &
	holder=$!
	lab_listen_ns=nsa
	lab_wait_listen 7194 30 || lab_fail netconf/netns-holder "the rping server in nsa does not listen"
	lab_listen_ns=
	ip netns add nsb || die netns "ip netns add nsb"
	why=
	t0=$SECONDS
	echo "$me: user contexts in nsa before the move: $(ip netns exec nsa rdma res show ctx 2>&1 | tr '\n' ' ')"
	msg=$(timeout 60 ip netns exec nsa rdma dev set "$nsdev" netns nsb 2>&1) ||
		why="rdma dev set $nsdev netns nsb with a user context open: $msg;"
	echo "$me: device moved with a user context open in $((SECONDS - t0)) s"
	rdev_in nsb || why+=" not in nsb;"
	rdev_in nsa && why+=" still in nsa;"
	# the holder learns of the removal (RDMA_CM_EVENT_DEVICE_REMOVAL)
	lab_wait_until 20 lab_not kill -0 "$holder" || why+=" the rping server in nsa still runs 20 s later: $(tail -n 2 "$work/netns-holder.log" | tr '\n' ' ')"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	echo "$me: holder said: $(tail -n 2 "$work/netns-holder.log" | tr '\n' ' ')"
	ok move-with-user-context "$why"
	why=
	ip netns del nsb
	lab_wait_until 30 rdev || why="$nsdev not back in init_net 30 s after ip netns del nsb"
	ok ns-delete-returns-device "$why"
	why=
	ip netns del nsa
	lab_wait_until 30 ip link show eth1 >/dev/null 2>&1 || why="eth1 not back in init_net 30 s after ip netns del nsa;"
	lab_wait_until 10 lab_not rdma dev show "$nsdev" || why+=" $nsdev still there;"
	dmesg | grep -q "$nsdev: eth1 is moving to another network namespace" || why+=" no message in dmesg;"
	ok ns-delete-nic-back "$why"
else
	# A wildcard server of init_net (shared mode: it listens on every
	# device, nsb's too, on nsb's addresses) is up while nsb goes.
	timeout 120 rping -s -P -a 0.0.0.0 -p 7195 -C 5 -S 200 -V -v >"$work/netns-survivor.log" 2>&1 &
	survivor=$!
	lab_wait_listen 7195 30 || lab_fail netconf/netns-survivor "the init_net rping server does not listen"
	lab_wait_until 10 ns_listens nsb 7195 &&
		echo "$me: the init_net wildcard listen has a socket in nsb (shared mode): $(ip netns exec nsb ss -Hltn 'sport = :7195' | awk '{ print $4 }' | tr '\n' ' ')"
	why=
	ip netns del nsb
	lab_wait_until 30 lab_not rdma dev show "$nsdev" || why="$nsdev still there 30 s after ip netns del nsb;"
	dmesg | grep -q 'waiting for mv0 to become free' && why+=" mv0 waited for its references;"
	ok shared-ns-delete-removes-device "$why"
fi
lab_barrier netns-survivor 200
if [ "$i" = 1 ]; then
	timeout "$T" rping -c -a 192.0.2.2 -p 7195 -C 5 -S 200 -V -v </dev/null >"$work/netns-survivor-client.log" 2>&1
	rc=$?
	why=
	[ $rc -ne 0 ] && why="client exit $rc: $(grep -v 'ping data' "$work/netns-survivor-client.log" | tail -n 2 | tr '\n' ' ')"
	[ -z "$why" ] && why=$(lab_rping_log_why "$work/netns-survivor-client.log" 5 200 "ping data: ")
	ok shared-listener-survives-ns-delete "$why"
fi
lab_barrier netns-done 200
if [ "$i" = 2 ]; then
	kill "$survivor" 2>/dev/null
	wait "$survivor" 2>/dev/null
fi
unset -f lab_wait_listen ns_listens nsstep rdev rdev_in ok
eval "$(declare -f lab_wait_listen_here | sed '1s/^lab_wait_listen_here/lab_wait_listen/')"
unset -f lab_wait_listen_here
