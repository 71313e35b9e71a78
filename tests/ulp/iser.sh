# shellcheck shell=bash
# iSCSI Extensions for RDMA for the ULP boot of tests/suites/66-ulp-nvmeof.sh
# (issue 14): the kernel's LIO target with its iSER transport (ib_isert),
# set up through configfs from the shell, on guest 1; open-iscsi's iscsid
# and iscsiadm with the kernel's iSER initiator (ib_iser) on the others.
# Sourced by tests/ulp/nvmeof-guest.sh after tests/lab/lib.sh (it uses that
# file's fio_verify).  Result names: iser/CHECK.
#
# One target per initiator (iqn...:g2, iqn...:g3), each with one LUN, a
# fileio backstore on a tmpfs of guest 1, so that each initiator sees
# exactly one disk and guest 1 can compare what landed in the file.
#
# Why the TCP portal is made in a network namespace of its own: LIO makes
# every portal (configfs np/IP:PORT) a TCP listener first, and its `iser`
# attribute then adds an RDMA listener on the very same IP:PORT.  An
# iWARP device in software (swiwarp, siw) listens with a kernel TCP socket
# of its own in the same TCP port space, so that second bind fails with
# EADDRINUSE while LIO's TCP socket listens (Documentation/ulp.md).  LIO
# creates its socket in the network namespace of the process that makes
# the portal and binds it with IP_FREEBIND, so a portal made from an
# empty namespace leaves 3260 free here, while ib_isert's listener is
# created in the initial namespace, where swiwarp's netdev is.

iser_port=3260
iser_ip=192.0.2.1 # guest 1 is the target
iser_cfs=/sys/kernel/config/target
iser_img=/run/iser-img
iser_iqn() { echo "iqn.2026-11.org.swiwarp:$1"; }

# iser_target_up GUEST...: a fileio LUN of ISER_DISK_MB (default 24) MiB
# for each initiator guest, one target each, portal with iSER on
# $iser_ip:$iser_port, open to any initiator without authentication.
iser_target_up() {
	local g t b mb=${ISER_DISK_MB:-24}
	modprobe -a target_core_mod target_core_file iscsi_target_mod ib_isert || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config || return 1
	mkdir -p "$iser_img" && mount -t tmpfs -o size=$((mb * $# + 8))m iser-img "$iser_img" || return 1
	[ -d $iser_cfs/iscsi ] || mkdir $iser_cfs/iscsi || return 1
	for g in "$@"; do
		b=$iser_cfs/core/fileio_0/$g
		mkdir -p "$b" &&
			echo "fd_dev_name=$iser_img/$g.img,fd_dev_size=$((mb * 1048576)),fd_buffered_io=1" \
				>"$b/control" &&
			echo 1 >"$b/enable" || return 1
		t=$iser_cfs/iscsi/$(iser_iqn "$g")/tpgt_1
		mkdir -p "$t/lun/lun_0" && ln -s "$b" "$t/lun/lun_0/disk" || return 1
		echo 1 >"$t/attrib/generate_node_acls" &&
			echo 1 >"$t/attrib/cache_dynamic_acls" &&
			echo 0 >"$t/attrib/demo_mode_write_protect" &&
			echo 0 >"$t/attrib/authentication" || return 1
		# The TCP listener in a namespace of its own (see above).
		unshare -n mkdir "$t/np/$iser_ip:$iser_port" || return 1
		echo 1 >"$t/np/$iser_ip:$iser_port/iser" || return 1
		echo 1 >"$t/enable" || return 1
	done
	lab_wait_listen "$iser_port" 30
}

# iser_target_check GUEST: the bytes guest GUEST wrote through its disk
# ($LAB_SHARED/iser-GUEST.src, written at offset 0) are in the backstore.
iser_target_check() {
	local src=$LAB_SHARED/iser-$1.src
	if [ -f "$src" ] && cmp -n "$(stat -c %s "$src")" "$src" "$iser_img/$1.img"; then
		lab_pass "iser/g$1/on-target"
	else
		lab_fail "iser/g$1/on-target" "the backstore differs from what the initiator wrote"
	fi
}

# iser_target_down: remove every target and backstore, unload LIO.
iser_target_down() {
	local t np
	for t in "$iser_cfs"/iscsi/iqn.*/tpgt_1; do
		[ -d "$t" ] || continue
		echo 0 >"$t/enable"
		for np in "$t"/np/*:*; do
			[ -d "$np" ] || continue
			echo 0 >"$np/iser"
			rmdir "$np" || return 1
		done
		rm "$t/lun/lun_0/disk" && rmdir "$t/lun/lun_0" "$t" "${t%/tpgt_1}" || return 1
	done
	for t in "$iser_cfs"/core/fileio_0/*; do
		[ -d "$t" ] && { rmdir "$t" || return 1; }
	done
	rmdir "$iser_cfs/core/fileio_0" "$iser_cfs/iscsi" 2>/dev/null
	umount "$iser_img" || return 1
	if ! modprobe -r ib_isert iscsi_target_mod || ! lio_unload_core; then
		lsmod | grep -E '^(target|iscsi|ib_isert)' >&2
		find "$iser_cfs" -maxdepth 3 -type d >&2
		return 1
	fi
}

# lio_unload_core: unload LIO's core and its backends (target_core_mod
# loads iblock, pscsi and user itself) unless a fabric module still holds
# it: iscsi_target_mod, or tests/ulp/srp.sh's ib_srpt, the last one out.
lio_unload_core() {
	local h mods=()
	[ -e /sys/module/target_core_mod ] || return 0
	for h in /sys/module/target_core_mod/holders/*; do
		[ -e "$h" ] || continue
		case ${h##*/} in
		target_core_*) mods+=("${h##*/}") ;;
		*) return 0 ;;
		esac
	done
	modprobe -r "${mods[@]}" target_core_mod
}

