#!/bin/bash
# Guest side of tests/suites/66-ulp-nvmeof.sh: NVMe over Fabrics (the
# kernel's nvmet-rdma target and nvme-rdma host, Debian's nvme-cli and fio)
# over swiwarp and against upstream siw, in one three-guest boot:
#   g1  swiwarp, target "t1": namespace 1 a file, namespace 2 null_blk
#       (memory_backed=1)
#   g2  swiwarp, host
#   g3  upstream siw: target "t3" (file namespace) and host
# Phases (the guests meet at barriers):
#   ss   g2 -> g1  swiwarp <-> swiwarp: fio with crc32c verification on both
#                  namespaces, sequential and random, 4 KiB..1 MiB, iodepth
#                  32, two I/O queues; nvme reset during verified I/O;
#                  disconnect during I/O
#   siw-host  g3 -> g1  siw host, swiwarp target, at the same time as ss on
#                  other blocks of the same namespaces
#   siw-tgt   g2 -> g3  swiwarp host, siw target, after both
#   nfs  g2, g3 -> g1  NFS v4.2 and v3 over RDMA (tests/ulp/nfsrdma.sh):
#                  g1's nfsd (started at boot, so its grace period is over)
#                  serves the swiwarp (g2) and the siw (g3) client at once;
#                  each mount writes a large file and many small ones,
#                  reads them back over the wire and compares, and g1
#                  compares what landed in its export
#   nfs-siw  g2 -> g3  the same with upstream siw's nfsd (g3) serving the
#                  swiwarp client (g2)
#   iser g2, g3 -> g1  iSER (tests/ulp/iser.sh): LIO's ib_isert target on
#                  g1 (set up at boot), the swiwarp (g2) and the siw (g3)
#                  ib_iser initiator at once, each to its own target: fio
#                  verified, a pattern written, read back after a new login
#                  and compared, and compared by g1 in its backstore
#   srp  g2, g3 -> g1  SRP (tests/ulp/srp.sh): LIO's ib_srpt target on g1
#                  (set up while phase siw-tgt runs elsewhere), listening
#                  through the RDMA CM, the swiwarp (g2) and the siw (g3)
#                  ib_srp initiator at once, each to its own LUN: login,
#                  fio verified, a pattern written and read back, compared
#                  by g1 in the LUN's file, logout
#   kapi every guest, while it would wait anyway: the kernel verbs API test
#                  module (tests/ulp/kapi.sh) on its own device and address:
#                  g2 (swiwarp, 6.1) before the targets barrier, g3 (siw)
#                  after phase siw-host, g1 (swiwarp, 6.12) during phase
#                  siw-tgt
# Then every guest takes its targets down and unloads nvme-rdma, nvmet-rdma
# and its RDMA driver, and stops nfsd.  Result names: nvmeof/PHASE/CHECK,
# nfsrdma/CLIENT/CHECK, iser/gN/CHECK and srp/gN/CHECK (N the initiator's
# guest), kapi/gN-DRIVER/CASE.
# ULP_PHASES (default all) picks phase groups, comma-separated: nvme (ss,
# siw-host, siw-tgt), nfs (nfs, nfs-siw), iser, srp, kapi; what a group
# needs (targets, servers, initiator modules) is set up only for it.  The
# debug kernel's run of this suite is split by it (make check-debug), as
# the whole of it outlasts one lab boot's time limit there.
# NVMEOF_MB (default 2) is the size of most fio jobs in MiB (the 4 KiB
# jobs move half of it): the lab checks correctness under TCG, not speed.
# shellcheck source=tests/lab/lib.sh
source "$LAB_TOP/tests/lab/lib.sh"
# shellcheck source=tests/ulp/nvmeof-lib.sh
source "$LAB_TOP/tests/ulp/nvmeof-lib.sh"
# shellcheck source=tests/ulp/nfsrdma.sh
source "$LAB_TOP/tests/ulp/nfsrdma.sh"
# shellcheck source=tests/ulp/iser.sh
source "$LAB_TOP/tests/ulp/iser.sh"
# shellcheck source=tests/ulp/srp.sh
source "$LAB_TOP/tests/ulp/srp.sh"
# shellcheck source=tests/ulp/kapi.sh
source "$LAB_TOP/tests/ulp/kapi.sh"
work=$LAB_OUT/nvmeof
mkdir -p "$work"
MB=${NVMEOF_MB:-2}

drv=swiwarp
[ "$LAB_ID" = 3 ] && drv=siw

