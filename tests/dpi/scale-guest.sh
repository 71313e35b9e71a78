#!/bin/bash
# What an all-to-all libdpi mesh costs per connection, measured in lab
# guests on swiwarp (Documentation/flows.md, "Running at 100+ nodes").
# NOT part of make check: tests/dpi/scale-measure.sh boots the lab for it
# on demand.  The numbers are the point, the checks only say that the mesh
# was complete and that something was measured.
#
# Usage (in every guest of `lab run -n G`): scale-guest.sh [N...]
# For each cluster size N (default "2 4 8"), DPI nodes 0..N-1 each run
# `dpi mesh` (tests/dpi: userspace/dpi/tools/dpi.cpp, cmd_mesh), node k on
# guest (k mod G)+1: with G=4 and N=8 every guest runs two nodes.  Every
# node appends to a buffer on every other node, so each node has N-1
# outgoing and N-1 accepted connections.  Guest 1 reads its mesh processes
# (/proc/PID/status) and its kernel (meminfo, slabinfo, sockstat, ss,
# rdma res) once with the nodes up but not connected and once with every
# connection up, and writes both snapshots and the differences, also
# divided by the number of new QPs on the guest, to $LAB_OUT/scale.txt.
# Results: dpi.scale.nN.mesh-gI (every node of guest I completed the mesh),
# dpi.scale.nN.qps (guest 1 gained exactly 2(N-1) QPs per node it runs),
# dpi.scale.nN.measured (the differences were written).
source "$LAB_TOP/tests/lab/lib.sh"
dpi=${DPI_BIN:-$BUILD/userspace/dpi}/dpi
work=/tmp/dpi-scale
out=$LAB_OUT/scale
mkdir -p "$work" "$out"
sizes=${*:-2 4 8}
G=$LAB_N
# The critical-size calibration registers and frees up to 8 MiB at start;
# a fixed value keeps that out of the "before" snapshot (and saves TCG time).
export DPI_CRITICAL_SIZE=65536
export DPI_TIMEOUT_MS=0
t=dpi.scale
bar() { lab_barrier "$1" 1000000 || { lab_fail "$t.barrier-$1-g$LAB_ID" "$LAB_BARRIER_WHY"; lab_finish; }; }

lab_load_swiwarp
rc=$?
if [ $rc -ne 0 ]; then
	[ "$LAB_ID" = 1 ] && lab_fail "$t.load" "lab_load_swiwarp returned $rc"
	lab_barrier loaded 1000000
	lab_finish
fi
bar loaded

