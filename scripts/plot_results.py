#!/usr/bin/env python3
"""Renders the benchmark sweep's CSV (scripts/bench_sweep.sh) as PNG plots in
the style of the papers' figures, and a markdown summary of the ratios.
Open MPI osc/sm joins the OSU-style plots and tables as a peer when the
sweep ran osu_rma on it (osu_rma_osc_sm.csv; scripts/osu_tables.py).

    plot_results.py RESULTS_DIR [--publish DIR --readme README.md]

--publish copies the PNGs and summary.md to DIR (committed, embedded by
README) and replaces README's text between the bench-sweep markers with
the summary.
"""

import argparse
import csv
import glob
import math
import os
import re
import shutil
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import osu_tables  # noqa: E402  (scripts/, next to this file)
import small_ops_table  # noqa: E402

NATIVE, SHIM, FLOOR, P2P, OSC_SM = "#d62728", "#1f77b4", "#7f7f7f", "#2ca02c", "#ff7f0e"
SYNCS = osu_tables.SYNCS
BEGIN, END = "<!-- bench-sweep:begin -->", "<!-- bench-sweep:end -->"


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def read(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if line.strip()))


def read_all(results, prefix):
    """Rows of every prefix_<ranks>.csv, in rank order."""
    rows = []
    paths = glob.glob(os.path.join(results, prefix + "_*.csv"))
    for path in sorted(paths, key=lambda p: int(re.findall(r"_(\d+)\.csv$", p)[0])):
        rows += read(path)
    return rows


size_label = osu_tables.size_label


def speedup(native, shim):
    return native / shim if shim > 0 else math.nan


def fmt(x, digits=2):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.{digits}f}"


def log_sizes(ax):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: size_label(v)))


def save(fig, results, name, made):
    path = os.path.join(results, name)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    made.append(name)


# ---- OSU-style ----

def osu_series(rows, op, sync, metric):
    sel = [r for r in rows if r["op"] == op and r["sync"] == sync and r["metric"] == metric]
    sel.sort(key=lambda r: int(r["bytes"]))
    return ([int(r["bytes"]) for r in sel], [num(r["native_us"]) for r in sel],
            [num(r["shim_us"]) for r in sel], [num(r["floor_us"]) for r in sel])


