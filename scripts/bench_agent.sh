#!/usr/bin/env bash
# The agent on a window spanning nodes (shim/agent/agent.h), native MPICH against
# the shim with its agent (RMASHIM_AGENT=1) and without, on MPICH's simulated odd-even split
# (4 ranks: rank 2 shares rank 0's node, rank 1 does not): latency of the
# accumulate family and of lock+accumulate+unlock to each, with the target in
# MPI and computing without MPI, and the CPU time per second while every
# rank sleeps (bench/agent.cc). The three alternate run by run; prints a
# Markdown table of each row's median and quartiles (scripts/agent_table.py).
#   scripts/bench_agent.sh [--ranks N] [--runs N] [--iters N] [--spin-us US]
# --runs: runs of each (default 3; 1 on a lent device, whose time is short);
# --spin-us: RMASHIM_AGENT_SPIN_US for the agent's run (shim/agent/agent.h).
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=4
spin=0
runs=3
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
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
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((i = 1; i <= runs; i++)); do
  echo "bench_agent.sh: run $i of $runs" >&2
  run native >>"$out"
  run shim LD_PRELOAD="$bin/shim/librmashim.so" RMASHIM_AGENT=1 RMASHIM_AGENT_SPIN_US="$spin" >>"$out"
  run shim_no_agent LD_PRELOAD="$bin/shim/librmashim.so" RMASHIM_AGENT=0 >>"$out"
done
/usr/bin/python3 scripts/agent_table.py "$out" \
  "The odd-even split, $ranks ranks" native="native MPICH" shim="shim (agent)" \
  shim_no_agent="shim, RMASHIM_AGENT=0"
