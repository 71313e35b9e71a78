#!/bin/bash
# Guest side of tests/lab/demo.sh (make demo).
#   demo.sh swiwarp|siw [READ_BW]
# Guest 1 serves, guest 2 is the client: rping, hello-iwarp (examples/),
# ib_write_bw and, when READ_BW is 1, ib_read_bw.
source "$LAB_TOP/tests/lab/lib.sh"
driver=${1:-swiwarp}
read_bw=${2:-1}
work=$LAB_OUT/demo
mkdir -p "$work"

case $driver in
siw) lab_load_siw; rc=$?; dev=siw0 ;;
swiwarp) lab_load_swiwarp; rc=$?; dev=swiwarp0 ;;
*) echo "unknown driver $driver"; exit 2 ;;
esac
if [ $rc -ne 0 ]; then
	lab_fail "demo/load-$driver-g$LAB_ID" "loader returned $rc"
	lab_barrier loaded 600
	exit 1
fi
lab_pass "demo/load-$driver-g$LAB_ID"
# Guest 2 (the client) delays its frames by 100 ms; see lab_delay_connect in
# lib.sh for the upstream siw connection-setup race this avoids.
if [ "$driver" = siw ] && [ "$LAB_ID" = 2 ]; then
	lab_delay_connect "${LAB_SIW_CLIENT_DELAY_MS:-100}" || echo "demo: could not add the netem delay"
fi
# Guest 2 runs perftest -R clients: perftest's re-listen race (lab_delay_syn
# in lib.sh).
if [ "$LAB_ID" = 2 ]; then
	lab_delay_syn "${LAB_PERFTEST_SYN_DELAY_MS:-300}" || echo "demo: could not add the SYN delay"
fi
rdma link show
ibv_devinfo -d "$dev" | grep -E 'hca_id|transport|node_guid|state'
lab_barrier loaded 600

# server_client TAG PORT SERVER-CMD... -- CLIENT-CMD...: run one exchange.
server_client() {
	local tag=$1 port=$2 srv=() cli=() pid rc
	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	if [ "$LAB_ID" = 1 ]; then
		timeout 150 "${srv[@]}" >"$work/$tag.log" 2>"$work/$tag.err" &
		pid=$!
		lab_wait_listen "$port" 120
		lab_barrier "$tag" 600
		wait $pid
	else
		lab_barrier "$tag" 600
		timeout 150 "${cli[@]}" >"$work/$tag.log" 2>"$work/$tag.err"
	fi
	rc=$?
	if [ $rc -eq 0 ]; then lab_pass "demo/$tag-g$LAB_ID"; else lab_fail "demo/$tag-g$LAB_ID" "exit $rc"; fi
	return $rc
}

peer=192.0.2.1
hello=$BUILD/examples/hello-iwarp/hello-iwarp
server_client rping 7174 rping -s -a "$LAB_IP" -C 5 -S 1024 -v -V -- \
	rping -c -a "$peer" -C 5 -S 1024 -v -V
if [ -x "$hello" ]; then
	server_client hello 7471 "$hello" -s -a "$LAB_IP" -p 7471 -- "$hello" -c "$peer" -p 7471
fi
bw=(-R -d "$dev" -F --report_gbits -s 65536)
server_client write_bw 18515 ib_write_bw "${bw[@]}" -n 100 -- ib_write_bw "${bw[@]}" -n 100 "$peer"
if [ "$read_bw" = 1 ]; then
	server_client read_bw 18515 ib_read_bw "${bw[@]}" -n 50 -- ib_read_bw "${bw[@]}" -n 50 "$peer"
fi
lab_finish
