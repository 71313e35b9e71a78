#!/bin/bash
# Guest side of tests/dissector/capture-ulp.sh: the kernel's own RDMA ULPs
# over swiwarp, each a short exchange on its IANA port, so the host can cut
# the link capture into one golden per ULP (issue 14, item 6).  Guest 1 is
# the target/server, guest 2 the host/client; MPA rev 2, CRC on (the
# module's defaults).
#   port 4420   NVMe-oF: nvme connect with one I/O queue, one 4 KiB write
#               (O_DIRECT) at LBA 1280 (5 MiB; null_blk's 4096-byte LBAs)
#               of a known pattern, the same 4 KiB read back O_DIRECT and
#               compared, nvme disconnect
#   port 20049  NFS v4.2 over RDMA: mount, one 1 KiB file of another known
#               pattern written and read back O_DIRECT (so both go over
#               the wire, not to the page cache), compared; then a 16 KiB
#               file of a third pattern the same way; umount.  1 KiB is
#               below the 4 KiB inline threshold, so its WRITE and READ
#               reply carry their data inline in the Send; 16 KiB is above
#               it, so the client offers its WRITE data in a read chunk
#               (the server pulls it with RDMA Reads) and a write chunk
#               for the READ data (the server pushes it with RDMA Writes
#               before the reply's Send): the chunks the plugin hands to
#               Wireshark's rpcordma to stitch into the RPC messages
#               (Documentation/dissector.md, issue 14)
#   port 3260   iSER: LIO's iSER target with one 8 MiB fileio LUN,
#               open-iscsi's iSER initiator logs in, one 4 KiB O_DIRECT
#               write of a fourth pattern at 1 MiB (LBA 2048 in 512-byte
#               sectors), read back O_DIRECT and compared, logout.  The
#               write's 4 KiB go as immediate data in the command's Send
#               (no RDMA Read), the read's in an RDMA Write; commands and
#               responses in Sends
# The NFS server comes up at boot, before the NVMe exchange: a fresh nfsd
# refuses OPENs for its grace period (10 s, tests/ulp/nfsrdma.sh).
source "$LAB_TOP/tests/lab/lib.sh"
source "$LAB_TOP/tests/ulp/nfsrdma.sh"
source "$LAB_TOP/tests/ulp/iser.sh"
work=$LAB_OUT/cap
mkdir -p "$work"
# target_up, connect, disconnect (results nvmeof/capture/...)
source "$LAB_TOP/tests/ulp/nvmeof-lib.sh"
lba=1280

lab_load_swiwarp || { lab_fail "capture-ulp/load-g$LAB_ID" "lab_load_swiwarp"; exit 1; }
lab_pass "capture-ulp/load-g$LAB_ID"
# No native multipath: the namespace is then /dev/nvme0n1, a child of its
# controller, not a multipath head.
modprobe nvme_core multipath=N
if [ "$LAB_ID" = 1 ]; then
	modprobe nvmet-rdma || lab_fail "capture-ulp/modprobe-g1" nvmet-rdma
else
	modprobe nvme-rdma || lab_fail "capture-ulp/modprobe-g2" nvme-rdma
	nfs_client_prepare || lab_fail "capture-ulp/modprobe-g2" "rpcrdma/nfsv4"
	iser_initiator_prepare || lab_fail "capture-ulp/modprobe-g2" "ib_iser/iscsid"
fi
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config

# The namespace: a memory-backed null_blk (reads return what was
# written, unlike the default null_blk; and a block device avoids the
# overlay root's 1-byte LBAs that a file namespace gets,
# tests/ulp/nvmeof-guest.sh).
nvme_target_up() {
	modprobe null_blk nr_devices=1 memory_backed=1 gb=1 bs=4096 && target_up capture /dev/nullb0
}

if [ "$LAB_ID" = 1 ]; then
	lab_check capture-ulp/nvme-target-up nvme_target_up
	nfs_server_up 16 >"$work/nfs-server-up.log" 2>&1 ||
		lab_fail capture-ulp/nfs-server-up "$(tail -n 2 "$work/nfs-server-up.log" | tr '\n' ' ')"
	ISER_DISK_MB=8 lab_check capture-ulp/iser-target-up iser_target_up 2
fi
lab_barrier targets 300 || lab_fail "capture-ulp/barrier-targets-g$LAB_ID" "$LAB_BARRIER_WHY"

