#!/usr/bin/env bash
# check: host-only (boots no guest: runs alongside the background suites)
# `make install DESTDIR=...` stages the conventional layout (issue 2, item 2).
set -uo pipefail
top=${SWIWARP_TOP:?}
source "$top/tests/swiwarp/suite-lib.sh"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
if ! make -s -C "$top" install DESTDIR="$stage" >"$stage.log" 2>&1; then
	fail "install.make" "see below"
	cat "$stage.log"
	exit 1
fi
pass "install.make"
lib=usr/lib/x86_64-linux-gnu
# The module, once per kernel whose headers are installed (make builds for
# each: Debian 12's 6.1 and Debian's 6.12).
kvers=$("$top/tools/kernels.sh" headers | awk '{print $1}')
[ -n "$kvers" ] || fail "install.kernels" "no kernel headers installed"
for kver in $kvers; do
	ko=lib/modules/$kver/extra/swiwarp.ko
	if [ ! -e "$stage/$ko" ]; then
		fail "install.$ko" "missing"
		continue
	fi
	pass "install.$ko"
	# The staged module must be the one built for the kernel it is filed under.
	modinfo -F vermagic "$stage/$ko" | grep -q "^$kver " &&
		pass "install.vermagic-matches-$kver" ||
		fail "install.vermagic-matches-$kver"
done
for f in \
	"$lib/libibverbs/libswiwarp-rdmav34.so" \
	etc/libibverbs.d/swiwarp.driver \
	"$lib/wireshark/plugins/4.0/epan/swiwarp.so" \
	usr/include/dpi/dpi.h \
	"$lib/libdpi.so" \
	"$lib/pkgconfig/dpi.pc"; do
	if [ -e "$stage/$f" ]; then
		pass "install.$f"
	else
		fail "install.$f" "missing"
	fi
done
grep -qx 'driver swiwarp' "$stage/etc/libibverbs.d/swiwarp.driver" &&
	pass "install.driver-file-names-swiwarp" ||
	fail "install.driver-file-names-swiwarp"