# phase_on GROUP: GROUP is one of the phase groups this run does.
phase_on() {
	case ",${ULP_PHASES:-all}," in
	*,all,* | *",$1,"*) return 0 ;;
	esac
	return 1
}

# ------------------------------------------------------------- devices
if [ $drv = siw ]; then lab_load_siw; else lab_load_swiwarp; fi
rc=$?
if [ $rc -ne 0 ]; then
	lab_fail "nvmeof/load-$drv-g$LAB_ID" "loader returned $rc"
	lab_barrier loaded 300
	lab_finish
fi
lab_pass "nvmeof/load-$drv-g$LAB_ID"
# Without multipath every namespace is a child of its controller, so a
# controller's block devices are easy to find.  The I/O and admin command
# timeouts (30 and 60 s) stretch by $LAB_SLOWDOWN like the keep-alive
# (nvmeof-lib.sh): on the 6.12 debug kernel a one-vCPU siw target took
# longer than 30 s for a queue of 128 KiB reads (keep-alive round trips of
# 6-12 s), and every recovery resubmitted and timed out the same reads
# again until fio saw EIO (session 36, Documentation/robustness.md).
modprobe nvme_core multipath=N io_timeout=$((30 * ${LAB_SLOWDOWN:-1})) \
	admin_timeout=$((60 * ${LAB_SLOWDOWN:-1}))
modprobe -a nvme-rdma nvmet-rdma || lab_fail "nvmeof/modprobe-g$LAB_ID" "nvme-rdma/nvmet-rdma"
if [ "$LAB_ID" != 1 ] && phase_on nfs && ! nfs_client_prepare; then
	lab_fail "nfsrdma/modprobe-g$LAB_ID" "rpcrdma/nfsv4"
fi
if [ "$LAB_ID" != 1 ] && phase_on iser && ! iser_initiator_prepare >"$work/iser-prepare.log" 2>&1; then
	lab_fail "iser/prepare-g$LAB_ID" "$(tail -n 2 "$work/iser-prepare.log" | tr '\n' ' ' | cut -c1-200)"
fi
if [ "$LAB_ID" != 1 ] && phase_on srp && ! srp_initiator_prepare >"$work/srp-prepare.log" 2>&1; then
	lab_fail "srp/prepare-g$LAB_ID" "$(tail -n 2 "$work/srp-prepare.log" | tr '\n' ' ' | cut -c1-200)"
fi
# configfs was mounted at boot only if the module was there already.
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config

# ------------------------------------------------------------- target
# target_up and target_down: tests/ulp/nvmeof-lib.sh.
# Namespace files live on a tmpfs of their own, not on the guest's overlay
# root: overlayfs leaves its inodes' i_blkbits at 0, nvmet exports a file
# with LBAs of 1 << i_blkbits bytes, and nvme-rdma gives a namespace with
# 1-byte LBAs capacity 0 ("zero sized block device" in fio).
img=/run/nvmeof-img
if [ "$LAB_ID" != 2 ]; then
	mkdir -p $img && mount -t tmpfs -o size=160m nvmeof-img $img
fi
if ! phase_on nvme; then
	: # no NVMe targets
elif [ "$LAB_ID" = 1 ]; then
	truncate -s 96M $img/t1-ns1.img
	lab_check nvmeof/t1-null_blk modprobe null_blk nr_devices=1 memory_backed=1 gb=1 bs=4096
	lab_check nvmeof/t1-target-up target_up t1 $img/t1-ns1.img /dev/nullb0
elif [ "$LAB_ID" = 3 ]; then
	truncate -s 64M $img/t3-ns1.img
	lab_check nvmeof/t3-target-up target_up t3 $img/t3-ns1.img
fi
# NFS servers on g1 (swiwarp) and g3 (siw) now: their grace periods run out
# during the NVMe phases.  g1's export holds two clients' data at once.
# The swiwarp client's large v4.2 file is 256 MiB, against swiwarp's nfsd
# and against siw's (issue 14 asks at least that much, both ways); the siw
# client's, which shares swiwarp's nfsd at the same time, 16 MiB, and every
# v3 file 4 MiB.  256 MiB takes about 2 minutes per mount under TCG
# (Documentation/ulp.md); more in one mount adds that much to make check.
# On the debug kernel (LAB_SLOWDOWN > 1) 2 and 1 MiB: it moved 16 MiB in
# 206-409 s per mount (session 31), and what it is run for is its checks
# of the kernel (KASAN, lockdep), not the volume.
if [ "${LAB_SLOWDOWN:-1}" -gt 1 ]; then
	NFS_MB=${NFS_MB:-2} NFS3_MB=${NFS3_MB:-1}
