#!/usr/bin/env bash
# The prefix install as a user meets it: `//:install PREFIX` run from the
# test's runfiles, the prefix moved elsewhere (nothing may point back into
# the stage or the source tree), then an outside DART program built with
# mpicc.mpich and `pkg-config --cflags --libs dart` (shared) and with the
# static_libs variable (libdart.a), and through the CMake package
# (find_package(rmashim): rmashim::dart, rmashim::dart_static), each run on
# 2 ranks.
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
    lib/pkgconfig/rmashim.pc lib/pkgconfig/dart.pc lib/rmashim/rmashim_report.py \
    lib/cmake/rmashim/rmashimConfig.cmake \
    lib/cmake/rmashim/rmashimConfigVersion.cmake; do
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

# A shared build loads the moved prefix's libdart; a static one none.
check_libdart() {
  local shared=$1 static=$2 resolved
  resolved=$(ldd "./$shared" | awk '$1 == "libdart.so" { print $3 }')
  [[ "$(realpath "$resolved")" == "$(realpath "$prefix/lib/libdart.so")" ]] ||
    { echo "$shared loads libdart from '$resolved'" >&2; exit 1; }
  if ldd "./$static" | grep libdart >/dev/null; then
    echo "$static loads a shared libdart" >&2
    exit 1
  fi
}
check_libdart dart_shared dart_static

# The CMake package: an outside project with find_package(rmashim), built
# with the plain C compiler (MPICH's flags come with the targets), against
# the moved prefix, shared and static.
mkdir -p "$tmp/cmake_outside"
cp "$source" "$tmp/cmake_outside/dart_example.c"
cat >"$tmp/cmake_outside/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(outside C)
find_package(rmashim 0.1 REQUIRED)
add_executable(dart_cmake dart_example.c)
target_link_libraries(dart_cmake PRIVATE rmashim::dart)
add_executable(dart_cmake_static dart_example.c)
target_link_libraries(dart_cmake_static PRIVATE rmashim::dart_static)
if(NOT EXISTS "${rmashim_PRELOAD}")
  message(FATAL_ERROR "rmashim_PRELOAD: no ${rmashim_PRELOAD}")
endif()
CMAKE
cmake -S "$tmp/cmake_outside" -B "$tmp/cmake_build" -DCMAKE_C_COMPILER=cc \
  -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log" >&2; exit 1; }
cmake --build "$tmp/cmake_build" >>"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log" >&2; exit 1; }
# find_package(rmashim 1) must refuse this 0.x package.
mkdir -p "$tmp/cmake_refuse"
printf 'cmake_minimum_required(VERSION 3.13)\nproject(refuse NONE)\nfind_package(rmashim 1 REQUIRED)\n' \
  >"$tmp/cmake_refuse/CMakeLists.txt"
if cmake -S "$tmp/cmake_refuse" -B "$tmp/cmake_refuse/build" \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1; then
  echo "find_package(rmashim 1) accepted rmashim 0.x" >&2
  exit 1
fi
cp "$tmp/cmake_build/dart_cmake" "$tmp/cmake_build/dart_cmake_static" .
check_libdart dart_cmake dart_cmake_static

for program in dart_shared dart_static dart_cmake dart_cmake_static; do
  out=$(mpirun.mpich -n 2 "./$program")
  echo "$program: $out"
  [[ "$out" == "DART example on 2 units: all checks passed" ]] ||
    { echo "$program: unexpected output" >&2; exit 1; }
done
echo "install_test: installed, moved, built with pkg-config and CMake, ran on 2 units"
