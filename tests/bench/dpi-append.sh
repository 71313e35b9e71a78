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
/usr/bin/python3 - "$out/shared/bench.jsonl" "$drv" <<'PY'
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
base = {r["chunk"]: r["MBps"] for r in rows if r["kind"] == "ib_write_bw"}
dpi = [r for r in rows if r["kind"] == "dpi_append"]
for r in dpi:
    b = base.get(r["chunk"])
    r["ratio_vs_ib_write_bw"] = round(r["MBps"] / b, 3) if b else None
doc = {"driver": sys.argv[2], "note": "QEMU TCG guests; compare ratios only",
       "ib_write_bw": base, "dpi_append": dpi}
json.dump(doc, open("Documentation/dpi-append.json", "w"), indent=1)
fig, ax = plt.subplots(figsize=(7, 4))
xs = sorted(base)
ax.plot(xs, [base[x] for x in xs], "k--o", label="ib_write_bw -R")
for k in sorted({r["appenders"] for r in dpi}):
    pts = sorted((r["chunk"], r["MBps"]) for r in dpi if r["appenders"] == k)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", label=f"DPI_Append, {k} appender(s)")
ax.set_xscale("log", base=2)
ax.set_xlabel("chunk size (bytes)")
ax.set_ylabel("MB/s")
ax.set_title(f"DPI_Append vs ib_write_bw on {sys.argv[2]} (same boot, TCG guests)")
ax.legend()
fig.tight_layout()
fig.savefig("Documentation/dpi-append.png", dpi=100)
for r in dpi:
    print(f'appenders={r["appenders"]} chunk={r["chunk"]} MBps={r["MBps"]:.1f} ratio={r["ratio_vs_ib_write_bw"]}')
PY
