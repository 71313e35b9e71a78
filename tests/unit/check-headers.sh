#!/usr/bin/env bash
# Compile every include/iwarp/*.h on its own as C (gnu11, c99), as C++20,
# and inside an out-of-tree kernel module with W=1 against Debian's 6.1
# headers.  The kernel build also proves the headers need no libc there:
# the kernel include path has no libc headers.
# Usage: check-headers.sh INCLUDE_DIR WORK_DIR
set -euo pipefail
inc=$(cd "$1" && pwd)
work=$2
rm -rf "$work"
mkdir -p "$work/kmod"
cc=${CC:-gcc}
cxx=${CXX:-g++}
fail=0
for h in "$inc"/iwarp/*.h; do
	name=$(basename "$h" .h)
	printf '#include <iwarp/%s.h>\n#include <iwarp/%s.h>\n' "$name" "$name" >"$work/$name.c"
	cp "$work/$name.c" "$work/$name.cc"
	for std in gnu11 c99; do
		$cc -std=$std -Wall -Wextra -Wpedantic -Wshadow -Wconversion \
			-Wno-sign-conversion -Werror -I"$inc" -c "$work/$name.c" \
			-o "$work/$name.$std.o" || { echo "FAILED: $name as $std"; fail=1; }
	done
	$cxx -std=c++20 -Wall -Wextra -Wpedantic -Werror -I"$inc" -c "$work/$name.cc" \
		-o "$work/$name.cxx.o" || { echo "FAILED: $name as C++20"; fail=1; }
	# Every header except the shim must get its system headers via types.h.
	if [ "$name" != types ] && grep -E '^#include <' "$h"; then
		echo "FAILED: $name includes a system header directly"
		fail=1
	fi
done
[ $fail -eq 0 ] || exit 1

kdir=${KDIR:-$(ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null | sort | tail -1)}
if [ -z "$kdir" ] || [ ! -f "$kdir/Makefile" ]; then
	echo "no kernel headers found: kernel build skipped"
	exit 77
fi
{
	echo '#include <linux/module.h>'
	for h in "$inc"/iwarp/*.h; do echo "#include <iwarp/$(basename "$h")>"; done
	cat <<'C'
/* Use a little of everything so the code is really instantiated. */
static int __init iwarp_hdrcheck_init(void)
{
	static uint8_t buf[128];
	struct iwarp_rdmap_msg msg;
	struct iwarp_mpa_rr rr;
	struct iwarp_fpdu fpdu;
	struct iwarp_marked_fpdu mf;
	int a, b, c, d;

	a = iwarp_rdmap_parse(buf, sizeof(buf), &msg);
	b = iwarp_mpa_rr_parse(buf, sizeof(buf), &rr);
	c = iwarp_fpdu_parse(buf, sizeof(buf), &fpdu);
	d = iwarp_markers_strip(0, 0, buf, sizeof(buf), buf + 64, 64, &mf);
	pr_info("%u %d %d %d %d %s\n", iwarp_crc32c(buf, 32), a, b, c, d,
		iwarp_term_ecode_name(0, 1, 0));
	return 0;
}
static void __exit iwarp_hdrcheck_exit(void) {}
module_init(iwarp_hdrcheck_init);
module_exit(iwarp_hdrcheck_exit);
MODULE_LICENSE("Dual BSD/GPL");
C
} >"$work/kmod/iwarp_hdrcheck.c"
printf 'obj-m := iwarp_hdrcheck.o\nccflags-y := -I%s -Werror\n' "$inc" >"$work/kmod/Kbuild"
if ! make -s -C "$kdir" M="$work/kmod" W=1 modules >"$work/kmod/build.log" 2>&1; then
	cat "$work/kmod/build.log"
	echo "FAILED: kernel W=1 build"
	exit 1
fi
if grep -iE 'warning|error' "$work/kmod/build.log" | grep -v 'Skipping BTF'; then
	echo "FAILED: kernel build printed warnings"
	exit 1
fi
echo "headers OK: C gnu11/c99, C++20, kernel W=1 ($kdir)"
