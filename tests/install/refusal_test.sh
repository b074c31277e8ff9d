#!/usr/bin/env bash
# The installed launcher refuses what the shim cannot serve, with a clear
# message and exit status 3, before the program starts: an Open MPI program
# (built with mpicc.openmpi; skipped with the reason printed when Open MPI is
# not installed), a program without MPI, a script; a missing program gets 127.
#   refusal_test.sh INSTALL
set -euo pipefail
install=$1
tmp=${TEST_TMPDIR:-$(mktemp -d)}
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-120}
"$install" "$tmp/prefix" >/dev/null
rmashim=$tmp/prefix/bin/rmashim
cd "$tmp"

# expect_refusal STATUS PATTERN COMMAND...: COMMAND fails with STATUS and a
# message matching PATTERN, and prints nothing on stdout (it never ran).
expect_refusal() {
  local status=$1 pattern=$2
  shift 2
  local rc=0
  "$@" >out.txt 2>err.txt || rc=$?
  echo "$*: exit $rc: $(cat err.txt)"
  [[ $rc -eq $status ]] || { echo "expected exit $status" >&2; exit 1; }
  grep -q -- "$pattern" err.txt || { echo "expected '$pattern'" >&2; exit 1; }
  [[ ! -s out.txt ]] || { echo "the program ran: $(cat out.txt)" >&2; exit 1; }
}

expect_refusal 3 'not linked against MPI' "$rmashim" /bin/true
printf '#!/bin/sh\necho script ran\n' >script.sh
chmod +x script.sh
expect_refusal 3 'is a script' "$rmashim" ./script.sh
expect_refusal 127 'not found' "$rmashim" no-such-program-here
expect_refusal 2 'no PROGRAM' "$rmashim" --profile
# --no-check runs what it is given (the script above), preloaded.
[[ "$("$rmashim" --no-check ./script.sh)" == "script ran" ]]

if ! command -v mpicc.openmpi >/dev/null; then
  echo "refusal_test: SKIPPED the Open MPI case: mpicc.openmpi is not installed"
  exit 0
fi
cat >ompi.c <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  puts("the Open MPI program ran");
  MPI_Finalize();
  return 0;
}
C
mpicc.openmpi -o ompi_prog ompi.c
ldd ./ompi_prog | grep 'libmpi\.so\.40' >/dev/null
expect_refusal 3 'linked against Open MPI (libmpi.so.40' "$rmashim" ./ompi_prog
# Under mpirun.mpich every rank refuses and the job fails.
expect_refusal 3 'linked against Open MPI' mpirun.mpich -n 2 "$rmashim" ./ompi_prog
echo "refusal_test: Open MPI, non-MPI and script programs refused"
