"""Whether a program can run under librmashim.so: the launcher (tools/rmashim)
asks before preloading, so an Open MPI program, a program with no MPI at all
or a statically linked one gets a clear refusal instead of a crash or a shim
that silently does nothing. The shim is built against MPICH 4.0.2, so the
program must load an MPICH-ABI library (libmpich.so.12 or libmpi.so.12)."""
import os
import re
import shutil
import subprocess

# MPICH's ABI (MPICH >= 3.1, Intel MPI, MVAPICH, Cray MPICH): soname version 12.
MPICH_ABI = re.compile(r"^lib(mpich|mpi)\.so\.12(\.|$)")
# Open MPI: libmpi.so.40 (3.x-5.x), .20 and .1 before, plus its runtime.
OPEN_MPI = re.compile(r"^(libmpi\.so\.(1|20|40)(\.|$)|libopen-(pal|rte)\.so)")
# Any other MPI library.
OTHER_MPI = re.compile(r"^lib(mpi|mpich|pmpi)[._]")


class Refusal(Exception):
    """Why the program cannot run under the shim (the launcher prints it)."""


class NotFound(Refusal):
    """The program does not exist or cannot be executed."""


def resolve(program):
    """The file `program` names: a path, or a command looked up in PATH."""
    if "/" in program:
        path = program
    else:
        path = shutil.which(program)
        if path is None:
            raise NotFound(f"{program}: command not found")
    if not os.path.isfile(path):
        raise NotFound(f"{program}: no such file")
    if not os.access(path, os.X_OK):
        raise NotFound(f"{program}: not executable")
    return path


def libraries(path):
    """(soname, resolved path or None) for every library `path` loads, as the
    dynamic loader would resolve them (ldd); None for a static program."""
    result = subprocess.run(["ldd", path], capture_output=True, text=True,
                            check=False)
    text = result.stdout + result.stderr
    if "not a dynamic executable" in text or "statically linked" in text:
        return None
    libs = []
    for line in result.stdout.splitlines():
        m = re.match(r"\s*(\S+)\s+=>\s+(not found|\S+)", line)
        if m:
            libs.append((m.group(1), None if m.group(2) == "not found"
                         else m.group(2)))
    return libs


def read_magic(path):
    with open(path, "rb") as f:
        return f.read(4)


def check(program):
    """The program's path and the MPICH-ABI library it loads; raises Refusal
    with the reason when the shim cannot serve it."""
    path = resolve(program)
    magic = read_magic(path)
    if magic[:2] == b"#!":
        raise Refusal(
            f"{program} is a script: which MPI it loads cannot be checked. "
            "Run the MPI program itself, or pass --no-check if it loads "
            "MPICH (e.g. python3 with mpi4py built for MPICH).")
    if magic != b"\x7fELF":
        raise Refusal(f"{program} is not an ELF executable")
    libs = libraries(path)
    if libs is None:
        raise Refusal(
            f"{program} is statically linked: LD_PRELOAD cannot interpose on "
            "its MPI calls. Link it against MPICH's shared library "
            "(mpicc.mpich does by default).")
    missing = [name for name, where in libs if where is None]
    for name, where in libs:
        if MPICH_ABI.match(name):
            if where is None:
                raise Refusal(f"{program} needs {name}, which the loader "
                              "cannot find (LD_LIBRARY_PATH?)")
            return path, f"{name} => {where}"
    for name, where in libs:
        if OPEN_MPI.match(name):
            raise Refusal(
                f"{program} is linked against Open MPI ({name} => {where}); "
                "rmashim serves MPICH-ABI programs only (MPICH 4.0.2). "
                "Rebuild it with mpicc.mpich and run it with mpirun.mpich.")
    for name, where in libs:
        if OTHER_MPI.match(name):
            raise Refusal(
                f"{program} is linked against {name} => {where}, not an "
                "MPICH-ABI MPI (libmpich.so.12/libmpi.so.12); rebuild it "
                "with mpicc.mpich.")
    hint = f" (libraries not found: {', '.join(missing)})" if missing else ""
    raise Refusal(
        f"{program} is not linked against MPI{hint}: the shim would have "
        "nothing to do. Build MPI programs with mpicc.mpich.")
