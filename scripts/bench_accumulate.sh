#!/usr/bin/env bash
# Bulk accumulates (bench/rma_accumulate.cc) measured against the CPU floor,
# native MPICH and Open MPI's osc/sm, merged into one table:
#   - MPICH 4.0.2 with librmashim.so preloaded: native (opted-out window),
#     shim and floor columns, interleaved batch by batch in one process;
#   - MPICH with nothing preloaded (the key rows: --key);
#   - Open MPI 4.1 osc/sm: the same source built with mpicxx.openmpi outside
#     Bazel and run with `mpirun.openmpi --mca osc sm`, with its own floor
#     column from the same process. Open MPI's default op/avx component sums
#     8-bit integers with saturating adds (open-mpi/ompi#8045), which the
#     benchmark's verification catches; a second run with `--mca op ^avx`
#     gives verified numbers for the key rows.
# Runs alternate round by round (--rounds), each cell keeps its fastest
# round; ratios within one process (shim/floor, osc-sm/its floor) are the
# load-independent result, times across processes are compared as measured.
#
#   scripts/bench_accumulate.sh [--quick] [--rounds N] [--batches N]
#                               [--before LIBRMASHIM] [--out DIR]
#     --quick    a few timed rows (about a minute)
#     --before   also run the MPICH+shim step with another librmashim.so
#                (e.g. one built from an older commit) as a "shim before" column
#     --out DIR  results folder (default results/accumulate-<timestamp>)
# Writes raw CSV per step and round, machine.txt (load average before and
# after every step), table.txt and table.md (scripts/bench_accumulate_table.py).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0 rounds=1 batches="" before="" out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --rounds) rounds=$2; shift ;;
    --batches) batches=$2; shift ;;
    --before) before=$(realpath "$2"); shift ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--quick] [--rounds N] [--batches N] [--before LIB] [--out DIR]" >&2
       exit 2 ;;
  esac
  shift
done
out=${out:-results/accumulate-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-3600}
start=$SECONDS

scripts/install_deps.sh bench
echo "[build] bazel build //shim:librmashim.so //bench:rma_accumulate"
bazel build //shim:librmashim.so //bench:rma_accumulate >"$out/build.log" 2>&1 || {
  tail -20 "$out/build.log" >&2
  exit 1
}
# Copies: a rebuild in the workspace during the run must not change them.
cp bazel-bin/shim/librmashim.so bazel-bin/bench/rma_accumulate "$out/"
chmod u+w "$out/librmashim.so" "$out/rma_accumulate"
shim=$(realpath "$out/librmashim.so")
bench=$(realpath "$out/rma_accumulate")
echo "[build] mpicxx.openmpi (outside Bazel)"
ompi_bench=$(realpath "$out")/rma_accumulate.openmpi
# The same flags as the Bazel build of the benchmark (-O3: vectorized floor).
mpicxx.openmpi -DOMPI_SKIP_MPICXX -std=c++20 -O3 -g -I. bench/rma_accumulate.cc \
  -ldl -o "$ompi_bench"

args=(--csv)
[[ $quick -eq 1 ]] && args+=(--quick)
[[ -n $batches ]] && args+=(--batches "$batches")
key_args=(--csv --key)
[[ -n $batches ]] && key_args+=(--batches "$batches")

# Open MPI refuses to run as root without these; no binding, as MPICH's
# Hydra does not bind either.
ompi=(mpirun.openmpi --mca osc sm --bind-to none -n 2)
[[ $(id -u) -eq 0 ]] && ompi+=(--allow-run-as-root)

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  echo "cores: $(nproc)"
  echo "mpich: $(mpichversion 2>/dev/null | sed -n 's/^MPICH Version: *//p')"
  echo "openmpi: $(ompi_info --version 2>/dev/null | head -1)"
  echo "rounds: $rounds"
} >"$out/machine.txt"

failed=()
step() {  # name command...: runs one step, CSV to name.csv, stderr to name.log
  local name=$1
  shift
  echo "load $(cut -d' ' -f1-3 /proc/loadavg) before $name" >>"$out/machine.txt"
  printf '[%4d s] %s\n' $((SECONDS - start)) "$name"
  if ! "$@" >"$out/$name.csv" 2>"$out/$name.log"; then
    failed+=("$name")
    echo "         exit status != 0 (see $out/$name.log)" >&2
  fi
  grep -h "verification" "$out/$name.log" | sed 's/^/         /' || true
}

for ((r = 1; r <= rounds; ++r)); do
  step "mpich_shim.$r" mpirun.mpich -n 2 env LD_PRELOAD="$shim" "$bench" "${args[@]}"
  if [[ -n $before ]]; then
    step "mpich_shim_before.$r" mpirun.mpich -n 2 env LD_PRELOAD="$before" "$bench" "${args[@]}"
  fi
  step "mpich_plain.$r" mpirun.mpich -n 2 "$bench" "${key_args[@]}"
  step "ompi_sm.$r" "${ompi[@]}" "$ompi_bench" "${args[@]}"
  step "ompi_sm_noavx.$r" "${ompi[@]}" --mca op ^avx "$ompi_bench" "${key_args[@]}"
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end" >>"$out/machine.txt"

python3 scripts/bench_accumulate_table.py "$out"
echo "results: $out (table.txt, table.md, CSV per step); $((SECONDS - start)) s"
if [[ ${#failed[@]} -gt 0 ]]; then
  # Expected: ompi_sm.* (op/avx's saturating 8-bit sums fail verification).
  echo "steps with failed verification or errors: ${failed[*]}" >&2
fi
