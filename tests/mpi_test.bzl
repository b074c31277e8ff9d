"""Macros that run MPI programs under mpirun.mpich on several rank counts and
simulated node layouts."""

RANKS = [2, 3, 4]
LAYOUTS = ["node", "oddeven", "cliques3"]
SHIM = "//shim:librmashim.so"

def distinct_layout(n, layout):
    """Whether `layout` on `n` ranks is a placement no other layout of the
    list gives: cliques3 puts rank r on node r % 3, so on 2 ranks it is the
    odd-even split again (ranks 0 and 1 on two nodes) and is skipped."""
    return not (layout == "cliques3" and n == 2)

# Left out of the default grid (RANKS x LAYOUTS) of the MPI suites, each a
# placement another configuration of the grid runs (docs/testing.md "Where
# the time goes"): 3 ranks on one node (node-local peers only, as on 2 and
# 4); 4 ranks on the odd-even split (two nodes of two: a node-local pair,
# remote targets on a node of two and remote origins from one, which 4
# ranks on three cliques, nodes {0, 3}, {1} and {2}, hold too); 3 ranks on
# three cliques (three nodes of one: every target remote, as on 2 ranks on
# the split, three nodes, as on 4 ranks on three cliques). The differential
# programs (mpi_diff_test) keep the last two: they run native MPICH beside
# the shim, and MPICH's own PSCW hang on windows spanning nodes showed on 3
# ranks on three cliques (pscw_ring).
SUITE_GRID_OMITS = [(3, "node"), (4, "oddeven"), (3, "cliques3")]
DIFF_GRID_OMITS = [(3, "node")]

def in_grid(n, layout, ranks, layouts, omits = SUITE_GRID_OMITS):
    """Whether the default grid (RANKS x LAYOUTS) keeps (n, layout): not
    where `omits` names it. A list a test names itself keeps every entry."""
    return not (ranks == RANKS and layouts == LAYOUTS and (n, layout) in omits)

def mpi_test(name, binary, ranks = RANKS, layouts = LAYOUTS, preload = True,
             env = {}, size = "medium", tags = [], args = [],
             layouts_by_ranks = {}):
    """One sh_test per (ranks, layout): `binary` under mpirun, with the shim
    preloaded unless preload is False; layouts_by_ranks narrows the layouts
    for some rank counts (e.g. {16: ["oddeven"]}). A test_suite `name`
    groups them. There is no `flaky`: an intermittent failure is a bug to
    find."""
    tests = []
    for n in ranks:
        for layout in layouts_by_ranks.get(n, layouts):
            if not distinct_layout(n, layout) or not in_grid(n, layout, ranks, layouts):
                continue
            test = "%s_%dranks_%s" % (name, n, layout)
            data = [binary] + ([SHIM] if preload else [])
            sh_args = [str(n), layout, "$(rootpath %s)" % SHIM if preload else "none",
                       "$(rootpath %s)" % binary] + args
            native.sh_test(
                name = test,
                srcs = ["//tests:run_mpi.sh"],
                args = sh_args,
                data = data,
                env = env,
                size = size,
                tags = tags + ["mpi"],
            )
            tests.append(test)
    # A suite lists its tests explicitly, which would pull manual ones into
    # `bazel test //...`; so it is manual when they are.
    native.test_suite(name = name, tests = tests,
                      tags = ["manual"] if "manual" in tags else [])

