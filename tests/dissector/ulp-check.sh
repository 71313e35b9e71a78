#!/usr/bin/env bash
# ULP hand-off of the plugin (dissector/ulp.c) on the synthetic capture of
# tests/dissector/ulp-synth.py: the Send payloads must reach Wireshark's own
# nvme-rdma, rpcordma and iser dissectors, an RPC-over-RDMA write chunk must
# be stitched into its reply, and none of it when the plugin's adapters are
# disabled.  CTest test dissector.ulp_handoff; exit 77 = skip.
#   tests/dissector/ulp-check.sh PLUGIN.so
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
plugin=${1:?usage: ulp-check.sh PLUGIN.so}
command -v tshark >/dev/null || { echo "tshark not installed"; exit 77; }
[ -f "$plugin" ] || { echo "$plugin not built"; exit 77; }
work=$(mktemp -d /tmp/swiwarp-ulp.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/home/.local/lib/wireshark/plugins/4.0/epan"
install -m 644 "$plugin" "$work/home/.local/lib/wireshark/plugins/4.0/epan/"
python3 "$here/ulp-synth.py" "$work/ulp.pcap" || exit 1
chmod -R a+rX "$work"
# tshark ignores personal plugins when run as root
runas=()
[ "$(id -u)" -eq 0 ] && runas=(setpriv --reuid=65534 --regid=65534 --clear-groups)
count() { # filter [tshark args...]
	local f=$1
	shift
	(cd / && "${runas[@]}" env HOME="$work/home" tshark -r "$work/ulp.pcap" "$@" -Y "$f" \
		-T fields -e frame.number 2>/dev/null) | grep -c .
}
failed=0
expect() { # name want filter [tshark args...]
	local name=$1 want=$2 got
	shift 2
	got=$(count "$@")
	if [ "$got" = "$want" ]; then
		echo "ok   $name ($got)"
	else
		echo "FAIL $name: $got frames match '$1', want $want"
		failed=1
	fi
}
expect nvme.connect_command 1 'nvme.fabrics.cmd.fctype == 1 && nvme-rdma.cmd.qid == 0'
expect nvme.completion_matched 1 'nvme.fabrics.cmd_pkt && nvme.fabrics.cmd_latency'
expect nvme.identify_command 1 'nvme.cmd.opc == 0x06 && nvme.cmd.sgl1.key == 0x1234'
expect nvme.write_linked_to_command 1 'rdmap.opcode == 0 && nvme.fabrics.cmd_pkt'
expect nvme.identify_completed 1 'nvme.cqe.status == 0 && nvme.cmd_pkt && nvme.cmd_latency'
expect rpcordma.nfs_null_call_reply 2 'rpcordma.msg_type == 0 && nfs.procedure_v3 == 0'
expect rpcordma.reply_matched 2 'rpc.msgtyp == 1 && rpc.repframe'
expect iser.nop_out 1 'iser.flags.opcode == 1 && iscsi.opcode == 0x00'
# The NFSv3 READ whose data came in a write chunk: rpcordma stitches the
# Write's 8192 bytes into the reply (44 bytes of it in the Send), and nfs
# decodes the data.  Wireshark's rpcordma completes write chunks on the
# second pass only (dissector.md), hence -2; the Write itself stays data.
expect rpcordma.write_chunk_stitched 1 'nfs.procedure_v3 == 6 && rpc.msgtyp == 1 && rpcordma.reassembled.length == 8236 && nfs.data contains "swiwarp synthetic write chunk"' -2
expect rpcordma.write_as_data 1 'rdmap.opcode == 0 && tcp.port == 20049 && data' -2
expect no_malformed 0 '_ws.malformed || _ws.expert.severity == "Error"' -2
off=(--disable-heuristic nvme_rdma_iwarp --disable-heuristic rpcordma_iwarp_swiwarp
	--disable-heuristic iser_iwarp)
expect adapters_off.no_ulp 0 'nvme-rdma || rpcordma || iser' "${off[@]}"
expect adapters_off.payloads_as_data 11 'rdmap.payload && data' "${off[@]}"
exit $failed
