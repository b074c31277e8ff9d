#!/usr/bin/env python3
"""Checks where a shim run across the two simulated hosts (tests/twohost)
counted its operations: ranks are placed in blocks, the first half on one
host, so on 2 ranks (1+1) no target but the origin itself shares a host
with it, and on 4 ranks (2+2) each rank has one same-host peer.

usage: check_twohost.py --profile RUN.json --ranks N [--managed F,..]
           [--node-served] [other check_engaged.py options, ignored]

Fails (exit 1) unless, summed over the program's managed windows:
- some operations went to the other host, counted "remote" (passed to MPI:
  the shim never serves a remote target), when any went to another rank;
- on 1+1, none is counted "node" (there is no same-host peer);
- on 2+2, when any operation went to another rank, some went to the
  same-host peer, counted "node"; with --node-served the shim also served
  some of those directly (self and node operations minus fallbacks, more
  than the self ones alone; programs whose same-host operations are all
  accumulates or PSCW, which go to MPI on windows spanning hosts, have none).
Prints one summary line on success.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "..", "tools"))
import rmashim_profile as rp  # noqa: E402


def main(argv):
    p = argparse.ArgumentParser(prog="check_twohost.py")
    p.add_argument("--profile", required=True)
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--node-served", action="store_true")
    args, _ = p.parse_known_args(argv)
    doc = rp.load(args.profile)
    managed = [w for w in doc["windows"] if w["managed"]]
    own = sum(rp.op_count(w, ["self"]) for w in managed)
    node = sum(rp.op_count(w, ["node"]) for w in managed)
    remote = sum(rp.op_count(w, ["remote"]) for w in managed)
    served = sum(rp.served_directly(w) for w in managed)
    problems = []
    others = node + remote
    if others and not remote:
        problems.append("no operation counted remote: the other host's ranks "
                        "were taken for node-local ones")
    if args.ranks == 2 and node:
        problems.append("%d operations counted node-local on 1+1, where no "
                        "other rank shares the host" % node)
    if args.ranks == 4 and others:
        if not node:
            problems.append("no operation to the same-host peer (2+2)")
        if args.node_served and served <= own:
            problems.append("the shim served no same-host operation directly "
                            "(%d served, %d to the rank itself)" % (served, own))
    if problems:
        print("TWO-HOST PLACEMENT WRONG (%d ranks):" % args.ranks)
        for text in problems:
            print("  " + text)
        return 1
    print("ops on managed windows: %d own, %d same host, %d other host (to MPI); "
          "%d served directly" % (own, node, remote, served))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
