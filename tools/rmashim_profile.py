"""The shim's profile JSON (docs/using-and-tuning.md "Profiling", schema
"rmashim-profile-1"), defined once: its names, the schema check and the
derived counts, for the report (rmashim_report.py, installed beside it) and
the test checkers (tests/profile: check_profile.py, exact counts of known
programs; check_engaged.py, the shim engaged in a differential or fuzz run).
Only the Python standard library."""
import json

SCHEMA = "rmashim-profile-1"
FLAVORS = ["allocate", "shared", "create", "dynamic"]
OPS = ["put", "get", "accumulate", "get_accumulate", "fetch_and_op",
       "compare_and_swap", "rput", "rget", "raccumulate", "rget_accumulate"]
REACHES = ["self", "node", "remote"]
LOCAL_REACHES = ["self", "node"]
SYNCS = ["lock", "unlock", "lock_all", "unlock_all", "flush", "flush_local",
         "flush_all", "flush_local_all", "sync", "fence", "post", "start",
         "complete", "wait", "test"]
FALLBACKS = ["unmanaged_flavor", "opted_out", "no_shared_memory",
             "shim_setup_failed", "multi_node_window",
             "create_accumulate", "datatype", "large_count"]
LAYOUTS = ["node", "oddeven", "cliques3"]


def _reject_constant(name):
    raise ValueError("profile JSON holds %s, which JSON does not have" % name)


def load(path):
    """The profile document at `path`: strict JSON (UTF-8, no NaN or
    Infinity literals), schema-checked."""
    with open(path, encoding="utf-8", errors="strict") as f:
        doc = json.load(f, parse_constant=_reject_constant)
    check_schema(doc)
    return doc


def node_of(rank, ranks, layout):
    """The simulated node of world `rank` (tests/run_mpi.sh's layouts)."""
    if layout == "node":
        return 0
    if layout == "oddeven":
        return rank % 2
    if layout == "cliques3":  # MPICH 4.0.2 deals ranks out round-robin
        return rank % 3
    raise ValueError(layout)


def reach(origin, target, ranks, layout):
    if origin == target:
        return "self"
    same = node_of(origin, ranks, layout) == node_of(target, ranks, layout)
    return "node" if same else "remote"


def check_stat(stat, where):
    assert set(stat) == {"sum", "min", "max"}, where
    assert all(isinstance(stat[k], (int, float)) for k in stat), (
        "non-finite (null) statistic", where, stat)
    assert stat["min"] <= stat["max"] <= stat["sum"] or stat["sum"] == 0, where


def check_schema(doc):
    """Every key of the schema, nothing else; stats consistent."""
    assert doc["schema"] == SCHEMA, doc.get("schema")
    assert set(doc) == {"schema", "ranks", "windows"}, doc.keys()
    for w in doc["windows"]:
        assert set(w) == {"id", "name", "flavor", "managed", "ranks", "ops",
                          "sync", "contended_locks", "contended_seconds",
                          "fallbacks",
                          "busiest_rank", "busiest_rank_ops"}, w.keys()
        assert w["flavor"] in FLAVORS, w["flavor"]
        assert isinstance(w["managed"], bool) and isinstance(w["name"], str)
        owner, sequence = w["id"].split(".")
        assert int(owner) >= 0 and int(sequence) >= 0, w["id"]
        assert 0 <= w["busiest_rank"] < doc["ranks"]
        assert set(w["ops"]) == set(OPS)
        for op in OPS:
            assert set(w["ops"][op]) == set(REACHES)
            for r in REACHES:
                check_stat(w["ops"][op][r]["count"], (op, r))
                check_stat(w["ops"][op][r]["bytes"], (op, r))
        assert set(w["sync"]) == set(SYNCS)
        for call in SYNCS:
            assert set(w["sync"][call]) == {"calls", "seconds"}, call
            check_stat(w["sync"][call]["calls"], call)
            check_stat(w["sync"][call]["seconds"], call)
        check_stat(w["contended_locks"], "contended_locks")
        check_stat(w["contended_seconds"], "contended_seconds")
        assert (w["contended_locks"]["sum"] == 0) == (
            w["contended_seconds"]["sum"] == 0), w["id"]
        assert set(w["fallbacks"]) == set(FALLBACKS)
        for why in FALLBACKS:
            check_stat(w["fallbacks"][why], why)
        assert w["busiest_rank_ops"] <= op_count(w, REACHES), w["id"]


def op_count(w, reaches=REACHES, ops=OPS):
    """Operations on window `w` (summed over its ranks) to `reaches`."""
    return sum(w["ops"][op][r]["count"]["sum"] for op in ops for r in reaches)


def fallbacks(w):
    """{reason: count} of the node-local operations of `w` that went to MPI
    (reasons that occurred only)."""
    return {why: s["sum"] for why, s in w["fallbacks"].items() if s["sum"]}


def served_directly(w):
    """Operations the shim served itself on `w`: on a managed window its
    self and node operations minus those that fell back to MPI (every
    fallback is a node-local operation); none on an unmanaged window."""
    if not w["managed"]:
        return 0
    return op_count(w, LOCAL_REACHES) - sum(fallbacks(w).values())


def describe(w):
    """One line naming a window, as the text report does."""
    name = ' "%s"' % w["name"] if w["name"] else ""
    return "window %s%s (%s, %s, %d ranks)" % (
        w["id"], name, w["flavor"],
        "managed" if w["managed"] else "passed to MPI", w["ranks"])
