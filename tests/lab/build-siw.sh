#!/usr/bin/env bash
# Build the upstream Linux siw driver out of tree, as the reference peer for
# lab tests.  Debian's kernel does not ship siw, so we take
# drivers/infiniband/sw/siw/ from Debian's linux-source-6.1 tarball and build
# it against the matching linux-headers package.
#
# Result: $BUILD/siw/siw.ko (source in $BUILD/siw-src/).  Both live under
# build/, which is gitignored: siw source and binaries are never committed.
#
# Idempotent: does nothing when siw.ko is newer than the tarball and headers.
# Prints the path of siw.ko on success.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
KDIR=${KDIR:-$(ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null | sort -V | tail -n1)}
SRC_TAR=${SIW_SRC_TAR:-$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1)}
src=$BUILD/siw-src
out=$BUILD/siw
ko=$out/siw.ko

die() { echo "build-siw: $*" >&2; exit 1; }

[ -n "$KDIR" ] && [ -f "$KDIR/Makefile" ] || die "no kernel headers in /usr/src (linux-headers-6.1.*-amd64)"
[ -n "$SRC_TAR" ] && [ -f "$SRC_TAR" ] || die "no /usr/src/linux-source-6.1.tar.* (apt-get install linux-source-6.1)"

if [ -f "$ko" ] && [ "$ko" -nt "$SRC_TAR" ] && [ "$ko" -nt "$KDIR/Makefile" ] &&
	[ "$ko" -nt "$0" ]; then
	echo "$ko"
	exit 0
fi

mkdir -p "$BUILD"
# Serialise concurrent builds (several lab suites may ask at once).
exec 9>"$BUILD/.siw-build.lock"
flock 9
if [ -f "$ko" ] && [ "$ko" -nt "$SRC_TAR" ] && [ "$ko" -nt "$KDIR/Makefile" ] &&
	[ "$ko" -nt "$0" ]; then
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
tmp=$BUILD/siw.new
rm -rf "$tmp"
mkdir -p "$tmp"
cp "$src"/*.c "$src"/*.h "$src"/Makefile "$tmp"/
nice make -C "$KDIR" M="$tmp" CONFIG_RDMA_SIW=m -j"${LAB_JOBS:-2}" modules >&2 ||
	die "kernel build of siw failed"
[ -f "$tmp/siw.ko" ] || die "build finished but $tmp/siw.ko is missing"
rm -rf "$BUILD/siw.old"
[ -d "$out" ] && mv "$out" "$BUILD/siw.old"
mv "$tmp" "$out"
rm -rf "$BUILD/siw.old"
echo "$ko"
