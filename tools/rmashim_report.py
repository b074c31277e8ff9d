"""`rmashim report FILE.json`: the shim's profile JSON (docs/using-and-tuning.md "Profiling",
schema rmashim-profile-2) as a text report: the job's busiest
origin-target pairs and each rank's synchronization time, then the
windows, busiest first, each saying for every reason operations fell back
to MPI what the user could change; the picture is drawn by
rmashim_png.py. The schema and the derived counts are
rmashim_profile.py's (installed beside it). Only the Python standard
library."""
import rmashim_profile as schema

SCHEMA = schema.SCHEMA
OPS = schema.OPS
REACHES = schema.REACHES
SYNCS = schema.SYNCS

# Each fallback reason (the JSON key), the shim's own text for it
# (shim/profile/profile.cc) and one line of advice.
FALLBACKS = {
    "unmanaged_flavor": (
        "unmanaged flavor (dynamic window)",
        "dynamic window: use MPI_Win_allocate (or MPI_Win_create) where the "
        "memory can be fixed at window creation; the shim passes "
        "MPI_Win_create_dynamic windows to MPI"),
    "opted_out": (
        "opted out (info key or RMASHIM_DISABLE)",
        "opted out: drop the info key rmashim_managed=false, unset "
        "RMASHIM_DISABLE / don't pass --disable"),
    "no_shared_memory": (
        "no node-shared memory (/dev/shm full, attach refused)",
        "no node-shared memory: enlarge /dev/shm (containers: --shm-size), "
        "and let a node's ranks open each other's /proc/<pid>/fd (same "
        "user and PID namespace, no hidepid)"),
    "shim_setup_failed": (
        "shim's window setup failed (table full, ...)",
        "setup failed: free windows no longer needed (MPI_Win_free); the "
        "run's \"rmashim:\" warnings on stderr say what failed"),
    "multi_node_window": (
        "window spans nodes (accumulate/PSCW rule)",
        "window spans nodes: accumulates (outside exclusive locks) and PSCW "
        "go to MPI there; make node-local windows (a communicator from "
        "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) or use exclusive locks"),
    "create_accumulate": (
        "accumulate on MPI_Win_create memory",
        "MPI_Win_create accumulate: allocate with MPI_Win_allocate "
        "(ARMCI-MPI/NWChem: set ARMCI_USE_WIN_ALLOCATE=1)"),
    "datatype": (
        "datatype not flattened",
        "datatype not flattened: build it from one predefined type with "
        "contiguous/vector/indexed/struct constructors (not "
        "MPI_Type_create_darray)"),
    "large_count": (
        "count beyond int (MPI-4 _c call)",
        "large-count calls (MPI_Put_c, ... with a count beyond int) go to "
        "MPI: split such a transfer into calls of fewer than 2^31 elements, "
        "or use a larger datatype"),
}


# One advice entry per fallback reason of the schema, in its order.
assert list(FALLBACKS) == schema.FALLBACKS, "rmashim_profile.FALLBACKS"


class BadProfile(Exception):
    """The file is not an rmashim profile the report understands."""


def load(path):
    """The profile document at `path`, checked against the schema
    (rmashim_profile.load); raises BadProfile if it is not one."""
    try:
        return schema.load(path)
    except (OSError, ValueError) as e:
        raise BadProfile(f"{path}: {e}") from e
    except (AssertionError, KeyError, TypeError, AttributeError) as e:
        raise BadProfile(f"{path}: not an rmashim profile of schema "
                         f"{SCHEMA!r} ({e!r})") from e


def op_count(w, op, reach):
    return w["ops"].get(op, {}).get(reach, {}).get("count", {}).get("sum", 0)


def op_bytes(w, op, reach):
    return w["ops"].get(op, {}).get(reach, {}).get("bytes", {}).get("sum", 0)


def fallback_counts(w):
    """{reason: ops} for the reasons that occurred, in the schema's order."""
    counts = {}
    for key in FALLBACKS:
        n = w["fallbacks"].get(key, {}).get("sum", 0)
        if n:
            counts[key] = n
    return counts


def local_ops(w):
    """Operations on self and node-local targets (summed over ranks)."""
    return sum(op_count(w, op, r) for op in OPS for r in ("self", "node"))


def served_ops(w):
    """Node-local operations the shim served itself (the tests' count)."""
    return schema.served_directly(w)


def title(w):
    name = w.get("name") or ""
    shown = f' "{name[:40]}{"..." if len(name) > 40 else ""}"' if name else ""
    how = "managed" if w["managed"] else "passed to MPI"
    return f'window {w["id"]}{shown} ({w["flavor"]}, {how}, {w["ranks"]} ranks)'


def percent(part, whole):
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def ops_lines(w):
    rows = [op for op in OPS if any(op_count(w, op, r) for r in REACHES)]
    if not rows:
        return ["  no RMA operations"]
    lines = ["  operation         " + "".join(
        f"{r + ' ops':>11}{'bytes':>13}" for r in REACHES)]
    for op in rows:
        lines.append(f"  {op:<18}" + "".join(
            f"{op_count(w, op, r):>11}{op_bytes(w, op, r):>13}"
            for r in REACHES))
    return lines


