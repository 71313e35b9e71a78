#!/bin/bash
# The Debian packages (issue 16, item 4; Documentation/packaging.md):
#   build     `make deb`'s script builds every package once, on the host
#   contents  each .deb holds what it must (and the DKMS source no objects)
#   lintian   no errors; every warning is listed with its reason in
#             Documentation/packaging.md
#   prebuild  on the host, DKMS compiles the module from swiwarp-dkms's own
#             source and dkms.conf for every kernel with headers, into
#             prebuilt-module tarballs (tests/swiwarp/deb-prebuild.sh)
#   guest     in a 2-guest boot (6.1 and 6.12): apt install ./…deb, DKMS's postinst
#             loads the host's tarball and installs the module, modprobe,
#             rping between the guests, purge, nothing left
#             (tests/swiwarp/deb-guest.sh).  DEB_GUEST_COMPILE=1: the
#             postinst compiles in the guest instead (20-30 min in TCG);
#             DEB_GUEST=0: no guest half.
set -uo pipefail
# One vCPU per guest: a functional suite, about 15-35 % faster so (Documentation/lab.md,
# "The time budget of make check"); LAB_SMP overrides it.
export LAB_SMP=${LAB_SMP:-1}
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/swiwarp/suite-lib.sh
source "$top/tests/swiwarp/suite-lib.sh"   # pass, fail, skip, BUILD
out=$BUILD/lab/suite-deb
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)

for tool in dpkg-buildpackage dh_dkms dkms lintian; do
	command -v "$tool" >/dev/null || { fail deb/tools "no $tool (tools/setup-host.sh installs it)"; exit 1; }
done

# --- build
debs=$out/debs
t0=$(date +%s)
if nice "$top/tools/make-deb.sh" "$debs" >"$out/make-deb.log" 2>&1; then
	pass deb/build
else
	fail deb/build "$(tail -n 5 "$out/make-deb.log" | tr '\n' ' ')"
	exit 1
fi
echo "TIME: packages built in $(($(date +%s) - t0))s"
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)

# --- contents: PACKAGE PATH-REGEX..., each must match a file of the .deb
lib=usr/lib/x86_64-linux-gnu
contains() {
	local pkg=$1 deb re list
	shift
	deb=$(ls "$debs/${pkg}_${version}_"*.deb 2>/dev/null | head -n 1)
	if [ -z "$deb" ]; then
		fail "deb/$pkg" "not built"
		return
	fi
	list=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
	for re in "$@"; do
		if grep -qE "^$re$" <<<"$list"; then pass "deb/$pkg:${re//\\/}"
		else fail "deb/$pkg:${re//\\/}" "not in $(basename "$deb")"; fi
	done
}
src=/usr/src/swiwarp-$version
contains swiwarp-dkms "$src/dkms.conf" "$src/kernel/Kbuild" "$src/kernel/Makefile" \
	"$src/kernel/swiwarp_main\.c" "$src/kernel/swiwarp\.h" "$src/include/iwarp/mpa\.h" \
	"$src/include/uapi/swiwarp-abi\.h" /usr/share/swiwarp/siw-compat\.conf
contains ibverbs-provider-swiwarp "/$lib/libibverbs/libswiwarp-rdmav34\.so" /etc/libibverbs.d/swiwarp.driver
contains wireshark-plugin-swiwarp "/$lib/wireshark/plugins/4\.0/epan/swiwarp\.so"
contains libdpi0 "/$lib/libdpi\.so\.0" "/$lib/libdpi\.so\.0\.1\.0"
contains libdpi-dev "/$lib/libdpi\.so" "/$lib/pkgconfig/dpi\.pc" /usr/include/dpi/dpi.h /usr/include/dpi/dpi.hpp
contains libdpi-bin /usr/bin/dpi
dkmsdeb=$(ls "$debs"/swiwarp-dkms_*.deb 2>/dev/null | head -n 1)
if [ -n "$dkmsdeb" ]; then
	junk=$(dpkg-deb -c "$dkmsdeb" | awk '{print $6}' | grep -E '\.(o|ko|mod|mod\.c|cmd)$|Module\.symvers|modules\.order')
	[ -z "$junk" ] && pass deb/swiwarp-dkms:no-build-products ||
		fail deb/swiwarp-dkms:no-build-products "$(echo $junk | cut -c1-200)"
	conf=$(dpkg-deb --fsys-tarfile "$dkmsdeb" | tar -xOf - ".$src/dkms.conf")
	for kv in 'PACKAGE_VERSION="'"$version"'"' 'BUILT_MODULE_NAME\[0\]="swiwarp"' \
		'DEST_MODULE_LOCATION\[0\]="/updates/dkms"' 'AUTOINSTALL="yes"'; do
		n=${kv%%=*}
		grep -qE "^$kv$" <<<"$conf" && pass "deb/dkms.conf:${n//\\/}" ||
			fail "deb/dkms.conf:${n//\\/}" "dkms.conf lacks ${kv//\\/}"
	done
