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
#   libdart/  the same CMake configuration, then DASH's library and tests
#             compiled with DASH's flags against include/ and linked with
#             bazel-bin/shim/dart/libdart.so (scripts/dash_libdart_build.py)
# Both use one set of options: MPICH (mpicc.mpich/mpicxx.mpich), hwloc on,
# threads on (DART_THREAD_MULTIPLE), -O1, no optional libraries.
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
configure() {  # configure SRC BUILD: DASH's CMake with the common options
  mkdir -p "$2"
  (cd "$2" && nice -n 15 cmake "$1" \
    -DCMAKE_C_COMPILER=mpicc.mpich -DCMAKE_CXX_COMPILER=mpicxx.mpich \
    -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich \
    -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.mpich \
    -DCMAKE_BUILD_TYPE=MinSizeRel \
    "-DCMAKE_C_FLAGS_MINSIZEREL=$FLAGS" "-DCMAKE_CXX_FLAGS_MINSIZEREL=$FLAGS" \
    -DBUILD_TESTS=ON -DBUILD_EXAMPLES=OFF -DENABLE_THREADSUPPORT=ON \
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
    libdart) echo "$WORK/libdart/build/dash-test-libdart" ;;
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
        (cd "$REPO" && nice -n 15 bazel build --jobs="$JOBS" \
          //shim/dart:libdart.so)
        mkdir -p "$WORK/libdart/lib"
        rm -f "$WORK/libdart/lib/libdart.so"
        cp "$REPO/bazel-bin/shim/dart/libdart.so" "$WORK/libdart/lib/"
        copy_src "$WORK/libdart/src"
        configure "$WORK/libdart/src" "$WORK/libdart/cmake"
        nice -n 15 python3 "$REPO/scripts/dash_libdart_build.py" \
          --dash-src "$WORK/libdart/src" --cmake-build "$WORK/libdart/cmake" \
          --include "$REPO/include" --libdart-dir "$WORK/libdart/lib" \
          --out "$WORK/libdart/build" --jobs "$JOBS" \
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
