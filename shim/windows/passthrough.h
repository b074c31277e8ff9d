// Handing a call on a managed window to MPI.
#ifndef RMASHIM_SHIM_WINDOWS_PASSTHROUGH_H_
#define RMASHIM_SHIM_WINDOWS_PASSTHROUGH_H_

#include <mpi.h>

#include "shim/base/mpich_abi.h"
#include "shim/process/runtime.h"
#include "shim/sync/mpi_flush.h"
#include "shim/windows/verdict.h"
#include "shim/windows/window.h"

namespace rmashim {

// Remembers that `target` now has MPI operations of kind `pending` (a
// put or get: kCopies; the accumulate family: kUpdates) to complete at the
// next flush, unlock, fence or complete. Called after the operation was
// issued, not before: with MPI_THREAD_MULTIPLE another thread's flush of
// the same target may run in between, complete nothing of ours and clear
// the mark, and our own flush would then skip MPI and return before a
// fetched result has arrived.
inline void NotePassedThrough(ManagedWindow& w, int target,
                              MpiPending pending) {
  if (target >= 0 && target < w.comm_size()) {
    StateGuard guard(w.state_mutex());
    w.NoteMpiPending(target, pending);
  }
}

// Completes every operation this process passed to MPI on `w`, target by
// target (shim/sync/mpi_flush.h: never MPI_Win_flush_all), in a passive epoch
// MPI knows of on the application's window. Remote completion clears the
// marks. Callers that may run beside other threads' operations on `w` hold
// w.state_mutex().
inline Verdict FlushPassedThrough(ManagedWindow& w, Completion completion) {
  if (!w.mpi_ops_pending()) return Verdict::Served();
  const int rc = FlushEachTarget(
      w.app_win(), w.comm_size(), completion,
      [&](int target) { return w.lock_state(target).passed_to_mpi(); },
      [&](int target) {
        if (completion == Completion::kRemote) w.MpiPendingDone(target);
      });
  if (rc == MPI_SUCCESS && completion == Completion::kRemote) {
    w.AllMpiPendingDone();
  }
  return Verdict::Raised(rc);
}

// The same in MPI's fence and PSCW epochs on a window spanning nodes, where
// MPI_Win_flush is erroneous: every target with puts or gets passed to MPI
// has its endpoint flushed (FlushEndpoint, mpi_flush.h), and MPI's own
// fence or complete then finds them done. A target that was handed only
// the accumulate family needs none: MPI's fence and complete track those
// themselves (MpiPending says how). The marks are cleared.
inline Verdict FlushPassedThroughEndpoints(ManagedWindow& w) {
  if (!w.mpi_ops_pending()) return Verdict::Served();
  for (int target = 0; target < w.comm_size(); ++target) {
    if (Includes(w.lock_state(target).mpi_pending, MpiPending::kCopies)) {
      if (const int rc = FlushEndpoint(w.world_rank(target))) {
        return Verdict::Error(rc);
      }
    }
    w.MpiPendingDone(target);
  }
  w.AllMpiPendingDone();
  return Verdict::Served();
}

// Hands one operation of kind `pending` on `w` to MPI (`call`, with the
// application's window), then notes `target` for the next flush.
template <typename Call>
int PassThrough(ManagedWindow& w, int target, MpiPending pending, Call call) {
  const int rc = call(w.app_win());
  w.CountPassedToMpi();
  NotePassedThrough(w, target, pending);
  return rc;
}

// kCompletedRequest (mpich_abi.h) is the request of an operation the shim
// completed when it was issued; the wait/test wrappers
// (shim/intercept/wrap_request.cc) recognise it, so a node-local MPI_Rput costs
// no MPI request object.

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOWS_PASSTHROUGH_H_