fi
# The ABIs the binary packages were built against.
depends() { dpkg-deb -f "$(ls "$debs/${1}_${version}_"*.deb)" Depends 2>/dev/null; }
depends ibverbs-provider-swiwarp | grep -qE 'libibverbs1 \(>= [0-9]' &&
	pass deb/provider-depends-libibverbs1 ||
	fail deb/provider-depends-libibverbs1 "Depends: $(depends ibverbs-provider-swiwarp)"
depends wireshark-plugin-swiwarp | grep -qE 'libwireshark16 \(>= [0-9]' &&
	depends wireshark-plugin-swiwarp | grep -qF 'libwireshark16 (<< 4.1~)' &&
	pass deb/plugin-depends-libwireshark16-4.0 ||
	fail deb/plugin-depends-libwireshark16-4.0 "Depends: $(depends wireshark-plugin-swiwarp)"

# --- lintian: no error; each warning tag is explained in packaging.md.
lintian --fail-on error --tag-display-limit 0 "$debs"/*.changes >"$out/lintian.txt" 2>&1
lrc=$?
sed 's/^/  lintian| /' "$out/lintian.txt"
if [ $lrc -eq 0 ] && ! grep -q '^E: ' "$out/lintian.txt"; then pass deb/lintian-no-errors
else fail deb/lintian-no-errors "$(grep -m 3 '^E: ' "$out/lintian.txt" | tr '\n' ' ')"; fi
undoc=
for tag in $(sed -n 's/^W: [^:]*: \([a-z0-9-]*\).*/\1/p' "$out/lintian.txt" | sort -u); do
	grep -q "\`$tag\`" "$top/Documentation/packaging.md" || undoc+=" $tag"
done
[ -z "$undoc" ] && pass deb/lintian-warnings-documented ||
	fail deb/lintian-warnings-documented "not in Documentation/packaging.md:$undoc"

# --- the guest half (Documentation/packaging.md, "Test").  Compiling in
# the TCG guest is what made this opt-in: 1296 s for one build at host load
# ~12, guest 1 (which builds for 6.1 and the newest kernel, 6.12) past 1800
# s.  So by default the compile runs on the host, by DKMS from the
# package's own source and dkms.conf, and each guest's postinst only loads
# and installs it; DEB_GUEST_COMPILE=1 keeps the compile in the guest.
suite=deb
if [ "${DEB_GUEST:-1}" = 0 ]; then
	skip deb/guest "(DEB_GUEST=0)"
elif [ ! -x "$lab" ]; then
	skip deb/guest "tests/lab/lab missing"
elif mixed_kernels; then
	prebuilt=
	if [ "${DEB_GUEST_COMPILE:-0}" != 1 ]; then
		# Every kernel whose headers are installed, as DKMS's autoinstall
		# would: the guests see the host's /lib/modules.
		kernels=()
		for b in /lib/modules/*/build; do
			[ -e "$b/include" ] && { b=${b%/build}; kernels+=("${b#/lib/modules/}"); }
		done
		t0=$(date +%s)
		if [ ${#kernels[@]} -eq 0 ]; then
			fail deb/prebuild "no kernel headers under /lib/modules/*/build (tools/setup-host.sh installs them)"
		elif nice "$top/tests/swiwarp/deb-prebuild.sh" "$dkmsdeb" "$out/prebuilt" "${kernels[@]}" \
			>"$out/prebuild.log" 2>&1; then
			pass deb/prebuild
			prebuilt=$out/prebuilt
			echo "host: DKMS built swiwarp.ko from the swiwarp-dkms source for ${kernels[*]} in $(($(date +%s) - t0))s:"
			sed 's/^/  /' "$out/prebuild.log"
		else
			fail deb/prebuild "$(tail -n 5 "$out/prebuild.log" | tr '\n' ' ')"
		fi
	fi
	if [ -n "$prebuilt" ] || [ "${DEB_GUEST_COMPILE:-0}" = 1 ]; then
		t0=$(date +%s)
		if [ -n "$prebuilt" ]; then
			echo "guests: apt install; DKMS's postinst loads the host's module (dkms ldtarball) and installs it"
			tmo=${DEB_GUEST_TIMEOUT:-1500}
		else
			echo "guests: apt install; DKMS's postinst compiles the module in the guest (DEB_GUEST_COMPILE=1)"
			tmo=${DEB_GUEST_TIMEOUT:-3600}
		fi
		run_lab guest -n 2 --kernel "$kmix" --timeout "$tmo" -- \
			DEB_DIR="$debs" DEB_PREBUILT="$prebuilt" tests/swiwarp/deb-guest.sh
		echo "TIME: guest half took $(($(date +%s) - t0))s"
	fi
fi
echo "TIME: suite took $(($(date +%s) - start))s"
[ $fails -eq 0 ]
