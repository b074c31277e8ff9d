#!/usr/bin/env bash
# Runs profile_counts under the shim with RMASHIM_PROFILE and checks the JSON
# and that the text report was printed.
#   profile_test.sh RANKS LAYOUT SHIM PROGRAM CHECKER
set -euo pipefail
ranks=$1 layout=$2 shim=$3 program=$4 checker=$5
here=$(dirname "$0")
out=${TEST_TMPDIR:-$(mktemp -d)}
RMASHIM_PROFILE="$out/profile.json" \
  "$here/../run_mpi.sh" "$ranks" "$layout" "$shim" "$program" 2>"$out/stderr.txt"
grep -q "== rmashim profile: 2 windows, $ranks ranks" "$out/stderr.txt" || {
  cat "$out/stderr.txt"
  echo "text report missing" >&2
  exit 1
}
python3 "$checker" "$out/profile.json" "$ranks" "$layout"
