#!/usr/bin/env bash
# The libswiwarp provider against the real swiwarp.ko in a lab guest:
# device discovery (ibv_devices, ibv_devinfo -v), a verbs program that
# creates PD/MR/CQ/QP/SRQ and exercises the rings, and strace checks that the
# fast path makes no system call and the doorbell rings only on an idle SQ.
# SKIPs (with the reason) while the lab, the provider or a device-registering
# swiwarp.ko is missing.
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
export BUILD=${BUILD:-$top/build}
cd "$top" || exit 1

names=(device_up ibv_devices ibv_devinfo verbs fastpath_no_syscalls
	doorbell_on_idle)
skip_all() {
	for n in "${names[@]}"; do echo "SKIP: provider.lab.$n $1"; done
	exit 0
}

[ -x tests/lab/lab ] || skip_all "(no lab: tests/lab/lab missing)"
for f in "$BUILD/userspace/provider/libswiwarp-rdmav34.so" \
	"$BUILD/userspace/provider/provider_lab_verbs"; do
	[ -f "$f" ] || skip_all "(not built: $f; run make all)"
done
ko=
for k in "${SWIWARP_KO:-}" kernel/swiwarp.ko "$BUILD/kernel/swiwarp.ko"; do
	[ -n "$k" ] && [ -f "$k" ] && ko=$k && break
done
[ -n "$ko" ] || skip_all "(swiwarp.ko not built yet)"

out=$(mktemp -d "${TMPDIR:-/tmp}/provider-lab.XXXXXX")
trap 'rm -rf "$out"' EXIT
nice tests/lab/lab run -n 1 --name provider --timeout "${PROVIDER_LAB_TIMEOUT:-420}" \
	-- tests/provider/lab-guest.sh >"$out/log" 2>&1
rc=$?
# lab run prints the guest's PASS/FAIL/SKIP lines and its own verdict.
cat "$out/log"
if [ $rc -ne 0 ] && ! grep -q '^FAIL:' "$out/log"; then
	echo "FAIL: provider.lab.run [lab run exited $rc]"
fi
exit 0
