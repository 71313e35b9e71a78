# shellcheck shell=bash
# NFS over RDMA for the ULP boot of tests/suites/66-ulp-nvmeof.sh (issue
# 14): the kernel's NFS server (nfsd with svcrdma's RDMA listener) on one
# guest, NFS v4.2 and v3 clients over xprtrdma on others, Debian's
# nfs-utils.  Sourced by tests/ulp/nvmeof-guest.sh after tests/lab/lib.sh.
# Result names: nfsrdma/CLIENT/VERSION/CHECK.
#
# Each client mount writes one large file (NFS_MB MiB plus an odd tail, so
# the last RPC is not page-sized) and a tree of small files of odd sizes,
# remounts (so the reads go over the wire, not to the page cache), reads
# everything back and compares; the server then checks what landed in its
# export the same way.
#
# Why fsid=0 and a 10 s grace period: a v4 mount needs no mountd or statd
# round trips, the pseudo root is the export itself, and a fresh server
# refuses OPENs for its whole grace period (90 s by default); the servers
# start at the beginning of the boot so the grace period is long over when
# the clients mount.  v3 mounts use nolock (no statd/lockd in a guest
# without systemd) and ask mountd over TCP for the export's file handle;
# the data still goes over RDMA.

nfs_export=/run/nfs-export
nfs_port=20049 # the IANA port for NFS over RDMA
nfs_small_files=40

# nfs_server_up MIB: export a tmpfs of MIB MiB over RDMA on port 20049,
# NFS v3 and v4.
nfs_server_up() {
	modprobe -a nfsd rpcrdma || return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	mkdir -p "$nfs_export" /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery
	mount -t tmpfs -o "size=${1}m" nfs-export "$nfs_export" || return 1
	echo "$nfs_export *(rw,no_root_squash,fsid=0,insecure,no_subtree_check)" >/etc/exports
	rpcbind -w && exportfs -ra && rpc.mountd || return 1
	echo 10 >/proc/fs/nfsd/nfsv4leasetime && echo 10 >/proc/fs/nfsd/nfsv4gracetime || return 1
	# 1 MiB RPCs: nfsd sizes its default by the machine's memory, 256 KiB
	# in a 2 GiB guest, and each RPC is a round trip of its own under TCG.
	# xprtrdma carries 1 MiB (256 pages, the device's fast-registration
	# limit).  Only writable before nfsd starts.
	echo 1048576 >/proc/fs/nfsd/max_block_size || return 1
	rpc.nfsd 8 || return 1
	echo "rdma $nfs_port" >/proc/fs/nfsd/portlist || return 1
	lab_wait_listen "$nfs_port" 30
}

# nfs_client_prepare: load the client's modules early, while the server
# (loading nfsd) and the other guests are busy too: loading them at mount
# time took 8-9 s of the NFS phase under TCG.
nfs_client_prepare() {
	modprobe -a rpcrdma nfsv4 nfsv3
}

# nfs_big_stream MIB: the large file's bytes on stdout, the same in every
# guest: MIB blocks of 1 MiB, each a 16-byte header with its number and
# the shared random block ($LAB_SHARED/nfs-block, made by guest 1 at boot),
# then an odd tail of 4321 bytes, so the last RPC is not page-sized.  A
# block written to the wrong place, a torn or a stale page all differ from
# it.  Streamed, not stored: making 256 MiB from /dev/urandom in a TCG
# guest took 3 minutes, and nobody needs the whole file in memory.  One
# python3 process, not a shell loop: under TCG every exec costs ~0.1 s, and
# a printf + head per block streamed 6 MiB/s, half the NFS write rate it
# was meant to feed; python3 streams 256 MiB in ~2 s.
nfs_big_stream() {
	python3 -c '
import sys
block = open(sys.argv[1], "rb").read(1048576)
out = sys.stdout.buffer
for i in range(int(sys.argv[2])):
    out.write(b"nfs-block %06d" % i + block[:1048576 - 16])
out.write(block[:4321])
' "$LAB_SHARED/nfs-block" "$1"
}

# nfs_block_make: guest 1 makes the random block nfs_big_stream copies.
nfs_block_make() {
	head -c 1048576 /dev/urandom >"$LAB_SHARED/nfs-block.tmp" &&
		mv "$LAB_SHARED/nfs-block.tmp" "$LAB_SHARED/nfs-block"
}

# nfs_make_small DIR: nfs_small_files files of 1 to 65541 bytes in DIR,
# their checksums in DIR.sums.
nfs_make_small() {
	local dir=$1 i
	mkdir -p "$dir" || return 1
	for ((i = 1; i <= nfs_small_files; i++)); do
		head -c $((RANDOM * 2 + i % 7 + 1)) /dev/urandom >"$dir/f$i" || return 1
	done
	(cd "$dir" && sha256sum f*) >"$dir.sums"
}

# nfs_mount VERS SERVER MNT LOG: mount SERVER's export over RDMA.
nfs_mount() {
	local vers=$1 server=$2 mnt=$3 log=$4 opts="rdma,port=$nfs_port,vers=$1" path=/
	# v4: the export is the pseudo root (fsid=0); v3: its real path, no NLM
	[ "$vers" = 3 ] && opts+=",nolock,mountproto=tcp" path=$nfs_export
	timeout 120 mount -t nfs -o "$opts" "$server:$path" "$mnt" >"$log" 2>&1
}

