#!/bin/bash
# The kernel's own RDMA consumers over swiwarp and against upstream siw
# (issue 14), in one 3-guest lab boot: NVMe over Fabrics (nvmet-rdma and
# nvme-rdma with nvme-cli and fio), NFS v4.2 and v3 over RDMA, iSER, SRP and
# the kernel verbs API test module; then all modules unloaded.  The phases
# and what each checks: tests/ulp/nvmeof-guest.sh.  The lab's dmesg scanner
# fails the boot on any kernel warning.
# Guest 1, the swiwarp target (nvmet-rdma: the target's write path, its
# RDMA Reads of the host's data), boots Debian 13's 6.12 (issue 16); guest
# 2 (swiwarp host) and guest 3 (siw) Debian 12's 6.1.  Result names start
# with "g1-6.12,g2-6.1,g3-6.1/" (Documentation/lab.md "Kernels").
set -uo pipefail
# Two vCPUs only for guest 2, the swiwarp NVMe host: nvme-rdma opens one
# I/O queue per CPU, and its io-queues check wants at least two.  The
# target (g1) and the siw guest (g3) get one: each vCPU is a host thread
# under TCG, six of them on the host's two cores cost more in MTTCG's
# cross-vCPU work than they give (Documentation/lab.md "The time budget
# of make check").  LAB_SMP overrides it.
export LAB_SMP=${LAB_SMP:-1,2,1}
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/swiwarp/suite-lib.sh
source "$top/tests/swiwarp/suite-lib.sh"
t0=$SECONDS
swiwarp_suite_start ulp-nvmeof "$BUILD/lab/suite-nvmeof" || exit 0
for b in nvme fio rpc.nfsd mount.nfs iscsiadm iscsid; do
	if ! command -v "$b" >/dev/null; then
		skip ulp-nvmeof/lab "$b not installed (tools/setup-host.sh)"
		exit 0
	fi
done
# SWIWARP_KO is built for one kernel: every guest boots the default one.
kmix=${LAB_KVER:-default} ktag= nosiw=0
if [ -z "${SWIWARP_KO:-}" ]; then
	mixed_kernels 6.12,6.1,6.1 || exit 1
	[ -n "$ktag" ] && nosiw=1
fi
for k in ${kmix//,/ }; do
	kver=$("$top/tools/kernels.sh" resolve "$k") && moddir=$("$top/tools/kernels.sh" moddir "$kver") ||
		{ kver=unknown moddir=/nonexistent; }
	if ! compgen -G "$moddir/kernel/drivers/nvme/target/nvmet-rdma.ko*" >/dev/null; then
		skip ulp-nvmeof/lab "the lab kernel ($kver) has no nvmet-rdma"
		exit 0
	fi
done
# siw for guest 3's 6.1 (a no-op when up to date); with mixed kernels lab
# run gets LAB_NO_SIW=1, or it would build siw for 6.12, which no guest loads.
if ! "$top/tests/lab/build-siw.sh" >"$out/build-siw.log" 2>&1; then
	fail ulp-nvmeof/build-siw "see $out/build-siw.log"
fi
# SWIWARP_KO (another build of the module, e.g. one without a fix) is
# handed to the guests, whose lab_load_swiwarp loads it instead.
# 2 GiB guests: the NFS servers' exports are tmpfs, with room for two
# clients' large files (NFS_MB / NFS3_MB MiB for v4.2 / v3, tests/ulp/nvmeof-guest.sh).
# ULP_PHASES picks phase groups (tests/ulp/nvmeof-guest.sh).  On a debug
# kernel the whole suite outlasts one boot's time limit (on 6.12 debug it
# had reached the NFS phase after 70 min, session 36), so it runs in two
# boots there: the NVMe-oF phases and the kernel verbs API cases, then NFS,
# iSER and SRP.
boots=${ULP_PHASES:-all}
case ${LAB_KVER:-} in debug-*) [ -z "${ULP_PHASES:-}" ] && boots="nvme,kapi nfs,iser,srp" ;; esac
i=0
for phases in $boots; do
	i=$((i + 1))
	LAB_NO_SIW=$nosiw run_lab run$i -n 3 --kernel "$kmix" --mem 2048 --timeout 1200 -- \
		"${SWIWARP_KO:+SWIWARP_KO=$SWIWARP_KO }LAB_RESULT_PREFIX=$ktag ULP_PHASES=$phases NVMEOF_MB=${NVMEOF_MB:-2}${NFS_MB:+ NFS_MB=$NFS_MB}${NFS3_MB:+ NFS3_MB=$NFS3_MB} tests/ulp/nvmeof-guest.sh"
done
echo "ulp-nvmeof took $((SECONDS - t0)) s"
[ $fails -eq 0 ]
