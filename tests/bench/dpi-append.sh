#!/usr/bin/env bash
# DPI_Append throughput vs chunk size and number of appenders (1..3, one per
# guest), against `ib_write_bw -R` (k concurrent clients) on the same device
# in the same boot, A/B alternated.  One boot of 4 guests per driver.
# Writes build/bench/dpi/DRIVER.json (+ DRIVER.md, a table) and plots
# Documentation/images/dpi-append-DRIVER.png and dpi-append-ratio.png.
# Method and results: Documentation/benchmarks-dpi.md.
#   DPI_BENCH_DRIVERS="siw swiwarp"   DPI_BENCH_CHUNKS="1024 ... 1048576"
#   DPI_BENCH_APPENDERS="1 2 3"  DPI_BENCH_BYTES (per appender and run)
#   DPI_BENCH_MAX_OPS  DPI_BENCH_REPS  DPI_BENCH_TIMEOUT (s, per boot)
#   DPI_BENCH_KINDS="ib_write_bw ib_write_bw_e dpi_append dpi_append_shared"  DPI_BENCH_RUN_TIMEOUT
#     (dpi_append_shared: the fetch-and-add shared-log path, compared with
#     the ring path dpi_append in the ratio_shared column)
#   DPI_BENCH_SUFFIX: appended to the driver in result names (run-siw-e, ...)
#   DPI_BENCH_PLOT_ONLY=1: only redo JSON/plots from the last runs' dirs
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
build=${BUILD:-$top/build}
res=$build/bench/dpi
mkdir -p "$res" Documentation/images
rc=0
report() { # the analysis and plots, inline (see the PY block)
	/usr/bin/python3 - "$@" <<'PY'
# args: RUNDIR DRIVER OUT.json OUT.md OUT.png   |   --ratio RESDIR OUT.png
import json, os, re, statistics, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def ib_guest_mbps(path, size):
    # perftest's result line: #bytes #iterations BW_peak BW_average MsgRate (MB/s = 2^20 B/s)
    try:
        for line in open(path, errors="replace"):
            f = line.split()
            if len(f) >= 5 and f[0] == str(size) and re.match(r"^[0-9.]+$", f[3]):
                return float(f[3]) * 1048576 / 1e6
    except OSError:
        pass
    return None


def dpi_guest(path):
    try:
        for line in open(path, errors="replace"):
            if line.startswith("{"):
                return json.loads(line)
    except (OSError, ValueError):
        pass
    return None


KINDS = ("ib_write_bw", "ib_write_bw_e", "dpi_append", "dpi_append_shared")


def analyse(rundir, drv, out_json, out_md, out_png):
    shared = os.path.join(rundir, "shared")
    if not os.path.isdir(shared):
        print(f"dpi-append: no results in {rundir}", file=sys.stderr)
        return 1
    runs = {}
    for f in os.listdir(shared):
        m = re.match(r"^ts\.(ib_write_bw_e|ib_write_bw|dpi_append_shared|dpi_append)\.(\d+)\.(\d+)\.(\d+)\.g(\d+)\.(start|end)$", f)
        if not m:
            continue
        kind, k, chunk, rep, g, edge = m.groups()
        r = runs.setdefault((kind, int(k), int(chunk), int(rep)), {})
        p = os.path.join(shared, f)
        r.setdefault(edge, {})[int(g)] = (os.stat(p).st_mtime, open(p).read().strip())
    rows = []
    for (kind, k, chunk, rep), r in sorted(runs.items()):
        st, en = r.get("start", {}), r.get("end", {})
        row = {"kind": kind, "appenders": k, "chunk": chunk, "rep": rep}
        if len(st) != k or len(en) != k:
            row.update(ok=False, why=f"{len(st)} starts, {len(en)} ends for {k} appenders")
            rows.append(row)
            continue
        secs = max(t for t, _ in en.values()) - min(t for t, _ in st.values())
        nbytes = sum(int(v) for _, v in st.values())
        exits = [int(v) for _, v in en.values()]
        guest = []
        extra = {}
        for g in st:
            p = os.path.join(rundir, f"g{g}", f"out.{kind}.{k}.{chunk}.{rep}")
            if kind.startswith("ib_write_bw"):
                guest.append(ib_guest_mbps(p, chunk))
            else:
                d = dpi_guest(p)
                guest.append(d["MBps"] if d else None)
                if d:
                    for key in ("setup_seconds", "critical_size", "zero_copy", "stalls", "posted_wrs", "signaled_wrs",
                                "shared_appends", "shared_pads", "shared_fallbacks"):
                        extra.setdefault(key, []).append(d.get(key))
        row.update(ok=all(e == 0 for e in exits) and secs > 0, exits=exits, bytes=nbytes,
                   host_seconds=round(secs, 3), host_MBps=round(nbytes / secs / 1e6, 3) if secs > 0 else None,
                   guest_MBps_sum=round(sum(guest), 3) if guest and None not in guest else None, **extra)
        rows.append(row)

    def med(kind, k, chunk, key):
        v = [r[key] for r in rows if r["kind"] == kind and r["appenders"] == k and r["chunk"] == chunk
             and r.get("ok") and r.get(key) is not None]
        return statistics.median(v) if v else None

    ks = sorted({r["appenders"] for r in rows})
    chunks = sorted({r["chunk"] for r in rows})
    summary = []
    for k in ks:
        for c in chunks:
            s = {"appenders": k, "chunk": c}
            for kind in KINDS:
                for key in ("host_MBps", "guest_MBps_sum"):
                    s[f"{kind}_{key}"] = med(kind, k, c, key)
            for base, suffix in (("ib_write_bw", ""), ("ib_write_bw_e", "_e")):
                for key, kind_key in (("ratio_host", "host_MBps"), ("ratio_guest", "guest_MBps_sum")):
                    a, b = s[f"dpi_append_{kind_key}"], s[f"{base}_{kind_key}"]
                    s[key + suffix] = round(a / b, 3) if a and b else None
            # the shared-log path against the ring path (> 1: shared faster)
            for key, kind_key in (("ratio_shared_host", "host_MBps"), ("ratio_shared_guest", "guest_MBps_sum")):
                a, b = s[f"dpi_append_shared_{kind_key}"], s[f"dpi_append_{kind_key}"]
                s[key] = round(a / b, 3) if a and b else None
            summary.append(s)
    doc = {"driver": drv,
           "method": "4 QEMU TCG guests (the lab default of 2 vCPUs each; 1 before session 38) on one host; guest 1 owns the buffer / runs the "
                     "ib_write_bw servers, guests 2..k+1 append / run ib_write_bw -R clients concurrently. "
                     "host_*: host wall clock from the first start stamp to the last end stamp (9p mtimes), "
                     "process start and connection setup included for both kinds. guest_*: each tool's own "
                     "number (setup excluded), summed over appenders. Summary values are medians over reps, "
                     "the kinds alternating A/B per rep.",
           "summary": summary, "runs": rows}
    with open(out_json, "w") as f:
        json.dump(doc, f, indent=1)
    with open(out_md, "w") as f:
        f.write(f"| {drv}: appenders | chunk | ib_write_bw MB/s | ib_write_bw -e MB/s | DPI_Append MB/s "
                f"| DPI shared log MB/s "
                f"| DPI / ib_write_bw (host; in-guest) | DPI / ib_write_bw -e (host; in-guest) "
                f"| shared / rings (host; in-guest) |\n"
                f"|---|---|---|---|---|---|---|---|---|\n")
        fmt = lambda x: "-" if x is None else (f"{x:.2f}" if isinstance(x, float) else str(x))
        for s in summary:
            f.write(f"| {s['appenders']} | {s['chunk']} | {fmt(s['ib_write_bw_host_MBps'])} | "
                    f"{fmt(s['ib_write_bw_e_host_MBps'])} | {fmt(s['dpi_append_host_MBps'])} | "
                    f"{fmt(s['dpi_append_shared_host_MBps'])} | "
                    f"{fmt(s['ratio_host'])}; {fmt(s['ratio_guest'])} | "
                    f"{fmt(s['ratio_host_e'])}; {fmt(s['ratio_guest_e'])} | "
                    f"{fmt(s['ratio_shared_host'])}; {fmt(s['ratio_shared_guest'])} |\n")
        bad = [r for r in rows if not r.get("ok")]
        if bad:
            f.write(f"\nFailed runs ({len(bad)}): " + "; ".join(
                f"{r['kind']} k={r['appenders']} chunk={r['chunk']} rep={r['rep']} "
                f"({r.get('why') or 'exit ' + str(r.get('exits'))})" for r in bad) + "\n")
    fig, axes = plt.subplots(1, len(ks), figsize=(4.2 * len(ks), 3.8), sharey=True, squeeze=False)
    for ax, k in zip(axes[0], ks):
        for kind, style, label in (("ib_write_bw", "k--o", "ib_write_bw -R"),
                                   ("ib_write_bw_e", "k:s", "ib_write_bw -R -e"), ("dpi_append", "-o", "DPI_Append"),
                                   ("dpi_append_shared", "-^", "DPI_Append, shared log")):
            pts = [(s["chunk"], s[f"{kind}_host_MBps"]) for s in summary
                   if s["appenders"] == k and s[f"{kind}_host_MBps"]]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{drv}: {k} appender{'s' if k > 1 else ''}")
        ax.set_xlabel("chunk size (bytes)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("MB/s, host wall clock")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(out_png, dpi=90)
    return 0


def ratio_plot(resdir, out_png):
    fig, ax = plt.subplots(figsize=(7, 4))
    any_ = False
    for f in sorted(os.listdir(resdir)):
        if not f.endswith(".json"):
            continue
        d = json.load(open(os.path.join(resdir, f)))
        for k in sorted({s["appenders"] for s in d["summary"]}):
            for key, what, style in (("ratio_host", "ib_write_bw", "-o"), ("ratio_host_e", "ib_write_bw -e", "--s")):
                pts = [(s["chunk"], s.get(key)) for s in d["summary"] if s["appenders"] == k and s.get(key)]
                if pts:
                    any_ = True
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                            label=f"{d['driver']}, {k} appender(s), vs {what}")
    if not any_:
        return 1
    ax.axhline(0.9, color="grey", ls=":", label="goal 0.9")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("chunk size (bytes)")
    ax.set_ylabel("DPI_Append / baseline (host clock)")
    ax.set_title("DPI_Append / ib_write_bw -R, same boot, host clock")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_png, dpi=90)
    return 0


