#!/usr/bin/python3
"""Report of tests/bench/stack.sh (issue 7).

Reads the lab run directories (OUT/MODE/gN/runs.tsv, raw/, stamps/) written
by tests/bench/stack/guest.sh, writes OUT/results.json, the plots
IMAGES/bench-*.png and the generated part of the benchmarks page (between
the "stack:begin" and "stack:end" markers).  With --data DIR the results
are also kept as DIR/bench-stack-DATE.json, next to the page that cites
them.  Every figure is a ratio of two measurements from the same guest boot.

The JSON is compact: one line per run, summary row and goal.
  report.py --compact FILE...   rewrites existing results files that way.
"""
import argparse
import json
import os
import re
import statistics

STACKS = ["siw", "swiwarp", "swiwarp-mss", "swiwarp-zc", "swiwarp-copy", "swiwarp-gather", "swiwarp-wq", "swiwarp-crc",
          "tcp"]
LABEL = {"siw": "upstream siw", "swiwarp": "swiwarp, CRC off", "swiwarp-crc": "swiwarp, CRC on",
         "swiwarp-zc": "swiwarp, zero-copy on", "swiwarp-copy": "swiwarp, zero-copy off", "swiwarp-wq": "swiwarp, TX in the worker",
         "swiwarp-gather": "swiwarp, payload gathered before TCP copies it",
         "swiwarp-mss": "swiwarp, every FPDU within a segment (large_fpdu=0)", "tcp": "iperf3 TCP"}
HEAD = {"siw": "siw", "swiwarp": "swiwarp", "swiwarp-zc": "swiwarp zc", "swiwarp-copy": "swiwarp copy", "swiwarp-wq": "swiwarp wq", "swiwarp-gather": "swiwarp gather",
        "swiwarp-mss": "swiwarp mss", "swiwarp-crc": "swiwarp CRC", "tcp": "TCP"}
# Always shown; the optional zero-copy variants only when a run had them.
BASE_STACKS = ["siw", "swiwarp", "swiwarp-crc", "tcp"]
# The top of the tree (this file is tests/bench/stack/report.py).
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODE_LABEL = {"lo": "one guest, loopback", "link": "two guests, virtual link"}
NUM = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)(?:\s+([\d.]+))?(?:\s+([\d.]+))?")


def read_tsv(path):
    rows = []
    if not os.path.exists(path):
        return rows
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) != 13:
            continue
        rows.append(dict(idx=int(f[0]), mode=f[1], test=f[2], size=int(f[3]), stack=f[4], rep=int(f[5]),
                         attempt=int(f[6]), rc=f[7], secs=int(f[8]), busy=int(f[9]), total=int(f[10]),
                         bytes=int(f[11]), file=f[12]))
    return rows


def perftest_numbers(text):
    """First result line of a perftest report, as a list of floats."""
    for line in text.splitlines():
        m = NUM.match(line)
        if m:
            return [float(x) for x in line.split()]
    return None


def parse_run(gdirs, r):
    """Adds the measured values to run r (dict) from the raw output files."""
    test, stack, f = r["test"], r["stack"], r["file"]
    cli = srv = ""
    for g in gdirs:
        p = os.path.join(g, "raw", f + ".client")
        if os.path.exists(p):
            cli = open(p, errors="replace").read()
        p = os.path.join(g, "raw", f + ".server")
        if os.path.exists(p):
            srv = open(p, errors="replace").read()
        s0 = os.path.join(g, "stamps", f + ".start")
        s1 = os.path.join(g, "stamps", f + ".end")
        if os.path.exists(s0) and os.path.exists(s1):
            r["host_secs"] = os.stat(s1).st_mtime - os.stat(s0).st_mtime
    if test in ("write", "read", "send"):
        if stack == "tcp":
            try:
                j = json.loads(cli)
                r["Bps"] = j["end"]["sum_received"]["bits_per_second"] / 8
            except (ValueError, KeyError):
                pass
        else:
            nums = perftest_numbers(cli) or perftest_numbers(srv)
            if nums and len(nums) >= 4:
                r["Bps"] = nums[3] * 1048576  # perftest's MB/sec are MiB/s
        if r.get("host_secs"):
            r["host_Bps"] = r["bytes"] / r["host_secs"]
    elif test.startswith("lat_"):
        nums = perftest_numbers(cli) or perftest_numbers(srv)
        if nums and len(nums) >= 6:
            r["lat_typical_us"] = nums[4]
            r["lat_avg_us"] = nums[5]
    elif test == "conn":
        try:
            j = json.loads(cli)
            r["conn"] = {k: j[k] for k in ("rdma_connect_us_median", "rdma_total_us_median",
                                            "tcp_connect_us_median", "failures")}
        except (ValueError, KeyError):
            pass


