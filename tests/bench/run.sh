#!/usr/bin/env bash
# make bench: every benchmark we have.  Each part is its own script that
# writes JSON under build/bench/ and plots + a report section under
# Documentation/ (stack, scale and flows keep their results in Documentation/data/).  Numbers are same-boot ratios only (TCG guests);
# crc-cost runs natively on the host instead.
#
#   tests/bench/stack.sh       swiwarp vs upstream siw vs iperf3 TCP (issue 7)
#   tests/bench/scale.sh       connection rate, memory per QP and MR, MR
#                              registration rate, 1-256 QPs (issue 20)
#   tests/bench/dpi-append.sh  DPI_Append vs ib_write_bw (issue 5)
#   tests/bench/flows.sh       shuffle / join / streaming (issue 6)
#   tests/bench/crc-cost.sh    the MPA CRC against a copy, natively on the
#                              host, not in a guest (issue 20)
#
# BENCH_ONLY=regex runs a subset by script name.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
rc=0
for part in stack scale dpi-append flows crc-cost; do
	script=tests/bench/$part.sh
	if [ -n "${BENCH_ONLY:-}" ] && ! [[ $part =~ $BENCH_ONLY ]]; then
		continue
	fi
	if [ ! -x "$script" ]; then
		echo "== bench: $part: NOT IMPLEMENTED YET ($script missing); no numbers produced"
		rc=1
		continue
	fi
	echo "== bench: $part ($script)"
	"$script" || { echo "== bench: $part FAILED"; rc=1; }
done
exit $rc
