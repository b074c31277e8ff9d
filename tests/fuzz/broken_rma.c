/* A deliberately wrong RMA layer, preloaded in the shim's place by
 * //tests/fuzz:model_catches_wrong_rma_test: it drops every fifth MPI_Put
 * and applies MPI_SUM accumulates as MPI_REPLACE. rma_fuzz's model check
 * must report the runs it corrupts; a checker that passes them asserts
 * nothing. */
#include <mpi.h>

static int puts_seen;

int MPI_Put(const void *origin, int origin_count, MPI_Datatype origin_type,
            int target, MPI_Aint disp, int target_count,
            MPI_Datatype target_type, MPI_Win win) {
  if (++puts_seen % 5 == 0) return MPI_SUCCESS;
  return PMPI_Put(origin, origin_count, origin_type, target, disp, target_count,
                  target_type, win);
}

int MPI_Accumulate(const void *origin, int origin_count,
                   MPI_Datatype origin_type, int target, MPI_Aint disp,
                   int target_count, MPI_Datatype target_type, MPI_Op op,
                   MPI_Win win) {
  return PMPI_Accumulate(origin, origin_count, origin_type, target, disp,
                         target_count, target_type,
                         op == MPI_SUM ? MPI_REPLACE : op, win);
}