def mpi_diff_test(name, binary, ranks = RANKS, layouts = LAYOUTS, args = [],
                  size = "medium", tags = [], managed = [], unmanaged = [],
                  served = {}, fallbacks = {}, warnings = [], env = {},
                  native_reference = True):
    """Runs `binary` natively and under the shim; outputs must be identical,
    and the shim run's profile must show the shim engaged as declared
    (tests/profile/check_engaged.py):

    managed: window flavors ("allocate", "shared", "create", "dynamic") the
        program creates that the shim must manage: each appears, every
        window of it is managed.
    unmanaged: flavors it creates that must pass to MPI (dynamic).
        A window of any other flavor fails the test.
    served: the least number of operations served directly (on managed
        windows: self and node operations minus fallbacks, summed over
        ranks), by "LAYOUT" or "RANKS/LAYOUT" (which wins); every (ranks,
        layout) the test runs on needs a value.
    fallbacks: by layout, the fallback reasons ("reason" or
        "reason:flavor", docs/using-and-tuning.md "Profiling") allowed to occur; a dynamic
        window's unmanaged_flavor always is.
    warnings: regexes matching the "rmashim: ..." stderr warnings the run
        may print (none by default).
    env: environment of both runs (e.g. UCX_TLS for MPI's transport).
    native_reference: False where native MPICH cannot run the program: the
        shim run alone, judged by the program's own checks and the
        engagement check.
    """
    if not managed and not unmanaged:
        fail("mpi_diff_test %s: declare the window flavors (managed, unmanaged)" % name)
    tests = []
    for n in ranks:
        for layout in layouts:
            if not distinct_layout(n, layout) or \
               not in_grid(n, layout, ranks, layouts, DIFF_GRID_OMITS):
                continue
            test = "%s_%dranks_%s" % (name, n, layout)
            least = served.get("%d/%s" % (n, layout), served.get(layout))
            if least == None:
                fail("mpi_diff_test %s: no served expectation for %d ranks, layout %s" %
                     (name, n, layout))
            check = [] if native_reference else ["--shim-only"]
            check.append("--min-served=%d" % least)
            if managed:
                check.append("--managed=" + ",".join(managed))
            if unmanaged:
                check.append("--unmanaged=" + ",".join(unmanaged))
            if fallbacks.get(layout):
                check.append("--allow-fallback=" + ",".join(fallbacks[layout]))
            # Bazel splits args like a shell: one quoted word per regex.
            check += ["--allow-warning='%s'" % w for w in warnings]
            native.sh_test(
                name = test,
                srcs = ["//tests:diff_native_vs_shim.sh"],
                args = check + ["--", str(n), layout, "$(rootpath %s)" % SHIM,
                                "$(rootpath %s)" % binary] + args,
                data = [binary, SHIM, "//tests:run_mpi.sh",
                        "//tests/profile:check_engaged"],
                env = env,
                size = size,
                tags = tags + ["mpi"],
            )
            tests.append(test)
    # A suite lists its tests explicitly, which would pull manual ones into
    # `bazel test //...`; so it is manual when they are.
    native.test_suite(name = name, tests = tests,
                      tags = ["manual"] if "manual" in tags else [])

def mpi_gtest(name, srcs, deps = [], linkopts = [], suites = {},
              main = "//tests:mpi_gtest_main"):
    """A GoogleTest MPI program and the suites that run it: `name`_bin built
    from `srcs` with the shared MPI GoogleTest main (`main`: the
    MPI_THREAD_MULTIPLE one, //tests:mpi_gtest_main_thread_multiple, where
    the program's threads call MPI) and test utilities (plus `deps`,
    `linkopts`), and one mpi_test per entry of `suites` (suite name ->
    mpi_test's other arguments: args, layouts, ranks, env, size, tags,
    preload)."""
    binary = name + "_bin"
    native.cc_binary(
        name = binary,
        testonly = True,
        srcs = srcs,
        deps = [main, "//tests:mpi_test_util"] + deps,
        linkopts = linkopts,
    )
    for suite, kwargs in suites.items():
        mpi_test(name = suite, binary = ":" + binary, **kwargs)

def dart_gtest(name, srcs, suites = {}):
    """A GoogleTest DART program (main() runs dart_init and dart_exit and
    links libdart.so: tests/dart/dart_gtest_main.cc) and the suites that run it,
    as mpi_gtest; the suites run without the shim preloaded unless one says
    preload = True."""
    binary = name + "_bin"
    native.cc_binary(
        name = binary,
        testonly = True,
        srcs = srcs,
        deps = [":dart_gtest_main", ":dart_test_util"],
    )
    for suite, kwargs in suites.items():
        args = {"preload": False}
        args.update(kwargs)
        mpi_test(name = suite, binary = ":" + binary, **args)
