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
	# kernel the lab boots, headers we build against, source of upstream siw
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	# the lab
	qemu-system-x86 busybox-static vde2 iproute2 procps
	# RDMA userspace: libraries, our provider's build deps, test apps
	rdma-core ibverbs-utils rdmacm-utils perftest libibverbs-dev librdmacm-dev
	ibverbs-providers strace
	# captures and dissection
	tshark wireshark-dev tcpdump
	# README screenshot of the Wireshark GUI (tests/dissector/screenshot.sh)
	wireshark xvfb xauth x11-apps
	# baselines and plotting
	iperf3 python3-matplotlib
	# libdpi / flows
	liblz4-dev libzstd-dev libsodium-dev
	# flows benchmark: the join written with MPI (tests/bench/flows.sh)
	openmpi-bin libopenmpi-dev
	# Debian packages (make deb, tests/suites/69-deb.sh): debhelper with the
	# dkms add-on, DKMS itself (the lab guests run it from the host root)
	dpkg-dev debhelper dh-dkms dkms lintian
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "setup-host: missing packages: ${missing[*]}" >&2
	echo "setup-host: run as root (or: sudo $0)" >&2
	exit 1
fi

echo "setup-host: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, quietly.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
