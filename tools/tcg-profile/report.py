#!/usr/bin/env python3
"""Instructions a lab guest executed between two TCG profiler snapshots,
per kernel function and per module (tools/tcg-profile/tcg-profile.c).

usage: report.py KALLSYMS BEFORE AFTER [--top N] [--json OUT]

KALLSYMS is the guest's /proc/kallsyms, BEFORE and AFTER two snapshots
of the same guest: lab_tcg_window_start NAME and lab_tcg_window_end NAME
(tests/lab/lib.sh) leave them in the guest's output directory as
kallsyms.NAME, tcgprof.NAME.before and tcgprof.NAME.after.  Under TCG a guest's cost is what it executes, so
the share of instructions is the share of the guest's CPU time, up to how
costly each kind of instruction is to emulate (memory accesses and helper
calls more than register arithmetic).
"""
import argparse
import bisect
import json
import sys
from collections import defaultdict

# x86-64: the kernel half of the address space starts here; everything
# below is user space, counted as one bucket (one address can belong to
# several processes).
KERNEL_START = 0xFFFF800000000000


def read_kallsyms(path):
    """Sorted (address, name, module) of the text symbols."""
    syms = []
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) < 3 or f[1] not in "tTwW":
            continue
        addr = int(f[0], 16)
        if addr == 0:
            continue  # kptr_restrict hid them: nothing to map to
        module = f[3].strip("[]") if len(f) > 3 else "kernel"
        syms.append((addr, f[2], module))
    syms.sort()
    return syms


def read_snapshot(path):
    """{(vaddr, n_insns): executions}"""
    counts = {}
    for line in open(path):
        f = line.split()
        if len(f) == 3:
            counts[(int(f[0], 16), int(f[1], 16))] = int(f[2])
    return counts


def profile(syms, before, after):
    addrs = [s[0] for s in syms]
    by_func = defaultdict(int)
    by_module = defaultdict(int)
    total = 0
    for key, n_after in after.items():
        n = n_after - before.get(key, 0)
        if n <= 0:
            continue
        vaddr, n_insns = key
        insns = n * n_insns
        total += insns
        if vaddr == 0:
            func, module = "(blocks without a counter slot)", "?"
        elif vaddr < KERNEL_START:
            func, module = "(user space)", "user"
        else:
            i = bisect.bisect_right(addrs, vaddr) - 1
            if i < 0:
                func, module = "(below the first symbol)", "?"
            else:
                func, module = syms[i][1], syms[i][2]
        by_func[(func, module)] += insns
        by_module[module] += insns
    return total, by_func, by_module


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kallsyms")
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--json")
    a = ap.parse_args()
    syms = read_kallsyms(a.kallsyms)
    if not syms:
        sys.exit(f"report.py: no text symbols with addresses in {a.kallsyms}")
    total, by_func, by_module = profile(syms, read_snapshot(a.before), read_snapshot(a.after))
    if total == 0:
        sys.exit("report.py: no instructions between the two snapshots")
    print(f"{total} guest instructions between {a.before} and {a.after}")
    print("\nper module:")
    for module, n in sorted(by_module.items(), key=lambda x: -x[1]):
        print(f"  {100.0 * n / total:6.2f}%  {module}")
    print(f"\ntop {a.top} functions:")
    top = sorted(by_func.items(), key=lambda x: -x[1])[: a.top]
    for (func, module), n in top:
        print(f"  {100.0 * n / total:6.2f}%  {func} [{module}]")
    if a.json:
        json.dump({"total": total,
                   "modules": {m: n for m, n in by_module.items()},
                   "functions": [{"function": f, "module": m, "insns": n} for (f, m), n in top]},
                  open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
