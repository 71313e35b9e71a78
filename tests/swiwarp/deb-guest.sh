#!/usr/bin/env bash
# The guest half of 69-deb (issue 16): the packages as a user installs them,
# in each guest of a 2-guest boot (guest 1 on Debian's 6.1 kernel, guest 2
# on 6.12 when both are installed):
#   install   apt install ./swiwarp-dkms…deb ./ibverbs-provider-swiwarp…deb
#             (as a user installs downloaded .debs); DKMS's
#             postinst installs swiwarp.ko for the running kernel.  Who
#             compiles it depends on DEB_PREBUILT (below).
#   modprobe  `modprobe swiwarp` finds DKMS's module (not the checkout's),
#             `rdma link add swiwarp0 type swiwarp netdev eth0`
#   rping     guest 2 pings guest 1 over swiwarp0 with verified payloads,
#             through the packaged provider
#   purge     rdma link delete, rmmod, dpkg --purge: no module, DKMS tree,
#             source or provider file left
# Usage (from 69-deb.sh): DEB_DIR=DIR [DEB_PREBUILT=DIR] tests/swiwarp/deb-guest.sh
# DEB_PREBUILT (69-deb's default) is tests/swiwarp/deb-prebuild.sh's output:
# the host's DKMS compiled the module from the package's source, one
# `dkms mktarball --binaries-only` per kernel.  The guest copies its
# kernel's tarball to /usr/share/swiwarp-dkms/swiwarp-VERSION.dkms.tar.gz,
# where Debian's DKMS postinst (common.postinst) loads it with `dkms
# ldtarball` and then only runs `dkms install` (copy into updates/dkms,
# depmod), and hides the other kernels' headers (/lib/modules/*/build) from
# it: the postinst also targets the newest installed kernel, and DKMS
# 3.0.10's ldtarball loads one kernel per tarball, so it would compile for
# that one in the guest.  Without DEB_PREBUILT the postinst compiles in the
# guest, for the running and the newest kernel (20-30 min in TCG).
set -uo pipefail
source "$LAB_TOP/tests/lab/lib.sh"
me=g$LAB_ID
p=deb/guest
kver=$(uname -r)
debs=${DEB_DIR:?DEB_DIR: the directory with the .deb files}
dkmsdeb=$(ls "$debs"/swiwarp-dkms_*_all.deb 2>/dev/null | head -n 1)
provdeb=$(ls "$debs"/ibverbs-provider-swiwarp_*.deb 2>/dev/null | head -n 1)
if [ -z "$dkmsdeb" ] || [ -z "$provdeb" ]; then
	lab_fail "$p.debs-$me" "no swiwarp-dkms or ibverbs-provider-swiwarp .deb in $debs"
	lab_finish
fi
version=$(dpkg-deb -f "$dkmsdeb" Version)
echo "$me: kernel $kver, swiwarp $version"

# The lab's own copy of the provider must not be what the test finds.
rm -f /usr/lib/x86_64-linux-gnu/libibverbs/libswiwarp-rdmav34.so /etc/libibverbs.d/swiwarp.driver

