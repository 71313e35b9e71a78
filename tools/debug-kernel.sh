#!/usr/bin/env bash
# Build a debug lab kernel (issue 15): Debian's own kernel source and config,
# cut down to the modules the lab loads, plus KASAN, lockdep, sleep-in-atomic
# checks, debug objects, kmemleak and fault injection.  It is cached outside
# any checkout (built once per machine) and never installed into /boot or
# /lib/modules, so it can never become a kernel the host or the ordinary lab
# picks by accident.
#
#   tools/debug-kernel.sh [build] [SERIES]   build it (default series 6.1)
#
# Layout of <cache>/<series>/ (<cache>: tools/kernels.sh debug-cache,
# $SWIWARP_DEBUG_KERNELS or /var/cache/swiwarp/debug-kernel): src/ the
# configured and built tree (also the KDIR for out-of-tree modules),
# root/lib/modules/<release>/ the installed modules, release (uname -r of
# the kernel), build.log.  tools/kernels.sh knows it as "debug-<series>"
# (image, modules, headers) and the lab boots it with --kernel debug.
#
# Why Debian's config and not defconfig: the guests must behave like the
# Debian kernels the ordinary lab boots (same built-ins, same module names);
# localmodconfig with the module list of a lab guest that loaded everything
# our suites use (tests/lab/debug-kernel.lsmod) keeps the build to ~120
# modules instead of ~4000.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=$("$top/tools/kernels.sh" debug-cache)
[ "${1:-}" = build ] && shift
series=${1:-6.1}
dir=$cache/$series

die() { echo "debug-kernel: $*" >&2; exit 1; }
[[ $series =~ ^[0-9]+\.[0-9]+$ ]] || die "usage: $0 [build] [SERIES]"

# Built already, by this version of the script and module list.
if [ -s "$dir/release" ] && [ "$dir/release" -nt "$0" ] &&
	[ "$dir/release" -nt "$top/tests/lab/debug-kernel.lsmod" ]; then
	echo "debug-kernel: $(cat "$dir/release") in $dir"
	exit 0
fi

for t in flex bison bc; do
	command -v "$t" >/dev/null || die "needs $t (apt-get install flex bison bc libelf-dev libssl-dev)"
done
[ -f /usr/include/libelf.h ] || die "needs libelf-dev (apt-get install libelf-dev)"

tarball=/usr/src/linux-source-$series.tar.xz
[ -f "$tarball" ] || die "no $tarball (apt-get install linux-source-$series)"
kver=$("$top/tools/kernels.sh" resolve "$series")
config=/boot/config-$kver
[ -f "$config" ] || die "no $config"

mkdir -p "$dir"
exec > >(tee "$dir/build.log") 2>&1
if [ ! -f "$dir/src/.extracted" ]; then
	rm -rf "$dir/src"
	mkdir -p "$dir/src"
	tar -xf "$tarball" -C "$dir/src" --strip-components=1
	touch "$dir/src/.extracted"
fi
cd "$dir/src"

cp "$config" .config
# localmodconfig asks about options new to the config: take the defaults.
{ yes "" || true; } | make -s LSMOD="$top/tests/lab/debug-kernel.lsmod" localmodconfig >/dev/null
# What the debug kernel adds, and what it drops because it costs build time
# without helping find our bugs (DWARF/BTF, module signing with Debian's key,
# which this machine does not have).
sc=scripts/config
$sc --set-str LOCALVERSION "-swiwarp-debug" --disable LOCALVERSION_AUTO \
	--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
	--disable MODULE_SIG_ALL --set-str MODULE_SIG_KEY "" --disable MODULE_SIG_FORCE \
	--disable DEBUG_INFO_DWARF5 --disable DEBUG_INFO_DWARF4 \
	--disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT --enable DEBUG_INFO_NONE \
	--disable DEBUG_INFO_BTF --disable DEBUG_INFO_BTF_MODULES \
	--enable KASAN --enable KASAN_GENERIC --enable KASAN_INLINE \
	--enable PROVE_LOCKING --enable DEBUG_LOCKDEP --enable DEBUG_ATOMIC_SLEEP \
	--enable DEBUG_OBJECTS --enable DEBUG_OBJECTS_FREE --enable DEBUG_OBJECTS_TIMERS \
	--enable DEBUG_OBJECTS_WORK --enable DEBUG_OBJECTS_RCU_HEAD \
	--enable DEBUG_KMEMLEAK --set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 32000 \
	--enable FAULT_INJECTION --enable FAILSLAB --enable FAIL_PAGE_ALLOC \
	--enable FAULT_INJECTION_DEBUG_FS \
	--enable DEBUG_FS --enable DEBUG_FS_ALLOW_ALL
# No FAULT_INJECTION_STACKTRACE_FILTER: lib/Kconfig.debug has it depend on
# !X86_64, so failslab cannot be aimed at one module's stack here; swiwarp
# has its own fault attribute instead (kernel/swiwarp_fault.c).
make -s olddefconfig </dev/null
for opt in KASAN PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_OBJECTS DEBUG_KMEMLEAK FAILSLAB FAIL_PAGE_ALLOC \
	FAULT_INJECTION_DEBUG_FS; do
	grep -q "^CONFIG_$opt=y" .config || die "CONFIG_$opt did not survive olddefconfig"
done

nice -n 19 make -j"$(nproc)" bzImage modules
rel=$(make -s kernelrelease)
rm -rf "$dir/root"
make -s INSTALL_MOD_PATH="$dir/root" INSTALL_MOD_STRIP=1 modules_install
echo "$rel" >"$dir/release"
echo "debug-kernel: built $rel in $dir"
