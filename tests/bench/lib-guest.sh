# shellcheck shell=bash
# What the guest scripts of the benchmarks share (tests/bench/stack/guest.sh,
# tests/bench/scale/guest.sh): module swapping, the measured run of one
# server/client pair with its bookkeeping, and the A/B, B/A order.
# Source it after tests/lab/lib.sh.  The caller sets
#   mode role netdev srv_ip   role: server (guest 1 of two), client
#                             (guest 2) or both (one guest)
#   raw                       where the raw output goes ($LAB_OUT/raw)
#   srv_pin cli_pin           prefixes of the server and client commands
#                             (taskset, or empty)
#   no_syn_delay              tests whose client SYNs are never delayed
# and defines cmd_for TEST SIZE STACK, which sets srv_cmd (empty: no
# server), cli_cmd, nbytes, persistent (1: the server runs until killed) and
# to (the client's timeout).  A run may also set side_fn: a function that
# every guest runs in the background while the client runs, with the run's
# file name as argument (tests/bench/scale/guest.sh: kernel memory readings
# while connections are held).
#
# Per run, run_pair appends one line to $LAB_OUT/runs.tsv:
#   idx mode test size stack rep attempt rc seconds cpu_busy cpu_total bytes file
# cpu_busy/cpu_total are /proc/stat tick deltas (user+nice+system+irq+softirq
# / all) over the run on this guest.

cpu_ticks() { # prints "busy total" from the aggregate cpu line
	awk '/^cpu /{b=$2+$3+$4+$7+$8; t=0; for(i=2;i<=NF;i++) t+=$i; print b, t; exit}' /proc/stat
}

cur_drv=""
# swiwarp knobs a stack may set; every other swiwarp stack gets the
# module's defaults (read at the first load), so variants never leak.
tunables="mpa_crc zcopy_tx_min direct_tx_burst tx_copy_pages large_fpdu"
declare -A tun_default
# use_stack STACK: make exactly the RDMA device this stack needs exist.
# Stacks: siw (upstream, CRC off: 6.1 has no knob for it), swiwarp with
# mpa_crc=0 (CRC off), swiwarp-crc with mpa_crc=2 (CRC on),
# swiwarp-defaults (every parameter at the module's default, as a user runs
# it: today that requests CRC), tcp (no device); optional: swiwarp-zc /
# swiwarp-copy (CRC off, zero-copy Sends and Writes forced on at 16 KB /
# off), swiwarp-mss (CRC off, large_fpdu=0: every FPDU within a segment),
# swiwarp-gather (payload gathered into the FPDU buffer before TCP copies
# it), swiwarp-wq (TX always in the worker) and swiwarp-dN (the doorbell
# runs N TX engine steps).  The last three are design variants that only
# the benchmark's build of the module has as parameters (make -C kernel
# BENCH=1, in $BUILD/kernel-bench/; tests/bench/stack.sh builds it when a
# run asks for one of them); every other stack loads the shipped module.
# Only one RDMA driver is loaded at a time (both on one netdev would leave
# rdma_cm free to pick either), so stacks of different drivers swap modules.
use_stack() {
	local want=$1 drv set="" t kv ko=shipped
	case $want in
	siw) drv=siw ;;
	swiwarp) drv=swiwarp set="mpa_crc=0" ;;
	swiwarp-defaults) drv=swiwarp ;;
	swiwarp-crc) drv=swiwarp set="mpa_crc=2" ;;
	swiwarp-zc) drv=swiwarp set="mpa_crc=0 zcopy_tx_min=16384" ;;
	swiwarp-copy) drv=swiwarp set="mpa_crc=0 zcopy_tx_min=0" ;;
	swiwarp-mss) drv=swiwarp set="mpa_crc=0 large_fpdu=0" ;;
	swiwarp-gather) drv=swiwarp set="mpa_crc=0 tx_copy_pages=0" ko=bench ;;
	swiwarp-wq) drv=swiwarp set="mpa_crc=0 direct_tx_burst=0" ko=bench ;;
	swiwarp-d[0-9]*) drv=swiwarp set="mpa_crc=0 direct_tx_burst=${want#swiwarp-d}" ko=bench ;;
	tcp) return 0 ;;
	*) echo "bench: unknown stack $want" >&2; return 1 ;;
	esac
	if [ "$cur_drv" != "$drv:$ko" ]; then
		if [ -n "$cur_drv" ]; then
			# A QP stuck in the kernel blocks both (swiwarp's open
			# ib_read_bw stall); the device check below then fails
			# every later run quickly instead of hanging here.
			bench_unload
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

# bench_unload: delete the RDMA link and unload the driver use_stack loaded.
bench_unload() {
	[ -n "$cur_drv" ] || return 0
	local drv=${cur_drv%:*}
	timeout 30 rdma link delete "${drv}0" 2>/dev/null
	timeout 30 rmmod "$drv" || echo "bench: rmmod $drv failed" >&2
	cur_drv=""
}

# The crc32c drivers the crypto API offers (the lab blacklists crc32c_intel),
# into $LAB_OUT/crc32c.txt.
bench_crc32c_probe() {
	modprobe -a libcrc32c crc32c_generic >/dev/null 2>&1
	awk '/^name/{n=$3} /^driver/{d=$3} /^priority/{if (n=="crc32c") print "bench: crc32c driver", d, "priority", $3}' \
		/proc/crypto | tee "$LAB_OUT/crc32c.txt"
}

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

# perftest -R's re-listen race (tests/lab/lib.sh, lab_delay_syn): the link
# client's connecting SYNs wait 300 ms before perftest runs, so its second
# connect cannot beat the server's re-listen (seen here: REJECTED -111 and
# a crash in librdmacm, rc 139).  Not for the tests in $no_syn_delay
# (connbench: its times would include the delay), nor in lo mode (no qdisc
# on lo).
syn_delay_now=0
syn_delay_for() { # test
	local want=0
	[ "$role" = client ] && [[ " $no_syn_delay " != *" $1 "* ]] && want=${STACK_SYN_DELAY_MS:-300}
	[ "$want" = "$syn_delay_now" ] && return
	lab_delay_syn "$want" "$netdev" || echo "bench: lab_delay_syn $want failed" >&2
	syn_delay_now=$want
}

run_pair() { # test size stack rep attempt
	local test=$1 size=$2 stack=$3 rep=$4 attempt=$5 f spid="" sidepid="" rc=0 t0 c0 c1 secs r
	f=$mode.$test.$size.$stack.$rep.$attempt
	side_fn=""
	cmd_for "$test" "$size" "$stack"
	use_stack "$stack" || rc=97
	syn_delay_for "$test"
	if [ "$role" != client ] && [ $rc = 0 ] && [ -n "$srv_cmd" ]; then
		timeout $((to + 20)) $srv_pin $srv_cmd >"$raw/$f.server" 2>&1 &
		spid=$!
		lab_wait_listen "$port" 90 || rc=98
	fi
	[ "$role" = both ] || lab_barrier "go$idx" 300 || rc=99
	c0=$(cpu_ticks)
	t0=$SECONDS
	if [ -n "$side_fn" ] && [ $rc = 0 ]; then
		"$side_fn" "$f" &
		sidepid=$!
	fi
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
	if [ -n "$sidepid" ]; then
		wait "$sidepid"
		r=$?
		[ $rc = 0 ] && rc=$r
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
