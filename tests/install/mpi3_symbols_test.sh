#!/usr/bin/env bash
# librmashim.so must load on an MPI-3 library of MPICH's ABI (MPICH 3.x and
# the vendor MPIs built on it), which has none of MPI-4's functions: every
# reference it makes to one (the large-count PMPI_*_c, sessions, MPIX_)
# must be weak (shim/base/large_count_calls.h), so the dynamic loader
# resolves it to null there instead of refusing the library. Then it must
# work without them: the large-count calls' and the datatype suites run with
# RMASHIM_TEST_WITHOUT_MPI4=1 elsewhere (tests/mpi/BUILD).
#   mpi3_symbols_test.sh librmashim.so
set -euo pipefail
lib=$1
undefined=$(nm -D --undefined-only "$lib")
mpi4=$(awk '$NF ~ /^P?MPIX?_/ && ($NF ~ /_c$/ || $NF ~ /^P?MPI_Session/ || $NF ~ /^P?MPIX_/ ||
                                  $NF ~ /Isendrecv|Info_get_string|Comm_idup_with_info|Psend|Precv|Pready|Parrived/)' \
       <<<"$undefined")
count=$(grep -c . <<<"$mpi4" || true)
strong=$(awk '$1 == "U"' <<<"$mpi4")
if [[ -n "$strong" ]]; then
  echo "FAIL: strong references to MPI-4 functions in $lib:"
  echo "$strong"
  exit 1
fi
# The check must have seen the large-count references it is about.
if (( count < 8 )); then
  echo "FAIL: expected the weak PMPI_*_c references, found $count:"
  echo "$mpi4"
  exit 1
fi
echo "PASS: $count references to MPI-4 functions, all weak"
