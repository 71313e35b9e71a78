#!/bin/bash
# Guest side of tests/bench/stack.sh.  MODE "lo": one guest, server and
# client on the same host, talking to the guest's own address 192.0.2.1,
# which the kernel routes over the loopback netdev (the RDMA devices sit
# on eth0: rdma_cm cannot resolve 127.0.0.1 to an iWARP device).
# MODE "link": two guests, guest 1 serves, guest 2 is the client, over
# the virtual link (devices on eth0).
#
# Stacks: siw (upstream, CRC off: 6.1 has no knob for it), swiwarp with
# mpa_crc=0 (CRC off), swiwarp-crc with mpa_crc=2 (CRC on), tcp (iperf3);
# optional: swiwarp-zc / swiwarp-copy (CRC off, zero-copy Sends and Writes
# forced on at 16 KB / off), swiwarp-mss (CRC off, large_fpdu=0: every
# FPDU within a segment), swiwarp-gather (payload gathered into the
# FPDU buffer before TCP copies it), swiwarp-wq (TX always in the worker)
# and swiwarp-dN (the doorbell runs N TX engine steps); every other
# swiwarp stack uses the module defaults.  The last three are design
# variants that only the benchmark's build of the module has as parameters
# (make -C kernel BENCH=1, in $BUILD/kernel-bench/; tests/bench/stack.sh
# builds it when a run asks for one of them); every other stack loads the
# shipped module.
# Only one RDMA driver is loaded at a time (both on one netdev would leave
# rdma_cm free to pick either), so the script swaps modules between runs.
# Each (test, size) block runs every stack, then again in reverse order
# (A/B/C C/B/A) so slow drift of the TCG guest hits all alike.
#
# Per run it appends one line to $LAB_OUT/runs.tsv:
#   idx mode test size stack rep attempt rc seconds cpu_busy cpu_total bytes file
# cpu_busy/cpu_total are /proc/stat tick deltas (user+nice+system+irq+softirq
# / all) over the run on this guest; the host parses the perftest and
# iperf3 output files in $LAB_OUT/raw/.
source "$LAB_TOP/tests/lab/lib.sh"
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

cpu_ticks() { # prints "busy total" from the aggregate cpu line
	awk '/^cpu /{b=$2+$3+$4+$7+$8; t=0; for(i=2;i<=NF;i++) t+=$i; print b, t; exit}' /proc/stat
}

