"""The OSU-style sweep's tables (bench/osu_rma) for the sweep's summary, with
Open MPI's osc/sm as a peer column when the sweep also ran osu_rma on it
(osu_rma_osc_sm.csv; older result folders have none, and then the tables are
what they were). Used by scripts/plot_results.py; kept apart so that file
stays about its plots.

The osc/sm run is a separate process (built with mpicxx.openmpi, run with
`--mca osc sm`) in which both of osu_rma's windows are osc/sm windows: the
faster of the two is its number (the harder baseline to beat), as in
scripts/small_ops_table.py. Ratios against osc/sm are speedups like the
native ones beside them: osc/sm / rmashim, above 1 when rmashim is faster.
"""

import math

SYNCS = ["flush", "lock", "lock_all", "fence", "pscw"]
OPS = ["put", "get", "acc", "fetch_and_op", "cas"]

# The OSU rows of the summary's headline table: (op, sync, metric, bytes).
HEADLINE = (("put", "flush", "latency", 8), ("get", "flush", "latency", 8),
            ("put", "lock", "latency", 8), ("acc", "flush", "latency", 8),
            ("fetch_and_op", "flush", "latency", 8), ("cas", "flush", "latency", 8),
            ("put", "fence", "latency", 8), ("put", "pscw", "latency", 8),
            ("put", "flush", "bandwidth", 8), ("put", "flush", "bandwidth", 32768),
            ("get", "flush", "bandwidth", 4 << 20))

# The peer table's rows: flush mode (the passive mode OSU's *_latency
# defaults to) at these sizes, where the run timed them.
PEER_SIZES = (8, 32768, 4 << 20)


def _num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def _fmt(x, digits=2):
    if x is None or math.isnan(x):
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.{digits}f}"


def size_label(n):
    """8, 64, 512, 4K, ..., 4M: byte counts as the tables and plots label them."""
    n = int(n)
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def _ratio(num, den):
    return num / den if num > 0 and den > 0 else math.nan


def index(rows):
    """{(op, sync, metric, bytes): row} of osu_rma's CSV rows (a run cut
    short may leave a partial last row: skipped)."""
    return {(r["op"], r["sync"], r["metric"], int(r["bytes"])): r for r in rows
            if (r.get("bytes") or "").isdigit()}


def osc_us(row):
    """osc/sm's time of a row of osu_rma_osc_sm.csv: the faster window."""
    values = [v for v in (_num(row.get("native_us")), _num(row.get("shim_us"))) if v > 0] \
        if row else []
    return min(values) if values else math.nan


def osc_series(osc, op, sync, metric, sizes):
    """osc/sm's times at `sizes` (nan where it has none), for the plots."""
    return [osc_us(osc.get((op, sync, metric, int(b)))) for b in sizes]


def headline(osu, osc):
    """(label, native / rmashim, osc/sm / rmashim) of the HEADLINE rows the
    run has; the last is nan without an osc/sm row."""
    mine, out = index(osu), []
    for key in HEADLINE:
        r = mine.get(key)
        if r:
            op, sync, metric, size = key
            s = _num(r["shim_us"])
            out.append((f"{op} {size_label(size)}B {metric}, {sync}", _ratio(_num(r["native_us"]), s),
                        _ratio(osc_us(osc.get(key)), s)))
    return out


