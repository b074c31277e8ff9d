#!/usr/bin/env python3
"""Checks that librmashim.so engaged in a run under LD_PRELOAD: the shared
check of the differential harnesses (tests/diff_native_vs_shim.sh,
tests/fuzz/fuzz_diff.sh), which otherwise compare only stdout, so a failed
preload or a silent fallback would compare native MPICH with itself.

usage: check_engaged.py --profile RUN.json --stderr RUN.err --ranks N
           [--layout L] [--managed F,..] [--unmanaged F,..] [--windows F=N,..]
           [--min-served N] [--allow-fallback REASON[:FLAVOR],..]...
           [--allow-warning REGEX]... [--fuzz-expect FILE]

RUN.json is the shim run's RMASHIM_PROFILE file, RUN.err its stderr. Fails
(exit 1, one line per problem) unless:
- the profile exists (the shim was loaded and reached MPI_Finalize) and
  matches the schema, with N ranks;
- every window of a --managed flavor is managed and every window of an
  --unmanaged flavor is not, each listed flavor has a window, and no
  window has another flavor; --windows: exactly N windows (profile records:
  one per communicator instance) of flavor F;
- at least --min-served operations were served directly (on managed
  windows, self and node operations minus fallbacks);
- every fallback reason that occurred is allowed: by --allow-fallback
  (REASON anywhere, REASON:FLAVOR on windows of that flavor only), or
  unmanaged_flavor on an unmanaged dynamic window (dynamic windows pass
  through by design);
- every "rmashim: " warning on stderr matches an --allow-warning regex.
--fuzz-expect FILE reads rma_fuzz --expect-file's line
"allocate=A shared=S create=C dynamic=D direct=N": windows of those counts,
all but dynamic managed, and N as --min-served.
Exit 2 on bad usage or an unreadable expectation file.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
# The profile's schema module (tools/rmashim_profile.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "..", "tools"))
import rmashim_profile as rp  # noqa: E402

WARNING = re.compile(r"rmashim: (.*)")


def flavor_list(text):
    flavors = [f for f in text.split(",") if f]
    for f in flavors:
        if f not in rp.FLAVORS:
            raise argparse.ArgumentTypeError("unknown flavor %r" % f)
    return flavors


def fallback_list(text):
    allowed = []
    for item in (i for i in text.split(",") if i):
        reason, _, flavor = item.partition(":")
        if reason not in rp.FALLBACKS:
            raise argparse.ArgumentTypeError("unknown fallback reason %r" % reason)
        if flavor and flavor not in rp.FLAVORS:
            raise argparse.ArgumentTypeError("unknown flavor %r" % flavor)
        allowed.append((reason, flavor or None))
    return allowed


def window_counts(text):
    counts = {}
    for item in (i for i in text.split(",") if i):
        flavor, _, n = item.partition("=")
        if flavor not in rp.FLAVORS or not n.isdigit():
            raise argparse.ArgumentTypeError("bad window count %r" % item)
        counts[flavor] = int(n)
    return counts


def parse_args(argv):
    p = argparse.ArgumentParser(prog="check_engaged.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", required=True)
    p.add_argument("--stderr", required=True)
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--layout", default="", help="for messages only")
    p.add_argument("--managed", type=flavor_list, default=[])
    p.add_argument("--unmanaged", type=flavor_list, default=[])
    p.add_argument("--windows", type=window_counts, default={})
    p.add_argument("--min-served", type=int, default=None)
    p.add_argument("--min-via-agent", type=int, default=0,
                   help="remote operations the targets' agents must have "
                   "served (RMASHIM_AGENT runs)")
    p.add_argument("--allow-fallback", type=fallback_list, action="append",
                   default=[])
    p.add_argument("--allow-warning", action="append", default=[])
    p.add_argument("--fuzz-expect")
    args = p.parse_args(argv)
    args.allow_fallback = [a for group in args.allow_fallback for a in group]
    if args.fuzz_expect:
        try:
            with open(args.fuzz_expect) as f:
                fields = dict(t.split("=", 1) for t in f.read().split())
            counts = {fl: int(fields[fl]) for fl in rp.FLAVORS}
            direct = int(fields["direct"])
        except (OSError, ValueError, KeyError) as e:
            p.exit(2, "check_engaged.py: bad --fuzz-expect file %s: %s\n"
                   % (args.fuzz_expect, e))
        args.windows = counts
        args.managed = [fl for fl in rp.FLAVORS if fl != "dynamic" and counts[fl]]
        args.unmanaged = ["dynamic"] if counts["dynamic"] else []
        args.min_served = direct
    if not args.managed and not args.unmanaged:
        p.error("say which flavors the run uses (--managed, --unmanaged or "
                "--fuzz-expect)")
    if set(args.managed) & set(args.unmanaged):
        p.error("a flavor is both --managed and --unmanaged")
    if args.min_served is None:
        args.min_served = 1 if args.managed else 0
    args.allow_warning = [re.compile(r) for r in args.allow_warning]
    return args


def check(args):
    """The problems found (empty: the shim engaged as expected) and a
    one-line summary."""
    problems = []
    if not os.path.exists(args.profile):
        return ["no profile written to %s: the shim was not loaded (failed "
                "preload?) or the run did not reach MPI_Finalize" % args.profile], ""
    try:
        doc = rp.load(args.profile)
    except (ValueError, KeyError, AssertionError) as e:
        return ["profile %s does not match schema %s: %r"
                % (args.profile, rp.SCHEMA, e)], ""
    if doc["ranks"] != args.ranks:
        problems.append("profile of %d ranks, expected %d" % (doc["ranks"], args.ranks))
    windows = doc["windows"]

    # Which windows the shim manages.
    seen = {}
    for w in windows:
        seen[w["flavor"]] = seen.get(w["flavor"], 0) + 1
        if w["flavor"] in args.managed and not w["managed"]:
            why = ", ".join("%s %d" % kv for kv in sorted(rp.fallbacks(w).items()))
            problems.append("%s: expected managed by the shim (fell back: %s)"
                            % (rp.describe(w), why or "no operations"))
        elif w["flavor"] in args.unmanaged and w["managed"]:
            problems.append("%s: expected passed to MPI" % rp.describe(w))
        elif w["flavor"] not in args.managed + args.unmanaged:
            problems.append("%s: a flavor the test does not expect" % rp.describe(w))
    for flavor in args.managed + args.unmanaged:
        if flavor not in seen:
            problems.append("no %s window in the profile" % flavor)
    for flavor, n in sorted(args.windows.items()):
        if seen.get(flavor, 0) != n:
            problems.append("%d %s windows in the profile, expected %d"
                            % (seen.get(flavor, 0), flavor, n))

    # What went to MPI, and why.
    for w in windows:
        for reason, count in sorted(rp.fallbacks(w).items()):
            by_design = (reason == "unmanaged_flavor" and not w["managed"]
                         and w["flavor"] == "dynamic")
            allowed = any(reason == r and f in (None, w["flavor"])
                          for r, f in args.allow_fallback)
            if not (by_design or allowed):
                problems.append("%s: %d node-local operations fell back to MPI "
                                "(%s), which the test does not allow"
                                % (rp.describe(w), count, reason))
        if w["managed"] and rp.served_directly(w) < 0:
            problems.append("%s: more fallbacks than node-local operations"
                            % rp.describe(w))

    # What the shim served itself.
    served = sum(rp.served_directly(w) for w in windows)
    local = sum(rp.op_count(w, rp.LOCAL_REACHES) for w in windows if w["managed"])
    if served < args.min_served:
        problems.append("%d operations served directly (of %d node-local ones "
                        "on managed windows), expected at least %d"
                        % (served, local, args.min_served))

    # Remote operations through the targets' agents (shim/agent/agent.h).
    via_agent = sum(rp.remote_split(w)[0] for w in windows)
    if via_agent < args.min_via_agent:
        problems.append("%d remote operations through the targets' agents, "
                        "expected at least %d" % (via_agent, args.min_via_agent))

    # Warnings on stderr.
    warnings = []
    try:
        with open(args.stderr, errors="replace") as f:
            for line in f:
                m = WARNING.search(line)
                if m:
                    warnings.append(m.group(1).strip())
    except OSError as e:
        problems.append("cannot read the run's stderr: %s" % e)
    undeclared = [t for t in warnings
                  if not any(r.search(t) for r in args.allow_warning)]
    for text in sorted(set(undeclared)):
        problems.append('undeclared shim warning on stderr: "rmashim: %s"' % text)

    managed = sum(1 for w in windows if w["managed"])
    reasons = {}
    for w in windows:
        for reason, count in rp.fallbacks(w).items():
            reasons[reason] = reasons.get(reason, 0) + count
    summary = ("shim engaged: %d of %d windows managed (%s); %d of %d node-local "
               "operations on them served directly (at least %d expected); "
               "remote operations through agents: %d; fallbacks: %s; shim warnings: %d"
               % (managed, len(windows),
                  ", ".join("%s %d" % (f, n) for f, n in sorted(seen.items())),
                  served, local, args.min_served, via_agent,
                  ", ".join("%s %d" % kv for kv in sorted(reasons.items())) or "none",
                  len(warnings)))
    return problems, summary


def main(argv):
    args = parse_args(argv)
    problems, summary = check(args)
    where = "%d ranks%s" % (args.ranks, ", layout " + args.layout if args.layout else "")
    if problems:
        print("SHIM NOT ENGAGED AS EXPECTED (%s):" % where)
        for p in problems:
            print("  " + p)
        return 1
    print("%s (%s)" % (summary, where))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
