"""Compiler options of every library of the shim (shim/*/BUILD)."""

# The shim runs inside every MPI call of the application: its hot paths are
# a few dozen instructions, so the frame pointer Bazel's toolchain keeps and
# the interposable calls -fPIC assumes inside the library are measurable
# (bench/small_ops). Exported symbols are limited by exports.lds anyway.
# Functions start on a cache line: the wrappers' few dozen instructions
# then fetch the same way whatever the linker put before them (a 16-byte
# shift moved accumulate+flush by half a nanosecond).
HOT_PATH_COPTS = [
    "-fomit-frame-pointer",
    "-fno-semantic-interposition",
    "-falign-functions=64",
]

# The shim's libraries, bottom layer first: each folder of shim/ is one,
# and may include only the headers of the folders before it (Bazel's
# sandbox has no others). libdart.a packs them all.
SHIM_LAYERS = [
    "//shim/base",
    "//shim/types",
    "//shim/process",
    "//shim/profile",
    "//shim/sync",
    "//shim/windows",
    "//shim/epochs",
    "//shim/atomics",
    "//shim/agent",
    "//shim/move",
]
