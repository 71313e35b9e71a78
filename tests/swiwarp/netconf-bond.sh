# shellcheck shell=bash
# Part "bond" of tests/swiwarp/netconf-scenario.sh (sourced there, after
# part netns, before part end): an active-backup bond with swiwarp on it
# (Documentation/kernel.md, "Network configurations").
#
# Every RDMA device of the guest goes and the VLAN with it; both NICs
# become the slaves of bond0 (mode active-backup, miimon 100 ms, eth0
# primary), 10.0.2.I/24 on bond0, swiwarp4 on bond0.  eth0 and eth1 are
# two separate links between the guests, so either carries bond0.  Under an
# old connection (an endless rping with verified 200-byte pings, guest 2
# the client, made while eth0 is active):
#   - the cable of eth0 is pulled (lab_cable: QEMU's set_link on both
#     guests' eth0, a real loss of carrier): both bonds fail over to eth1
#     and the old connection keeps moving verified data; a new connection
#     is made over eth1;
#   - the cable is plugged again: both bonds fail back to eth0 (primary)
#     and the old connection still moves.
# Then bond0's MAC changes on both guests (what fail_over_mac=active does
# at every failover; NETDEV_CHANGEADDR): the device's GID must follow it,
# or rdma_cm finds no device for bond0's addresses, and a new connection
# must work.
# shellcheck disable=SC2154  # i, me, work, T: set by netconf-scenario.sh
bond_why=
bok() { lab_verdict "netconf/bond-$1" "$2"; }
# active_is NIC SECONDS: wait until bond0's active slave is NIC; prints
# how long that took (tenths of seconds)
active_is() {
	local t
	for ((t = 0; t < $2 * 10; t++)); do
		[ "$(cat /sys/class/net/bond0/bonding/active_slave 2>/dev/null)" = "$1" ] && { echo "$t"; return 0; }
		lab_nap 0.1
	done
	echo "$t"
	return 1
}
bond_state() {
	echo "active $(cat /sys/class/net/bond0/bonding/active_slave 2>/dev/null), carrier eth0 $(cat /sys/class/net/eth0/carrier 2>/dev/null) eth1 $(cat /sys/class/net/eth1/carrier 2>/dev/null), bond0 $(cat /sys/class/net/bond0/operstate 2>/dev/null)"
}

# ------------------------------------------------------------- setup
for d in $(rdma link show | awk '{ print $2 }' | cut -d/ -f1); do
	rdma link delete "$d" || bond_why+=" rdma link delete $d failed;"
done
ip link del eth0.100 2>/dev/null
# max_bonds=0: no bond0 of the module's own, ip link add makes it
modprobe bonding max_bonds=0 || die bond "modprobe bonding failed"
ip link add bond0 type bond mode active-backup miimon 100 || die bond "ip link add bond0 type bond"
for s in eth0 eth1; do
	ip addr flush dev "$s"
	ip link set "$s" down
	ip link set "$s" master bond0 || die bond "ip link set $s master bond0"
done
echo eth0 >/sys/class/net/bond0/bonding/primary || bond_why+=" primary eth0 refused;"
ip link set bond0 up
ip addr add "10.0.2.$i/24" dev bond0
lab_load_swiwarp bond0 swiwarp4 || die bond "rdma link add swiwarp4 on bond0"
active_is eth0 20 >/dev/null || bond_why+=" eth0 not the active slave 20 s after set-up ($(bond_state));"
bok "setup-$me" "$bond_why"
lab_barrier bond-setup 200 || die bond "barrier"

# ----------------------------------------- failover under an old connection
# shellcheck disable=SC2034  # for old_start, old_moves and old_stop
opid="" otag=bond
old_start 10.0.2.1 7196
old_moves before-failover
lab_barrier bond-pull 200
if [ "$i" = 1 ]; then
	lab_cable eth0 down || lab_fail netconf/bond-cable-pull "lab_cable eth0 down failed"
fi
bond_why=
if t=$(active_is eth1 20); then
	[ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" = 0 ] || bond_why="eth0 still has carrier;"
else
	bond_why="eth1 not active 20 s after the cable of eth0 was pulled ($(bond_state));"
fi
bok "failover-$me" "$bond_why"
echo "$me: failover to eth1 seen after $((t / 10)).$((t % 10)) s; $(bond_state)"
old_moves after-failover
step bond-new-conn-on-eth1 1 7197 rping:5:200 \
	"rping -s -a 10.0.2.1 -p 7197 -C 5 -S 200 -V -v" \
	"rping -c -a 10.0.2.1 -p 7197 -C 5 -S 200 -V -v"
lab_barrier bond-plug 200
if [ "$i" = 1 ]; then
	lab_cable eth0 up || lab_fail netconf/bond-cable-plug "lab_cable eth0 up failed"
fi
bond_why=
t=$(active_is eth0 30) || bond_why="eth0 (primary) not active again 30 s after its cable was plugged ($(bond_state));"
bok "failback-$me" "$bond_why"
echo "$me: failback to eth0 seen after $((t / 10)).$((t % 10)) s; $(bond_state)"
old_moves after-failback
old_stop

# ------------------------------------------------- bond0's MAC changes
lab_barrier bond-mac 200
bond_why=
mac=52:54:00:c0:04:0$i
ip link set bond0 address "$mac" || bond_why="ip link set bond0 address $mac failed;"
lab_wait_until 5 grep -qx "5254:00c0:040$i:0000:0000:0000:0000:0000" /sys/class/infiniband/swiwarp4/ports/1/gids/0
gid=$(cat /sys/class/infiniband/swiwarp4/ports/1/gids/0 2>/dev/null)
[ "$gid" = "5254:00c0:040$i:0000:0000:0000:0000:0000" ] || bond_why+=" GID $gid 5 s after bond0 took $mac;"
bok "gid-follows-mac-$me" "$bond_why"
lab_barrier bond-mac-set 200
ip neigh flush dev bond0
step bond-new-conn-after-mac-change 1 7198 rping:5:200 \
	"rping -s -a 10.0.2.1 -p 7198 -C 5 -S 200 -V -v" \
	"rping -c -a 10.0.2.1 -p 7198 -C 5 -S 200 -V -v"
unset -f bok active_is bond_state
