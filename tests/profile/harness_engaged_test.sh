#!/usr/bin/env bash
# The harnesses fail when the shim does not engage: a program whose outputs
# are right (identical to native's for tests/diff_native_vs_shim.sh, the
# model's for tests/fuzz/fuzz_diff.sh) still fails them when the shim run
# served nothing (RMASHIM_DISABLE=1), when the preload did not bring the
# shim in (another library preloaded in its place: the program runs
# natively; tests/run_mpi.sh itself refuses a path that is no library), and
# when the declared expectation is not met. A correct declaration passes,
# so each failure is the check's doing.
#   harness_engaged_test.sh DIFF_HARNESS FUZZ_HARNESS RUNNER SHIM PUT_GET RMA_FUZZ
set -uo pipefail
diff_harness=$1 fuzz_harness=$2 runner=$3 shim=$4 put_get=$5 rma_fuzz=$6
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/harness_engaged.XXXXXX")
failures=0

# expect RC PATTERN NAME COMMAND...: COMMAND must exit RC and print a line
# matching PATTERN (grep -E).
expect() {
  local want_rc=$1 pattern=$2 name=$3
  shift 3
  local log="$tmp/$name.log" rc=0
  TEST_TMPDIR=$(mktemp -d "$tmp/$name.XXXXXX") "$@" >"$log" 2>&1 || rc=$?
  if [[ $rc -eq $want_rc ]] && grep -Eq "$pattern" "$log"; then
    echo "ok: $name (exit $rc): $(grep -Em1 "$pattern" "$log" | sed 's/^ *//' | cut -c1-160)"
  else
    echo "FAILED: $name: exit $rc (want $want_rc), /$pattern/ $(grep -Eq "$pattern" "$log" && echo found || echo missing); its output:"
    sed 's/^/    /' "$log" | tail -n 40
    failures=$((failures + 1))
  fi
}

# put_get on 2 ranks on one node: 270 operations served, all of them.
diff_run=("$diff_harness" --managed=allocate --min-served=270 -- 2 node)
expect 0 "^shim engaged: 3 of 3 windows managed" diff_engaged \
  "${diff_run[@]}" "$shim" "$put_get"
expect 1 "expected managed by the shim \(fell back: opted_out" diff_shim_disabled \
  env RMASHIM_DISABLE=1 "${diff_run[@]}" "$shim" "$put_get"
# In the shim's place, a library the program loads anyway: no shim at all.
not_shim=$(ldd "$put_get" | awk '$1 == "libc.so.6" { print $3 }')
expect 1 "no profile written" diff_preload_not_shim \
  "${diff_run[@]}" "$not_shim" "$put_get"
expect 1 "270 operations served directly .*expected at least 271" diff_wrong_expectation \
  "$diff_harness" --managed=allocate --min-served=271 -- 2 node "$shim" "$put_get"
expect 1 "no create window in the profile" diff_wrong_flavor \
  "$diff_harness" --managed=allocate,create --min-served=270 -- 2 node "$shim" "$put_get"

fuzz_run=("$fuzz_harness" --runner "$runner" --program "$rma_fuzz" --ranks 2
          --layout node --seeds 1003 --ops 60 --minimize 0 --tries 1)
expect 0 "^all 1 seeds match the model under the shim" fuzz_engaged "${fuzz_run[@]}" --shim "$shim"
expect 1 "FUZZ SHIM NOT ENGAGED" fuzz_shim_disabled \
  env RMASHIM_DISABLE=1 "${fuzz_run[@]}" --shim "$shim"
expect 1 "no profile written" fuzz_preload_not_shim "${fuzz_run[@]}" --shim "$not_shim"

if [[ $failures -ne 0 ]]; then
  echo "$failures of 8 cases failed"
  exit 1
fi
echo "all 8 cases as expected"
