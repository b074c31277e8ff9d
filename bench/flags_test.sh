#!/usr/bin/env bash
# Keeps every benchmark's command line strict: a misspelt option must stop
# the run before anything is measured (bench_util.h's ParseFlags), not yield
# a table measured with the defaults. Each PROGRAM runs on 2 ranks, natively,
# with an option it does not know; it must exit non-zero, name the option,
# and print no result row.
#   flags_test.sh RUN_MPI PROGRAM...
set -euo pipefail
run_mpi=$1
shift
out=${TEST_TMPDIR:-$(mktemp -d)}
failed=0
for program in "$@"; do
  name=$(basename "$program")
  status=0
  MPIEXEC_TIMEOUT=60 "$run_mpi" 2 node none "$program" --no-such-option \
    >"$out/$name.stdout" 2>"$out/$name.stderr" || status=$?
  if [[ $status -eq 0 ]]; then
    echo "FAIL: $name accepted --no-such-option" >&2
    failed=1
  elif ! grep -q "unknown argument --no-such-option" "$out/$name.stderr"; then
    echo "FAIL: $name exited with $status without naming the option" >&2
    cat "$out/$name.stderr" >&2
    failed=1
  elif [[ -s "$out/$name.stdout" ]]; then
    echo "FAIL: $name printed results before refusing the option" >&2
    cat "$out/$name.stdout" >&2
    failed=1
  else
    echo "PASS: $name refuses --no-such-option"
  fi
done
exit $failed
