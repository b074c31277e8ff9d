#!/usr/bin/env bash
# The agent on a window spanning nodes (shim/agent/agent.h), native MPICH against
# the shim with its agent (RMASHIM_AGENT=1) and without, on MPICH's simulated odd-even split
# (4 ranks: rank 2 shares rank 0's node, rank 1 does not): latency of the
# accumulate family and of lock+accumulate+unlock to each, with the target in
# MPI and computing without MPI, and the CPU time per second while every
# rank sleeps (bench/agent.cc). Prints a Markdown table; one run each.
#   scripts/bench_agent.sh [--ranks N] [--iters N] [--spin-us US]
# --spin-us: RMASHIM_AGENT_SPIN_US for the agent's run (shim/agent/agent.h).
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=4
spin=0
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --iters) args+=(--iters "$2"); shift 2 ;;
    --spin-us) spin=$2; shift 2 ;;
    *) echo "bench_agent.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bazel build -c opt //bench:agent //shim:librmashim.so >&2
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
run() {  # label, then environment
  local label=$1; shift
  env MPIR_CVAR_ODD_EVEN_CLIQUES=1 "$@" \
    timeout 300 mpirun.mpich -n "$ranks" "$bin/bench/agent" --label "$label" "${args[@]}" |
    grep '^AGENT|'
}
out=$(
  run native
  run shim LD_PRELOAD="$bin/shim/librmashim.so" RMASHIM_AGENT=1 RMASHIM_AGENT_SPIN_US="$spin"
  run shim_no_agent LD_PRELOAD="$bin/shim/librmashim.so" RMASHIM_AGENT=0
)
/usr/bin/python3 - "$out" <<'PY'
import sys
rows, labels = {}, ["native", "shim", "shim_no_agent"]
for line in sys.argv[1].splitlines():
    _, label, what, target, state, value, unit = line.split("|")
    rows.setdefault((what, target, state, unit), {})[label] = float(value)
print("| operation | target | target's state | unit | native MPICH | shim (agent) | shim, RMASHIM_AGENT=0 | native / shim |")
print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: |")
for (what, target, state, unit), v in rows.items():
    cells = ["%.2f" % v[l] if l in v else "-" for l in labels]
    ratio = "%.1fx" % (v["native"] / v["shim"]) if v.get("shim") and "native" in v else "-"
    print("| %s | %s | %s | %s | %s | %s |" % (what, target, state, unit, " | ".join(cells), ratio))
PY
