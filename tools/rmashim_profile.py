"""The shim's profile JSON (docs/using-and-tuning.md "Profiling", schema
"rmashim-profile-2"; "rmashim-profile-1", without "traffic" and
"per_rank", still reads), defined once: its names, the schema check and the
derived counts, for the report (rmashim_report.py, installed beside it) and
the test checkers (tests/profile: check_profile.py, exact counts of known
programs; check_engaged.py, the shim engaged in a differential or fuzz run).
Only the Python standard library."""
import json

SCHEMA = "rmashim-profile-2"
OLD_SCHEMA = "rmashim-profile-1"  # before the traffic matrix
# Most bins a side of a traffic matrix, windows with their own matrix and
# exact busiest pairs (shim/profile/traffic.h kMaxBins, kMatrixWindows,
# kTopPairs).
MAX_BINS = 128
MATRIX_WINDOWS = 16
TOP_PAIRS = 32
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


def check_cells(cells, sides, where):
    """A sparse matrix: [origin, target, ops, bytes] cells, non-empty,
    each (origin, target) once, both below `sides`."""
    assert isinstance(cells, list), where
    seen = set()
    for cell in cells:
        assert len(cell) == 4 and all(isinstance(v, int) for v in cell), (
            where, cell)
        origin, target, ops, nbytes = cell
        assert 0 <= origin < sides and 0 <= target < sides, (where, cell)
        assert ops >= 0 and nbytes >= 0 and ops + nbytes > 0, (where, cell)
        assert (origin, target) not in seen, (where, cell)
        seen.add((origin, target))


def check_traffic(doc):
    """"traffic" (matrices in world ranks, binned) and "per_rank"."""
    ranks, t = doc["ranks"], doc["traffic"]
    assert set(t) == {"ranks", "bin_size", "bins", "matrix", "windows",
                      "top_pairs"}, t.keys()
    assert t["ranks"] == "world", t["ranks"]
    assert t["bin_size"] == -(-ranks // MAX_BINS), t["bin_size"]
    assert t["bins"] == -(-ranks // t["bin_size"]) <= MAX_BINS, t["bins"]
    check_cells(t["matrix"], t["bins"], "matrix")
    ids = {w["id"] for w in doc["windows"]}
    assert len(t["windows"]) <= MATRIX_WINDOWS, len(t["windows"])
    for wid, cells in t["windows"].items():
        assert wid in ids, wid
        check_cells(cells, t["bins"], wid)
    check_cells(t["top_pairs"], ranks, "top_pairs")
    assert len(t["top_pairs"]) <= TOP_PAIRS
    keys = [(-c[3], -c[2]) for c in t["top_pairs"]]
    assert keys == sorted(keys), "top_pairs not busiest first"
    per = doc["per_rank"]
    assert set(per) == {"ops", "bytes", "lock_waits", "lock_wait_seconds",
                        "sync_seconds"}, per.keys()
    assert set(per["sync_seconds"]) == set(SYNCS)
    for values in [per[k] for k in per if k != "sync_seconds"] + list(
            per["sync_seconds"].values()):
        assert len(values) == ranks, len(values)
        assert all(isinstance(v, (int, float)) and v >= 0 for v in values)


def check_schema(doc):
    """Every key of the schema, nothing else; stats consistent."""
    assert doc["schema"] in (SCHEMA, OLD_SCHEMA), doc.get("schema")
    if doc["schema"] == SCHEMA:
        assert set(doc) == {"schema", "ranks", "windows", "traffic",
                            "per_rank"}, doc.keys()
        check_traffic(doc)
    else:
        assert set(doc) == {"schema", "ranks", "windows"}, doc.keys()
    for w in doc["windows"]:
        # remote_to_mpi: absent from the profiles of shims that did not
        # tell remote operations through the agent from MPI's.
        assert set(w) - {"remote_to_mpi"} == {
            "id", "name", "flavor", "managed", "ranks", "ops", "sync",
            "contended_locks", "contended_seconds", "fallbacks",
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
        if "remote_to_mpi" in w:
            check_stat(w["remote_to_mpi"], "remote_to_mpi")
            assert w["remote_to_mpi"]["sum"] <= op_count(w, ["remote"]), w["id"]
        assert w["busiest_rank_ops"] <= op_count(w, REACHES), w["id"]


def op_count(w, reaches=REACHES, ops=OPS):
    """Operations on window `w` (summed over its ranks) to `reaches`."""
    return sum(w["ops"][op][r]["count"]["sum"] for op in ops for r in reaches)


def remote_split(w):
    """(through the targets' agents, to MPI): the remote operations of `w`
    (all to MPI in a profile that does not tell them apart)."""
    remote = op_count(w, ["remote"])
    to_mpi = w.get("remote_to_mpi", {}).get("sum", remote)
    return remote - to_mpi, to_mpi


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


def matrix(cells):
    """{(origin, target): (ops, bytes)} of a sparse matrix."""
    return {(o, t): (ops, nbytes) for o, t, ops, nbytes in cells}


def traffic(doc):
    """The document's "traffic", or None (schema rmashim-profile-1)."""
    return doc.get("traffic")


def per_rank(doc):
    """The document's "per_rank", or None (schema rmashim-profile-1)."""
    return doc.get("per_rank")


def no_traffic(ranks):
    """"traffic" and "per_rank" of a run of `ranks` ranks that moved
    nothing, for documents tests craft."""
    bin_size = -(-ranks // MAX_BINS)
    return {"traffic": {"ranks": "world", "bin_size": bin_size,
                        "bins": -(-ranks // bin_size), "matrix": [],
                        "windows": {}, "top_pairs": []},
            "per_rank": {"ops": [0] * ranks, "bytes": [0] * ranks,
                         "lock_waits": [0] * ranks,
                         "lock_wait_seconds": [0] * ranks,
                         "sync_seconds": {c: [0] * ranks for c in SYNCS}}}
