#!/usr/bin/env bash
# Runs in both guests of a 2-guest lab for tests/suites/61-provider-lab.sh:
# unmodified rdma_cm programs over swiwarp through our provider.
#   rping: SEND/RECV, RDMA READ and WRITE, completion events
#          (ibv_req_notify_cq + completion channel), 8 iterations, the
#          client validating every buffer (-V).
#   ib_write_bw -R: a perftest stream of RDMA WRITEs (doorbell path).
# Guest 1 first runs the one-guest checks (lab-guest.sh) while guest 2 loads
# its module: the suite's single boot, where it used to boot once for each.
set -uo pipefail
source "$LAB_TOP/tests/lab/lib.sh"

single_rc=0
if [ "$LAB_ID" = 1 ]; then
	bash "$LAB_TOP/tests/provider/lab-guest.sh"
	single_rc=$?
fi

names=(rping ib_write_bw)
skip_all() {
	[ "$LAB_ID" = 1 ] || exit 0
	for n in "${names[@]}"; do lab_skip "provider.lab.$n" "$1"; done
	exit 0
}

# PROVIDER_LAB_DEV=siw: the same scenario on upstream siw + Debian's libsiw
# (a reference for the scenario itself).
dev=swiwarp0
[ "${PROVIDER_LAB_DEV:-}" = siw ] && dev=siw0
if [ -e "/sys/class/infiniband/$dev" ]; then
	# lab-guest.sh brought it up (guest 1); a second rdma link add fails.
	err='' rc=0
elif [ "$dev" = siw0 ]; then
	err=$(lab_load_siw eth0 "$dev" 2>&1)
	rc=$?
else
	err=$(lab_load_swiwarp eth0 "$dev" 2>&1)
	rc=$?
fi
echo "$err"
[ $rc -eq 2 ] && skip_all "(swiwarp.ko not built)"
[ $rc -ne 0 ] && skip_all "(swiwarp.ko registered no device: $(grep -v 'no provider at' <<<"$err" | tr '\n' ' '))"
# Guest 2 runs the ib_write_bw -R client: perftest's re-listen race
# (lab_delay_syn in tests/lab/lib.sh).
if [ "$LAB_ID" != 1 ]; then
	lab_delay_syn "${LAB_PERFTEST_SYN_DELAY_MS:-300}" || lab_fail "provider.lab.syn-delay.g$LAB_ID" "tc setup failed"
fi
# Guest 2 waits here while guest 1 runs lab-guest.sh (its verbs program
# alone may take 120 s).
lab_barrier up 400 || { lab_fail "provider.lab.barrier.g$LAB_ID" "peer never came up"; lab_finish; }

# --- rping ------------------------------------------------------------------
if [ "$LAB_ID" = 1 ]; then
	timeout 90 stdbuf -oL rping -s -a "$LAB_IP" -C 8 -S 200 -v >"$LAB_OUT/rping-server.out" 2>&1 &
	srv=$!
	lab_wait_listen 7174 30
	lab_barrier rping-listen 60
	wait $srv
	src=$?
	lab_barrier rping-done 120
	crc=$(cat "$LAB_SHARED/rping-client.rc" 2>/dev/null || echo missing)
	lines=$(grep -c 'ping data' "$LAB_OUT/rping-server.out" 2>/dev/null)
	cat "$LAB_OUT/rping-server.out" "$LAB_SHARED/rping-client.out" 2>/dev/null | tail -20
	if [ "$src" = 0 ] && [ "$crc" = 0 ] && [ "$lines" = 8 ]; then
		lab_pass provider.lab.rping
	else
		lab_fail provider.lab.rping "server rc $src, client rc $crc, $lines/8 pings"
	fi
else
	lab_barrier rping-listen 60
	timeout 90 stdbuf -oL rping -c -a "$LAB_PEER_IP" -C 8 -S 200 -V >"$LAB_SHARED/rping-client.out" 2>&1
	echo $? >"$LAB_SHARED/rping-client.rc"
	lab_barrier rping-done 120
fi

# --- ib_write_bw -R ------------------------------------------------------------
# lab_pair runs it once more if perftest's clock calibration spoiled the
# first attempt (tests/lab/lib.sh).
bw=(ib_write_bw -R -d "$dev" -s 65536 -n 200)
lab_pair bw 1 2 120 18515 "$LAB_OUT/bw-server" "$LAB_SHARED/bw-client" -- \
	stdbuf -oL "${bw[@]}" -- "${bw[@]}" "$LAB_PEER_IP"
if [ "$LAB_ID" = 1 ]; then
	cat "$LAB_SHARED/bw-client.log" "$LAB_SHARED/bw-client.err" 2>/dev/null | tail -8
	if [ "$lab_rc_s" = 0 ] && [ "$lab_rc_c" = 0 ] && grep -Eq '^ *65536 +200 ' "$LAB_SHARED/bw-client.log"; then
		lab_pass "provider.lab.ib_write_bw${lab_pair_note:+ ($lab_pair_note)}"
	else
		lab_fail provider.lab.ib_write_bw "server rc $lab_rc_s, client rc $lab_rc_c${lab_pair_note:+; $lab_pair_note}"
	fi
fi
# lab-guest.sh's FAIL lines are in the results already; its status still
# decides this guest's.
[ "$single_rc" -eq 0 ] || LAB_FAILURES=$((LAB_FAILURES + 1))
lab_finish
