#!/usr/bin/env bash
# Contention at node sizes: bench/contention (every rank on the same targets
# at once; native MPICH, the shim and a CPU floor of each pattern in one
# run) at 2, 4, 8, ... ranks up to --max (default: this machine's
# processing units), then a table and a plot per pattern over the rank
# count (scripts/contention_table.py). Runs with more ranks than processing
# units are labelled oversubscribed (--max beyond them asks for that).
#
#   scripts/bench_contention.sh [--max N] [--ranks 2,4,16] [--quick]
#                               [--out DIR] [--no-build]
#
# Writes DIR/contention.csv (one row per pattern and rank count), the
# markdown table DIR/contention.md and DIR/contention.png. On a machine
# without Bazel (a bare node: ../shared/notes/bare-node-mpich.md) build
# here, copy bazel-bin/bench/contention and bazel-bin/shim/librmashim.so
# along and pass --no-build with BIN_DIR=... and SHIM=....
set -euo pipefail
cd "$(dirname "$0")/.."

max=$(nproc) ranks="" quick=() out="" build=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --max) max=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    --out) out=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    *) sed -n '2,17p' "$0" >&2; exit 2 ;;
  esac
done
out=${out:-results/contention-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
if [[ $build -eq 1 ]]; then
  scripts/install_deps.sh bench
  bazel build //bench:contention //shim:librmashim.so >&2
fi
bin=${BIN_DIR:-bazel-bin/bench}/contention
shim=$(realpath "${SHIM:-bazel-bin/shim/librmashim.so}")
if [[ -z "$ranks" ]]; then
  ranks=2
  for ((n = 4; n <= max; n *= 2)); do ranks+=",$n"; done
  (( max > 2 && (max & (max - 1)) != 0 )) && ranks+=",$max"
fi
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-600}
csv="$out/contention.csv"
: >"$csv"
for n in ${ranks//,/ }; do
  echo "contention: $n ranks" >&2
  if mpirun.mpich -n "$n" env LD_PRELOAD="$shim" "$bin" --csv "${quick[@]}" \
      >"$out/contention_$n.csv" 2>"$out/contention_$n.log"; then
    if [[ ! -s "$csv" ]]; then head -1 "$out/contention_$n.csv" >"$csv"; fi
    tail -n +2 "$out/contention_$n.csv" >>"$csv"
  else
    echo "contention: $n ranks FAILED (see $out/contention_$n.log)" >&2
  fi
done
python3 scripts/contention_table.py "$csv" "$out"
cat "$out/contention.md"
