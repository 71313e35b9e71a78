#!/bin/bash
# Guest side of tests/suites/67-netconf.sh: wildcard listens with several
# RDMA devices per guest.  Two guests, two links (lab run -n 2 --nics 2):
#
#   guest I   eth0       192.0.2.I  fd00:2::I  fe80::...  swiwarp0
#             eth0.100   10.0.100.I fd00:100::I (VLAN)     swiwarp1
#             eth1       10.0.1.I   (second NIC)           guest 1: swiwarp2
#                                                          guest 2: upstream siw0
#
# Guest 1 serves on wildcard addresses (rping -P, ucmatose, rdma_server,
# ib_write_bw -R; IPv4 and IPv6); guest 2 connects through each of guest 1's
# addresses: over eth0 and the VLAN with swiwarp, over eth1 with siw.  Every
# step checks the data where the tool allows (rping -V plus the pings
# counted, ucmatose and rdma_server exit status, a perftest result line).
# An address is added and removed while a listen is up.  At the end no
# listener may be left and the module must unload.
# A listen on one address (IPv4 on the VLAN, IPv6 on eth0) still has its
# one socket there and serves.
# An MTU change on a live link (part mtu): a connection made at MTU 1500
# stays up and keeps moving verified data while eth0 goes to 9000 and back
# on both guests; new connections made at 9000 and back at 1500 carry
# FPDUs of the new MSS, measured with the device counters (with
# large_fpdu=0: what every peer but another swiwarp gets).
# Part netns (tests/swiwarp/netconf-netns.sh) puts a device of each guest
# into a network namespace, with applications there.
# Part bond (tests/swiwarp/netconf-bond.sh) makes both NICs the slaves of
# an active-backup bond0 with swiwarp on it and fails it over (a cable
# pulled by the host) under a connection, and back.
# NETCONF_PARTS (default "listen v4 specific v6 mtu netns bond end") picks parts, for
# debugging.  Each part prints the guest's seconds since boot as it starts
# (the suite must stay within its time budget).
source "$LAB_TOP/tests/lab/lib.sh"
me=g$LAB_ID
work=$LAB_OUT/netconf
mkdir -p "$work"
parts=" ${NETCONF_PARTS:-listen v4 specific v6 mtu netns bond end} "
part() {
	[[ $parts == *" $1 "* ]] || return 1
	echo "$me: part $1 at $(cut -d. -f1 /proc/uptime) s"
}
step_prefix=netconf
step_no=0
T=60
# shellcheck source=tests/swiwarp/guest-steps.sh
source "$LAB_TOP/tests/swiwarp/guest-steps.sh"

i=$LAB_ID p=$((3 - LAB_ID))
die() { # NAME WHY: a setup failure; nothing after it can be tested
	lab_fail "netconf/$1-$me" "$2"
	lab_finish
}

# ---------------------------------------------------------------- setup
modprobe 8021q || die setup "modprobe 8021q failed"
ip link add link eth0 name eth0.100 type vlan id 100 || die setup "no VLAN eth0.100"
ip link set eth0.100 up
ip link set eth1 up || die setup "no second NIC eth1 (lab run --nics 2)"
ip addr add "10.0.100.$i/24" dev eth0.100
ip addr add "10.0.1.$i/24" dev eth1
ip -6 addr add "fd00:2::$i/64" dev eth0 nodad
ip -6 addr add "fd00:100::$i/64" dev eth0.100 nodad

lab_load_swiwarp eth0 swiwarp0 || die load "swiwarp0 on eth0"
lab_load_swiwarp eth0.100 swiwarp1 || die load "swiwarp1 on eth0.100"
if [ "$i" = 1 ]; then
	lab_load_swiwarp eth1 swiwarp2 || die load "swiwarp2 on eth1"
else
	lab_load_siw eth1 siw0 || die load "siw0 on eth1"
