#!/usr/bin/env bash
# rma_fuzz's model check can fail: seeds that the shim runs in agreement
# with the model (exit 0, "matches the model") must, with a deliberately
# wrong RMA layer preloaded instead, be reported as diverging (exit 5,
# "MODEL DIVERGENCE" lines naming what differed).
#   model_check_test.sh RUN_MPI RMA_FUZZ LIBBROKEN_RMA LIBRMASHIM
set -uo pipefail
run_mpi=$1 rma_fuzz=$2 broken=$3 shim=$4
seeds=(--seed 500 --count 10 --ops 60 --timeout 60)
out=$(mktemp -d "${TEST_TMPDIR:-/tmp}/model_check.XXXXXX")
trap 'rm -rf "$out"' EXIT
fail() { echo "FAILED: $*"; tail -n 20 "$out"/*.err; exit 1; }

"$run_mpi" 3 node "$shim" "$rma_fuzz" "${seeds[@]}" >"$out/shim.out" 2>"$out/shim.err"
rc=$?
[[ $rc -eq 0 ]] || fail "the shim's run exited $rc"
[[ $(grep -c 'matches the model' "$out/shim.err") -eq 10 ]] ||
  fail "the shim did not match the model on all 10 seeds"

"$run_mpi" 3 node "$broken" "$rma_fuzz" "${seeds[@]}" >"$out/broken.out" 2>"$out/broken.err"
rc=$?
[[ $rc -eq 5 ]] || fail "the wrong RMA layer's run exited $rc, not 5"
diverged=$(grep -c 'DIVERGES FROM THE MODEL' "$out/broken.err")
(( diverged >= 3 )) || fail "only $diverged of 10 seeds reported as diverging"
grep -q 'MODEL DIVERGENCE seed [0-9]*: .*first difference at byte' "$out/broken.err" ||
  fail "no divergence says what differed"
echo "model check: the shim matched the model on 10 seeds; the wrong layer" \
     "diverged on $diverged of them"
