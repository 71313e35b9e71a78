# shellcheck shell=bash
# NFS over RDMA for the ULP boot of tests/suites/66-ulp-nvmeof.sh (issue
# 14): the kernel's NFS server (nfsd with svcrdma's RDMA listener) on one
# guest, NFS v4.2 clients over xprtrdma on the others, Debian's nfs-utils.
# Sourced by tests/ulp/nvmeof-guest.sh after tests/lab/lib.sh.  Result
# names: nfsrdma/CHECK.
#
# Why v4.2 only, fsid=0 and a 10 s grace period: a v4 mount needs no
# mountd or statd round trips (fewer daemons in a guest that has no
# systemd), the pseudo root is the export itself, and a fresh server
# refuses OPENs for its whole grace period (90 s by default); the server
# starts at the beginning of the boot so the grace period is long over when
# the clients mount.

nfs_export=/run/nfs-export
nfs_port=20049 # the IANA port for NFS over RDMA
nfs_server_ip=192.0.2.1 # guest 1 serves

# nfs_server_up: export a tmpfs over RDMA on port 20049.
nfs_server_up() {
	modprobe -a nfsd rpcrdma || return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	mkdir -p "$nfs_export" /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery
	mount -t tmpfs -o size=64m nfs-export "$nfs_export" || return 1
	echo "$nfs_export *(rw,no_root_squash,fsid=0,insecure,no_subtree_check)" >/etc/exports
	rpcbind -w && exportfs -ra && rpc.mountd -N 2 -N 3 || return 1
	echo 10 >/proc/fs/nfsd/nfsv4leasetime && echo 10 >/proc/fs/nfsd/nfsv4gracetime || return 1
	rpc.nfsd -N 3 4 || return 1
	echo "rdma $nfs_port" >/proc/fs/nfsd/portlist || return 1
	lab_wait_listen "$nfs_port" 30
}

# nfs_client_prepare: load the client's modules early, while the server
# (loading nfsd) and the other guests are busy too: loading them at mount
# time took 8-9 s of the NFS phase under TCG.
nfs_client_prepare() {
	modprobe -a rpcrdma nfsv4
}

# nfs_client_check TAG MIB: mount the server's export over RDMA, write a
# file of MIB MiB (plus an odd tail, so the last RPC is not page-sized),
# remount (so the read goes over the wire, not to the page cache), read it
# back and compare.  The source stays in $LAB_SHARED/nfs-TAG.src for the
# server's own comparison (nfs_server_check).
nfs_client_check() {
	local tag=$1 mib=$2 mnt=/mnt/nfs-$1 src=$LAB_SHARED/nfs-$1.src t
	local opts="rdma,port=$nfs_port,vers=4.2" log=$LAB_OUT/nfs-$1-mount.log
	mkdir -p "$mnt"
	head -c $((mib * 1048576 + 4321)) /dev/urandom >"$src"
	t=$SECONDS
	if ! timeout 120 mount -t nfs -o "$opts" "$nfs_server_ip:/" "$mnt" >"$log" 2>&1; then
		lab_fail "nfsrdma/$tag/mount" "$(tr '\n' ' ' <"$log" | cut -c1-160) $(lab_klog)"
		return 1
	fi
	lab_pass "nfsrdma/$tag/mount"
	echo "nfs $tag: mounted in $((SECONDS - t)) s"
	t=$SECONDS
	if timeout 300 cp "$src" "$mnt/$tag" && timeout 120 sync -f "$mnt/$tag"; then
		lab_pass "nfsrdma/$tag/write"
	else
		lab_fail "nfsrdma/$tag/write" "$(lab_klog)"
	fi
	echo "nfs $tag: wrote $mib MiB in $((SECONDS - t)) s"
	if ! umount "$mnt" || ! timeout 120 mount -t nfs -o "$opts" "$nfs_server_ip:/" "$mnt" >"$log" 2>&1; then
		lab_fail "nfsrdma/$tag/remount" "$(tr '\n' ' ' <"$log" | cut -c1-160)"
		return 1
	fi
	t=$SECONDS
	if timeout 300 cmp "$src" "$mnt/$tag"; then
		lab_pass "nfsrdma/$tag/read-compare"
	else
		lab_fail "nfsrdma/$tag/read-compare" "$(lab_klog)"
	fi
	echo "nfs $tag: read back and compared in $((SECONDS - t)) s"
	lab_check "nfsrdma/$tag/umount" umount "$mnt"
	modprobe -r nfsv4 rpcrdma
}

# nfs_server_check TAG: the file a client wrote is on the server's export,
# byte for byte.
nfs_server_check() {
	if cmp "$LAB_SHARED/nfs-$1.src" "$nfs_export/$1"; then
		lab_pass "nfsrdma/$1/on-server"
	else
		lab_fail "nfsrdma/$1/on-server" "the exported file differs from what the client wrote"
	fi
}

# nfs_server_down: stop nfsd and its helpers, so RDMA can be unloaded.
nfs_server_down() {
	rpc.nfsd 0 || return 1
	exportfs -ua
	pkill -x rpc.mountd
	pkill -x rpcbind
	umount /proc/fs/nfsd && umount "$nfs_export" || return 1
	modprobe -r nfsd rpcrdma
}
