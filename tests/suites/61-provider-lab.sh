#!/usr/bin/env bash
# The libswiwarp provider against the real swiwarp.ko in a lab guest:
# device discovery (ibv_devices, ibv_devinfo -v), a verbs program that
# creates PD/MR/CQ/QP/SRQ and exercises the rings, and strace checks that the
# fast path makes no system call and the doorbell rings only on an idle SQ;
# then rping and ib_write_bw -R between two guests.  One boot of two guests
# does both (the one-guest checks on guest 1 first).
# SKIPs (with the reason) while the lab, the provider or a device-registering
# swiwarp.ko is missing.
set -uo pipefail
# One vCPU per guest: a functional suite, about 15-35 % faster so (Documentation/lab.md,
# "The time budget of make check"); LAB_SMP overrides it.
export LAB_SMP=${LAB_SMP:-1}
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$top/tests/swiwarp/suite-lib.sh"
cd "$top" || exit 1

why=$(suite_missing "$BUILD/userspace/provider/libswiwarp-rdmav34.so" \
	"$BUILD/tests/provider/provider_lab_verbs")
if [ -n "$why" ]; then
	for n in device_up ibv_devices ibv_devinfo verbs fastpath_no_syscalls rping ib_write_bw \
		doorbell_on_idle; do
		skip "provider.lab.$n" "($why)"
	done
	exit 0
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/provider-lab.XXXXXX")
trap 'rm -rf "$out"' EXIT
# One boot of two guests: guest 1 runs the one-guest checks
# (tests/provider/lab-guest.sh) before both run the rdma_cm programs.
nice tests/lab/lab run -n 2 --name provider --timeout 480 \
	-- tests/provider/lab-rping.sh >"$out/log" 2>&1
rc=$?
# lab run prints the guests' PASS/FAIL/SKIP lines and its own verdict.
cat "$out/log"
if [ $rc -ne 0 ] && ! grep -q '^FAIL:' "$out/log"; then
	fail provider.lab.run "lab run exited $rc"
fi
exit 0
