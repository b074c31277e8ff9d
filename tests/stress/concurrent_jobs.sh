#!/usr/bin/env bash
# Runs several copies of one MPI program at once, as separate mpirun jobs,
# and fails if any copy fails. Jobs that busy-poll beside each other on a
# few cores deschedule each other's ranks at random points, which widens
# races between an origin and its targets that one job alone rarely hits.
#   concurrent_jobs.sh JOBS RANKS LAYOUT PRELOAD PROGRAM [ARGS...]
# RANKS, LAYOUT, PRELOAD as for tests/run_mpi.sh.
set -euo pipefail
jobs=$1
shift
run_mpi=$(dirname "$0")/../run_mpi.sh
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for ((j = 0; j < jobs; ++j)); do
  "$run_mpi" "$@" >"$logs/$j.log" 2>&1 &
  pids+=($!)
done
failed=0
for ((j = 0; j < jobs; ++j)); do
  if ! wait "${pids[$j]}"; then
    failed=$((failed + 1))
    echo "=== job $j of $jobs failed; its output:"
    cat "$logs/$j.log"
  fi
done
echo "concurrent_jobs: $jobs jobs, $failed failed"
[[ $failed -eq 0 ]]