def mean(xs):
    return statistics.fmean(xs) if xs else None


def collect(out, modes):
    runs = []
    for mode in modes:
        d = os.path.join(out, mode)
        gdirs = sorted(os.path.join(d, g) for g in os.listdir(d) if re.fullmatch(r"g\d+", g)) \
            if os.path.isdir(d) else []
        per_guest = [read_tsv(os.path.join(g, "runs.tsv")) for g in gdirs]
        if not per_guest or not per_guest[0]:
            continue
        # Guest 1 is the reference list; CPU ticks of every guest are summed.
        for i, r in enumerate(per_guest[-1] if mode == "link" else per_guest[0]):
            r = dict(r)
            others = [pg[i] for pg in per_guest if i < len(pg) and pg[i]["file"] == r["file"]]
            r["busy"] = sum(o["busy"] for o in others)
            r["total"] = sum(o["total"] for o in others)
            parse_run(gdirs, r)
            if any(os.path.exists(os.path.join(g, "raw", r["file"] + ".perf.txt")) for g in gdirs):
                # perf was wrapped around this run (first link run): its
                # start-up and exit cost are in the time, so not a number.
                r["rc"] = "skipped"
                r["profiled"] = True
            runs.append(r)
    return runs


def summarize(runs):
    """(mode, test, size, stack) -> aggregate over repetitions (failed runs are counted, not averaged)."""
    agg = {}
    last = {}
    for r in runs:
        k = (r["mode"], r["test"], r["size"], r["stack"], r["rep"])
        last[k] = max(last.get(k, 0), r["attempt"])
    for r in runs:
        key = (r["mode"], r["test"], r["size"], r["stack"])
        a = agg.setdefault(key, {"ok": 0, "failed": 0, "skipped": 0, "retries": 0, "Bps": [], "host_Bps": [],
                                 "cpu_ns_per_byte": [], "lat_typical_us": [], "lat_avg_us": [], "conn": []})
        if r["rc"] == "skipped":
            a["skipped"] += 1
            continue
        ok = r["rc"] == "0" and any(k in r for k in ("Bps", "lat_typical_us", "conn"))
        if not ok and r["attempt"] < last[key + (r["rep"],)]:
            a["retries"] += 1  # a failed siw attempt that was retried
            continue
        if not ok:
            a["failed"] += 1
            a.setdefault("failures", []).append(f"rep {r['rep']} attempt {r['attempt']}: rc {r['rc']}")
            continue
        a["ok"] += 1
        for k in ("Bps", "host_Bps", "lat_typical_us", "lat_avg_us"):
            if k in r:
                a[k].append(r[k])
        if "conn" in r:
            a["conn"].append(r["conn"])
        if r["bytes"] > 0 and r["total"] > 0 and r["test"] in ("write", "read", "send"):
            # Ticks are USER_HZ (100/s) summed over all CPUs of all guests.
            a["cpu_ns_per_byte"].append(r["busy"] * 1e7 / r["bytes"])
    for a in agg.values():
        for k in ("Bps", "host_Bps", "cpu_ns_per_byte", "lat_typical_us", "lat_avg_us"):
            a[k + "_mean"] = mean(a[k])
        if a["conn"]:
            for k in ("rdma_connect_us_median", "rdma_total_us_median", "tcp_connect_us_median"):
                a[k] = statistics.median(c[k] for c in a["conn"])
    return agg


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def get(agg, mode, test, size, stack, k):
    a = agg.get((mode, test, size, stack))
    return a.get(k) if a else None