else
	NFS_MB=${NFS_MB:-256} NFS3_MB=${NFS3_MB:-4}
fi
nfs_siw_mb=$((NFS_MB < 16 ? NFS_MB : 16))
nfs_up=0
if [ "$LAB_ID" != 2 ] && phase_on nfs; then
	if nfs_server_up $((2 * (NFS_MB > NFS3_MB ? NFS_MB : NFS3_MB) + 64)) >"$work/nfs-server-up.log" 2>&1; then
		nfs_up=1
		lab_pass "nfsrdma/server-up-g$LAB_ID"
	else
		lab_fail "nfsrdma/server-up-g$LAB_ID" "$(tail -n 3 "$work/nfs-server-up.log" | tr '\n' ' ' | cut -c1-200)"
	fi
fi
if [ "$LAB_ID" = 1 ]; then
	phase_on nfs && lab_check nfsrdma/block nfs_block_make
	# iSER targets for g2 (swiwarp) and g3 (siw), used after the NFS phase.
	phase_on iser && lab_check iser/target-up iser_target_up 2 3
fi
# g2 waits for g1's targets: its kernel verbs API cases meanwhile.
[ "$LAB_ID" = 2 ] && phase_on kapi && kapi_check "g2-$drv" "$drv"
lab_barrier targets 300 || lab_fail "nvmeof/barrier-targets-g$LAB_ID"

# ------------------------------------------------------------- host
# connect, fio_verify and disconnect: tests/ulp/nvmeof-lib.sh.

# disk_write_checks NAME DEV MIB SRC: what the iSER and SRP initiators do
# to their disk once logged in: fio_verify's random 4 KiB..1 MiB writes
# over MiB MIB..2*MIB, then MIB MiB of random data (kept in SRC) written
# O_DIRECT at offset 0, which the caller reads back its own way (iSER
# after a relogin) and the target compares with its LUN.  Checks NAME/...
disk_write_checks() {
	local name=$1 dev=$2 mib=$3 src=$4 t=$SECONDS
	fio_verify "$name/rand-4k-1m" "$dev" randwrite --bsrange=4k-1m --size="${mib}M" \
		--offset="${mib}M"
	echo "$name: fio in $((SECONDS - t)) s"
	head -c $((mib * 1048576)) /dev/urandom >"$src"
	lab_check "$name/write" dd if="$src" of="$dev" bs=1M oflag=direct status=none
}

# ulp_block_phase ULP BARRIER_S: one phase of a block-storage ULP whose
# script (tests/ulp/ULP.sh) defines ULP_initiator_check MB,
# ULP_target_check GUEST, ULP_target_down and ULP_initiator_down: the
# initiators (g2 swiwarp, g3 siw) at once against g1's target, then g1
# checks what each wrote, and every guest takes its side down.
ulp_block_phase() {
	local ulp=$1 mb=$2 wait=$3
	[ "$LAB_ID" != 1 ] && "${ulp}_initiator_check" "$mb"
	lab_barrier "phase-$ulp" "$wait" || lab_fail "nvmeof/barrier-$ulp-g$LAB_ID"
	if [ "$LAB_ID" = 1 ]; then
		"${ulp}_target_check" 2
		"${ulp}_target_check" 3
		lab_check "$ulp/target-down" "${ulp}_target_down"
	else
		lab_check "$ulp/initiator-down-g$LAB_ID" "${ulp}_initiator_down"
	fi
}

# disconnect PHASE: nvme disconnect and check the controller is gone.

# io_queues PHASE MIN: the controller runs at least MIN I/O queues.
io_queues() {
	local n
	n=$(dmesg | grep -o "$ctrl: creating [0-9]* I/O queues" | tail -n1 | grep -o '[0-9]* I/O' | cut -d' ' -f1)
	if [ "${n:-0}" -ge "$2" ]; then
		lab_pass "nvmeof/$1/io-queues"
	else
		lab_fail "nvmeof/$1/io-queues" "creating ${n:-?} I/O queues, want >= $2"
	fi
}

