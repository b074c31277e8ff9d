// The one place a call on a managed window ends once its full path gave
// its verdict (windows/verdict.h). FinishCall ends put, get and the
// accumulate family (move/transfer.h's ServeTransfer, move/accumulate.h's
// full paths): the profile's count, the request handle of a served
// request-based call, an error raised on the window's handler, or the call
// handed to MPI with the reason counted. FinishSync ends locks, flushes, fence
// and PSCW. The inline fast paths that serve the common case end in their own
// few instructions (wrap_rma.cc, wrap_accumulate.cc, wrap_sync.cc,
// wrap_flush.cc) and count with CountServed where they count.
#ifndef RMASHIM_SHIM_INTERCEPT_FINISH_CALL_H_
#define RMASHIM_SHIM_INTERCEPT_FINISH_CALL_H_

#include <mpi.h>

#include "shim/agent/agent.h"
#include "shim/process/runtime.h"
#include "shim/profile/profile.h"
#include "shim/windows/passthrough.h"
#include "shim/windows/verdict.h"
#include "shim/windows/window.h"

namespace rmashim {

// What a call is, for the profile.
struct Profiled {
  OpKind kind;
  MPI_Count count;
  MPI_Datatype type;
};

// What an operation of `kind` handed to MPI leaves to complete.
inline MpiPending PendingOf(OpKind kind) {
  const bool copies = kind == OpKind::kPut || kind == OpKind::kGet ||
                      kind == OpKind::kRput || kind == OpKind::kRget;
  return copies ? MpiPending::kCopies : MpiPending::kUpdates;
}

// Ends a call to `target` on `w` with verdict `v`. Served: counted when it
// succeeded (not for MPI_PROC_NULL), `*request` (request-based forms) the
// completed request, the error class raised on the window. Passed
// through: counted, and for a node-local target counted as a fallback for
// the verdict's reason; then `mpi(window)` issues it (PassThrough).
template <typename Mpi>
int FinishCall(ManagedWindow& w, int target, Verdict v, const Profiled& what,
               MPI_Request* request, Mpi mpi) {
  const bool counted =
      w.profile() != nullptr && target >= 0 && target < w.comm_size();
  if (!v.passes_through()) {
    if (v.rc() == MPI_SUCCESS) {
      if (counted) {
        CountOp(w.profile(), what.kind, w.reach(target), target, what.count,
                what.type);
      }
      if (request != nullptr) *request = kCompletedRequest;
    }
    return v.raised() ? v.rc() : RaiseOnWindow(w.app_win(), v.rc());
  }
  if (counted) {
    CountOp(w.profile(), what.kind, w.reach(target), target, what.count,
            what.type);
    if (w.target(target).node_local()) {
      CountFallback(w.profile(), v.why());
    } else {
      CountRemoteToMpi(w.profile());
    }
  }
  // MPI orders one origin's accumulates to a location: those sent to the
  // target's agent before are applied first.
  if (w.agent_served() && PendingOf(what.kind) == MpiPending::kUpdates &&
      target >= 0 && target < w.comm_size()) {
    if (const int rc = AgentFlush(w, target)) {
      return RaiseOnWindow(w.app_win(), rc);
    }
  }
  return PassThrough(w, target, PendingOf(what.kind), mpi);
}

// Ends a synchronization call on `w` with verdict `v`, which never passes
// through (the shim calls MPI's synchronization itself where MPI takes
// part): MPI_SUCCESS, an error MPI raised already, or one raised now on
// the window's handler.
inline int FinishSync(const ManagedWindow& w, Verdict v) {
  if (v.ok() || v.raised()) return v.rc();
  return RaiseOnWindow(w.app_win(), v.rc());
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_INTERCEPT_FINISH_CALL_H_
