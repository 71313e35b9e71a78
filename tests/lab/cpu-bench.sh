#!/bin/bash
# Copy-heavy micro-benchmark for choosing the guests' emulated CPU
# (Documentation/lab.md, "How it works"): run in a guest as
#   LAB_CPU=MODEL tests/lab/lab run -n 1 --smp 1 -- tests/lab/cpu-bench.sh
# It prints the string-instruction flags the guest kernel sees, then the
# seconds of four copies: clear_user (dd from /dev/zero), copy_to_user and
# copy_from_user (a pipe), both plus hashing (md5sum), and user-space
# memcpy (Python).
set -u
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'erms|fsrm|rep_good|avx2' | tr '\n' ' ')"
echo "dd 1000 MiB from /dev/zero: $(secs dd if=/dev/zero of=/dev/null bs=1M count=1000) s"
echo "500 MB through a pipe: $(secs sh -c 'dd if=/dev/zero bs=64k count=8000 2>/dev/null | cat >/dev/null') s"
echo "md5sum of 200 MB: $(secs sh -c 'head -c 200000000 /dev/zero | md5sum') s"
echo "300 MB of Python bytes() copies: $(secs python3 -c 'b = bytearray(1 << 20)
for _ in range(300):
    c = bytes(b)') s"
