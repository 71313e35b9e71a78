#!/bin/bash
# libdpi's PMIx address exchange on the host (no RDMA): Open MPI's mpirun
# starts `dpi info` as 2 ranks with DPI_ADDR/DPI_DEVICE given (the
# address-only mode), and each must print the same 2-node cluster: rank r at
# 127.0.0.1:DPI_PORT+local rank.  Then a rank that publishes nothing, and one
# that publishes garbage, must make rank 0 fail naming it, within the timeout.
# Usage: pmix_host_test.sh DPI_TOOL PMIX_PEER      (exit 77: no mpirun)
set -uo pipefail
dpi=${1:?dpi tool} peer=${2:?dpi-pmix-peer}
command -v mpirun >/dev/null || { echo "no mpirun (openmpi-bin)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self OMPI_MCA_rmaps_base_oversubscribe=1
unset DPI_CLUSTER DPI_NODE_ID
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { timeout 90 mpirun --allow-run-as-root -x DPI_ADDR=127.0.0.1 -x DPI_DEVICE=lo -x DPI_PORT=7600 -x DPI_VERBOSE=1 -x DPI_PMIX_TIMEOUT=10 "$@"; }

run --output-filename "$tmp/out" -np 2 "$dpi" info >"$tmp/log" 2>&1
rc=$?
for r in 0 1; do
	f=$(ls "$tmp"/out/1/rank.$r/stdout 2>/dev/null)
	e=$(ls "$tmp"/out/1/rank.$r/stderr 2>/dev/null)
	want="node 0 127.0.0.1:7600 device=lo
node 1 127.0.0.1:7601 device=lo"
	got=$(grep '^node ' "$f" 2>/dev/null)
	if [ $rc -ne 0 ] || [ "$got" != "$want" ] || ! grep -q "^cluster from PMIx namespace .*, this is node $r\$" "$f" ||
		! grep -q "^dpi: cluster from PMIx namespace .*: 2 nodes, this is node $r at 127.0.0.1:760$r device=lo\$" "$e"; then
		echo "rank $r: mpirun exit $rc, printed:"; cat "$f" "$e" "$tmp/log" 2>/dev/null
		fail=1
	fi
done
[ $fail = 0 ] && echo "ok: 2 ranks exchanged their addresses through PMIx"

# A peer that publishes nothing, then one that publishes garbage.
for case in silent garbage; do
	args=()
	[ $case = garbage ] && args=("not an address")
	start=$SECONDS
	run -np 1 "$dpi" info : -np 1 "$peer" "${args[@]}" >"$tmp/$case" 2>&1
	rc=$?
	want="rank 1 published no address"
	[ $case = garbage ] && want="rank 1 published a bad address 'not an address'"
	if [ $rc -eq 0 ] || ! grep -q "dpi: spec_error: .*$want" "$tmp/$case"; then
		echo "$case peer: mpirun exit $rc after $((SECONDS - start)) s, no '$want':"; cat "$tmp/$case"
		fail=1
	else
		echo "ok: $case peer: '$(grep -o "${want}[^(]*" "$tmp/$case" | head -1)' after $((SECONDS - start)) s"
	fi
done
exit $fail