cur_drv=""
# swiwarp tuning knobs a stack may set; every other swiwarp stack gets the
# module's defaults (read at the first load), so variants never leak.
tunables="zcopy_tx_min direct_tx_burst tx_copy_pages large_fpdu"
declare -A tun_default
# use_stack STACK: make exactly the RDMA device this stack needs exist.
use_stack() {
	local want=$1 drv crc="" set="" t kv ko=shipped
	case $want in
	siw) drv=siw ;;
	swiwarp) drv=swiwarp crc=0 ;;
	swiwarp-crc) drv=swiwarp crc=2 ;;
	swiwarp-zc) drv=swiwarp crc=0 set="zcopy_tx_min=16384" ;;
	swiwarp-copy) drv=swiwarp crc=0 set="zcopy_tx_min=0" ;;
	swiwarp-mss) drv=swiwarp crc=0 set="large_fpdu=0" ;;
	swiwarp-gather) drv=swiwarp crc=0 set="tx_copy_pages=0" ko=bench ;;
	swiwarp-wq) drv=swiwarp crc=0 set="direct_tx_burst=0" ko=bench ;;
	swiwarp-d[0-9]*) drv=swiwarp crc=0 set="direct_tx_burst=${want#swiwarp-d}" ko=bench ;;
	tcp) return 0 ;;
	*) echo "bench: unknown stack $want" >&2; return 1 ;;
	esac
	if [ "$cur_drv" != "$drv:$ko" ]; then
		if [ -n "$cur_drv" ]; then
			cur_drv=${cur_drv%:*}
			# A QP stuck in the kernel blocks both (swiwarp's open
			# ib_read_bw stall); the device check below then fails
			# every later run quickly instead of hanging here.
			timeout 30 rdma link delete "${cur_drv}0" 2>/dev/null
			timeout 30 rmmod "$cur_drv" || echo "bench: rmmod $cur_drv failed" >&2
		fi
		cur_drv=$drv:$ko
		if [ "$ko" = bench ]; then
			SWIWARP_KO="$BUILD/kernel-bench/$(uname -r)/kernel/swiwarp.ko" \
				lab_load_swiwarp "$netdev" swiwarp0 >&2 ||
				{ echo "bench: loading the bench build of swiwarp failed" >&2; return 1; }
		else
			"lab_load_$drv" "$netdev" "${drv}0" >&2 || { echo "bench: loading $drv failed" >&2; return 1; }
		fi
		# which crc32c driver the crypto API gave swiwarp (swiwarp_crc.c)
		[ "$drv" = swiwarp ] &&
			echo "bench: swiwarp $(dmesg | grep -o 'MPA CRC with .*' | tail -n 1)" \
				>>"$LAB_OUT/crc32c.txt"
	fi
	if [ "$drv" = swiwarp ]; then
		echo "$crc" >/sys/module/swiwarp/parameters/mpa_crc || return 1
		# The doorbell TX (direct_tx) is the module default; set it anyway
		# so that an older module measured with this script runs it too.
		if [ -w /sys/module/swiwarp/parameters/direct_tx ]; then
			echo 1 >/sys/module/swiwarp/parameters/direct_tx || return 1
		fi
		for t in $tunables; do
			[ -w "/sys/module/swiwarp/parameters/$t" ] || continue
			[ -n "${tun_default[$t]:-}" ] || tun_default[$t]=$(cat "/sys/module/swiwarp/parameters/$t")
			echo "${tun_default[$t]}" >"/sys/module/swiwarp/parameters/$t" || return 1
		done
		for kv in $set; do
			echo "${kv#*=}" >"/sys/module/swiwarp/parameters/${kv%%=*}" || return 1
		done
	fi
	# Exactly one RDMA device, the one we want: otherwise rdma_cm may pick
	# a stale device of the other driver and the numbers would be lies.
	[ "$(ls /sys/class/infiniband)" = "${drv}0" ] || {
		echo "bench: devices present: $(ls /sys/class/infiniband | tr '\n' ' ') (want ${drv}0)" >&2
		return 1
	}
}

# The crc32c drivers the crypto API offers (the lab blacklists crc32c_intel).
modprobe -a libcrc32c crc32c_generic >/dev/null 2>&1
awk '/^name/{n=$3} /^driver/{d=$3} /^priority/{if (n=="crc32c") print "bench: crc32c driver", d, "priority", $3}' \
	/proc/crypto | tee "$LAB_OUT/crc32c.txt"

idx=0
port=9000
declare -A timeouts
# one_run TEST SIZE STACK REP: one measured run (both roles), with a retry
# for upstream siw, whose passive side can lose an FPDU that arrives during
# connection set-up (tests/lab/README.md); swiwarp gets no retry.
one_run() {
	local test=$1 size=$2 stack=$3 rep=$4 attempt rc max=1 key=$1.$3
	[ "$stack" = siw ] && max=2
	# A run that timed out is not repeated at the same size, and after four
	# timeouts a (test, stack) series is dropped, except at 64 KB, the size
	# the goals are judged at.
	if [ "${timeouts[$key.$size]:-0}" -ge 1 ] ||
		{ [ "${timeouts[$key]:-0}" -ge 4 ] && [ "$size" != 65536 ]; }; then
		idx=$((idx + 1))
		printf '%s\t%s\t%s\t%s\t%s\t%s\t0\tskipped\t0\t0\t0\t0\t-\n' "$idx" "$mode" "$test" "$size" \
			"$stack" "$rep" >>"$LAB_OUT/runs.tsv"
		return
	fi
	for attempt in $(seq $max); do
		idx=$((idx + 1))
		port=$((port + 1))
		run_pair "$test" "$size" "$stack" "$rep" "$attempt"
		rc=$?
		[ $rc = 0 ] && break
	done
	if [ $rc = 124 ]; then
		timeouts[$key]=$((${timeouts[$key]:-0} + 1))
		timeouts[$key.$size]=1
	fi
}

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

