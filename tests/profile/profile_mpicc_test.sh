#!/usr/bin/env bash
# The profile of an unmodified program built by the user's own toolchain:
# profile_counts.c compiled with the system's mpicc (not Bazel), run under
# the preloaded shim, checked like the Bazel-built one.
#   profile_mpicc_test.sh RANKS LAYOUT SHIM CHECKER SOURCE
set -euo pipefail
ranks=$1 layout=$2 shim=$3 checker=$4 source=$5
out=${TEST_TMPDIR:-$(mktemp -d)}
mpicc.mpich -O2 -o "$out/profile_counts" "$source"
exec "$(dirname "$0")/profile_test.sh" "$ranks" "$layout" "$shim" "$checker" \
  "$layout" "$out/profile_counts"
