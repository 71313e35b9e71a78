#!/usr/bin/env bash
# The kernel file a lab guest boots: prints the path of IMAGE's uncompressed
# vmlinux, extracted once into $BUILD/lab/vmlinux/, or IMAGE itself when
# that cannot be done (or LAB_BZIMAGE=1).
#   tests/lab/boot-image.sh IMAGE CONFIG
#
# Why: QEMU boots a bzImage through its setup code, and the kernel then
# decompresses itself inside the guest.  Under TCG that costs emulated CPU
# on every boot: about 6 s per guest for the XZ of Debian's 6.1 image and
# about 3 s for the zstd of 6.12 (28 Nov 2026, measured alternately with
# a kernel that stops at mounting root), and `make check` boots guests
# some 70 times.  A kernel built with CONFIG_PVH carries an ELF note with
# a 32-bit entry point; QEMU's -kernel loads such an ELF as it is and
# enters there (the PVH boot protocol), so the guest runs the same kernel
# code without the decompressor.  Nothing else about the guest changes.
set -euo pipefail
image=${1:?usage: boot-image.sh IMAGE CONFIG}
config=${2:?usage: boot-image.sh IMAGE CONFIG}

keep_bzimage() {
	echo "$image"
	exit 0
}
[ "${LAB_BZIMAGE:-0}" = 1 ] && keep_bzimage
grep -qs '^CONFIG_PVH=y' "$config" || keep_bzimage
# The debug kernel (KASAN, tools/debug-kernel.sh) was brought up through
# the bzImage path, with boot options for exactly that (lab: no5lvl,
# pci=noacpi); it keeps that path until a PVH boot of it has been shown.
grep -qs '^CONFIG_KASAN=y' "$config" && keep_bzimage
# The compressed kernel is the payload of the bzImage; it starts at the
# first occurrence of its format's magic.
if grep -q '^CONFIG_KERNEL_XZ=y' "$config"; then
	magic='\xfd7zXZ\x00' decompress=(xz -dc --single-stream)
elif grep -q '^CONFIG_KERNEL_ZSTD=y' "$config"; then
	magic='\x28\xb5\x2f\xfd' decompress=(zstd -dc)
elif grep -q '^CONFIG_KERNEL_GZIP=y' "$config"; then
	magic='\x1f\x8b\x08' decompress=(gzip -dc)
else
	keep_bzimage
fi
for tool in "${decompress[0]}" readelf; do
	command -v "$tool" >/dev/null || keep_bzimage
done

dir=${BUILD:?}/lab/vmlinux
# Named by the image's size and time: a reinstalled kernel gets a new one.
elf=$dir/$(basename "$image")-$(stat -c '%s-%Y' "$image").elf
if [ ! -s "$elf" ]; then
	mkdir -p "$dir"
	tmp=$(mktemp "$elf.XXXXXX")
	trap 'rm -f "$tmp"' EXIT
	off=$(LC_ALL=C grep -obUaP "$magic" "$image" | head -n1 | cut -d: -f1)
	[ -n "$off" ] || keep_bzimage
	# The decompressors complain about the bzImage's trailer after the
	# stream, so their status says nothing: the result is judged instead.
	tail -c +$((off + 1)) "$image" | "${decompress[@]}" >"$tmp" 2>/dev/null || true
	# An executable ELF whose section table is whole (a cut stream leaves
	# it short: readelf then errs) with the PVH entry note
	# (XEN_ELFNOTE_PHYS32_ENTRY, type 18).
	readelf -h "$tmp" 2>/dev/null | grep -q 'Type: *EXEC' || keep_bzimage
	[ -z "$(readelf -S "$tmp" 2>&1 >/dev/null)" ] || keep_bzimage
	readelf -n "$tmp" 2>/dev/null | grep -q 'Unknown note type: (0x00000012)' || keep_bzimage
	# Several lab runs may extract at once: each renames its own copy.
	chmod 0644 "$tmp"
	mv -f "$tmp" "$elf"
fi
echo "$elf"
