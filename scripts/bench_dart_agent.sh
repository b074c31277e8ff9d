#!/usr/bin/env bash
# DART's atomics and locks on a team spanning nodes (bench/dart_agent.cc),
# libdart with the core's agent (RMASHIM_AGENT=1) against libdart without
# it (MPI's atomics), on MPICH's simulated odd-even split (4 units: unit 2
# shares unit 0's node, unit 1 does not), with the target in MPI and
# computing without MPI. Prints a Markdown table; one run each.
#   scripts/bench_dart_agent.sh [--ranks N] [--iters N]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=4
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --iters) args+=(--iters "$2"); shift 2 ;;
    *) echo "bench_dart_agent.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bazel build -c opt --symlink_prefix=/ //bench:dart_agent >&2
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
run() {  # label, then environment
  local label=$1; shift
  env MPIR_CVAR_ODD_EVEN_CLIQUES=1 "$@" \
    timeout 600 mpirun.mpich -n "$ranks" "$bin/bench/dart_agent" --label "$label" "${args[@]}" |
    grep '^DARTAGENT|'
}
out=$(
  run agent RMASHIM_AGENT=1
  run mpi RMASHIM_AGENT=0
)
/usr/bin/python3 - "$out" <<'PY'
import sys
rows, labels = {}, ["agent", "mpi"]
for line in sys.argv[1].splitlines():
    _, label, what, target, state, value, unit = line.split("|")
    rows.setdefault((what, target, state, unit), {})[label] = value
print("| operation | target | target's state | unit | libdart, agent | libdart, MPI atomics | MPI / agent |")
print("| --- | --- | --- | --- | ---: | ---: | ---: |")
for (what, target, state, unit), v in rows.items():
    cells = [v.get(l, "-") for l in labels]
    try:
        ratio = "%.1fx" % (float(v["mpi"]) / float(v["agent"])) if unit == "us" else "-"
    except (KeyError, ZeroDivisionError, ValueError):
        ratio = "-"
    print("| %s | %s | %s | %s | %s | %s |" % (what, target, state, unit, " | ".join(cells), ratio))
PY
