#!/usr/bin/env bash
# valgrind memcheck on a small two-rank RMA program under librmashim.so:
# every rank runs under valgrind (leak check on; definite leaks count as
# errors), with suppressions limited to MPICH/UCX/hwloc internals. Passes
# when the program's own checks pass, the shim manages the window, and
# valgrind reports 0 errors on every rank.
#   valgrind_test.sh LAYOUT RUNNER SHIM PROGRAM SUPPRESSIONS
set -euo pipefail
layout=$1 runner=$2 shim=$3 program=$4 supp=$5
out=${TEST_TMPDIR:-$(mktemp -d)}
valgrind=$(command -v valgrind) || {
  echo "valgrind not installed (scripts/install_deps.sh installs it)" >&2
  exit 1
}
# valgrind is several times slower than the native run, MPICH's startup
# under it most of all.
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-240}
rc=0
"$runner" 2 "$layout" "$shim" "$valgrind" \
  --tool=memcheck --error-exitcode=42 \
  --leak-check=full --errors-for-leak-kinds=definite \
  --show-leak-kinds=definite --track-origins=yes --num-callers=30 \
  --suppressions="$(realpath "$supp")" --gen-suppressions=all \
  --log-file="$out/valgrind.%p.log" \
  "$(realpath "$program")" >"$out/stdout.txt" || rc=$?

fail() {
  echo "FAIL: $*" >&2
  echo "--- program output:" >&2
  cat "$out/stdout.txt" >&2
  for log in "$out"/valgrind.*.log; do
    echo "--- $log:" >&2
    cat "$log" >&2
  done
  exit 1
}
[[ $rc -eq 0 ]] || fail "mpirun.mpich exited with $rc (42: valgrind found errors)"
expected='managed=1
put/get ok
accumulate ok
fetch_and_op/compare_and_swap ok
fence ok'
[[ "$(cat "$out/stdout.txt")" == "$expected" ]] || fail "unexpected program output"
logs=("$out"/valgrind.*.log)
[[ ${#logs[@]} -eq 2 ]] || fail "expected 2 valgrind logs, found ${#logs[@]}"
for log in "${logs[@]}"; do
  grep -q "ERROR SUMMARY: 0 errors from 0 contexts" "$log" ||
    fail "valgrind reported errors in $log"
done
echo "valgrind memcheck: 0 errors on 2 ranks ($layout)"
