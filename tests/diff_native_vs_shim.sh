#!/usr/bin/env bash
# Differential test: runs a program natively and under the shim with the same
# ranks and layout; their standard outputs must be byte-identical.
#   diff_native_vs_shim.sh RANKS LAYOUT SHIM PROGRAM [ARGS...]
set -euo pipefail
ranks=$1 layout=$2 shim=$3
shift 3
# The runner sits beside this script in the source tree, wherever the test
# that runs it lives.
here=$(dirname "$(readlink -f "$0")")
out=${TEST_TMPDIR:-$(mktemp -d)}
"$here/run_mpi.sh" "$ranks" "$layout" none "$@" >"$out/native.txt"
"$here/run_mpi.sh" "$ranks" "$layout" "$shim" "$@" >"$out/shim.txt"
if ! [[ -s "$out/native.txt" ]]; then
  echo "native run printed nothing" >&2
  exit 1
fi
if ! diff -u "$out/native.txt" "$out/shim.txt"; then
  echo "shim output differs from native MPICH" >&2
  exit 1
fi
echo "identical: $(wc -l <"$out/native.txt") lines"
