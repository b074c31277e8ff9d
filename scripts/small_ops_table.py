"""The baselines table of the sweep: bench/small_ops run three
ways (librmashim.so preloaded; nothing preloaded; Open MPI osc/sm), merged
into one markdown table with the targets each row is held to. Used by
scripts/plot_results.py; kept apart so that file stays about its plots."""

import csv
import math
import os

# (test, bytes) -> (target, the limit): "floor" rows compare rmashim with
# its same-run CPU floor, "native" rows with truly native MPICH, "osc_sm"
# rows with Open MPI's osc/sm.
TARGETS = {
    ("put+flush", 8): ("floor", 3.0),
    ("fetch_and_op+flush", 8): ("floor", 4.0),
    ("compare_and_swap+flush", 8): ("floor", 4.0),
    ("accumulate+flush", 8): ("floor", 5.0),
    ("lock+put+unlock", 8): ("floor", 3.0),
    ("win_allocate+free", 4096): ("native", 1.5),
    ("win_allocate+free", 1 << 20): ("native", 1.5),
    ("win_allocate+free", 64 << 20): ("native", 1.5),
    ("put+flush", 1 << 20): ("osc_sm", 1.0),
    ("get+flush", 1 << 20): ("osc_sm", 1.0),
}


def _read(path):
    if not os.path.exists(path):
        return {}
    with open(path, newline="") as f:
        rows = csv.DictReader(line for line in f if line.strip() and "," in line)
        return {(r["test"], int(r["bytes"])): r for r in rows if r.get("bytes", "").isdigit()}


def _num(row, key):
    try:
        return float(row[key]) if row else math.nan
    except (KeyError, TypeError, ValueError):
        return math.nan


def _fastest(row):
    values = [v for v in (_num(row, "native_us"), _num(row, "shim_us")) if v > 0]
    return min(values) if values else math.nan


def _fmt(x):
    if math.isnan(x):
        return "-"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}" if abs(x) < 1 else f"{x:.2f}"


def _size(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def table(results):
    """Markdown lines; empty when small_ops did not run."""
    shim = _read(os.path.join(results, "small_ops.csv"))
    bare = _read(os.path.join(results, "small_ops_nopreload.csv"))
    osc = _read(os.path.join(results, "small_ops_osc_sm.csv"))
    if not shim:
        return []
    md = ["Small operations and window creation (bench/small_ops, 2 ranks, one node; us per "
          "operation, fastest of the interleaved batches). *truly native*: MPICH with nothing "
          "preloaded (a separate run); *opted out*: a native window in the preloaded process "
          "(same run as rmashim and the floor); *osc/sm*: the same program on Open MPI "
          "(`--mca osc sm`). Those two runs time two windows of one library each; the "
          "faster is shown. A rmashim/floor below 1 would be a measurement "
          "error and is flagged. *call floor*: the CPU floor plus one call of an empty "
          "function per MPI call of the pattern (same run), the part no library reached "
          "through calls can avoid; rmashim / call floor is what the shim's own work "
          "costs on top.", "",
          "| test | size | truly native | opted out | rmashim | CPU floor | rmashim / floor "
          "| call floor | rmashim / call floor | osc/sm | target | met |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for key, r in shim.items():
        test, size = key
        native, s, floor = _num(r, "native_us"), _num(r, "shim_us"), _num(r, "floor_us")
        # Both columns of those runs are the same library's windows: the
        # faster one is the baseline (the harder one to beat).
        truly = _fastest(bare.get(key))
        peer = _fastest(osc.get(key))
        ratio = s / floor if floor > 0 else math.nan
        target, met = "", ""
        if key in TARGETS:
            kind, limit = TARGETS[key]
            base = {"floor": floor, "native": truly, "osc_sm": peer}[kind]
            value = s / base if base > 0 else math.nan
            target = {"floor": f"<= {limit:g}x floor", "native": f"<= {limit:g}x truly native",
                      "osc_sm": "<= osc/sm"}[kind]
            met = "-" if math.isnan(value) else ("yes" if value <= limit else "no") + \
                f" ({value:.2f}x)"
        flag = " (below floor: measurement error)" if ratio < 1 else ""
        calls = _num(r, "call_floor_us")
        call_ratio = s / calls if calls > 0 else math.nan
        md.append(f"| {test} | {_size(size)} | {_fmt(truly)} | {_fmt(native)} | {_fmt(s)} | "
                  f"{_fmt(floor)} | {_fmt(ratio)}{flag} | {_fmt(calls)} | {_fmt(call_ratio)} | "
                  f"{_fmt(peer)} | {target} | {met} |")
    diffs = [(_num(r, "native_us"), _fastest(bare.get(k))) for k, r in shim.items()]
    diffs = [o / t for o, t in diffs if t > 0 and o > 0]
    if diffs:
        diffs.sort()
        md += ["", f"Opted-out native / truly native over these rows: median "
               f"{diffs[len(diffs) // 2]:.2f}x (range {diffs[0]:.2f}x to {diffs[-1]:.2f}x); "
               "different processes, so part of it is run-to-run noise."]
    md.append("")
    return md + _alloc_at_more_ranks(results)


def _alloc_at_more_ranks(results):
    """Window allocate + free at more ranks than cores (small_ops_alloc_N.csv)."""
    runs = []
    for name in sorted(os.listdir(results)):
        if name.startswith("small_ops_alloc_") and name.endswith(".csv"):
            ranks = name[len("small_ops_alloc_"):-len(".csv")]
            if ranks.isdigit():
                runs.append((int(ranks), _read(os.path.join(results, name))))
    runs = [(n, rows) for n, rows in sorted(runs) if rows]
    if not runs:
        return []
    md = ["Window allocate + free at more ranks than the machine's cores "
          "(oversubscribed, so not headline numbers: MPICH's collectives spin for cores "
          "they share; same-run opted-out native vs rmashim, us per call):", "",
          "| ranks | size | opted-out native | rmashim | rmashim / native |",
          "| ---: | ---: | ---: | ---: | ---: |"]
    for n, rows in runs:
        for (test, size), r in rows.items():
            if test != "win_allocate+free":
                continue
            native, s = _num(r, "native_us"), _num(r, "shim_us")
            md.append(f"| {n} | {_size(size)} | {_fmt(native)} | {_fmt(s)} | "
                      f"{_fmt(s / native if native > 0 else math.nan)} |")
    md.append("")
    return md
