#!/usr/bin/env python3
"""Runs DASH's GoogleTest binary under mpirun.mpich and counts its tests.

DASH's test printer has unit 0 print one line per test after reducing the
result over all units ("[      OK  ] Case.Name" or "[  FAILED  ] ..."). A
run that hangs (no output for --idle seconds) or dies is killed; the test it
was in counts as failed ("hung" or "crashed") and the run resumes after it
with a --gtest_filter excluding every test already accounted for, until all
tests are. Prints one summary line:

  RESULT <label> units=N layout=L passed=P failed=F hung=H crashed=C total=T

and writes the per-test outcomes to <log>.tests.
"""
import argparse
import os
import re
import select
import signal
import subprocess
import sys
import time

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def list_tests(binary, env):
    out = subprocess.run(
        ["mpirun.mpich", "-n", "1", binary, "--gtest_list_tests"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, timeout=300).stdout
    tests, case = [], None
    for line in out.splitlines():
        line = ANSI.sub("", line)
        if not line.strip() or line.startswith("[") or "tests will" in line:
            continue
        if not line.startswith(" "):
            case = line.split("#")[0].strip()
        elif case:
            tests.append(case + line.split("#")[0].strip())
    return tests


def run_once(cmd, env, idle, log):
    """Runs cmd; returns (outcomes dict, last started test, how it ended)."""
    outcomes, current = {}, None
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    fd = proc.stdout.fileno()
    last = time.monotonic()
    buf = ""
    ended = "exit"
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        chunk = os.read(fd, 65536).decode(errors="replace") if ready else ""
        if chunk:
            last = time.monotonic()
            log.write(chunk)
            log.flush()
            buf += chunk
            *lines, buf = buf.split("\n")
            for line in lines:
                line = ANSI.sub("", line).strip()
                m = re.match(r"\[  RUN     \] (\S+)", line)
                if m:
                    current = m.group(1)
                    continue
                m = re.match(r"\[(      OK  |  FAILED  )\] (\S+\.\S+)$", line)
                if m:
                    outcomes[m.group(2)] = ("passed" if "OK" in m.group(1)
                                            else "failed")
                    if m.group(2) == current:
                        current = None
        elif ready or proc.poll() is not None:
            # EOF (ready with no data) or the process is gone.
            proc.wait()
            break
        elif time.monotonic() - last > idle:
            ended = "hung"
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            break
    if ended == "exit" and current is not None:
        ended = "crashed"
    return outcomes, current, ended


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--units", type=int, required=True)
    ap.add_argument("--layout", choices=["node", "oddeven", "twohost"],
                    default="node",
                    help="twohost: across tests/twohost's two simulated "
                    "hosts (hosts.sh up, RMASHIM_TWOHOST_DIR set)")
    ap.add_argument("--label", default="dash")
    ap.add_argument("--idle", type=float, default=180,
                    help="seconds without output before a run counts as hung")
    ap.add_argument("--log", required=True)
    args = ap.parse_args()

    env = dict(os.environ)
    launch = ["mpirun.mpich", "-n", str(args.units)]
    if args.layout == "oddeven":
        env["MPIR_CVAR_ODD_EVEN_CLIQUES"] = "1"
    elif args.layout == "twohost":
        if "RMASHIM_TWOHOST_DIR" not in env:
            sys.exit("dash_suite_run.py: --layout twohost needs "
                     "RMASHIM_TWOHOST_DIR (tests/twohost/hosts.sh up DIR)")
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        launch = [os.path.join(repo, "tests/twohost/run_twohost.sh"),
                  str(args.units), "twohost", "none"]
        env["MPIEXEC_TIMEOUT"] = "86400"  # a hung test is found by --idle
        env["RMASHIM_TWOHOST_STREAM"] = "1"  # progress as it comes
    tests = list_tests(args.binary, env)
    results = {}
    with open(args.log, "w") as log:
        while len(results) < len(tests):
            done = sorted(results)
            cmd = launch + [args.binary]
            if done:
                cmd.append("--gtest_filter=-" + ":".join(done))
            log.write("### " + " ".join(launch + [args.binary]) +
                      " (%d excluded)\n" % len(done))
            outcomes, current, ended = run_once(cmd, env, args.idle, log)
            results.update(outcomes)
            if current is not None and current not in results:
                results[current] = ended  # hung or crashed
            elif not outcomes:
                # No progress and nothing to blame: give up on the rest.
                for t in tests:
                    results.setdefault(t, "crashed")
    with open(args.log + ".tests", "w") as f:
        for t in tests:
            f.write("%s %s\n" % (results.get(t, "missing"), t))
    counts = {k: sum(1 for t in tests if results.get(t) == k)
              for k in ("passed", "failed", "hung", "crashed")}
    print("RESULT %s units=%d layout=%s passed=%d failed=%d hung=%d "
          "crashed=%d total=%d" % (args.label, args.units, args.layout,
                                   counts["passed"], counts["failed"],
                                   counts["hung"], counts["crashed"],
                                   len(tests)))


if __name__ == "__main__":
    sys.exit(main())
