# NVMe over Fabrics helpers for lab guest scripts: an nvmet target over
# RDMA on this guest, and nvme-rdma host connections to another guest's.
# Used by tests/ulp/nvmeof-guest.sh (suite 66), tests/soak/nvmeof-guest.sh
# (make soak) and tests/dissector/capture-ulp-guest.sh (a golden capture).  The caller sources tests/lab/lib.sh first and sets
#   work   a directory for the logs of connect, disconnect and fio
#   MB     the size of a fio_verify job in MiB
# Results are named nvmeof/PHASE/CHECK.
# shellcheck shell=bash

cfs=/sys/kernel/config/nvmet
nqn_of() { echo "nqn.2026-11.org.swiwarp:$1"; }
hostnqn="nqn.2014-08.org.nvmexpress:uuid:$(cat /proc/sys/kernel/random/uuid)"
hostid=$(cat /proc/sys/kernel/random/uuid)
ctrl=   # the controller connect() made (nvmeN)

# target_up NAME NS_PATH...: a subsystem NAME open to any host with one
# namespace per path (files are buffered: the guest's root is an overlay
# on tmpfs, which has no O_DIRECT), on an RDMA port at our address:4420.
target_up() {
	local name=$1 s n=0 p
	shift
	s=$cfs/subsystems/$(nqn_of "$name")
	mkdir "$s" && echo 1 >"$s/attr_allow_any_host" || return 1
	for p in "$@"; do
		n=$((n + 1))
		mkdir "$s/namespaces/$n" || return 1
		echo -n "$p" >"$s/namespaces/$n/device_path" || return 1
		[ -f "$p" ] && { echo 1 >"$s/namespaces/$n/buffered_io" || return 1; }
		echo 1 >"$s/namespaces/$n/enable" || return 1
	done
	mkdir "$cfs/ports/1" &&
		echo ipv4 >"$cfs/ports/1/addr_adrfam" &&
		echo rdma >"$cfs/ports/1/addr_trtype" &&
		echo "$LAB_IP" >"$cfs/ports/1/addr_traddr" &&
		echo 4420 >"$cfs/ports/1/addr_trsvcid" || return 1
	ln -s "$s" "$cfs/ports/1/subsystems/$(nqn_of "$name")" || return 1
	lab_wait_listen 4420 60
}

# target_down: remove every subsystem, namespace and port again.
target_down() {
	local s l
	for l in "$cfs"/ports/*/subsystems/*; do [ -L "$l" ] && rm "$l"; done
	for s in "$cfs"/ports/*; do [ -d "$s" ] && rmdir "$s"; done
	for s in "$cfs"/subsystems/*; do
		[ -d "$s" ] || continue
		for l in "$s"/namespaces/*; do
			[ -d "$l" ] || continue
			echo 0 >"$l/enable"
			rmdir "$l"
		done
		rmdir "$s"
	done
	[ -z "$(ls -A "$cfs/subsystems")" ] && [ -z "$(ls -A "$cfs/ports")" ]
}

# nvme_live_ctrl NQN: print the controller (nvmeN) of subsystem NQN that
# is live and has its first namespace's block device; 1 if none (yet).
nvme_live_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] || continue
		[ "$(cat "$c/state" 2>/dev/null)" = live ] || continue
		[ -b "/dev/${c##*/}n1" ] && { echo "${c##*/}"; return 0; }
	done
	return 1
}