fi
# librdmacm finds a connection's device by node GUID: a VLAN's device
# must not share its real device's.
dup=$(cat /sys/class/infiniband/*/node_guid | sort | uniq -d)
if [ -z "$dup" ]; then lab_pass "netconf/node-guid-unique-$me"
else lab_fail "netconf/node-guid-unique-$me" "shared node GUID $dup"; fi
# perftest -R clients connect twice; see tests/lab/README.md.  Only the
# VLAN carries perftest here; a delay on every SYN would slow every step.
[ "$i" = 2 ] && lab_delay_syn "${LAB_PERFTEST_SYN_DELAY_MS:-300}" eth0.100
# eth0's link-local address, for the peer (DAD done: no "tentative").
# link_local DEV: print DEV's link-local IPv6 address once DAD is done.
link_local() {
	ip -6 -o addr show dev "$1" scope link |
		awk '!/tentative/ { sub("/.*", "", $4); print $4; f = 1; exit } END { exit !f }'
}
ll=$(lab_wait_until 10 link_local eth0)
echo "$ll" >"$LAB_SHARED/ll.$me"
rdma link show
lab_barrier setup 200 || die setup "barrier"
pll=$(cat "$LAB_SHARED/ll.g$p")
echo "$me: devices $(rdma link show | awk '{ print $2 }' | tr '\n' ' '); peer link-local $pll"

# listening ADDR:PORT [DEV]: does a socket listen on exactly ADDR:PORT (ss
# notation: 192.0.2.1:7174, [fd00:2::1]:7174), tied to netdev DEV if DEV
# is given, else tied to any netdev or to none?  ss prints a socket tied
# to a netdev (SO_BINDTODEVICE, or an IPv6 scope) as ADDR%DEV:PORT.
# swiwarp ties each socket of a wildcard listen to the netdev owning its
# address (Documentation/kernel.md, "Listening").
listening() {
	ss -Hltn | awk -v want="$1" -v dev="${2-}" '
		{
			port = $4; sub(/.*:/, "", port)
			host = substr($4, 1, length($4) - length(port) - 1)
			d = ""
			if ((i = index(host, "%")) > 0) { d = substr(host, i + 1); host = substr(host, 1, i - 1) }
			if (host ":" port == want && (dev == "" || d == dev)) ok = 1
		}
		END { exit !ok }'
}

# persistent NAME PORT 'SERVER' then client lines on stdin ("NAME ADDR"),
# each an rping of 5 verified 200-byte pings to ADDR through the
# persistent server guest 1 started.  Guest 1's check of its listening
# sockets runs first (function listen_check, if defined by the caller);
# before each client guest 1 runs the caller's between NAME PORT (if
# defined), and it waits for that client to end before the next one:
# a between step that removes an address must not pull it from under
# the previous client's connection (it did, whenever the client was slow:
# the "known bug" of rping-v6-added-v6, sessions 13-19).
persistent() {
	local tag=$1 port=$2 sargs=$3 pid name addr
	if [ "$i" = 1 ]; then
		# shellcheck disable=SC2086
		timeout 300 $sargs >"$work/$tag-server.log" 2>&1 &
		pid=$!
		lab_wait_listen "$port" 30 || lab_fail "netconf/$tag-listen" "nothing listens on port $port"
		declare -F listen_check >/dev/null && listen_check "$port"
	fi
	lab_barrier "$tag-up" 200
	while read -r name addr; do
		if [ "$i" = 1 ]; then
			declare -F between >/dev/null && between "$name" "$port" </dev/null
		fi
		lab_barrier "$tag-$name" 200
		[ "$i" = 2 ] && persistent_client "$tag-$name" "$addr" "$port"
		lab_barrier "$tag-$name-done" 200
	done
	lab_barrier "$tag-done" 200
	if [ "$i" = 1 ]; then
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid"
			wait "$pid"
		else
			wait "$pid"
			lab_fail "netconf/$tag-server" "the persistent server exited early ($?): $(grep -v 'ping data' "$work/$tag-server.log" | tail -n 2 | tr '\n' ' ')"
		fi
	fi
}
# persistent_client NAME ADDR PORT: guest 2's rping of one persistent line
persistent_client() {
	local name=$1 addr=$2 port=$3 why= rc
	timeout "$T" rping -c -a "$addr" -p "$port" -C 5 -S 200 -V -v </dev/null >"$work/$name.log" 2>&1
	rc=$?
	[ $rc -ne 0 ] && why="client exit $rc: $(grep -v 'ping data' "$work/$name.log" | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
	[ -z "$why" ] && why=$(lab_rping_log_why "$work/$name.log" 5 200 "ping data: ")
	[ -n "$why" ] && [[ $addr == *:* ]] && why+=" [neighbour: $(ip -6 neigh show "${addr%\%*}" | head -n 1)]"
	if [ -z "$why" ]; then lab_pass "netconf/$name"
	else lab_fail "netconf/$name" "$why"; fi
}

# ---------------------------------------------- IPv4 wildcard listen
if part listen; then
	listen_check() {
		local a why=
		for a in 192.0.2.1@eth0 10.0.100.1@eth0.100 10.0.1.1@eth1; do
			listening "${a%@*}:$1" "${a#*@}" || why="$why no listener on ${a%@*}:$1 tied to ${a#*@};"
		done
		listening "0.0.0.0:$1" && why="$why a socket on 0.0.0.0:$1;"
		if [ -z "$why" ]; then lab_pass netconf/listen-v4-per-address
		else lab_fail netconf/listen-v4-per-address "$why $(ss -Hltn | awk '{ print $4 }' | tr '\n' ' ')"; fi
		# rdma_cm listens on every device for a wildcard address
		rdma res show cm_id >"$work/cm_id-v4" 2>&1
		why=
		for a in swiwarp0 swiwarp1 swiwarp2; do
			grep -q "^link $a/.* LISTEN" "$work/cm_id-v4" || why="$why $a not listening;"
		done
		if [ -z "$why" ]; then lab_pass netconf/listen-v4-every-device
		else lab_fail netconf/listen-v4-every-device "$why $(tr '\n' ' ' <"$work/cm_id-v4" | cut -c1-300)"; fi
	}
	persistent rping-v4 7174 "rping -s -P -a 0.0.0.0 -p 7174 -V -C 5 -S 200" <<-EOF
		eth0 192.0.2.1
		vlan 10.0.100.1
		nic2-siw 10.0.1.1
	EOF
	unset -f listen_check
fi

# --------------------------------- one-shot wildcard servers, IPv4
if part v4; then
	# Each tool's wildcard server reached through each of guest 1's
	# devices: eth0 and the VLAN from swiwarp, eth1 from upstream siw.
	for a in eth0@192.0.2.1 vlan@10.0.100.1 nic2-siw@10.0.1.1; do
		step "ucmatose-v4-${a%@*}" 1 7471 plain "ucmatose -C 10" "ucmatose -s ${a#*@} -C 10"
		step "rdma-server-v4-${a%@*}" 1 7471 plain "rdma_server" "rdma_client -s ${a#*@}"
	done
	# perftest -R clients connect twice (tests/lab/README.md): their SYNs
	# are delayed on the VLAN all along, on eth0 and eth1 for this step
	# only (a delay on every SYN would slow every other step).
	for a in eth0@192.0.2.1@eth0 vlan@10.0.100.1@ nic2-siw@10.0.1.1@eth1; do
		IFS=@ read -r pt_name pt_addr pt_dev <<<"$a"
		[ "$i" = 2 ] && [ -n "$pt_dev" ] && lab_delay_syn "${LAB_PERFTEST_SYN_DELAY_MS:-300}" "$pt_dev"
		step "perftest-R-$pt_name" 1 18515 perf "ib_write_bw -R -F -n 50 --report_gbits" \
			"ib_write_bw -R -F -n 50 --report_gbits $pt_addr"
		[ "$i" = 2 ] && [ -n "$pt_dev" ] && lab_delay_syn 0 "$pt_dev"
	done
	# Guest 2 has upstream siw (eth1) beside swiwarp (eth0, the VLAN): a
	# wildcard listen there goes to siw and swiwarp devices at once.
	# siw ties one wildcard socket to its netdev, swiwarp one socket per
	# address to that address's netdev, so the two share the port (before
	# swiwarp tied its sockets: EADDRINUSE, rdma_listen failed).  Served
	# by siw, then by swiwarp, a fresh wildcard server each time.
	# Served by siw, the only step with siw as the passive side: the
	# client's (guest 1's swiwarp2) frames are delayed on eth1 for it, as
	# the matrix delays its siw clients: upstream siw can leave a first
	# Send that lands right after its MPA Reply unread (lab_delay_connect
	# in lib.sh).
	[ "$i" = 1 ] && { lab_delay_connect "${LAB_SIW_CLIENT_DELAY_MS:-100}" eth1 || echo "could not add the netem delay"; }
	step rping-v4-siw-host-by-siw 2 7177 rping:5:200 \
		"rping -s -a 0.0.0.0 -p 7177 -C 5 -S 200 -V -v" \
		"rping -c -a 10.0.1.2 -p 7177 -C 5 -S 200 -V -v"
	[ "$i" = 1 ] && lab_delay_connect 0 eth1
	step rping-v4-siw-host-by-swiwarp 2 7177 rping:5:200 \
		"rping -s -a 0.0.0.0 -p 7177 -C 5 -S 200 -V -v" \
		"rping -c -a 192.0.2.2 -p 7177 -C 5 -S 200 -V -v"
fi

# ------------------------------------- listens on one address each
if part specific; then
	step rping-v4-specific-vlan 1 7176 rping:5:200 \
		"rping -s -a 10.0.100.1 -p 7176 -C 5 -S 200 -V -v" \
		"rping -c -a 10.0.100.1 -p 7176 -C 5 -S 200 -V -v"
	step rping-v6-specific-eth0 1 7176 rping:5:200 \
		"rping -s -a fd00:2::1 -p 7176 -C 5 -S 200 -V -v" \
		"rping -c -a fd00:2::1 -p 7176 -C 5 -S 200 -V -v"
fi

# ---------------------------------------------- IPv6 wildcard listen
if part v6; then
	listen_check() {
		local a why=
		for a in fd00:2::1@eth0 fd00:100::1@eth0.100 ::ffff:192.0.2.1@eth0 \
			::ffff:10.0.100.1@eth0.100 ::ffff:10.0.1.1@eth1 "$ll@eth0"; do
			listening "[${a%@*}]:$1" "${a#*@}" || why="$why no listener on [${a%@*}]:$1 tied to ${a#*@};"
		done
		listening "[::]:$1" && why="$why a socket on [::]:$1;"
		listening "*:$1" && why="$why a socket on *:$1;"
		if [ -z "$why" ]; then lab_pass netconf/listen-v6-per-address
		else lab_fail netconf/listen-v6-per-address "$why $(ss -Hltn | awk '{ print $4 }' | tr '\n' ' ')"; fi
	}
	# Addresses added and removed on the VLAN while this listen is up
	# (guest 1 changes them before the client of that name runs); the
	# peer reaches the added ones over the VLAN's subnets.  After the
	# removal the listen must still serve the VLAN's first address.  An
	# IPv4 client of this IPv6 listen reaches a v4-mapped socket.
	between() {
		local a ok=0 t
		case $1 in
		added-v4 | added-v6)
			[ "$1" = added-v4 ] && ip addr add 10.0.100.11/24 dev eth0.100
			[ "$1" = added-v6 ] && ip -6 addr add fd00:100::11/64 dev eth0.100 nodad
			# the listen is IPv6: an IPv4 address is v4-mapped
			a="[::ffff:10.0.100.11]:$2"
			[ "$1" = added-v6 ] && a="[fd00:100::11]:$2"
			for t in $(seq 50); do
				listening "$a" eth0.100 && { ok=1; break; }
				sleep 0.1
			done
			if [ $ok = 1 ]; then lab_pass "netconf/addr-$1-listens"; echo "$me: $a listened on after ~$((t / 10)) s"
			else lab_fail "netconf/addr-$1-listens" "no listener on $a tied to eth0.100 5 s after adding the address: $(ss -Hltn | awk '{ print $4 }' | tr '\n' ' ')"; fi
			;;
		removed)
			ip addr del 10.0.100.11/24 dev eth0.100
			ip -6 addr del fd00:100::11/64 dev eth0.100
			for t in $(seq 50); do
				listening "[::ffff:10.0.100.11]:$2" || listening "[fd00:100::11]:$2" || { ok=1; break; }
				sleep 0.1
			done
			if [ $ok = 1 ]; then lab_pass netconf/addr-removed-unlistens
			else lab_fail netconf/addr-removed-unlistens "still listening 5 s after removing the addresses: $(ss -Hltn | awk '{ print $4 }' | tr '\n' ' ')"; fi
			;;
		esac
	}
	persistent rping-v6 7174 "rping -s -P -a ::0 -p 7174 -V -C 5 -S 200" <<-EOF
		global-eth0 fd00:2::1
		global-vlan fd00:100::1
		link-local-eth0 $pll%eth0
		added-v4 10.0.100.11
		added-v6 fd00:100::11
		removed 10.0.100.1
	EOF
	unset -f listen_check between
	# ucmatose and rdma_server through a global and a link-local address
	# (perftest 4.5 resolves IPv4 only)
	step ucmatose-v6-link-local 1 7471 plain "ucmatose -b ::0 -C 10" "ucmatose -s $pll%eth0 -C 10"
	step ucmatose-v6-global 1 7471 plain "ucmatose -b ::0 -C 10" "ucmatose -s fd00:100::1 -C 10"
	step rdma-server-v6-global 1 7471 plain "rdma_server -s ::0" "rdma_client -s fd00:100::1"
	step rdma-server-v6-link-local 1 7471 plain "rdma_server -s ::0" "rdma_client -s $pll%eth0"
fi

# ---------------------------------------------- MTU change on a live link
# The old connection: an endless rping (200-byte pings, verified by both
# sides, guest 2 the client) over eth0, made at MTU 1500.  Around each
# measurement of a new connection it is stopped (SIGSTOP, then 2 s for
# the ping in flight to end, and both guests take their counters only
# then, and again before it goes on), so that the device counters see the
# new connection alone.  A new connection is rping -C 20 -S 65000 (1.3 MB of
# verified Read Responses from the client, as much of Writes from the
# server); each guest divides its tx_payload_bytes by its tx_fpdus rise.
# 65000-byte pings carry one or two small control FPDUs each (Sends, the
# Read Request), so the mean stays a little under the largest payload:
# 1428 (MSS 1448: timestamps) at 1500, 8916 at 9000.
# An old connection (parts mtu and bond): an endless rping, guest 2 the
# client, PID $opid, output in $work/$otag-old.log and .err.
old_pings() { grep -c '^ping data: ' "$work/$otag-old.log" 2>/dev/null; }
# old_moves WHEN: guest 2 checks that the old connection's pings go on
old_moves() {
	local n0 n1 t
	[ "$i" = 2 ] || return 0
	n0=$(old_pings)
	for t in $(seq 100); do
		n1=$(old_pings)
		[ "$n1" -ge $((n0 + 5)) ] && break
		sleep 0.2
	done
	if [ "$n1" -ge $((n0 + 5)) ] && kill -0 "$opid" 2>/dev/null; then
		lab_pass "netconf/$otag-old-conn-$1 ($n0 -> $n1 pings)"
	else
		lab_fail "netconf/$otag-old-conn-$1" "old rping: $n0 -> $n1 pings in 20 s$(kill -0 "$opid" 2>/dev/null || echo ', the client exited'): $(grep -v 'ping data' "$work/$otag-old.err" | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
	fi
}
# old_start ADDR PORT: the old connection's server (guest 1) and client
old_start() {
	if [ "$i" = 1 ]; then
		stdbuf -oL rping -s -a "$1" -p "$2" -V -v -S 200 >"$work/$otag-old-server.log" 2>&1 &
		opid=$!
		lab_wait_listen "$2" 30 || lab_fail "netconf/$otag-old-listen" "nothing listens on port $2"
	fi
	lab_barrier "$otag-old-listen" 200
	if [ "$i" = 2 ]; then
		stdbuf -oL rping -c -a "$1" -p "$2" -V -v -S 200 >"$work/$otag-old.log" 2>"$work/$otag-old.err" &
		opid=$!
	fi
}
# old_stop: the client stops and checks every ping's data, then the server
old_stop() {
	local why
	lab_barrier "$otag-end" 200
	if [ "$i" = 2 ]; then
		kill "$opid" 2>/dev/null
		wait "$opid" 2>/dev/null
		why=$(lab_rping_log_why "$work/$otag-old.log" "$(old_pings)" 200 "ping data: ")
		if [ -z "$why" ]; then lab_pass "netconf/$otag-old-conn-verified ($(old_pings) pings)"
		else lab_fail "netconf/$otag-old-conn-verified" "$why"; fi
	fi
	lab_barrier "$otag-old-stopped" 200
	if [ "$i" = 1 ]; then
		kill "$opid" 2>/dev/null
		wait "$opid" 2>/dev/null
	fi
}

if part mtu; then
	opid= oport=7180 otag=mtu
	# FPDUs follow the MSS as every peer but another swiwarp gets them;
	# between two swiwarp ends they would be longer (large_fpdu).
	lab_param large_fpdu 0
	# set_mtu MTU: on both guests, the old connection still up
	set_mtu() {
		lab_barrier "mtu-set-$1" 200
		if ip link set dev eth0 mtu "$1" && [ "$(cat /sys/class/net/eth0/mtu)" = "$1" ]; then
			lab_pass "netconf/mtu-set-$1-$me"
		else
			lab_fail "netconf/mtu-set-$1-$me" "ip link set dev eth0 mtu $1: eth0 has $(cat /sys/class/net/eth0/mtu), max $(ip -d link show eth0 | grep -o 'maxmtu [0-9]*')"
		fi
		lab_barrier "mtu-done-$1" 200
	}
	# new_conn MTU MIN MAX: a new connection's mean FPDU payload on each
	# guest, the old connection stopped meanwhile
	new_conn() {
		local mtu=$1 lo=$2 hi=$3 pre=$work/mtu-$1.pre post=$work/mtu-$1.post b f
		[ "$i" = 2 ] && kill -STOP "$opid"
		sleep 2
		lab_barrier "mtu-quiet-$mtu" 200
		lab_hw_counters swiwarp0 >"$pre"
		step "mtu-$mtu-new-conn" 1 $((oport + 1)) rping:20:65000 \
			"rping -s -a 192.0.2.1 -p $((oport + 1)) -C 20 -S 65000 -V -v" \
			"rping -c -a 192.0.2.1 -p $((oport + 1)) -C 20 -S 65000 -V -v"
		sleep 1
		lab_hw_counters swiwarp0 >"$post"
		lab_barrier "mtu-counted-$mtu" 200
		[ "$i" = 2 ] && kill -CONT "$opid"
		b=$(lab_ctr_delta "$pre" "$post" tx_payload_bytes)
		f=$(lab_ctr_delta "$pre" "$post" tx_fpdus)
		if [ "${b:-0}" -ge 1048576 ] && [ "${f:-0}" -gt 0 ] &&
			[ $((b / f)) -gt "$lo" ] && [ $((b / f)) -le "$hi" ]; then
			lab_pass "netconf/mtu-$mtu-fpdu-size-$me ($b B in $f FPDUs: $((b / f)) B each)"
		else
			lab_fail "netconf/mtu-$mtu-fpdu-size-$me" "${b:-?} B in ${f:-?} FPDUs$([ "${f:-0}" -gt 0 ] && echo ": $((b / f)) B each"), want at least 1 MiB at more than $lo and at most $hi B each"
		fi
	}
	old_start 192.0.2.1 $oport
	old_moves at-1500
	set_mtu 9000
	old_moves at-9000
	new_conn 9000 4096 8948
	old_moves after-9000-conn
	set_mtu 1500
	old_moves back-at-1500
	new_conn 1500 1200 1448
	old_moves after-1500-conn
	old_stop
	lab_param_restore large_fpdu
fi

# ------------------------------------------ devices in network namespaces
if part netns; then
	# shellcheck source=tests/swiwarp/netconf-netns.sh
	source "$LAB_TOP/tests/swiwarp/netconf-netns.sh"
fi

# ------------------------------------------- an active-backup bond
if part bond; then
	# shellcheck source=tests/swiwarp/netconf-bond.sh
	source "$LAB_TOP/tests/swiwarp/netconf-bond.sh"
fi

# ------------------------------------------- nothing left, clean unload
if part end; then
	lab_barrier end 200
	left=$(ss -Hltn | awk '{ print $4 }' | grep -E ':(7174|7176|7180|7181|7471|719[0-9]|18515)$')
	if [ -z "$left" ]; then lab_pass "netconf/no-listener-left-$me"
	else lab_fail "netconf/no-listener-left-$me" "$(echo "$left" | tr '\n' ' ')"; fi
	for d in $(rdma link show | awk '{ print $2 }' | cut -d/ -f1); do
		rdma link delete "$d" || lab_fail "netconf/unload-$me" "rdma link delete $d failed"
	done
	if [ -e /sys/module/swiwarp ] && ! rmmod swiwarp; then
		lab_fail "netconf/unload-$me" "rmmod swiwarp failed: $(lsmod | grep swiwarp)"
	else
		lab_pass "netconf/unload-$me"
	fi
	# swiwarp_cm_exit counts the endpoints never freed (listening ones
	# included) and warns; the lab's dmesg scan would fail the run, this
	# names the case.
	leak=$(dmesg | grep -E 'swiwarp: .*(leaked|outlived its device)')
	if [ -e /sys/module/swiwarp ]; then lab_skip "netconf/no-cep-leak-$me" "module still loaded"
	elif [ -z "$leak" ]; then lab_pass "netconf/no-cep-leak-$me"
	else lab_fail "netconf/no-cep-leak-$me" "$leak"; fi
fi
lab_finish
