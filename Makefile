# swiwarp top-level build.  See README.md for the two commands that matter:
#   make demo    -- the main job: two lab guests talking iWARP, captured and dissected
#   make check   -- build everything and run every test; ends in "N passed, N failed"

# Debian's 6.1 headers.  Never derived from `uname -r`: build hosts run other kernels.
KDIR ?= $(lastword $(sort $(wildcard /usr/src/linux-headers-6.1.*-amd64)))
KVER ?= $(shell sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
BUILD ?= $(CURDIR)/build
CMAKE_BUILD_TYPE ?= RelWithDebInfo
DESTDIR ?=
MULTIARCH := x86_64-linux-gnu

export KDIR KVER BUILD

.PHONY: all setup kernel userspace install check demo bench soak clean lab-shell

all: setup kernel userspace

# One idempotent script installs the Debian packages we need.
setup:
	@tools/setup-host.sh

kernel: setup
	@if [ -f kernel/Makefile ]; then $(MAKE) -C kernel KDIR=$(KDIR); fi

# Everything in userspace (wire-core tests, provider, libdpi, dissector plugin,
# tools) is one CMake project.
$(BUILD)/build.ninja: setup
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE) -DCMAKE_INSTALL_PREFIX=/usr

userspace: $(BUILD)/build.ninja
	cmake --build $(BUILD)

install: all
	$(MAKE) -C kernel KDIR=$(KDIR) install DESTDIR=$(DESTDIR)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix /usr
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

check: all
	@tests/run-checks.sh

demo: all
	@tests/lab/demo.sh

bench: all
	@tests/bench/run.sh

# The long load test (issue 8); `make check` runs a short version of it.
soak: all
	@tests/soak/run.sh

# A shell in a lab guest with the module and the checkout available.
lab-shell: all
	@tests/lab/lab shell

clean:
	$(MAKE) -C kernel KDIR=$(KDIR) clean
	rm -rf $(BUILD)
