# shellcheck shell=bash
# Slab counts for leak checks in lab guests (sourced by tests/robust/*-guest.sh
# and tests/soak/lab-guest.sh).  Two kinds of noise make /proc/slabinfo's
# active_objs move with nothing leaking:
#
# * SLUB counts every object of a per-CPU slab as in use, free or not.
#   Shrinking a cache hands those slabs back, but the next allocation on a
#   CPU (starting the program that reads the file is enough) takes one
#   again, and if that is a fresh page all its objects count at once:
#   kmalloc-8 readings taken one after the other jump by exactly one slab
#   (512), kmalloc-96 by several of 42.  This error only ever adds, so
#   each snapshot reads several times and keeps the least count.
# * Objects freed with kfree_rcu() stay allocated until a batch is
#   drained, up to 5 s later (6.1).  Opening a sysfs file allocates a
#   kernfs_open_node (kmalloc-96) that is freed that way, so shrinking
#   every cache with "echo 1 >/sys/kernel/slab/*/shrink" added up to one
#   kmalloc-96 object per cache, a few hundred, to the very snapshot it
#   was meant to clean.  The shrink files are therefore opened once
#   (slab_open) and kept open for the whole test, and a snapshot waits
#   for the kfree_rcu batches of what ran before it to drain.
#
# slab_open REGEX: open the shrink files of the caches whose name matches
# the awk REGEX (call once, before the first snapshot).
# slab_counts: "cache active_objs objs_per_slab" for those caches, sorted.
declare -A slab_fd=()
slab_re=
slab_open() {
	local c fd
	slab_re=$1
	for c in $(awk -v re="$slab_re" 'NR > 2 && $1 ~ re {print $1}' /proc/slabinfo); do
		[ -w "/sys/kernel/slab/$c/shrink" ] || continue
		exec {fd}>"/sys/kernel/slab/$c/shrink" && slab_fd[$c]=$fd
	done
}
slab_counts() {
	local i c
	sync
	sleep 6
	for i in 1 2 3 4 5; do
		for c in "${!slab_fd[@]}"; do
			echo 1 >&"${slab_fd[$c]}"
		done 2>/dev/null
		awk -v re="$slab_re" 'NR > 2 && $1 ~ re {print $1, $2, $5}' /proc/slabinfo
		sleep 0.3
	done | awk '{ if (!($1 in m) || $2 < m[$1]) m[$1] = $2; o[$1] = $3 }
		END { for (c in m) print c, m[c], o[c] }' | sort
}
