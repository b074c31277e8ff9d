# DASH's own CMake build on rmashim's libdart, without a change to DASH:
# DASH's library, tests and examples compile against rmashim's DART headers
# and link libdart.so instead of DASH's DART-MPI. Give this file to DASH's
# configure step as its project include:
#
#   cmake DASH_SRC -DCMAKE_PROJECT_INCLUDE=PREFIX/lib/cmake/rmashim/DashOnLibdart.cmake \
#         -DCMAKE_C_COMPILER=mpicc.mpich -DCMAKE_CXX_COMPILER=mpicxx.mpich [DASH's options]
#   make dash-test-libdart        # DASH's GoogleTest suite on libdart
#
# CMake includes it after every project() call in DASH's tree (CMake 3.15
# and later); it acts at two of them, found by DASH's project names:
#  - project_dash, DASH's top level: the DART variant list
#    (DART_IMPLEMENTATIONS, DASH's cache option) becomes "libdart", so DASH
#    configures no DART-MPI and names its targets dash-libdart (library),
#    dash-test-libdart (tests), <example>.libdart.
#  - project_dash_libdash, DASH's dash/ directory: DASH_DART_IF_INCLUDE_DIR,
#    the one include path DASH gives its library for DART's interface,
#    points at this prefix's include/ (which has <dash/dart/if/*.h>), and
#    dart-libdart, the DART library DASH links its tests and examples with,
#    is rmashim::dart (this package's libdart.so, with MPICH). libdart runs
#    on MPI, so the dash/ targets get the definitions DASH gives its MPI
#    variant: DASH_MPI_IMPL_ID (the MPI DASH's CMake found; its tests'
#    printer reduces verdicts over the units through MPI with it) and, with
#    ENABLE_SHARED_WINDOWS off, DART_MPI_DISABLE_SHARED_WINDOWS.
# Any other DART variant list is refused: DASH gives all variants one
# include path, so DART-MPI cannot be built beside libdart in one tree.
cmake_policy(PUSH)
cmake_policy(VERSION 3.15...3.25)
if(PROJECT_NAME STREQUAL "project_dash")
  set(DART_IMPLEMENTATIONS "libdart" CACHE STRING
      "DASH runtime implementations to build (rmashim: libdart)")
  if(NOT DART_IMPLEMENTATIONS STREQUAL "libdart")
    message(FATAL_ERROR
            "DashOnLibdart.cmake: DART_IMPLEMENTATIONS is "
            "'${DART_IMPLEMENTATIONS}'; with rmashim's libdart it must be "
            "'libdart' (leave it unset)")
  endif()
elseif(PROJECT_NAME STREQUAL "project_dash_libdash")
  find_package(rmashim CONFIG REQUIRED
               PATHS "${CMAKE_CURRENT_LIST_DIR}" NO_DEFAULT_PATH)
  get_target_property(_rmashim_include rmashim::dart
                      INTERFACE_INCLUDE_DIRECTORIES)
  set(DASH_DART_IF_INCLUDE_DIR "${_rmashim_include}")
  unset(_rmashim_include)
  if(DEFINED MPI_IMPL_ID)
    add_compile_definitions(DASH_MPI_IMPL_ID=${MPI_IMPL_ID})
  endif()
  if(DEFINED ENABLE_SHARED_WINDOWS AND NOT ENABLE_SHARED_WINDOWS)
    add_compile_definitions(DART_MPI_DISABLE_SHARED_WINDOWS)
  endif()
  if(NOT TARGET dart-libdart)
    add_library(dart-libdart INTERFACE IMPORTED)
    set_target_properties(dart-libdart PROPERTIES
      INTERFACE_LINK_LIBRARIES rmashim::dart)
  endif()
  message(STATUS "DASH on rmashim's libdart: ${rmashim_DIR}")
endif()
cmake_policy(POP)
