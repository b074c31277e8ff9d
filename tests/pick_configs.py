#!/usr/bin/env python3
"""One configuration of each MPI test suite, for the runs that cannot afford
the whole rank x layout grid (scripts/test.sh --quick and its sanitizer
builds, docs/testing.md "Where the time goes").

Reads test labels (one per line, as `bazel query` prints them) and prints,
for every suite whose tests end in _<n>ranks_<layout> (tests/mpi_test.bzl),
the one configuration it prefers: 3 ranks on the odd-even split first (a
node-local pair, ranks 0 and 2, and a remote rank, so both the shim's
shared-memory paths and the paths between nodes run), then 2 ranks on one
node, then any other of at most 4 ranks. Suites with only bigger runs (the
oversubscribed stress runs) and labels outside the grid print nothing.
"""
import re
import sys

GRID = re.compile(r"^(?P<suite>.+)_(?P<ranks>\d+)ranks_(?P<layout>[a-z0-9]+)$")
PREFERRED = [(3, "oddeven"), (2, "node"), (4, "oddeven"), (3, "cliques3"),
             (4, "node"), (4, "cliques3"), (2, "oddeven")]
MAX_RANKS = 4


def rank_of(config):
    """Sort key: preferred configurations first, then fewer ranks."""
    ranks, layout = config
    if config in PREFERRED:
        return (0, PREFERRED.index(config))
    return (1, ranks, layout)


def pick(labels):
    """suite -> its chosen label, in first-seen order of suites."""
    configs = {}
    for label in labels:
        m = GRID.match(label)
        if not m or int(m["ranks"]) > MAX_RANKS:
            continue
        configs.setdefault(m["suite"], []).append(
            ((int(m["ranks"]), m["layout"]), label))
    return [min(found, key=lambda c: rank_of(c[0]))[1]
            for found in configs.values()]


def main():
    labels = [line.strip() for line in sys.stdin if line.strip()]
    for label in pick(labels):
        print(label)


if __name__ == "__main__":
    main()
