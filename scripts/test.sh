#!/usr/bin/env bash
# The whole test suite: unit tests, MPI suites on 2-4 ranks on one node and on
# simulated two-node layouts, and differential native-vs-shim runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# MPI tests oversubscribe the 2 cores; running them one at a time is faster
# than letting their busy-polling ranks compete.
bazel test //... --local_test_jobs=1 "$@"
