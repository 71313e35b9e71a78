# shellcheck shell=bash
# The SCSI RDMA Protocol for the ULP boot of tests/suites/66-ulp-nvmeof.sh
# (issue 14): LIO's SRP target (ib_srpt) listening through the RDMA CM on
# guest 1, the kernel's SRP initiator (ib_srp) on the others, set up
# through configfs and sysfs from the shell (no srptools).  Sourced by
# tests/ulp/nvmeof-guest.sh after tests/lab/lib.sh; uses that script's
# fio_verify.  Result names: srp/CHECK.
#
# What is particular to an iWARP device (Documentation/ulp.md, "SRP on a
# real host"):
# - ib_srpt names each RDMA port twice in configfs, by the port GUID (the
#   GID's last 8 bytes; all zeros for swiwarp, whose GID is the MAC address
#   and zeros) and by the whole GID.  Under the GUID name a session is
#   named after the address the login arrived at (the target's own, for
#   every initiator alike); under the GID name after the initiator port
#   id of the login request, initiator_ext followed by the initiator's
#   GID's last 8 bytes (zeros again, on swiwarp and siw).  We use the GID
#   name and give each initiator an initiator_ext of its own (its guest
#   number), so each gets an ACL, and with it a LUN, of its own.
# - Distinct initiator port ids matter beyond ACLs: ib_srpt groups
#   channels by (initiator, target) port id, and a login that asks for a
#   single channel (ib_srp's first) disconnects every other channel of
#   its group, so two initiators with the same id would log each other out
#   (srpt_cm_req_recv() in 6.1 and 6.12; read there, not tried).
# - ib_srpt checks the target port id of a login (ib_srp's id_ext and
#   ioc_guid) against its srpt_service_guid, by default the node GUID of
#   the first RDMA device it saw; guest 1 publishes it in $LAB_SHARED.

srp_port=5555 # ib_srpt's RDMA CM port (srpt/discovery_auth/rdma_cm_port)
srp_ip=192.0.2.1 # guest 1 is the target
srp_cfs=/sys/kernel/config/target
srp_img=/run/srp-img

# srp_iport_id: this initiator's port id as ib_srpt names sessions after it,
# "0x" and 32 hex digits: initiator_ext (our guest number) and the last 8
# bytes of our RDMA device's GID, as ib_srp sends them (SRP rev. 16a
# order).
srp_iport_id() {
	local gid
	gid=$(cat "/sys/class/infiniband/$(lab_rdma_dev)/ports/1/gids/0") || return 1
	gid=${gid//:/}
	printf '0x%016x%s\n' "$LAB_ID" "${gid:16:16}"
}

# srp_target_up GUEST...: a fileio LUN of 16 MiB per
# initiator guest on the GID-named port of our RDMA device, each reachable
# only through an ACL for that guest's initiator port id
# ($LAB_SHARED/srp-port-GUEST, published by srp_initiator_prepare); ib_srpt
# listens on $srp_port through the RDMA CM.
srp_target_up() {
	local g b w t n=0 acl gid mb=16 guid
	lio_up "$srp_img" "$mb" $# ib_srpt || return 1
	[ -d $srp_cfs/srpt ] || mkdir $srp_cfs/srpt || return 1
	echo "$srp_port" >$srp_cfs/srpt/discovery_auth/rdma_cm_port || return 1
	gid=$(cat "/sys/class/infiniband/$(lab_rdma_dev)/ports/1/gids/0") || return 1
	w=$srp_cfs/srpt/0x${gid//:/}
	t=$w/tpg_1
	mkdir -p "$t" || return 1
	for g in "$@"; do
		b=$(lio_fileio 1 "$srp_img" "$g" "$mb") || return 1
		mkdir "$t/lun/lun_$n" && ln -s "$b" "$t/lun/lun_$n/disk" || return 1
		if ! acl=$(cat "$LAB_SHARED/srp-port-$g"); then
			echo "srp_target_up: guest $g published no initiator port id" >&2
			return 1
		fi
		mkdir -p "$t/acls/$acl/lun_0" && ln -s "$t/lun/lun_$n" "$t/acls/$acl/lun_0/map" || return 1
		n=$((n + 1))
	done
	# On a slow kernel (LAB_SLOWDOWN > 1: the debug kernel) a login with
	# ib_srpt's default send queue (srp_sq_size 4096, and as many rdma_rw
	# contexts with their MRs, made while the initiator waits for the
	# MPA Reply) outlasted the initiators' 10 s MPA timeout, upstream
	# siw's as well as ours (session 32); 256 halved the login's time.
	if [ "${LAB_SLOWDOWN:-1}" -gt 1 ]; then
		echo 256 >"$t/attrib/srp_sq_size" || return 1
	fi
	echo 1 >"$t/enable" || return 1
	guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid) || return 1
	echo "${guid#0x}" >"$LAB_SHARED/srp-target-id" || return 1
	lab_wait_listen "$srp_port" 30
}

# srp_target_check GUEST: what guest GUEST wrote is in its LUN's file.  A
# refused login shows only on this side: say so.
srp_target_check() {
	lio_target_check srp "$srp_img" "$1" "$(dmesg | grep -E 'ib_srpt: .*([Rr]eject|failed)' | tail -n 2 |
		sed 's/^\[ *[0-9.]*\] //' | tr '\n' ' ' | cut -c1-200)"
}

