#!/usr/bin/env bash
# The installed DashOnLibdart.cmake (tools/DashOnLibdart.cmake) on a tree
# laid out as DASH's CMake build is (DASH's sources are not here; they are
# fetched for scripts/dash_suite.sh): a top-level project_dash that sets the
# DART variant list as a cache option and forces its own DART interface
# include path, whose dart.h here refuses to compile, and a dash/ directory,
# project project_dash_libdash, that builds dash-<variant> with
# include_directories(${DASH_DART_IF_INCLUDE_DIR}) and dash-test-<variant>
# linked with dash-<variant> and dart-<variant>. With the hook the variant
# is libdart, the library compiles against the installed headers, and the
# test program (a DART program) runs on 2 units with the installed
# libdart.so; an explicit other variant is refused.
#   dash_cmake_test.sh INSTALL DART_PROGRAM.c
set -euo pipefail
install=$1 source=$(realpath "$2")
tmp=${TEST_TMPDIR:-$(mktemp -d)}
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-120}

"$install" "$tmp/prefix" >"$tmp/install.log"
hook=$tmp/prefix/lib/cmake/rmashim/DashOnLibdart.cmake
[[ -f "$hook" ]] || { echo "not installed: $hook" >&2; exit 1; }

dash=$tmp/dash
mkdir -p "$dash/dart-if/include/dash/dart/if" "$dash/dash/src" "$dash/dash/test"
cat >"$dash/CMakeLists.txt" <<'CMAKE'
project(project_dash)
cmake_minimum_required(VERSION 3.13)
set(DART_IMPLEMENTATIONS "mpi" CACHE STRING "DART variants to build")
string(REPLACE "," ";" DART_IMPLEMENTATIONS_LIST ${DART_IMPLEMENTATIONS})
set(DASH_DART_IF_INCLUDE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/dart-if/include
    CACHE PATH INTERNAL FORCE)
add_subdirectory(dash)
CMAKE
cat >"$dash/dart-if/include/dash/dart/if/dart.h" <<'C'
#error "DASH's own DART interface header: the build must not see it"
C
cat >"$dash/dash/CMakeLists.txt" <<'CMAKE'
project(project_dash_libdash CXX C)
include_directories(${DASH_DART_IF_INCLUDE_DIR})
foreach(dart_variant ${DART_IMPLEMENTATIONS_LIST})
  add_library(dash-${dart_variant} src/units.cc)
  add_executable(dash-test-${dart_variant} test/dart_example.c)
  target_link_libraries(dash-test-${dart_variant} dash-${dart_variant}
                        dart-${dart_variant})
endforeach()
CMAKE
cat >"$dash/dash/src/units.cc" <<'CXX'
#include <dash/dart/if/dart.h>
size_t dash_units() {
  size_t n = 0;
  return dart_size(&n) == DART_OK ? n : 0;
}
CXX
cp "$source" "$dash/dash/test/dart_example.c"

configure() {  # configure BUILD_DIR [cmake options]
  local build=$1
  shift
  cmake -S "$dash" -B "$build" -DCMAKE_PROJECT_INCLUDE="$hook" \
    -DCMAKE_C_COMPILER=mpicc.mpich -DCMAKE_CXX_COMPILER=mpicxx.mpich "$@"
}
configure "$tmp/build" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; exit 1; }
cmake --build "$tmp/build" --target dash-test-libdart >>"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log" >&2; exit 1; }
program=$tmp/build/dash/dash-test-libdart
resolved=$(ldd "$program" | awk '$1 == "libdart.so" { print $3 }')
[[ "$(realpath "$resolved")" == "$(realpath "$tmp/prefix/lib/libdart.so")" ]] ||
  { echo "dash-test-libdart loads libdart from '$resolved'" >&2; exit 1; }
out=$(mpirun.mpich -n 2 "$program")
echo "dash-test-libdart: $out"
[[ "$out" == "DART example on 2 units: all checks passed" ]] ||
  { echo "dash-test-libdart: unexpected output" >&2; exit 1; }

# Another variant list cannot be built with libdart in the same tree.
if configure "$tmp/refused" -DDART_IMPLEMENTATIONS=mpi >"$tmp/refused.log" 2>&1; then
  echo "DART_IMPLEMENTATIONS=mpi accepted with the hook" >&2
  exit 1
fi
grep -q "must be 'libdart'" "$tmp/refused.log" ||
  { cat "$tmp/refused.log" >&2; exit 1; }
echo "dash_cmake_test: a DASH-shaped CMake tree built on the installed libdart, ran on 2 units"
