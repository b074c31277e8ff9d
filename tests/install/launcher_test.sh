#!/usr/bin/env bash
# The installed launcher on an outside MPI RMA program built with
# mpicc.mpich: `mpirun.mpich -n 2 PREFIX/bin/rmashim --profile=f.json ./prog`
# must give the right data and a profile showing the shim served the
# window; --disable must give the same data with everything passed to MPI;
# `rmashim report f.json --png OUT` must print the report with its advice
# and draw a PNG (check_launcher.py checks all three).
#   launcher_test.sh INSTALL PROGRAM.c CHECKER PROFILE_FILES...
# (PROFILE_FILES: //tests/profile:check_engaged, holding rmashim_profile.py)
set -euo pipefail
install=$1 source=$(realpath "$2") checker=$3
shift 3
module=
for f in "$@"; do [[ "$(basename "$f")" == rmashim_profile.py ]] && module=$f; done
[[ -n "$module" ]] || { echo "no rmashim_profile.py among $*" >&2; exit 2; }
tmp=${TEST_TMPDIR:-$(mktemp -d)}
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-120}
export PYTHONPATH=$(dirname "$(realpath "$module")")
checker=$(realpath "$checker")

"$install" "$tmp/stage" >/dev/null
mv "$tmp/stage" "$tmp/prefix"
rmashim=$tmp/prefix/bin/rmashim
"$rmashim" --help | grep '^OPTIONS' >/dev/null
"$rmashim" report --help | grep '^SYNOPSIS' >/dev/null
cd "$tmp"
export PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
mpicc.mpich -O2 -o outside_rma "$source" $(pkg-config --cflags rmashim) -ldl

run() {  # run NAME [LAUNCHER OPTIONS]: one 2-rank run, its output checked
  local name=$1
  shift
  local out
  out=$(mpirun.mpich -n 2 "$rmashim" "$@" --profile="$name.json" ./outside_rma \
    2>"$name.stderr")
  echo "$name: $out"
  [[ "$out" == "outside_rma: ranks=2 wrong=0 accumulated=15 managed=$expect" ]] ||
    { cat "$name.stderr" >&2; echo "$name: unexpected output" >&2; exit 1; }
}
expect=1 run shim
expect=0 run disabled --disable
"$rmashim" report shim.json --png shim.png >shim.report
cat shim.report
"$rmashim" report disabled.json >disabled.report
/usr/bin/python3 "$checker" 2 shim.json --report shim.report --png shim.png
/usr/bin/python3 "$checker" 2 disabled.json --disabled --report disabled.report

# A file that is not a profile is refused, not half-reported.
echo '{"schema": "other"}' >other.json
if "$rmashim" report other.json 2>other.err; then
  echo "report accepted a non-profile" >&2
  exit 1
fi
grep -q 'not an rmashim profile' other.err
echo "launcher_test: served, profiled, reported and drawn"
