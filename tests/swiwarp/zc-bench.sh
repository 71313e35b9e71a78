#!/bin/bash
# Zero-copy Send/Write A/B in one boot (2 swiwarp guests), not a suite:
#   tests/lab/lab run -n 2 --timeout 1800 -- tests/swiwarp/zc-bench.sh
# Guest 1 serves, guest 2 sends.  For each of ib_write_bw -R -s 65536,
# ib_write_bw -R -s 1048576 and ib_send_bw -R -s 65536 it runs
# zcopy_tx_min=0 (copied) and then 16384 (zero-copy) on the sender and
# prints bandwidth and the sender guest's busy CPU time (all CPUs, from
# /proc/stat) per GB.  Only the ratios mean something (TCG guests on a
# shared host).
source "$LAB_TOP/tests/lab/lib.sh"
me=g$LAB_ID
work=$LAB_OUT/zc-bench
mkdir -p "$work"
port=7600
lab_load_swiwarp eth0 swiwarp0 || { lab_fail "zc-bench/load-$me" "no swiwarp"; lab_finish; }
dev=$(lab_rdma_dev)
lab_barrier loaded 600

busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# one TAG TOOL SIZE ITERS ZMIN
one() {
	local tag=$1 tool=$2 size=$3 iters=$4 zmin=$5 b0 b1 bw
	local args=(-R -d "$dev" -n "$iters" -s "$size" -F --report_gbits)
	port=$((port + 1))
	lab_param zcopy_tx_min "$zmin"
	if [ "$LAB_ID" = 1 ]; then
		timeout 600 "$tool" "${args[@]}" -p $port >"$work/$tag-s.log" 2>&1 &
		lab_wait_listen $port 60
	fi
	lab_barrier "$tag-listen" 300
	if [ "$LAB_ID" = 2 ]; then
		b0=$(busy)
		timeout 600 "$tool" "${args[@]}" -p $port 192.0.2.1 >"$work/$tag-c.log" 2>&1
		b1=$(busy)
		bw=$(awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 5 { print $4 }' "$work/$tag-c.log")
		echo "$tag $tool -s $size zcopy_tx_min=$zmin: $bw Gb/s, sender busy $(((b1 - b0) * 10)) ms for $((size * iters / 1048576)) MiB"
		echo "$tag $bw $((b1 - b0)) $((size * iters))" >>"$work/results"
	else
		wait
	fi
	lab_barrier "$tag-done" 900
}

for r in 1 2; do
	one "w64k-copy-$r" ib_write_bw 65536 2000 0
	one "w64k-zc-$r" ib_write_bw 65536 2000 16384
	one "w1m-copy-$r" ib_write_bw 1048576 150 0
	one "w1m-zc-$r" ib_write_bw 1048576 150 16384
	one "s64k-copy-$r" ib_send_bw 65536 2000 0
	one "s64k-zc-$r" ib_send_bw 65536 2000 16384
done
if [ "$LAB_ID" = 2 ]; then
	echo "zero-copy counters: $(lab_hw_counters | grep '^zc_' | tr '\n' ' ')"
	# ratio zero-copy / copied per test, bandwidth and CPU ms per GiB
	awk '{ split($1, t, "-"); k = t[1]; m = t[2]; bw[k, m] += $2; cpu[k, m] += $3; by[k, m] += $4; keys[k] = 1 }
		END { for (k in keys) printf "%s: bandwidth zc/copy %.2f, sender CPU per byte zc/copy %.2f\n", k,
			bw[k, "zc"] / (bw[k, "copy"] ? bw[k, "copy"] : 1),
			(cpu[k, "zc"] / by[k, "zc"]) / ((cpu[k, "copy"] ? cpu[k, "copy"] : 1) / by[k, "copy"]) }' "$work/results"
	lab_pass "zc-bench/$me"
fi
lab_finish
