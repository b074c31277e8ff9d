#!/usr/bin/env bash
# The main demo: node-local put/get latency, native MPICH window vs rmashim
# window in the same run (one program, librmashim.so preloaded), with the CPU
# floor measured alongside.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh build
bazel build //shim:librmashim.so //bench:rma_latency >&2
shim=$(realpath bazel-bin/shim/librmashim.so)
echo "== mpirun.mpich -n 2 with LD_PRELOAD=librmashim.so: bench/rma_latency (rank 0 -> rank 1, same node)"
mpirun.mpich -n 2 env LD_PRELOAD="$shim" bazel-bin/bench/rma_latency "$@"