# ------------------------------------------------------------ module tree
# DKMS's install and remove each run `depmod -a`, which reads every one of
# the kernel's ~4000 modules; over the lab's 9p root under TCG that took
# 266 and 111 s (6.1) and 312 and 170 s (6.12) of the guest's 10 minutes,
# 27 Nov. The package does not care how big the tree is, so the guest gives
# DKMS a module tree of only what this test can load: the modules already
# loaded, crc32c, and everything they depend on, with the kernel's own
# modules.builtin* and modules.order and the build/source links, bind-
# mounted over /lib/modules/KVER (the 9p copy underneath is untouched).
# DEB_FULL_MODULE_TREE=1 keeps the whole tree.
modtree=/lib/modules/$kver
if [ "${DEB_FULL_MODULE_TREE:-0}" != 1 ]; then
	small=/run/deb-module-tree
	mkdir -p "$small"
	cp -P "$modtree"/modules.builtin* "$modtree"/modules.order "$modtree"/build "$modtree"/source "$small"/ 2>/dev/null
	# modules.dep lists each module with every module it needs, directly
	# or not: one awk over it instead of a modinfo (read over 9p) each.
	(cd "$modtree" && awk -v want="$(awk '{ print $1 }' /proc/modules) crc32c_generic crc32c_intel" '
		BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) keep[w[i]] = 1 }
		{
			path = $1; sub(/:$/, "", path)
			name = path; sub(/.*\//, "", name); sub(/\.ko(\.[a-z]+)?$/, "", name); gsub(/-/, "_", name)
			if (name in keep) for (i = 1; i <= NF; i++) { f = $i; sub(/:$/, "", f); print f }
		}' modules.dep | sort -u | cpio -pdm --quiet "$small")
	mount --bind "$small" "$modtree" && depmod -a "$kver" ||
		lab_fail "$p.module-tree-$me" "could not bind-mount a small module tree over $modtree"
	echo "$me: guest: DKMS sees a module tree of $(find "$modtree" -name '*.ko*' | wc -l) modules (loaded ones, crc32c, their dependencies; DEB_FULL_MODULE_TREE=1: all)"
fi

# ------------------------------------------------------------ install
tarball_root=/usr/share/swiwarp-dkms
placed=
if [ -n "${DEB_PREBUILT:-}" ]; then
	pre=("$DEB_PREBUILT/$kver"/*.dkms.tar.gz)
	if [ ! -f "${pre[0]}" ]; then
		lab_fail "$p.prebuilt-$me" "no prebuilt DKMS tarball for $kver in $DEB_PREBUILT"
		lab_finish
	fi
	mkdir -p "$tarball_root"
	placed=$tarball_root/$(basename "${pre[0]}")
	cp "${pre[0]}" "$placed"
	hidden=
	for b in /lib/modules/*/build; do
		k=${b#/lib/modules/}
		k=${k%/build}
		[ "$k" = "$kver" ] && continue
		rm -f "$b" && hidden+=" $k"
	done
	echo "$me: host: DKMS built swiwarp.ko for $kver from the package's source (deb-prebuild.sh)"
	echo "$me: guest: $placed from the host; headers hidden from DKMS:${hidden:- none}"
	echo "$me: guest: apt install, the postinst: dkms ldtarball, dkms install (no compile)"
else
	echo "$me: guest: apt install, the postinst: dkms add, dkms build (compiles here), dkms install"
fi
t0=$SECONDS
# apt resolves the packages' dependencies (dkms, libibverbs1, ...) against
# what is installed.  The guest has no network, and parsing the host's
# package lists would cost a minute of TCG for nothing: apt is given an
# empty lists directory, so it knows the installed packages and the two
# files.  A missing dependency therefore fails the install, as it must.
lists=/run/deb-guest-apt-lists
mkdir -p "$lists/partial"
if DEBIAN_FRONTEND=noninteractive apt-get install -y \
	-o Dir::State::Lists="$lists" "$(realpath "$dkmsdeb")" "$(realpath "$provdeb")" \
	>"$LAB_OUT/install.log" 2>&1; then
	lab_pass "$p.install-$me"
else
	lab_fail "$p.install-$me" "apt install: $(tail -n 5 "$LAB_OUT/install.log" | tr '\n' ' ')"
fi
sed 's/^/  install| /' "$LAB_OUT/install.log" | tail -n 25
echo "$me: apt install took $((SECONDS - t0)) s"
# Which path the postinst took, from its own words: "Loading tarball" is
# ldtarball, "Building initial module for K" a compile.
compiled=$(sed -n 's/^Building initial module for //p' "$LAB_OUT/install.log" | tr '\n' ' ')
if [ -n "$placed" ]; then
	if grep -q '^Loading tarball for ' "$LAB_OUT/install.log" && [ -z "$compiled" ]; then
		lab_pass "$p.prebuilt-loaded-$me"
	else
		lab_fail "$p.prebuilt-loaded-$me" "the postinst did not load the host's tarball only (compiled for: ${compiled:-none})"
	fi
elif [[ " $compiled" == *" $kver "* ]]; then
	lab_pass "$p.compiled-in-guest-$me"
else
	lab_fail "$p.compiled-in-guest-$me" "the postinst did not compile for $kver (compiled for: ${compiled:-none})"
fi
status=$(dkms status -m swiwarp -v "$version" -k "$kver" 2>&1)
echo "$me: dkms status: $status"
if grep -q ': installed' <<<"$status"; then
	lab_pass "$p.dkms-installed-$me"
else
	lab_fail "$p.dkms-installed-$me" "dkms status for $kver: $status"
	tail -n 30 /var/lib/dkms/swiwarp/"$version"/build/make.log 2>/dev/null
fi

# ------------------------------------------------------------ modprobe
modprobe -a crc32c_intel crc32c_generic >/dev/null 2>&1
if modprobe swiwarp 2>"$LAB_OUT/modprobe.err"; then
	file=$(modinfo -n swiwarp 2>/dev/null)
	case $file in
	/lib/modules/"$kver"/updates/dkms/swiwarp.ko*) lab_pass "$p.modprobe-$me" ;;
	*) lab_fail "$p.modprobe-$me" "swiwarp loaded from '$file', not DKMS's updates/dkms" ;;
	esac
else
	lab_fail "$p.modprobe-$me" "$(tr '\n' ' ' <"$LAB_OUT/modprobe.err")"
fi
if rdma link add swiwarp0 type swiwarp netdev eth0 2>"$LAB_OUT/link.err" &&
	ibv_devices 2>/dev/null | grep -qw swiwarp0; then
	lab_pass "$p.link-$me"
else
	lab_fail "$p.link-$me" "rdma link add / ibv_devices: $(tr '\n' ' ' <"$LAB_OUT/link.err")"
fi

# ------------------------------------------------------------ rping
if ! lab_barrier up 900; then
	lab_fail "$p.barrier-$me" "$LAB_BARRIER_WHY"
	lab_finish
fi
if [ "$LAB_ID" = 1 ]; then
	# -S as the client's: the server RDMA-Reads the client's buffer into
	# its own, and a smaller one fails the Read (local protection error).
	timeout 120 rping -s -a "$LAB_IP" -p 7180 -C 10 -S 1000 -V >"$LAB_OUT/rping-server.out" 2>&1 &
	srv=$!
	lab_wait_listen 7180 60 || lab_fail "$p.rping-listen-$me" "rping -s did not listen within 60 s"
	lab_barrier listening 120
	wait $srv
	rc=$?
	[ $rc -eq 0 ] && lab_pass "$p.rping-server-$me" ||
		lab_fail "$p.rping-server-$me" "rping -s exited $rc: $(tail -n 3 "$LAB_OUT/rping-server.out" | tr '\n' ' ')"
else
	lab_barrier listening 120
	timeout 120 rping -c -a "$LAB_PEER_IP" -p 7180 -C 10 -S 1000 -V -v >"$LAB_OUT/rping-client.out" 2>&1
	rc=$?
	n=$(grep -c '^ping data' "$LAB_OUT/rping-client.out")
	[ $rc -eq 0 ] && [ "$n" -eq 10 ] && lab_pass "$p.rping-client-$me" ||
		lab_fail "$p.rping-client-$me" "rping -c exited $rc after $n of 10 verified pings: $(tail -n 3 "$LAB_OUT/rping-client.out" | tr '\n' ' ')"
fi
lab_barrier pinged 300

# ------------------------------------------------------------ purge
rdma link delete swiwarp0 2>/dev/null
rmmod swiwarp 2>"$LAB_OUT/rmmod.err" || lab_fail "$p.rmmod-$me" "$(tr '\n' ' ' <"$LAB_OUT/rmmod.err")"
t0=$SECONDS
if dpkg --purge swiwarp-dkms ibverbs-provider-swiwarp >"$LAB_OUT/purge.log" 2>&1; then
	lab_pass "$p.purge-$me"
else
	lab_fail "$p.purge-$me" "dpkg --purge: $(tail -n 5 "$LAB_OUT/purge.log" | tr '\n' ' ')"
fi
echo "$me: dpkg --purge (dkms remove, depmod) took $((SECONDS - t0)) s"
# The tarball is the test's, not the package's: dpkg leaves it.
if [ -n "$placed" ]; then
	rm -f "$placed"
	rmdir "$tarball_root" 2>/dev/null
fi
left=$(ls -d /lib/modules/*/updates/dkms/swiwarp.ko* /var/lib/dkms/swiwarp /usr/src/swiwarp-* \
	/usr/lib/x86_64-linux-gnu/libibverbs/libswiwarp-rdmav34.so /etc/libibverbs.d/swiwarp.driver \
	/usr/share/swiwarp 2>/dev/null)
[ -z "$left" ] && lab_pass "$p.nothing-left-$me" || lab_fail "$p.nothing-left-$me" "$(echo $left)"
if modprobe -n swiwarp 2>/dev/null; then
	lab_fail "$p.nothing-left-$me-modprobe" "modprobe still finds swiwarp: $(modinfo -n swiwarp 2>&1)"
fi
if mountpoint -q "$modtree"; then
	umount "$modtree" || lab_fail "$p.module-tree-umount-$me" "umount $modtree"
fi
lab_finish
