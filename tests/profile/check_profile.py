#!/usr/bin/env python3
"""Checks the profile JSON of profile_counts.c: schema and exact counts,
and that the text report shows the same windows and operation counts.

usage: check_profile.py PROFILE.json REPORT.txt RANKS LAYOUT
LAYOUT is how the run split ranks over simulated nodes (tests/run_mpi.sh).
       check_profile.py PROFILE.json REPORT.txt RANKS osu
checks the profile of bench/osu_rma instead: schema, and every kind of
operation and synchronization counted on its managed window, the opted-out
native window's operations counted as fallbacks.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
# The profile's schema module (tools/rmashim_profile.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "..", "tools"))
from rmashim_profile import (OPS, REACHES, SYNCS, load, matrix,  # noqa: E402
                             op_count, reach)

K_PUTS, K_GETS, K_ACCS, K_OPTOUT_PUTS, K_LOCKS = 3, 2, 5, 4, 2
K_REQUESTS, K_FENCES, K_PSCW_ROUNDS, K_DYNAMIC_PUTS = 2, 3, 2, 3
K_HOLD_SECONDS = 0.2
CONTENDED_NAME = "contended (a name of 63 characters, longer than a report shows)"


def expect_counts(ranks, layout):
    """Expected (op, reach) -> count sums over ranks for window "counts"."""
    want = {}
    def add(op, origin, target, n):
        key = (op, reach(origin, target, ranks, layout))
        want[key] = want.get(key, 0) + n
    for o in range(ranks):
        for t in range(ranks):
            add("put", o, t, K_PUTS)
            add("get", o, t, K_GETS)
            add("fetch_and_op", o, t, 1)
        add("accumulate", o, 0, K_ACCS)
        add("compare_and_swap", o, o, 1)
    return want


def check_requests(w, ranks, layout):
    """Window "requests": request-based ops, fence and PSCW, exact."""
    assert w["managed"] and w["flavor"] == "allocate"
    want = {}
    for o in range(ranks):
        r = reach(o, (o + 1) % ranks, ranks, layout)
        for op in ["rput", "rget", "raccumulate", "rget_accumulate"]:
            want[(op, r)] = want.get((op, r), 0) + K_REQUESTS
        want[("get_accumulate", r)] = want.get(("get_accumulate", r), 0) + 1
        want[("put", r)] = want.get(("put", r), 0) + K_FENCES - 1 + K_PSCW_ROUNDS
    for op in OPS:
        for r in REACHES:
            n = want.get((op, r), 0)
            got = w["ops"][op][r]
            assert got["count"]["sum"] == n, (op, r, got, n)
            assert got["bytes"]["sum"] == 8 * n, (op, r, got, n)
    per_rank = {"lock_all": 1, "unlock_all": 1, "fence": K_FENCES,
                "post": K_PSCW_ROUNDS, "start": K_PSCW_ROUNDS,
                "complete": K_PSCW_ROUNDS, "wait": K_PSCW_ROUNDS}
    for call in SYNCS:
        calls = w["sync"][call]["calls"]
        n = per_rank.get(call, 0)
        assert calls == {"sum": n * ranks, "min": n, "max": n}, (call, calls)


def check_contended(w, ranks, layout):
    """Window "contended": ranks - 1 lock requests against a held lock."""
    assert w["sync"]["lock"]["calls"]["sum"] == ranks
    waited, seconds = w["contended_locks"], w["contended_seconds"]
    if layout == "node" and ranks > 1:  # shared-memory locks: measured
        assert 1 <= waited["sum"] <= ranks - 1 and waited["max"] == 1, waited
        # Whoever got the lock first waited for most of the hold.
        assert seconds["max"] >= K_HOLD_SECONDS / 4, seconds
    else:  # one rank, or MPICH's locks (window spans nodes): not measured
        assert waited["sum"] == 0, waited


def expect_matrices(ranks):
    """{window name: {(origin, target): ops}} in world ranks (every window
    is on MPI_COMM_WORLD); every operation moves one long (8 bytes)."""
    want = {"counts": {}, "optout": {}, "requests": {}, "dynamic": {}}
    def add(name, origin, target, n):
        cells = want[name]
        cells[(origin, target)] = cells.get((origin, target), 0) + n
    for o in range(ranks):
        for t in range(ranks):
            add("counts", o, t, K_PUTS + K_GETS + 1)
        add("counts", o, 0, K_ACCS)
        add("counts", o, o, 1)
        add("optout", o, o, K_OPTOUT_PUTS)
        add("requests", o, (o + 1) % ranks,
            4 * K_REQUESTS + 1 + K_FENCES - 1 + K_PSCW_ROUNDS)
        add("dynamic", o, o, K_DYNAMIC_PUTS)
    return want


def check_traffic(doc, report_path):
    """Who talked to whom, exactly: each window's matrix, the job's (their
    sum), the busiest pairs, and the text report's pairs section."""
    ranks = doc["ranks"]
    traffic = doc["traffic"]
    assert traffic["bin_size"] == 1 and traffic["bins"] == ranks, traffic
    by_name = {w["name"]: w for w in doc["windows"]}
    job = {}
    for name, cells in expect_matrices(ranks).items():
        got = matrix(traffic["windows"][by_name[name]["id"]])
        assert got == {k: (n, 8 * n) for k, n in cells.items()}, (name, got)
        for k, n in cells.items():
            job[k] = job.get(k, 0) + n
    assert set(traffic["windows"]) == {
        by_name[n]["id"] for n in expect_matrices(ranks)}, traffic["windows"]
    assert matrix(traffic["matrix"]) == {k: (n, 8 * n) for k, n in job.items()}
    pairs = sorted(((8 * n, n, k) for k, n in job.items()),
                   key=lambda p: (-p[0], -p[1], p[2]))[:32]
    assert [(o, t, n, b) for b, n, (o, t) in pairs] == [
        tuple(c) for c in traffic["top_pairs"]], traffic["top_pairs"]
    per = doc["per_rank"]
    for r in range(ranks):
        ops = sum(n for (o, _), n in job.items() if o == r)
        assert per["ops"][r] == ops and per["bytes"][r] == 8 * ops, (r, per)
    text = open(report_path).read()
    o, t, n, b = traffic["top_pairs"][0]
    assert "== who talks to whom" in text, text
    assert f"  rank {o} -> rank {t}: {n} ops, {b} bytes\n" in text, text


