#!/usr/bin/env bash
# What window creation costs (bench/window_create.cc), native MPICH with
# nothing preloaded against the shim, on one node at several rank counts:
# create/free cycles of MPI_Win_allocate and MPI_Win_create, and many live
# MPI_Win_create windows. Ranks beyond the machine's cores oversubscribe it,
# where MPICH's own waits never yield (shim/base/ucx_progress.cc). The two
# alternate run by run; prints a Markdown table of medians over the runs.
#   scripts/bench_windows.sh [--ranks "2 4 8"] [--runs N] [--cycles N] [--live N]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks="2 4 8"
runs=3
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cycles) args+=(--cycles "$2"); shift 2 ;;
    --live) args+=(--live "$2"); shift 2 ;;
    *) echo "bench_windows.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bazel build -c opt //bench:window_create //shim:librmashim.so >&2
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((i = 1; i <= runs; i++)); do
  for n in $ranks; do
    echo "bench_windows.sh: run $i of $runs, $n ranks" >&2
    timeout 600 mpirun.mpich -n "$n" "$bin/bench/window_create" --label "native/$n" \
      "${args[@]}" | grep '^WINDOWS|' >>"$out"
    timeout 600 mpirun.mpich -n "$n" env LD_PRELOAD="$bin/shim/librmashim.so" \
      "$bin/bench/window_create" --label "shim/$n" "${args[@]}" | grep '^WINDOWS|' >>"$out"
  done
done
cores=$(nproc)
/usr/bin/python3 - "$out" "$cores" <<'PY'
import collections, statistics, sys
values = collections.defaultdict(list)
for line in open(sys.argv[1]):
    _, label, case, value, _unit = line.strip().split("|")
    mode, ranks = label.split("/")
    values[(int(ranks), case, mode)].append(float(value))
names = {"allocate_cycle": "MPI_Win_allocate + fence epoch + free",
         "create_cycle": "MPI_Win_create (64 B, malloc) + fence epoch + free",
         "live_create_each": "MPI_Win_create of one of many live windows",
         "live_free_each": "MPI_Win_free of one of many live windows"}
print(f"One node, {sys.argv[2]} cores; us per window, median of the runs "
      "(each run: the median over ranks of their own means).\n")
print("| ranks | what | native MPICH | shim | shim / native |")
print("| ---: | --- | ---: | ---: | ---: |")
for ranks in sorted({k[0] for k in values}):
    for case, name in names.items():
        native = statistics.median(values[(ranks, case, "native")])
        shim = statistics.median(values[(ranks, case, "shim")])
        print(f"| {ranks} | {name} | {native:.1f} | {shim:.1f} | {shim / native:.3g} |")
PY
