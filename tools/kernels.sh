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
#
# KVER is the kernel release (uname -r), e.g. 6.1.0-56-amd64; Debian's
# include/config/kernel.release holds the upstream version instead, so it is
# read from include/generated/utsrelease.h.
set -euo pipefail

DEFAULT_SERIES=6.1

die() { echo "kernels.sh: $*" >&2; exit 1; }

headers() {
	local d v
	for d in /usr/src/linux-headers-*; do
		[ -f "$d/Makefile" ] && [ -f "$d/include/generated/utsrelease.h" ] || continue
		v=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$d/include/generated/utsrelease.h")
		[ -n "$v" ] && echo "$v $d"
	done | sort -V
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
	all=$(headers)
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
	elif [[ $name =~ ^[0-9]+\.[0-9]+$ ]]; then
		v=$(newest_of "$name" <<<"$all")
	else
		v=
	fi
	[ -n "$v" ] || die "no installed kernel image for '$name' (installed: $(echo $all))"
	echo "$v"
}

kdir() {
	local v=$1
	if [ -f "/usr/src/linux-headers-$v/Makefile" ]; then
		echo "/usr/src/linux-headers-$v"
	elif [ -f "/lib/modules/$v/build/Makefile" ]; then
		echo "/lib/modules/$v/build"
	else
		die "no headers for $v (apt-get install linux-headers-$v)"
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

case ${1:-} in
headers) headers ;;
images) images ;;
default) default_kver ;;
resolve) resolve "${2:?kernels.sh resolve NAME}" ;;
kdir) kdir "${2:?kernels.sh kdir KVER}" ;;
source) source_tar "${2:?kernels.sh source KVER}" ;;
*) sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0" >&2; exit 2 ;;
esac