def fmt(x, nd=2):
    return "—" if x is None else f"{x:.{nd}f}"


def goals(agg, modes):
    """Each goal of issue 7: list of (description, [(where, ratio)], threshold, kind)."""
    out = []
    for test in ("write", "read", "send"):
        out.append((f"{test} bandwidth at 64 KB ≥ 1.2× siw", ">=", 1.2,
                    [(m, ratio(get(agg, m, test, 65536, "swiwarp", "Bps_mean"),
                               get(agg, m, test, 65536, "siw", "Bps_mean"))) for m in modes]))
    for test in ("send", "write"):
        out.append((f"{test} latency at 64 B ≤ 0.8× siw", "<=", 0.8,
                    [(m, ratio(get(agg, m, "lat_" + test, 64, "swiwarp", "lat_typical_us_mean"),
                               get(agg, m, "lat_" + test, 64, "siw", "lat_typical_us_mean"))) for m in modes]))
    sizes = sorted({k[2] for k in agg if k[1] == "write" and k[3] == "tcp" and k[2] >= 65536})
    out.append(("write bandwidth ≥ 0.95× iperf3 TCP (sizes ≥ 64 KB, perftest vs iperf3 own clocks)", ">=", 0.95,
                [(f"{m} {s // 1024} KB", ratio(get(agg, m, "write", s, "swiwarp", "Bps_mean"),
                                                get(agg, m, "write", s, "tcp", "Bps_mean")))
                 for m in modes for s in sizes]))
    out.append(("write bandwidth ≥ 0.95× iperf3 TCP (sizes ≥ 64 KB, host wall clock incl. set-up)", ">=", 0.95,
                [(f"{m} {s // 1024} KB", ratio(get(agg, m, "write", s, "swiwarp", "host_Bps_mean"),
                                                get(agg, m, "write", s, "tcp", "host_Bps_mean")))
                 for m in modes for s in sizes]))
    out.append(("CRC on costs ≤ 10% (bandwidth CRC on / off at 64 KB)", ">=", 0.9,
                [(f"{m} {t}", ratio(get(agg, m, t, 65536, "swiwarp-crc", "Bps_mean"),
                                    get(agg, m, t, 65536, "swiwarp", "Bps_mean")))
                 for m in modes for t in ("write", "read", "send")]))
    out.append(("CPU per byte lower than siw (64 KB, swiwarp CRC off / siw)", "<", 1.0,
                [(f"{m} {t}", ratio(get(agg, m, t, 65536, "swiwarp", "cpu_ns_per_byte_mean"),
                                    get(agg, m, t, 65536, "siw", "cpu_ns_per_byte_mean")))
                 for m in modes for t in ("write", "read", "send")]))
    out.append(("connection set-up ≤ 3× TCP connect (rdma_connect→ESTABLISHED / connect())", "<=", 3.0,
                [(m, ratio(get(agg, m, "conn", 0, "swiwarp", "rdma_connect_us_median"),
                           get(agg, m, "conn", 0, "swiwarp", "tcp_connect_us_median"))) for m in modes]))
    return out


def verdict(op, thr, vals):
    got = [v for _, v in vals if v is not None]
    if not got or len(got) < len(vals):
        return "NOT MET (no numbers for " + ", ".join(w for w, v in vals if v is None) + ")"
    ok = {">=": lambda v: v >= thr, "<=": lambda v: v <= thr, "<": lambda v: v < thr}[op]
    return "MET" if all(ok(v) for v in got) else "NOT MET"


