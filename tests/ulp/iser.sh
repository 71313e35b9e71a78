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

# --- shared with tests/ulp/srp.sh ------------------------------------------
# lio_up IMG MIB GUESTS FABRIC_MODULE...: LIO's core with the fabric
# modules, configfs, and a tmpfs at IMG for GUESTS LUNs of MIB MiB.
lio_up() {
	local img=$1 mb=$2 n=$3
	shift 3
	modprobe -a target_core_mod target_core_file "$@" || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config || return 1
	mkdir -p "$img" && mount -t tmpfs -o size=$((mb * n + 8))m "${img##*/}" "$img"
}

# lio_fileio HBA IMG GUEST MIB: make and enable the fileio backstore
# core/fileio_HBA/GUEST of MIB MiB in IMG/GUEST.img; print its configfs path.
lio_fileio() {
	local b=$iser_cfs/core/fileio_$1/$3
	mkdir -p "$b" &&
		echo "fd_dev_name=$2/$3.img,fd_dev_size=$(($4 * 1048576)),fd_buffered_io=1" >"$b/control" &&
		echo 1 >"$b/enable" && echo "$b"
}

# lio_fileio_down HBA: remove every backstore of core/fileio_HBA and it.
lio_fileio_down() {
	local b
	for b in "$iser_cfs/core/fileio_$1"/*; do
		[ -d "$b" ] && { rmdir "$b" || return 1; }
	done
	rmdir "$iser_cfs/core/fileio_$1" 2>/dev/null
	return 0
}

# lio_unload_core: unload LIO's core and its backends (target_core_mod
# loads iblock, pscsi and user itself) unless a fabric module still holds
# it: iscsi_target_mod, or srp.sh's ib_srpt, the last one out.
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

# lio_target_check ULP IMG GUEST [WHY]: the bytes guest GUEST wrote through
# its disk ($LAB_SHARED/ULP-GUEST.src, at offset 0) are in IMG/GUEST.img;
# WHY (what the target logged) goes with a FAIL.
lio_target_check() {
	local src=$LAB_SHARED/$1-$3.src
	if [ -f "$src" ] && cmp -n "$(stat -c %s "$src")" "$src" "$2/$3.img"; then
		lab_pass "$1/g$3/on-target"
	else
		lab_fail "$1/g$3/on-target" "the backstore differs from what the initiator wrote${4:+; target: $4}"
	fi
}

# disk_read_check NAME DEV MIB SRC WHY: NAME/read-compare, the first MIB MiB
# of DEV read O_DIRECT are SRC (WHY, the kernel's last words, with a FAIL).
disk_read_check() {
	if cmp -n $(($3 * 1048576)) "$4" <(dd if="$2" bs=1M count="$3" iflag=direct status=none); then
		lab_pass "$1/read-compare"
	else
		lab_fail "$1/read-compare" "$2; $5"
	fi
}

# --- iSER target ------------------------------------------------------------
# iser_target_up GUEST...: a fileio LUN of ISER_DISK_MB (default 24) MiB
# for each initiator guest, one target each, portal with iSER on
# $iser_ip:$iser_port, open to any initiator without authentication.
iser_target_up() {
	local g t b mb=${ISER_DISK_MB:-24}
	lio_up "$iser_img" "$mb" $# iscsi_target_mod ib_isert || return 1
	[ -d $iser_cfs/iscsi ] || mkdir $iser_cfs/iscsi || return 1
	for g in "$@"; do
		b=$(lio_fileio 0 "$iser_img" "$g" "$mb") || return 1
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

# iser_target_check GUEST: what guest GUEST wrote is in its backstore.
iser_target_check() { lio_target_check iser "$iser_img" "$1"; }

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
	lio_fileio_down 0 || return 1
	rmdir "$iser_cfs/iscsi" 2>/dev/null
	umount "$iser_img" || return 1
	if ! modprobe -r ib_isert iscsi_target_mod || ! lio_unload_core; then
		lsmod | grep -E '^(target|iscsi|ib_isert)' >&2
		find "$iser_cfs" -maxdepth 3 -type d >&2
		return 1
	fi
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
	disk_read_check "iser/$tag" "$dev" "$mib" "$src" "$(lab_klog)"
	lab_check "iser/$tag/logout-2" iser_logout "$iqn"
}

# iser_initiator_down: stop iscsid and unload the initiator.
iser_initiator_down() {
	iscsiadm -k 0 2>/dev/null || pkill -x iscsid
	lab_wait_until 5 lab_not pgrep -x iscsid
	modprobe -r ib_iser
}
