#!/usr/bin/env bash
# What profiling costs: bench/rma_latency under the shim with RMASHIM_PROFILE
# off and on, alternating rounds, fastest of each; the CPU floor and native
# MPICH from the same runs. Profiling off is one branch on a null pointer
# per operation, so "off" should sit at the shim's usual distance from the
# floor and "on" a few counter increments above it.
#   scripts/profile_overhead.sh [ROUNDS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
bazel build //shim:librmashim.so //bench:rma_latency >&2
shim=$(realpath bazel-bin/shim/librmashim.so)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for (( r = 0; r < rounds; ++r )); do
  for mode in off on; do
    echo "round $((r + 1))/$rounds, profiling $mode" >&2
    profile=""
    [[ $mode == on ]] && profile=$work/profile.json
    mpirun.mpich -n 2 env LD_PRELOAD="$shim" RMASHIM_PROFILE="$profile" \
      bazel-bin/bench/rma_latency --csv 2>/dev/null | tail -n +2 |
      sed "s/^/$mode,/" >>"$work/runs.csv"
  done
done
# Fastest per (mode, test, bytes) over the rounds.
python3 - "$work/runs.csv" <<'PY'
import csv, sys
best = {}
for mode, test, size, native, shim, floor in csv.reader(open(sys.argv[1])):
    key = (test, int(size))
    row = best.setdefault(key, {})
    for name, value in (("native", native), ("floor", floor), (mode, shim)):
        row[name] = min(row.get(name, float("inf")), float(value))
print("%-16s %8s %10s %10s %10s %10s %8s" % (
    "test", "bytes", "native us", "off us", "on us", "floor us", "on/off"))
for (test, size), row in best.items():
    print("%-16s %8d %10.3f %10.3f %10.3f %10.3f %7.2fx" % (
        test, size, row["native"], row["off"], row["on"], row["floor"],
        row["on"] / row["off"]))
PY
