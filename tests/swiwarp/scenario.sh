#!/bin/bash
# Guest side of tests/suites/60-swiwarp-basic.sh.  Usage (in a lab guest):
#   scenario.sh pair     2 guests, swiwarp on both: device checks, rping
#                        (64 B with CRC, 1000 B without), hello-iwarp (the
#                        example, 13 and 100000 bytes), rdma link delete,
#                        rmmod; then siw compatibility (siw-compat-steps.sh)
#   scenario.sh interop  2 guests, guest 1 upstream siw, guest 2 swiwarp:
#                        rping (64 bytes) and hello-iwarp in both roles,
#                        ib_write_bw -R
# Every check prints one PASS:/FAIL:/SKIP: line (names carry the guest id).
source "$LAB_TOP/tests/lab/lib.sh"
# shellcheck source=tests/swiwarp/siw-compat-steps.sh
source "$LAB_TOP/tests/swiwarp/siw-compat-steps.sh"
# shellcheck source=examples/hello-iwarp/lab-steps.sh
source "$LAB_TOP/examples/hello-iwarp/lab-steps.sh"
mode=${1:?usage: scenario.sh pair|interop}
me=g$LAB_ID
work=$LAB_OUT/swiwarp-$mode
mkdir -p "$work"

load_driver() {
	lab_load_or_finish "$1" "$mode/load-$1-$me" 120
	lab_pass "$mode/load-$1-$me"
	dev=$(lab_rdma_dev)
}

# swiwarp device as seen by rdma(8), sysfs and libibverbs.
check_device() {
	local link
	link=$(rdma link show 2>&1)
	if echo "$link" | grep -q '^link swiwarp0/1 state ACTIVE .*netdev eth0'; then
		lab_pass "$mode/rdma-link-$me"
	else
		lab_fail "$mode/rdma-link-$me" "$(echo "$link" | tr '\n' ' ')"
	fi
	if [ "$(cat /sys/class/infiniband/swiwarp0/node_type)" = "4: RNIC" ]; then
		lab_pass "$mode/node-type-rnic-$me"
	else
		lab_fail "$mode/node-type-rnic-$me" "$(cat /sys/class/infiniband/swiwarp0/node_type)"
	fi
	if ibv_devinfo -d swiwarp0 2>&1 | grep -q 'transport:.*iWARP'; then
		lab_pass "$mode/ibv-devinfo-$me"
	else
		lab_fail "$mode/ibv-devinfo-$me" "libibverbs does not show swiwarp0 as iWARP (provider?)"
	fi
	check_crc_driver
}

# The MPA CRC uses the crc32c driver the crypto API ranks highest (no
# choice of our own), and in the lab that is crc32c-generic: the guests
# boot with crc32c_intel blacklisted (tests/lab/lab, emulated_cpu_args).
check_crc_driver() {
	local used top
	used=$(dmesg | sed -n 's/.*swiwarp: MPA CRC with \([^ ]*\).*/\1/p' | tail -n 1)
	top=$(awk -F' *: *' '$1 == "name" { n = $2 } $1 == "driver" { d = $2 }
		$1 == "priority" && n == "crc32c" && $2 + 0 > best { best = $2 + 0; t = d }
		END { print t }' /proc/crypto)
	if [ -n "$used" ] && [ "$used" = "$top" ] && [ "$used" = crc32c-generic ]; then
		lab_pass "$mode/crc32c-driver-$me"
	else
		lab_fail "$mode/crc32c-driver-$me" "module uses '$used', crypto API's top crc32c '$top', the lab expects crc32c-generic"
	fi
}

case $mode in
pair)
	load_driver swiwarp
	check_device
	lab_barrier loaded 150
	lab_rping_pair "$mode/rping-small" 1 2 10 64 7174 90
	# No CRC on either side (policy "accept if asked", nobody asks).
	lab_param mpa_crc 1
	lab_rping_pair "$mode/rping-nocrc" 1 2 5 1000 7174 90
	lab_param_restore mpa_crc
	# The example of examples/hello-iwarp (its README): Write and Read
	# back, the default text and 100000 bytes (many FPDUs).
	hello_exchange swiwarp 7471 1 2
	hello_exchange swiwarp-100k 7472 1 2 -S 100000 -m "iWARP says hello. "
	# Peer-to-peer, MPA rev 1, CRC settings and perftest run in
	# 62-swiwarp-matrix.sh; 60 KB rping and ib_read_bw -R in
	# 63-swiwarp-data.sh.
	# Teardown: device removal and module unload with nothing left over.
	lab_check "$mode/rdma-link-delete-$me" rdma link delete swiwarp0
	lab_check "$mode/rmmod-$me" rmmod swiwarp
	# "modprobe siw; rdma link add X type siw" on a kernel without siw
	siw_compat_steps
	;;
interop)
	if [ "$LAB_ID" = 1 ]; then load_driver siw; else load_driver swiwarp; fi
	# Upstream siw drops a first Send that arrives before its QP is in RTS
	# (see lab_delay_connect in tests/lab/lib.sh): delay the client's frames.
	if [ "$LAB_ID" = 2 ]; then
		lab_delay_connect 100 || lab_fail "$mode/netem-$me" "could not add the netem delay"
		# ib_write_bw -R client: perftest's re-listen race (lab_delay_syn).
		lab_delay_syn "${LAB_PERFTEST_SYN_DELAY_MS:-300}" || lab_fail "$mode/syn-delay-$me" "tc setup failed"
	fi
	lab_barrier loaded 150
	lab_rping_pair "$mode/rping-siw-server" 1 2 10 64 7174 90
	lab_rping_pair "$mode/rping-swiwarp-server" 2 1 10 64 7176 90
	hello_exchange siw-to-swiwarp 7473 2 1
	hello_exchange swiwarp-to-siw 7474 1 2
	# 200 x 64 KiB from guest 2 to guest 1; the result row: bytes,
	# iterations, peak, average, message rate.
	# shellcheck disable=SC2016  # an awk program
	lab_perf_pair "$mode/ib_write_bw" 1 2 150 18516 '$1 == 65536 && $2 == 200 && NF >= 5 && $4 + 0 > 0 { print $4 " Gb/s average" }' \
		ib_write_bw -R -d "$dev" -n 200 -s 65536 -F --report_gbits
	# 60 KB rping (both roles) and ib_read_bw: tests/suites/63-swiwarp-data.sh
	;;
*)
	echo "unknown mode $mode" >&2
	exit 2
	;;
esac
lab_finish