# srp_target_down: remove the TPG, its ACLs and LUNs, the port and the
# backstores, and unload ib_srpt and (when iSER is gone too) LIO.
srp_target_down() {
	local w t l
	for w in "$srp_cfs"/srpt/0x*; do
		[ -d "$w" ] || continue
		for t in "$w"/tpg_*; do
			[ -d "$t" ] || continue
			echo 0 >"$t/enable"
			for l in "$t"/acls/*/lun_*; do
				[ -d "$l" ] || continue
				rm "$l/map" && rmdir "$l" || return 1
			done
			for l in "$t"/acls/*; do
				[ -d "$l" ] && { rmdir "$l" || return 1; }
			done
			for l in "$t"/lun/lun_*; do
				[ -d "$l" ] || continue
				rm "$l/disk" && rmdir "$l" || return 1
			done
			rmdir "$t" || return 1
		done
		rmdir "$w" || return 1
	done
	lio_fileio_down 1 || return 1
	if [ -d "$srp_cfs/srpt" ]; then
		echo 0 >"$srp_cfs/srpt/discovery_auth/rdma_cm_port" && rmdir "$srp_cfs/srpt" || return 1
	fi
	umount "$srp_img" || return 1
	modprobe -r ib_srpt && lio_unload_core || return 1
	if [ -e /sys/module/ib_srpt ] || [ -e /sys/module/target_core_mod ]; then
		echo "srp_target_down: left loaded: $(lsmod | grep -oE '^(ib_srpt|target_core_[a-z]*|iscsi_target_mod)' |
			tr '\n' ' ')" >&2
		return 1
	fi
}

# srp_initiator_prepare: load ib_srp early in the boot (while the other
# guests are busy too) and publish our initiator port id for guest 1's ACL.
srp_initiator_prepare() {
	modprobe -a ib_srp sd_mod || return 1
	srp_iport_id >"$LAB_SHARED/srp-port-$LAB_ID"
}

# srp_host: the SCSI host number of ib_srp's login over our RDMA device
# (its srp_remote_ports entry is port-HOST:1), or 1 if there is none.
srp_host() {
	local h
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/local_ib_device" 2>/dev/null)" = "$(lab_rdma_dev)" ] || continue
		echo "${h##*/host}"
		return 0
	done
	return 1
}

# srp_disk HOST: print /dev/sdX of SCSI host HOST's LUN 0 if its block
# device exists (else 1); 3 if the host has other disks too (our ACL maps
# one LUN, the other guest's is not ours).
srp_disk() {
	local d all
	for d in "/sys/class/scsi_host/host$1/device/target$1:"*/"$1:"*:0/block/sd*; do
		[ -b "/dev/${d##*/}" ] || continue
		all=("/sys/class/scsi_host/host$1/device/target$1:"*/*/block/*)
		if [ ${#all[@]} -ne 1 ]; then
			echo "srp_disk: host $1 has ${#all[@]} disks: ${all[*]##*/}" >&2
			return 3
		fi
		echo "/dev/${d##*/}"
		return 0
	done
	return 1
}
# srp_wait_disk HOST: srp_disk, waiting up to 30 s for the disk.
srp_wait_disk() { lab_wait_until 30 srp_disk "$1"; }

# srp_klog: the initiator's last SRP kernel messages, for a FAIL reason.
srp_klog() {
	local l
	l=$(dmesg | grep -E 'ib_srp|scsi host|srp' | tail -n 3 | sed 's/^\[ *[0-9.]*\] //' |
		tr '\n' ' ' | cut -c1-300)
	echo "kernel: ${l:-nothing from ib_srp}"
}

