#!/usr/bin/env bash
# DASH's own micro-benchmarks on libdart and on DART-MPI (docs/dart.md,
# section "DASH's test suite on libdart", the micro-benchmarks paragraph):
#
#   scripts/dash_bench.sh DASH_SRC
#
# Needs the builds scripts/dash_suite.sh made in $WORK (default
# /tmp/dash_suite); builds bench.15.copy (dash::copy of a tiled matrix to
# unit 0: one-sided gets), bench.03.gups (random remote updates),
# bench.13.allreduce and bench.14.accumulate (dart_allreduce with predefined
# and user operations) as DASH's own example targets of both builds, with
# DASH's flags for each, then runs them ROUNDS times per layout,
# the two variants interleaved, and prints the best time (gups: the best
# rate) of every measurement per variant.
#
# Environment: WORK, UNITS (2), LAYOUTS ("node oddeven"), ROUNDS (7), JOBS (2),
# BENCHES (the four above; a subset skips the others).
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/dash/test/main.cc" ]; then
  echo "usage: $0 DASH_SRC" >&2
  exit 2
fi
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/dash_suite}
UNITS=${UNITS:-2}
LAYOUTS=${LAYOUTS:-node oddeven}
ROUNDS=${ROUNDS:-7}
JOBS=${JOBS:-2}
BENCHES=${BENCHES:-bench.15.copy bench.03.gups bench.13.allreduce bench.14.accumulate}

# DASH's own example targets: <name>.libdart in the libdart build (DASH's
# CMake on the installed libdart), <name>.mpi in DART-MPI's.
libdart_targets=() mpi_targets=()
for b in $BENCHES; do
  libdart_targets+=("$b.libdart")
  mpi_targets+=("$b.mpi")
done
nice -n 15 make -C "$WORK/libdart/build" -j "$JOBS" "${libdart_targets[@]}" \
  > "$WORK/bench-build.log" 2>&1
nice -n 15 make -C "$WORK/dartmpi/build" -j "$JOBS" "${mpi_targets[@]}" \
  >> "$WORK/bench-build.log" 2>&1

exe_of() {  # exe_of VARIANT BENCH
  case $1 in
    libdart) echo "$WORK/libdart/build/dash/$2.libdart" ;;
    dartmpi) echo "$WORK/dartmpi/build/dash/$2.mpi" ;;
  esac
}

args_of() {
  case $1 in
    bench.03.gups) echo "-sb 1048576 -rb 1" ;;
    *) echo "" ;;
  esac
}

out="$WORK/bench-results.txt"
: > "$out"
for layout in $LAYOUTS; do
  env=()
  [ "$layout" = oddeven ] && env=(env MPIR_CVAR_ODD_EVEN_CLIQUES=1)
  for ((r = 0; r < ROUNDS; r++)); do
    for b in $BENCHES; do
      for v in libdart dartmpi; do
        # shellcheck disable=SC2046
        timeout 600 mpirun.mpich -n "$UNITS" "${env[@]}" \
          "$(exe_of "$v" "$b")" $(args_of "$b") 2>/dev/null |
          sed "s/^/$layout $v $b | /" >> "$out" || true
      done
    done
  done
done

python3 - "$out" <<'EOF'
import re, sys
best = {}
for line in open(sys.argv[1]):
    head, _, rest = line.partition(" | ")
    layout, variant, bench = head.split()
    f = [x.strip() for x in rest.split(",")]
    if bench == "bench.03.gups":
        if len(f) >= 10 and re.match(r"^\d+$", f[0]) and f[1].isdigit():
            key = (layout, bench, "gups (higher is better)")
            best.setdefault(key, {})
            best[key][variant] = max(best[key].get(variant, 0), float(f[9]))
        continue
    if len(f) >= 4 and re.match(r"^\d+$", f[0]):
        try:
            t = float(f[3])
        except ValueError:
            continue
        key = (layout, bench, f[2] + " [s]")
        best.setdefault(key, {})
        best[key][variant] = min(best[key].get(variant, 1e30), t)
print("| layout | benchmark | measurement | libdart | DART-MPI |")
print("|---|---|---|---:|---:|")
for (layout, bench, name), v in sorted(best.items()):
    print("| %s | %s | %s | %.3g | %.3g |" % (
        layout, bench, name, v.get("libdart", float("nan")),
        v.get("dartmpi", float("nan"))))
EOF
