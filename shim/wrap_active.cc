// Active-target synchronization on managed windows. Single-node windows are
// served in shared memory (shim/active_target.h). Windows spanning nodes use
// MPI's fence and PSCW on the application's window: direct copies in a
// fence epoch are published by a memory fence before MPI_Win_fence, whose
// barrier orders them before the targets' next accesses; PSCW epochs there
// pass every operation through to MPI.
#include <mpi.h>

#include <atomic>

#include "shim/active_target.h"
#include "shim/passthrough.h"
#include "shim/runtime.h"
#include "shim/window.h"

using namespace rmashim;  // NOLINT: wrappers below only forward

namespace {

int MpiFence(ManagedWindow& w, int assert) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // What went to MPI is complete before MPI's fence returns (mpi_flush.h).
  if (w.epoch == AccessEpoch::kFence) {
    StateGuard guard(w.state_mutex);
    if (const int rc = FlushPassedThroughEndpoints(w)) return rc;
  }
  if (const int rc = w.CloseMpiPassiveEpoch()) return rc;
  const int rc = PMPI_Win_fence(assert, w.app_win());
  if (rc != MPI_SUCCESS) return rc;
  const bool opens_epoch = (assert& MPI_MODE_NOSUCCEED) == 0;
  // With MPI_MODE_NOPRECEDE MPI may skip its barrier; direct copies of the
  // new epoch must still wait until every node-local target has fenced.
  if (opens_epoch && (assert& MPI_MODE_NOPRECEDE) && w.has_node_peers()) {
    NodeBarrier(w);
  }
  w.SetEpoch(opens_epoch ? AccessEpoch::kFence : AccessEpoch::kNone);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Win_fence(int assert, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kFence);
  if (w == nullptr) return PMPI_Win_fence(assert, win);
  if (!ValidAssert(assert, kFenceAsserts))
    return RaiseOnWindow(win, MPI_ERR_ARG);
  // Nor during an exposure epoch (post without wait), as in MPICH.
  if (!w->may_start_epoch() || w->pscw.exposed) {
    return RaiseOnWindow(win, MPI_ERR_RMA_SYNC);
  }
  return w->locks_in_shm() ? RaiseOnWindow(win, ShmFence(*w, assert))
                           : MpiFence(*w, assert);
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kStart);
  if (w == nullptr) return PMPI_Win_start(group, assert, win);
  if (!ValidAssert(assert, kStartAsserts))
    return RaiseOnWindow(win, MPI_ERR_ARG);
  if (!w->may_start_epoch()) return RaiseOnWindow(win, MPI_ERR_RMA_SYNC);
  if (w->locks_in_shm()) {
    return RaiseOnWindow(win, ShmStart(*w, group, assert));
  }
  if (const int rc = w->CloseMpiPassiveEpoch()) return rc;
  const int rc = PMPI_Win_start(group, assert, win);
  if (rc == MPI_SUCCESS) w->SetEpoch(AccessEpoch::kPscw);
  return rc;
}

int MPI_Win_complete(MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kComplete);
  if (w == nullptr) return PMPI_Win_complete(win);
  if (w->locks_in_shm()) return RaiseOnWindow(win, ShmComplete(*w));
  // What went to MPI leaves before MPI's complete returns (mpi_flush.h).
  if (w->epoch == AccessEpoch::kPscw) {
    StateGuard guard(w->state_mutex);
    if (const int rc = FlushPassedThroughEndpoints(*w)) return rc;
  }
  const int rc = PMPI_Win_complete(win);
  if (rc == MPI_SUCCESS) w->SetEpoch(AccessEpoch::kNone);
  return rc;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kPost);
  if (w == nullptr) return PMPI_Win_post(group, assert, win);
  if (!w->locks_in_shm()) {  // MPI's PSCW; the shim still tracks exposure
    if (!IsPassive(w->epoch)) {
      if (const int rc = w->CloseMpiPassiveEpoch()) return rc;
    }
    const int rc = PMPI_Win_post(group, assert, win);
    if (rc == MPI_SUCCESS) w->pscw.exposed = true;
    return rc;
  }
  if (!ValidAssert(assert, kPostAsserts))
    return RaiseOnWindow(win, MPI_ERR_ARG);
  return RaiseOnWindow(win, ShmPost(*w, group, assert));
}

int MPI_Win_wait(MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kWait);
  if (w == nullptr) return PMPI_Win_wait(win);
  if (!w->locks_in_shm()) {
    const int rc = PMPI_Win_wait(win);
    if (rc == MPI_SUCCESS) w->pscw.exposed = false;
    return rc;
  }
  return RaiseOnWindow(win, ShmWait(*w));
}

int MPI_Win_test(MPI_Win win, int* flag) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kTest);
  if (w == nullptr) return PMPI_Win_test(win, flag);
  if (!w->locks_in_shm()) {
    const int rc = PMPI_Win_test(win, flag);
    if (rc == MPI_SUCCESS && *flag) w->pscw.exposed = false;
    return rc;
  }
  return RaiseOnWindow(win, ShmTest(*w, flag));
}

}  // extern "C"
