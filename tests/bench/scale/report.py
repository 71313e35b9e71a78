#!/usr/bin/python3
"""Report of tests/bench/scale.sh (issue 20: scale and connection rate).

Reads the lab run directory OUT/link/gN/ (runs.tsv, raw/, stamps/) written
by tests/bench/scale/guest.sh and the host's load samples OUT/hostload.txt,
writes OUT/results.json, the plots IMAGES/bench-scale-*.png and the
generated part of the benchmarks page (between the "scale:begin" and
"scale:end" markers).  With --data DIR the results are also kept as
DIR/bench-scale-DATE.json.  Every ratio is taken within one round of one
boot (the stacks ran back to back); the tables give the median over the
rounds and [min-max].  The run bookkeeping, perftest parsing and JSON
layout are tests/bench/stack/report.py's.
"""
import argparse
import datetime
import importlib.util
import json
import os
import statistics
import subprocess

_spec = importlib.util.spec_from_file_location(
    "stack_report", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "stack", "report.py"))
stack = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stack)
fmt, ratio = stack.fmt, stack.ratio

BASE = "siw"
LABEL = {"siw": "upstream siw", "swiwarp-defaults": "swiwarp, module defaults (CRC requested)",
         "swiwarp": "swiwarp, CRC off (mpa_crc=0)"}
MR_SIZES = [4096, 65536, 1 << 20, 16 << 20, 64 << 20]
KMEM_SUMMED = ("SUnreclaim", "VmallocUsed", "KernelStack", "Percpu")


def size_name(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def read_json(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def host_loads(out):
    """[(host time, 1-minute load)] from OUT/hostload.txt."""
    pts = []
    try:
        for line in open(os.path.join(out, "hostload.txt")):
            f = line.split()
            if len(f) >= 2:
                pts.append((float(f[0]), float(f[1])))
    except OSError:
        pass
    return pts


def load_around(pts, t0, t1):
    """The last sample at or before t0 and the first at or after t1."""
    before = [p[1] for p in pts if p[0] <= t0]
    after = [p[1] for p in pts if p[0] >= t1]
    return (before[-1] if before else None, after[0] if after else None)


def parse_run(gdirs, r, loads):
    f = r["file"]
    client = os.path.join(gdirs[-1], "raw", f + ".client")
    text = open(client, errors="replace").read() if os.path.exists(client) else ""
    s0 = os.path.join(gdirs[-1], "stamps", f + ".start")
    s1 = os.path.join(gdirs[-1], "stamps", f + ".end")
    if os.path.exists(s0) and os.path.exists(s1):
        t0, t1 = os.stat(s0).st_mtime, os.stat(s1).st_mtime
        r["host_secs"] = t1 - t0
        r["host_load_before"], r["host_load_after"] = load_around(loads, t0, t1)
    if r["test"] == "qp":
        srv = os.path.join(gdirs[0], "raw", f + ".server")
        stext = open(srv, errors="replace").read() if os.path.exists(srv) else ""
        if "Correlation coefficient" in text + stext:
            # perftest's clock fit failed: it may still exit 0 and report
            # 0.00 MiB/s (tests/lab/README.md), so the run has no number
            r["void"] = "perftest clock calibration failed (r^2 < 0.9)"
            return
        nums = stack.perftest_numbers(text) or stack.perftest_numbers(stext)
        if nums and len(nums) >= 4:
            r["MiBps"] = nums[3]
        return
    try:
        j = json.loads(text)
    except ValueError:
        return
    if r["test"] == "rate":
        r["rate"] = {k: j[k] for k in ("n", "inflight", "rdma_ok", "rdma_failures", "rdma_per_sec",
                                       "rdma_connect_us_median", "tcp_ok", "tcp_per_sec")}
    elif r["test"] == "mr":
        r["mr"] = {"reg_per_sec": {str(x["size"]): x["per_sec"] for x in j["reg"]},
                   "kmem_per_mr_bytes": j["kmem_per_mr_bytes"], "kmem_mrs": j["kmem_mrs"],
                   "kmem_held_kb": j["kmem_held_kb"]}
    elif r["test"] == "hold":
        per = {}
        for g in gdirs:
            gid = os.path.basename(g)
            one = read_json(os.path.join(g, "raw", f"{f}.kmem.1.{gid}"))
            held = read_json(os.path.join(g, "raw", f"{f}.kmem.all.{gid}"))
            if not one or not held or j.get("held", 0) < 2:
                return
            a, b = one["kmem_kb"], held["kmem_kb"]
            n = j["held"] - 1  # the first connection is in both readings
            per[gid] = {"bytes_per_qp": sum(b[k] - a[k] for k in KMEM_SUMMED) * 1024 / n,
                        "delta_kb": {k: b[k] - a[k] for k in a}}
        r["hold"] = {"held": j["held"], "per_guest": per}


def collect(out):
    d = os.path.join(out, "link")
    gdirs = sorted(os.path.join(d, g) for g in os.listdir(d) if g[:1] == "g" and g[1:].isdigit()) \
        if os.path.isdir(d) else []
    if len(gdirs) < 2:
        return []
    loads = host_loads(out)
    runs = []
    for r in stack.read_tsv(os.path.join(gdirs[-1], "runs.tsv")):
        r["param"] = r.pop("size")
        if r["rc"] != "skipped":
            parse_run(gdirs, r, loads)
        runs.append(r)
    return runs


VALUE = {"qp": lambda r: r.get("MiBps"),
         "rate": lambda r: r["rate"]["rdma_per_sec"] if "rate" in r else None,
         "hold": lambda r: r.get("hold"),
         "mr": lambda r: r.get("mr")}


def by_round(runs):
    """(test, param, stack) -> {rep: run} of the successful runs (the last
    attempt of each), and the list of failed or skipped ones."""
    ok, bad = {}, []
    for r in runs:
        k = (r["test"], r["param"], r["stack"])
        if r["rc"] == "0" and VALUE[r["test"]](r) is not None:
            ok.setdefault(k, {})[r["rep"]] = r
        else:
            bad.append(r)
    # a failed attempt that a later attempt of the same round replaced
    bad = [r for r in bad if r["rep"] not in ok.get((r["test"], r["param"], r["stack"]), {})
           or r["rc"] == "skipped"]
    return ok, bad


def spread(xs):
    """(median, min, max) or None."""
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), min(xs), max(xs)) if xs else None


