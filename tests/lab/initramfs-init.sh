#!/bin/busybox sh
# /init of the lab initramfs (busybox only).  Mounts the host root read-only
# over virtio-9p, puts a tmpfs overlay on top so the guest can write anywhere,
# mounts the writable results share at /lab/out, and switch_roots into the
# overlay, where tests/lab/guest-run.sh takes over.
/bin/busybox --install -s /bin
export PATH=/bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

panic() {
	echo "lab-init: $*" >/dev/console
	echo "lab-init: powering off" >/dev/console
	poweroff -f
}

while read -r m; do
	[ -n "$m" ] || continue
	insmod "/lib/modules/$m" || panic "insmod $m failed"
done </modules.list

id= moddir=
for arg in $(cat /proc/cmdline); do
	case $arg in
	lab.id=*) id=${arg#lab.id=} ;;
	lab.moddir=*) moddir=${arg#lab.moddir=} ;;
	esac
done
[ -n "$id" ] || panic "no lab.id= on the kernel command line"

mkdir -p /lower /upper /newroot
# cache=loose: the lower root is read-only for the guest's lifetime.
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose \
	labroot /lower || panic "cannot mount the host root (9p tag labroot)"
mount -t tmpfs -o mode=0755 upper /upper || panic "cannot mount tmpfs"
mkdir -p /upper/data /upper/work
mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work \
	overlay /newroot || panic "cannot mount the overlay root"
mkdir -p /newroot/lab/out
# A kernel not installed on the host (a debug kernel): its modules, in the
# host's cache, appear where modprobe looks for them.
if [ -n "$moddir" ]; then
	[ -f "/newroot$moddir/modules.dep" ] || panic "no modules at $moddir (lab.moddir)"
	mkdir -p /newroot/lib/modules
	ln -sfn "$moddir" "/newroot/lib/modules/$(uname -r)" || panic "cannot link $moddir"
fi
# No caching on the results share: the host and the other guests must see
# every write at once (lab_barrier relies on it).
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 labout /newroot/lab/out ||
	panic "cannot mount the results share (9p tag labout)"
[ -f "/newroot/lab/out/g$id/env" ] || panic "no /lab/out/g$id/env from the host"

mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
# The mounts guest-run.sh's machine needs, made here by busybox from RAM:
# in the guest root every mount, mkdir or chmod is a program read over 9p,
# about a second each in an emulated guest on a loaded host.
mkdir -p /newroot/dev/pts /newroot/dev/shm /newroot/run /newroot/tmp
mount -t devpts -o gid=5,mode=620 devpts /newroot/dev/pts
mount -t tmpfs -o mode=1777 shm /newroot/dev/shm
mount -t tmpfs -o mode=0755 run /newroot/run
mkdir -p /newroot/run/lock
chmod 1777 /newroot/tmp
[ -e /newroot/dev/fd ] || ln -s /proc/self/fd /newroot/dev/fd
mount -t debugfs debugfs /newroot/sys/kernel/debug 2>/dev/null
mount -t configfs configfs /newroot/sys/kernel/config 2>/dev/null

exec switch_root /newroot /bin/bash -c \
	". /lab/out/g$id/env && exec /bin/bash \"\$LAB_TOP/tests/lab/guest-run.sh\""
