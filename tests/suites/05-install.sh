#!/usr/bin/env bash
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
kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "${KDIR:?}/include/generated/utsrelease.h")
lib=usr/lib/x86_64-linux-gnu
for f in \
	"lib/modules/$kver/extra/swiwarp.ko" \
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
# The staged module must be the one built for the kernel it is filed under.
modinfo -F vermagic "$stage/lib/modules/$kver/extra/swiwarp.ko" | grep -q "^$kver " &&
	echo "PASS: install.vermagic-matches-$kver" ||
	echo "FAIL: install.vermagic-matches-$kver"
