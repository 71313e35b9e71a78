#!/usr/bin/env bash
# Runs inside one lab guest for tests/suites/61-provider-lab.sh: brings up
# swiwarp0 (lab_load_swiwarp installs the provider into the guest's
# throw-away root as a package would: the .so in the provider directory and
# a driver file naming it), and checks it with Debian's ibverbs-utils and
# with provider_lab_verbs.
set -uo pipefail
source "$LAB_TOP/tests/lab/lib.sh"

prog=$BUILD/tests/provider/provider_lab_verbs
dev=swiwarp0
names=(device_up ibv_devices ibv_devinfo verbs fastpath_no_syscalls
	doorbell_on_idle)
skip_all() {
	for n in "${names[@]}"; do lab_skip "provider.lab.$n" "$1"; done
	exit 0
}

# PROVIDER_LAB_DEV=siw runs the same checks on upstream siw with Debian's
# libsiw (a reference for the checks themselves, not a test of ours).
if [ "${PROVIDER_LAB_DEV:-}" = siw ]; then
	dev=siw0
	err=$(lab_load_siw eth0 "$dev" 2>&1)
else
	err=$(lab_load_swiwarp eth0 "$dev" 2>&1)
fi
rc=$?
echo "$err"
case $rc in
0) ;;
2) skip_all "(swiwarp.ko not built: $err)" ;;
*) # The module exists but produced no device: the kernel side is not
   # there yet.  Say so instead of testing the provider against nothing.
   skip_all "(swiwarp.ko registered no device: $(grep -v 'no provider at' <<<"$err" | tr '\n' ' '))" ;;
esac
lab_pass provider.lab.device_up

# --- ibv_devices ---------------------------------------------------------
out=$(IBV_SHOW_WARNINGS=1 ibv_devices 2>&1)
echo "$out"
if grep -q "^ *$dev " <<<"$out" && ! grep -qi "no userspace" <<<"$out"; then
	lab_pass provider.lab.ibv_devices
else
	lab_fail provider.lab.ibv_devices "$dev not listed or no driver matched"
fi

# --- ibv_devinfo -v --------------------------------------------------------
out=$(IBV_SHOW_WARNINGS=1 ibv_devinfo -v -d "$dev" 2>&1)
echo "$out"
why=()
field() { awk -v k="$1:" '$1 == k {print $2; exit}' <<<"$out"; }
[ "$(field transport)" = iWARP ] || why+=("transport $(field transport)")
[ "$(field state)" = PORT_ACTIVE ] || why+=("port state $(field state)")
[ "$(field link_layer)" = Ethernet ] || why+=("link_layer $(field link_layer)")
[ "$(field phys_port_cnt)" = 1 ] || why+=("phys_port_cnt $(field phys_port_cnt)")
for k in max_qp max_qp_wr max_sge max_cq max_cqe max_mr max_pd; do
	v=$(field "$k")
	[[ $v =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || why+=("$k '$v'")
done
[ -n "$(field fw_ver)" ] || why+=("no fw_ver")
# What the provider reports must be what the kernel exports in sysfs.
sys=/sys/class/infiniband/$dev
[ "$(field node_guid)" = "$(cat "$sys/node_guid")" ] ||
	why+=("node_guid $(field node_guid) != sysfs $(cat "$sys/node_guid")")
sysfw=$(cat "$sys/fw_ver" 2>/dev/null)
if [ -n "$sysfw" ] && [ "$(field fw_ver)" != "$sysfw" ]; then
	why+=("fw_ver $(field fw_ver) != sysfs $sysfw")
fi
if [ ${#why[@]} -eq 0 ]; then
	lab_pass provider.lab.ibv_devinfo
else
	lab_fail provider.lab.ibv_devinfo "${why[*]}"
fi

# --- the verbs program, under strace when available ------------------------
trace=$LAB_OUT/strace.txt
# Bounded: a verb stuck in the kernel must not eat the whole lab timeout
# (the stuck task itself cannot be killed, but we can stop waiting for it).
tracer=()
command -v strace >/dev/null && tracer=(strace -f -qq -o "$trace")
timeout -k 5 120 "${tracer[@]}" "$prog" "$dev" 20000 >"$LAB_OUT/verbs.out" 2>&1
vrc=$?
cat "$LAB_OUT/verbs.out"
grep -E '^(PASS|FAIL|SKIP): ' "$LAB_OUT/verbs.out" >>"$LAB_OUT/results"
if [ $vrc -eq 0 ]; then
	lab_pass provider.lab.verbs
elif [ $vrc -ge 124 ]; then
	lab_fail provider.lab.verbs "provider_lab_verbs did not finish in 120 s; last call: $(tail -n 1 "$trace" 2>/dev/null | cut -c1-100)"
else
	lab_fail provider.lab.verbs "provider_lab_verbs exited $vrc"
fi

if [ ! -s "$trace" ]; then
	lab_skip provider.lab.fastpath_no_syscalls "(strace not installed)"
	lab_skip provider.lab.doorbell_on_idle "(strace not installed)"
	lab_finish
fi
# Syscall lines between the sched_yield() markers of provider_lab_verbs:
# markers 1..2 bracket the fast path, 4..5 the two idle-QP post_sends.
between() { # FIRST LAST: syscall names between the FIRST and LAST marker
	awk -v a="$1" -v b="$2" '
		/ sched_yield\(/ { m++; next }
		m >= a && m < b && !/^[0-9]+ +(\+\+\+|---)/ {
			sub(/^[0-9]+ +/, ""); sub(/\(.*/, ""); print }' "$trace"
}
markers=$(grep -c ' sched_yield(' "$trace")
fast=$(between 1 2)
if [ "$markers" -ne 6 ]; then
	lab_fail provider.lab.fastpath_no_syscalls "expected 6 markers, saw $markers"
elif [ -z "$fast" ]; then
	lab_pass provider.lab.fastpath_no_syscalls
else
	lab_fail provider.lab.fastpath_no_syscalls \
		"syscalls in post_recv/poll_cq/req_notify_cq: $(echo $fast)"
fi
db=$(between 4 5 | sort | uniq -c | tr -s ' ' | sed 's/^ //')
if [ "$db" = "2 write" ]; then
	lab_pass provider.lab.doorbell_on_idle
else
	lab_fail provider.lab.doorbell_on_idle "expected exactly 2 write (doorbells), saw: ${db//$'\n'/, }"
fi
lab_finish
