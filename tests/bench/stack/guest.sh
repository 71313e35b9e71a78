#!/bin/bash
# Guest side of tests/bench/stack.sh.  MODE "lo": one guest, server and
# client on the same host, talking to the guest's own address 192.0.2.1,
# which the kernel routes over the loopback netdev (the RDMA devices sit
# on eth0: rdma_cm cannot resolve 127.0.0.1 to an iWARP device).
# MODE "link": two guests, guest 1 serves, guest 2 is the client, over
# the virtual link (devices on eth0).
#
# Stacks: see use_stack in tests/bench/lib-guest.sh (siw, swiwarp with
# mpa_crc=0, swiwarp-crc, tcp and the optional variants), which also swaps
# the modules: only one RDMA driver is loaded at a time.
# Each (test, size) block runs every stack, then again in reverse order
# (A/B/C C/B/A) so slow drift of the TCG guest hits all alike.
#
# Per run run_pair (tests/bench/lib-guest.sh) appends one line to
# $LAB_OUT/runs.tsv; the host parses the perftest, iperf3 and connbench
# output files in $LAB_OUT/raw/.
source "$LAB_TOP/tests/lab/lib.sh"
source "$LAB_TOP/tests/bench/lib-guest.sh"
mode=${1:-lo}
sizes=${STACK_SIZES:-64 4096 65536 1048576 4194304}
bw_tests=${STACK_BW_TESTS:-write read send}
lat_tests=${STACK_LAT_TESTS:-send write read}
stacks=${STACK_STACKS:-siw swiwarp swiwarp-crc}
reps=${STACK_REPS:-2}
bytes=${STACK_BYTES:-4194304}
min_msgs=${STACK_MIN_MSGS:-5}	# perftest refuses fewer than 5 iterations
lat_iters=${STACK_LAT_ITERS:-1000}
run_to=${STACK_RUN_TIMEOUT:-90}
# A bandwidth run's timeout grows with the bytes it moves: run_to plus one
# second per STACK_TIMEOUT_RATE bytes (64 KiB/s, below the slowest stack
# measured on a loaded host, siw at ~85 KB/s in a perf-wrapped run).
to_rate=${STACK_TIMEOUT_RATE:-65536}
conn_n=${STACK_CONN_N:-20}
perf_re=${STACK_PERF:-}	# regex on "test.size.stack": profile those
connbench=${STACK_CONNBENCH:-$BUILD/tools/connbench/connbench}
raw=$LAB_OUT/raw
mkdir -p "$raw" "$LAB_OUT/stamps"
: >"$LAB_OUT/runs.tsv"

if [ "$mode" = lo ]; then
	netdev=eth0 srv_ip=192.0.2.$LAB_ID role=both
else
	netdev=eth0 srv_ip=192.0.2.1
	if [ "$LAB_ID" = 1 ]; then role=server; else role=client; fi
fi

# In lo mode server and client share the guest's 2 vCPUs.  Unpinned, both
# spinning perftest processes sometimes land on one vCPU and each waits for
# the other's tick (64 B latency jumped between ~50 us and ~2 ms from run to
# run): pin the server to vCPU 0 and the client to vCPU 1, for every stack.
srv_pin="" cli_pin=""
if [ "$mode" = lo ] && [ "${STACK_PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
	srv_pin="taskset -c 0" cli_pin="taskset -c 1"
fi
# connbench's times would include the SYN delay (lib-guest.sh, syn_delay_for).
no_syn_delay="conn"
bench_crc32c_probe

# The commands of one run.  perftest: -R (rdma_cm), -F (no CPU-frequency
# warning).  Bandwidth runs move $bytes (at least $min_msgs and at most
# 1000 messages), latency runs $lat_iters messages.
cmd_for() { # test size stack  -> sets srv_cmd cli_cmd nbytes to
	local test=$1 size=$2 stack=$3 n
	persistent=0
	case $test in
	write | read | send)
		n=$((bytes / size))
		[ $n -lt $min_msgs ] && n=$min_msgs
		[ $n -gt 1000 ] && n=1000
		nbytes=$((n * size))
		if [ "$stack" = tcp ]; then
			srv_cmd="iperf3 -s -1 -p $port"
			# iperf3 refuses a block above 1 MB (-l): 4 MB moves as 1 MB writes.
			cli_cmd="iperf3 -c $srv_ip -p $port -n $nbytes -l $((size > 1048576 ? 1048576 : size)) -J"
		else
			srv_cmd="ib_${test}_bw -R -F -s $size -n $n -p $port"
			cli_cmd="$srv_cmd $srv_ip"
		fi
		;;
	lat_*)
		nbytes=$((lat_iters * size))
		srv_cmd="ib_${test#lat_}_lat -R -F -s $size -n $lat_iters -p $port"
		cli_cmd="$srv_cmd $srv_ip"
		;;
	conn)
		nbytes=0
		persistent=1 # the server runs until killed
		srv_cmd="$connbench server $port"
		cli_cmd="$connbench client $srv_ip $port $conn_n"
		;;
	esac
	to=$((run_to + nbytes / to_rate))
}

