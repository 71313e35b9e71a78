#!/bin/bash
# Build a copy of upstream siw whose connection settings are module
# parameters, for the interop matrix (tests/suites/62-swiwarp-matrix.sh).
# In 6.1 they are compile-time constants (siw_main.c: mpa_crc_required,
# mpa_crc_strict, peer_to_peer, mpa_version).  The copy is made at test
# time from the source tests/lab/build-siw.sh extracted ($BUILD/siw-src);
# nothing of siw is committed.  The declarations are rewritten with sed
# (const dropped, module_param added); the protocol code is untouched.
# Usage: matrix-siw-params.sh OUTDIR   (prints OUTDIR/siw.ko)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
# the kernel the lab boots by default (Debian's newest 6.1 ABI here, which
# moves with the archive: a fixed release was missing on a fresh machine)
kver=$("$top/tools/kernels.sh" default) || { echo "matrix-siw-params: no kernel headers" >&2; exit 1; }
# SIW_KDIR, not KDIR: a KDIR in the environment is meant for our own module
KDIR=${SIW_KDIR:-$("$top/tools/kernels.sh" kdir "$kver")}
out=${1:?usage: matrix-siw-params.sh OUTDIR}
src=$BUILD/siw-src
die() { echo "matrix-siw-params: $*" >&2; exit 1; }

if [ ! -f "$src/siw_main.c" ]; then
	"$top/tests/lab/build-siw.sh" >/dev/null || die "tests/lab/build-siw.sh failed"
fi
[ -f "$src/siw_main.c" ] || die "no siw source in $src"
if [ -f "$out/siw.ko" ] && [ "$out/siw.ko" -nt "$src/siw_main.c" ] && [ "$out/siw.ko" -nt "$0" ] &&
	[ "$(modinfo -F vermagic "$out/siw.ko" 2>/dev/null | cut -d' ' -f1)" = "$kver" ]; then
	echo "$out/siw.ko"
	exit 0
fi
rm -rf "$out.new"
mkdir -p "$out.new"
cp "$src"/*.c "$src"/*.h "$src"/Makefile "$out.new"/
for v in mpa_crc_required mpa_crc_strict peer_to_peer; do
	grep -q "^const bool $v;" "$out.new/siw_main.c" || die "siw_main.c: no 'const bool $v;'"
	sed -i "s/^const bool $v;/bool $v;\nmodule_param($v, bool, 0644);/" "$out.new/siw_main.c"
	sed -i "s/^extern const bool $v;/extern bool $v;/" "$out.new"/*.h
done
grep -q '^u_char mpa_version = MPA_REVISION_2;' "$out.new/siw_main.c" || die "siw_main.c: no mpa_version"
sed -i 's/^u_char mpa_version = MPA_REVISION_2;/&\nmodule_param(mpa_version, byte, 0644);/' "$out.new/siw_main.c"
nice make -C "$KDIR" M="$out.new" CONFIG_RDMA_SIW=m -j2 modules >"$out.new/build.log" 2>&1 ||
	die "build failed (see $out.new/build.log)"
rm -rf "$out"
mv "$out.new" "$out"
echo "$out/siw.ko"