# pattern TEXT BYTES: BYTES bytes of TEXT repeated, one line each (the
# texts below make 32-byte lines, so 1, 4 and 16 KiB hold whole lines).
pattern() { yes "$1" | head -c "$2"; }

nvme_exchange() {
	local dev
	pattern "swiwarp nvme-of golden capture." 4096 >"$work/nvme-pattern"
	connect capture 1 capture 1 || return 1
	dev=/dev/${ctrl}n1
	lab_check capture-ulp/nvme-write dd if="$work/nvme-pattern" of="$dev" bs=4096 count=1 \
		seek=$lba oflag=direct status=none
	lab_check capture-ulp/nvme-read dd if="$dev" of="$work/nvme-read" bs=4096 count=1 \
		skip=$lba iflag=direct status=none
	lab_check capture-ulp/nvme-compare cmp "$work/nvme-pattern" "$work/nvme-read"
	disconnect capture capture
}

nfs_exchange() {
	local mnt=/mnt/nfs-capture
	mkdir -p "$mnt"
	pattern "swiwarp nfs/rdma golden capture" 1024 >"$work/nfs-pattern"
	if ! nfs_mount 4.2 192.0.2.1 "$mnt" "$work/nfs-mount.log"; then
		lab_fail capture-ulp/nfs-mount "$(tr '\n' ' ' <"$work/nfs-mount.log" | cut -c1-200)"
		return 1
	fi
	lab_pass capture-ulp/nfs-mount
	lab_check capture-ulp/nfs-write dd if="$work/nfs-pattern" of="$mnt/golden" bs=1024 count=1 \
		oflag=direct status=none
	lab_check capture-ulp/nfs-read dd if="$mnt/golden" of="$work/nfs-read" bs=1024 count=1 \
		iflag=direct status=none
	lab_check capture-ulp/nfs-compare cmp "$work/nfs-pattern" "$work/nfs-read"
	pattern "swiwarp nfs/rdma 16 KiB chunked" 16384 >"$work/nfs-pattern16"
	lab_check capture-ulp/nfs-write16 dd if="$work/nfs-pattern16" of="$mnt/golden16" \
		bs=16384 count=1 oflag=direct status=none
	lab_check capture-ulp/nfs-read16 dd if="$mnt/golden16" of="$work/nfs-read16" \
		bs=16384 count=1 iflag=direct status=none
	lab_check capture-ulp/nfs-compare16 cmp "$work/nfs-pattern16" "$work/nfs-read16"
	lab_check capture-ulp/nfs-umount umount "$mnt"
}

iser_exchange() {
	local iqn dev at=$((1024 * 1024))
	iqn=$(iser_iqn 2)
	pattern "swiwarp iser golden capture...." 4096 >"$work/iser-pattern"
	if ! dev=$(iser_login "$iqn" "$work/iser-login.log"); then
		lab_fail capture-ulp/iser-login "$(tr '\n' ' ' <"$work/iser-login.log" | cut -c1-200)"
		return 1
	fi
	lab_pass capture-ulp/iser-login
	lab_check capture-ulp/iser-write dd if="$work/iser-pattern" of="$dev" bs=4096 count=1 \
		seek=$((at / 4096)) oflag=direct status=none
	lab_check capture-ulp/iser-read dd if="$dev" of="$work/iser-read" bs=4096 count=1 \
		skip=$((at / 4096)) iflag=direct status=none
	lab_check capture-ulp/iser-compare cmp "$work/iser-pattern" "$work/iser-read"
	lab_check capture-ulp/iser-logout iser_logout "$iqn"
}

[ "$LAB_ID" = 2 ] && nvme_exchange
lab_barrier nvme-done 300 || lab_fail "capture-ulp/barrier-nvme-g$LAB_ID" "$LAB_BARRIER_WHY"
[ "$LAB_ID" = 2 ] && nfs_exchange
lab_barrier nfs-done 300 || lab_fail "capture-ulp/barrier-nfs-g$LAB_ID" "$LAB_BARRIER_WHY"
[ "$LAB_ID" = 2 ] && iser_exchange
lab_barrier iser-done 300 || lab_fail "capture-ulp/barrier-iser-g$LAB_ID" "$LAB_BARRIER_WHY"
lab_finish
