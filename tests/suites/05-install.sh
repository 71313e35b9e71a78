#!/usr/bin/env bash
# check: host-only (boots no guest: runs alongside the background suites)
# `make install DESTDIR=...` stages the conventional layout (issue 2, item 2).
set -uo pipefail
top=${SWIWARP_TOP:?}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
if ! make -s -C "$top" install DESTDIR="$stage" >"$stage.log" 2>&1; then
	echo "FAIL: install.make (see below)"
	cat "$stage.log"
	exit 1
fi
echo "PASS: install.make"
lib=usr/lib/x86_64-linux-gnu
# The module, once per kernel whose headers are installed (make builds for
# each: Debian 12's 6.1 and Debian's 6.12).
kvers=$("$top/tools/kernels.sh" headers | awk '{print $1}')
[ -n "$kvers" ] || echo "FAIL: install.kernels (no kernel headers installed)"
for kver in $kvers; do
	ko=lib/modules/$kver/extra/swiwarp.ko
	if [ ! -e "$stage/$ko" ]; then
		echo "FAIL: install.$ko missing"
		continue
	fi
	echo "PASS: install.$ko"
	# The staged module must be the one built for the kernel it is filed under.
	modinfo -F vermagic "$stage/$ko" | grep -q "^$kver " &&
		echo "PASS: install.vermagic-matches-$kver" ||
		echo "FAIL: install.vermagic-matches-$kver"
done
for f in \
	"$lib/libibverbs/libswiwarp-rdmav34.so" \
	etc/libibverbs.d/swiwarp.driver \
	"$lib/wireshark/plugins/4.0/epan/swiwarp.so" \
	usr/include/dpi/dpi.h \
	"$lib/libdpi.so" \
	"$lib/pkgconfig/dpi.pc"; do
	if [ -e "$stage/$f" ]; then
		echo "PASS: install.$f"
	else
		echo "FAIL: install.$f missing"
	fi
done
grep -qx 'driver swiwarp' "$stage/etc/libibverbs.d/swiwarp.driver" &&
	echo "PASS: install.driver-file-names-swiwarp" ||
	echo "FAIL: install.driver-file-names-swiwarp"