# srp_errors: ib_srp's error and warning messages (dmesg levels err and
# warn), one a line.
srp_errors() {
	dmesg -l err,warn | grep -E 'ib_srp|srp'
}

# srp_initiator_check MIB: log in to guest 1's ib_srpt through the RDMA
# CM, find the new disk by its SCSI host, fio with crc32c verification
# (random writes of 4 KiB..1 MiB, MIB MiB at offset MIB MiB), a random
# pattern of MIB MiB written with O_DIRECT at offset 0 and read back with
# O_DIRECT (guest 1 compares it with its LUN's file: srp_target_check), log
# out and wait for the SCSI host to go.  ib_srp must not have logged an
# error meanwhile: a command it fails to map (an ib_map_mr_sg() error,
# "Failed to map data") goes back to the SCSI midlayer, whose retry hides
# it from fio.
srp_initiator_check() {
	local mib=$1 tag=g$LAB_ID id rdev host dev t opts nerr
	local src=$LAB_SHARED/srp-$LAB_ID.src
	rdev=$(lab_rdma_dev)
	t=$SECONDS
	nerr=$(srp_errors | wc -l)
	if ! id=$(cat "$LAB_SHARED/srp-target-id" 2>/dev/null); then
		lab_fail "srp/$tag/login" "guest 1 published no target id (srp/target-up failed?)"
		return 1
	fi
	opts="id_ext=$id,ioc_guid=$id,dest=$srp_ip:$srp_port,initiator_ext=$(printf '%016x' "$LAB_ID")"
	# The same reason: give the target time on a slow kernel (swiwarp's
	# mpa_timeout_ms; upstream siw's is fixed).
	if [ "${LAB_SLOWDOWN:-1}" -gt 1 ] && [ -w /sys/module/swiwarp/parameters/mpa_timeout_ms ]; then
		echo $((10000 * LAB_SLOWDOWN)) >/sys/module/swiwarp/parameters/mpa_timeout_ms
	fi
	if ! echo "$opts" >"/sys/class/infiniband_srp/srp-$rdev-1/add_target"; then
		lab_fail "srp/$tag/login" "add_target $opts refused; $(srp_klog)"
		return 1
	fi
	if ! host=$(srp_host) || ! dev=$(srp_wait_disk "$host" 2>"$LAB_OUT/srp-disk.err"); then
		lab_fail "srp/$tag/login" "logged in, but not one disk of ours (host ${host:-none}) $(cat "$LAB_OUT/srp-disk.err"); $(srp_klog)"
		return 1
	fi
	lab_pass "srp/$tag/login"
	echo "srp $tag: logged in ($dev, SCSI host $host) in $((SECONDS - t)) s"
	disk_write_checks "srp/$tag" "$dev" "$mib" "$src"
	disk_read_check "srp/$tag" "$dev" "$mib" "$src" "$(srp_klog)"
	lab_check "srp/$tag/logout" srp_logout "$host"
	if [ "$(srp_errors | wc -l)" -eq "$nerr" ]; then
		lab_pass "srp/$tag/no-errors"
	else
		lab_fail "srp/$tag/no-errors" "$(srp_errors | tail -n +$((nerr + 1)) | sed 's/^\[ *[0-9.]*\] //' |
			sort | uniq -c | tr '\n' ' ' | cut -c1-200)"
	fi
}

# srp_logout HOST: delete the SRP remote port of SCSI host HOST and wait
# (up to 30 s) until the host is gone.
srp_logout() {
	echo 1 >"/sys/class/srp_remote_ports/port-$1:1/delete" || return 1
	lab_wait_until 30 test ! -e "/sys/class/scsi_host/host$1" && return 0
	echo "srp_logout: SCSI host $1 still there after 30 s" >&2
	return 1
}

# srp_initiator_down: unload the initiator; nothing of it may stay.
srp_initiator_down() {
	modprobe -r ib_srp || return 1
	[ -e /sys/module/scsi_transport_srp ] && { modprobe -r scsi_transport_srp || return 1; }
	if [ -e /sys/module/ib_srp ] || [ -e /sys/module/scsi_transport_srp ]; then
		echo "srp_initiator_down: ib_srp or scsi_transport_srp still loaded" >&2
		return 1
	fi
}
