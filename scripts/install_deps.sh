#!/usr/bin/env bash
# Installs what rmashim needs from Debian 12's packages, and nothing that is
# already there. Works as root, or through sudo otherwise.
#   scripts/install_deps.sh [build|bench|all]
# build: what building the shim and its benchmarks needs (scripts/demo.sh);
# bench: that and Open MPI, for the osc/sm column of the benchmarks;
# all (the default): that and what the whole suite needs (scripts/test.sh),
# the real-application tier's NWChem, BAGEL, ARMCI-MPI and OpenCoarrays too.
set -euo pipefail
tier=${1:-all}

build=(
  bazel-bootstrap g++ mpich libmpich-dev hwloc libhwloc-dev
  libucx-dev  # the agent's transport (shim/agent/ucx_transport.cc), MPICH's own UCX
)
bench=(
  openmpi-bin libopenmpi-dev  # the benchmarks' osc/sm column
  python3 python3-matplotlib  # their tables and plots, and `rmashim report`
)
suite=(
  libgtest-dev libgmock-dev libbenchmark-dev
  valgrind
  clang-format clang-tidy  # tools/check_style.sh (.clang-format, .clang-tidy)
  cmake pkg-config  # tests/install: the CMake package and the .pc files
  iproute2  # tests/twohost: network namespaces and veth pairs (ip)
  # The real-application tier (tests/real_app; docs/using-and-tuning.md,
  # "Real applications"):
  # NWChem and BAGEL built for MPICH, ARMCI-MPI, OpenCoarrays for MPICH.
  nwchem-mpich bagel libarmci-mpi-dev libcaf-mpich-3 libcoarrays-mpich-dev
  gfortran
)
case "$tier" in
  build) packages=("${build[@]}") ;;
  bench) packages=("${build[@]}" "${bench[@]}") ;;
  all) packages=("${build[@]}" "${bench[@]}" "${suite[@]}") ;;
  *) sed -n '4,8p' "$0" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null ||
    missing+=("$p")
done
# libopenmpi-dev would take over the generic MPI headers and libmpi.so
# (update-alternatives prefers Open MPI); MPICH stays the project's MPI.
keep_mpich() {
  if update-alternatives --query mpi-x86_64-linux-gnu 2>/dev/null |
      grep '^Value: .*openmpi' >/dev/null; then
    "${as_root[@]}" update-alternatives --set mpi-x86_64-linux-gnu \
      /usr/include/x86_64-linux-gnu/mpich >/dev/null
  fi
}
as_root=()
[[ $(id -u) -eq 0 ]] || as_root=(sudo)
[[ ${#missing[@]} -eq 0 ]] && { keep_mpich; exit 0; }

echo "install_deps: installing ${missing[*]}" >&2
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
keep_mpich
