"""Checks what launcher_test.sh got from the installed launcher on
outside_rma.c: the profile JSON holds exactly the counts the program's
structure implies (the shim served the "ring" window itself, or with
--disabled passed all of it to MPI), the report text says so with the
advice line for each fallback, and the PNG is a real picture.
  check_launcher.py RANKS PROFILE.json [--disabled] [--report REPORT.txt]
                    [--png OUT.png]"""
import argparse
import struct

import rmashim_profile

# outside_rma.c's constants.
INTS, ACC_ROUNDS, DYNAMIC_PUTS = 256, 5, 3


def ops(w, op, reach):
    return w["ops"][op][reach]["count"]["sum"]


def op_bytes(w, op, reach):
    return w["ops"][op][reach]["bytes"]["sum"]


def fallbacks(w):
    return {k: v["sum"] for k, v in w["fallbacks"].items() if v["sum"]}


def ring_local_ops(ranks):
    """Every rank: one put and one get to a neighbour (itself on 1 rank),
    ACC_ROUNDS accumulates into rank 0."""
    return 2 * ranks + ACC_ROUNDS * ranks


def check_ring(w, ranks, disabled):
    assert w["flavor"] == "allocate" and w["ranks"] == ranks, w
    assert w["managed"] == (not disabled), w["managed"]
    neighbour = "self" if ranks == 1 else "node"
    for op in ("put", "get"):
        assert ops(w, op, neighbour) == ranks, (op, w["ops"][op])
        assert op_bytes(w, op, neighbour) == ranks * INTS * 4, op
        assert ops(w, op, "remote") == 0, op
    assert ops(w, "accumulate", "self") == ACC_ROUNDS, w["ops"]["accumulate"]
    assert ops(w, "accumulate", "node") == ACC_ROUNDS * (ranks - 1)
    expected = {"opted_out": ring_local_ops(ranks)} if disabled else {}
    assert fallbacks(w) == expected, fallbacks(w)


def check_dynamic(w, ranks):
    assert w["flavor"] == "dynamic" and not w["managed"], w
    reach = "self" if ranks == 1 else "node"
    assert ops(w, "put", reach) == DYNAMIC_PUTS, w["ops"]["put"]
    assert fallbacks(w) == {"unmanaged_flavor": DYNAMIC_PUTS}, fallbacks(w)


def check_profile(path, ranks, disabled):
    doc = rmashim_profile.load(path)
    assert doc["ranks"] == ranks, doc["ranks"]
    names = [w["name"] for w in doc["windows"]]
    assert names == ["ring", "dynamic"], names
    check_ring(doc["windows"][0], ranks, disabled)
    check_dynamic(doc["windows"][1], ranks)
    served = 0 if disabled else ring_local_ops(ranks)
    print(f"check_launcher: profile right, {served} operations served")
    return served


def check_report(path, ranks, disabled, served):
    text = open(path).read()
    local = ring_local_ops(ranks) + DYNAMIC_PUTS
    how = "passed to MPI" if disabled else "managed"
    expected = [
        f"served in shared memory: {served} of {local} node-local operations",
        f'window 0.0 "ring" (allocate, {how}, {ranks} ranks)',
        f'window 0.1 "dynamic" (dynamic, passed to MPI, {ranks} ranks)',
        "advice: dynamic window: use MPI_Win_allocate",
    ]
    if disabled:
        expected.append("advice: opted out: drop the info key")
    for line in expected:
        assert line in text, f"report lacks {line!r}:\n{text}"
    assert text.count("advice:") == (2 if disabled else 1), text
    print("check_launcher: report right")


def check_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    assert data[12:16] == b"IHDR", data[12:16]
    width, height = struct.unpack(">II", data[16:24])
    # Three panels (16 x 12 inches at 100 dpi).
    assert width >= 800 and height >= 600, (width, height)
    assert len(data) >= 20000, len(data)
    assert data[-8:-4] == b"IEND", data[-8:]
    print(f"check_launcher: PNG {width}x{height}, {len(data)} bytes")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ranks", type=int)
    parser.add_argument("profile")
    parser.add_argument("--disabled", action="store_true")
    parser.add_argument("--report")
    parser.add_argument("--png")
    args = parser.parse_args()
    served = check_profile(args.profile, args.ranks, args.disabled)
    if args.report:
        check_report(args.report, args.ranks, args.disabled, served)
    if args.png:
        check_png(args.png)


if __name__ == "__main__":
    main()