def parse_report(path):
    """The header's window count and {window id: {op: [self, node, remote]
    op counts}} from the report."""
    windows, current, header = {}, None, None
    for line in open(path):
        words = line.split()
        if line.startswith("== rmashim profile: "):
            header = int(words[3])
        elif line.startswith("window "):
            current = windows.setdefault(words[1], {})
        elif current is not None and len(words) == 7 and words[0] in OPS:
            current[words[0]] = [words[1], words[3], words[5]]
    return header, windows


def human(n):
    """The report's rendering of a count (shim/profile/profile.cc Human)."""
    units = ["", "K", "M", "G", "T"]
    u = 0
    while n >= 10000 and u < 4:
        n /= 1024
        u += 1
    return "%.1f%s" % (n, units[u]) if u else "%.0f" % n


def check_report(doc, path):
    header, report = parse_report(path)
    assert header == len(doc["windows"]), (header, len(doc["windows"]))
    assert set(report) == {w["id"] for w in doc["windows"]}, report.keys()
    for w in doc["windows"]:
        want = {op: [human(w["ops"][op][r]["count"]["sum"]) for r in REACHES]
                for op in OPS
                if any(w["ops"][op][r]["count"]["sum"] for r in REACHES)}
        assert report[w["id"]] == want, (w["id"], report[w["id"]], want)


