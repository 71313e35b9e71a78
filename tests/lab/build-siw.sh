#!/usr/bin/env bash
# Build the upstream Linux siw driver out of tree, as the reference peer for
# lab tests.  Debian's kernels do not ship siw, so we take
# drivers/infiniband/sw/siw/ from Debian's linux-source-X.Y tarball of the
# guest kernel's series and build it against that kernel's headers.
#
#   build-siw.sh [KERNEL]    KERNEL: a release, a series (6.1, 6.12) or
#                            "default" (tools/kernels.sh resolve; the default
#                            is $LAB_KVER, else the lab's default kernel)
#
# Result: for the lab's default kernel $BUILD/siw/siw.ko (source in
# $BUILD/siw-src/), for any other $BUILD/siw-<release>/siw.ko (source in
# $BUILD/siw-src-<series>/).  All of it lives under build/, which is
# gitignored: siw source and binaries are never committed.
#
# Idempotent: does nothing when siw.ko is newer than the tarball, the headers
# and this script, and was built for the kernel asked for.
# Prints the path of siw.ko on success.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
kernels=$top/tools/kernels.sh

die() { echo "build-siw: $*" >&2; exit 1; }

KVER=$("$kernels" resolve "${1:-${LAB_KVER:-default}}") || die "no such kernel"
# SIW_KDIR, not KDIR: a KDIR in the environment is meant for our own module.
KDIR=${SIW_KDIR:-$("$kernels" kdir "$KVER")} || die "no headers for $KVER"
SRC_TAR=${SIW_SRC_TAR:-$("$kernels" source "$KVER")} || die "no linux-source for $KVER"
series=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$KVER")
if [ "$KVER" = "$("$kernels" resolve default)" ]; then
	src=$BUILD/siw-src out=$BUILD/siw
else
	src=$BUILD/siw-src-$series out=$BUILD/siw-$KVER
fi
ko=$out/siw.ko

[ -f "$KDIR/Makefile" ] || die "no kernel headers in $KDIR"
[ -f "$SRC_TAR" ] || die "no $SRC_TAR"

fresh() {
	[ -f "$ko" ] && [ "$ko" -nt "$SRC_TAR" ] && [ "$ko" -nt "$KDIR/Makefile" ] &&
		[ "$ko" -nt "$0" ] && modinfo -F vermagic "$ko" 2>/dev/null | grep -q "^$KVER "
}
if fresh; then
	echo "$ko"
	exit 0
fi

mkdir -p "$BUILD"
# Serialise concurrent builds (several lab suites may ask at once).
exec 9>"$BUILD/.siw-build.lock"
flock 9
if fresh; then
	echo "$ko"
	exit 0
fi

if [ ! -f "$src/.extracted" ] || [ "$SRC_TAR" -nt "$src/.extracted" ]; then
	rm -rf "$src"
	mkdir -p "$src"
	# Only the siw directory; the tarball's top directory name varies.
	tar -xf "$SRC_TAR" -C "$src" --wildcards --strip-components=5 \
		'*/drivers/infiniband/sw/siw/*' >&2
	[ -f "$src/siw_main.c" ] || die "siw sources not found in $SRC_TAR"
	touch "$src/.extracted"
fi

# Build in a scratch copy so kbuild droppings stay out of the pristine
# source, then swap it in whole so a running lab never sees half a build.
tmp=$out.new
rm -rf "$tmp"
mkdir -p "$tmp"
cp "$src"/*.c "$src"/*.h "$src"/Makefile "$tmp"/
nice make -C "$KDIR" M="$tmp" CONFIG_RDMA_SIW=m -j"${LAB_JOBS:-2}" modules >&2 ||
	die "kernel build of siw failed"
[ -f "$tmp/siw.ko" ] || die "build finished but $tmp/siw.ko is missing"
rm -rf "$out.old"
[ -d "$out" ] && mv "$out" "$out.old"
mv "$tmp" "$out"
rm -rf "$out.old"
echo "$ko"