# ---- phase ss: swiwarp host (g2) -> swiwarp target (g1)
if [ "$LAB_ID" = 2 ] && phase_on nvme && connect ss 1 t1 4; then
	io_queues ss 2
	for ns in 1 2; do
		d=/dev/${ctrl}n$ns
		fio_verify "nvmeof/ss/ns$ns-seq-4k" "$d" write --bs=4k --size="$((MB * 512))k"
		fio_verify "nvmeof/ss/ns$ns-seq-1m" "$d" write --bs=1m
		fio_verify "nvmeof/ss/ns$ns-rand-4k-1m" "$d" randwrite --bsrange=4k-1m --numjobs=2 \
			--offset_increment="$((MB / 2))M" --size="$((MB / 2))M"
	done

	# nvme reset while verified I/O runs: requests are requeued over the
	# reconnected queues and every block still verifies.
	log=$work/ss-reset-fio.log
	before=$(writes_done "${ctrl}n1")
	timeout 600 fio --name=r --filename="/dev/${ctrl}n1" --allow_file_create=0 --rw=randwrite \
		--bsrange=4k-256k --size="${MB}M" --ioengine=libaio --direct=1 --iodepth=32 \
		--verify=crc32c --verify_fatal=1 --randrepeat=0 --rate=,4m >"$log" 2>&1 &
	pid=$!
	started=0
	wait_writes "${ctrl}n1" "$before" && started=1
	if timeout 120 nvme reset "/dev/$ctrl" >"$work/ss-reset.log" 2>&1; then
		lab_pass "nvmeof/ss/reset"
	else
		lab_fail "nvmeof/ss/reset" "$(tr '\n' ' ' <"$work/ss-reset.log")"
	fi
	wait $pid
	rc=$?
	if [ $started = 0 ]; then
		lab_fail "nvmeof/ss/reset-io-verified" "fio had written nothing when the reset came"
	elif [ $rc -eq 0 ] && ! grep -qiE 'verify: bad|err= *[1-9]' "$log"; then
		lab_pass "nvmeof/ss/reset-io-verified"
	else
		lab_fail "nvmeof/ss/reset-io-verified" "fio rc $rc: $(grep -iE -m2 'error|bad' "$log" | tr '\n' ' ' | cut -c1-200)"
	fi
	fio_verify "nvmeof/ss/after-reset" "/dev/${ctrl}n2" write --bs=128k

	# disconnect while I/O runs: fio may fail its I/O, but the disconnect
	# completes, the controller goes away and fio ends.
	before=$(writes_done "${ctrl}n2")
	timeout 300 fio --name=d --filename="/dev/${ctrl}n2" --allow_file_create=0 --rw=randwrite \
		--bs=64k --size="${MB}M" --ioengine=libaio --direct=1 --iodepth=32 --time_based \
		--runtime=120 >"$work/ss-disc-fio.log" 2>&1 &
	pid=$!
	started=0
	wait_writes "${ctrl}n2" "$before" && started=1
	disconnect ss t1
	t0=$SECONDS
	wait $pid
	rc=$?
	if [ $started = 0 ]; then
		lab_fail "nvmeof/ss/disconnect-io-ends" "fio had written nothing when the disconnect came"
	elif [ $rc -ne 124 ] && [ $((SECONDS - t0)) -lt 60 ]; then
		lab_pass "nvmeof/ss/disconnect-io-ends"
	else
		lab_fail "nvmeof/ss/disconnect-io-ends" "fio rc $rc after $((SECONDS - t0)) s"
	fi
fi

# ---- phase siw-host: upstream siw host (g3) -> swiwarp target (g1), while
# phase ss runs, on blocks that phase ss does not touch.
if [ "$LAB_ID" = 3 ] && phase_on nvme && connect siw-host 1 t1 2; then
	fio_verify "nvmeof/siw-host/ns1-seq-128k" "/dev/${ctrl}n1" write --bs=128k --offset=64M
	fio_verify "nvmeof/siw-host/ns2-rand-4k-1m" "/dev/${ctrl}n2" randwrite --bsrange=4k-1m \
		--offset=512M
	disconnect siw-host t1
fi
# g3 (siw) waits for phase ss to end: the kernel verbs API cases on siw.
[ "$LAB_ID" = 3 ] && phase_on kapi && kapi_check "g3-$drv" "$drv"
lab_barrier phase-ss 1800 || lab_fail "nvmeof/barrier-ss-g$LAB_ID"
# g1 has nothing to do in phase siw-tgt: its SRP target comes up now, next
# to the iSER targets (both LIO fabrics on one core), for phase srp.
# Then its kernel verbs API cases (swiwarp on 6.12).
if [ "$LAB_ID" = 1 ]; then
	phase_on srp && lab_check srp/target-up srp_target_up 2 3
	phase_on kapi && kapi_check "g1-$drv" "$drv"
fi

