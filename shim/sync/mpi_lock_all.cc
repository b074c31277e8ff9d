// MPI's shared locks on every target, in rank order (mpi_lock_all.h).
#include "shim/sync/mpi_lock_all.h"

namespace rmashim {

int LockEveryTargetShared(MPI_Win win, int size) {
  for (int target = 0; target < size; ++target) {
    const int rc = PMPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    if (rc == MPI_SUCCESS) continue;
    for (int locked = 0; locked < target; ++locked) {
      PMPI_Win_unlock(locked, win);
    }
    return rc;
  }
  return MPI_SUCCESS;
}

int UnlockEveryTarget(MPI_Win win, int size) {
  int first_error = MPI_SUCCESS;
  for (int target = 0; target < size; ++target) {
    const int rc = PMPI_Win_unlock(target, win);
    if (first_error == MPI_SUCCESS) first_error = rc;
  }
  return first_error;
}

}  // namespace rmashim
