"""Macros that run MPI programs under mpirun on several rank counts and
simulated node layouts."""

RANKS = [2, 3, 4]
LAYOUTS = ["node", "oddeven", "cliques3"]
SHIM = "//shim:librmashim.so"

def mpi_test(name, binary, ranks = RANKS, layouts = LAYOUTS, preload = True,
             env = {}, size = "medium", tags = [], args = []):
    """One sh_test per (ranks, layout): `binary` under mpirun, with the shim
    preloaded unless preload is False. A test_suite `name` groups them."""
    tests = []
    for n in ranks:
        for layout in layouts:
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
    native.test_suite(name = name, tests = tests)

def mpi_diff_test(name, binary, ranks = RANKS, layouts = LAYOUTS, args = [],
                  size = "medium", tags = []):
    """Runs `binary` natively and under the shim; outputs must be identical."""
    tests = []
    for n in ranks:
        for layout in layouts:
            test = "%s_%dranks_%s" % (name, n, layout)
            native.sh_test(
                name = test,
                srcs = ["//tests:diff_native_vs_shim.sh"],
                args = [str(n), layout, "$(rootpath %s)" % SHIM,
                        "$(rootpath %s)" % binary] + args,
                data = [binary, SHIM, "//tests:run_mpi.sh"],
                size = size,
                tags = tags + ["mpi"],
            )
            tests.append(test)
    native.test_suite(name = name, tests = tests)