def fmt_spread(s, nd=2):
    return "—" if s is None else f"{s[0]:.{nd}f} [{s[1]:.{nd}f}–{s[2]:.{nd}f}]"


def round_ratios(ok, key_a, key_b, get):
    """Per round: get(run of a) / get(run of b), rounds both have."""
    a, b = ok.get(key_a, {}), ok.get(key_b, {})
    return [ratio(get(a[rep]), get(b[rep])) for rep in sorted(a) if rep in b]


def values(ok, key, get):
    return [get(r) for _, r in sorted(ok.get(key, {}).items())]


def qp_ratio_to_best(ok, st, n):
    """Per round: aggregate bandwidth of n QPs / best single-QP run of the boot."""
    one = [r["MiBps"] for r in ok.get(("qp", 1, st), {}).values()]
    if not one:
        return []
    best = max(one)
    return [r["MiBps"] / best for _, r in sorted(ok.get(("qp", n, st), {}).items())]


def qp_per_guest(r, gid):
    return r["hold"]["per_guest"].get(gid, {}).get("bytes_per_qp")


def goals(ok, ours, qps):
    """Each goal of issue 20's scale part: (description, op, threshold, [(where, spread)])."""
    out = []
    rate = lambda r: r["rate"]["rdma_per_sec"]
    out.append(("connection rate (rdma_cm, many in flight) ≥ 2× siw", ">=", 2.0,
                [("conn/s", spread(round_ratios(ok, ("rate", 0, ours), ("rate", 0, BASE), rate)))]))
    out.append(("aggregate Write bandwidth with N QPs ≥ 0.9× the best single-QP run", ">=", 0.9,
                [(f"{n} QPs", spread(qp_ratio_to_best(ok, ours, n))) for n in qps]))
    out.append(("kernel memory per idle QP lower than siw's", "<", 1.0,
                [(f"{w} (g{g})", spread(round_ratios(ok, ("hold", 0, ours), ("hold", 0, BASE),
                                                     lambda r, g=g: qp_per_guest(r, f"g{g}"))))
                 for g, w in ((2, "active side"), (1, "passive side"))]))
    out.append(("kernel memory per MR lower than siw's", "<", 1.0,
                [("4 KiB MRs", spread(round_ratios(ok, ("mr", 0, ours), ("mr", 0, BASE),
                                                    lambda r: r["mr"]["kmem_per_mr_bytes"])))]))
    out.append(("MR registration rate (reg + dereg per second) ≥ siw's", ">=", 1.0,
                [(size_name(s), spread(round_ratios(ok, ("mr", 0, ours), ("mr", 0, BASE),
                                                    lambda r, s=s: r["mr"]["reg_per_sec"].get(str(s)))))
                 for s in MR_SIZES]))
    return out


