#!/usr/bin/env bash
# Build (or reuse) the lab's initramfs: static busybox, our /init and the
# kernel modules needed to mount the 9p root and the overlay, and the ones
# every guest loads before its command (guest-run.sh).  Cached under
# $BUILD/lab/ keyed by everything that goes into it.  Prints its path.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
# The guest kernel: a release, a series (6.1, 6.12) or "default"
# (tools/kernels.sh resolve); tests/lab/lab passes the release.
KVER=$("$top/tools/kernels.sh" resolve "${LAB_KVER:-default}") || exit 1
moddir=$("$top/tools/kernels.sh" moddir "$KVER") || exit 1
# modprobe's root: a debug kernel's install root; none for Debian's.
modroot=()
[ "$moddir" = "/lib/modules/$KVER" ] || modroot=(-d "${moddir%/lib/modules/"$KVER"}")
busybox=${LAB_BUSYBOX:-/bin/busybox}

die() { echo "mkinitramfs: $*" >&2; exit 1; }
[ -d "$moddir" ] || die "no $moddir (install linux-image-$KVER)"
[ -x "$busybox" ] || die "no static busybox (install busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic' || die "$busybox is not static"

# Modules in load order, dependencies first, each once: the 9p root's,
# configfs (mounted by /init), then the NIC and the RDMA core every guest
# command expects loaded.  Loaded from
# here they cost no 9p reads and no decompression in the emulated guest:
# modprobe over 9p took 3.5-5.7 s for virtio_net and 3.5-8 s for the RDMA
# core per boot (guest uptimes in the console log, 6.1 and 6.12 guests).
mods=()
for m in virtio_pci 9pnet_virtio 9p overlay configfs virtio_net ib_core ib_uverbs iw_cm rdma_cm rdma_ucm; do
	while read -r cmd path _; do
		[ "$cmd" = insmod ] || continue
		rel=${path#"$moddir"/}
		case " ${mods[*]-} " in *" $rel "*) ;; *) mods+=("$rel") ;; esac
	done < <(modprobe "${modroot[@]}" -S "$KVER" --show-depends "$m")
done
[ ${#mods[@]} -gt 0 ] || die "could not resolve module dependencies"

key=$( { printf '%s\n' "$KVER" "${mods[@]}"; cat "$here/initramfs-init.sh" "$0";
	sha256sum "$busybox"; } | sha256sum | cut -c1-16)
out=$BUILD/lab/initramfs-$key.cpio.gz
if [ -s "$out" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$BUILD/lab"
stage=$(mktemp -d "$BUILD/lab/initramfs-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,lib/modules}
cp "$busybox" "$stage/bin/busybox"
cp "$here/initramfs-init.sh" "$stage/init"
chmod 755 "$stage/init"
# Debian's 6.12 ships its modules xz-compressed (.ko.xz), which busybox's
# insmod cannot load: they go into the initramfs decompressed.
plain=()
for rel in "${mods[@]}"; do
	mkdir -p "$stage/lib/modules/$(dirname "$rel")"
	case $rel in
	*.ko.xz) xz -dc "$moddir/$rel" >"$stage/lib/modules/${rel%.xz}"; rel=${rel%.xz} ;;
	*.ko.zst) zstd -qdc "$moddir/$rel" >"$stage/lib/modules/${rel%.zst}"; rel=${rel%.zst} ;;
	*.ko.gz) gzip -dc "$moddir/$rel" >"$stage/lib/modules/${rel%.gz}"; rel=${rel%.gz} ;;
	*) cp "$moddir/$rel" "$stage/lib/modules/$rel" ;;
	esac
	plain+=("$rel")
done
printf '%s\n' "${plain[@]}" >"$stage/modules.list"
(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "$out"
