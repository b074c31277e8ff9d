#!/usr/bin/env python3
"""Unit test of check_twohost.py on crafted profiles, so the two-host
tier's placement check can fail: it passes profiles with operations where
the hosts put them and fails a shim that counted the other host's ranks as
node-local, counted node-local operations on 1+1, or (--node-served) served
nothing but the ranks' own operations on 2+2."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "profile"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import check_twohost  # noqa: E402
import rmashim_profile as rp  # noqa: E402


def stat(n):
    return {"sum": n, "min": 0, "max": n}


def window(counts, fallback=0, managed=True):
    """A schema-valid allocate window whose puts are {reach: count}."""
    ops = {}
    for op in rp.OPS:
        ops[op] = {}
        for reach in rp.REACHES:
            n = counts.get(reach, 0) if op == "put" else 0
            ops[op][reach] = {"count": stat(n), "bytes": stat(8 * n)}
    fallbacks = {f: stat(0) for f in rp.FALLBACKS}
    fallbacks["multi_node_window"] = stat(fallback)
    return {
        "id": "0.0", "name": "", "flavor": "allocate", "managed": managed,
        "ranks": 4, "ops": ops,
        "sync": {c: {"calls": stat(0), "seconds": stat(0)} for c in rp.SYNCS},
        "contended_locks": stat(0), "contended_seconds": stat(0),
        "fallbacks": fallbacks, "busiest_rank": 0, "busiest_rank_ops": 0,
    }


class CheckTwohostTest(unittest.TestCase):
    def run_check(self, ranks, windows, *extra):
        doc = {"schema": rp.SCHEMA, "ranks": ranks, "windows": windows,
               **rp.no_traffic(ranks)}
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(doc, f)
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                rc = check_twohost.main(["--profile", f.name, "--ranks",
                                         str(ranks)] + list(extra))
        finally:
            os.unlink(f.name)
        return rc, out.getvalue()

    def test_right_placement_passes(self):
        rc, out = self.run_check(2, [window({"self": 4, "remote": 6})])
        self.assertEqual(rc, 0, out)
        rc, out = self.run_check(4, [window({"self": 4, "node": 5, "remote": 10})],
                                 "--node-served")
        self.assertEqual(rc, 0, out)
        self.assertIn("5 same host, 10 other host", out)

    def test_remote_taken_for_node_fails(self):
        rc, out = self.run_check(4, [window({"self": 4, "node": 15})])
        self.assertEqual(rc, 1)
        self.assertIn("no operation counted remote", out)

    def test_node_ops_on_one_plus_one_fail(self):
        rc, out = self.run_check(2, [window({"self": 4, "node": 1, "remote": 5})])
        self.assertEqual(rc, 1)
        self.assertIn("counted node-local on 1+1", out)

    def test_no_same_host_ops_on_two_plus_two_fails(self):
        rc, out = self.run_check(4, [window({"self": 4, "remote": 10})])
        self.assertEqual(rc, 1)
        self.assertIn("no operation to the same-host peer", out)

    def test_node_ops_all_fallen_back_fail_node_served(self):
        # 5 node-local operations, all sent to MPI: served equals own.
        counts = {"self": 4, "node": 5, "remote": 10}
        rc, out = self.run_check(4, [window(counts, fallback=5)], "--node-served")
        self.assertEqual(rc, 1)
        self.assertIn("served no same-host operation directly", out)
        # Without --node-served (accumulate/PSCW programs) that is allowed.
        rc, out = self.run_check(4, [window(counts, fallback=5)])
        self.assertEqual(rc, 0, out)

    def test_unmanaged_windows_are_not_counted(self):
        rc, out = self.run_check(4, [window({"self": 4, "node": 5, "remote": 10},
                                            managed=False)], "--node-served")
        self.assertEqual(rc, 0, out)
        self.assertIn("0 own, 0 same host, 0 other host", out)


if __name__ == "__main__":
    unittest.main()
