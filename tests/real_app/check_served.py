#!/usr/bin/env python3
"""The real-application tier's shared checks (docs/using-and-tuning.md "Real applications").

  check_served.py answer OUTPUT [--value NAME REGEX REFERENCE TOLERANCE]...
                                [--line REGEX]...
      Is the program's answer in OUTPUT (its stdout) right? Every --value:
      the last match of REGEX (its first group is the number) must be within
      TOLERANCE of REFERENCE; every --line: REGEX must match a line. Prints
      one line per check; exit 0 right, 1 wrong.

  check_served.py profile --profile RUN.json --stderr RUN.err --ranks N
                          [check_engaged.py options...]
      Did the shim serve the node-local operations? The checks of
      tests/profile/check_engaged.py (declared flavors managed, at least
      --min-served operations served directly, i.e. self + node operations
      on managed windows minus fallbacks, only the declared fallback reasons,
      no undeclared "rmashim:" warning on stderr), then the share line
      below. Exit 0 or 1.

  check_served.py share PROFILE.json
      Prints "served S of T operations (P%)": operations served directly
      against all RMA operations of the run (every window, every locality,
      remote ones included).
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
for d in (os.path.join(HERE, "..", "profile"),
          os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "profile")):
    if os.path.exists(os.path.join(d, "check_engaged.py")):
        sys.path.insert(0, d)
        break
import check_engaged  # noqa: E402  (tests/profile)
import rmashim_profile as rp  # noqa: E402


def check_answer(output, values, lines):
    """Problems with the answer in the text `output` (empty: right) and the
    report lines."""
    problems, report = [], []
    for name, regex, reference, tolerance in values:
        found = re.findall(regex, output, re.MULTILINE)
        if not found:
            problems.append("%s: not printed (no match for %r)" % (name, regex))
            continue
        got = found[-1][0] if isinstance(found[-1], tuple) else found[-1]
        try:
            value = float(got)
        except ValueError:
            problems.append("%s: %r is not a number" % (name, got))
            continue
        diff = abs(value - float(reference))
        line = "%s = %s (reference %s, off by %.3g, tolerance %s)" % (
            name, got, reference, diff, tolerance)
        report.append(line)
        if not diff <= float(tolerance):
            problems.append(line)
    for regex in lines:
        if re.search(regex, output, re.MULTILINE):
            report.append("printed %r" % regex)
        else:
            problems.append("no line matches %r" % regex)
    return problems, report


def share(doc):
    """(served directly, all operations) over the whole run."""
    served = sum(rp.served_directly(w) for w in doc["windows"])
    total = sum(rp.op_count(w) for w in doc["windows"])
    return served, total


def share_line(doc):
    served, total = share(doc)
    pct = 100.0 * served / total if total else 0.0
    return "served %d of %d operations (%.1f%%)" % (served, total, pct)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "answer":
        p = argparse.ArgumentParser(prog="check_served.py answer")
        p.add_argument("output")
        p.add_argument("--value", nargs=4, action="append", default=[],
                       metavar=("NAME", "REGEX", "REFERENCE", "TOLERANCE"))
        p.add_argument("--line", action="append", default=[])
        args = p.parse_args(rest)
        with open(args.output, errors="replace") as f:
            problems, report = check_answer(f.read(), args.value, args.line)
        for line in report:
            print("  " + line)
        for line in problems:
            print("  WRONG: " + line)
        return 1 if problems else 0
    if cmd == "profile":
        args = check_engaged.parse_args(rest)
        problems, summary = check_engaged.check(args)
        if problems:
            print("SHIM DID NOT SERVE AS EXPECTED (%d ranks, %s):"
                  % (args.ranks, args.layout or "?"))
            for line in problems:
                print("  " + line)
            return 1
        print(summary)
        print(share_line(rp.load(args.profile)))
        return 0
    if cmd == "share":
        print(share_line(rp.load(rest[0])))
        return 0
    print("check_served.py: unknown command %r (answer, profile, share)" % cmd,
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
