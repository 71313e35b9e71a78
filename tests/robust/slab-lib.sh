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
# slab_snapshot, slab_growth, slab_check: below (the leak check of the soak
# and of the robustness run).
declare -A slab_fd=()
slab_re=
slab_open() {
	local c fd
	slab_re=$1
	for c in $(awk -v re="$slab_re" 'NR > 2 && $1 ~ re {print $1}' /proc/slabinfo); do
		[ -w "/sys/kernel/slab/$c/shrink" ] || continue
		exec {fd}>"/sys/kernel/slab/$c/shrink" && slab_fd[$c]=$fd
	done
	# The callers wait for TCP teardown with ss, whose first sock_diag query
	# loads inet_diag and tcp_diag (their sysfs and BTF: ~100 kmalloc
	# objects that stay, seen in 80-robust): load them before any baseline.
	ss -Htan >/dev/null 2>&1
	# The first open of a debugfs file allocates its debugfs_fsdata
	# (kmalloc-64), which stays: open each alloc_traces file once now, or
	# the first slab_sites would count 29 of them against the test.
	for c in "${!slab_fd[@]}"; do
		[ -r "$slab_debugfs/$c/alloc_traces" ] &&
			: <"$slab_debugfs/$c/alloc_traces"
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

# Exact counts per allocation site.  A guest booted with slub_debug=U for
# a cache (e.g. LAB_APPEND="slub_debug=U,kmalloc-*", as 85-soak does)
# records who allocated each of its objects, and
# /sys/kernel/debug/slab/CACHE/alloc_traces counts the objects in use per
# call site and stack, read from the slabs themselves: no per-CPU slab
# slack, no merged caches, so none of the noise above.
# slab_sites: "cache site count" for every watched cache that has such a
# file, one line per site.  The site is the allocating function (offsets
# dropped, so two builds compare); when the allocation's stack passes
# through an RDMA module, the first such frame is added ("<-func [mod]"),
# which is what marks the site as the RDMA stack's in slab_site_growth.
# SLAB_DEBUGFS replaces /sys/kernel/debug/slab (to test this on the host).
slab_debugfs=${SLAB_DEBUGFS:-/sys/kernel/debug/slab}
slab_rdma_mods='swiwarp|siw|ib_core|ib_uverbs|ib_cm|iw_cm|rdma_cm|rdma_ucm'
# Per-destination caches of the network stack: the first connection to a
# peer creates an entry that stays, whichever module's call made it (seen:
# tcp_get_metrics under swiwarp_cep_close, the TCP metrics of a peer whose
# first connection swiwarp closed).  Bounded by the number of peers, so
# judged like any other site.
slab_netcache_sites='tcp_get_metrics|___neigh_create'
slab_sites() {
	local t c files=()
	for t in "$slab_debugfs"/*/alloc_traces; do
		c=${t%/alloc_traces}
		[ -r "$t" ] && [[ ${c##*/} =~ $slab_re ]] && files+=("$t")
	done
	[ ${#files[@]} -gt 0 ] || return 0
	# one awk for every file: a process started over the lab's 9p root
	# costs about half a second under load, ~30 caches two each was 45 s
	awk -v mods="$slab_rdma_mods" -v netcache="^($slab_netcache_sites)$" '
		function fn(sym) { sub(/\+0x[0-9a-f]+\/0x[0-9a-f]+$/, "", sym); return sym }
		function cache(path) { sub(/\/alloc_traces$/, "", path); sub(/.*\//, "", path); return path }
		function flush() { if (site != "") n[c " " site (via == "" || via == "-" ? "" : "<-" via)] += cnt; site = "" }
		BEGIN {
			modre = "^\\[(" mods ")\\]$"
			for (i = 1; i < ARGC; i++) print cache(ARGV[i]), "(cache)", 0
		}
		FNR == 1 { flush(); c = cache(FILENAME) }
		/^ *[0-9]+ / {
			flush(); cnt = $1; site = fn($2); via = ""
			if ($3 ~ /^\[/) { site = site $3; if ($3 ~ modre) via = "self" }
			if (site ~ netcache) via = "-"
			next
		}
		/^ +[^ ]/ && via == "" && $2 ~ modre { via = fn($1) $2 }
		END { flush(); for (k in n) print k, n[k] }' "${files[@]}" | sort
	# the number of threads (slab_site_growth allows per-task objects)
	local loadavg
	read -r _ _ _ loadavg _ </proc/loadavg
	echo "(tasks) (threads) ${loadavg#*/}"
}

# slab_snapshot FILE: the exact TCP socket count ("alloc" in
# /proc/net/sockstat, as cache sockstat-TCP-alloc) and slab_counts; and
# slab_sites into FILE.sites where the guest tracks allocations.
slab_snapshot() {
	sync
	echo 2 >/proc/sys/vm/drop_caches
	awk '/^TCP:/ {for (i = 2; i < NF; i++) if ($i == "alloc") print "sockstat-TCP-alloc", $(i + 1), 1}' \
		/proc/net/sockstat >"$1"
	slab_counts >>"$1"
	rm -f "$1.sites"
	if compgen -G "$slab_debugfs/*/alloc_traces" >/dev/null; then
		local t0=$SECONDS
		slab_sites >"$1.sites"
		echo "slab: $(grep -c . "$1.sites") allocation sites read in $((SECONDS - t0)) s"
	fi
}

# slab_site_growth BEFORE.sites AFTER.sites: the sites that grew, "site +d
# (b -> a); " each, or nothing.  A site of the RDMA stack (an RDMA module
# on its stack) must come back exactly; any other site may keep up to
# 8 objects more, plus one per thread more than
# before.  What a whole soak left outside the RDMA stack was 1-3 objects
# per site, all of them per-task (set_kthread_struct, alloc_worker,
# security_task_alloc, the vmalloc'd stack: workqueue workers the load
# started, which exit after 5 idle minutes) and 9p's p9_fid_create.
# Not judged: the sites of the lab's own plumbing, the root filesystem
# over 9p (9pnet, its virtio transport and ring) under an overlay.  Their
# request buffers and fids follow the guest's file activity, not the
# test: a soak on the debug kernel ended with 9 more p9_fcall_init
# buffers in flight than before it, over the tolerance.  Such a site
# with an RDMA module on its stack is still judged, exactly.
slab_lab_mods='9pnet|9pnet_virtio|virtio_ring|overlay'
slab_site_growth() {
	awk -v tol=8 -v labre="\\[(${slab_lab_mods})\\]$" '
		NR == FNR { b[$1 " " $2] = $3; next }
		$1 == "(tasks)" { if ($3 > b[$1 " " $2]) tol += $3 - b[$1 " " $2] }
		{ a[$1 " " $2] = $3 }
		END {
			for (k in a) {
				if (k ~ /^\(tasks\)/) continue
				split(k, f, " "); d = a[k] - b[k]
				if (f[2] !~ /<-/ && f[2] ~ labre) continue
				t = (f[2] ~ /<-/) ? 0 : tol
				if (d > t) printf "%s +%d (%d -> %d); ", k, d, b[k], a[k]
			}
		}' "$1" "$2"
}

# slab_growth BEFORE AFTER [MIN_KMALLOC_TOL [CACHE=TOL...]]: the caches
# that grew past their tolerance, "cache +d (b -> a, tolerance t); " each,
# or nothing.  CACHE=TOL sets one cache's tolerance outright (a test that
# knows which cache its objects live in, e.g. the CM's endpoints in
# kmalloc-2k).
# TCP sockets and the RDMA drivers' own caches must come back exactly (one
# object of slack); kmalloc caches within 3 slabs or 2 %, whichever is
# more (at least MIN_KMALLOC_TOL): even the least of five readings moves
# by 100+ small objects between snapshots of an idle guest (kmalloc-96
# 840 vs 705, kmalloc-8 2048 vs 1925), while a leak per operation of a
# soak or a robustness run is thousands of objects.
slab_growth() {
	local before=$1 after=$2 mintol=${3:-0} exact=
	shift 3 2>/dev/null || shift $#
	# caches counted per site (slab_sites) are judged there, not here
	if [ -f "$before.sites" ] && [ -f "$after.sites" ]; then
		exact=$(awk '$2 == "(cache)" {printf "%s ", $1}' "$before.sites")
		slab_site_growth "$before.sites" "$after.sites"
	fi
	awk -v mintol="$mintol" -v bounds="$*" -v exact="$exact" '
		BEGIN {
			n = split(bounds, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], p, "="); fix[p[1]] = p[2] }
			n = split(exact, e, " "); for (i = 1; i <= n; i++) sites[e[i]] = 1
		}
		NR == FNR { b[$1] = $2; next }
		$1 in sites { next }
		{
			d = $2 - b[$1]
			if ($1 in fix) tol = fix[$1]
			else if ($1 ~ /^(TCP|request_sock_TCP|swiwarp|siw|sockstat)/) tol = 1
			else if ($1 ~ /^kmalloc-/) {
				tol = 3 * $3; if (tol < int(b[$1] / 50)) tol = int(b[$1] / 50)
				if (tol < mintol) tol = mintol
			}
			else tol = 256
			if (d > tol) printf "%s +%d (%d -> %d, tolerance %d); ", $1, d, b[$1], $2, tol
		}' "$before" "$after"
}

# slab_check NAME BEFORE AFTER [MIN_KMALLOC_TOL [CACHE=TOL...]]: take
# snapshot AFTER (BEFORE must be a slab_snapshot too),
# compare it with BEFORE; PASS or FAIL NAME.  A cache over its tolerance
# gets a second snapshot 15 s later, and only what is still over then
# fails: a leak stays, while the noise above (per-CPU slabs, kfree_rcu
# batches of 9p and sysfs objects still in flight) does not; kmalloc-96
# once read +135 over a 126 tolerance in CI with nothing leaking (85-soak,
# g1; the same boot on this host read +3, -60 and -13).
slab_check() {
	local name=$1 before=$2 after=$3 bad first
	shift 3
	slab_snapshot "$after"
	bad=$(slab_growth "$before" "$after" "$@")
	if [ -n "$bad" ]; then
		first=$bad
		sleep 15
		slab_snapshot "$after"
		bad=$(slab_growth "$before" "$after" "$@")
		echo "slab: over tolerance at first ($first), 15 s later: ${bad:-all within}"
	fi
	paste "$before" "$after" | awk '$2 != $5 {print "slab", $1, $2, "->", $5}'
	[ -f "$before.sites" ] && [ -f "$after.sites" ] &&
		awk 'NR == FNR { b[$1 " " $2] = $3; next }
			{ k = $1 " " $2; if ($3 != b[k]) print "slab site", k, b[k] + 0, "->", $3; delete b[k] }
			END { for (k in b) if (b[k]) print "slab site", k, b[k], "-> 0" }' "$before.sites" "$after.sites"
	lab_verdict "$name" "$bad"
}