def plot_osu(rows, results, made, osc=None):
    """`osc`: osu_tables.index of the osc/sm run's rows (a third line), or
    empty."""
    osc = osc or {}
    for metric, name, ylabel in (("latency", "osu_latency.png", "latency (us)"),
                                 ("bandwidth", "osu_bandwidth.png", "bandwidth (MB/s)")):
        fig, axes = plt.subplots(3, 5, figsize=(17, 9), sharex=True)
        for i, op in enumerate(("put", "get", "acc")):
            for j, sync in enumerate(SYNCS):
                ax = axes[i][j]
                sizes, native, shim, floor = osu_series(rows, op, sync, metric)
                if not sizes:
                    ax.set_visible(False)
                    continue
                peer = osu_tables.osc_series(osc, op, sync, metric, sizes)
                if metric == "bandwidth":  # bytes per us = MB/s
                    native = [b / t for b, t in zip(sizes, native)]
                    shim = [b / t for b, t in zip(sizes, shim)]
                    floor = [b / t if t > 0 else math.nan for b, t in zip(sizes, floor)]
                    peer = [b / t for b, t in zip(sizes, peer)]
                ax.plot(sizes, native, "o-", color=NATIVE, label="native MPICH")
                ax.plot(sizes, shim, "s-", color=SHIM, label="rmashim")
                timed = [(b, t) for b, t in zip(sizes, peer) if not math.isnan(t)]
                if timed:  # the sizes its run timed (--quick: a few)
                    ax.plot(*zip(*timed), "^-", color=OSC_SM, label="Open MPI osc/sm")
                if any(f > 0 for f in floor if not math.isnan(f)):
                    ax.plot(sizes, floor, "--", color=FLOOR, label="CPU floor")
                log_sizes(ax)
                ax.set_yscale("log")
                ax.set_title(f"{op} / {sync}", fontsize=10)
                ax.grid(True, which="both", alpha=0.3)
                if j == 0:
                    ax.set_ylabel(ylabel)
                if i == 2:
                    ax.set_xlabel("message size (bytes)")
        axes[0][0].legend(fontsize=8)
        fig.suptitle(f"OSU-style {metric}, rank 0 -> rank 1 on one node "
                     f"({'one op per epoch' if metric == 'latency' else 'window of ops per epoch'})")
        save(fig, results, name, made)

    # Atomics: 8-byte fetch_and_op and compare_and_swap latency per mode.
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, op in zip(axes, ("fetch_and_op", "cas")):
        sel = {r["sync"]: r for r in rows if r["op"] == op and r["metric"] == "latency"}
        syncs = [s for s in SYNCS if s in sel]
        x = range(len(syncs))
        peer = [osu_tables.osc_us(osc.get((op, s, "latency", 8))) for s in syncs]
        bars = [("native MPICH", NATIVE, [num(sel[s]["native_us"]) for s in syncs]),
                ("rmashim", SHIM, [num(sel[s]["shim_us"]) for s in syncs])]
        if not all(math.isnan(t) for t in peer):
            bars.append(("Open MPI osc/sm", OSC_SM, peer))
        bars.append(("CPU floor", FLOOR, [num(sel[s]["floor_us"]) for s in syncs]))
        w = 0.8 / len(bars)
        for k, (label, color, values) in enumerate(bars):
            ax.bar([i + (k - (len(bars) - 1) / 2) * w for i in x], values, w, color=color,
                   label=label)
        ax.set_xticks(list(x))
        ax.set_xticklabels(syncs)
        ax.set_yscale("log")
        ax.set_title(f"{op} (8 B) + sync")
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("latency (us)")
    axes[0].legend(fontsize=8)
    save(fig, results, "osu_atomics.png", made)


# ---- GUPS ----

def plot_gups(rows, results, made):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for update, marker in (("acc", "o"), ("fop", "s")):
        sel = sorted((r for r in rows if r["update"] == update), key=lambda r: int(r["ranks"]))
        ranks = [int(r["ranks"]) for r in sel]
        ax.plot(ranks, [num(r["native_gups"]) for r in sel], marker + "--", color=NATIVE,
                label=f"native MPICH ({update})")
        ax.plot(ranks, [num(r["shim_gups"]) for r in sel], marker + "-", color=SHIM,
                label=f"rmashim ({update})")
    sel = sorted((r for r in rows if r["update"] == "acc"), key=lambda r: int(r["ranks"]))
    ax.plot([int(r["ranks"]) for r in sel], [num(r["floor_gups"]) for r in sel], ":",
            color=FLOOR, label="CPU floor (atomic XOR)")
    ax.set_yscale("log")
    ax.set_xlabel("ranks (> 2: oversubscribed on 2 cores)")
    ax.set_ylabel("GUP/s")
    ax.set_xticks(sorted({int(r["ranks"]) for r in rows}))
    ax.set_title("Random Access: 8-byte XOR updates (acc: MPI_Accumulate, fop: MPI_Fetch_and_op)",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, results, "gups.png", made)


# ---- Stencil ----

def plot_stencil(rows, results, made):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    rows = sorted(rows, key=lambda r: int(r["ranks"]))
    x = range(len(rows))
    w = 0.27
    for k, (col, color, label) in enumerate((("native_s", NATIVE, "put, native MPICH"),
                                             ("shim_s", SHIM, "put, rmashim"),
                                             ("p2p_s", P2P, "Isend/Irecv"))):
        ax.bar([i + (k - 1) * w for i in x], [num(r[col]) for r in rows], w, color=color,
               label=label)
    ax.set_xticks(list(x))
    ax.set_xticklabels([f"{r['ranks']} ranks" for r in rows])
    ax.set_yscale("log")
    ax.set_ylabel("time to convergence (s)")
    grid = rows[0]["grid"] if rows else ""
    iters = rows[0]["iterations"] if rows else ""
    ax.set_title(f"5-point stencil, red-black Gauss-Seidel, {grid} floats, {iters} iterations",
                 fontsize=9)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, results, "stencil.png", made)


