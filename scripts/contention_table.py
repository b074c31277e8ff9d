#!/usr/bin/env python3
"""Table and plot of bench/contention over rank counts
(scripts/bench_contention.sh).

    contention_table.py CONTENTION_CSV OUT_DIR

Writes OUT_DIR/contention.md (per pattern: native, shim, floor in
microseconds per operation of the slowest rank, and the ratios; rank
counts beyond the processing units marked "(over)") and
OUT_DIR/contention.png (one panel per pattern, log scale, over ranks).
"""

import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NATIVE, SHIM, FLOOR = "#d62728", "#1f77b4", "#7f7f7f"


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    out = sys.argv[2]
    patterns = []
    for r in rows:
        if r["pattern"] not in patterns:
            patterns.append(r["pattern"])
    lines = ["| pattern | ranks | native us | shim us | floor us | native/shim | shim/floor |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for p in patterns:
        for r in sorted((r for r in rows if r["pattern"] == p), key=lambda r: int(r["ranks"])):
            over = " (over)" if r["oversubscribed"] == "yes" else ""
            lines.append("| %s | %s%s | %s | %s | %s | %s | %s |" % (
                p, r["ranks"], over, r["native_us"], r["shim_us"], r["floor_us"],
                r["native/shim"], r["shim/floor"]))
    with open(os.path.join(out, "contention.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    cols = 4
    rows_n = (len(patterns) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(4 * cols, 3.2 * rows_n), squeeze=False)
    for i, p in enumerate(patterns):
        ax = axes[i // cols][i % cols]
        data = sorted((r for r in rows if r["pattern"] == p), key=lambda r: int(r["ranks"]))
        x = [int(r["ranks"]) for r in data]
        for key, color, label in (("native_us", NATIVE, "native MPICH"),
                                  ("shim_us", SHIM, "rmashim"),
                                  ("floor_us", FLOOR, "CPU floor")):
            y = [num(r[key]) for r in data]
            if any(not math.isnan(v) and v > 0 for v in y):
                ax.plot(x, y, "o-", color=color, label=label)
        over = [int(r["ranks"]) for r in data if r["oversubscribed"] == "yes"]
        if over:
            ax.axvspan(min(over) - 0.5, max(x) + 0.5, color="#eeeeee", zorder=0)
        ax.set_title(p)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(x)
        ax.set_xticklabels([str(v) for v in x])
        ax.set_xlabel("ranks (grey: oversubscribed)")
        ax.set_ylabel("us per op, slowest rank")
        if i == 0:
            ax.legend(fontsize=8)
    for j in range(len(patterns), rows_n * cols):
        axes[j // cols][j % cols].axis("off")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "contention.png"), dpi=90)


if __name__ == "__main__":
    main()
