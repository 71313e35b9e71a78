#!/usr/bin/env python3
"""report.py on made-up symbols and snapshots (CTest tools.tcg_profile_report)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

KALLSYMS = """\
ffffffff81000000 T _text
ffffffff81001000 T memcpy
ffffffff81001100 t helper
ffffffffc0000000 t swiwarp_tx\t[swiwarp]
ffffffffc0000400 t swiwarp_rx\t[swiwarp]
ffffffffc0000800 d swiwarp_data\t[swiwarp]
"""
# Snapshot lines: vaddr and instructions per block in hex, executions in
# decimal.
BEFORE = "ffffffff81001010 4 100\nffffffffc0000010 a 5\nffffffff81001300 2 10\n0 1 0\n"
# memcpy +50 x 4; helper two new blocks, 2 x 3 and 1 x 5; swiwarp_tx +5 x
# 10; swiwarp_rx 7 x 2 (the data symbol above it must not take them); user
# space 9 x 1; a block that shows fewer executions than before: ignored.
AFTER = ("ffffffff81001010 4 150\nffffffff81001104 3 2\nffffffffc0000010 a 10\n"
         "ffffffffc0000900 2 7\n400000 1 9\nffffffff81001200 5 1\nffffffff81001300 2 4\n0 1 0\n")


def main():
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for name, text in (("kallsyms", KALLSYMS), ("before", BEFORE), ("after", AFTER)):
            paths.append(os.path.join(d, name))
            with open(paths[-1], "w") as f:
                f.write(text)
        syms = report.read_kallsyms(paths[0])
        total, by_func, by_module = report.profile(syms, report.read_snapshot(paths[1]),
                                                   report.read_snapshot(paths[2]))
    want_func = {("memcpy", "kernel"): 200, ("helper", "kernel"): 6 + 5,
                 ("swiwarp_tx", "swiwarp"): 50, ("swiwarp_rx", "swiwarp"): 14,
                 ("(user space)", "user"): 9}
    want = (sum(want_func.values()), want_func, {"kernel": 211, "swiwarp": 64, "user": 9})
    got = (total, dict(by_func), dict(by_module))
    if got != want:
        print(f"FAIL: got {got}, want {want}")
        return 1
    print("PASS: tcg-profile report attribution")
    return 0


if __name__ == "__main__":
    sys.exit(main())
