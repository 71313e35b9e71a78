#!/bin/bash
# Guest side of tests/bench/scale.sh (issue 20: scale and connection rate).
# Two guests on the virtual link: guest 1 serves, guest 2 is the client.
# Tests (SCALE_TESTS, in this order: what a stuck QP could spoil comes last):
#   rate  connbench rate: SCALE_RATE_N rdma_cm connections, up to
#         SCALE_RATE_INFLIGHT connecting at once, then as many TCP connects
#   hold  connbench hold: SCALE_HOLD_N idle RC connections; both guests read
#         the kernel memory counters (mrbench kmem) with one connection up
#         and with all of them up, into raw/FILE.kmem.{1,all}.gN
#   mr    mrbench on the client guest alone: ibv_reg_mr + ibv_dereg_mr per
#         second from 4 KiB to 64 MiB, kernel memory per MR
#   qp    ib_write_bw -R -q N -s SCALE_QP_SIZE for N in SCALE_QPS: aggregate
#         bandwidth of N QPs
# Every (test, parameter) block runs each stack in turn, then again in
# reverse order (A/B, B/A, A/B) for SCALE_REPS rounds.  Stacks, module
# swapping and the runs' bookkeeping (runs.tsv, raw/, stamps/) are
# tests/bench/lib-guest.sh's, as for the stack benchmark.
source "$LAB_TOP/tests/lab/lib.sh"
source "$LAB_TOP/tests/bench/lib-guest.sh"
mode=link
tests=${SCALE_TESTS:-rate hold mr qp}
stacks=${SCALE_STACKS:-siw swiwarp-defaults}
reps=${SCALE_REPS:-3}
qps=${SCALE_QPS:-1 4 16 64 255}
qp_size=${SCALE_QP_SIZE:-65536}
qp_bytes=${SCALE_QP_BYTES:-8388608}	# per run, at least 5 messages per QP
rate_n=${SCALE_RATE_N:-200}
rate_inflight=${SCALE_RATE_INFLIGHT:-32}
# Upstream siw 6.1 creates at most 71 QPs per process here (rdma_create_qp
# fails from the 72nd, EINVAL, in every round of the first run of
# 256; perftest -q 128 fails the same way), so 64 idle QPs.
hold_n=${SCALE_HOLD_N:-64}
mr_args=${SCALE_MR_ARGS:-}	# more mrbench options (-t SECS -n ITERS -m MAXSIZE -k K)
run_to=${SCALE_RUN_TIMEOUT:-120}
to_rate=${SCALE_TIMEOUT_RATE:-65536}
connbench=$BUILD/tools/connbench/connbench
mrbench=$BUILD/tools/mrbench/mrbench
raw=$LAB_OUT/raw
mkdir -p "$raw" "$LAB_OUT/stamps"
: >"$LAB_OUT/runs.tsv"
netdev=eth0 srv_ip=192.0.2.1 srv_pin="" cli_pin=""
if [ "$LAB_ID" = 1 ]; then role=server; else role=client; fi
# Only perftest gets the SYN delay against its re-listen race; connbench's
# rates would include it, mrbench connects nothing.
no_syn_delay="rate hold mr"
bench_crc32c_probe >/dev/null

# hold_side FILE: every guest, while connbench hold runs: kernel memory
# with one connection held and with all held (mrbench kmem), then the
# client lets connbench go on.
hold_seen() { # DIR STAGE: 0 once held, 3 if connbench failed
	[ -e "$1/failed" ] && return 3
	[ -e "$1/held.$2" ]
}
hold_side() {
	local f=$1 d=$LAB_SHARED/hold.$idx st
	for st in 1 all; do
		lab_wait_until "$to" hold_seen "$d" "$st" || return 1
		"$mrbench" kmem >"$raw/$f.kmem.$st.g$LAB_ID" || return 1
		lab_barrier "hold$idx.$st" 300 || return 1
		[ "$role" = client ] && : >"$d/go.$st"
	done
	return 0
}

cmd_for() { # test param stack -> srv_cmd cli_cmd nbytes persistent to (side_fn)
	local test=$1 param=$2 n
	persistent=0 nbytes=0 srv_cmd=""
	case $test in
	rate)
		persistent=1
		srv_cmd="$connbench server $port"
		cli_cmd="$connbench rate $srv_ip $port $rate_n $rate_inflight"
		to=$((run_to + rate_n / 2))
		;;
	hold)
		persistent=1
		srv_cmd="$connbench server $port"
		[ "$role" = client ] && mkdir -p "$LAB_SHARED/hold.$idx"
		cli_cmd="$connbench hold $srv_ip $port $hold_n $rate_inflight $LAB_SHARED/hold.$idx"
		to=$((run_to + hold_n / 2))
		side_fn=hold_side
		;;
	mr)
		cli_cmd="$mrbench $mr_args"
		to=$((run_to * 2))
		;;
	qp)
		n=$((qp_bytes / qp_size / param))
		[ $n -lt 5 ] && n=5
		nbytes=$((n * qp_size * param))
		srv_cmd="ib_write_bw -R -F -q $param -s $qp_size -n $n -p $port"
		cli_cmd="$srv_cmd $srv_ip"
		# perftest connects the QPs one at a time, each behind the
		# 300 ms SYN delay
		to=$((run_to + param + nbytes / to_rate))
		;;
	esac
}

for test in $tests; do
	params=0
	[ "$test" = qp ] && params=$qps
	for param in $params; do
		for rep in $(seq "$reps"); do
			for stack in $(order_for_rep $stacks); do
				one_run "$test" "$param" "$stack" "$rep"
			done
		done
	done
done
bench_unload
exit 0