# connect PHASE TARGET_ID NAME NQUEUES: connect, set ctrl to the new
# controller (nvmeN); its namespaces are /dev/${ctrl}n1...
# The keep-alive timeout is the kernel's default of 5 s, stretched by
# $LAB_SLOWDOWN: on the KASAN debug kernel under TCG a Keep Alive took 1.3
# to 3.8 s there and back (the host's "long keepalive RTT"), the target
# let its 5 s timer expire, dropped the controller, and after the host's
# retries fio saw EIO, with upstream siw as target or host as well as with
# swiwarp (TCP itself moved 0.1-0.25 MB/s between those guests; session
# 31, Documentation/robustness.md).
connect() {
	local phase=$1 tid=$2 name=$3 nq=$4
	ctrl=
	if ! timeout 120 nvme connect -t rdma -a "192.0.2.$tid" -s 4420 -n "$(nqn_of "$name")" \
		-i "$nq" --hostnqn="$hostnqn" --hostid="$hostid" --ctrl-loss-tmo=60 --reconnect-delay=2 \
		--keep-alive-tmo=$((5 * ${LAB_SLOWDOWN:-1})) >"$work/$phase-connect.log" 2>&1; then
		lab_fail "nvmeof/$phase/connect" "$(tr '\n' ' ' <"$work/$phase-connect.log" | cut -c1-200)"
		return 1
	fi
	ctrl=$(lab_wait_until 20 nvme_live_ctrl "$(nqn_of "$name")")
	if [ -z "$ctrl" ]; then
		lab_fail "nvmeof/$phase/connect" "no live controller with a namespace for $(nqn_of "$name")"
		return 1
	fi
	lab_pass "nvmeof/$phase/connect"
}

# fio_verify NAME DEV RW BS... : one fio job with crc32c verification of
# every block it wrote (written, then read back and checked).  Passes
# NAME if fio exits 0 and reports no error.  FIO_TIMEOUT (default 600)
# bounds it in seconds.
fio_verify() {
	local name=$1 dev=$2 rw=$3 log
	shift 3
	log=$work/${name//\//-}.log
	timeout "${FIO_TIMEOUT:-600}" fio --name=v --filename="$dev" --allow_file_create=0 \
		--rw="$rw" --size="${MB}M" --ioengine=libaio \
		--direct=1 --iodepth=32 --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--randrepeat=0 "$@" >"$log" 2>&1
	local rc=$?
	if [ $rc -eq 0 ] && ! grep -qiE 'verify: bad|err= *[1-9]|Input/output error' "$log"; then
		lab_pass "$name"
	else
		lab_fail "$name" "fio rc $rc: $(grep -iE -m2 'error|bad|fail' "$log" | tr '\n' ' ' | cut -c1-200)"
	fi
}

# writes_done DEV: the writes DEV (a /sys/block name) has completed so far.
writes_done() { awk '{ print $5 }' "/sys/block/$1/stat" 2>/dev/null || echo 0; }

# wait_writes DEV BEFORE: true once DEV has completed more writes than
# BEFORE, within 60 s (times the lab's slowdown).  What runs "during I/O"
# waits for it: on the debug kernel fio took more than the 3 s the checks
# used to sleep to reach its first write, and a disconnect before that
# left fio writing a regular file of that name for its whole run.
wait_writes() {
	local end=$((SECONDS + 60 * ${LAB_SLOWDOWN:-1}))
	while [ $SECONDS -lt $end ]; do
		[ "$(writes_done "$1")" -gt "$2" ] && return 0
		lab_nap 0.2
	done
	return 1
}

# disconnect PHASE NAME: disconnect from subsystem NAME; its controller
# ($ctrl) must be gone.
disconnect() {
	local phase=$1
	if timeout 60 nvme disconnect -n "$(nqn_of "$2")" >"$work/$phase-disconnect.log" 2>&1 &&
		[ ! -e "/sys/class/nvme/$ctrl" ]; then
		lab_pass "nvmeof/$phase/disconnect"
	else
		lab_fail "nvmeof/$phase/disconnect" "$(tr '\n' ' ' <"$work/$phase-disconnect.log" | cut -c1-200)"
	fi
}

# nvmeof_unload DRIVER: take every target down, unload the NVMe-oF modules
# and null_blk, delete the RDMA link DRIVER0 and unload DRIVER.
nvmeof_unload() {
	local drv=$1 m
	target_down || { echo "target_down left: $(ls "$cfs/subsystems" "$cfs/ports")"; return 1; }
	# modprobe -r also drops unused dependencies, so check each one.
	for m in nvme_rdma nvmet_rdma nvmet nvme_fabrics null_blk; do
		if [ -e "/sys/module/$m" ]; then modprobe -r "$m" || return 1; fi
	done
	rdma link delete "${drv}0" || return 1
	rmmod "$drv"
}
