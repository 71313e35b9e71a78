#!/usr/bin/env python3
"""Plots and a summary of tests/bench/flows/guest.sh's JSON lines.

usage: plot.py RESULTS.jsonl DRIVER IMAGE_DIR SUMMARY.json
"""
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

path, drv, imgdir, summary_path = sys.argv[1:5]
rows = [json.loads(x) for x in open(path) if x.strip().startswith("{")]
summary = {"driver": drv, "shuffle": [], "ib_write_bw": [], "join": [], "stream": [], "errors": [],
           "overhead": [r for r in rows if r.get("kind") == "overhead"]}

# Shuffle: rate = every node's input bytes / the slowest node's time.
sh = defaultdict(list)
for r in rows:
    if "transport" in r and "kind" not in r:
        sh[(r["transport"], r["nodes"], r["tuple"])].append(r)
    elif r.get("kind") == "ib_write_bw":
        summary["ib_write_bw"].append(r)
    elif r.get("kind") == "error":
        summary["errors"].append(r)
for (t, n, s), rs in sorted(sh.items()):
    if len(rs) != n:
        summary["errors"].append({"what": f"shuffle {t} {n} nodes {s} B: {len(rs)} of {n} nodes reported"})
        continue
    secs = max(x["secs"] for x in rs)
    total = sum(x["recv_bytes"] for x in rs)
    summary["shuffle"].append({"transport": t, "nodes": n, "tuple": s, "secs": secs,
                               "MBps": total / secs / 1e6 if secs > 0 else None,
                               "ok": all(x["ok"] for x in rs)})

node_counts = sorted({x["nodes"] for x in summary["shuffle"]})
guests = max([r.get("node", 0) + 1 for r in rows] + node_counts + [0])
# A run of some parts only (FLOWS_BENCH_PARTS) leaves the others' plots as they are.
if summary["shuffle"] or summary["ib_write_bw"]:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    names = {"dpi": ("DPI flow", "-o"), "tcp": ("TCP sockets", "--s"),
             "mpi-swiwarp": ("MPI_Alltoallv on swiwarp", "-.D"), "mpi-tcp": ("MPI_Alltoallv over TCP", ":v")}
    for t in sorted({x["transport"] for x in summary["shuffle"]}, key=lambda t: (t not in names, t)):
        label, style = names.get(t, (t, "-x"))
        for n in node_counts:
            pts = [(x["tuple"], x["MBps"]) for x in summary["shuffle"]
                   if x["transport"] == t and x["nodes"] == n and x["MBps"]]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"{label}, {n} nodes")
    bw = [(x["tuple"], x["MBps"]) for x in summary["ib_write_bw"] if x.get("MBps")]
    if bw:
        ax.plot([p[0] for p in bw], [p[1] for p in bw], ":^", color="gray", label="ib_write_bw, 1 stream")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("tuple size / message size (bytes)")
    ax.set_ylabel("MB/s (shuffle: all input bytes / slowest node)")
    ax.set_title(f"Shuffle throughput on {drv} ({guests} TCG guests, one boot)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(f"{imgdir}/flows-shuffle-{drv}.png", dpi=110)

# Join: the slowest rank/node's time per implementation.
jn = defaultdict(list)
for r in rows:
    if r.get("kind") == "join":
        jn[(r["impl"], r["dist"])].append(r)
    elif r.get("kind") == "join-tcp-shuffle":
        jn[("tcp-shuffle-only", r["dist"])].append(r)
for (impl, dist), rs in sorted(jn.items()):
    secs = [x["secs"] for x in rs if x.get("secs") is not None]
    # flows time their sources' and targets' open apart (open_secs): the
    # wait for the peers' buffers, outside the timed join like MPI's barrier
    opens = [x["open_secs"] for x in rs if x.get("open_secs") is not None]
    # the exchange alone (all rows received), before the local hash join
    xs = [x["exchange_secs"] for x in rs if x.get("exchange_secs") is not None]
    summary["join"].append({"impl": impl, "dist": dist, "nodes": len(rs),
                            "secs": max(secs) if len(secs) == len(rs) and secs else None,
                            "open_secs_max": max(opens) if opens else None,
                            "exchange_secs_max": max(xs) if xs else None,
                            "ok": all(x.get("ok", False) for x in rs)})
if summary["join"]:
    fig, ax = plt.subplots(figsize=(7, 4))
    impls = sorted({j["impl"] for j in summary["join"]})
    for i, dist in enumerate(("uniform", "zipf")):
        vals = [next((j["secs"] or 0 for j in summary["join"] if j["impl"] == im and j["dist"] == dist), 0)
                for im in impls]
        ax.bar([k + i * 0.4 for k in range(len(impls))], vals, 0.4, label=dist)
    ax.set_xticks([k + 0.2 for k in range(len(impls))], impls, fontsize=8)
    ax.set_ylabel("seconds (slowest node)")
    ax.set_title(f"Distributed join, {guests} nodes on {drv}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(f"{imgdir}/flows-join-{drv}.png", dpi=110)

# Streaming aggregation.
st = [r for r in rows if r.get("kind") == "stream"]
summary["stream"] = st
if st:
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.6))
    nodes = [s["node"] for s in st]
    a1.bar([n - 0.2 for n in nodes], [s["repartition_bytes"] / 1e6 for s in st], 0.4, label="re-partitioning")
    a1.bar([n + 0.2 for n in nodes], [s["partial_bytes"] / 1e6 for s in st], 0.4, label="partial + lazy merge")
    a1.set_xlabel("node")
    a1.set_ylabel("MB sent")
    a1.legend(fontsize=8)
    a2.bar([n - 0.2 for n in nodes], [s["repartition_secs"] for s in st], 0.4)
    a2.bar([n + 0.2 for n in nodes], [s["partial_secs"] for s in st], 0.4)
    a2.set_xlabel("node")
    a2.set_ylabel("seconds")
    fig.suptitle(f"Streaming aggregation on {drv}")
    fig.tight_layout()
    fig.savefig(f"{imgdir}/flows-stream-{drv}.png", dpi=110)

json.dump(summary, open(summary_path, "w"), indent=1)
print(json.dumps(summary, indent=1))