# iser_initiator_prepare: ib_iser, sd_mod and iscsid, early in the boot
# while the other guests are busy too.  Our initiator name and iscsid's
# node database live in the guest's throw-away overlay.
iser_initiator_prepare() {
	modprobe -a ib_iser sd_mod || return 1
	echo "InitiatorName=$(iser_iqn "init-g$LAB_ID")" >/etc/iscsi/initiatorname.iscsi
	mkdir -p /run/lock/iscsi /etc/iscsi/nodes /etc/iscsi/send_targets
	iscsid
}

# iser_disk IQN: print /dev/sdX of the session with target IQN if its
# block device exists; 1 if not (yet).
iser_disk() {
	local s d
	for s in /sys/class/iscsi_session/session*; do
		[ "$(cat "$s/targetname" 2>/dev/null)" = "$1" ] || continue
		for d in "$s"/device/target*/*/block/sd*; do
			[ -b "/dev/${d##*/}" ] && { echo "/dev/${d##*/}"; return 0; }
		done
	done
	return 1
}
# iser_wait_disk IQN: iser_disk, waiting up to 30 s after the login.
iser_wait_disk() { lab_wait_until 30 iser_disk "$1"; }

# iser_login IQN LOG: log in to target IQN on $iser_ip:$iser_port over the
# iser interface, recording the node first unless this guest has it
# already (a second login), and print /dev/sdX of its disk; iscsiadm's
# output, or why there is no disk, in LOG.  1 if any step fails.
iser_login() {
	local p=$iser_ip:$iser_port
	: >"$2"
	if [ ! -d "/etc/iscsi/nodes/$1" ]; then
		iscsiadm -m node -o new -T "$1" -p "$p" -I iser >>"$2" 2>&1 || return 1
	fi
	timeout 120 iscsiadm -m node -T "$1" -p "$p" -I iser --login >>"$2" 2>&1 || return 1
	iser_wait_disk "$1" && return 0
	echo "logged in, but no disk of $1 appeared" >>"$2"
	return 1
}

# iser_logout IQN: end this guest's session to target IQN.
iser_logout() {
	timeout 60 iscsiadm -m node -T "$1" -p "$iser_ip:$iser_port" --logout
}

# iser_initiator_check MIB: log in over iSER to our target, fio with
# crc32c verification (random writes of 4 KiB..1 MiB), a random pattern written with O_DIRECT at offset 0
# (guest 1 compares it with its backstore: iser_target_check), log out
# and in again and read it back over the wire, log out.
iser_initiator_check() {
	local mib=$1 iqn tag=g$LAB_ID log=$LAB_OUT/iser-login.log dev t
	local src=$LAB_SHARED/iser-$LAB_ID.src
	iqn=$(iser_iqn "$LAB_ID")
	t=$SECONDS
	if ! dev=$(iser_login "$iqn" "$log"); then
		lab_fail "iser/$tag/login" "$(tr '\n' ' ' <"$log" | cut -c1-200) $(lab_klog)"
		return 1
	fi
	# The node record names the iser interface; check the session took it.
	if iscsiadm -m session -P1 2>/dev/null | grep -q 'Iface Transport: iser'; then
		lab_pass "iser/$tag/login"
	else
		lab_fail "iser/$tag/login" "the session to $iqn does not run over iser"
		return 1
	fi
	echo "iser $tag: logged in ($dev) in $((SECONDS - t)) s"
	disk_write_checks "iser/$tag" "$dev" "$mib" "$src"
	lab_check "iser/$tag/logout" iser_logout "$iqn"
	if ! dev=$(iser_login "$iqn" "$log"); then
		lab_fail "iser/$tag/relogin" "$(tr '\n' ' ' <"$log" | cut -c1-200) $(lab_klog)"
		return 1
	fi
	if cmp -n $((mib * 1048576)) "$src" \
		<(dd if="$dev" bs=1M count="$mib" iflag=direct status=none); then
		lab_pass "iser/$tag/read-compare"
	else
		lab_fail "iser/$tag/read-compare" "$dev $(lab_klog)"
	fi
	lab_check "iser/$tag/logout-2" iser_logout "$iqn"
}

# iser_initiator_down: stop iscsid and unload the initiator.
iser_initiator_down() {
	iscsiadm -k 0 2>/dev/null || pkill -x iscsid
	lab_wait_until 5 lab_not pgrep -x iscsid
	modprobe -r ib_iser
}
