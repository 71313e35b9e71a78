#!/usr/bin/env bash
# Robustness of swiwarp.ko against a hostile peer, in one 2-guest lab boot
# (tests/robust/lab-guest.sh): tools/hostile's fixed-seed malformed MPA and
# FPDU cases against `rping -s -P` and, for the verbs.* cases (Atomic
# Requests, which need REMOTE_ATOMIC), `atomic-verify -b` (every offending
# connection must end in a
# Reject, Terminate, close or reset, never hang), no kernel warnings (the lab
# fails the run on BUG/WARNING/Oops in dmesg), slab counts back to baseline,
# an ordinary rping afterwards, memory-protection tests with canaries
# (tests/robust/prot.c) and a clean rmmod.
#
# With swiwarp the guests boot different kernels (guest 1 Debian 12's 6.1,
# guest 2 Debian 13's 6.12; robust_mixed of tests/robust/suite-lib.sh) and
# the whole run goes both ways: guest 1 is the target first (robust.*),
# then guest 2 (robust.target2.*); names start with "g1-6.1,g2-6.12/".
#
# Known bugs (tests/known-bugs) are reported as SKIP with "known bug: ..."
# unless CHECK_STRICT=1.  ROBUST_DEV=siw runs the same
# against upstream siw (for comparison; not part of make check).
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
export BUILD=${BUILD:-$top/build} SWIWARP_TOP=$top
cd "$top" || exit 1
source tests/robust/suite-lib.sh
if [ "${ROBUST_DEV:-swiwarp}" = swiwarp ]; then
	robust_prereq robust "$BUILD/tools/hostile/hostile" "$BUILD/tests/robust/robust-prot" || exit 0
else
	for f in "$BUILD/tools/hostile/hostile" "$BUILD/tests/robust/robust-prot"; do
		[ -x "$f" ] || { skip robust.all "(not built: $f; run make all)"; exit 0; }
	done
fi
t0=$(date +%s)
robust_mixed robust "${ROBUST_DEV:-swiwarp}" || exit 0
# Two kernels: attack each one's swiwarp.  One kernel: guest 1 only.
[ -n "${ktag:-}" ] && ROBUST_TARGETS=${ROBUST_TARGETS:-1 2}
# hostile's verbs.* cases need a target whose buffer has REMOTE_ATOMIC:
# atomic-verify -b (tests/swiwarp/atomic-verify.c), built as 63-swiwarp-data
# builds it.  swiwarp only: siw has no RFC 7306.
if [ "${ROBUST_DEV:-swiwarp}" = swiwarp ]; then
	suite=robust
	out=$BUILD/lab/robust-bait
	mkdir -p "$out"
	# shellcheck disable=SC2034 # read as ${!v} below
	build_data_verify && ROBUST_BAIT=$out/atomic-verify
fi
# The lab passes no environment through: put the settings on the command.
cmd=
for v in ROBUST_DEV ROBUST_SEED ROBUST_N CHECK_STRICT ROBUST_MPA_TIMEOUT_MS ROBUST_TARGETS ROBUST_BAIT; do
	[ -n "${!v:-}" ] && cmd+="$v=$(printf '%q' "${!v}") "
done
# Allocation tracking on the kmalloc caches: the slab baseline check counts
# objects per call site (tests/robust/slab-lib.sh, slab_sites).
LAB_APPEND="slub_debug=U,kmalloc-*${LAB_APPEND:+ $LAB_APPEND}" \
	robust_lab robust 900 "${LAB_MEM:-1024}" "${cmd}tests/robust/lab-guest.sh"
echo "80-robust: $(($(date +%s) - t0)) s"
exit 0
