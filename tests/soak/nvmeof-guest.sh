#!/bin/bash
# make soak's NVMe over Fabrics part (issue 14): a long fio verify run over
# swiwarp between two lab guests.  Guest 1 exports a memory-backed null_blk
# (whole GiB) with nvmet-rdma on port 4420; guest 2 connects with nvme-rdma
# (4 I/O queues) and runs SOAK_NVMEOF_PASSES fio jobs (default 2) over its
# first SOAK_NVMEOF_MIB MiB (default 1024), each writing every block with
# a crc32c header (RDMA Reads issued by the target) and then reading every
# block back and checking it (RDMA Writes from the target).  With the
# defaults that is 2 GiB in each direction: a sequential pass (128 KiB
# blocks) and a random one (4 KiB to 1 MiB).  Then a disconnect, the
# target taken down, every module unloaded; the lab's dmesg scan fails the
# boot on any kernel warning.
# Host side: tests/soak/run.sh.  Results: soak.nvmeof.*.
# shellcheck source=tests/lab/lib.sh
source "$LAB_TOP/tests/lab/lib.sh"
work=$LAB_OUT/nvmeof-soak
mkdir -p "$work"
MB=${SOAK_NVMEOF_MIB:-1024}
passes=${SOAK_NVMEOF_PASSES:-2}
gib=$(((MB + 1023) / 1024))
# shellcheck source=tests/ulp/nvmeof-lib.sh
source "$LAB_TOP/tests/ulp/nvmeof-lib.sh"
p=soak.nvmeof

if ! lab_load_swiwarp; then
	lab_fail "$p.load-g$LAB_ID" "lab_load_swiwarp failed"
	lab_barrier target 300
	lab_finish
fi
modprobe nvme_core multipath=N
lab_check "$p.modprobe-g$LAB_ID" modprobe -a nvme-rdma nvmet-rdma
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config

if [ "$LAB_ID" = 1 ]; then
	lab_check "$p.null_blk" modprobe null_blk nr_devices=1 memory_backed=1 gb="$gib" bs=4096
	lab_check "$p.target-up" target_up soak /dev/nullb0
fi
lab_barrier target 300 || lab_fail "$p.barrier-target-g$LAB_ID" "$LAB_BARRIER_WHY"

if [ "$LAB_ID" = 2 ] && connect soak 1 soak 4; then
	# A pass moves MB MiB each way; the bound allows 1 MiB/s of guest
	# clock, far below what TCG manages, so only a hang hits it.
	export FIO_TIMEOUT=$((MB * 2 + 300))
	for i in $(seq "$passes"); do
		t=$SECONDS
		if [ $((i % 2)) = 1 ]; then
			name=$p/pass$i-seq-128k
			fio_verify "$name" "/dev/${ctrl}n1" write --bs=128k --randseed="$i"
		else
			name=$p/pass$i-rand-4k-1m
			fio_verify "$name" "/dev/${ctrl}n1" randwrite --bsrange=4k-1m --randseed="$i"
		fi
		# What fio moved each way, from its run-status lines ("WRITE: bw=...,
		# io=1024MiB (1074MB), ..."): at least 99 % of the namespace (a
		# random pass with mixed block sizes may leave its tail short).
		log=$work/${name//\//-}.log
		for dir in WRITE READ; do
			io=$(sed -nE "s/^ *$dir: bw=.* io=([0-9.]+)([KMGT])iB .*/\1 \2/p" "$log" | head -n 1 |
				awk '{ f = ($2 == "K") ? 1 / 1024 : ($2 == "M") ? 1 : ($2 == "G") ? 1024 : 1048576
				       printf "%d", $1 * f }')
			echo "soak.nvmeof pass $i: $dir ${io:-?} MiB"
			[ "${io:-0}" -ge $((MB * 99 / 100)) ] ||
				lab_fail "$p/pass$i-$dir-bytes" "fio moved ${io:-?} MiB, want $MB"
		done
		echo "soak.nvmeof pass $i took $((SECONDS - t)) s"
	done
	disconnect soak soak
fi
lab_barrier finished $((MB * 2 * passes + 600)) || lab_fail "$p.barrier-finished-g$LAB_ID" "$LAB_BARRIER_WHY"

lab_check "$p.unload-g$LAB_ID" nvmeof_unload swiwarp
lab_finish
