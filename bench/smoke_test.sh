#!/usr/bin/env bash
# Keeps a benchmark runnable: runs it with --quick on 2 ranks under the shim
# and checks that its self-verification passed. Timings are not checked.
#   smoke_test.sh RUN_MPI SHIM PROGRAM
set -euo pipefail
run_mpi=$1 shim=$2 program=$3
name=$(basename "$program")
out=${TEST_TMPDIR:-$(mktemp -d)}
status=0
"$run_mpi" 2 node "$shim" "$program" --quick >"$out/stdout" 2>"$out/stderr" || status=$?
cat "$out/stdout"
cat "$out/stderr" >&2
if [[ $status -ne 0 ]]; then
  echo "FAIL: $name exited with status $status" >&2
  exit 1
fi
if ! grep -q "^$name: verification passed" "$out/stderr"; then
  echo "FAIL: $name did not report 'verification passed'" >&2
  exit 1
fi
[[ -s "$out/stdout" ]] || { echo "FAIL: $name printed no results" >&2; exit 1; }
echo "PASS: $name"
