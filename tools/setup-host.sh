#!/usr/bin/env bash
# Install the Debian packages swiwarp needs to build, test and benchmark.
# Idempotent: it asks dpkg what is missing and installs only that, so
# `make check` can call it every time at almost no cost.
set -euo pipefail

packages=(
	# toolchain and build
	build-essential gcc-12 cmake ninja-build pkg-config kmod cpio bc
	clang clang-format clang-tidy libclang-rt-14-dev sparse
	libgtest-dev googletest
	# kernels the lab boots, headers we build against, source of upstream siw:
	# Debian 12's own 6.1 and the 6.12 of Debian 13, which bookworm's archive
	# carries too (meta packages that follow its newest ABI; see below)
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	linux-image-6.12-amd64 linux-headers-6.12-amd64 linux-source-6.12
	# the lab (xz-utils, zstd and binutils' readelf: tests/lab/boot-image.sh
	# unpacks the guest kernels once so that no boot decompresses them)
	qemu-system-x86 busybox-static vde2 iproute2 procps xz-utils zstd binutils
	# nft: the lab delays each TCP connection's first frames only, by
	# conntrack's packet count (lab_delay_connect in tests/lab/lib.sh)
	nftables
	# RDMA userspace: libraries, our provider's build deps, test apps
	rdma-core ibverbs-utils rdmacm-utils perftest libibverbs-dev librdmacm-dev
	ibverbs-providers strace
	# kernel RDMA consumers in the lab (tests/suites/66-ulp-nvmeof.sh):
	# NVMe-oF, NFS over RDMA (nfsd's helpers and mount.nfs), iSER (open-iscsi's
	# iscsid and iscsiadm; the target is LIO, set up through configfs)
	nvme-cli fio nfs-kernel-server open-iscsi
	# captures and dissection
	tshark wireshark-dev tcpdump
	# README screenshot of the Wireshark GUI (tests/dissector/screenshot.sh)
	wireshark xvfb xauth x11-apps
	# baselines and plotting
	iperf3 python3-matplotlib
	# libdpi / flows
	liblz4-dev libzstd-dev libsodium-dev
	# flows benchmark: the join written with MPI (tests/bench/flows.sh);
	# libdpi's PMIx bootstrap under mpirun (libopenmpi-dev pulls libpmix-dev in too)
	openmpi-bin libopenmpi-dev libpmix-dev
	# libdpi under Slurm's srun --mpi=pmix (75-flows: a Slurm cluster of lab
	# guests; the mpi/pmix plugin is in slurm-wlm-basic-plugins).  Their
	# daemons run only in the guests: see "daemons" below.
	slurm-client slurmd slurmctld slurm-wlm-basic-plugins munge
	# Debian packages (make deb, tests/suites/69-deb.sh): debhelper with the
	# dkms add-on, DKMS itself (the lab guests run it from the host root)
	dpkg-dev debhelper dh-dkms dkms lintian
	# the debug lab kernel, built from linux-source (make check-debug,
	# tools/debug-kernel.sh)
	flex bison libelf-dev libssl-dev
)

installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'; }

# The 6.12 meta packages exist in bookworm's archive today.  Should the
# archive drop them, take the newest ABI by name instead (the unsigned image
# is enough for the lab: QEMU boots it directly); an installed 6.12 image
# or headers package of any ABI counts as the meta package.
alt_pattern() { # META: the regex of the packages that stand in for it
	case $1 in
	linux-image-6.12-amd64) echo 'linux-image-6\.12\.[0-9]+\+deb12-amd64(-unsigned)?' ;;
	linux-headers-6.12-amd64) echo 'linux-headers-6\.12\.[0-9]+\+deb12-amd64' ;;
	esac
}
installed_alt() { # META: a stand-in for it is installed
	local re
	re=$(alt_pattern "$1")
	# grep reads to the end (no -q): dpkg-query must not die of SIGPIPE
	# under pipefail
	[ -n "$re" ] && dpkg-query -W -f='${Package} ${Status}\n' 2>/dev/null |
		grep -E "^$re install ok installed\$" >/dev/null
}
newest_by_pattern() { # REGEX: the newest package whose name matches, or nothing
	apt-cache pkgnames 2>/dev/null | grep -E "^$1\$" | sort -V | tail -n 1 || true
}

missing=()
for p in "${packages[@]}"; do
	installed "$p" || installed_alt "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "setup-host: missing packages: ${missing[*]}" >&2
	echo "setup-host: run as root (or: sudo $0)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# First the package lists: a machine that never ran apt-get update (a fresh
# container has no lists at all, an image may have only the main suite's)
# knows no 6.12 kernel, nor much else.
apt-get update -q
for i in "${!missing[@]}"; do
	p=${missing[i]}
	re=$(alt_pattern "$p")
	[ -n "$re" ] || continue
	apt-cache show "$p" >/dev/null 2>&1 && continue
	# of one ABI, the -unsigned image sorts last: the one taken
	alt=$(newest_by_pattern "$re")
	if [ -z "$alt" ]; then
		echo "setup-host: no Debian 6.12 kernel ($p or a linux-*-6.12.*+deb12-amd64) in the package lists;" \
			"bookworm has it in bookworm-security: check /etc/apt/sources.list.d/" >&2
		exit 1
	fi
	missing[i]=$alt
done

# Packages whose postinst starts their daemon and enables it at boot.  The
# lab guests start them by hand (tests/flows/slurm-lib.sh); the host needs
# neither, so while they install, a policy-rc.d (invoke-rc.d's hook) denies
# every start, and afterwards their init script and unit are disabled
# (update-rc.d also disables the systemd unit, through systemctl --root, which
# works without systemd running).  Only the ones installed now: a daemon the
# admin set up before is left alone.
daemons=(munge slurmd slurmctld)
new_daemons=()
for d in "${daemons[@]}"; do
	[[ " ${missing[*]} " == *" $d "* ]] && new_daemons+=("$d")
done

echo "setup-host: installing ${#missing[@]} packages: ${missing[*]}"
# tshark asks whether non-root users may capture; answer once, quietly.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
policy=/usr/sbin/policy-rc.d
if [ ${#new_daemons[@]} -gt 0 ]; then
	# A policy already there (a container's) is put back afterwards.
	[ -e "$policy" ] && mv "$policy" "$policy.setup-host"
	trap 'rm -f "$policy"; [ -e "$policy.setup-host" ] && mv "$policy.setup-host" "$policy"' EXIT
	printf '#!/bin/sh\n# tools/setup-host.sh: no daemon starts while it installs packages\nexit 101\n' >"$policy"
	chmod 0755 "$policy"
fi
apt-get install -y -q --no-install-recommends "${missing[@]}"
for d in "${new_daemons[@]}"; do
	update-rc.d "$d" disable >/dev/null 2>&1 || echo "setup-host: could not disable $d's start at boot" >&2
done
[ ${#new_daemons[@]} -eq 0 ] || echo "setup-host: ${new_daemons[*]} installed, not started, disabled at boot"