# ---- Halo ----

def plot_halo(rows, results, made):
    ranks = sorted({int(r["ranks"]) for r in rows})
    fig, axes = plt.subplots(1, len(ranks), figsize=(6 * len(ranks), 4.5), squeeze=False)
    styles = {"fence": "o", "pscw": "s", "lock": "^"}
    for ax, n in zip(axes[0], ranks):
        for sync, marker in styles.items():
            sel = sorted((r for r in rows if int(r["ranks"]) == n and r["sync"] == sync),
                         key=lambda r: int(r["bytes"]))
            sizes = [int(r["bytes"]) for r in sel]
            ax.plot(sizes, [num(r["native_ratio"]) for r in sel], marker + "--", color=NATIVE,
                    alpha=0.8, label=f"{sync}, native")
            ax.plot(sizes, [num(r["shim_ratio"]) for r in sel], marker + "-", color=SHIM,
                    label=f"{sync}, rmashim")
        ax.axhline(1.0, color="black", lw=0.8)
        log_sizes(ax)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("time one-sided / time Isend-Irecv")
        ax.set_title(f"halo exchange, 4 neighbours, {n} ranks (< 1: one-sided wins)", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7, ncol=2)
    save(fig, results, "halo.png", made)


# ---- Skew and overlap ----

def plot_overlap(rows, results, made):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ax = axes[0]
    for sync, marker in (("pscw", "o"), ("lock", "s")):
        sel = sorted((r for r in rows if r["test"] == "skew" and r["sync"] == sync),
                     key=lambda r: num(r["native_compute_us"]))
        x = [max(num(r["native_compute_us"]), 10) for r in sel]  # 0 drawn at 10 us
        ax.plot(x, [num(r["native"]) for r in sel], marker + "--", color=NATIVE,
                label=f"{sync}, native")
        ax.plot(x, [num(r["shim"]) for r in sel], marker + "-", color=SHIM,
                label=f"{sync}, rmashim")
    ax.plot([10, 1e4], [10, 1e4], ":", color=FLOOR, label="= target's compute time")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("target computes (us; leftmost point: 0)")
    ax.set_ylabel("origin: 16 puts + sync (us)")
    bytes_ = next((r["bytes"] for r in rows if r["test"] == "skew"), "")
    ax.set_title(f"process skew, 16 puts of {size_label(bytes_) if bytes_ else '?'}B",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)

    ax = axes[1]
    kinds = [("origin overlap", "flush"), ("origin overlap", "pscw"), ("target overlap", "pscw")]
    sizes = sorted({int(r["bytes"]) for r in rows if "overlap" in r["test"]})
    labels, native, shim = [], [], []
    for test, sync in kinds:
        for b in sizes:
            r = next((r for r in rows if r["test"] == test and r["sync"] == sync
                      and int(r["bytes"]) == b), None)
            if r:
                labels.append(f"{test.split()[0]}\n{sync}\n{size_label(b)}")
                native.append(num(r["native"]))
                shim.append(num(r["shim"]))
    x = range(len(labels))
    ax.bar([i - 0.2 for i in x], native, 0.4, color=NATIVE, label="native MPICH")
    ax.bar([i + 0.2 for i in x], shim, 0.4, color=SHIM, label="rmashim")
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylim(-0.2, 1.1)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylabel("overlap (1 = communication hidden)")
    ax.set_title("overlap with Tcomp = 1.2 Tcomm (16 puts per epoch)", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, results, "overlap.png", made)


# ---- Speedup bars ----