# ---- phase siw-tgt: swiwarp host (g2) -> upstream siw target (g3)
if [ "$LAB_ID" = 2 ] && phase_on nvme; then
	# siw's passive side loses an FPDU that arrives right after its MPA
	# Reply (tests/lab/README.md): delay what the active side sends.
	lab_delay_connect "${LAB_SIW_CLIENT_DELAY_MS:-100}" || lab_fail "nvmeof/siw-tgt/netem"
	if connect siw-tgt 3 t3 2; then
		fio_verify "nvmeof/siw-tgt/ns1-seq-128k" "/dev/${ctrl}n1" write --bs=128k
		fio_verify "nvmeof/siw-tgt/ns1-rand-4k-1m" "/dev/${ctrl}n1" randwrite --bsrange=4k-1m
		disconnect siw-tgt t3
	fi
fi
lab_barrier phase-siw-tgt 1200 || lab_fail "nvmeof/barrier-siw-tgt-g$LAB_ID"

# ---- phase nfs: the swiwarp (g2) and the siw (g3) client -> swiwarp nfsd
# (g1), v4.2 then v3; g1 checks each client's files after each version.
nfs_phase() { # VERS MIB
	local v=$1 mib=$2
	local siw_mib=$((mib < nfs_siw_mb ? mib : nfs_siw_mb))
	if [ "$LAB_ID" = 2 ]; then
		nfs_client_check "swiwarp-client/v$v" "$v" 192.0.2.1 "$mib"
	elif [ "$LAB_ID" = 3 ]; then
		nfs_client_check "siw-client/v$v" "$v" 192.0.2.1 "$siw_mib"
	fi
	lab_barrier "phase-nfs-v$v" 1200 || lab_fail "nvmeof/barrier-nfs-v$v-g$LAB_ID"
	if [ "$LAB_ID" = 1 ] && [ $nfs_up = 1 ]; then
		nfs_server_check "swiwarp-client/v$v" "$mib"
		nfs_server_check "siw-client/v$v" "$siw_mib"
	fi
}
nfs_phases() {
	[ "$LAB_ID" = 2 ] && lab_delay_connect 0 # phase siw-tgt's workaround; phase nfs talks to swiwarp
	nfs_phase 4.2 "$NFS_MB"
	nfs_phase 3 "$NFS3_MB"
	[ "$LAB_ID" = 1 ] && [ $nfs_up = 1 ] && lab_check "nfsrdma/server-down-g1" nfs_server_down

# ---- phase nfs-siw: the swiwarp client (g2) -> upstream siw's nfsd (g3)
	if [ "$LAB_ID" = 2 ]; then
		# siw is the passive side again: phase siw-tgt's workaround.  Without
		# it, the v4.2 mount once hung to its 120 s timeout with nothing in
		# either kernel log, and the v3 mount right after took 3 s (28 Nov).
		lab_delay_connect "${LAB_SIW_CLIENT_DELAY_MS:-100}" || lab_fail "nfsrdma/siw-server/netem"
		nfs_client_check "swiwarp-client-of-siw/v4.2" 4.2 192.0.2.3 "$NFS_MB"
		nfs_client_check "swiwarp-client-of-siw/v3" 3 192.0.2.3 "$NFS3_MB"
		lab_delay_connect 0
	fi
	lab_barrier phase-nfs-siw 1200 || lab_fail "nvmeof/barrier-nfs-siw-g$LAB_ID"
	if [ "$LAB_ID" = 3 ] && [ $nfs_up = 1 ]; then
		nfs_server_check "swiwarp-client-of-siw/v4.2" "$NFS_MB"
		nfs_server_check "swiwarp-client-of-siw/v3" "$NFS3_MB"
		lab_check "nfsrdma/server-down-g3" nfs_server_down
	fi
	[ "$LAB_ID" != 1 ] && lab_check "nfsrdma/client-done-g$LAB_ID" nfs_client_done
}
phase_on nfs && nfs_phases

# ---- phase iser: the swiwarp (g2) and the siw (g3) iSER initiator -> LIO's
# iSER target on swiwarp (g1), at the same time (tests/ulp/iser.sh)
phase_on iser && ulp_block_phase iser "${ISER_MB:-2}" 900

# ---- phase srp: the swiwarp (g2) and the siw (g3) SRP initiator -> ib_srpt
# on swiwarp (g1), at the same time (tests/ulp/srp.sh); g1 has taken its
# iSER targets down meanwhile, LIO's core stays for ib_srpt.
phase_on srp && ulp_block_phase srp "${SRP_MB:-2}" 600

# ------------------------------------------------------------- unload
lab_check "nvmeof/unload-g$LAB_ID" nvmeof_unload "$drv"
lab_finish
