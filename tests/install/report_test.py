#!/usr/bin/python3
"""`rmashim report` on crafted profiles, so every fallback reason is covered
(the launcher test's program only produces two): the report knows each
reason the shim can write (keys and texts as in shim/profile/profile.cc), prints one
advice line per reason that occurred with its count, computes served
operations as the test harness does, and the PNG draws at most 8 panels
and says how many windows it left out.
  report_test.py PROFILE_CC LAUNCHER_FILES... PROFILE_MODULE_FILES..."""
import json
import os
import re
import subprocess
import sys
import tempfile

args = sys.argv[1:]
profile_cc = args[0]
by_name = {os.path.basename(p): os.path.realpath(p) for p in args[1:]}
sys.path[:0] = [os.path.dirname(by_name["rmashim_report.py"]),
                os.path.dirname(by_name["rmashim_profile.py"])]
import rmashim_profile  # noqa: E402
import rmashim_report  # noqa: E402


def shim_fallback_names():
    """{key: text} from shim/profile/profile.cc's kFallbackNames table."""
    source = open(profile_cc).read()
    table = source[source.index("kFallbackNames[]"):]
    table = table[:table.index("};")]
    return dict(re.findall(r'\{"(\w+)",\s*"([^"]*)"\}', table))


def test_names_match_shim():
    shim = shim_fallback_names()
    assert len(shim) == len(rmashim_profile.FALLBACKS), shim
    assert list(shim) == rmashim_profile.FALLBACKS, list(shim)
    assert {k: v[0] for k, v in rmashim_report.FALLBACKS.items()} == shim
    for key, (_, advice) in rmashim_report.FALLBACKS.items():
        assert len(advice) > 20 and "\n" not in advice, key


def stat(n):
    return {"sum": n, "min": 0, "max": n}


def window(index, managed, node_puts, fallbacks, ranks=4):
    """A schema-complete window: `node_puts` node-local puts, the given
    {reason: ops} fallbacks."""
    zero = {"count": stat(0), "bytes": stat(0)}
    ops = {op: {r: dict(zero) for r in rmashim_profile.REACHES}
           for op in rmashim_profile.OPS}
    ops["put"]["node"] = {"count": stat(node_puts), "bytes": stat(8 * node_puts)}
    return {
        "id": f"0.{index}", "name": f"w{index}",
        "flavor": "allocate" if managed else "dynamic",
        "managed": managed, "ranks": ranks, "ops": ops,
        "sync": {c: {"calls": stat(0), "seconds": stat(0)}
                 for c in rmashim_profile.SYNCS},
        "contended_locks": stat(0), "contended_seconds": stat(0),
        "fallbacks": {k: stat(fallbacks.get(k, 0))
                      for k in rmashim_profile.FALLBACKS},
        "busiest_rank": 0, "busiest_rank_ops": node_puts}


def crafted_profile():
    """Window 0 has every fallback reason once (i + 1 ops for the i-th);
    windows 1..9 are quieter managed windows with nothing falling back."""
    reasons = {k: i + 1 for i, k in enumerate(rmashim_profile.FALLBACKS)}
    windows = [window(0, True, 100, reasons)]
    windows += [window(i, True, 10 - i, {}) for i in range(1, 10)]
    doc = {"schema": rmashim_profile.SCHEMA, "ranks": 4, "windows": windows}
    rmashim_profile.check_schema(doc)
    return doc, reasons


def test_report_and_png():
    doc, reasons = crafted_profile()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.json")
        png = os.path.join(tmp, "p.png")
        with open(path, "w") as f:
            json.dump(doc, f)
        out = subprocess.run(
            [by_name["rmashim"], "report", path, f"--png={png}"],
            capture_output=True, text=True, check=True).stdout
        data = open(png, "rb").read()
    for key, n in reasons.items():
        text, advice = rmashim_report.FALLBACKS[key]
        line = next(l for l in out.splitlines() if text in l)
        assert line.split()[-2:] == [str(n), "ops"], line
        assert f"    advice: {advice}" in out.splitlines(), key
    assert out.count("advice:") == len(reasons), out
    fell_back = sum(reasons.values())
    local = 100 + sum(10 - i for i in range(1, 10))
    served = local - fell_back
    assert (f"served in shared memory: {served} of {local} node-local "
            "operations") in out, out
    assert f"served in shared memory: {100 - fell_back} of 100 node-local" in out
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50000, len(data)
    # 8 panels of 3.6 inches at 100 dpi.
    height = int.from_bytes(data[20:24], "big")
    assert height == 8 * 360, height
    assert rmashim_png_left_out(doc) == 2
    print(f"report_test: {len(reasons)} reasons advised, PNG {len(data)} bytes")


def rmashim_png_left_out(doc):
    import rmashim_png
    return rmashim_png.chosen_windows(doc)[1]


if __name__ == "__main__":
    test_names_match_shim()
    test_report_and_png()
