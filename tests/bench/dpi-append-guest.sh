#!/bin/bash
# Guest side of tests/bench/dpi-append.sh (2 guests).  Guest 1 = owner
# (`dpi cat --discard`) and ib_write_bw server; guest 2 = appenders / client.
# Appends JSON lines to $LAB_SHARED/bench.jsonl.
source "$LAB_TOP/tests/lab/lib.sh"
drv=${1:-siw}
bin=${DPI_BIN:-$BUILD/userspace/dpi}
chunks=${DPI_BENCH_CHUNKS:-4096 16384 65536 262144 1048576}
appenders=${DPI_BENCH_APPENDERS:-1 2 4}
bytes=${DPI_BENCH_BYTES:-67108864}
"lab_load_$drv" || exit 1
dev=$(lab_rdma_dev)
lab_barrier loaded 300 || exit 1
port=7600
for size in $chunks; do
	port=$((port + 1))
	if [ "$LAB_ID" = 1 ]; then
		ib_write_bw -R -d "$dev" -s "$size" -D 5 -p $port >/tmp/bw.$size 2>&1 &
		pid=$!
		sleep 1
		lab_barrier "bw$size"
		wait $pid
		bw=$(awk -v s="$size" '$1 == s { print $4 }' /tmp/bw.$size | tail -1)
		echo "{\"kind\": \"ib_write_bw\", \"chunk\": $size, \"MBps\": ${bw:-0}}" >>"$LAB_SHARED/bench.jsonl"
	else
		lab_barrier "bw$size"
		sleep 1
		ib_write_bw -R -d "$dev" -s "$size" -D 5 -p $port 192.0.2.1 >/dev/null 2>&1
	fi
done
for k in $appenders; do
	for size in $chunks; do
		port=$((port + 1))
		printf 'node 0 192.0.2.1:%s\nnode 1 192.0.2.2:%s\n' $port $port >/tmp/b.spec
		export DPI_CLUSTER=/tmp/b.spec
		if [ "$LAB_ID" = 1 ]; then
			"$bin/dpi" --id 0 cat b --create --segment-size 4194304 --segments 8 --sources "$k" --discard \
				2>/tmp/cat.log &
			pid=$!
			for _ in $(seq 300); do grep -q 'node 0 up' /tmp/cat.log && break; sleep 0.2; done
			lab_barrier "d$k-$size"
			wait $pid
		else
			lab_barrier "d$k-$size"
			sleep 0.5
			"$bin/dpi" bench b --appenders "$k" --chunk "$size" --bytes "$bytes" 2>/tmp/bench.err |
				sed 's/^{/{"kind": "dpi_append", /' >>"$LAB_SHARED/bench.jsonl"
		fi
	done
done
exit 0