# snapshot FILE PID...: one "key value" per line; process values are summed
# over the PIDs (kB unless named otherwise), kernel values are guest-wide.
snapshot() {
	local f=$1 pid k v fds
	shift
	{
		for k in VmRSS RssAnon RssFile VmLck VmPin VmPTE Threads; do
			v=0
			for pid in "$@"; do
				v=$((v + $(awk -v k="$k:" '$1 == k { print $2 }' "/proc/$pid/status")))
			done
			echo "proc.$k $v"
		done
		v=0
		for pid in "$@"; do
			fds=("/proc/$pid/fd/"*)
			v=$((v + ${#fds[@]}))
		done
		echo "proc.fds $v"
		awk '$1 ~ /^(MemFree|MemAvailable|Slab|SUnreclaim|SReclaimable|VmallocUsed|KernelStack|PageTables|Percpu):$/ {
			sub(":", "", $1); print "mem." $1, $2 }' /proc/meminfo
		# free pages on the per-CPU lists, which MemFree does not count:
		# the kernel takes new pages from there first
		awk '$1 == "count:" { c += $2 } END { print "mem.pcp_pages", c + 0 }' /proc/zoneinfo
		awk '$1 == "TCP:" { for (i = 2; i < NF; i += 2) print "sockstat." $i, $(i + 1) }' /proc/net/sockstat
		# rdma res: "0: swiwarp0: pd 1 cq 2 qp 1 cm_id 2 mr 4 ctx 1 srq 0"
		rdma res show 2>/dev/null | awk '/swiwarp0/ { for (i = 3; i < NF; i += 2) print "rdma." $i, $(i + 1) }'
		echo "rdma.qp_lines $(rdma res show qp 2>/dev/null | grep -c swiwarp0)"
		# TCP sockets of the mesh (its ports are $lo..$hi): counts and
		# skmem sums (bytes): r/t allocated, rb/tb limits, f forward
		# allocation, w queued.
		ss -tmnHO state established 2>/dev/null | awk -v lo="$lo" -v hi="$hi" '
			{ mine = 0; n = 0
			  for (i = 1; i <= NF && n < 2; i++)
				if ($i ~ /:[0-9]+$/) { n++; p = $i; sub(/.*:/, "", p); if (p + 0 >= lo && p + 0 <= hi) mine = 1 }
			  if (!mine || !match($0, /skmem:\([^)]*\)/)) next
			  s = substr($0, RSTART + 7, RLENGTH - 8); cnt++
			  m = split(s, kv, ",")
			  for (j = 1; j <= m; j++) { key = kv[j]; sub(/[0-9]+$/, "", key); val = kv[j]; sub(/^[a-z]+/, "", val); sum[key] += val }
			}
			END { print "ss.sockets", cnt + 0; for (key in sum) print "ss." key, sum[key] }'
		# slab caches by bytes in use (active objects x object size)
		awk 'NR > 2 { print "slab." $1, $2 * $4 }' /proc/slabinfo
	} >"$f"
}

for N in $sizes; do
	base=$((7600 + 20 * N)) # own ports per size: no listener is ever reused
	lo=$base
	hi=$((base + N - 1))
	spec=$work/mesh-$N.spec
	: >"$spec"
	for ((k = 0; k < N; k++)); do
		echo "node $k 192.0.2.$((k % G + 1)):$((base + k)) device=swiwarp0" >>"$spec"
	done
	go=$LAB_SHARED/mesh-$N.go
	stop=$LAB_SHARED/mesh-$N.stop
	pids=()
	ids=()
	for ((k = LAB_ID - 1; k < N; k += G)); do
		"$dpi" --spec "$spec" --id "$k" mesh --go-file "$go" --stop-file "$stop" \
			--wait-ms 300000 2>"$out/n$N-node$k.log" &
		pids+=($!)
		ids+=("$k")
	done
	ok=1
	for i in "${!pids[@]}"; do
		lab_wait_output "$out/n$N-node${ids[i]}.log" 'mesh: node [0-9]+ up' "${pids[i]}" 300 || ok=0
	done
	bar "n$N-up"
	if [ "$LAB_ID" = 1 ]; then
		# settle: the processes have just printed "up"
		lab_nap 2
		snapshot "$out/n$N.before" "${pids[@]}"
		touch "$go"
	fi
	for i in "${!pids[@]}"; do
		lab_wait_output "$out/n$N-node${ids[i]}.log" 'mesh: node [0-9]+ ready' "${pids[i]}" 900 || ok=0
	done
	bar "n$N-ready"
	if [ "$LAB_ID" = 1 ]; then
		lab_nap 2
		snapshot "$out/n$N.after" "${pids[@]}"
		cp /proc/net/sockstat "$out/n$N.sockstat"
		ss -tmnO state established >"$out/n$N.ss" 2>&1
		rdma res show qp >"$out/n$N.qps" 2>&1
		{
			echo "kernel $(uname -r), guest memory $(awk '/^MemTotal/ { print $2 }' /proc/meminfo) kB, $(nproc) vCPU"
			echo "ulimit -l $(ulimit -l) (set by the lab; Linux's default is 8192 kB)"
		} >"$out/guest"
		for key in net.ipv4.tcp_rmem net.ipv4.tcp_wmem net.ipv4.tcp_mem; do
			echo "$key $(sysctl -n "$key" | tr '\t' ' ')"
		done >"$out/sysctl"
		touch "$stop"
	fi
	for i in "${!pids[@]}"; do
		wait "${pids[i]}" || ok=0
		grep -q "mesh: node ${ids[i]} ready: out=$((N - 1)) in=$((N - 1)) " "$out/n$N-node${ids[i]}.log" || ok=0
	done
	if [ ${#pids[@]} -eq 0 ]; then
		: # no node of this size on this guest
	elif [ $ok = 1 ]; then
		lab_pass "$t.n$N.mesh-g$LAB_ID"
	else
		lab_fail "$t.n$N.mesh-g$LAB_ID" "$(for k in "${ids[@]}"; do tail -n 2 "$out/n$N-node$k.log"; done | tr '\n' ' ' | cut -c1-400) $(lab_klog 2)"
	fi
	bar "n$N-done"

	[ "$LAB_ID" = 1 ] || continue
	nodes_here=${#pids[@]}
	want_qps=$((2 * (N - 1) * nodes_here))
	# differences, and per new QP (= per connection end on this guest)
	LC_ALL=C join <(LC_ALL=C sort "$out/n$N.before") <(LC_ALL=C sort "$out/n$N.after") | awk -v N="$N" -v here="$nodes_here" '
		{ d[$1] = $3 - $2; b[$1] = $2; a[$1] = $3; keys[++n] = $1 }
		END {
			q = d["rdma.qp"]
			printf "N=%d nodes_on_guest1=%d new_qps=%d\n", N, here, q
			print "(units: proc.Vm*, proc.Rss*, mem.* kB; slab.*, ss.* bytes; sockstat.mem, mem.pcp_pages pages)"
			for (i = 1; i <= n; i++) {
				k = keys[i]
				if (k ~ /^slab\./ && (d[k] < 4096 && d[k] > -4096)) continue
				printf "%-28s before %12d after %12d diff %12d per_qp %12.1f\n", k, b[k], a[k], d[k], q ? d[k] / q : 0
			}
		}' >"$out/n$N.diff"
	got_qps=$(awk '/^N=/ { sub("new_qps=", "", $3); print $3 }' "$out/n$N.diff")
	if [ "$got_qps" = "$want_qps" ]; then
		lab_pass "$t.n$N.qps ($got_qps new QPs on guest 1)"
	else
		lab_fail "$t.n$N.qps" "guest 1 gained ${got_qps:-?} QPs, want $want_qps: $(head -c 300 "$out/n$N.qps")"
	fi
	pin=$(awk '$1 == "proc.VmPin" { print $9 }' "$out/n$N.diff")
	if [ "${got_qps:-0}" -gt 0 ] && [ "${pin%.*}" -gt 0 ] 2>/dev/null; then
		lab_pass "$t.n$N.measured (VmPin +$pin kB per QP)"
		cat "$out/n$N.diff" >>"$LAB_OUT/scale.txt"
		grep -h 'ready:' "$out"/n"$N"-node*.log >>"$LAB_OUT/scale.txt"
	else
		lab_fail "$t.n$N.measured" "no per-QP difference: $(head -c 300 "$out/n$N.diff")"
	fi
done
[ "$LAB_ID" = 1 ] && cat "$out/guest" "$out/sysctl" >>"$LAB_OUT/scale.txt" 2>/dev/null
lab_finish