if sys.argv[1] == "--ratio":
    sys.exit(ratio_plot(sys.argv[2], sys.argv[3]))
sys.exit(analyse(*sys.argv[1:6]))
PY
}
for drv in ${DPI_BENCH_DRIVERS:-siw swiwarp}; do
	name=$drv${DPI_BENCH_SUFFIX:-} # results of several boots can sit side by side
	out=$res/run-$name
	if [ -z "${DPI_BENCH_PLOT_ONLY:-}" ]; then
		rm -rf "$out"
		env_args=""
		for v in DPI_BENCH_CHUNKS DPI_BENCH_APPENDERS DPI_BENCH_BYTES DPI_BENCH_MAX_OPS DPI_BENCH_REPS DPI_BENCH_RUN_TIMEOUT DPI_BENCH_KINDS DPI_BIN; do
			[ -n "${!v:-}" ] && env_args+="$v='${!v}' "
		done
		echo "== dpi-append on $drv (lab run, 4 guests; log $out.log)"
		BUILD=$build tests/lab/lab run -n 4 --name "dpi-bench-$name" --out "$out" --quiet \
			--timeout "${DPI_BENCH_TIMEOUT:-3600}" -- "$env_args tests/bench/dpi-append-guest.sh $drv" \
			>"$out.log" 2>&1 || { echo "== dpi-append on $drv: lab run failed (see $out.log)"; rc=1; }
	fi
	report "$out" "$name" "$res/$name.json" "$res/$name.md" \
		"Documentation/images/dpi-append-$name.png" || rc=1
	[ -f "$res/$name.md" ] && cat "$res/$name.md"
done
report --ratio "$res" Documentation/images/dpi-append-ratio.png || rc=1
exit $rc
