#!/usr/bin/env python3
"""One real-application test: the program natively and under the preloaded
shim, same ranks, layout and environment (docs/using-and-tuning.md "Real applications").

  run_real_app.py --name NAME --ranks N --layout node|oddeven
      --runner tests/run_mpi.sh --shim librmashim.so
      [--env KEY=VALUE]... [--input FILE]...
      [--native-timeout S] [--shim-timeout S]
      [--value NAME REGEX REFERENCE TOLERANCE]... [--line REGEX]...
      [--answered REGEX] [--profile-arg ARG]...  -- PROGRAM [ARGS...]

REAL_APP_NATIVE_TIMEOUT in the environment overrides --native-timeout.
Each run gets a fresh directory (the --input files copied in; NWChem and
BAGEL write files next to their input) and MPIEXEC_TIMEOUT, so a hang ends.
1. Native MPICH (nothing preloaded). Its answer is reported, never judged:
   native MPICH 4.0.2 gives wrong answers for several of these programs on
   one node, not always the same ones (docs/using-and-tuning.md "Real applications"). It is
   "right", "WRONG" (an answer was printed: --answered matches, default: a
   --value was found) or "no answer" (crash, abort or timeout).
2. Under the shim, with RMASHIM_PROFILE: it must exit 0 and print the right
   answer (--value/--line, check_served.py answer), and its profile and
   stderr must show the shim served node-local operations with only the
   declared fallbacks and warnings (--profile-arg ..., check_served.py
   profile, which takes check_engaged.py's options).
Ends with one line for scripts/real_apps.sh:
  REAL_APP|name|ranks|layout|native s|native answer|shim s|shim answer|served|total
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_served  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(prog="run_real_app.py")
    p.add_argument("--name", required=True)
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--layout", required=True,
                   choices=["node", "oddeven", "cliques3", "twohost"])
    p.add_argument("--runner", required=True)
    p.add_argument("--shim", required=True)
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--input", action="append", default=[])
    p.add_argument("--native-timeout", type=int, default=60)
    p.add_argument("--shim-timeout", type=int, default=120)
    p.add_argument("--value", nargs=4, action="append", default=[])
    p.add_argument("--line", action="append", default=[])
    p.add_argument("--answered")
    p.add_argument("--profile-arg", action="append", default=[])
    p.add_argument("program", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    # scripts/real_apps.sh gives native runs longer (bazel --test_env).
    if os.environ.get("REAL_APP_NATIVE_TIMEOUT"):
        args.native_timeout = int(os.environ["REAL_APP_NATIVE_TIMEOUT"])
    if args.program and args.program[0] == "--":
        args.program = args.program[1:]
    if not args.program:
        p.error("no program given")
    return args


def run(args, label, preload, extra_env, timeout, base):
    """Runs the program once in its own directory; returns (exit code,
    seconds, directory)."""
    where = os.path.join(base, label)
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    for f in args.input:
        shutil.copy(os.path.realpath(f), where)
    env = dict(os.environ)
    for kv in args.env + extra_env:
        key, _, value = kv.partition("=")
        env[key] = value
    env["MPIEXEC_TIMEOUT"] = str(timeout)
    program = args.program[0]
    if os.path.exists(program):
        program = os.path.realpath(program)
    cmd = [os.path.realpath(args.runner), str(args.ranks), args.layout,
           preload, program] + args.program[1:]
    with open(os.path.join(where, "stdout"), "w") as out, \
            open(os.path.join(where, "stderr"), "w") as err:
        start = time.monotonic()
        rc = subprocess.call(cmd, cwd=where, env=env, stdout=out, stderr=err)
        seconds = time.monotonic() - start
    return rc, seconds, where


def answer(args, where):
    """(right?, printed an answer?, report lines) for the run's stdout."""
    with open(os.path.join(where, "stdout"), errors="replace") as f:
        output = f.read()
    problems, report = check_served.check_answer(output, args.value, args.line)
    if args.answered:
        printed = re.search(args.answered, output, re.MULTILINE) is not None
    else:
        printed = any(re.search(v[1], output, re.MULTILINE) for v in args.value)
    return not problems, printed, report + ["WRONG: " + p for p in problems]


def tail(path, n=25):
    with open(path, errors="replace") as f:
        lines = f.readlines()
    return "".join("    | " + line for line in lines[-n:])


def main(argv):
    args = parse_args(argv)
    base = os.environ.get("TEST_TMPDIR") or os.path.abspath("real_app_runs")
    title = "%s: %d ranks, layout %s%s" % (
        args.name, args.ranks, args.layout,
        "".join(" " + e for e in args.env))
    print(title)

    # 1. Native MPICH: reported only.
    rc, native_s, where = run(args, "native", "none", [], args.native_timeout, base)
    right, printed, report = answer(args, where)
    if rc == 0 and right:
        native = "right"
    elif printed:
        native = "WRONG" + ("" if rc == 0 else " (exit %d)" % rc)
    else:
        native = "no answer (exit %d%s)" % (
            rc, ", timed out" if native_s >= args.native_timeout - 1 else "")
    print("native MPICH: %s, %.1f s" % (native, native_s))
    for line in report:
        print("  " + line)
    if native != "right":
        print("  native stdout (end):\n" + tail(os.path.join(where, "stdout"), 12))

    # 2. Under the shim: must be right, and served by the shim.
    profile = os.path.join(base, "shim.json")
    if os.path.exists(profile):
        os.remove(profile)
    rc, shim_s, where = run(args, "shim", os.path.realpath(args.shim),
                            ["RMASHIM_PROFILE=" + profile], args.shim_timeout, base)
    right, _, report = answer(args, where)
    ok = rc == 0 and right
    shim = "right" if ok else ("WRONG" if rc == 0 else "failed (exit %d)" % rc)
    print("under the shim: %s, %.1f s" % (shim, shim_s))
    for line in report:
        print("  " + line)
    if not ok:
        print("  shim run stdout (end):\n" + tail(os.path.join(where, "stdout")))
        print("  shim run stderr (end):\n" + tail(os.path.join(where, "stderr")))
    served, total = "-", "-"
    if os.path.exists(profile):
        try:
            served, total = check_served.share(check_served.rp.load(profile))
        except (ValueError, KeyError, AssertionError) as e:
            print("  profile unreadable: %r" % e)
    status = check_served.main(
        ["profile", "--profile", profile, "--stderr", os.path.join(where, "stderr"),
         "--ranks", str(args.ranks), "--layout", args.layout] + args.profile_arg)
    ok = ok and status == 0
    print("REAL_APP|%s|%d|%s|%.1f|%s|%.1f|%s|%s|%s" % (
        args.name, args.ranks, args.layout, native_s, native, shim_s,
        shim, served, total))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