def check_osu(doc):
    managed = [w for w in doc["windows"] if w["managed"]]
    native = [w for w in doc["windows"] if not w["managed"]]
    assert len(managed) == 1 and len(native) == 1, doc["windows"]
    shim, mpi = managed[0], native[0]
    for op in ["put", "get", "accumulate", "fetch_and_op", "compare_and_swap"]:
        for w in (shim, mpi):
            assert w["ops"][op]["node"]["count"]["sum"] > 0, (w["id"], op)
            assert w["ops"][op]["node"]["bytes"]["sum"] > 0, (w["id"], op)
    for call in ["lock", "unlock", "lock_all", "unlock_all", "flush", "fence",
                 "post", "start", "complete", "wait"]:
        assert shim["sync"][call]["calls"]["sum"] > 0, call
    node_ops = sum(mpi["ops"][op]["node"]["count"]["sum"] for op in OPS)
    assert mpi["fallbacks"]["opted_out"]["sum"] == node_ops
    assert sum(s["sum"] for s in shim["fallbacks"].values()) == 0
    print("profile ok: osu_rma, %d ranks" % doc["ranks"])


def main():
    path, report, ranks, layout = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    doc = load(path)  # schema-checked
    check_report(doc, report)
    assert doc["ranks"] == ranks
    # These runs start no agent (RMASHIM_AGENT=0, tests/profile/BUILD):
    # every remote operation went to MPI.
    for w in doc["windows"]:
        assert w["remote_to_mpi"]["sum"] == op_count(w, ["remote"]), w["id"]
    if layout == "osu":
        check_osu(doc)
        return
    by_name = {w["name"]: w for w in doc["windows"]}
    assert set(by_name) == {"counts", "optout", "requests", "dynamic",
                            CONTENDED_NAME}, by_name.keys()

    counts = by_name["counts"]
    assert counts["managed"] and counts["flavor"] == "allocate"
    assert counts["ranks"] == ranks
    want = expect_counts(ranks, layout)
    for op in OPS:
        for r in REACHES:
            got = counts["ops"][op][r]
            n = want.get((op, r), 0)
            assert got["count"]["sum"] == n, (op, r, got, n)
            assert got["bytes"]["sum"] == 8 * n, (op, r, got, n)
    sync = counts["sync"]
    assert sync["lock"]["calls"]["sum"] == K_LOCKS * ranks
    assert sync["unlock"]["calls"]["sum"] == K_LOCKS * ranks
    assert sync["lock_all"]["calls"]["sum"] == ranks
    assert sync["flush_all"]["calls"]["sum"] == ranks
    assert sync["lock"]["calls"]["min"] == sync["lock"]["calls"]["max"] == K_LOCKS
    # On windows spanning nodes the accumulate family goes to MPI: every
    # node-local one is a fallback.
    if layout == "node":
        assert counts["fallbacks"]["multi_node_window"]["sum"] == 0
    else:
        node_local = sum(n for (op, r), n in want.items()
                         if op in ("accumulate", "fetch_and_op", "compare_and_swap")
                         and r != "remote")
        assert counts["fallbacks"]["multi_node_window"]["sum"] == node_local

    optout = by_name["optout"]
    assert not optout["managed"]
    assert optout["ops"]["put"]["self"]["count"]["sum"] == K_OPTOUT_PUTS * ranks
    assert optout["fallbacks"]["opted_out"]["sum"] == K_OPTOUT_PUTS * ranks
    assert optout["sync"]["lock"]["calls"]["sum"] == ranks
    check_requests(by_name["requests"], ranks, layout)
    dynamic = by_name["dynamic"]
    assert not dynamic["managed"] and dynamic["flavor"] == "dynamic"
    assert dynamic["ops"]["put"]["self"]["count"]["sum"] == K_DYNAMIC_PUTS * ranks
    assert dynamic["fallbacks"]["unmanaged_flavor"]["sum"] == K_DYNAMIC_PUTS * ranks
    assert sum(s["sum"] for s in dynamic["fallbacks"].values()) == K_DYNAMIC_PUTS * ranks
    check_contended(by_name[CONTENDED_NAME], ranks, layout)
    check_traffic(doc, report)
    print("profile ok: %d windows, %d ranks, layout %s" % (len(doc["windows"]), ranks, layout))


if __name__ == "__main__":
    main()
