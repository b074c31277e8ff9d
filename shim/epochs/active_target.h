// Active-target synchronization (fence, PSCW) served in shared memory for
// windows whose ranks all share one node.
//
// PSCW: MPI_Win_post by target t increments, in each origin's segment
// header, the post counter of t; an origin's access to t waits until that
// counter exceeds the posts it has already matched (so a put is issued as
// soon as t has posted, and t never needs to call MPI for it).
// MPI_Win_complete increments t's `completes`; MPI_Win_wait/test on t waits
// for `completes` to reach the number of origins it has posted to so far.
// MPI_MODE_NOCHECK (which MPI requires on both sides alike) skips the post
// counters. Counters only grow, so consecutive epochs need no reset.
//
// Fence: a sense-reversing barrier on two words in the header of the
// window's lowest node-local rank (rank 0 on a single-node window).
#ifndef RMASHIM_SHIM_EPOCHS_ACTIVE_TARGET_H_
#define RMASHIM_SHIM_EPOCHS_ACTIVE_TARGET_H_

#include <mpi.h>

#include "shim/windows/window.h"

namespace rmashim {

// Waits until `target` has posted for this process's current access epoch:
// ConsumePost waits for the target's next post and marks it seen;
// AwaitPost, inlined into data movement, does so unless it was seen.
void ConsumePost(ManagedWindow& w, int target);
inline void AwaitPost(ManagedWindow& w, int target) {
  if (!w.lock_state(target).post_seen) ConsumePost(w, target);
}

// Waits until every node-local rank of the window has called it: the
// fence barrier of single-node windows, and on windows spanning nodes the
// node-local half of an MPI fence that MPI_MODE_NOPRECEDE lets MPI skip.
void NodeBarrier(ManagedWindow& w);

// Each returns its verdict (windows/verdict.h); the caller ends the call
// with it (FinishSync).
Verdict ShmFence(ManagedWindow& w, int assert);
Verdict ShmPost(ManagedWindow& w, MPI_Group group, int assert);
Verdict ShmStart(ManagedWindow& w, MPI_Group group, int assert);
Verdict ShmComplete(ManagedWindow& w);
Verdict ShmWait(ManagedWindow& w);
Verdict ShmTest(ManagedWindow& w, int* flag);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_EPOCHS_ACTIVE_TARGET_H_