def sync_lines(w):
    sync = w.get("sync", {})
    rows = [c for c in SYNCS if sync.get(c, {}).get("calls", {}).get("sum")]
    if not rows:
        return []
    lines = ["  synchronization       calls     total ms   mean us/call"]
    for call in rows:
        calls = sync[call]["calls"]["sum"]
        seconds = sync[call]["seconds"]["sum"]
        lines.append(f"  {call:<18}{calls:>9}{seconds * 1e3:>13.3f}"
                     f"{seconds * 1e6 / calls:>15.3f}")
    return lines


def contention_lines(w):
    waited = w.get("contended_locks", {}).get("sum", 0)
    if not waited:
        return []
    seconds = w.get("contended_seconds", {}).get("sum", 0.0)
    return [f"  lock acquisitions that waited: {waited}, "
            f"{seconds * 1e3:.3f} ms in all"]


def remote_lines(w):
    agent, to_mpi = schema.remote_split(w)
    if not agent and not to_mpi:
        return []
    return [f"  remote ops: {agent} through the targets' agents, "
            f"{to_mpi} to MPI"]


def fallback_lines(w):
    lines = []
    for key, n in fallback_counts(w).items():
        text, advice = FALLBACKS[key]
        lines.append(f"  fell back to MPI: {text:<52} {n} ops")
        lines.append(f"    advice: {advice}")
    return lines


def window_lines(w):
    local = local_ops(w)
    lines = [title(w),
             f"  served in shared memory: {served_ops(w)} of {local} "
             f"node-local ops ({percent(served_ops(w), local)})"]
    lines += ops_lines(w) + sync_lines(w) + contention_lines(w)
    lines += remote_lines(w) + fallback_lines(w)
    if "busiest_rank" in w:
        lines.append(f"  busiest rank: {w['busiest_rank']} "
                     f"({w.get('busiest_rank_ops', 0)} ops)")
    return lines


def summary_lines(doc, path):
    windows = doc.get("windows", [])
    local = sum(local_ops(w) for w in windows)
    served = sum(served_ops(w) for w in windows)
    managed = sum(1 for w in windows if w["managed"])
    return [f"rmashim profile {path}: {doc.get('ranks', '?')} ranks, "
            f"{len(windows)} windows ({managed} managed)",
            f"served in shared memory: {served} of {local} node-local "
            f"operations ({percent(served, local)})"]


PAIRS_SHOWN = 10  # busiest pairs listed
RANKS_SHOWN = 5  # ranks listed with the most synchronization time


def pair_lines(doc):
    """Who talks to whom: the busiest origin-target pairs (world ranks)."""
    traffic = schema.traffic(doc)
    if not traffic or not traffic["top_pairs"]:
        return []
    total = sum(c[3] for c in traffic["matrix"])
    lines = ["", "who talks to whom (world ranks, busiest pairs, all "
             "windows):",
             "  origin -> target         ops          bytes  share of bytes"]
    for origin, target, ops, nbytes in traffic["top_pairs"][:PAIRS_SHOWN]:
        lines.append(f"  {origin:>6} -> {target:<6}{ops:>12}{nbytes:>15}"
                     f"{percent(nbytes, total):>16}")
    return lines


def rank_time_lines(doc):
    """Where the time went: synchronization time per rank (summed over
    windows), its spread, and the ranks that spent the most."""
    per = schema.per_rank(doc)
    if not per:
        return []
    ranks = doc["ranks"]
    totals = [sum(per["sync_seconds"][c][r] for c in SYNCS)
              for r in range(ranks)]
    if not any(totals):
        return []
    ordered = sorted(totals)
    median = ordered[len(ordered) // 2]
    lines = ["", "time synchronizing per rank (all windows): "
             f"min {ordered[0] * 1e3:.3f} ms, median {median * 1e3:.3f} ms, "
             f"max {ordered[-1] * 1e3:.3f} ms"]
    busiest = sorted(range(ranks), key=lambda r: -totals[r])[:RANKS_SHOWN]
    for r in busiest:
        calls = sorted(SYNCS, key=lambda c: -per["sync_seconds"][c][r])
        top = calls[0]
        lines.append(
            f"  rank {r}: {totals[r] * 1e3:.3f} ms (most in {top}: "
            f"{per['sync_seconds'][top][r] * 1e3:.3f} ms), lock waits "
            f"{per['lock_waits'][r]} ({per['lock_wait_seconds'][r] * 1e3:.3f}"
            " ms)")
    return lines


def total_ops(w):
    return sum(op_count(w, op, r) for op in OPS for r in REACHES)


def render(doc, path):
    """The whole report as text; windows busiest first."""
    lines = summary_lines(doc, path) + pair_lines(doc) + rank_time_lines(doc)
    for w in sorted(doc.get("windows", []), key=total_ops, reverse=True):
        lines.append("")
        lines += window_lines(w)
    return "\n".join(lines) + "\n"
