#!/usr/bin/env bash
# Installs rmashim like an HPC library: the shim, libdart (shared and
# static), their headers, pkg-config files and the `rmashim` launcher under
# one prefix that keeps working when the source tree is gone or the prefix is
# moved (the .pc files and the launcher find their files relative to
# themselves). Run through Bazel, which builds what it installs:
#   bazel run //:install -- PREFIX
# (the //:install target's runfiles hold the built files; inside a Bazel test
# the same script runs from the test's runfiles).
set -euo pipefail

# The version the .pc files and `rmashim --version` report.
readonly version=0.1.0

usage() {
  cat <<'EOF'
NAME
    install - install rmashim and libdart under a prefix

SYNOPSIS
    bazel run //:install -- [--help] PREFIX

DESCRIPTION
    Builds (through Bazel) and copies:
      PREFIX/lib/librmashim.so            the PMPI shim (LD_PRELOAD it, or use
                                          PREFIX/bin/rmashim)
      PREFIX/lib/libdart.so, libdart.a    DART, the DASH runtime interface
      PREFIX/include/rmashim/rmashim.h    rmashim_win_is_managed() and friends
      PREFIX/include/dart/*.h             DART's headers (<dart/dart.h>)
      PREFIX/include/dash/dart/if/*.h     DASH's include path for them
      PREFIX/lib/pkgconfig/rmashim.pc     pkg-config files; both require
      PREFIX/lib/pkgconfig/dart.pc          MPICH's mpich.pc (libmpich-dev)
      PREFIX/lib/cmake/rmashim/           CMake package: find_package(rmashim)
                                          gives rmashim::rmashim, rmashim::dart
                                          and rmashim::dart_static;
                                          DashOnLibdart.cmake builds DASH
                                          on libdart through DASH's own CMake
      PREFIX/bin/rmashim                  launcher and profile report
      PREFIX/lib/rmashim/*.py             the launcher's report modules
      PREFIX/share/man/man1/rmashim.1,    its --help texts as man pages
        rmashim-report.1
    PREFIX may be relative (to the directory bazel was run from). The
    installed tree is relocatable: move PREFIX anywhere.

    A program using libdart:
      export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
      mpicc.mpich prog.c $(pkg-config --cflags --libs dart) \
          $(pkg-config --variable=rpath dart) -o prog
      mpirun.mpich -n 4 ./prog
    The same with CMake (cmake -DCMAKE_PREFIX_PATH=PREFIX):
      find_package(rmashim 0.1 REQUIRED)
      target_link_libraries(prog PRIVATE rmashim::dart)
    An MPI program under the shim:
      mpirun.mpich -n 4 PREFIX/bin/rmashim --profile=profile.json ./app

EXIT STATUS
    0 on success, 2 on a usage error, 1 when a file is missing.
EOF
}

# The directory holding the built files as runfiles ("rmashim" is the
# workspace name): bazel run's PROGRAM.runfiles, a test's runfiles, or the
# directory of this script when it is itself a runfile.
runfiles_root() {
  local candidate
  for candidate in "$0.runfiles/rmashim" "${RUNFILES_DIR:-/nonexistent}/rmashim" \
      "${TEST_SRCDIR:-/nonexistent}/rmashim" "$(dirname "$0")"; do
    if [[ -f "$candidate/shim/librmashim.so" ]]; then
      echo "$candidate"
      return 0
    fi
  done
  echo "install: cannot find the built files (run: bazel run //:install -- PREFIX)" >&2
  return 1
}

# The prefix as an absolute path; relative ones are relative to the
# directory `bazel run` was started in.
absolute_prefix() {
  local prefix=$1
  if [[ "$prefix" != /* ]]; then
    prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix"
  fi
  mkdir -p "$prefix"
  (cd "$prefix" && pwd -P)
}

# install_file SOURCE DEST MODE: a copy (never a symlink into Bazel's tree).
install_file() {
  [[ -f "$1" ]] || { echo "install: missing $1" >&2; exit 1; }
  mkdir -p "$(dirname "$2")"
  rm -f "$2"
  cp -L "$1" "$2"
  chmod "$3" "$2"
}

# The .pc files locate the prefix from their own directory (${pcfiledir}),
# so a moved prefix still works. rpath: pkg-config --variable=rpath NAME.
write_pc() {
  local name=$1 description=$2 libs=$3 private=$4 extra=$5
  cat >"$prefix/lib/pkgconfig/$name.pc" <<EOF
# $description
# Relocatable: the prefix is found from this file's own directory.
# At run time the loader must find the library: add the rpath flags
#   \$(pkg-config --variable=rpath $name)
# or put \${libdir} in LD_LIBRARY_PATH. MPICH (mpich.pc, Debian's
# libmpich-dev) is required: build with mpicc.mpich, run with mpirun.mpich.
prefix=\${pcfiledir}/../..
libdir=\${prefix}/lib
includedir=\${prefix}/include
rpath=-Wl,-rpath,\${libdir}
$extra

Name: $name
Description: $description
Version: $version
Requires: mpich
Cflags: -I\${includedir}
Libs: -L\${libdir} $libs
Libs.private: $private
EOF
}

# The CMake package: PREFIX/lib/cmake/rmashim/rmashimConfig.cmake and its
# version file. Relocatable like the .pc files: the prefix is found from the
# file's own directory. MPICH comes in through pkg-config's mpich.pc, so a
# program built with the plain compiler gets MPICH's flags from the targets.
write_cmake() {
  local dir="$prefix/lib/cmake/rmashim"
  mkdir -p "$dir"
  cat >"$dir/rmashimConfig.cmake" <<'CMAKE'
# rmashim's CMake package. find_package(rmashim) defines:
#   rmashim::rmashim     librmashim.so, the PMPI shim, with <rmashim/rmashim.h>
#                        (link it, or LD_PRELOAD it into an unchanged program)
#   rmashim::dart        libdart.so, DART (the DASH runtime interface), with
#                        <dart/dart.h> and <dash/dart/if/dart.h>
#   rmashim::dart_static libdart.a and what it needs
# and rmashim_PRELOAD, the path to LD_PRELOAD. Every target brings MPICH
# (Debian's libmpich-dev, found through pkg-config's mpich.pc): build with any
# C or C++ compiler, run with mpirun.mpich. Relocatable: the prefix is found
# from this file's own directory.
include(CMakeFindDependencyMacro)
find_dependency(PkgConfig)
get_filename_component(_rmashim_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.."
                       ABSOLUTE)
if(NOT TARGET rmashim::mpich)
  pkg_check_modules(RMASHIM_MPICH REQUIRED IMPORTED_TARGET mpich)
  add_library(rmashim::mpich INTERFACE IMPORTED)
  set_target_properties(rmashim::mpich PROPERTIES
    INTERFACE_LINK_LIBRARIES PkgConfig::RMASHIM_MPICH)
endif()
# The libraries have no SONAME: linked as -l with their directory, and found
# at run time through the build's rpath (CMake adds it) or LD_LIBRARY_PATH.
foreach(_rmashim_lib rmashim dart)
  if(NOT TARGET rmashim::${_rmashim_lib})
    add_library(rmashim::${_rmashim_lib} SHARED IMPORTED)
    set_target_properties(rmashim::${_rmashim_lib} PROPERTIES
      IMPORTED_LOCATION "${_rmashim_prefix}/lib/lib${_rmashim_lib}.so"
      IMPORTED_NO_SONAME TRUE
      INTERFACE_INCLUDE_DIRECTORIES "${_rmashim_prefix}/include"
      INTERFACE_LINK_LIBRARIES rmashim::mpich)
  endif()
endforeach()
if(NOT TARGET rmashim::dart_static)
  add_library(rmashim::dart_static STATIC IMPORTED)
  set_target_properties(rmashim::dart_static PROPERTIES
    IMPORTED_LOCATION "${_rmashim_prefix}/lib/libdart.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_rmashim_prefix}/include"
    INTERFACE_LINK_LIBRARIES "rmashim::mpich;hwloc;stdc++;rt;m")
endif()
set(rmashim_PRELOAD "${_rmashim_prefix}/lib/librmashim.so")
unset(_rmashim_lib)
unset(_rmashim_prefix)
CMAKE
  cat >"$dir/rmashimConfigVersion.cmake" <<CMAKE
# find_package(rmashim [VERSION]): this is rmashim $version; a request with
# the same major version and no newer version is satisfied.
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION_MAJOR STREQUAL "${version%%.*}" AND
   NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
else()
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
CMAKE
}

# write_man NAME COMMAND...: PREFIX/share/man/man1/NAME.1, the command's
# man-style --help text as a preformatted page (man NAME once MANPATH has
# PREFIX/share/man).
write_man() {
  local name=$1 page
  shift
  page="$prefix/share/man/man1/$name.1"
  mkdir -p "$(dirname "$page")"
  { echo ".TH ${name^^} 1 \"\" \"rmashim $version\" \"rmashim\""
    echo ".nf"
    "$@" | sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/'
    echo ".fi"; } >"$page"
}

main() {
  case "${1:-}" in
    -h|--help) usage; exit 0 ;;
    "") usage >&2; exit 2 ;;
  esac
  [[ $# -eq 1 ]] || { usage >&2; exit 2; }
  local root
  root=$(runfiles_root)
  prefix=$(absolute_prefix "$1")

  install_file "$root/shim/librmashim.so" "$prefix/lib/librmashim.so" 755
  install_file "$root/shim/dart/libdart.so" "$prefix/lib/libdart.so" 755
  install_file "$root/shim/dart/libdart.a" "$prefix/lib/libdart.a" 644
  install_file "$root/include/rmashim/rmashim.h" \
    "$prefix/include/rmashim/rmashim.h" 644
  local header
  for header in "$root"/include/dart/*.h "$root"/include/dash/dart/if/*.h; do
    install_file "$header" "$prefix/${header#"$root"/}" 644
  done
  install_file "$root/tools/rmashim" "$prefix/bin/rmashim" 755
  sed -i "s/^VERSION = .*/VERSION = \"$version\"/" "$prefix/bin/rmashim"
  local module
  for module in rmashim_profile.py rmashim_report.py rmashim_png.py rmashim_check.py; do
    install_file "$root/tools/$module" "$prefix/lib/rmashim/$module" 644
  done
  write_man rmashim "$prefix/bin/rmashim" --help
  write_man rmashim-report "$prefix/bin/rmashim" report --help
  mkdir -p "$prefix/lib/pkgconfig"
  write_pc rmashim "rmashim: node-local MPI RMA in shared memory (PMPI shim)" \
    "-lrmashim" "" \
    "# LD_PRELOAD this (or run PREFIX/bin/rmashim PROGRAM): \$(pkg-config --variable=preload rmashim)
preload=\${libdir}/librmashim.so"
  write_pc dart "libdart: DART, the DASH runtime interface, on rmashim" \
    "-ldart" "-lucp -lucs -lhwloc -lstdc++ -lrt -lm" \
    "# Static linking: \$(pkg-config --variable=static_libs dart) instead of -ldart
static_libs=\${libdir}/libdart.a -lucp -lucs -lhwloc -lstdc++ -lrt -lm"
  write_cmake
  install_file "$root/tools/DashOnLibdart.cmake" \
    "$prefix/lib/cmake/rmashim/DashOnLibdart.cmake" 644
  echo "install: rmashim $version installed in $prefix"
  echo "install: PKG_CONFIG_PATH=$prefix/lib/pkgconfig; launcher $prefix/bin/rmashim"
}

main "$@"