def verdict(op, thr, vals):
    missing = [w for w, v in vals if v is None]
    if missing or not vals:
        return "NOT MET (no numbers for " + ", ".join(missing or ["anything"]) + ")"
    ok = {">=": lambda v: v >= thr, "<": lambda v: v < thr}[op]
    return "MET" if all(ok(v[0]) for _, v in vals) else "NOT MET"


def plots(ok, stacks, qps, images):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def errbar(ax, xs, sp, label, marker="-o"):
        pts = [(x, s) for x, s in zip(xs, sp) if s is not None]
        if not pts:
            return
        ax.errorbar([p[0] for p in pts], [p[1][0] for p in pts],
                    yerr=[[p[1][0] - p[1][1] for p in pts], [p[1][2] - p[1][0] for p in pts]],
                    fmt=marker, capsize=3, label=label)

    note = "median of the rounds, bars min–max; one boot, QEMU TCG guests (compare ratios, not absolute values)"

    def finish(fig, axes, name, xlabel=None, ylabel=None, log=""):
        for ax in axes:
            if "x" in log:
                ax.set_xscale("log", base=2)
            if "y" in log:
                ax.set_yscale("log")
            if xlabel:
                ax.set_xlabel(xlabel)
            if ylabel:
                ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
        fig.suptitle(note, fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(images, name), dpi=80)
        plt.close(fig)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for st in stacks:
        errbar(axes[0], qps, [spread(values(ok, ("qp", n, st), lambda r: r["MiBps"])) for n in qps], LABEL.get(st, st))
        errbar(axes[1], qps, [spread(qp_ratio_to_best(ok, st, n)) for n in qps], LABEL.get(st, st))
    axes[0].set_ylabel("aggregate MiB/s (ib_write_bw -R -q N, 64 KiB)")
    axes[1].set_ylabel("ratio to the stack's best single-QP run")
    axes[1].axhline(0.9, color="grey", ls="--", lw=1, label="goal 0.9")
    finish(fig, axes, "bench-scale-qp.png", xlabel="QPs between the two guests", log="x")

    fig, ax = plt.subplots(figsize=(7, 4))
    for st in stacks:
        errbar(ax, MR_SIZES, [spread(values(ok, ("mr", 0, st), lambda r, s=s: r["mr"]["reg_per_sec"].get(str(s))))
                              for s in MR_SIZES], LABEL.get(st, st))
    finish(fig, [ax], "bench-scale-mr.png", "MR size (bytes)", "ibv_reg_mr + ibv_dereg_mr per second", "xy")

    groups = [("per idle QP, active side", lambda r: qp_per_guest(r, "g2"), "hold"),
              ("per idle QP, passive side", lambda r: qp_per_guest(r, "g1"), "hold"),
              ("per 4 KiB MR", lambda r: r["mr"]["kmem_per_mr_bytes"], "mr")]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(1, len(stacks))
    for si, st in enumerate(stacks):
        sp = [spread(values(ok, (t, 0, st), g)) for _, g, t in groups]
        xs = [i + (si - (len(stacks) - 1) / 2) * width for i in range(len(groups))]
        ax.bar(xs, [s[0] / 1024 if s else 0 for s in sp], width, label=LABEL.get(st, st),
               yerr=[[(s[0] - s[1]) / 1024 if s else 0 for s in sp], [(s[2] - s[0]) / 1024 if s else 0 for s in sp]],
               capsize=3)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g[0] for g in groups], fontsize=8)
    finish(fig, [ax], "bench-scale-memory.png", ylabel="kernel memory, KiB (SUnreclaim + VmallocUsed + ...)",
           log="y")

    fig, ax = plt.subplots(figsize=(7, 4))
    names = [LABEL.get(st, st) for st in stacks] + ["TCP connect (beside each stack's run)"]
    sp = [spread(values(ok, ("rate", 0, st), lambda r: r["rate"]["rdma_per_sec"])) for st in stacks]
    sp.append(spread([r["rate"]["tcp_per_sec"] for st in stacks for r in ok.get(("rate", 0, st), {}).values()]))
    ax.bar(range(len(names)), [s[0] if s else 0 for s in sp],
           yerr=[[s[0] - s[1] if s else 0 for s in sp], [s[2] - s[0] if s else 0 for s in sp]], capsize=3)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, fontsize=7)
    finish(fig, [ax], "bench-scale-conn.png", ylabel="connections per second (connect + disconnect)", log="y")


