#!/usr/bin/python3
"""`rmashim report` on crafted profiles, so every fallback reason is covered
(the launcher test's program only produces two): the report knows each
reason the shim can write (keys and texts as in shim/profile/profile.cc), prints one
advice line per reason that occurred with its count, computes served
operations as the test harness does; the traffic matrix and the time per
rank come out in the text ("who talks to whom", the busiest ranks) and in
the picture's panels, whose summary (rmashim_png.draw) says what each
drew; a 1,000-rank, 1,000-window profile renders in seconds with ranks
grouped; a profile of the previous schema still reads.
  report_test.py PROFILE_CC LAUNCHER_FILES... PROFILE_MODULE_FILES..."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

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


def job_views(ranks, cells, sync_seconds=None, lock_wait=None,
              window_ids=()):
    """"traffic" and "per_rank" for `cells` {(origin, target): (ops,
    bytes)} in world ranks (ranks <= MAX_BINS: bins of one rank), each
    window in `window_ids` given the whole matrix; `sync_seconds` {call:
    [seconds by rank]}, `lock_wait` [seconds by rank]."""
    matrix = [[o, t, n, b] for (o, t), (n, b) in sorted(cells.items())]
    pairs = sorted(matrix, key=lambda c: (-c[3], -c[2], c[0], c[1]))
    ops = [sum(n for (o, _), (n, _) in cells.items() if o == r)
           for r in range(ranks)]
    nbytes = [sum(b for (o, _), (_, b) in cells.items() if o == r)
              for r in range(ranks)]
    sync = {c: [0] * ranks for c in rmashim_profile.SYNCS}
    sync.update(sync_seconds or {})
    waits = lock_wait or [0] * ranks
    return {
        "traffic": {"ranks": "world", "bin_size": 1, "bins": ranks,
                    "matrix": matrix,
                    "windows": {i: matrix for i in window_ids},
                    "top_pairs": pairs[:rmashim_profile.TOP_PAIRS]},
        "per_rank": {"ops": ops, "bytes": nbytes,
                     "lock_waits": [int(w > 0) for w in waits],
                     "lock_wait_seconds": waits, "sync_seconds": sync}}


def crafted_profile():
    """Window 0 has every fallback reason once (i + 1 ops for the i-th);
    windows 1..9 are quieter managed windows with nothing falling back."""
    reasons = {k: i + 1 for i, k in enumerate(rmashim_profile.FALLBACKS)}
    windows = [window(0, True, 100, reasons)]
    windows += [window(i, True, 10 - i, {}) for i in range(1, 10)]
    doc = {"schema": rmashim_profile.SCHEMA, "ranks": 4, "windows": windows}
    doc.update(job_views(4, TRAFFIC, SYNC_SECONDS, LOCK_WAIT, ["0.0"]))
    rmashim_profile.check_schema(doc)
    return doc, reasons


# The crafted profile's traffic: rank 3 sends most (to 0), 1 and 2 talk,
# nobody sends to 3; rank 2 spent most time synchronizing, mostly waiting
# for locks.
TRAFFIC = {(3, 0): (50, 4000), (1, 2): (20, 1600), (2, 1): (10, 800),
           (0, 0): (5, 40), (0, 1): (1, 8)}
SYNC_SECONDS = {"lock": [0.001, 0.002, 0.300, 0.004],
                "fence": [0.010, 0.010, 0.010, 0.010]}
LOCK_WAIT = [0, 0, 0.250, 0]


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
    # One figure of 16 x 12 inches at 100 dpi.
    width = int.from_bytes(data[16:20], "big")
    height = int.from_bytes(data[20:24], "big")
    assert (width, height) == (1600, 1200), (width, height)
    check_traffic_text(out)
    print(f"report_test: {len(reasons)} reasons advised, PNG {len(data)} bytes")


def check_traffic_text(out):
    """The busiest pairs, by bytes, with their share; the busiest rank."""
    lines = out.splitlines()
    at = lines.index("who talks to whom (world ranks, busiest pairs, all "
                     "windows):")
    rows = [l.split() for l in lines[at + 2:at + 2 + len(TRAFFIC)]]
    total = sum(b for _, b in TRAFFIC.values())
    want = sorted(TRAFFIC.items(), key=lambda kv: -kv[1][1])
    assert rows == [[str(o), "->", str(t), str(n), str(b),
                     f"{100.0 * b / total:.1f}%"]
                    for (o, t), (n, b) in want], rows
    assert ("time synchronizing per rank (all windows): min 11.000 ms, "
            "median 14.000 ms, max 310.000 ms") in lines, out
    busiest = lines[lines.index(next(l for l in lines if l.startswith(
        "time synchronizing per rank"))) + 1]
    assert busiest == ("  rank 2: 310.000 ms (most in lock: 300.000 ms), "
                       "lock waits 1 (250.000 ms)"), busiest
    # Windows busiest first: window 0 (100 puts), then 1, 2, ...
    order = [l.split()[1] for l in lines if l.startswith("window ")]
    assert order == [f"0.{i}" for i in range(10)], order


def draw(doc, tmp, name):
    """rmashim_png.draw's summary and seconds taken, and the PNG's size."""
    import rmashim_png
    png = os.path.join(tmp, name)
    start = time.monotonic()
    summary = rmashim_png.draw(doc, png)
    seconds = time.monotonic() - start
    data = open(png, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", name
    return summary, seconds, len(data)


def test_png_panels():
    """The three panels of the crafted profile, and what each drew: the
    4 x 4 matrix, one bar per rank, the 8 busiest windows."""
    import rmashim_png
    doc, _ = crafted_profile()
    grid, group, unit = rmashim_png.traffic_grid(doc)
    assert (group, unit) == (1, "bytes"), (group, unit)
    assert grid == [[TRAFFIC.get((o, t), (0, 0))[1] for t in range(4)]
                    for o in range(4)], grid
    with tempfile.TemporaryDirectory() as tmp:
        summary, _, _ = draw(doc, tmp, "p.png")
    assert summary["matrix_bins"] == 4 and summary["rank_bars"] == 4, summary
    assert summary["windows"] == [f"0.{i}" for i in range(8)], summary
    assert [p[:3] for p in summary["panels"]] == ["(a)", "(b)", "(c)"]
    assert "2 quieter windows not drawn" in summary["panels"][2], summary
    print("report_test: panels", summary["panels"])


def synthetic(ranks, windows):
    """A profile of `ranks` ranks and `windows` windows as the shim writes
    it for that size: bins of ceil(ranks / 128) ranks, every bin talking
    to every bin, 16 windows with a matrix, 32 busiest pairs."""
    bin_size = -(-ranks // rmashim_profile.MAX_BINS)
    bins = -(-ranks // bin_size)
    matrix = [[o, t, 1 + (o * t) % 97, 8 * (1 + (o * t) % 97) * (1 + o)]
              for o in range(bins) for t in range(bins)]
    ws = [window(i, i % 3 != 0, 1000 - i, {} if i % 3 else
                 {"opted_out": 1000 - i}, ranks) for i in range(windows)]
    pairs = [[r, (r + 1) % ranks, 100, 100000 - r] for r in range(32)]
    sync = {c: [0.001 * (1 + (r * (i + 1)) % 7) for r in range(ranks)]
            for i, c in enumerate(rmashim_profile.SYNCS)}
    doc = {"schema": rmashim_profile.SCHEMA, "ranks": ranks, "windows": ws,
           "traffic": {"ranks": "world", "bin_size": bin_size, "bins": bins,
                       "matrix": matrix,
                       "windows": {w["id"]: matrix for w in ws[:16]},
                       "top_pairs": pairs},
           "per_rank": {"ops": [1] * ranks, "bytes": [8] * ranks,
                        "lock_waits": [r % 2 for r in range(ranks)],
                        "lock_wait_seconds": [0.001 * (r % 2)
                                              for r in range(ranks)],
                        "sync_seconds": sync}}
    rmashim_profile.check_schema(doc)
    return doc


def test_thousand_ranks_and_windows():
    """1,000 ranks and windows: the JSON's 125 bins drawn as 63 of 16
    ranks, 63 bars, 8 windows; text and picture within seconds."""
    doc = synthetic(1000, 1000)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        start = time.monotonic()
        text = rmashim_report.render(rmashim_report.load(path), path)
        text_seconds = time.monotonic() - start
        summary, seconds, size = draw(doc, tmp, "big.png")
    assert "who talks to whom" in text and text.count("\nwindow ") == 1000
    assert summary["matrix_bins"] == 63 and summary["rank_bars"] == 63, (
        summary)
    assert len(summary["windows"]) == 8, summary
    assert "992 quieter windows not drawn" in summary["panels"][2], summary
    assert text_seconds + seconds < 15, (text_seconds, seconds)
    print(f"report_test: 1000 ranks x 1000 windows: text {text_seconds:.2f} "
          f"s, PNG {seconds:.2f} s, {size} bytes")


def test_previous_schema():
    """A rmashim-profile-1 document (no matrix) still reads and draws."""
    doc, _ = crafted_profile()
    del doc["traffic"], doc["per_rank"]
    doc["schema"] = rmashim_profile.OLD_SCHEMA
    rmashim_profile.check_schema(doc)
    text = rmashim_report.render(doc, "old.json")
    assert "who talks to whom" not in text and "window 0.0" in text
    with tempfile.TemporaryDirectory() as tmp:
        summary, _, _ = draw(doc, tmp, "old.png")
    assert summary["matrix_bins"] == 0 and summary["rank_bars"] == 0
    assert len(summary["windows"]) == 8, summary


if __name__ == "__main__":
    test_names_match_shim()
    test_report_and_png()
    test_png_panels()
    test_thousand_ranks_and_windows()
    test_previous_schema()
