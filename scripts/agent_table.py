#!/usr/bin/env python3
"""The table of scripts/bench_agent.sh and scripts/bench_agent_twohost.sh.

bench/agent.cc prints one AGENT|label|operation|target|state|value|unit line
per row and run. The scripts alternate the configurations run by run, so
that a shared machine's slow spells (on the 2-core VM a whole run of native
MPICH's 8-byte put+flush takes 0.45 us or 2.2-2.6 us, by run) fall on all of
them alike; this prints each row's median over the runs with its quartiles
per configuration, and the ratio of the second configuration's median to
the first's (shim / native: above 1, the shim is slower).

  agent_table.py FILE TITLE LABEL=HEADING [LABEL=HEADING ...]
"""
import statistics
import sys


def read_rows(path):
    rows = {}
    for line in open(path):
        if not line.startswith("AGENT|"):
            continue
        _, label, what, target, state, value, unit = line.strip().split("|")
        row = rows.setdefault((what, target, state, unit), {})
        row.setdefault(label, []).append(float(value))
    return rows


def cell(values):
    if not values:
        return "-"
    if len(values) < 2:
        return "%.2f" % values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return "%.2f (%.2f-%.2f)" % (q2, q1, q3)


def ratio(base, other):
    if not base or not other or statistics.median(base) <= 0:
        return "-"
    return "%.2fx" % (statistics.median(other) / statistics.median(base))


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    path, title = sys.argv[1], sys.argv[2]
    columns = [arg.split("=", 1) for arg in sys.argv[3:]]
    rows = read_rows(path)
    counts = sorted({len(v) for row in rows.values() for v in row.values()})
    if not counts:
        sys.exit("agent_table.py: no run gave results")
    runs = str(counts[0]) if len(counts) == 1 else "%d-%d" % (counts[0], counts[-1])
    print("%s: median (quartiles) over %s runs of each, alternating." % (title, runs))
    print()
    headings = " | ".join(heading for _, heading in columns)
    print("| operation | target | target's state | unit | %s | %s / %s |" %
          (headings, columns[1][1], columns[0][1]))
    print("| --- | --- | --- | --- |%s ---: |" % (" ---: |" * len(columns)))
    first, second = columns[0][0], columns[1][0]
    for (what, target, state, unit), v in rows.items():
        cells = " | ".join(cell(v.get(label, [])) for label, _ in columns)
        print("| %s | %s | %s | %s | %s | %s |" %
              (what, target, state, unit, cells, ratio(v.get(first), v.get(second))))


if __name__ == "__main__":
    main()
