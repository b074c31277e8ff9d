#!/usr/bin/env bash
# Real applications, native MPICH against the shim (docs/using-and-tuning.md "Real
# applications"): runs the real_app tier's tests (tests/real_app) one at a
# time, uncached, each running its program natively and then under the
# preloaded shim with the same ranks, layout and environment, and prints a
# Markdown table from their logs: wall time of each run, whether its answer
# was right, and the share of the run's RMA operations the shim served
# directly (self and node operations on managed windows minus fallbacks,
# over all operations, remote ones included).
#   scripts/real_apps.sh [bazel test options...]
# NATIVE_TIMEOUT (default 120 s) bounds each native run (native MPICH can
# hang here); the tests alone use 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."
native_timeout=${NATIVE_TIMEOUT:-120}
status=0
bazel test //tests/real_app:all --local_test_jobs=1 --cache_test_results=no \
  --test_env=REAL_APP_NATIVE_TIMEOUT="$native_timeout" "$@" >&2 || status=$?
logs=$(bazel info "$@" bazel-testlogs 2>/dev/null)

echo "| program | ranks, layout | native s | shim s | native answer | shim answer | served by the shim |"
echo "| --- | --- | ---: | ---: | --- | --- | ---: |"
for log in "$logs"/tests/real_app/*/test.log; do
  line=$(grep -a '^REAL_APP|' "$log" | tail -1) || {
    echo "| $(basename "$(dirname "$log")") | no result line (see $log) | | | | | |"
    continue
  }
  IFS='|' read -r _ name ranks layout native_s native shim_s shim served total <<<"$line"
  share="-"
  if [[ $total =~ ^[0-9]+$ && $total -gt 0 ]]; then
    share=$(awk -v s="$served" -v t="$total" 'BEGIN { printf "%.1f%% (%d of %d)", 100 * s / t, s, t }')
  elif [[ $total == 0 ]]; then
    share="no RMA"
  fi
  echo "| $name | $ranks, $layout | $native_s | $shim_s | $native | $shim | $share |"
done
exit $status
