#!/bin/bash
# Guest side of tests/bench/flows.sh: FLOWS_BENCH_NODES lab guests (default
# 4; guest I = DPI node I-1).  Every program prints its own numbers; results go to
# $LAB_OUT/bench.jsonl (one JSON object a line) for the host to plot.
#   guest.sh DRIVER
source "$LAB_TOP/tests/lab/lib.sh"
drv=${1:-swiwarp}
bin=${FLOWS_BIN:?}
me=$((LAB_ID - 1))
n=${FLOWS_BENCH_NODES:-4}
mb=${FLOWS_BENCH_MB:-8}
sizes=${FLOWS_BENCH_SIZES:-16 64 256 1024}
rows=${FLOWS_BENCH_ROWS:-200000}
# Zipf joins produce rows^2-ish matches: 200000 rows would take many minutes on TCG.
zrows=${FLOWS_BENCH_ZIPF_ROWS:-20000}
rows_u=$rows
parts=" ${FLOWS_BENCH_PARTS:-bw shuffle join stream} "
want() { [[ $parts == *" $1 "* ]]; }
out=$LAB_OUT/bench.jsonl
: >"$out"
"lab_load_$drv" || { lab_fail "flows.bench.load" "lab_load_$drv"; exit 1; }
dev=$(lab_rdma_dev)
lab_barrier loaded 300 || exit 1
spec() { # PORT NODES
	local f=/tmp/bench.spec.$1 i
	: >"$f"
	for i in $(seq 0 $(($2 - 1))); do echo "node $i 192.0.2.$((i + 1)):$1" >>"$f"; done
	echo "$f"
}
port=7700

# 1. ib_write_bw between guests 1 and 2 (one RC stream), the RDMA baseline.
#    perftest -R's client can connect again before the server listens again
#    and crash in librdmacm (tests/lab/lib.sh, lab_delay_syn): its SYNs wait
#    300 ms, as in the stack benchmark.
want bw || sizes_bw=
[ "$LAB_ID" = 2 ] && [ -n "${sizes_bw-x}" ] && lab_delay_syn 300 eth0
for s in ${sizes_bw-$sizes 65536}; do
	port=$((port + 1))
	iters=$((mb * 1048576 / s))
	[ $iters -gt 200000 ] && iters=200000
	if [ "$LAB_ID" = 1 ]; then
		timeout 120 ib_write_bw -R -d "$dev" -s "$s" -n "$iters" -F -p $port >/tmp/bw.$s 2>&1 &
		pid=$!
		sleep 2
		lab_barrier "bw$s"
		wait $pid
	elif [ "$LAB_ID" = 2 ]; then
		lab_barrier "bw$s"
		sleep 1
		timeout 120 ib_write_bw -R -d "$dev" -s "$s" -n "$iters" -F -p $port 192.0.2.1 >/tmp/bw.$s 2>&1
		mbs=$(awk -v s="$s" '$1 == s && NF >= 5 { print $4 }' /tmp/bw.$s | tail -1)
		echo "{\"kind\":\"ib_write_bw\",\"tuple\":$s,\"iters\":$iters,\"MBps\":${mbs:-null}}" >>"$out"
		cp /tmp/bw.$s "$LAB_OUT/"
	else
		lab_barrier "bw$s"
	fi
done

[ "$LAB_ID" = 2 ] && lab_delay_syn 0 eth0

# Open MPI for the MPI shuffle and join: guests 2..N serve its rsh agent
# (rsh.sh) until guest 1 stops them.
source "$LAB_TOP/tests/flows/mpi-lib.sh"
[ "$LAB_ID" != 1 ] && mpi_rsh_serve &
# The MPI implementations to compare: Open MPI's TCP BTL, and on swiwarp
# also the ofi MTL (Documentation/mpi.md).  Both with the linear barrier
# (the workaround MPI on swiwarp needs with 3 ranks), so the two differ only
# in the transport; the barrier is outside the timed part.
mpi_impls="mpi-tcp"
[ "$drv" = swiwarp ] && mpi_impls+=" mpi-swiwarp"
[ -x "$bin/flows-mpi-join" ] || mpi_impls=""
mpi_job() { # IMPL NODES LOG PROGRAM ARGS...: one mpirun from guest 1
	local impl=$1 np=$2 log=$3 mca
	shift 3
	if [ "$impl" = mpi-tcp ]; then
		# shellcheck disable=SC2054 # the commas are in an MCA value
		mca=(--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include 192.0.2.0/24)
	else
		mca=("${MPI_SWIWARP[@]}")
	fi
	mca+=("${MPI_LINEAR_BARRIER[@]}")
	timeout 300 mpirun "${MPI_LAUNCH[@]}" "${mca[@]}" -np "$np" --host "$(mpi_hosts "$np")" "$@" >"$log" 2>&1
	echo "mpirun exit $?" >>"$log"
}

# 2. Shuffle: DPI flow vs plain TCP, by tuple size and node count (2 and
#    n), and on n nodes MPI_Alltoallv of the same tuples (flows-mpi-shuffle).
want shuffle || nodes_sh=
for nodes in ${nodes_sh-$(printf '%s\n' 2 "$n" | sort -un)}; do
	for s in $sizes; do
		for t in dpi tcp; do
			port=$((port + 10))
			if [ "$LAB_ID" -le "$nodes" ]; then
				timeout 300 "$bin/flows-shuffle" --spec "$(spec $port $nodes)" --id $me --nodes $nodes \
					--tuple-size "$s" --mb "$mb" --transport $t --tcp-port $((port + 5)) \
					--prefix "s$port" >>"$out" 2>"$LAB_OUT/shuffle.$nodes.$s.$t.err" ||
					echo "{\"kind\":\"error\",\"what\":\"shuffle $t $nodes $s\",\"node\":$me}" >>"$out"
			fi
			lab_barrier "sh$port" 400
		done
		[ "$nodes" = "$n" ] && [ "$LAB_ID" = 1 ] && [ -x "$bin/flows-mpi-shuffle" ] &&
			for impl in $mpi_impls; do
				log=$LAB_OUT/shuffle.$nodes.$s.$impl
				mpi_job "$impl" "$nodes" "$log" "$bin/flows-mpi-shuffle" --tuple-size "$s" --mb "$mb" --label "$impl"
				grep '^{"transport"' "$log" >>"$out"
			done
		port=$((port + 10))
		lab_barrier "shm$port" 400
	done
