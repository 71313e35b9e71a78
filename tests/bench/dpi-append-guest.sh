#!/bin/bash
# Guest side of tests/bench/dpi-append.sh.  Guest 1 is the owner: it hosts
# the DPI buffer (`dpi cat --discard`, the consumer) and the ib_write_bw
# servers.  Guests 2..N are the appenders: with k appenders, guests 2..k+1
# each run one `dpi bench` (or one ib_write_bw -R client) at the same time.
#
# For every (k, chunk) both kinds run REPS times, alternating which goes
# first (A/B, B/A, ...), so a change in host load hits both alike.
#
# Timing: TCG guest clocks drift and disagree between guests, so every run
# is timed on the HOST clock: each appender guest writes a stamp file into
# the shared 9p directory right before and right after its run, and the host
# takes the stamps' modification times (first start .. last end).  Both kinds
# include process start and connection setup (for DPI also the critical-size
# measurement and the join), so the host ratio is conservative for DPI; the
# in-guest numbers each tool prints (setup excluded) are kept too.
# Segments are 4 MiB + 8 KiB, so 4 x (1 MiB + 8-byte header) fit in one.
source "$LAB_TOP/tests/lab/lib.sh"
drv=${1:-siw}
bin=${DPI_BIN:-$BUILD/userspace/dpi}
chunks=${DPI_BENCH_CHUNKS:-1024 4096 16384 65536 262144 1048576}
appenders=${DPI_BENCH_APPENDERS:-1 2 3}
bytes=${DPI_BENCH_BYTES:-33554432}  # per appender and run
max_ops=${DPI_BENCH_MAX_OPS:-8192}  # fewer bytes for small chunks
reps=${DPI_BENCH_REPS:-2}
# Upstream siw sometimes hangs a fresh connection (the passive-side race in
# Documentation/lab.md); ib_write_bw has no retry, so every run is bounded
# (guest seconds; TCG guest clocks tend to run fast) and a run that hits the
# bound is recorded as failed (exit 124) instead of stalling the boot.
tmo=${DPI_BENCH_RUN_TIMEOUT:-300}
bar() { lab_barrier "$1" 1000000; }

"lab_load_$drv" || {
	echo "load $drv failed" >"$LAB_SHARED/load-failed.$LAB_ID"
	exit 1
}
dev=$(lab_rdma_dev)
bar loaded
stamp() { echo "$2" >"$LAB_SHARED/ts.$1"; }

port=7600
# run KIND K CHUNK REP
run() {
	local kind=$1 k=$2 size=$3 rep=$4 n b j pids tag
	n=$((bytes / size))
	[ "$n" -gt "$max_ops" ] && n=$max_ops
	b=$((n * size))
	tag=$kind.$k.$size.$rep
	port=$((port + 10))
	if [ "$LAB_ID" = 1 ]; then
		pids=()
		if [ "$kind" = ib_write_bw ]; then
			for j in $(seq "$k"); do
				timeout $((tmo + 60)) ib_write_bw -R -F -d "$dev" -s "$size" -n "$n" -p $((port + j)) \
					>"$LAB_OUT/srv.$tag.$j" 2>&1 &
				pids+=($!)
			done
			sleep 3
		else
			printf 'node 0 192.0.2.1:%s\n' $port >/tmp/b.spec
			DPI_CLUSTER=/tmp/b.spec timeout $((tmo + 60)) "$bin/dpi" --id 0 cat b --create --segment-size 4202496 --segments 8 \
				--sources "$k" --discard --wait-ms 100000000 2>"$LAB_OUT/cat.$tag" &
			pids+=($!)
			for _ in $(seq 100000); do grep -q 'node 0 up' "$LAB_OUT/cat.$tag" && break; sleep 0.2; done
		fi
		bar "$tag"
		wait "${pids[@]}"
		bar "$tag.done"
		return
	fi
	bar "$tag"
	j=$((LAB_ID - 1))
	if [ "$j" -le "$k" ]; then
		sleep 1
		stamp "$tag.g$LAB_ID.start" "$b"
		if [ "$kind" = ib_write_bw ]; then
			timeout "$tmo" ib_write_bw -R -F -d "$dev" -s "$size" -n "$n" -p $((port + j)) 192.0.2.1 \
				>"$LAB_OUT/out.$tag" 2>&1
		else
			printf 'node 0 192.0.2.1:%s\n' $port >/tmp/b.spec
			DPI_CLUSTER=/tmp/b.spec timeout "$tmo" "$bin/dpi" bench b --appenders 1 --chunk "$size" --bytes "$b" \
				>"$LAB_OUT/out.$tag" 2>&1
		fi
		stamp "$tag.g$LAB_ID.end" "$?"
	fi
	bar "$tag.done"
}

for k in $appenders; do
	[ "$k" -lt "$LAB_N" ] || continue
	for size in $chunks; do
		for rep in $(seq 0 $((reps - 1))); do
			if [ $((rep % 2)) = 0 ]; then
				run ib_write_bw "$k" "$size" "$rep"
				run dpi_append "$k" "$size" "$rep"
			else
				run dpi_append "$k" "$size" "$rep"
				run ib_write_bw "$k" "$size" "$rep"
			fi
		done
	done
done
exit 0