def headline(osu, gups, stencil, halo, cores=2, osc=None):
    """(label, native/shim speedup, osc-sm/shim speedup or nan) of the cases
    README leads with; runs with more ranks than `cores` (oversubscribed) are
    left to their own tables."""
    gups = [r for r in gups if int(r["ranks"]) <= cores]
    stencil = [r for r in stencil if int(r["ranks"]) <= cores]
    halo = [r for r in halo if int(r["ranks"]) <= cores]
    out = osu_tables.headline(osu, osc or {})
    for r in gups:
        out.append((f"GUPS {r['update']}, {r['ranks']} ranks",
                    speedup(num(r["shim_gups"]), num(r["native_gups"])), math.nan))
    for r in stencil:
        if int(r["ranks"]) > 1:
            out.append((f"stencil, {r['ranks']} ranks",
                        speedup(num(r["native_s"]), num(r["shim_s"])), math.nan))
    for r in halo:
        if int(r["bytes"]) in (16, 65536):
            out.append((f"halo {r['sync']} {size_label(r['bytes'])}B, {r['ranks']} ranks",
                        speedup(num(r["native_us"]), num(r["shim_us"])), math.nan))
    return out


def plot_speedup(cases, results, made):
    cases = [c for c in cases if not math.isnan(c[1])]
    if not cases:
        return
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(cases) + 1.2))
    y = range(len(cases))
    ax.barh(list(y), [c[1] for c in cases], color=SHIM)
    ax.set_yticks(list(y))
    ax.set_yticklabels([c[0] for c in cases], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", lw=0.8)
    for i, c in enumerate(cases):
        ax.text(c[1], i, f" {c[1]:.1f}x", va="center", fontsize=7)
    ax.set_xlabel("speedup of rmashim over native MPICH (same run)")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    save(fig, results, "speedup.png", made)


# ---- Summary ----

def accumulate_summary(rows):
    """Bulk accumulates (rma_accumulate --key): native MPICH, the shim and the
    CPU floor from one process."""
    md = ["Bulk accumulates, MPI_SUM, one node, fastest batch (us; rma_accumulate --key; "
          "the full table with Open MPI osc/sm: scripts/bench_accumulate.sh):", "",
          "| call | type | bytes | metric | native | rmashim | CPU floor | native / rmashim "
          "| rmashim / floor |",
          "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in sorted(rows, key=lambda r: (r["call"], r["type"], int(r["bytes"]), r["metric"])):
        if r.get("shim_us") in (None, "", "-"):
            continue
        n, s, f = num(r["native_us"]), num(r["shim_us"]), num(r["floor_us"])
        md.append(f"| {r['call']} | {r['type']} | {size_label(r['bytes'])} | {r['metric']} | "
                  f"{fmt(n)} | {fmt(s, 3)} | {fmt(f, 3)} | {fmt(speedup(n, s), 1)}x | "
                  f"{fmt(s / f if f > 0 else math.nan)} |")
    md.append("")
    return md


def summary(results, osu, gups, stencil, halo, overlap, numa, cases, acc=(), osc=None):
    machine = {}
    path = os.path.join(results, "machine.txt")
    if os.path.exists(path):
        for line in open(path):
            key, _, value = line.partition(":")
            machine[key.strip()] = value.strip()
    md = []
    md.append(
        f"Measured {machine.get('date', '?')} ({machine.get('mode', '?')} sweep, "
        f"commit {machine.get('commit', '?')}) on {machine.get('cores', '?')} cores "
        f"({machine.get('cpu', '?')}, {machine.get('numa_domains', '?')} NUMA domain), "
        f"{machine.get('os', '?')}, MPICH {machine.get('mpich', '?')}; load average "
        f"{machine.get('load_before', '?')} before, {machine.get('load_after', '?')} after; "
        f"sweep took {machine.get('sweep_seconds', '?')} s. Ranks beyond 2 are oversubscribed. "
        "Every ratio compares native MPICH and rmashim measured in the same run. The "
        "first table leaves oversubscribed runs out; their rows below are labelled by ranks."
        + (f" Re-run after the sweep: {machine['rerun']}." if machine.get("rerun") else ""))
    try:
        loaded = float(machine.get("load_before", "0").split()[0]) > int(machine.get("cores", "1"))
    except ValueError:
        loaded = False
    if loaded:
        md.append("")
        md.append("**The machine was loaded** (load average above its core count): native "
                  "MPICH's passive-target operations wait for the target process to be "
                  "scheduled, so native / rmashim ratios here measure the scheduler, not MPICH "
                  "(quiet-machine ratios are 20-60x for 8-byte operations). The rmashim / floor "
                  "ratios and the small-operations table (fastest of interleaved batches) are "
                  "the load-robust results.")
    md.append("")
    if cases:
        peer = " osc/sm / rmashim |" if osc else ""
        md.append(f"| case | native / rmashim |{peer}")
        md.append("| --- | ---: |" + (" ---: |" if osc else ""))
        for label, s, o in cases:
            if not math.isnan(s):
                osc_cell = f" {fmt(o, 1)}{'' if math.isnan(o) else 'x'} |" if osc else ""
                md.append(f"| {label} | {fmt(s, 1)}x |{osc_cell}")
        md.append("")
        if osc:
            md.append("osc/sm: Open MPI's osc/sm running osu_rma in a separate process after "
                      "this one (scripts/osu_tables.py); `-`: no osc/sm counterpart.")
            md.append("")
    if osu:
        md += osu_tables.latency_matrix(osu, osc or {})
        md += osu_tables.peer_table(osu, osc or {})
    if gups:
        md.append("| GUPS | ranks | native | rmashim | CPU floor | rmashim / native |")
        md.append("| --- | ---: | ---: | ---: | ---: | ---: |")
        for r in sorted(gups, key=lambda r: (r["update"], int(r["ranks"]))):
            n, s, f = num(r["native_gups"]), num(r["shim_gups"]), num(r["floor_gups"])
            md.append(f"| {r['update']} | {r['ranks']} | {n:.3g} | {s:.3g} | {f:.3g} | "
                      f"{fmt(speedup(s, n), 1)}x |")
        md.append("")
    if stencil:
        md.append("| stencil | ranks | iterations | put native (s) | put rmashim (s) | "
                  "Isend/Irecv (s) | native / rmashim | rmashim / p2p |")
        md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in sorted(stencil, key=lambda r: int(r["ranks"])):
            n, s, p = num(r["native_s"]), num(r["shim_s"]), num(r["p2p_s"])
            md.append(f"| {r['grid']} | {r['ranks']} | {r['iterations']} | {fmt(n, 4)} | "
                      f"{fmt(s, 4)} | {fmt(p, 4)} | {fmt(speedup(n, s), 1)}x | {fmt(s / p)} |")
        md.append("")
        md.append("`-`: the version gave up after its time limit (oversubscribed ranks).")
        md.append("")
    if halo:
        for n in sorted({int(r["ranks"]) for r in halo}):
            md.append(f"Halo exchange, {n} ranks: time one-sided / time Isend-Irecv "
                      "(smaller is better; the MPICH sync paper's Tables 1-2):")
            md.append("")
            md.append("| size | fence native | fence rmashim | pscw native | pscw rmashim | "
                      "lock native | lock rmashim |")
            md.append("| ---: |" + " ---: |" * 6)
            for b in sorted({int(r["bytes"]) for r in halo if int(r["ranks"]) == n}):
                cells = []
                for sync in ("fence", "pscw", "lock"):
                    r = next((r for r in halo if int(r["ranks"]) == n and int(r["bytes"]) == b
                              and r["sync"] == sync), None)
                    cells += [fmt(num(r["native_ratio"])), fmt(num(r["shim_ratio"]))] if r else ["-", "-"]
                md.append(f"| {size_label(b)} | " + " | ".join(cells) + " |")
            md.append("")
    if overlap:
        md.append("| skew / overlap | sync | bytes | target or origin computes (us) | native | rmashim |")
        md.append("| --- | --- | ---: | ---: | ---: | ---: |")
        for r in overlap:
            unit = " us" if r["unit"] == "us" else ""
            md.append(f"| {r['test']} | {r['sync']} | {size_label(r['bytes'])} | "
                      f"{fmt(num(r['native_compute_us']), 0)} / {fmt(num(r['shim_compute_us']), 0)} | "
                      f"{fmt(num(r['native']))}{unit} | {fmt(num(r['shim']))}{unit} |")
        md.append("")
        md.append("Skew rows: the origin's time for 16 puts and their synchronization while the "
                  "target computes. Overlap rows: (Tcomm + Tcomp - Ttotal) / Tcomm with "
                  "Tcomp = 1.2 Tcomm (1 = communication fully hidden).")
        md.append("")
    if acc:
        md += accumulate_summary(acc)
        md += small_ops_table.table(results)
    if numa:
        md.append("| placement | op | bytes | native (us) | rmashim (us) | floor (us) |")
        md.append("| --- | --- | ---: | ---: | ---: | ---: |")
        for r in numa:
            md.append(f"| {r['placement']} | {r['op']} | {r['bytes']} | {fmt(num(r['native_us']), 3)} | "
                      f"{fmt(num(r['shim_us']), 3)} | {fmt(num(r['floor_us']), 3)} |")
    else:
        md.append(f"Intra- vs inter-NUMA: skipped, the machine has "
                  f"{machine.get('numa_domains', 'one')} NUMA domain.")
    md.append("")
    return "\n".join(md)


def publish(results, made, text, folder, readme):
    os.makedirs(folder, exist_ok=True)
    for name in made + ["summary.md"]:
        shutil.copy(os.path.join(results, name), os.path.join(folder, name))
    if readme:
        content = open(readme).read()
        if BEGIN not in content or END not in content:
            sys.exit(f"{readme} has no {BEGIN} ... {END} markers")
        head, rest = content.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        open(readme, "w").write(f"{head}{BEGIN}\n{text}{END}{tail}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results")
    parser.add_argument("--publish", metavar="DIR")
    parser.add_argument("--readme", metavar="README")
    args = parser.parse_args()
    r = args.results
    osu, gups = read(os.path.join(r, "osu_rma.csv")), read_all(r, "gups")
    stencil, halo = read_all(r, "stencil"), read_all(r, "halo")
    overlap, numa = read(os.path.join(r, "overlap.csv")), read(os.path.join(r, "numa.csv"))
    acc = read(os.path.join(r, "rma_accumulate.csv"))
    osc = osu_tables.index(read(os.path.join(r, "osu_rma_osc_sm.csv")))
    made = []
    if osu:
        plot_osu(osu, r, made, osc)
    if gups:
        plot_gups(gups, r, made)
    if stencil:
        plot_stencil(stencil, r, made)
    if halo:
        plot_halo(halo, r, made)
    if overlap:
        plot_overlap(overlap, r, made)
    cores = 2
    machine_path = os.path.join(r, "machine.txt")
    if os.path.exists(machine_path):
        for line in open(machine_path):
            if line.startswith("cores:") and line.split(":")[1].strip().isdigit():
                cores = int(line.split(":")[1])
    cases = headline(osu, gups, stencil, halo, cores, osc)
    plot_speedup(cases, r, made)
    text = summary(r, osu, gups, stencil, halo, overlap, numa, cases, acc, osc)
    with open(os.path.join(r, "summary.md"), "w") as f:
        f.write(text)
    print(f"plots: {', '.join(made)}; summary: {os.path.join(r, 'summary.md')}")
    if args.publish:
        publish(r, made, text, args.publish, args.readme)
        print(f"published to {args.publish}" + (f" and {args.readme}" if args.readme else ""))


if __name__ == "__main__":
    main()
