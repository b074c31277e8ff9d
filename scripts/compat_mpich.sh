#!/usr/bin/env bash
# The compatibility tier (docs/compatibility.md): the shim's suites against
# an MPICH other than Debian's 4.0.2, with the programs and librmashim.so
# built here unchanged. Not part of scripts/test.sh (an MPICH build takes
# an hour on two cores).
#
#   scripts/compat_mpich.sh build SOURCE PREFIX [CONFIGURE_ARGS...]
#     Builds MPICH from SOURCE (a release tarball's tree, or a git tag's
#     with its modules/json-c, hwloc and yaksa filled in: autogen.sh is run
#     when there is no configure) into PREFIX with ch4:ucx on Debian's UCX
#     and hwloc, Fortran 77 types (MPI_INTEGER and friends, which the
#     accumulate suites use), no ROMIO, no docs. CONFIGURE_ARGS are added
#     (MPICH 5.0: --with-ch4-shmmods=posix, or node-local ranks reach each
#     other only through UCX and the shim, following MPI, serves nothing).
#   scripts/compat_mpich.sh test PREFIX [BAZEL_TARGET_PATTERN...]
#     Runs the suites through Bazel with PREFIX's mpiexec (MPIRUN, read by
#     tests/run_mpi.sh) and its library first on LD_LIBRARY_PATH. Programs
#     built here need "libmpich.so.12" (Debian's name); a git tag's build
#     installs libmpi.so.0, so a link with Debian's name is made in
#     PREFIX/compat-lib. Default targets: every test under //tests/diff and
#     //tests/mpi on 2 and 4 ranks, one node and the odd-even split.
#     Prints the MPI's version, whether every MPI function the shim calls
#     exists there, then Bazel's verdicts; exits with Bazel's status.
#
# Environment: JOBS (make -j, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

build() {
  local source prefix
  source=$(realpath "$1") prefix=$(realpath -m "$2")
  shift 2
  if [[ ! -x "$source/configure" ]]; then
    (cd "$source" && ./autogen.sh -without-ucx -without-ofi -yaksa-depth=2)
  fi
  local build_dir
  build_dir=$(mktemp -d /tmp/mpich-build.XXXXXX)
  (cd "$build_dir" &&
    "$source/configure" --prefix="$prefix" --with-device=ch4:ucx \
      --with-ucx=/usr --with-hwloc=/usr --with-pm=hydra --enable-fortran=f77 \
      --disable-doc --disable-static --disable-romio "$@" &&
    make -j"${JOBS:-2}" && make install)
  rm -rf "$build_dir"
  echo "compat_mpich: MPICH installed in $prefix"
}

# The directory to put first on LD_LIBRARY_PATH: PREFIX/lib when it has
# Debian's library name, else PREFIX/compat-lib with a link of that name.
library_dir() {
  local prefix=$1
  if [[ -e "$prefix/lib/libmpich.so.12" ]]; then
    echo "$prefix/lib"
    return
  fi
  [[ -e "$prefix/lib/libmpi.so.0" ]] ||
    { echo "compat_mpich: no libmpich.so.12 or libmpi.so.0 in $prefix/lib" >&2; exit 1; }
  mkdir -p "$prefix/compat-lib"
  ln -sfn "$prefix/lib/libmpi.so.0" "$prefix/compat-lib/libmpich.so.12"
  echo "$prefix/compat-lib"
}

run_suites() {
  local prefix
  prefix=$(realpath "$1")
  shift
  [[ -x "$prefix/bin/mpiexec" ]] || { echo "compat_mpich: no $prefix/bin/mpiexec" >&2; exit 1; }
  local libs
  libs="$(library_dir "$prefix"):$prefix/lib"
  bazel build -c fastbuild //shim:librmashim.so >/dev/null 2>&1
  local shim=bazel-bin/shim/librmashim.so
  echo "MPI: $(LD_LIBRARY_PATH=$libs "$prefix/bin/mpichversion" 2>/dev/null |
    sed -n 's/^MPICH Version:[[:space:]]*//p')"
  # Every MPI function the shim refers to, strongly or weakly, that the
  # library lacks (weak ones: the shim runs without them, as on MPI-3).
  local defined missing
  defined=$(mktemp)
  nm -D --defined-only "$prefix"/lib/libmpi*.so* 2>/dev/null | awk '{ print $3 }' |
    sort -u >"$defined"
  missing=$(nm -D --undefined-only "$shim" | awk '$2 ~ /^P?MPIX?_/ { print $2, $1 }' |
    sort -u | join -v 1 - "$defined" |
    awk '{ print $1 ($2 == "w" ? " (weak)" : "") }' | paste -sd, -)
  rm -f "$defined"
  echo "MPI functions the shim refers to that this MPI lacks: ${missing:-none}"
  local targets=("$@")
  if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(bazel query 'tests(//tests/diff/... + //tests/mpi/...)' 2>/dev/null |
      grep -E '_[24]ranks_(node|oddeven)$')
  fi
  echo "running ${#targets[@]} test targets"
  bazel test --test_env=MPIRUN="$prefix/bin/mpiexec" \
    --test_env=LD_LIBRARY_PATH="$libs" -- "${targets[@]}"
}

[[ $# -ge 2 ]] || usage
case "$1" in
  build) shift; build "$@" ;;
  test) shift; run_suites "$@" ;;
  *) usage ;;
esac