done

# 3. The join: DPI flows vs MPI vs the TCP shuffle of the same bytes
#    (rows x 16 B x 2 tables), uniform and Zipf keys, on all n nodes.
want join || dists=
for dist in ${dists-uniform zipf}; do
	port=$((port + 10))
	rows=$rows_u
	[ $dist = zipf ] && rows=$zrows
	timeout 300 "$bin/flows-join" --spec "$(spec $port "$n")" --id $me --nodes "$n" --rows "$rows" --dist $dist \
		--warmup 1 --prefix "bj$port" --name "bench.join-$dist" >"$LAB_OUT/join.$dist" 2>&1
	secs=$(sed -n 's/^# bench.join-[a-z]*.partition[0-9]*: .*(want [0-9]*), \([0-9.]*\) s, .*/\1/p' "$LAB_OUT/join.$dist")
	open_secs=$(sed -n 's/^# bench.join-[a-z]*.partition[0-9]*: .*, open \([0-9.]*\) s, .*/\1/p' "$LAB_OUT/join.$dist")
	xsecs=$(sed -n 's/^# bench.join-[a-z]*.partition[0-9]*: .*, exchange \([0-9.]*\) s$/\1/p' "$LAB_OUT/join.$dist")
	csecs=$(sed -n 's/^# bench.join-[a-z]*.partition[0-9]*: .*, close \([0-9.]*\) s, .*/\1/p' "$LAB_OUT/join.$dist")
	ok=$(grep -c '^PASS: bench.join-[a-z]*.partition' "$LAB_OUT/join.$dist")
	echo "{\"kind\":\"join\",\"impl\":\"flows-$drv\",\"dist\":\"$dist\",\"rows\":$rows,\"node\":$me,\"secs\":${secs:-null},\"open_secs\":${open_secs:-null},\"exchange_secs\":${xsecs:-null},\"close_secs\":${csecs:-null},\"ok\":$([ "$ok" = 1 ] && echo true || echo false)}" >>"$out"
	lab_barrier "bj$port" 400
	port=$((port + 10))
	# TCP shuffle of the join's bytes: 2 tables x rows x 16 B over n nodes.
	timeout 300 "$bin/flows-shuffle" --spec "$(spec $port "$n")" --id $me --nodes "$n" --tuple-size 16 \
		--bytes $((2 * rows * 16 / n)) --transport tcp --tcp-port $((port + 5)) |
		sed "s/^{/{\"kind\":\"join-tcp-shuffle\",\"dist\":\"$dist\",/" >>"$out"
	lab_barrier "bt$port" 400
	if [ "$LAB_ID" = 1 ]; then
		for impl in $mpi_impls; do
			mpi_job "$impl" "$n" "$LAB_OUT/$impl.$dist" \
				"$bin/flows-mpi-join" --rows "$rows" --dist $dist --name "bench.$impl-join-$dist"
			for r in $(seq 0 $((n - 1))); do
				secs=$(sed -n "s/^# bench.$impl-join-$dist.partition$r: .* matches, \([0-9.]*\) s, .*/\1/p" "$LAB_OUT/$impl.$dist")
				xsecs=$(sed -n "s/^# bench.$impl-join-$dist.partition$r: .*, exchange \([0-9.]*\) s$/\1/p" "$LAB_OUT/$impl.$dist")
				ok=$(grep -c "^PASS: bench.$impl-join-$dist$" "$LAB_OUT/$impl.$dist")
				echo "{\"kind\":\"join\",\"impl\":\"$impl\",\"dist\":\"$dist\",\"rows\":$rows,\"node\":$r,\"secs\":${secs:-null},\"exchange_secs\":${xsecs:-null},\"ok\":$([ "$ok" = 1 ] && echo true || echo false)}" >>"$out"
			done
		done
	fi
	lab_barrier "bm$port" 400
done
[ "$LAB_ID" = 1 ] && mpi_rsh_stop

# 4. Streaming aggregation: lazy merge of eager partial aggregates vs
#    re-partitioning raw events.
want stream || exit 0
port=$((port + 10))
timeout 300 "$bin/flows-stream" --spec "$(spec $port "$n")" --id $me --nodes "$n" --events "${FLOWS_BENCH_EVENTS:-200000}" \
	--name bench.stream >"$LAB_OUT/stream" 2>&1
sed -n 's/^# bench.stream.partial-saves[0-9]*: node \([0-9]*\), \([0-9]*\) zipf events over \([0-9]*\) keys: re-partitioning sent \([0-9]*\) B, eager partial aggregation (table of \([0-9]*\) keys) sent \([0-9]*\) B ([0-9.]*%); \([0-9.]*\) s vs \([0-9.]*\) s$/{"kind":"stream","node":\1,"events":\2,"keys":\3,"repartition_bytes":\4,"capacity":\5,"partial_bytes":\6,"repartition_secs":\7,"partial_secs":\8}/p' "$LAB_OUT/stream" >>"$out"
lab_barrier stream-done 300
exit 0
