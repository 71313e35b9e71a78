#!/usr/bin/env bash
# The Debian kernels installed on this machine, for the build (kernel/Makefile),
# the lab (tests/lab/lab, mkinitramfs.sh, build-siw.sh) and the suites.  Asked
# at the moment it runs, never cached: on a fresh machine the packages only
# appear once tools/setup-host.sh has run.
#
#   kernels.sh headers        "KVER KDIR" for every kernel whose headers are
#                             installed (/usr/src/linux-headers-*), oldest first
#   kernels.sh images         KVER of every bootable kernel (/boot/vmlinuz-KVER
#                             and /lib/modules/KVER/modules.dep), oldest first
#   kernels.sh default        the kernel kernel/swiwarp.ko is built for and the
#                             lab boots unless told otherwise: the newest 6.1
#                             (Debian 12's own series) whose headers are
#                             installed, else the newest with headers at all
#   kernels.sh resolve NAME   NAME as a release of an installed image: a full
#                             release (6.12.117+deb12-amd64) is kept, a series
#                             (6.1, 6.12) is the newest installed release of it,
#                             "default" is the default above
#   kernels.sh kdir KVER      the headers directory of release KVER
#   kernels.sh source KVER    Debian's linux-source tarball of KVER's series
#   kernels.sh image KVER     the bootable image of KVER (/boot/vmlinuz-KVER, or
#                             a debug kernel's bzImage)
#   kernels.sh moddir KVER    the modules directory of KVER (/lib/modules/KVER,
#                             or a debug kernel's)
#   kernels.sh config KVER    the kernel config of KVER (/boot/config-KVER, or
#                             a debug kernel's .config)
#   kernels.sh debug-cache    where debug kernels are built
#
# Debug kernels (issue 15: KASAN, lockdep, ...) are built by
# tools/debug-kernel.sh into $SWIWARP_DEBUG_KERNELS/<series>/ and never
# installed: `resolve debug` (the newest) or `resolve debug-<series>` names
# one, and image, moddir, kdir and source know them.  They are never the
# default and are listed by `headers` only with SWIWARP_WITH_DEBUG_KERNELS=1
# (SWIWARP_WITH_DEBUG_KERNELS=1 make -C kernel builds swiwarp.ko for them
# too), so an ordinary build or lab run never picks one.
#
# KVER is the kernel release (uname -r), e.g. 6.1.0-56-amd64; Debian's
# include/config/kernel.release holds the upstream version instead, so it is
# read from include/generated/utsrelease.h.
set -euo pipefail

DEFAULT_SERIES=6.1
# Resolved: a guest's /init checks the module tree under its new root
# before switching to it, where an absolute symlink on the way (e.g. the
# cache moved to a bigger disk and linked back) would point into the
# initramfs instead.  The guest's root is the host's, so the resolved path
# is the same in both.
DEBUG_KERNELS=$(readlink -m "${SWIWARP_DEBUG_KERNELS:-/var/cache/swiwarp/debug-kernel}")

die() { echo "kernels.sh: $*" >&2; exit 1; }

