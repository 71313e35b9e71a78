#!/usr/bin/env bash
# DPI_Append throughput vs chunk size and number of appenders, against
# `ib_write_bw -R` on the same device in the same boot (a ratio; absolute
# numbers from TCG guests mean nothing).  Writes Documentation/dpi-append.json
# and Documentation/dpi-append.png.
#   DPI_BENCH_DRIVER=siw  DPI_BENCH_CHUNKS="4096 65536 ..."  DPI_BENCH_APPENDERS="1 2 4"
#   DPI_BENCH_BYTES=67108864 (per configuration, all appenders together)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
drv=${DPI_BENCH_DRIVER:-siw}
out=$(mktemp -d "${TMPDIR:-/tmp}/dpi-bench.XXXXXX")
env_args="DPI_BENCH_CHUNKS='${DPI_BENCH_CHUNKS:-}' DPI_BENCH_APPENDERS='${DPI_BENCH_APPENDERS:-}' DPI_BENCH_BYTES='${DPI_BENCH_BYTES:-}' DPI_BIN='${DPI_BIN:-}'"
env_args=$(echo "$env_args" | sed -E "s/[A-Z_]+='' ?//g")
tests/lab/lab run -n 2 --name dpi-bench --out "$out" --timeout "${DPI_BENCH_TIMEOUT:-2400}" -- \
	"$env_args tests/bench/dpi-append-guest.sh $drv"
/usr/bin/python3 - "$out/shared" "$drv" <<'PY'
import json, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
shared, drv = sys.argv[1], sys.argv[2]
runs = {}
for f in os.listdir(shared):
    if not f.startswith("ts."):
        continue
    _, kind, k, chunk, edge = f.split(".")
    r = runs.setdefault((kind, int(k), int(chunk)), {})
    r[edge] = os.stat(os.path.join(shared, f)).st_mtime
    r[edge + "_val"] = open(os.path.join(shared, f)).read().strip()
rows = []
for (kind, k, chunk), r in sorted(runs.items()):
    if "start" not in r or "end" not in r:
        continue
    secs = r["end"] - r["start"]
    nbytes = int(r["start_val"])
    rows.append({"kind": kind, "appenders": k, "chunk": chunk, "bytes": nbytes, "seconds": round(secs, 3),
                 "MBps": round(nbytes / secs / 1e6, 2), "exit": int(r["end_val"])})
base = {r["chunk"]: r["MBps"] for r in rows if r["kind"] == "ib_write_bw" and r["exit"] == 0}
dpi = [r for r in rows if r["kind"] == "dpi_append"]
for r in dpi:
    b = base.get(r["chunk"])
    r["ratio_vs_ib_write_bw"] = round(r["MBps"] / b, 3) if b and r["exit"] == 0 else None
doc = {"driver": drv,
       "method": "host wall clock around each run (process start + connect included for both); QEMU TCG guests, compare ratios only",
       "ib_write_bw": [r for r in rows if r["kind"] == "ib_write_bw"], "dpi_append": dpi}
json.dump(doc, open("Documentation/dpi-append.json", "w"), indent=1)
fig, ax = plt.subplots(figsize=(7, 4))
xs = sorted(base)
ax.plot(xs, [base[x] for x in xs], "k--o", label="ib_write_bw -R")
for k in sorted({r["appenders"] for r in dpi}):
    pts = sorted((r["chunk"], r["MBps"]) for r in dpi if r["appenders"] == k and r["exit"] == 0)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", label=f"DPI_Append, {k} appender(s)")
ax.set_xscale("log", base=2)
ax.set_xlabel("chunk size (bytes)")
ax.set_ylabel("MB/s (host wall clock, incl. setup)")
ax.set_title(f"DPI_Append vs ib_write_bw -R on {drv}, same boot, TCG guests")
ax.legend()
fig.tight_layout()
fig.savefig("Documentation/dpi-append.png", dpi=100)
for r in rows:
    print(r)
PY
