#!/usr/bin/env bash
# Differential test: runs a program natively and under the shim with the same
# ranks and layout; their standard outputs must be byte-identical, and the
# shim run must show that the shim engaged (tests/profile/check_engaged.py on
# its RMASHIM_PROFILE JSON and stderr: windows managed, operations served
# directly, only the fallbacks and "rmashim:" warnings the test declares).
#   diff_native_vs_shim.sh [--shim-only] [CHECK_OPTION...] -- RANKS LAYOUT SHIM PROGRAM [ARGS...]
# CHECK_OPTIONs go to check_engaged.py (--managed, --min-served, ...).
# --shim-only: where native MPICH cannot run the program (it hangs or
# aborts), the shim run alone, judged by the program's own checks against
# its serial reference (its exit status) and by check_engaged.py.
set -euo pipefail
check_args=() shim_only=0
while [[ $# -gt 0 && $1 != -- ]]; do
  if [[ $1 == --shim-only ]]; then
    shim_only=1
  else
    check_args+=("$1")
  fi
  shift
done
if [[ $# -lt 5 ]]; then
  sed -n '2,8p' "$0" >&2
  exit 64
fi
shift  # --
ranks=$1 layout=$2 shim=$3
shift 3
# The runner and the checker sit beside this script in the source tree,
# wherever the test that runs it lives.
here=$(dirname "$(readlink -f "$0")")
out=${TEST_TMPDIR:-$(mktemp -d)}
rm -f "$out/profile.json"
# The native run is only the reference. MPICH 4.0.2 itself now and then
# hangs in mixed lock epochs across simulated nodes (split_accumulate on
# cliques3: every rank's watchdog fired): retry it once when its watchdog
# fired, saying so; a second hang fails. The shim run is never retried.
run_native() {
  native_rc=0
  "$here/run_mpi.sh" "$ranks" "$layout" none "$@" >"$out/native.txt" \
    2>"$out/native.err" || native_rc=$?
  cat "$out/native.err" >&2
}
[[ $shim_only -eq 1 ]] || run_native "$@"
if [[ $shim_only -eq 0 && $native_rc -ne 0 ]] &&
    grep "watchdog: stuck" "$out/native.err" >/dev/null; then
  echo "native MPICH run hung (watchdog); running it once more" >&2
  run_native "$@"
fi
if [[ $shim_only -eq 0 && $native_rc -ne 0 ]]; then
  echo "native run failed (exit $native_rc)" >&2
  exit 1
fi
shim_rc=0
RMASHIM_PROFILE="$out/profile.json" \
  "$here/run_mpi.sh" "$ranks" "$layout" "$shim" "$@" >"$out/shim.txt" \
  2>"$out/shim.err" || shim_rc=$?
cat "$out/shim.err" >&2  # the shim run's stderr, profile report included
if [[ $shim_rc -ne 0 ]]; then
  echo "shim run failed (exit $shim_rc)" >&2
  exit 1
fi
if [[ $shim_only -eq 1 ]]; then
  [[ -s "$out/shim.txt" ]] || { echo "shim run printed nothing" >&2; exit 1; }
  echo "shim only: $(wc -l <"$out/shim.txt") lines, the program's checks passed"
else
  if ! [[ -s "$out/native.txt" ]]; then
    echo "native run printed nothing" >&2
    exit 1
  fi
  if ! diff -u "$out/native.txt" "$out/shim.txt"; then
    echo "shim output differs from native MPICH" >&2
    exit 1
  fi
  echo "identical: $(wc -l <"$out/native.txt") lines"
fi
python3 "$here/profile/check_engaged.py" --profile "$out/profile.json" \
  --stderr "$out/shim.err" --ranks "$ranks" --layout "$layout" \
  "${check_args[@]}"
