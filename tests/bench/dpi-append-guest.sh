#!/bin/bash
# Guest side of tests/bench/dpi-append.sh (2 guests).  Guest 1 = owner
# (`dpi cat --discard`) and ib_write_bw server; guest 2 = appenders and
# ib_write_bw client.  TCG guest clocks drift (and differ between guests), so
# every run is timed on the HOST clock: guest 2 writes a stamp file into the
# shared 9p directory right before and after each run, and the host reads the
# files' modification times.  Both kinds of run include process start and
# connection setup, so they are compared as like for like.
source "$LAB_TOP/tests/lab/lib.sh"
drv=${1:-siw}
bin=${DPI_BIN:-$BUILD/userspace/dpi}
chunks=${DPI_BENCH_CHUNKS:-4096 65536 1048576}
appenders=${DPI_BENCH_APPENDERS:-1 4}
bytes=${DPI_BENCH_BYTES:-67108864}
"lab_load_$drv" || exit 1
dev=$(lab_rdma_dev)
lab_barrier loaded 300 || exit 1
stamp() { echo "$2" >"$LAB_SHARED/ts.$1"; }
port=7600
for size in $chunks; do
	port=$((port + 1))
	n=$((bytes / size))
	if [ "$LAB_ID" = 1 ]; then
		ib_write_bw -R -d "$dev" -s "$size" -n "$n" -F -p $port >/tmp/bw.$size 2>&1 &
		pid=$!
		sleep 2
		lab_barrier "bw$size"
		wait $pid
	else
		lab_barrier "bw$size"
		sleep 1
		stamp "ib_write_bw.1.$size.start" "$((n * size))"
		ib_write_bw -R -d "$dev" -s "$size" -n "$n" -F -p $port 192.0.2.1 >"$LAB_OUT/bw.$size" 2>&1
		stamp "ib_write_bw.1.$size.end" "$?"
	fi
done
for k in $appenders; do
	for size in $chunks; do
		port=$((port + 1))
		printf 'node 0 192.0.2.1:%s\nnode 1 192.0.2.2:%s\n' $port $port >/tmp/b.spec
		export DPI_CLUSTER=/tmp/b.spec
		if [ "$LAB_ID" = 1 ]; then
			"$bin/dpi" --id 0 cat b --create --segment-size 4194304 --segments 8 --sources "$k" --discard \
				2>"$LAB_OUT/cat.$k.$size" &
			pid=$!
			for _ in $(seq 600); do grep -q 'node 0 up' "$LAB_OUT/cat.$k.$size" && break; sleep 0.2; done
			lab_barrier "d$k-$size"
			wait $pid
		else
			lab_barrier "d$k-$size"
			sleep 1
			stamp "dpi_append.$k.$size.start" "$bytes"
			"$bin/dpi" bench b --appenders "$k" --chunk "$size" --bytes "$bytes" >"$LAB_OUT/bench.$k.$size" 2>&1
			stamp "dpi_append.$k.$size.end" "$?"
		fi
	done
done
exit 0
