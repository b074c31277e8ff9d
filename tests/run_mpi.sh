#!/usr/bin/env bash
# Runs one MPI test program under mpirun.
#   run_mpi.sh RANKS LAYOUT PRELOAD PROGRAM [ARGS...]
# LAYOUT: node (all ranks on one node), oddeven (MPIR_CVAR_ODD_EVEN_CLIQUES=1:
# even and odd ranks on two simulated nodes), cliques3 (MPIR_CVAR_NUM_CLIQUES=3:
# rank % 3 picks one of three simulated nodes; MPICH 4.0.2 deals ranks out
# round-robin, so NUM_CLIQUES=2 would be the oddeven layout again).
# PRELOAD: a path to librmashim.so, or "none" for native MPICH.
set -euo pipefail
ranks=$1 layout=$2 preload=$3
shift 3
program=$1
shift

env_args=()
case "$layout" in
  node) ;;
  oddeven) env_args+=(MPIR_CVAR_ODD_EVEN_CLIQUES=1) ;;
  cliques3) env_args+=(MPIR_CVAR_NUM_CLIQUES=3) ;;
  *) echo "unknown layout $layout" >&2; exit 2 ;;
esac
if [[ "$preload" != none ]]; then
  shim=$(realpath "$preload")
  # A sanitizer build of the shim (bazel --config=asan/ubsan/tsan) links the
  # sanitizer runtime; preloaded, the shim would come before it, and ASan
  # refuses to run unless its runtime is first in the initial library list
  # (and a program that is not instrumented would not load the runtime at
  # all). So the runtimes the shim itself links go first in LD_PRELOAD.
  # ASan's runtime must be the very first; UBSan's and TSan's follow it.
  first=$(ldd "$shim" | awk '$3 ~ /^\// && $1 ~ /^libasan\.so/ { a = a $3 ":" }
    $3 ~ /^\// && $1 ~ /^lib(ubsan|tsan)\.so/ { o = o $3 ":" }
    END { printf "%s%s", a, o }')
  env_args+=("LD_PRELOAD=$first$shim")
fi
# RMASHIM_TEST_ULIMIT_N: the descriptor limit of every process of the job
# (ulimit -n), for tests of what grows per peer.
if [[ -n "${RMASHIM_TEST_ULIMIT_N:-}" ]]; then
  ulimit -n "$RMASHIM_TEST_ULIMIT_N"
fi
# A hang fails the test instead of eating the CI budget.
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-120}
# RMASHIM_MPIRUN_FLAGS: extra mpirun options from the test's env (words),
# e.g. -disable-auto-cleanup for tests/diff:lost_update.
read -r -a mpirun_flags <<<"${RMASHIM_MPIRUN_FLAGS:-}"
exec mpirun.mpich "${mpirun_flags[@]}" -n "$ranks" env "${env_args[@]}" \
  "$(realpath "$program")" "$@"