def plots(agg, modes, images):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tests = ("write", "read", "send")
    for key, ylabel, fname in (("Bps_mean", "bandwidth, MB/s (perftest / iperf3 own clocks)", "bench-bandwidth.png"),
                               ("cpu_ns_per_byte_mean", "guest CPU ns per byte (all guests)", "bench-cpu.png")):
        fig, axes = plt.subplots(len(modes), 3, figsize=(13, 3.6 * len(modes)), squeeze=False)
        for i, m in enumerate(modes):
            for j, t in enumerate(tests):
                ax = axes[i][j]
                for st in STACKS:
                    pts = sorted((k[2], a[key]) for k, a in agg.items()
                                 if k[0] == m and k[1] == t and k[3] == st and a.get(key) is not None)
                    if key == "Bps_mean":
                        pts = [(x, y / 1e6) for x, y in pts]
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", label=LABEL[st])
                ax.set_xscale("log", base=2)
                if key == "cpu_ns_per_byte_mean":
                    ax.set_yscale("log")
                ax.set_title(f"ib_{t}_bw -R, {MODE_LABEL.get(m, m)}", fontsize=9)
                ax.set_xlabel("message size (bytes)")
                ax.set_ylabel(ylabel, fontsize=8)
                ax.grid(alpha=0.3)
                ax.legend(fontsize=7)
        fig.suptitle("same-boot comparison, QEMU TCG guests (compare ratios, not absolute values)", fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(images, fname), dpi=80)
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 3.6))
    groups = [(m, t) for m in modes for t in ("send", "write", "read")]
    width = 0.27
    for si, st in enumerate(("siw", "swiwarp", "swiwarp-crc")):
        ys = [get(agg, m, "lat_" + t, 64, st, "lat_typical_us_mean") or 0 for m, t in groups]
        ax.bar([g + (si - 1) * width for g in range(len(groups))], ys, width, label=LABEL[st])
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{t}\n{m}" for m, t in groups], fontsize=8)
    ax.set_ylabel("typical latency, µs (perftest)")
    ax.set_title("64 B latency, same boot per mode (0 = no result)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(images, "bench-latency.png"), dpi=80)
    plt.close(fig)


def write_results(doc, path):
    """JSON with one line per record: each top-level key on its own line, a
    list value one element per line, anything else on one line."""
    keys = list(doc)
    with open(path, "w") as f:
        f.write("{\n")
        for i, k in enumerate(keys):
            v = doc[k]
            f.write(f"{json.dumps(k)}: ")
            if isinstance(v, list) and v:
                f.write("[\n" + ",\n".join(json.dumps(x) for x in v) + "\n]")
            else:
                f.write(json.dumps(v))
            f.write(",\n" if i + 1 < len(keys) else "\n")
        f.write("}\n")


def data_path(data_dir, date, prefix="bench-stack"):
    """DIR/PREFIX-YYYY-MM-DD.json, with b, c, ... for later runs that day."""
    base = os.path.join(data_dir, f"{prefix}-{date[:10]}")
    for suffix in [""] + [chr(c) for c in range(ord("b"), ord("z") + 1)]:
        if not os.path.exists(base + suffix + ".json"):
            return base + suffix + ".json"
    raise SystemExit(f"report: too many {prefix} results files for {date[:10]} in {data_dir}")


def markdown(agg, modes, gl, meta):
    L = []
    L.append(f"Generated by `tests/bench/stack/report.py` from the run of {meta['date']} "
             f"(main at `{meta['commit']}`; lab runs took {meta.get('lab_secs', '?')} s of host time). "
             f"Raw numbers: `{meta.get('data', 'build/bench/stack/results.json')}`.\n")
    L.append(f"Configuration of this run: modes {', '.join(modes)}; message sizes {meta['sizes']}; "
             f"rounds per mode: {meta['reps']} (A/B/C, C/B/A, A/B/C); bandwidth runs moved {meta['bw_bytes']} bytes each; "
             f"{meta['nruns']} runs in all.\n")
    L.append("### Goals of issue 7\n")
    L.append("| goal | measured ratio (swiwarp / baseline, same boot) | verdict |")
    L.append("|---|---|---|")
    for desc, op, thr, vals in gl:
        L.append(f"| {desc} | " + "; ".join(f"{w}: {fmt(v)}" for w, v in vals) + f" | **{verdict(op, thr, vals)}** |")
    L.append("")
    L.append("### Bandwidth (perftest MiB/s, iperf3 converted; mean of the successful repetitions)\n")
    for m in modes:
        L.append(f"**{MODE_LABEL.get(m, m)}**\n")
        cols = [st for st in STACKS if st in BASE_STACKS or any(k[0] == m and k[3] == st for k in agg)]
        zc = "swiwarp-zc" in cols
        L.append("| test | size | " + " | ".join(HEAD[st] for st in cols) +
                 " | swiwarp/siw | CRC on/off | swiwarp/TCP |" + (" zc/swiwarp |" if zc else ""))
        L.append("|---|---|" + "---|" * (len(cols) + 3 + zc))
        for t in ("write", "read", "send"):
            for s in sorted({k[2] for k in agg if k[0] == m and k[1] == t}):
                v = {st: get(agg, m, t, s, st, "Bps_mean") for st in STACKS}
                cells = []
                for st in cols:
                    a = agg.get((m, t, s, st))
                    if a is None:
                        cells.append("")
                    elif v[st] is None:
                        cells.append("failed" if a["failed"] else "skipped")
                    else:
                        note = f" ({a['failed']} failed)" if a["failed"] else ""
                        cells.append(f"{v[st] / 1048576:.1f}{note}")
                L.append(f"| {t} | {s} | " + " | ".join(cells) +
                         f" | {fmt(ratio(v['swiwarp'], v['siw']))} | {fmt(ratio(v['swiwarp-crc'], v['swiwarp']))}"
                         f" | {fmt(ratio(v['swiwarp'], v['tcp']))} |" +
                         (f" {fmt(ratio(v['swiwarp-zc'], v['swiwarp']))} |" if zc else ""))
        L.append("")
    L.append("### 64 B latency (perftest t_typical, µs) and CPU per byte\n")
    L.append("| mode | test | siw | swiwarp | swiwarp CRC | swiwarp/siw |")
    L.append("|---|---|---|---|---|---|")
    for m in modes:
        for t in ("send", "write", "read"):
            v = {st: get(agg, m, "lat_" + t, 64, st, "lat_typical_us_mean") for st in ("siw", "swiwarp", "swiwarp-crc")}
            L.append(f"| {m} | {t} | " + " | ".join(fmt(v[st]) for st in ("siw", "swiwarp", "swiwarp-crc")) +
                     f" | {fmt(ratio(v['swiwarp'], v['siw']))} |")
    L.append("")
    L.append("| mode | test at 64 KB | CPU ns/byte siw | swiwarp | swiwarp CRC | TCP | swiwarp/siw |")
    L.append("|---|---|---|---|---|---|---|")
    for m in modes:
        for t in ("write", "read", "send"):
            v = {st: get(agg, m, t, 65536, st, "cpu_ns_per_byte_mean") for st in BASE_STACKS}
            L.append(f"| {m} | {t} | " + " | ".join(fmt(v[st]) for st in BASE_STACKS) +
                     f" | {fmt(ratio(v['swiwarp'], v['siw']))} |")
    L.append("")
    L.append("### Connection set-up (connbench, median µs of the guest's monotonic clock)\n")
    L.append("| mode | stack | rdma_connect→ESTABLISHED | whole rdma_cm set-up | TCP connect() | ratio connect/TCP |")
    L.append("|---|---|---|---|---|---|")
    for m in modes:
        for st in ("siw", "swiwarp", "swiwarp-crc"):
            a = agg.get((m, "conn", 0, st))
            if not a:
                continue
            rc, rt, tc = (a.get(k) for k in ("rdma_connect_us_median", "rdma_total_us_median",
                                             "tcp_connect_us_median"))
            L.append(f"| {m} | {st} | {fmt(rc, 0)} | {fmt(rt, 0)} | {fmt(tc, 0)} | {fmt(ratio(rc, tc))} |")
    L.append("")
    fails = [(k, a) for k, a in sorted(agg.items()) if a["failed"] or a["skipped"]]
    L.append("### Failed or skipped runs\n")
    if not fails:
        L.append("None.\n")
    for k, a in fails:
        L.append(f"- {k[0]} {k[1]} {k[2]} B {k[3]}: {a['failed']} failed, {a['skipped']} skipped"
                 + (f" ({'; '.join(a.get('failures', []))})" if a.get("failures") else ""))
    L.append("")
    retried = sum(a["retries"] for a in agg.values())
    L.append(f"siw runs that needed a retry (failed first attempt; its connection set-up race or a hang): {retried}.\n")
    L.append("![bandwidth](images/bench-bandwidth.png)\n")
    L.append("![latency](images/bench-latency.png)\n")
    L.append("![CPU per byte](images/bench-cpu.png)\n")
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--doc")
    ap.add_argument("--images")
    ap.add_argument("--lab-secs")
    ap.add_argument("--data", help="also keep the results as DATA/bench-stack-DATE.json")
    ap.add_argument("--compact", action="store_true", help="rewrite the results files given compactly")
    ap.add_argument("modes", nargs="+")
    args = ap.parse_args()
    if args.compact:
        for path in args.modes:
            write_results(json.load(open(path)), path)
        return 0
    if not args.out:
        ap.error("--out is required")
    runs = collect(args.out, args.modes)
    modes = [m for m in args.modes if any(r["mode"] == m for r in runs)]
    if not runs:
        print("stack report: no runs found under", args.out)
        return 1
    agg = summarize(runs)
    gl = goals(agg, modes)
    import datetime
    import subprocess
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    bw = [r for r in runs if r["test"] in ("write", "read", "send")]
    meta_cfg = {"sizes": ", ".join(str(x) for x in sorted({r["size"] for r in bw})) or "none",
                "reps": ", ".join(f"{m} {max((r['rep'] for r in runs if r['mode'] == m), default=0)}"
                                  for m in modes),
                "bw_bytes": "/".join(str(x) for x in sorted({r["bytes"] for r in bw})) or "none",
                "nruns": len(runs)}
    meta = {**meta_cfg, "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "commit": commit, "lab_secs": args.lab_secs or "?"}
    doc = {"meta": meta, "runs": runs,
           "summary": [dict(mode=k[0], test=k[1], size=k[2], stack=k[3],
                            **{x: y for x, y in a.items() if not isinstance(y, list) or x == "failures"})
                       for k, a in sorted(agg.items())],
           "goals": [dict(goal=d, threshold=t, op=op, values=dict(v), verdict=verdict(op, t, v))
                     for d, op, t, v in gl]}
    if args.data:
        os.makedirs(args.data, exist_ok=True)
        kept = data_path(args.data, meta["date"])
        # The page cites the file relative to the top of the tree.
        meta["data"] = os.path.relpath(kept, TOP)
        write_results(doc, kept)
        print(f"stack report: results kept as {kept}")
    write_results(doc, os.path.join(args.out, "results.json"))
    for d, op, t, v in gl:
        print(f"{verdict(op, t, v):8.8} {d}: " + "; ".join(f"{w}={fmt(x)}" for w, x in v))
    nfail = sum(a["failed"] for a in agg.values())
    print(f"stack report: {len(runs)} runs, {nfail} failed; {os.path.join(args.out, 'results.json')}")
    if args.images:
        plots(agg, modes, args.images)
    if args.doc:
        text = open(args.doc).read()
        b, e = "<!-- stack:begin -->", "<!-- stack:end -->"
        if b in text and e in text:
            text = text[:text.index(b) + len(b)] + "\n" + markdown(agg, modes, gl, meta) + "\n" + text[text.index(e):]
            open(args.doc, "w").write(text)
        else:
            print("stack report: markers missing in", args.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
