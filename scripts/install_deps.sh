#!/usr/bin/env bash
# Installs what rmashim needs from Debian 12's packages, and nothing that is
# already there. Works as root, or through sudo otherwise.
set -euo pipefail

packages=(
  bazel-bootstrap g++ mpich libmpich-dev hwloc libhwloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev python3 python3-matplotlib
  valgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

as_root=()
[[ $(id -u) -eq 0 ]] || as_root=(sudo)
echo "install_deps: installing ${missing[*]}" >&2
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
