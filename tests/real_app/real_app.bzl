"""real_app_test: one real application natively and under the shim
(run_real_app.py), docs/using-and-tuning.md "Real applications"."""

SHIM = "//shim:librmashim.so"
RUNNER = "//tests:run_mpi.sh"

def _quote(s):
    # Test args are split like a Bourne shell command line: single quotes
    # keep regexes (spaces, backslashes) in one piece.
    return "'" + s.replace("'", "'\\''") + "'"

def real_app_test(
        name,
        program,
        ranks,
        layout,
        program_args = [],
        inputs = [],
        env = [],
        values = [],
        lines = [],
        answered = None,
        profile = [],
        native_timeout = 60,
        shim_timeout = 120,
        size = "medium",
        tags = []):
    """program: a label (built here) or an absolute path (a Debian package's
    binary). values: [name, regex, reference, tolerance] lists; lines:
    regexes that must match; profile: check_engaged.py options for the shim
    run (--managed, --min-served, --allow-fallback, ...)."""
    data = [
        ":run_real_app.py",
        ":check_served.py",
        "//tests/profile:check_engaged",
        RUNNER,
        SHIM,
    ] + inputs
    if program.startswith("/"):
        program_arg = program
    else:
        data.append(program)
        program_arg = "$(rootpath %s)" % program
    args = [
        "--name",
        name,
        "--ranks",
        str(ranks),
        "--layout",
        layout,
        "--runner",
        "$(rootpath %s)" % RUNNER,
        "--shim",
        "$(rootpath %s)" % SHIM,
        "--native-timeout",
        str(native_timeout),
        "--shim-timeout",
        str(shim_timeout),
    ]
    for e in env:
        args += ["--env", _quote(e)]
    for f in inputs:
        args += ["--input", "$(rootpath %s)" % f]
    for v in values:
        args += ["--value", _quote(v[0]), _quote(v[1]), v[2], v[3]]
    for l in lines:
        args += ["--line", _quote(l)]
    if answered:
        args += ["--answered", _quote(answered)]
    for p in profile:
        args += ["--profile-arg=" + p]
    args += ["--", program_arg] + program_args
    native.sh_test(
        name = name,
        srcs = [":run_real_app.py"],
        args = args,
        data = data,
        size = size,
        tags = tags + ["real_app", "mpi"],
    )
