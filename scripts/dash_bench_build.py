#!/usr/bin/env python3
"""Builds DASH example programs (its micro-benchmarks) for one DART variant.

Compiles dash/examples/<name>/main.cpp with the compile command DASH's CMake
made for its library (dash/src/Team.cc in compile_commands.json), so both
variants see identical flags; for libdart the DART interface include
directory is swapped for this project's include/ as in
dash_libdart_build.py. Links against the variant's libdash and DART.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=["libdart", "dartmpi"], required=True)
    ap.add_argument("--dash-src", required=True)
    ap.add_argument("--cmake-build", required=True)
    ap.add_argument("--include", help="rmashim's include/ (libdart)")
    ap.add_argument("--libdart-dir", help="directory of libdart.so (libdart)")
    ap.add_argument("--libdash", required=True, help="libdash.a to link")
    ap.add_argument("--out", required=True)
    ap.add_argument("examples", nargs="+")
    args = ap.parse_args()

    src = os.path.realpath(args.dash_src)
    dart_if = os.path.join(src, "dart-if", "include")
    with open(os.path.join(args.cmake_build, "compile_commands.json")) as f:
        commands = json.load(f)
    template = next(e for e in commands
                    if os.path.realpath(e["file"]).endswith("dash/src/Team.cc"))
    argv = shlex.split(template["command"])
    out_i = argv.index("-o")
    del argv[out_i:out_i + 2]
    c_i = argv.index("-c")
    del argv[c_i:c_i + 2]
    argv = [a for a in argv if a != "-fPIC"]
    if args.variant == "libdart":
        argv = ["-I" + os.path.realpath(args.include) if a == "-I" + dart_if
                else a for a in argv]
        if "dart-if" in " ".join(argv) or "dart-impl" in " ".join(argv):
            sys.exit("DASH's DART headers still on the path")
        libdir = os.path.realpath(args.libdart_dir)
        libs = ["-L" + libdir, "-ldart", "-Wl,-rpath," + libdir]
    else:
        build = os.path.realpath(args.cmake_build)
        libs = [os.path.join(build, "dart-impl/mpi/libdart-mpi.a"),
                os.path.join(build, "dart-impl/base/libdart-base.a")]
    os.makedirs(args.out, exist_ok=True)
    for name in args.examples:
        main_cpp = os.path.join(src, "dash", "examples", name, "main.cpp")
        obj = os.path.join(args.out, name + ".o")
        exe = os.path.join(args.out, name)
        subprocess.check_call(argv + ["-c", main_cpp, "-o", obj])
        subprocess.check_call(
            [argv[0], "-fopenmp", "-o", exe, obj, args.libdash] + libs +
            ["-lhwloc", "-lpthread", "-lrt"])
        print(exe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
