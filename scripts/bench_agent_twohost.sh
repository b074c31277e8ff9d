#!/usr/bin/env bash
# The agent on a window spanning two hosts (shim/agent/agent.h) against native
# MPICH, on the two-host tier (tests/twohost/hosts.sh: separate network
# namespaces and /dev/shm, UCX over TCP between them): bench/agent.cc on
# 1+1 ranks, native and under the shim with RMASHIM_AGENT=1, in alternating
# runs, so that the machine's slow drifts fall on both alike. One run's
# figure is noisy on a shared VM (tens of percent), so each row gives the
# median over the runs with its quartiles, for both, and the ratio of the
# medians (shim / native: above 1, the shim is slower; scripts/agent_table.py).
#   scripts/bench_agent_twohost.sh [--runs N] [--iters N] [--lib PATH]
# --runs: pairs of runs (default 9); --iters: bench/agent's iterations
# (default 1000); --lib: the shim to preload (default: this tree's, built).
# Uses $RMASHIM_TWOHOST_DIR's hosts when set (hosts.sh up DIR), else brings
# them up for the run and down after it. Needs root, like the tier.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=9 iters=1000 lib=
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --lib) lib=$(realpath "$2"); shift 2 ;;
    *) echo "bench_agent_twohost.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bazel build -c opt //bench:agent //shim:librmashim.so //tests/twohost:all >&2
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
[[ -n "$lib" ]] || lib=$bin/shim/librmashim.so
# A private copy: a rebuild during the runs must not change what is measured.
work=$(mktemp -d)
cp "$lib" "$work/librmashim.so"
cp "$bin/bench/agent" "$work/agent"
if [[ -z "${RMASHIM_TWOHOST_DIR:-}" ]]; then
  export RMASHIM_TWOHOST_DIR=$work/hosts
  trap 'bash tests/twohost/hosts.sh down "$RMASHIM_TWOHOST_DIR" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  bash tests/twohost/hosts.sh up "$RMASHIM_TWOHOST_DIR" >&2
else
  trap 'rm -rf "$work"' EXIT
fi
run() {  # label, preload, then environment
  local label=$1 preload=$2; shift 2
  env "$@" bash tests/twohost/run_twohost.sh 2 twohost "$preload" \
    "$work/agent" --iters "$iters" --label "$label" 2>/dev/null |
    grep '^AGENT|' || echo "bench_agent_twohost.sh: a $label run failed" >&2
}
: >"$work/out"
for ((i = 1; i <= runs; i++)); do
  echo "bench_agent_twohost.sh: pair $i of $runs" >&2
  run native none >>"$work/out"
  run shim "$work/librmashim.so" RMASHIM_AGENT=1 >>"$work/out"
done
/usr/bin/python3 scripts/agent_table.py "$work/out" \
  "The two-host tier, 1+1 ranks ($runs pairs asked for)" native="native MPICH" \
  shim="shim (agent)"
