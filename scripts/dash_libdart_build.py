#!/usr/bin/env python3
"""Builds DASH's library and test binary against this project's libdart.

Takes the compile commands DASH's own CMake generated (compile_commands.json
of a configured DASH build tree), keeps DASH's flags, and swaps the DART
interface include directory (<dash-src>/dart-if/include) for this project's
include/ (which has <dash/dart/if/*.h>). Refuses any command that would
still see DASH's DART headers or DART-MPI's sources. Writes a Makefile into
the output directory that compiles DASH's src/ into libdash.a and its test/
into dash-test-libdart, linked with libdart.so, and runs make.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dash-src", required=True)
    ap.add_argument("--cmake-build", required=True,
                    help="a configured DASH build tree (compile_commands.json)")
    ap.add_argument("--include", required=True, help="rmashim's include/")
    ap.add_argument("--libdart-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", default="2")
    args = ap.parse_args()

    src = os.path.realpath(args.dash_src)
    dart_if = os.path.join(src, "dart-if", "include")
    with open(os.path.join(args.cmake_build, "compile_commands.json")) as f:
        commands = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    lib_objs, test_objs, rules = [], [], []
    link_flags = None
    for entry in commands:
        path = os.path.realpath(entry["file"])
        rel = os.path.relpath(path, src)
        if not rel.startswith("dash/"):
            continue  # DART-MPI and DART base: not built here
        argv = shlex.split(entry["command"])
        out_i = argv.index("-o")
        del argv[out_i:out_i + 2]
        c_i = argv.index("-c")
        del argv[c_i:c_i + 2]
        new = []
        for a in argv:
            if a == "-I" + dart_if:
                new.append("-I" + os.path.realpath(args.include))
            else:
                new.append(a)
        joined = " ".join(new)
        if "dart-if" in joined or "dart-impl" in joined:
            sys.exit("DASH's DART headers still on the path: " + joined)
        if link_flags is None:
            link_flags = [a for a in new[1:] if a.startswith(("-f", "-m"))]
        obj = os.path.join("obj", rel + ".o")
        (lib_objs if rel.startswith("dash/src/") else test_objs).append(obj)
        rules.append("%s: %s\n\t@mkdir -p $(dir $@)\n\t%s -c %s -o $@\n" % (
            obj, path, " ".join(shlex.quote(a) for a in new),
            shlex.quote(path)))
    libdir = os.path.realpath(args.libdart_dir)
    mk = ["all: dash-test-libdart\n",
          "libdash.a: %s\n\tar rcs $@ $^\n" % " ".join(lib_objs),
          "dash-test-libdart: %s libdash.a\n\tmpicxx.mpich %s -o $@ %s "
          "libdash.a -L%s -ldart -Wl,-rpath,%s -lgtest -lhwloc -lpthread "
          "-lrt\n" % (" ".join(test_objs), " ".join(link_flags or []),
                      " ".join(test_objs), libdir, libdir)]
    mk += rules
    with open(os.path.join(args.out, "Makefile"), "w") as f:
        f.write("\n".join(mk))
    return subprocess.call(["make", "-j", args.jobs, "-C", args.out])


if __name__ == "__main__":
    sys.exit(main())
