#!/bin/bash
# Guest side of tests/bench/dpi-append.sh.  Guest 1 is the owner: it hosts
# the DPI buffer (`dpi cat --discard`, the consumer) and the ib_write_bw
# servers.  Guests 2..N are the appenders: with k appenders, guests 2..k+1
# each run one `dpi bench` (or one ib_write_bw -R client) at the same time.
#
# For every (k, chunk) every kind runs REPS times, the order reversed on
# every other rep (A/B, B/A, ...), so a change in host load hits all alike.
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
# Kinds: dpi_append and ib_write_bw (perftest's default, which busy-polls
# its CQ).  In a 1-vCPU TCG guest a busy-polling process takes CPU from the
# siw/swiwarp kernel thread that does the sending; an event-driven baseline
# (ib_write_bw -e, kind ib_write_bw_e) would be fairer, but perftest 4.5
# refuses it: "Events feature not available on WRITE verb".
# dpi_append_shared: the same DPI_Append run into a buffer created with
# --append-mode shared (fetch-and-add reservations in one shared log,
# Documentation/dpi.md); where the devices lack atomics it falls back to
# rings (the run's JSON says shared_fallbacks).
kinds=${DPI_BENCH_KINDS:-ib_write_bw dpi_append}
# Upstream siw sometimes hangs a fresh connection (the passive-side race in
# Documentation/lab.md); ib_write_bw has no retry, so every run is bounded
# (guest seconds: TCG guest clocks ran up to 5x fast on the loaded host, a
# 300 s bound fired after 55 s) and a run that hits the
# bound is recorded as failed (exit 124) instead of stalling the boot.
tmo=${DPI_BENCH_RUN_TIMEOUT:-1800}
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
	local kind=$1 k=$2 size=$3 rep=$4 n b j pids tag r ev=
	[ "$kind" = ib_write_bw_e ] && ev=1
	n=$((bytes / size))
	[ "$n" -gt "$max_ops" ] && n=$max_ops
	b=$((n * size))
	tag=$kind.$k.$size.$rep
	port=$((port + 10))
	if [ "$LAB_ID" = 1 ]; then
		pids=()
		if [[ $kind != dpi_append* ]]; then
			for j in $(seq "$k"); do
				timeout $((tmo + 60)) ib_write_bw ${ev:+-e} -R -F -d "$dev" -s "$size" -n "$n" -p $((port + j)) \
					>"$LAB_OUT/srv.$tag.$j" 2>&1 &
				pids+=($!)
			done
			sleep 3
		else
			printf 'node 0 192.0.2.1:%s\n' $port >/tmp/b.spec
			mode=rings
			[ "$kind" = dpi_append_shared ] && mode=shared
			DPI_CLUSTER=/tmp/b.spec timeout $((tmo + 60)) "$bin/dpi" --id 0 cat b --create --segment-size 4202496 --segments 8 \
				--append-mode $mode --sources "$k" --discard --wait-ms 100000000 2>"$LAB_OUT/cat.$tag" &
			pids+=($!)
			lab_wait_output "$LAB_OUT/cat.$tag" 'node 0 up' $! 300
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
		if [[ $kind != dpi_append* ]]; then
			# The servers may not listen yet (guest 1 sleeps 3 guest seconds,
			# and guest clocks run fast): on iWARP a connect to a closed port
			# comes back as RDMA_CM_EVENT_REJECTED.  Retry that, restarting
			# the clock.
			for _ in 1 2 3 4 5; do
				timeout "$tmo" ib_write_bw ${ev:+-e} -R -F -d "$dev" -s "$size" -n "$n" -p $((port + j)) 192.0.2.1 \
					>"$LAB_OUT/out.$tag" 2>&1
				r=$?
				grep -q 'Unable to init the socket connection' "$LAB_OUT/out.$tag" || break
				sleep 2
				stamp "$tag.g$LAB_ID.start" "$b"
			done
			(exit $r)
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
			# A/B: the kinds in order on even reps, reversed on odd ones
			order=$kinds
			[ $((rep % 2)) = 1 ] && order=$(echo "$kinds" | tr ' ' '\n' | tac | tr '\n' ' ')
			for kind in $order; do
				run "$kind" "$k" "$size" "$rep"
			done
		done
	done
done
exit 0
