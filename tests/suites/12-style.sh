#!/usr/bin/env bash
# check: host-only (boots no guest: runs alongside the background suites)
# Userspace style: every C/C++ file of the provider, libdpi, flows and their
# tests (the list is in tools/style.sh) is clang-format clean.  The
# clang-tidy half is `make tidy` (tools/style.sh --tidy): at ~18 s of CPU a
# file it would cost make check several minutes.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
exec "$top/tools/style.sh"