bw_block() { # test sizes...
	local test=$1 size st stack
	shift
	for size in "$@"; do
		for rep in $(seq "$reps"); do
			st=$stacks
			[ "$test" = write ] && st="$stacks tcp"
			for stack in $(order_for_rep $st); do
				one_run "$test" "$size" "$stack" "$rep"
			done
		done
	done
}
lat_block() { # test
	local stack
	for rep in $(seq "$reps"); do
		for stack in $(order_for_rep $stacks); do
			one_run "lat_$1" 64 "$stack" "$rep"
		done
	done
}
conn_block() {
	local stack
	if [ ! -x "$connbench" ]; then
		echo "bench: $connbench not built; no connection set-up numbers" >&2
		return
	fi
	for rep in $(seq "$reps"); do
		for stack in $(order_for_rep $stacks); do
			one_run conn 0 "$stack" "$rep"
		done
	done
}
# Profiles (STACK_PERF): extra runs after all measured ones, not recorded
# in runs.tsv, so the profiler's own cost never enters a number.  In a run
# with LAB_TCG_PROFILE=1 the TCG profiler counts what each guest executes
# (tools/tcg-profile: lab_tcg_window_start/end, for report.py); else
# perf samples the whole guest.  In link mode both guests, each into its
# own files (.gN.).
profile_run() { # test size stack
	local test=$1 size=$2 stack=$3 f ppid spid=""
	# A measured run's 4 MB is about a second on the link, a handful of
	# samples: a profile moves STACK_PERF_BYTES (cmd_for reads this bytes).
	local bytes=${STACK_PERF_BYTES:-67108864}
	f=$mode.$1.$2.$3.profile.g$LAB_ID
	port=$((port + 1))
	cmd_for "$test" "$size" "$stack"
	use_stack "$stack" || echo "bench: $f: no $stack" >&2
	syn_delay_for "$test"
	if [ "$role" != client ]; then
		timeout $((to + 20)) $srv_pin $srv_cmd >"$raw/$f.server" 2>&1 &
		spid=$!
		lab_wait_listen "$port" 30 || echo "bench: $f: the server did not listen" >&2
	fi
	# Under TCG a sample's interrupt takes long enough that the kernel
	# throttles perf to a few samples per run ("perf: interrupt took too
	# long", kernel.perf_event_max_sample_rate lowered): no throttling.
	if [ "${LAB_TCG_PROFILE:-0}" = 1 ]; then
		lab_tcg_window_start "$f"
	else
		sysctl -qw kernel.perf_cpu_time_max_percent=0 kernel.perf_event_max_sample_rate=10000
		perf record -q -e cpu-clock -F 199 -a -g --no-buildid -o "/tmp/$f.perf" -- sleep $((to + 30)) \
			2>"$raw/$f.perf.err" &
		ppid=$!
		sleep 3
	fi
	[ "$role" = both ] || lab_barrier "prof$port" 300
	if [ "$role" != server ]; then
		timeout "$to" $cli_pin $cli_cmd >"$raw/$f.client" 2>&1
		echo "bench: $f rc=$?" >&2
	fi
	# The server ends with its client (perftest, iperf3 -1) or at its timeout.
	[ -n "$spid" ] && wait "$spid"
	if [ "${LAB_TCG_PROFILE:-0}" = 1 ]; then
		lab_tcg_window_end "$f"
		[ "$role" = both ] || lab_barrier "profdone$port" $((to + 300))
		return
	fi
	kill -INT "$ppid" 2>/dev/null
	wait "$ppid"
	timeout 120 perf report -i "/tmp/$f.perf" --stdio --no-children --sort dso,sym -g none \
		2>/dev/null | grep -v '^$' | head -n 70 >"$raw/$f.perf.txt"
	dmesg | grep -i 'perf:' >>"$raw/$f.perf.err"
	rm -f "/tmp/$f.perf"
	[ "$role" = both ] || lab_barrier "profdone$port" $((to + 300))
}
# First everything the goals are judged on (64 KB bandwidth, latency,
# set-up), then the size sweep: a run cut short by the lab's time budget
# still has every goal.  RDMA Reads last in each pass: a Read stall can
# leave a QP stuck in the kernel, and then no module can be swapped for
# the rest of the boot.
goal_sizes="" sweep_sizes=""
for size in $sizes; do
	if [ "$size" = 65536 ]; then goal_sizes=65536; else sweep_sizes="$sweep_sizes $size"; fi
done
for test in $bw_tests; do [ "$test" = read ] || bw_block "$test" $goal_sizes; done
for test in $lat_tests; do [ "$test" = read ] || lat_block "$test"; done
conn_block
for test in $lat_tests; do [ "$test" = read ] && lat_block "$test"; done
for test in $bw_tests; do [ "$test" = read ] && bw_block "$test" $goal_sizes; done
echo "bench: goal runs done" >&2
if [ -n "$perf_re" ]; then
	# What can be profiled: the 64 KB goal runs, the 1 and 4 MB writes
	# against TCP (issue 20: write at 0.59-0.77x of iperf3 there) and the
	# latency runs.
	for key in write.65536.swiwarp write.65536.swiwarp-crc write.65536.siw write.65536.tcp \
		write.1048576.swiwarp write.1048576.tcp write.4194304.swiwarp write.4194304.tcp \
		send.65536.swiwarp lat_send.64.swiwarp lat_send.64.siw lat_write.64.swiwarp lat_write.64.siw; do
		[[ "$key" =~ $perf_re ]] || continue
		IFS=. read -r t sz st <<<"$key"
		profile_run "$t" "$sz" "$st"
	done
fi
echo "bench: size sweep:$sweep_sizes" >&2
for test in $bw_tests; do [ "$test" = read ] || bw_block "$test" $sweep_sizes; done
for test in $bw_tests; do [ "$test" = read ] && bw_block "$test" $sweep_sizes; done
bench_unload
exit 0
