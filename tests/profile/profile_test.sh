#!/usr/bin/env bash
# Runs a program under the shim with RMASHIM_PROFILE and checks the JSON
# (check_profile.py) and the text report (printed, at most 100 columns).
#   profile_test.sh RANKS LAYOUT SHIM CHECKER CHECK_AS PROGRAM [ARGS...]
# CHECK_AS: the layout (exact counts of profile_counts.c) or "osu".
set -euo pipefail
ranks=$1 layout=$2 shim=$3 checker=$4 check_as=$5
shift 5
here=$(dirname "$0")
out=${TEST_TMPDIR:-$(mktemp -d)}
RMASHIM_PROFILE="$out/profile.json" \
  "$here/../run_mpi.sh" "$ranks" "$layout" "$shim" "$@" >"$out/stdout.txt" 2>"$out/stderr.txt"
if ! grep -Eq "== rmashim profile: [0-9]+ windows, $ranks ranks" "$out/stderr.txt"; then
  cat "$out/stderr.txt"
  echo "text report missing" >&2
  exit 1
fi
wide=$(sed -n '/== rmashim profile:/,$p' "$out/stderr.txt" | awk 'length > 100')
if [[ -n "$wide" ]]; then
  echo "report lines wider than 100 columns:" >&2
  echo "$wide" >&2
  exit 1
fi
python3 "$checker" "$out/profile.json" "$out/stderr.txt" "$ranks" "$check_as"
