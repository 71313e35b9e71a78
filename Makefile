# swiwarp top-level build.  See README.md for the two commands that matter:
#   make demo    -- the main job: two lab guests talking iWARP, captured and dissected
#   make check   -- build everything and run every test; ends in "N passed, N failed"

# The kernel to build for.  Nothing here looks at /usr/src: this file is read
# before `setup` runs, and on a fresh machine the headers only exist after it.
# kernel/Makefile picks Debian's headers when its own make starts, which is
# after setup.  KDIR=... (or KVER=...) on the command line still wins.
KERNEL_VARS := $(if $(KDIR),KDIR=$(KDIR)) $(if $(KVER),KVER=$(KVER))
BUILD ?= $(CURDIR)/build
CMAKE_BUILD_TYPE ?= RelWithDebInfo
DESTDIR ?=
MULTIARCH := x86_64-linux-gnu

export BUILD

.PHONY: all setup kernel userspace install deb check check-debug demo bench soak tidy clean lab-shell

all: setup kernel userspace

# One idempotent script installs the Debian packages we need.  SETUP= swaps
# it out (tests/suites/01-first-run.sh replays a fresh machine with it).
SETUP ?= $(CURDIR)/tools/setup-host.sh
setup:
	@$(SETUP)

# Kbuild compiles one file at a time unless told otherwise: every kernel's
# module took 65 s so in a clean clone on 2 cores, 40 s with -j2.  A -j of
# the caller's own (seen in MAKEFLAGS when the recipe runs) wins.
kernel: setup
	$(MAKE) -C kernel $(if $(findstring -j,$(MAKEFLAGS)),,-j$$(nproc)) $(KERNEL_VARS)

# Everything in userspace (wire-core tests, provider, libdpi, dissector plugin,
# tools) is one CMake project.
$(BUILD)/build.ninja: setup
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE) -DCMAKE_INSTALL_PREFIX=/usr

userspace: $(BUILD)/build.ninja
	cmake --build $(BUILD)

install: all
	$(MAKE) -C kernel $(KERNEL_VARS) install DESTDIR=$(DESTDIR)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix /usr

# Debian packages (swiwarp-dkms, ibverbs-provider-swiwarp,
# wireshark-plugin-swiwarp, libdpi0, libdpi-dev, libdpi-bin) into
# $(BUILD)/deb with dpkg-buildpackage; Documentation/packaging.md.
deb: setup
	@tools/make-deb.sh $(BUILD)/deb

check: all
	@tests/run-checks.sh

demo: all
	@tests/lab/demo.sh

# The suites that exercise the module hardest, on a debug kernel (KASAN,
# lockdep, sleep-in-atomic checks, debug objects, kmemleak; issue 15), built
# from Debian's source and config on first use (tools/debug-kernel.sh, an
# hour or more on 2 cores) and cached outside the checkout: the data path
# (63), the kernel's own consumers (66), the hostile peer, the unprivileged
# attacker and fault injection (80), the faults (81) and the soak (85).  Its
# own logs; not part of `make check` (TCG with KASAN is several times
# slower: hours for the set).
DEBUG_SERIES ?= 6.1
# The suites issue 15 names (ULPs, robustness, faults, hostile peer, soak);
# 63's bulk transfers do not fit a debug guest (Documentation/lab.md).
DEBUG_SUITES ?= ^(66|80|81|85)-
check-debug: all
	@tools/debug-kernel.sh build $(DEBUG_SERIES)
	SWIWARP_WITH_DEBUG_KERNELS=1 $(MAKE) -C kernel
	@CHECK_SERIAL=1 LAB_KVER=debug-$(DEBUG_SERIES) CHECK_ONLY='$(DEBUG_SUITES)' \
		CHECK_LOG_DIR=$(BUILD)/check-debug-logs tests/run-checks.sh

bench: all
	@tests/bench/run.sh

# The long load test (issue 8); `make check` runs a short version of it.
soak: all
	@tests/soak/run.sh

# clang-format and clang-tidy on the userspace C++ (tools/style.sh); make
# check runs only the clang-format half (suite 12-style).
tidy: userspace
	@tools/style.sh --tidy $(BUILD)

# A shell in a lab guest with the module and the checkout available.
lab-shell: all
	@tests/lab/lab shell

clean:
	$(MAKE) -C kernel $(KERNEL_VARS) clean
	rm -rf $(BUILD)
