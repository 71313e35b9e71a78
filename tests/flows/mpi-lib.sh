#!/bin/bash
# Open MPI across lab guests, for tests/flows/lab-guest.sh (MPI on swiwarp)
# and tests/bench/flows/guest.sh (the MPI join).  Source after
# tests/lab/lib.sh.  The guests have no sshd: mpirun on guest 1 starts its
# daemons on the others through tests/bench/flows/rsh.sh, which drops the
# command into $LAB_SHARED/rsh for the guest's mpi_rsh_serve loop.
#   mpi_rsh_serve            (guests 2..N) run rsh.sh's commands until mpi_rsh_stop
#   mpi_rsh_stop             (guest 1) end every guest's loop
#   mpirun "${MPI_LAUNCH[@]}" -np N --host "$(mpi_hosts [FIRST] LAST)" ...
#   "${MPI_SWIWARP[@]}"      the MCA settings of MPI over swiwarp (Documentation/mpi.md)
#   "${MPI_LINEAR_BARRIER[@]}"  the 3-rank barrier workaround, for benchmarks
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export FLOWS_RSH_DIR=$LAB_SHARED/rsh
mkdir -p "$FLOWS_RSH_DIR"

# shellcheck disable=SC2034 # used by the scripts that source this file
MPI_LAUNCH=(--allow-run-as-root --mca plm_rsh_agent "$LAB_TOP/tests/bench/flows/rsh.sh"
	--mca plm_rsh_no_tree_spawn 1 --mca oob_tcp_if_include 192.0.2.0/24
	-x LD_LIBRARY_PATH -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM)
# Point to point through the ofi MTL on libfabric's verbs;ofi_rxm (the
# openib BTL of Debian's Open MPI has no rdmacm CPC, which iWARP needs), and
# no TCP BTL at all, so nothing can fall back to TCP silently.
# shellcheck disable=SC2034,SC2054 # ditto; the commas are in MCA values
MPI_SWIWARP=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "verbs;ofi_rxm" --mca btl self,vader)
# Open MPI's linear barrier instead of recursive doubling, whose synchronous
# send hangs among three or more ranks on iWARP (an Open MPI / libfabric bug,
# Documentation/mpi.md, "MPI_Ssend hangs on iWARP"): for runs that measure
# something else (the benchmark), never for the checks of MPI on swiwarp.
# shellcheck disable=SC2034 # used by the scripts that source this file
MPI_LINEAR_BARRIER=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_barrier_algorithm 1)

# mpi_hosts [FIRST] LAST: the addresses of guests FIRST (default 1) to LAST,
# comma separated.
mpi_hosts() {
	local i h="" first=1 last=$1
	[ $# -ge 2 ] && first=$1 last=$2
	for i in $(seq "$first" "$last"); do h+=${h:+,}192.0.2.$i; done
	echo "$h"
}

mpi_rsh_serve() {
	local d=$FLOWS_RSH_DIR f b
	while [ ! -e "$d/stop" ]; do
		for f in "$d/$LAB_IP".*.cmd; do
			[ -e "$f" ] || continue
			b=${f%.cmd}
			mv "$f" "$b.run" || continue
			(
				bash -c "$(cat "$b.run")" >"$b.out" 2>&1 </dev/null
				echo $? >"$b.rc"
			) &
		done
		lab_nap 0.1
	done
}

mpi_rsh_stop() {
	: >"$FLOWS_RSH_DIR/stop"
}
