#!/usr/bin/env bash
# The prefix install as a user meets it: `//:install PREFIX` run from the
# test's runfiles, the prefix moved elsewhere (nothing may point back into
# the stage or the source tree), then an outside DART program built with
# mpicc.mpich and `pkg-config --cflags --libs dart` (shared) and with the
# static_libs variable (libdart.a), each run on 2 ranks.
#   install_test.sh INSTALL DART_PROGRAM.c
set -euo pipefail
install=$1 source=$(realpath "$2")
tmp=${TEST_TMPDIR:-$(mktemp -d)}
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-120}

"$install" --help | grep '^SYNOPSIS' >/dev/null
"$install" "$tmp/stage" >"$tmp/install.log"
mv "$tmp/stage" "$tmp/moved"
prefix=$tmp/moved

for f in lib/librmashim.so lib/libdart.so lib/libdart.a bin/rmashim \
    include/rmashim/rmashim.h include/dart/dart.h include/dash/dart/if/dart.h \
    lib/pkgconfig/rmashim.pc lib/pkgconfig/dart.pc lib/rmashim/rmashim_report.py; do
  [[ -f "$prefix/$f" && ! -L "$prefix/$f" ]] || { echo "missing or a symlink: $f" >&2; exit 1; }
done
[[ -x "$prefix/bin/rmashim" ]]
for page in rmashim rmashim-report; do
  grep -q "^\.TH ${page^^} 1" "$prefix/share/man/man1/$page.1"
  grep -q '^SYNOPSIS' "$prefix/share/man/man1/$page.1"
done
# Nothing installed refers to where it was built or staged.
if grep -rIl -e "$tmp/stage" -e execroot -e bazel-out -e runfiles "$prefix"; then
  echo "installed files refer to the build or stage directory" >&2
  exit 1
fi
"$prefix/bin/rmashim" --version | grep '^rmashim [0-9]' >/dev/null

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
pkg-config --exists --print-errors dart rmashim
pkg-config --cflags dart | grep -- '-I/usr/include/x86_64-linux-gnu/mpich' >/dev/null  # Requires: mpich
cd "$tmp"
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
mpicc.mpich -O2 -o dart_shared "$source" $(pkg-config --cflags --libs dart) \
  $(pkg-config --variable=rpath dart)
# shellcheck disable=SC2046
mpicc.mpich -O2 -o dart_static "$source" $(pkg-config --cflags dart) \
  $(pkg-config --variable=static_libs dart)

# The shared build loads the moved prefix's libdart; the static one none.
resolved=$(ldd ./dart_shared | awk '$1 == "libdart.so" { print $3 }')
[[ "$(realpath "$resolved")" == "$(realpath "$prefix/lib/libdart.so")" ]] ||
  { echo "dart_shared loads libdart from '$resolved'" >&2; exit 1; }
if ldd ./dart_static | grep libdart >/dev/null; then
  echo "dart_static loads a shared libdart" >&2
  exit 1
fi

for program in dart_shared dart_static; do
  out=$(mpirun.mpich -n 2 "./$program")
  echo "$program: $out"
  [[ "$out" == "DART example on 2 units: all checks passed" ]] ||
    { echo "$program: unexpected output" >&2; exit 1; }
done
echo "install_test: installed, moved, built with pkg-config, ran on 2 units"
