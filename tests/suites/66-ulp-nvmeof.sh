#!/bin/bash
# NVMe over Fabrics over swiwarp (issue 14): the kernel's own RDMA
# consumers nvmet-rdma (target) and nvme-rdma (host) with Debian's
# nvme-cli and fio, in one 3-guest lab boot (guest side and phases:
# tests/ulp/nvmeof-guest.sh): swiwarp <-> swiwarp with a file and a
# null_blk namespace, fio with crc32c verification (sequential and
# random, 4 KiB..1 MiB, iodepth 32, two I/O queues), nvme reset during
# verified I/O, a disconnect during I/O; upstream siw as host against a
# swiwarp target and as target for a swiwarp host; then all modules
# unloaded.  The lab's dmesg scanner fails the boot on any kernel warning.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/swiwarp/suite-lib.sh
source "$top/tests/swiwarp/suite-lib.sh"
t0=$SECONDS
swiwarp_suite_start ulp-nvmeof "${NVMEOF_OUT:-$BUILD/lab/suite-nvmeof}" || exit 0
for b in nvme fio; do
	if ! command -v "$b" >/dev/null; then
		skip ulp-nvmeof/lab "$b not installed (tools/setup-host.sh)"
		exit 0
	fi
done
kver=$("$top/tools/kernels.sh" resolve "${LAB_KVER:-default}") || kver=unknown
if [ ! -f "/lib/modules/$kver/kernel/drivers/nvme/target/nvmet-rdma.ko" ]; then
	skip ulp-nvmeof/lab "the lab kernel ($kver) has no nvmet-rdma"
	exit 0
fi
if [ ! -f "$BUILD/siw/siw.ko" ] && ! "$top/tests/lab/build-siw.sh" >"$out/build-siw.log" 2>&1; then
	fail ulp-nvmeof/build-siw "see $out/build-siw.log"
fi
# SWIWARP_KO (another build of the module, e.g. one without a fix) is
# handed to the guests, whose lab_load_swiwarp loads it instead.
run_lab run -n 3 --timeout "${NVMEOF_TIMEOUT:-900}" -- \
	"${SWIWARP_KO:+SWIWARP_KO=$SWIWARP_KO }NVMEOF_MB=${NVMEOF_MB:-2} tests/ulp/nvmeof-guest.sh"
echo "ulp-nvmeof took $((SECONDS - t0)) s"
[ $fails -eq 0 ]