# nfs_client_check TAG VERS SERVER MIB: mount SERVER's export with NFS
# version VERS over RDMA, write the large file (nfs_big_stream MIB) and a
# tree of small files into ID/ there (ID: TAG with "-" for "/"), remount,
# read everything back and compare.  The small files' checksums go to
# $LAB_SHARED/nfs-ID.sums for the server's own comparison
# (nfs_server_check).  Results nfsrdma/TAG/CHECK.
nfs_client_check() {
	local tag=$1 vers=$2 server=$3 mib=$4 id=${1//\//-} t t_big n=nfsrdma/$1
	local mnt=/mnt/nfs-$id small=/tmp/nfs-$id log=$LAB_OUT/nfs-$id-mount.log
	mkdir -p "$mnt"
	if ! nfs_make_small "$small"; then
		lab_fail "$n/data" "could not make the small files in /tmp"
		return 1
	fi
	t=$SECONDS
	if ! nfs_mount "$vers" "$server" "$mnt" "$log"; then
		lab_fail "$n/mount" "$(tr '\n' ' ' <"$log" | cut -c1-160) $(lab_klog)"
		return 1
	fi
	if [ "$vers" = 3 ]; then
		grep -qs " $mnt nfs .*vers=3.*proto=rdma" /proc/mounts
	else
		grep -qs " $mnt nfs4 .*vers=4.2.*proto=rdma" /proc/mounts
	fi || {
		lab_fail "$n/mount" "not an NFS v$vers mount over RDMA: $(grep " $mnt " /proc/mounts)"
		umount "$mnt"
		return 1
	}
	lab_pass "$n/mount"
	# rsize/wsize: the RPC payload xprtrdma settled on (the device's
	# fast-registration page list bounds it), the first thing to look at
	# when the bandwidth below surprises.
	echo "nfs $tag: mounted in $((SECONDS - t)) s," \
		"$(awk -v m="$mnt" '$2 == m { print $4 }' /proc/mounts | tr , '\n' | grep -E '^[rw]size=' | paste -sd' ')"
	# Timed apart: the large file measures bandwidth, the small files
	# the round trips of LOOKUP/OPEN/CLOSE per file.
	t=$SECONDS
	if mkdir "$mnt/$id" && nfs_big_stream "$mib" | timeout 900 dd of="$mnt/$id/big" bs=1M iflag=fullblock status=none &&
		timeout 120 sync -f "$mnt/$id/big" && t_big=$((SECONDS - t)) &&
		timeout 600 cp -r "$small" "$mnt/$id/small" && timeout 120 sync -f "$mnt/$id/small"; then
		lab_pass "$n/write"
	else
		lab_fail "$n/write" "$(lab_klog)"
	fi
	echo "nfs $tag: wrote $mib MiB in ${t_big:-?} s, $nfs_small_files files in $((SECONDS - t - ${t_big:-0})) s"
	cp "$small.sums" "$LAB_SHARED/nfs-$id.sums"
	if ! umount "$mnt" || ! nfs_mount "$vers" "$server" "$mnt" "$log"; then
		lab_fail "$n/remount" "$(tr '\n' ' ' <"$log" | cut -c1-160)"
		return 1
	fi
	t=$SECONDS t_big=
	if nfs_big_stream "$mib" | timeout 900 cmp - "$mnt/$id/big" >"$LAB_OUT/nfs-$id-cmp.log" 2>&1 &&
		t_big=$((SECONDS - t)) &&
		(cd "$mnt/$id/small" && timeout 600 sha256sum --quiet -c "$small.sums") >>"$LAB_OUT/nfs-$id-cmp.log" 2>&1; then
		lab_pass "$n/read-compare"
	else
		lab_fail "$n/read-compare" "$(head -c 160 "$LAB_OUT/nfs-$id-cmp.log") $(lab_klog)"
	fi
	echo "nfs $tag: read back and compared $mib MiB in ${t_big:-?} s, $nfs_small_files files in $((SECONDS - t - ${t_big:-0})) s"
	lab_check "$n/umount" umount "$mnt"
	rm -rf "$small" "$small.sums"
}

# nfs_unload MODULE...: unload those of the modules that are loaded (a
# guest that is server and client unloads rpcrdma once).
nfs_unload() {
	local m
	for m in "$@"; do
		[ -e "/sys/module/$m" ] || continue
		modprobe -r "$m" || return 1
	done
}

# nfs_client_done: unload the client's modules (xprtrdma holds the RDMA
# device until then).
nfs_client_done() {
	nfs_unload nfsv4 nfsv3 rpcrdma
}

# nfs_server_check TAG MIB: the files a client wrote are on the server's
# export, byte for byte (the large file against nfs_big_stream, the small
# ones by the client's checksums); then they are removed to make room for
# the next client.
nfs_server_check() {
	local id=${1//\//-} mib=$2
	local sums=$LAB_SHARED/nfs-$id.sums dir=$nfs_export/$id
	if [ -s "$sums" ] && nfs_big_stream "$mib" | cmp -s - "$dir/big" &&
		(cd "$dir/small" && sha256sum --quiet -c "$sums") >/dev/null 2>&1; then
		lab_pass "nfsrdma/$1/on-server"
	else
		lab_fail "nfsrdma/$1/on-server" "the exported files differ from what the client wrote"
	fi
	rm -rf "${nfs_export:?}/$id"
}

# nfs_server_down: stop nfsd and its helpers, so RDMA can be unloaded.
nfs_server_down() {
	rpc.nfsd 0 || return 1
	exportfs -ua
	pkill -x rpc.mountd
	pkill -x rpcbind
	umount /proc/fs/nfsd && umount "$nfs_export" || return 1
	nfs_unload nfsd rpcrdma
}
