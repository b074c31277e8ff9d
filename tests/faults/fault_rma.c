/* RMA programs for the fault tests (tests/faults/faults.sh).
 *
 *   fault_rma windows SPEC...
 *     Creates one MPI_Win_allocate window per SPEC, all alive together, and
 *     drives fence, exclusive-lock put/get, lock_all accumulate,
 *     fetch_and_op, compare_and_swap and get_accumulate traffic on all of
 *     them, interleaved, touching both ends of every window. Every result is
 *     checked against its known value (exit 1 on a mismatch); rank 0 prints
 *     per-window checksums, identical natively and under the shim.
 *     SPEC = R0_MIB:OTHERS_MIB:EXPECT: rank 0 asks for R0_MIB MiB, every
 *     other rank for OTHERS_MIB; EXPECT m (managed by the shim) or u
 *     (unmanaged: the shim fell back to a plain MPI window), checked on
 *     every rank when the shim is preloaded; an optional 4th field c makes
 *     it an MPI_Win_create window over calloc'ed memory (a: allocate).
 *     A first SPEC "fill" makes rank 0 fill /dev/shm to the last page
 *     before any window is created (the file is removed at the end).
 *     A SPEC "then" ends a group: the windows before it are freed before
 *     those after it are created (freed segments may still be cached).
 *
 *   fault_rma alive MODE PIDDIR
 *     Windows of every flavor the shim manages (allocate, allocate_shared,
 *     create) alive together, RMA traffic on all of them; every rank writes
 *     "pid parent-pid" to PIDDIR/rank.N first. While they are alive rank 0
 *     checks that no rmashim.* name is left in /dev/shm. MODE:
 *       exit   traffic, free, finalize; rank 0 prints "alive exit ok"
 *       abort  the last rank calls MPI_Abort amid the others' traffic
 *       kill   the last rank SIGKILLs itself amid the others' traffic
 *     In abort/kill modes the surviving ranks keep up passive-target
 *     traffic until the launcher ends them (or fail after 40 s).
 *
 *   fault_rma churn PIDDIR
 *     Creates and frees windows of every flavor in a loop until killed (the
 *     test kills one rank at a random moment, usually inside a window
 *     creation).
 *
 * main is here; the modes are in fault_rma_windows.c and fault_rma_alive.c,
 * the helpers they share in fault_rma_util.c (one file each, to keep every
 * file to one topic).
 */
#include <string.h>

#include "tests/faults/fault_rma_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks > 64) Fail("at most 64 ranks");
  if (argc >= 3 && strcmp(argv[1], "windows") == 0) {
    /* Each group of SPECs up to a "then" in turn. */
    for (int first = 2, end = 2; first < argc; first = end + 1) {
      end = first;
      while (end < argc && strcmp(argv[end], "then") != 0) ++end;
      if (end == first) Fail("empty group of window specs");
      RunWindows(end - first, argv + first);
    }
  } else if (argc == 4 && strcmp(argv[1], "alive") == 0) {
    RunAlive(argv[2], argv[3]);
  } else if (argc == 3 && strcmp(argv[1], "churn") == 0) {
    RunChurn(argv[2]);
  } else {
    Fail("usage: fault_rma windows SPEC... | alive MODE PIDDIR | churn PIDDIR");
  }
  MPI_Finalize();
  return 0;
}