# debug_kernels: "KVER DIR" of every built debug kernel (DIR holds src/,
# root/lib/modules/KVER/ and release; tools/debug-kernel.sh).
debug_kernels() {
	local d v
	for d in "$DEBUG_KERNELS"/*/; do
		d=${d%/}
		[ -s "$d/release" ] || continue
		v=$(cat "$d/release")
		[ -f "$d/src/arch/x86/boot/bzImage" ] && [ -f "$d/root/lib/modules/$v/modules.dep" ] &&
			echo "$v $d"
	done | sort -V
}
debug_dir() { awk -v v="$1" '$1 == v { print $2 }' < <(debug_kernels); }

installed_headers() {
	local d v
	for d in /usr/src/linux-headers-*; do
		[ -f "$d/Makefile" ] && [ -f "$d/include/generated/utsrelease.h" ] || continue
		v=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$d/include/generated/utsrelease.h")
		[ -n "$v" ] && echo "$v $d"
	done | sort -V
}

headers() {
	{
		installed_headers
		if [ "${SWIWARP_WITH_DEBUG_KERNELS:-0}" = 1 ]; then
			debug_kernels | awk '{ print $1, $2 "/src" }'
		fi
	} | sort -V
}

images() {
	local f v
	for f in /boot/vmlinuz-*; do
		[ -f "$f" ] || continue
		v=${f#/boot/vmlinuz-}
		[ -f "/lib/modules/$v/modules.dep" ] && echo "$v"
	done | sort -V
}

# newest_of SERIES: the newest release of SERIES among stdin's first words.
# 6.1 must not match 6.12: the series is followed by "." or "-".
newest_of() {
	local s=${1//./\\.}
	awk '{print $1}' | grep -E "^${s}[.-]" | tail -n 1 || true
}

default_kver() {
	local all v
	all=$(installed_headers)
	v=$(newest_of "$DEFAULT_SERIES" <<<"$all")
	[ -n "$v" ] || v=$(awk '{print $1}' <<<"$all" | tail -n 1)
	[ -n "$v" ] || die "no kernel headers installed (apt-get install linux-headers-amd64)"
	echo "$v"
}

resolve() {
	local name=$1 all v
	all=$(images)
	if [ "$name" = default ]; then
		# The default build's kernel if it is bootable, else the newest
		# bootable 6.1, else the newest bootable kernel.
		v=$(default_kver 2>/dev/null || true)
		if [ -z "$v" ] || ! grep -qxF "$v" <<<"$all"; then
			v=$(newest_of "$DEFAULT_SERIES" <<<"$all")
			[ -n "$v" ] || v=$(tail -n 1 <<<"$all")
		fi
	elif grep -qxF "$name" <<<"$all"; then
		v=$name
	elif [ "$name" = debug ]; then
		v=$(debug_kernels | awk '{ print $1 }' | tail -n 1)
	elif [[ $name =~ ^debug-([0-9]+\.[0-9]+)$ ]]; then
		v=$(debug_kernels | newest_of "${BASH_REMATCH[1]}")
	elif [ -n "$(debug_dir "$name")" ]; then
		v=$name
	elif [[ $name =~ ^[0-9]+\.[0-9]+$ ]]; then
		v=$(newest_of "$name" <<<"$all")
	else
		v=
	fi
	[ -n "$v" ] || case $name in
		debug*) die "no debug kernel '$name' built (tools/debug-kernel.sh build [SERIES])" ;;
		*) die "no installed kernel image for '$name' (installed: $(echo $all))" ;;
		esac
	echo "$v"
}

# installed_or_debug KVER PATH PROBE DEBUG_PATH WHAT PACKAGE: a file or
# directory of kernel KVER: Debian's PATH (installed by PACKAGE) if PATH/PROBE
# is a file (PROBE "": PATH itself), else DEBUG_PATH inside KVER's debug
# kernel directory.
installed_or_debug() {
	local v=$1 path=$2 probe=$3 sub=$4 what=$5 pkg=$6 d
	if [ -f "$path${probe:+/$probe}" ]; then
		echo "$path"
		return 0
	fi
	d=$(debug_dir "$v")
	[ -n "$d" ] || die "no $what for $v (apt-get install $pkg)"
	echo "$d/$sub"
}

kdir() {
	if [ -f "/usr/src/linux-headers-$1/Makefile" ]; then
		echo "/usr/src/linux-headers-$1"
	else
		installed_or_debug "$1" "/lib/modules/$1/build" Makefile src headers "linux-headers-$1"
	fi
}

source_tar() {
	local v=$1 series f
	series=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$v")
	for f in /usr/src/linux-source-"$series".tar.*; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	die "no /usr/src/linux-source-$series.tar.* (apt-get install linux-source-$series)"
}

image() { installed_or_debug "$1" "/boot/vmlinuz-$1" "" src/arch/x86/boot/bzImage image "linux-image-$1"; }
moddir() { installed_or_debug "$1" "/lib/modules/$1" modules.dep "root/lib/modules/$1" modules "linux-image-$1"; }
config() { installed_or_debug "$1" "/boot/config-$1" "" src/.config config "linux-image-$1"; }

case ${1:-} in
headers) headers ;;
images) images ;;
default) default_kver ;;
resolve) resolve "${2:?kernels.sh resolve NAME}" ;;
kdir) kdir "${2:?kernels.sh kdir KVER}" ;;
source) source_tar "${2:?kernels.sh source KVER}" ;;
image) image "${2:?kernels.sh image KVER}" ;;
moddir) moddir "${2:?kernels.sh moddir KVER}" ;;
config) config "${2:?kernels.sh config KVER}" ;;
debug-cache) echo "$DEBUG_KERNELS" ;;
*) sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0" >&2; exit 2 ;;
esac
