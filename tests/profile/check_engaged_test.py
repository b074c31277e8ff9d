#!/usr/bin/env python3
"""Unit test of check_engaged.py on crafted profiles: it passes a shim that
engaged as declared and fails every way a shim can fail to engage (no
profile, windows left to MPI, nothing served, undeclared fallbacks or
warnings, wrong window counts)."""
import copy
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
# The profile's schema module (tools/rmashim_profile.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "..", "tools"))
import check_engaged  # noqa: E402
import rmashim_profile as rp  # noqa: E402


def stat(n):
    return {"sum": n, "min": 0, "max": n}


def window(wid, flavor, managed, ranks=2, ops=None, fallbacks=None):
    """A schema-valid window record; ops: {(op, reach): count}."""
    ops = ops or {}
    fallbacks = fallbacks or {}
    return {
        "id": wid, "name": "", "flavor": flavor, "managed": managed,
        "ranks": ranks,
        "ops": {op: {r: {"count": stat(ops.get((op, r), 0)),
                         "bytes": stat(8 * ops.get((op, r), 0))}
                     for r in rp.REACHES} for op in rp.OPS},
        "sync": {c: {"calls": stat(0), "seconds": stat(0)} for c in rp.SYNCS},
        "contended_locks": stat(0), "contended_seconds": stat(0),
        "fallbacks": {f: stat(fallbacks.get(f, 0)) for f in rp.FALLBACKS},
        "busiest_rank": 0, "busiest_rank_ops": 0,
    }


def profile(*windows, ranks=2):
    return {"schema": rp.SCHEMA, "ranks": ranks,
            "windows": copy.deepcopy(list(windows)), **rp.no_traffic(ranks)}


# A put_get-like run: one allocate window, every put/get served.
SERVED = window("0.0", "allocate", True,
                ops={("put", "self"): 4, ("put", "node"): 4, ("get", "node"): 2})
# Under RMASHIM_DISABLE=1: the same window left to MPI, opted out.
DISABLED = window("0.0", "allocate", False,
                  ops={("put", "self"): 4, ("put", "node"): 4, ("get", "node"): 2},
                  fallbacks={"opted_out": 10})
DYNAMIC = window("0.1", "dynamic", False, ops={("put", "self"): 2},
                 fallbacks={"unmanaged_flavor": 2})
# A window spanning nodes: 6 node-local accumulates went to MPI.
SPLIT = window("0.0", "allocate", True,
               ops={("put", "self"): 2, ("accumulate", "node"): 6,
                    ("put", "remote"): 8},
               fallbacks={"multi_node_window": 6})


class CheckEngagedTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.stderr("")

    def stderr(self, text):
        self.err = os.path.join(self.dir, "shim.err")
        with open(self.err, "w") as f:
            f.write(text)

    def run_check(self, doc, *options, ranks=2):
        """check_engaged.check's problems for `doc` (None: no file)."""
        path = os.path.join(self.dir, "profile.json")
        if os.path.exists(path):
            os.remove(path)
        if doc is not None:
            with open(path, "w") as f:
                json.dump(doc, f)
        args = check_engaged.parse_args(
            ["--profile", path, "--stderr", self.err, "--ranks", str(ranks)]
            + list(options))
        problems, _ = check_engaged.check(args)
        return problems

    def assertFailsWith(self, problems, text):
        self.assertTrue(any(text in p for p in problems),
                        "no problem mentions %r: %r" % (text, problems))

    def test_engaged_run_passes(self):
        self.assertEqual(self.run_check(profile(SERVED), "--managed=allocate",
                                        "--min-served=10"), [])

    def test_served_count_excludes_fallbacks_and_remote(self):
        self.assertEqual(rp.served_directly(SERVED), 10)
        self.assertEqual(rp.served_directly(SPLIT), 2)
        self.assertEqual(rp.served_directly(DISABLED), 0)
        self.assertEqual(rp.served_directly(DYNAMIC), 0)

    def test_no_profile_fails(self):  # preload failed, or the run died
        self.assertFailsWith(self.run_check(None, "--managed=allocate"),
                             "no profile written")

    def test_bad_schema_fails(self):
        doc = profile(SERVED)
        del doc["windows"][0]["fallbacks"]
        self.assertFailsWith(self.run_check(doc, "--managed=allocate"),
                             "does not match schema")

    def test_wrong_rank_count_fails(self):
        self.assertFailsWith(self.run_check(profile(SERVED), "--managed=allocate",
                                            ranks=3), "profile of 2 ranks")

    def test_disabled_shim_fails(self):  # RMASHIM_DISABLE=1
        problems = self.run_check(profile(DISABLED), "--managed=allocate")
        self.assertFailsWith(problems, "expected managed by the shim")
        self.assertFailsWith(problems, "(opted_out)")
        self.assertFailsWith(problems, "0 operations served directly")

    def test_served_below_minimum_fails(self):
        self.assertFailsWith(
            self.run_check(profile(SERVED), "--managed=allocate", "--min-served=11"),
            "10 operations served directly (of 10 node-local")

    def test_default_minimum_is_one_served(self):
        idle = window("0.0", "allocate", True)
        self.assertFailsWith(self.run_check(profile(idle), "--managed=allocate"),
                             "expected at least 1")
        self.assertEqual(self.run_check(profile(idle), "--managed=allocate",
                                        "--min-served=0"), [])

    def test_everything_falling_back_fails_even_when_allowed(self):
        all_back = copy.deepcopy(SPLIT)
        all_back["fallbacks"]["multi_node_window"] = stat(8)
        self.assertFailsWith(
            self.run_check(profile(all_back), "--managed=allocate", "--min-served=2",
                           "--allow-fallback=multi_node_window"),
            "0 operations served directly")

    def test_fallbacks_must_be_declared(self):
        self.assertFailsWith(
            self.run_check(profile(SPLIT), "--managed=allocate", "--min-served=2"),
            "6 node-local operations fell back to MPI (multi_node_window)")
        self.assertEqual(self.run_check(profile(SPLIT), "--managed=allocate",
                                        "--min-served=2",
                                        "--allow-fallback=multi_node_window"), [])

    def test_fallback_flavor_qualifier(self):
        self.assertEqual(self.run_check(
            profile(SPLIT), "--managed=allocate", "--min-served=2",
            "--allow-fallback=create_accumulate:create,multi_node_window:allocate"), [])
        self.assertFailsWith(self.run_check(
            profile(SPLIT), "--managed=allocate", "--min-served=2",
            "--allow-fallback=multi_node_window:create"), "fell back to MPI")

    def test_dynamic_window_is_unmanaged_by_design(self):
        doc = profile(SERVED, DYNAMIC)
        self.assertEqual(self.run_check(doc, "--managed=allocate",
                                        "--unmanaged=dynamic"), [])
        # Undeclared, it is a flavor the test does not expect.
        self.assertFailsWith(self.run_check(doc, "--managed=allocate"),
                             "a flavor the test does not expect")
        managed_dynamic = copy.deepcopy(DYNAMIC)
        managed_dynamic["managed"] = True
        managed_dynamic["fallbacks"]["unmanaged_flavor"] = stat(0)
        self.assertFailsWith(
            self.run_check(profile(SERVED, managed_dynamic), "--managed=allocate",
                           "--unmanaged=dynamic"), "expected passed to MPI")

    def test_only_dynamic_window_expects_nothing_served(self):
        self.assertEqual(self.run_check(profile(DYNAMIC), "--unmanaged=dynamic"), [])

    def test_declared_flavor_must_appear(self):
        self.assertFailsWith(self.run_check(profile(SERVED),
                                            "--managed=allocate,create"),
                             "no create window in the profile")

    def test_window_counts(self):
        doc = profile(SERVED, window("1.0", "shared", True, ranks=1,
                                     ops={("put", "self"): 1}))
        self.assertEqual(self.run_check(doc, "--managed=allocate,shared",
                                        "--windows=allocate=1,shared=1"), [])
        self.assertFailsWith(self.run_check(doc, "--managed=allocate,shared",
                                            "--windows=allocate=1,shared=2"),
                             "1 shared windows in the profile, expected 2")

    def test_undeclared_warning_fails(self):
        self.stderr("== rmashim profile: 1 windows, 2 ranks\n"
                    "rmashim: node-shared memory exhausted; window left to MPI\n")
        self.assertFailsWith(self.run_check(profile(SERVED), "--managed=allocate"),
                             'undeclared shim warning on stderr: "rmashim: '
                             'node-shared memory exhausted')
        self.assertEqual(self.run_check(profile(SERVED), "--managed=allocate",
                                        "--allow-warning=memory exhausted"), [])

    def test_warning_inside_an_interleaved_line_is_seen(self):
        self.stderr("[rank 1] somethingrmashim: too many managed windows\n")
        self.assertFailsWith(self.run_check(profile(SERVED), "--managed=allocate"),
                             "too many managed windows")

    def test_profile_report_is_not_a_warning(self):
        self.stderr("== rmashim profile: 1 windows, 2 ranks\n"
                    "  fell back to MPI: unmanaged flavor (dynamic window)  9 ops\n")
        self.assertEqual(self.run_check(profile(SERVED), "--managed=allocate"), [])

    def test_fuzz_expectation_file(self):
        expect = os.path.join(self.dir, "expect.txt")
        with open(expect, "w") as f:
            f.write("allocate=1 shared=0 create=0 dynamic=1 direct=10\n")
        doc = profile(SERVED, DYNAMIC)
        self.assertEqual(self.run_check(doc, "--fuzz-expect", expect), [])
        with open(expect, "w") as f:
            f.write("allocate=1 shared=0 create=0 dynamic=1 direct=11\n")
        self.assertFailsWith(self.run_check(doc, "--fuzz-expect", expect),
                             "expected at least 11")
        with open(expect, "w") as f:
            f.write("allocate=2 shared=0 create=0 dynamic=1 direct=0\n")
        self.assertFailsWith(self.run_check(doc, "--fuzz-expect", expect),
                             "1 allocate windows in the profile, expected 2")
        disabled = profile(DISABLED, DYNAMIC)
        self.assertFailsWith(self.run_check(disabled, "--fuzz-expect", expect),
                             "expected managed")

    def test_exit_status(self):
        path = os.path.join(self.dir, "profile.json")
        with open(path, "w") as f:
            json.dump(profile(SERVED), f)
        base = ["--profile", path, "--stderr", self.err, "--ranks", "2"]
        self.assertEqual(check_engaged.main(base + ["--managed=allocate"]), 0)
        self.assertEqual(check_engaged.main(base + ["--managed=allocate",
                                                    "--min-served=99"]), 1)
        with self.assertRaises(SystemExit) as e:  # no flavors declared
            check_engaged.main(base)
        self.assertEqual(e.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
