#!/usr/bin/env bash
# The host's share of 69-deb's guest half (Documentation/packaging.md,
# "Test"): DKMS compiles swiwarp on the host, from the swiwarp-dkms
# package's own source and dkms.conf, once per kernel, and the result is
# packed as DKMS's prebuilt-module tarball.  Debian's DKMS postinst
# (/usr/lib/dkms/common.postinst, run by swiwarp-dkms's postinst) loads
# /usr/share/swiwarp-dkms/swiwarp-VERSION.dkms.tar.gz with `dkms ldtarball`
# when that file exists, and then only installs the modules it holds
# instead of compiling them; each guest puts the tarball for its own kernel
# there (tests/swiwarp/deb-guest.sh).
#
# Usage: deb-prebuild.sh SWIWARP-DKMS.deb OUTDIR KERNEL-RELEASE...
#   OUTDIR/RELEASE/NAME-VERSION.dkms.tar.gz  `dkms mktarball --binaries-only`
#                                            for one kernel (stdout lists them)
#   OUTDIR/build-RELEASE.log                 DKMS's output for that kernel
# Needs root (`dkms add`) and a private mount namespace (unshare -m): DKMS
# 3.0 signs each module it builds with a key it creates at the fixed path
# /var/lib/dkms/mok.key, so a private directory is mounted over
# /var/lib/dkms for the build.  The host's /var/lib/dkms, /usr/src and
# /lib/modules are not written; the DKMS tree is OUTDIR/tree.
set -euo pipefail

# The half that runs in the private mount namespace.
if [ "${1:-}" = --ns ]; then
	shift
	mount --bind "$out/key" /var/lib/dkms
	d=(--dkmstree "$out/tree" --sourcetree "$out/root/usr/src")
	dkms add "${d[@]}" -m "$name" -v "$version" >"$out/add.log" 2>&1 ||
		{ cat "$out/add.log" >&2; exit 1; }
	for k in "$@"; do
		if ! dkms build "${d[@]}" -m "$name" -v "$version" -k "$k" </dev/null >"$out/build-$k.log" 2>&1; then
			tail -n 20 "$out/build-$k.log" >&2
			tail -n 30 "$out/tree/$name/$version/build/make.log" >&2 2>/dev/null || :
			echo "deb-prebuild: dkms build for $k failed (log: $out/build-$k.log)" >&2
			exit 1
		fi
		# One tarball per kernel: DKMS 3.0.10 declares `local -r` variables
		# in its mktarball and ldtarball loops, so given several kernels it
		# archives, and loads, the first kernel's modules only.
		mkdir -p "$out/$k"
		dkms mktarball "${d[@]}" -m "$name" -v "$version" -k "$k" --binaries-only \
			--archive "$out/$k/$name-$version.dkms.tar.gz" </dev/null >>"$out/build-$k.log" 2>&1 ||
			{ tail -n 20 "$out/build-$k.log" >&2; exit 1; }
	done
	exit 0
fi

if [ $# -lt 3 ]; then
	echo "usage: $0 SWIWARP-DKMS.deb OUTDIR KERNEL-RELEASE..." >&2
	exit 2
fi
deb=$1 out=$2
shift 2
[ -f "$deb" ] || { echo "deb-prebuild: no $deb" >&2; exit 1; }
command -v dkms >/dev/null || { echo "deb-prebuild: no dkms (tools/setup-host.sh installs it)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
mkdir -p "$out/root" "$out/tree" "$out/key"
dpkg-deb -x "$deb" "$out/root"

# The name and version DKMS will use are dkms.conf's, not the .deb's.
confs=("$out"/root/usr/src/*/dkms.conf)
if [ ${#confs[@]} -ne 1 ] || [ ! -f "${confs[0]}" ]; then
	echo "deb-prebuild: want exactly one usr/src/*/dkms.conf in $deb, found: ${confs[*]}" >&2
	exit 1
fi
confval() { sed -n "s/^$1=\"\\{0,1\\}\\([^\"]*\\)\"\\{0,1\\}\$/\\1/p" "${confs[0]}"; }
name=$(confval PACKAGE_NAME)
version=$(confval PACKAGE_VERSION)
if [ -z "$name" ] || [ -z "$version" ] || [ "${confs[0]}" != "$out/root/usr/src/$name-$version/dkms.conf" ]; then
	echo "deb-prebuild: dkms.conf names '$name' '$version', which does not match its directory ${confs[0]}" >&2
	exit 1
fi

# Everything DKMS does happens in the namespace (this script again, with
# --ns): its tree under OUTDIR, its source tree the unpacked package, its
# key directory private.
export name version out
unshare -m --propagation private "$0" --ns "$@"

for k in "$@"; do
	tarball=$out/$k/$name-$version.dkms.tar.gz
	list=$(tar -tzf "$tarball")
	if ! grep -qF "./dkms_main_tree/$k/$(uname -m)/module/$name.ko" <<<"$list"; then
		echo "deb-prebuild: $tarball lacks $name.ko for $k" >&2
		exit 1
	fi
	echo "$tarball"
done
