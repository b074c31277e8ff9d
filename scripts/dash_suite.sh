#!/usr/bin/env bash
# DASH's own GoogleTest suite on this project's libdart and on DASH's own
# DART-MPI, side by side (docs/dart.md, "DASH's test suite on libdart").
#
#   scripts/dash_suite.sh DASH_SRC
#
# DASH_SRC is a checkout of DASH (github dash-project/dash, branch
# development); this script fetches nothing. Everything is built under
# $WORK (default /tmp/dash_suite), never in this repository:
#   dartmpi/  DASH's CMake build with its DART-MPI (dash-test-mpi)
#   libdart/  this project installed in libdart/prefix (bazel run //:install),
#             then DASH's CMake build with the installed
#             lib/cmake/rmashim/DashOnLibdart.cmake as its project include:
#             DASH's library and tests against the installed DART headers
#             and libdart.so (dash-test-libdart), DASH's build unchanged
# Both use one set of options: MPICH (mpicc.mpich/mpicxx.mpich), hwloc on,
# threads on (DART_THREAD_MULTIPLE), -O1, no optional libraries; examples
# configured too (scripts/dash_bench.sh builds DASH's benchmarks from them).
#
# Then every (variant, units, layout) runs once under mpirun.mpich
# (scripts/dash_suite_run.py: a run silent for $IDLE seconds is killed, its
# test counts as hung, and the run resumes after it). Layout "oddeven" is
# the simulated two-node split (MPIR_CVAR_ODD_EVEN_CLIQUES=1), "twohost"
# two simulated hosts (tests/twohost/hosts.sh: separate network, /dev/shm
# and PIDs, UCX over TCP; needs root), first half of the units on one.
# RMASHIM_AGENT=1 in the environment runs libdart with the core's agent
# (docs/dart.md "Atomics and locks across nodes").
#
# Environment: WORK, VARIANTS ("libdart dartmpi"), UNITS ("2 3 4"),
# LAYOUTS ("node oddeven"; UNITS= builds only), IDLE (180), JOBS (2),
# BUILD (1; 0 reuses the builds in $WORK).
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/dash/test/main.cc" ]; then
  echo "usage: $0 DASH_SRC   (a DASH source tree)" >&2
  exit 2
fi
DASH_SRC=$(cd "$1" && pwd)
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/dash_suite}
VARIANTS=${VARIANTS-libdart dartmpi}
UNITS=${UNITS-2 3 4}
LAYOUTS=${LAYOUTS-node oddeven}
IDLE=${IDLE:-180}
JOBS=${JOBS:-2}
BUILD=${BUILD:-1}
mkdir -p "$WORK"

FLAGS="-O1 -DNDEBUG -DDASH_RELEASE"
configure() {  # configure SRC BUILD [CMAKE OPTIONS]: DASH's CMake, common options
  local src=$1 build=$2
  shift 2
  mkdir -p "$build"
  (cd "$build" && nice -n 15 cmake "$src" "$@" \
    -DCMAKE_C_COMPILER=mpicc.mpich -DCMAKE_CXX_COMPILER=mpicxx.mpich \
    -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich \
    -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.mpich \
    -DCMAKE_BUILD_TYPE=MinSizeRel \
    "-DCMAKE_C_FLAGS_MINSIZEREL=$FLAGS" "-DCMAKE_CXX_FLAGS_MINSIZEREL=$FLAGS" \
    -DBUILD_TESTS=ON -DBUILD_EXAMPLES=ON -DENABLE_THREADSUPPORT=ON \
    -DENABLE_HWLOC=ON -DENABLE_HWLOC_PCI=OFF -DENABLE_LIBNUMA=OFF \
    -DENABLE_PAPI=OFF -DENABLE_MKL=OFF -DENABLE_BLAS=OFF -DENABLE_LAPACK=OFF \
    -DENABLE_SCALAPACK=OFF -DENABLE_PLASMA=OFF -DENABLE_HDF5=OFF \
    -DENABLE_MEMKIND=OFF -DENABLE_LIKWID=OFF -DENABLE_ASSERTIONS=OFF \
    -DENABLE_LOGGING=OFF -DGTEST_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu \
    -DGTEST_INCLUDE_PATH=/usr/include -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    > cmake.log 2>&1)
}

# DASH's CMake writes generated headers into its source tree: each variant
# gets its own copy of the sources.
copy_src() {
  rm -rf "$1"
  mkdir -p "$1"
  cp -a "$DASH_SRC"/. "$1"/
}

bin_of() {
  case $1 in
    dartmpi) echo "$WORK/dartmpi/build/dash/dash-test-mpi" ;;
    libdart) echo "$WORK/libdart/build/dash/dash-test-libdart" ;;
  esac
}

if [ "$BUILD" = 1 ]; then
  for v in $VARIANTS; do
    case $v in
      dartmpi)
        copy_src "$WORK/dartmpi/src"
        configure "$WORK/dartmpi/src" "$WORK/dartmpi/build"
        nice -n 15 make -C "$WORK/dartmpi/build" -j "$JOBS" dash-test-mpi \
          > "$WORK/dartmpi/make.log" 2>&1
        ;;
      libdart)
        rm -rf "$WORK/libdart/prefix"
        (cd "$REPO" && nice -n 15 bazel run --jobs="$JOBS" //:install -- \
          "$WORK/libdart/prefix")
        copy_src "$WORK/libdart/src"
        configure "$WORK/libdart/src" "$WORK/libdart/build" \
          "-DCMAKE_PROJECT_INCLUDE=$WORK/libdart/prefix/lib/cmake/rmashim/DashOnLibdart.cmake"
        nice -n 15 make -C "$WORK/libdart/build" -j "$JOBS" dash-test-libdart \
          > "$WORK/libdart/make.log" 2>&1
        ;;
      *) echo "unknown variant $v" >&2; exit 2 ;;
    esac
  done
fi

if [[ " $LAYOUTS " == *" twohost "* ]]; then
  (cd "$REPO" && bazel build //tests/twohost:libfinalize_guard.so >&2)
  export RMASHIM_TWOHOST_DIR=$WORK/hosts
  rm -rf "$RMASHIM_TWOHOST_DIR"
  mkdir -p "$RMASHIM_TWOHOST_DIR"
  bash "$REPO/tests/twohost/hosts.sh" up "$RMASHIM_TWOHOST_DIR" >&2
  trap 'bash "$REPO/tests/twohost/hosts.sh" down "$RMASHIM_TWOHOST_DIR" >&2' EXIT
fi

echo "DASH $(git -C "$DASH_SRC" rev-parse HEAD 2>/dev/null || echo '(no git)')"
for v in $VARIANTS; do
  for n in $UNITS; do
    for l in $LAYOUTS; do
      python3 "$REPO/scripts/dash_suite_run.py" "$(bin_of "$v")" \
        --units "$n" --layout "$l" --label "$v" --idle "$IDLE" \
        --log "$WORK/$v-$n-$l.log"
    done
  done
done
