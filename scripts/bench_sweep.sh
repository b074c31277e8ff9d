#!/usr/bin/env bash
# The whole benchmark sweep in one command: builds, runs every benchmark
# (native MPICH and the shim side by side in each run) with a progress line
# per step, writes CSV under results/<timestamp>/, then renders PNG plots and
# a markdown summary there (scripts/plot_results.py).
#
#   scripts/bench_sweep.sh [--quick] [--publish] [--out DIR]
#     --quick    fewer sizes, iterations and rank counts (< 2 minutes)
#     --publish  also copy the plots and summary to bench/results/ and put
#                the summary into docs/benchmarks.md (between the bench-sweep markers)
#     --out DIR  results folder (default results/<timestamp>)
#
# Ranks beyond the machine's cores are oversubscribed (MPICH allows it);
# every step has a time limit, and a failed step is reported, not fatal.
#
# Baselines: bench/small_ops runs three times: with librmashim.so preloaded
# (floor, shim and opted-out native interleaved in one process), with
# nothing preloaded (truly native MPICH: no wrappers at all; the summary
# compares it with the opted-out column), and built with mpicxx.openmpi and
# run on Open MPI's osc/sm (the peer column). bench/osu_rma also runs on
# osc/sm (osu_rma_osc_sm.csv: the OSU tables' and plots' osc/sm column).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0 publish=0 out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --publish) publish=1 ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--quick] [--publish] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
out=${out:-results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"

start=$SECONDS
quick_arg=()
if [[ $quick -eq 1 ]]; then
  quick_arg=(--quick)
  gups_ranks=(1 2 4) stencil_ranks=(2 4) halo_ranks=(2 4) alloc_ranks=(4)
  export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-60}
else
  gups_ranks=(1 2 3 4) stencil_ranks=(1 2 4) halo_ranks=(2 4) alloc_ranks=(4 8)
  export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-180}
fi

# Steps: "name ranks program [args]" (CSV goes to name.csv, stderr to
# name.log). rma_accumulate times its key rows only here (the full table:
# scripts/bench_accumulate.sh).
# Steps whose name ends in _nopreload run with nothing preloaded.
steps=("small_ops 2 small_ops" "small_ops_nopreload 2 small_ops"
       "osu_rma 2 osu_rma" "rma_accumulate 2 rma_accumulate --key")
# Window creation at more ranks than cores (oversubscribed: MPICH's own
# collectives dominate; reported apart from the headline rows).
for n in "${alloc_ranks[@]}"; do
  steps+=("small_ops_alloc_${n} $n small_ops --alloc-only")
done
for n in "${gups_ranks[@]}"; do steps+=("gups_${n} $n gups"); done
for n in "${stencil_ranks[@]}"; do steps+=("stencil_${n} $n stencil"); done
for n in "${halo_ranks[@]}"; do steps+=("halo_${n} $n halo"); done
steps+=("overlap 2 overlap" "numa 2 numa")
ompi_programs=(small_ops osu_rma)  # built with mpicxx.openmpi, run on osc/sm
total=$((${#steps[@]} + ${#ompi_programs[@]} + 2))  # + build + Open MPI steps + plots

progress() {  # [step/total] what (elapsed)
  printf '[%d/%d] %-34s elapsed %4d s\n' "$1" "$total" "$2" $((SECONDS - start))
}

progress 1 "build (bazel)"
t0=$SECONDS
scripts/install_deps.sh bench
bazel build //shim:librmashim.so //bench:all >"$out/build.log" 2>&1 || {
  tail -20 "$out/build.log" >&2
  exit 1
}
shim=$(realpath bazel-bin/shim/librmashim.so)
# The Bazel server's idle tasks (a garbage collection right after a build)
# would share the 2 cores with the first benchmarks: stop it, nothing
# below needs it.
bazel shutdown >/dev/null 2>&1 || true
echo "      done in $((SECONDS - t0)) s"

# What the numbers were measured on.
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "mode: $([[ $quick -eq 1 ]] && echo quick || echo default)"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  echo "cores: $(nproc)"
  echo "numa_domains: $(lscpu | sed -n 's/^NUMA node(s): *//p')"
  echo "mpich: $(mpichversion 2>/dev/null | sed -n 's/^MPICH Version: *//p') $(mpichversion 2>/dev/null | sed -n 's/^MPICH Device: *//p')"
  echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "load_before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"

failed=()
step=1
# One step's outcome (exit status `rc`): its verification lines, or FAILED
# (and it joins `failed`); then how long it took since t0.
report() {  # NAME RC
  if [[ $2 -eq 0 ]]; then
    grep -h "verification" "$out/$1.log" | sed 's/^/      /' || true
  else
    failed+=("$1")
    echo "      FAILED (see $out/$1.log)" >&2
  fi
  echo "      done in $((SECONDS - t0)) s"
}
for s in "${steps[@]}"; do
  read -r name ranks program extra <<<"$s"
  read -r -a extra <<<"${extra:-}"
  step=$((step + 1))
  progress "$step" "$program on $ranks rank(s)"
  t0=$SECONDS
  preload=$shim
  [[ $name == *_nopreload ]] && preload=""
  rc=0
  mpirun.mpich -n "$ranks" env LD_PRELOAD="$preload" "bazel-bin/bench/$program" --csv \
    "${quick_arg[@]}" "${extra[@]}" >"$out/$name.csv" 2>"$out/$name.log" || rc=$?
  report "$name" "$rc"
done
# Open MPI osc/sm as a peer: small_ops and osu_rma built with mpicxx.openmpi
# outside Bazel (their "shim" and "native" columns are then both Open MPI's
# window).
ompi=(mpirun.openmpi --mca osc sm --bind-to none -n 2)
[[ $(id -u) -eq 0 ]] && ompi+=(--allow-run-as-root)
for program in "${ompi_programs[@]}"; do
  name=${program}_osc_sm
  step=$((step + 1))
  progress "$step" "$program on Open MPI osc/sm"
  t0=$SECONDS
  rc=0
  { command -v mpicxx.openmpi >/dev/null &&
    mpicxx.openmpi -DOMPI_SKIP_MPICXX -std=c++20 -O3 -I. "bench/$program.cc" shim/base/copy.cc -ldl \
      -o "$out/$program.openmpi" >"$out/$name.log" 2>&1 &&
    "${ompi[@]}" "$out/$program.openmpi" --csv "${quick_arg[@]}" \
      >"$out/$name.csv" 2>>"$out/$name.log"; } || rc=$?
  report "$name" "$rc"
done
echo "openmpi: $(ompi_info --version 2>/dev/null | head -1)" >>"$out/machine.txt"
echo "load_after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
echo "sweep_seconds: $((SECONDS - start))" >>"$out/machine.txt"

progress "$total" "plots and summary"
python=python3
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import matplotlib' 2>/dev/null; then python=$candidate; break; fi
done
plot_args=("$out")
[[ $publish -eq 1 ]] && plot_args+=(--publish bench/results --readme docs/benchmarks.md)
"$python" scripts/plot_results.py "${plot_args[@]}"

echo "results: $out (CSV, PNG, summary.md); total $((SECONDS - start)) s"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "failed steps: ${failed[*]}" >&2
  exit 1
fi
