#!/usr/bin/env python3
"""Merges the CSV of scripts/bench_accumulate.sh into one table.

    bench_accumulate_table.py RESULTS_DIR

Sources (each may have several rounds, NAME.<round>.csv; every cell keeps
its fastest round per column): mpich_shim (native MPICH on an opted-out
window, the shim, the floor, one process), mpich_shim_before (optional: an
older librmashim.so), mpich_plain (MPICH, nothing preloaded, key rows),
ompi_sm (Open MPI osc/sm with its own floor), ompi_sm_noavx (the same
without op/avx, key rows). Writes table.txt (every cell) and table.md (the
key rows and a 1 MiB overview) into RESULTS_DIR.
"""

import csv
import glob
import math
import os
import re
import sys

KEY = ("call", "type", "op", "metric", "bytes")


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def load(results, name):
    """{cell key: {column: fastest value, "verified": all rounds ok}}."""
    cells = {}
    for path in sorted(glob.glob(os.path.join(results, f"{name}.*.csv"))):
        if not re.search(rf"/{re.escape(name)}\.\d+\.csv$", path):
            continue
        with open(path, newline="") as f:
            for row in csv.DictReader(line for line in f if line.strip()):
                if "call" not in row or row["call"] == "call":
                    continue
                key = tuple(row[k] for k in KEY)
                cell = cells.setdefault(key, {"verified": True})
                for col in ("native_us", "shim_us", "floor_us"):
                    v = num(row.get(col))
                    if not math.isnan(v) and v > 0:
                        cell[col] = min(cell.get(col, math.inf), v)
                cell["verified"] &= row.get("verified", "ok") == "ok"
    return cells


def fmt(x, digits=3):
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "-"
    if abs(x) >= 1000:
        return f"{x:.0f}"
    if abs(x) >= 100:
        return f"{x:.1f}"
    return f"{x:.{digits}f}"


def ratio(a, b):
    if a is None or b is None or not (a > 0 and b > 0) or math.isinf(a) or math.isinf(b):
        return "-"
    return f"{a / b:.2f}x"


def size_label(n):
    n = int(n)
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results = sys.argv[1]
    shim = load(results, "mpich_shim")
    before = load(results, "mpich_shim_before")
    plain = load(results, "mpich_plain")
    ompi = load(results, "ompi_sm")
    noavx = load(results, "ompi_sm_noavx")
    machine = open(os.path.join(results, "machine.txt")).read() \
        if os.path.exists(os.path.join(results, "machine.txt")) else ""
    loads = re.findall(r"^load ([\d.]+) ([\d.]+) ([\d.]+)", machine, re.M)

    def get(src, key, col):
        return src.get(key, {}).get(col)

    def osc(key):
        """Open MPI osc/sm: verified numbers only (op/avx's saturating 8-bit
        sums fail; then the op ^avx run, where it has the row)."""
        if key in ompi and ompi[key]["verified"]:
            return get(ompi, key, "native_us"), get(ompi, key, "floor_us"), ""
        if key in noavx and noavx[key]["verified"]:
            return get(noavx, key, "native_us"), get(noavx, key, "floor_us"), "op ^avx"
        if key in ompi:
            return None, get(ompi, key, "floor_us"), "osc/sm results WRONG (op/avx)"
        return None, None, ""

    header = ["call", "type", "op", "metric", "bytes", "shim us", "floor us", "shim/floor",
              "native us", "native/shim", "no-preload us", "osc/sm us", "osc floor us",
              "osc/its floor", "osc/shim"]
    if before:
        header += ["before us", "before/floor"]
    header += ["note"]
    rows = []
    for key, cell in shim.items():
        s, f, n = cell.get("shim_us"), cell.get("floor_us"), cell.get("native_us")
        o, of, note = osc(key)
        notes = [note] if note else []
        if not cell["verified"]:
            notes.append("shim run: verification FAILED")
        row = list(key) + [fmt(s), fmt(f), ratio(s, f), fmt(n), ratio(n, s),
                           fmt(get(plain, key, "native_us")), fmt(o), fmt(of), ratio(o, of),
                           ratio(o, s)]
        if before:
            b = get(before, key, "shim_us")
            row += [fmt(b), ratio(b, get(before, key, "floor_us"))]
        row.append("; ".join(notes))
        rows.append(row)

    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    with open(os.path.join(results, "table.txt"), "w") as f:
        for r in [header] + rows:
            f.write("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")

    md = []
    md.append(f"{machine.splitlines()[0] if machine else ''}; "
              f"load average (1 min) {min(float(l[0]) for l in loads):.1f} to "
              f"{max(float(l[0]) for l in loads):.1f} over the steps." if loads else "")
    md.append("")
    md.append("| call | type | bytes | metric | shim us | floor us | shim/floor | native MPICH us "
              "| MPICH, no preload us | osc/sm us | osc/sm / its floor | osc/sm / shim |"
              + (" before us | before/floor |" if before else ""))
    md.append("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|" +
              ("---:|---:|" if before else ""))
    for key, cell in sorted(shim.items(), key=lambda kv: (kv[0][0], kv[0][1] != "float",
                                                          int(kv[0][4]), kv[0][3])):
        call, typ, op, metric, nbytes = key
        if op != "SUM" or typ not in ("float", "int8") or int(nbytes) not in (8, 4096, 1 << 20):
            continue
        s, f, n = cell.get("shim_us"), cell.get("floor_us"), cell.get("native_us")
        o, of, note = osc(key)
        line = (f"| {call} | {typ} | {size_label(nbytes)} | {metric} | {fmt(s)} | {fmt(f)} | "
                f"{ratio(s, f)} | {fmt(n)} | {fmt(get(plain, key, 'native_us'))} | "
                f"{fmt(o)}{' (op ^avx)' if note == 'op ^avx' else ''} | {ratio(o, of)} | "
                f"{ratio(o, s)} |")
        if before:
            b = get(before, key, "shim_us")
            line += f" {fmt(b)} | {ratio(b, get(before, key, 'floor_us'))} |"
        md.append(line)
    md.append("")
    md.append("1 MiB, latency (one operation + flush): shim / floor, and osc/sm / its floor:")
    md.append("")
    md.append("| call | op | int8 | int32 | int64 | float | double |")
    md.append("|---|---|---:|---:|---:|---:|---:|")
    for call in ("accumulate", "get_accumulate"):
        for op in ("SUM", "MAX", "REPLACE"):
            cells = []
            for typ in ("int8", "int32", "int64", "float", "double"):
                key = (call, typ, op, "latency", str(1 << 20))
                cell = shim.get(key, {})
                o, of, note = osc(key)
                osc_text = ratio(o, of) if o else ("wrong" if "WRONG" in note else "-")
                cells.append(f"{ratio(cell.get('shim_us'), cell.get('floor_us'))} / {osc_text}")
            md.append(f"| {call} | {op} | " + " | ".join(cells) + " |")
    md.append("")
    with open(os.path.join(results, "table.md"), "w") as f:
        f.write("\n".join(md))
    print(open(os.path.join(results, "table.txt")).read())
    print("\n".join(md))


if __name__ == "__main__":
    main()