def markdown(ok, bad, runs, stacks, ours, qps, gl, meta):
    L = []
    L.append(f"Generated by `tests/bench/scale/report.py` from the run of {meta['date']} "
             f"(main at `{meta['commit']}`; the lab run took {meta['lab_secs']} s of host time). "
             f"Raw numbers: `{meta.get('data', 'build/bench/scale/results.json')}`.\n")
    L.append(f"Configuration: two guests, 2 vCPUs each, on the virtual link; stacks {', '.join(stacks)} "
             f"(A/B, B/A, ...; {meta['reps']} rounds); {meta['nruns']} runs. "
             f"Host load (1-minute average, host's /proc/loadavg): {meta['load_start']} at the start, "
             f"{meta['load_end']} at the end, {meta['load_min']}–{meta['load_max']} during the run "
             f"(each run's load before and after is in the JSON).\n")
    L.append(f"### Goals of issue 20, scale part ({LABEL.get(ours, ours)} / {LABEL[BASE]})\n")
    L.append("| goal | measured ratio, median [min–max] over rounds | verdict |")
    L.append("|---|---|---|")
    for desc, op, thr, vals in gl:
        L.append(f"| {desc} | " + "; ".join(f"{w}: {fmt_spread(v)}" for w, v in vals) +
                 f" | **{verdict(op, thr, vals)}** |")
    L.append("")

    def cell(key, get, nd=1):
        return fmt_spread(spread(values(ok, key, get)), nd)

    L.append("### Connection rate (connbench rate, median [min–max])\n")
    rparams = next((r["rate"] for r in runs if "rate" in r), None)
    if rparams:
        L.append(f"{rparams['n']} connections per run, up to {rparams['inflight']} connecting at once; "
                 "an rdma_cm connection is create_id → ESTABLISHED → disconnect → destroyed, a TCP one "
                 "connect() → close(); rates over the wall time of the whole batch.\n")
    L.append("| stack | rdma_cm conn/s | TCP conn/s (same run) | rdma_connect→ESTABLISHED µs, many in flight |")
    L.append("|---|---|---|---|")
    for st in stacks:
        k = ("rate", 0, st)
        L.append(f"| {st} | {cell(k, lambda r: r['rate']['rdma_per_sec'])} | "
                 f"{cell(k, lambda r: r['rate']['tcp_per_sec'])} | "
                 f"{cell(k, lambda r: r['rate']['rdma_connect_us_median'], 0)} |")
    L.append("")
    L.append("### Aggregate RDMA Write bandwidth over N QPs (ib_write_bw -R -q N -s 65536)\n")
    L.append("| QPs | " + " | ".join(f"{st} MiB/s" for st in stacks) + " | " +
             " | ".join(f"{st} / its best 1-QP" for st in stacks) + " |")
    L.append("|---|" + "---|" * (2 * len(stacks)))
    for n in qps:
        L.append(f"| {n} | " + " | ".join(cell(("qp", n, st), lambda r: r["MiBps"], 2) for st in stacks) + " | " +
                 " | ".join(fmt_spread(spread(qp_ratio_to_best(ok, st, n))) for st in stacks) + " |")
    L.append("")
    L.append("### Kernel memory (bytes; SUnreclaim + VmallocUsed + KernelStack + Percpu, empty slabs shrunk "
             "before each reading)\n")
    hparams = next((r["hold"]["held"] for r in runs if "hold" in r), None)
    kmrs = next((r["mr"]["kmem_mrs"] for r in runs if "mr" in r), None)
    L.append(f"Per idle QP: {hparams or '?'} RC connections held between the guests, the readings with one "
             "and with all of them up, divided by the connections between; active side (guest 2, "
             "`connbench hold`) and passive side (guest 1, `connbench server`). Per MR: "
             f"{kmrs or '?'} MRs of 4 KiB held at once on guest 2 (`mrbench`).\n")
    L.append("| stack | per idle QP, active | per idle QP, passive | per 4 KiB MR | "
             "SUnreclaim / VmallocUsed per QP, active |")
    L.append("|---|---|---|---|---|")
    for st in stacks:
        comp = []
        for r in ok.get(("hold", 0, st), {}).values():
            g = r["hold"]["per_guest"].get("g2")
            if g:
                n = r["hold"]["held"] - 1
                comp.append(f"{g['delta_kb']['SUnreclaim'] * 1024 / n:.0f} / "
                            f"{g['delta_kb']['VmallocUsed'] * 1024 / n:.0f}")
        L.append(f"| {st} | {cell(('hold', 0, st), lambda r: qp_per_guest(r, 'g2'), 0)} | "
                 f"{cell(('hold', 0, st), lambda r: qp_per_guest(r, 'g1'), 0)} | "
                 f"{cell(('mr', 0, st), lambda r: r['mr']['kmem_per_mr_bytes'], 0)} | {'; '.join(comp) or '—'} |")
    L.append("")
    L.append("### MR registration rate (mrbench: ibv_reg_mr + ibv_dereg_mr per second)\n")
    L.append("| size | " + " | ".join(stacks) + f" | {ours} / {BASE} |")
    L.append("|---|" + "---|" * (len(stacks) + 1))
    for s in MR_SIZES:
        get = lambda r, s=s: r["mr"]["reg_per_sec"].get(str(s))
        L.append(f"| {size_name(s)} | " + " | ".join(cell(("mr", 0, st), get, 0) for st in stacks) +
                 f" | {fmt_spread(spread(round_ratios(ok, ('mr', 0, ours), ('mr', 0, BASE), get)))} |")
    L.append("")
    L.append("### Failed or skipped runs\n")
    if not bad:
        L.append("None.\n")
    for r in bad:
        L.append(f"- {r['test']} {r['param'] or ''} {r['stack']} round {r['rep']} attempt {r['attempt']}: "
                 + ("skipped (an earlier run of it timed out)" if r["rc"] == "skipped" else f"rc {r['rc']}")
                 + (f", {r['void']}" if "void" in r else "")
                 + f" (`{r['file']}`)")
    if bad:
        L.append("")
    retried = sum(1 for r in runs if r["rc"] not in ("0", "skipped") and r not in bad)
    L.append(f"Failed attempts retried (siw only, its connection set-up race): {retried}.\n")
    for p in ("qp", "mr", "memory", "conn"):
        L.append(f"![{p}](images/bench-scale-{p}.png)\n")
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--doc")
    ap.add_argument("--images")
    ap.add_argument("--data", help="also keep the results as DATA/bench-scale-DATE.json")
    ap.add_argument("--lab-secs", default="?")
    args = ap.parse_args()
    runs = collect(args.out)
    if not runs:
        print("scale report: no runs found under", args.out)
        return 1
    ok, bad = by_round(runs)
    order = ["siw", "swiwarp-defaults", "swiwarp"]
    stacks = sorted({r["stack"] for r in runs}, key=lambda s: order.index(s) if s in order else len(order))
    ours = next((s for s in ("swiwarp-defaults", "swiwarp") if s in stacks), stacks[-1])
    qps = sorted({r["param"] for r in runs if r["test"] == "qp"})
    gl = goals(ok, ours, qps)
    loads = [p[1] for p in host_loads(args.out)]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    meta = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "commit": commit,
            "lab_secs": args.lab_secs, "stacks": stacks, "ours": ours, "qps": qps,
            "reps": max(r["rep"] for r in runs), "nruns": len(runs),
            "load_start": fmt(loads[0] if loads else None), "load_end": fmt(loads[-1] if loads else None),
            "load_min": fmt(min(loads) if loads else None), "load_max": fmt(max(loads) if loads else None)}
    doc = {"meta": meta, "runs": runs,
           "goals": [dict(goal=d, threshold=t, op=op, verdict=verdict(op, t, v),
                          values={w: (None if s is None else dict(median=s[0], min=s[1], max=s[2])) for w, s in v})
                     for d, op, t, v in gl]}
    if args.data:
        os.makedirs(args.data, exist_ok=True)
        kept = stack.data_path(args.data, meta["date"], "bench-scale")
        meta["data"] = os.path.relpath(kept, stack.TOP)
        stack.write_results(doc, kept)
        print(f"scale report: results kept as {kept}")
    stack.write_results(doc, os.path.join(args.out, "results.json"))
    for d, op, t, v in gl:
        print(f"{verdict(op, t, v):8.8} {d}: " + "; ".join(f"{w}={fmt_spread(s)}" for w, s in v))
    print(f"scale report: {len(runs)} runs, {len(bad)} failed or skipped; {os.path.join(args.out, 'results.json')}")
    if args.images:
        os.makedirs(args.images, exist_ok=True)
        plots(ok, stacks, qps, args.images)
    if args.doc:
        text = open(args.doc).read()
        b, e = "<!-- scale:begin -->", "<!-- scale:end -->"
        if b in text and e in text:
            text = text[:text.index(b) + len(b)] + "\n" + markdown(ok, bad, runs, stacks, ours, qps, gl, meta) + \
                "\n" + text[text.index(e):]
            open(args.doc, "w").write(text)
        else:
            print("scale report: markers missing in", args.doc)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