def latency_matrix(osu, osc):
    """8-byte latency per op and mode: native / rmashim[ / osc/sm] in us, the
    speedups and rmashim / CPU floor in each cell."""
    mine = index(osu)
    what = ("us native / rmashim / osc/sm; native / rmashim; osc/sm / rmashim; rmashim / "
            "CPU floor" if osc else "us; speedup; rmashim / CPU floor")
    md = [f"OSU-style latency, 8 B, one operation per epoch ({what}):", "",
          "| op | " + " | ".join(SYNCS) + " |", "| --- |" + " ---: |" * len(SYNCS)]
    for op in OPS:
        cells = []
        for sync in SYNCS:
            key = (op, sync, "latency", 8)
            r = mine.get(key)
            if r is None:
                cells.append("-")
                continue
            n, s, f = _num(r["native_us"]), _num(r["shim_us"]), _num(r["floor_us"])
            floor = f" ({_fmt(s / f, 1)}x floor)" if f > 0 else ""
            if osc:
                o = osc_us(osc.get(key))
                cells.append(f"{_fmt(n)} / {_fmt(s, 3)} / {_fmt(o, 3)}: "
                             f"{_fmt(_ratio(n, s), 1)}x, {_fmt(_ratio(o, s), 1)}x osc/sm{floor}")
            else:
                cells.append(f"{_fmt(n)} / {_fmt(s, 3)}: {_fmt(_ratio(n, s), 1)}x{floor}")
        md.append(f"| {op} | " + " | ".join(cells) + " |")
    md.append("")
    return md


def _overview(mine, osc):
    """One paragraph over every row both runs timed (all modes and sizes)."""
    both = [(k, _num(r["shim_us"]), osc_us(osc.get(k)), _num(r["floor_us"]),
             _num(osc[k].get("floor_us"))) for k, r in mine.items() if k in osc]
    both = [b for b in both if b[1] > 0 and b[2] > 0]
    if not both:
        return []
    ratios = sorted((o / s, k) for k, s, o, _, _ in both)
    slower = [(x, k) for x, k in ratios if x < 1]
    text = (f"Over all {len(ratios)} rows both runs timed (every mode, size and metric), "
            f"osc/sm / rmashim is median {ratios[len(ratios) // 2][0]:.2f}x "
            f"(range {ratios[0][0]:.2f}x to {ratios[-1][0]:.2f}x); rmashim is slower than "
            f"osc/sm in {len(slower)} of them")
    if slower:
        worst = ", ".join(f"{op} {sync} {metric} {size_label(b)}B ({x:.2f}x)"
                          for x, (op, sync, metric, b) in slower[:5])
        text += f" (slowest first: {worst})"
    floors = sorted(f / g for _, _, _, f, g in both if f > 0 and g > 0)
    if floors:
        text += (f". CPU floor of this run / of the osc/sm run: median "
                 f"{floors[len(floors) // 2]:.2f}x (far from 1: the machine changed between "
                 "the runs)")
    return [text + ".", ""]


def peer_table(osu, osc):
    """Flush-mode rows beside osc/sm with both runs' floors; empty without
    osc/sm."""
    if not osc or not osu:
        return []
    mine = index(osu)
    md = ["OSU-style sweep beside Open MPI osc/sm, flush mode (us per operation; osc/sm: "
          "osu_rma built with mpicxx.openmpi and run with `--mca osc sm`, a separate run with "
          "its own CPU floor, the faster of its two osc/sm windows; bandwidth rows: a window "
          "of operations per flush):", "",
          "| op | metric | size | native | rmashim | osc/sm | native / rmashim "
          "| osc/sm / rmashim | rmashim / floor | osc/sm / its floor |",
          "| --- | --- | ---: |" + " ---: |" * 7]
    for op in OPS:
        for size in PEER_SIZES:
            for metric in ("latency", "bandwidth"):
                key = (op, "flush", metric, size)
                r, p = mine.get(key), osc.get(key)
                if r is None or p is None:
                    continue
                n, s, f = _num(r["native_us"]), _num(r["shim_us"]), _num(r["floor_us"])
                o, g = osc_us(p), _num(p.get("floor_us"))
                md.append(f"| {op} | {metric} | {size_label(size)} | {_fmt(n, 3)} | {_fmt(s, 3)} | "
                          f"{_fmt(o, 3)} | "
                          f"{_fmt(_ratio(n, s), 1)}x | {_fmt(_ratio(o, s))}x | "
                          f"{_fmt(_ratio(s, f), 1)} | {_fmt(_ratio(o, g), 1)} |")
    md.append("")
    return md + _overview(mine, osc)
