// Handing a call on a managed window to MPI.
#ifndef RMASHIM_SHIM_PASSTHROUGH_H_
#define RMASHIM_SHIM_PASSTHROUGH_H_

#include <mpi.h>

#include "shim/mpich_abi.h"
#include "shim/runtime.h"
#include "shim/window.h"

namespace rmashim {

// Remembers that `target` now has MPI operations to complete at the next
// flush or unlock. Called after the operation was issued, not before: with
// MPI_THREAD_MULTIPLE another thread's flush of the same target may run in
// between, complete nothing of ours and clear the mark, and our own flush
// would then skip MPI and return before a fetched result has arrived.
inline void NotePassedThrough(ManagedWindow& w, int target) {
  if (target >= 0 && target < w.comm_size()) {
    StateGuard guard(w.state_mutex);
    w.locks[target].mpi_ops_pending = true;
    w.any_mpi_ops_pending = true;
  }
}

// kCompletedRequest (mpich_abi.h) is the request of an operation the shim
// completed when it was issued; the wait/test wrappers (shim/wrap_request.cc)
// recognise it, so a node-local MPI_Rput costs no MPI request object.

}  // namespace rmashim

#endif  // RMASHIM_SHIM_PASSTHROUGH_H_
