#!/usr/bin/env bash
# The code's style, checked: every C and C++ source of the project (not
# third_party/) is as .clang-format formats it, and the library's sources
# (shim/, shim/dart/) pass .clang-tidy's checks, with clang-format and
# clang-tidy 14 from Debian 12 (scripts/install_deps.sh). scripts/test.sh
# runs it before the suite.
#   tools/check_style.sh           # check; exit 1 naming what differs
#   tools/check_style.sh --fix     # reformat in place (clang-tidy only reports)
#   tools/check_style.sh --format  # the format check alone (seconds)
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0 tidy=1
case "${1:-}" in
  --fix) fix=1 ;;
  --format) tidy=0 ;;
  "") ;;
  *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac
mapfile -t sources < <(find shim include tests bench tools \
  \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -type f | sort)
if [[ $fix -eq 1 ]]; then
  clang-format -i "${sources[@]}"
  exit 0
fi
status=0
unformatted=()
for f in "${sources[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [[ ${#unformatted[@]} -gt 0 ]]; then
  echo "check_style: not as .clang-format formats them (tools/check_style.sh --fix):"
  printf '  %s\n' "${unformatted[@]}"
  status=1
fi
[[ $tidy -eq 1 ]] || exit $status
# The flags that matter to the parse: C++20 (the shim's copts), the
# repository root and MPICH's headers.
mpi_include=$(pkg-config --cflags-only-I mpich 2>/dev/null || echo -I/usr/include/x86_64-linux-gnu/mpich)
mapfile -t library < <(find shim -name '*.cc' -type f | sort)
jobs=$(nproc)
# A file of this run's own: two runs at once must not share one.
findings=$(mktemp "${TMPDIR:-/tmp}/check_style.XXXXXX")
trap 'rm -f "$findings"' EXIT
if ! printf '%s\n' "${library[@]}" |
    xargs -P "$jobs" -I{} sh -c \
      'clang-tidy --quiet "$1" -- -std=c++20 -I. -Iinclude '"$mpi_include"' 2>/dev/null' _ {} \
      >"$findings" ||
    grep -q 'error:' "$findings"; then
  echo "check_style: .clang-tidy findings:"
  grep -E '(error|warning):' "$findings" | sort -u
  status=1
fi
exit $status