# perftest -R's re-listen race (tests/lab/lib.sh, lab_delay_syn): the link
# client's connecting SYNs wait 300 ms before perftest runs, so its second
# connect cannot beat the server's re-listen (seen here: REJECTED -111 and
# a crash in librdmacm, rc 139).  Not for connbench, whose rdma_connect
# time would include the delay, nor in lo mode (no qdisc on lo).
syn_delay_now=0
syn_delay_for() { # test
	local want=0
	[ "$role" = client ] && [ "$1" != conn ] && want=${STACK_SYN_DELAY_MS:-300}
	[ "$want" = "$syn_delay_now" ] && return
	lab_delay_syn "$want" "$netdev" || echo "bench: lab_delay_syn $want failed" >&2
	syn_delay_now=$want
}

run_pair() { # test size stack rep attempt
	local test=$1 size=$2 stack=$3 rep=$4 attempt=$5 f spid="" rc=0 t0 c0 c1 secs r
	f=$mode.$test.$size.$stack.$rep.$attempt
	cmd_for "$test" "$size" "$stack"
	use_stack "$stack" || rc=97
	syn_delay_for "$test"
	if [ "$role" != client ] && [ $rc = 0 ]; then
		timeout $((to + 20)) $srv_pin $srv_cmd >"$raw/$f.server" 2>&1 &
		spid=$!
		lab_wait_listen "$port" 90 || rc=98
	fi
	[ "$role" = both ] || lab_barrier "go$idx" 300 || rc=99
	c0=$(cpu_ticks)
	t0=$SECONDS
	if [ "$role" != server ] && [ $rc = 0 ]; then
		# Host-clock stamps: the shared directory is 9p, so these files'
		# mtimes come from the host's clock, not the drifting guest's.
		: >"$LAB_OUT/stamps/$f.start"
		timeout "$to" $cli_pin $cli_cmd >"$raw/$f.client" 2>&1
		rc=$?
		: >"$LAB_OUT/stamps/$f.end"
	fi
	if [ "$role" = server ] && [ -n "$spid" ]; then
		# Stop waiting for our server as soon as the client reports failure.
		while kill -0 "$spid" 2>/dev/null; do
			r=$(cat "$LAB_SHARED/rc.$idx.2" 2>/dev/null)
			if [ -n "$r" ] && { [ "$r" != 0 ] || [ "$persistent" = 1 ]; }; then
				kill "$spid" 2>/dev/null
			fi
			sleep 0.3
		done
	fi
	if [ -n "$spid" ]; then
		{ [ $rc = 0 ] && [ "$persistent" = 0 ]; } || kill "$spid" 2>/dev/null
		wait "$spid"
		r=$?
		[ $rc = 0 ] && [ "$persistent" = 0 ] && rc=$r
	fi
	if [ "$role" != both ]; then
		# Both guests must agree on the outcome (retries, skips).
		echo "$rc" >"$LAB_SHARED/rc.$idx.$LAB_ID"
		lab_barrier "done$idx" $((to + 300)) || rc=99
		# The client's status wins, then the server's: both guests read
		# the same two files, so they reach the same verdict.
		r=$(cat "$LAB_SHARED/rc.$idx.2" 2>/dev/null)
		[ -n "$r" ] && [ "$r" != 0 ] && rc=$r
		[ -z "$r" ] || [ "$r" = 0 ] && rc=$(cat "$LAB_SHARED/rc.$idx.1" 2>/dev/null || echo 99)
	fi
	c1=$(cpu_ticks)
	secs=$((SECONDS - t0))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$idx" "$mode" "$test" "$size" "$stack" \
		"$rep" "$attempt" "$rc" "$secs" $((${c1% *} - ${c0% *})) $((${c1#* } - ${c0#* })) "$nbytes" "$f" \
		>>"$LAB_OUT/runs.tsv"
	echo "bench: $f rc=$rc ${secs}s" >&2
	return $rc
}

order_for_rep() { # rep -> the stacks, reversed on even reps
	local s out=""
	for s in "$@"; do
		if [ $((rep % 2)) = 1 ]; then out="$out $s"; else out="$s $out"; fi
	done
	echo $out
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
if [ -n "$cur_drv" ]; then
	cur_drv=${cur_drv%:*}
	timeout 30 rdma link delete "${cur_drv}0" 2>/dev/null
	timeout 30 rmmod "$cur_drv"
fi
exit 0
