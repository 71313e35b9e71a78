#!/usr/bin/env bash
# Robustness of swiwarp.ko against a hostile peer, in one 2-guest lab boot
# (tests/robust/lab-guest.sh): tools/hostile's fixed-seed malformed MPA and
# FPDU cases against `rping -s -P` (every offending connection must end in a
# Reject, Terminate, close or reset, never hang), no kernel warnings (the lab
# fails the run on BUG/WARNING/Oops in dmesg), slab counts back to baseline,
# an ordinary rping afterwards, memory-protection tests with canaries
# (tests/robust/prot.c) and a clean rmmod.
#
# Known kernel bugs (tests/robust/known-bugs) are reported as SKIP with
# "known bug: ..." unless ROBUST_STRICT=1.  ROBUST_DEV=siw runs the same
# against upstream siw (for comparison; not part of make check).
set -uo pipefail
top=${SWIWARP_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
export BUILD=${BUILD:-$top/build} SWIWARP_TOP=$top
cd "$top" || exit 1
source tests/robust/suite-lib.sh
if [ "${ROBUST_DEV:-swiwarp}" = swiwarp ]; then
	robust_prereq robust "$BUILD/tools/hostile/hostile" "$BUILD/tools/hostile/robust-prot" || exit 0
else
	for f in "$BUILD/tools/hostile/hostile" "$BUILD/tools/hostile/robust-prot"; do
		[ -x "$f" ] || { echo "SKIP: robust.all (not built: $f; run make all)"; exit 0; }
	done
fi
# The lab passes no environment through: put the settings on the command.
cmd=
for v in ROBUST_DEV ROBUST_SEED ROBUST_N ROBUST_STRICT ROBUST_MPA_TIMEOUT_MS; do
	[ -n "${!v:-}" ] && cmd+="$v=$(printf '%q' "${!v}") "
done
# Allocation tracking on the kmalloc caches: the slab baseline check counts
# objects per call site (tests/robust/slab-lib.sh, slab_sites).
LAB_APPEND="slub_debug=U,kmalloc-*${LAB_APPEND:+ $LAB_APPEND}" \
	robust_lab robust "${ROBUST_TIMEOUT:-600}" "${LAB_MEM:-1024}" "${cmd}tests/robust/lab-guest.sh"
exit 0
