// Active-target synchronization on managed windows. Single-node windows are
// served in shared memory (shim/epochs/active_target.h). Windows spanning nodes
// use MPI's fence and PSCW on the application's window: direct copies in a
// fence epoch are published by a memory fence before MPI_Win_fence, whose
// barrier orders them before the targets' next accesses; in PSCW epochs
// there node-local put/get are direct between MPI's start and complete
// (OpenMpiAccessGroup says why) and the accumulate family goes to MPI.
#include <mpi.h>

#include <atomic>
#include <vector>

#include "shim/epochs/active_target.h"
#include "shim/process/runtime.h"
#include "shim/sync/mpi_pscw.h"
#include "shim/windows/passthrough.h"
#include "shim/windows/window.h"

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

// MPI's PSCW on a window spanning nodes: the targets of this start that
// share this node are accessed directly until MPI_Win_complete (CheckEpoch).
// MpiStart returns only once every target's post has arrived (MpiPost's
// message, mpi_pscw.h; pscw_early_post checks it), or the program asserted
// MPI_MODE_NOCHECK that they all had. (Where the shim cannot match posts,
// PostMatching::is_open, MPICH's start may return early, for MPI's own
// operations too.) Then: each target's stores before its post
// are visible and it makes no conflicting access to its window until its
// MPI_Win_wait, which returns after this origin's complete message, sent
// after the copies (the fence in MPI_Win_complete). Accumulates stay MPI's
// (Admit).
void OpenMpiAccessGroup(ManagedWindow& w, const std::vector<int>& targets) {
  StateGuard guard(w.state_mutex);
  w.SetEpoch(AccessEpoch::kPscw);
  w.pscw.access_group.clear();
  for (int t : targets) {
    if (t == MPI_UNDEFINED || !w.target(t).node_local()) continue;
    w.locks[t].in_access_group = true;
    w.locks[t].direct = true;
    w.pscw.access_group.push_back(t);
  }
}

// MPI_COMM_WORLD's ranks of window ranks `ranks`, for PostMatching; false
// if one is not in the window.
bool ToWorldRanks(const ManagedWindow& w, const std::vector<int>& ranks,
                  std::vector<int>* world) {
  world->clear();
  for (int r : ranks) {
    if (r == MPI_UNDEFINED) return false;
    world->push_back(w.world_rank(r));
  }
  return true;
}

// MPI's post and start with the shim matching posts to starts (mpi_pscw.h).
// MpiPost notes the exposure epoch once MPI's post has opened it.
int MpiPost(ManagedWindow& w, MPI_Group group, int assert) {
  PostMatching& posts = w.pscw.mpi_posts;
  if (!posts.matches(assert)) {
    const int rc = PMPI_Win_post(group, assert, w.app_win());
    if (rc == MPI_SUCCESS) w.pscw.exposed = true;
    return rc;
  }
  std::vector<int> origins;
  if (!ToWorldRanks(w, w.ToWindowRanks(group), &origins)) {
    return RaiseOnWindow(w.app_win(), MPI_ERR_GROUP);
  }
  const int rc = PMPI_Win_post(group, assert | MPI_MODE_NOCHECK, w.app_win());
  if (rc != MPI_SUCCESS) return rc;
  w.pscw.exposed = true;
  return RaiseOnWindow(w.app_win(), posts.Post(origins));
}

int MpiStart(ManagedWindow& w, MPI_Group group, int assert) {
  const std::vector<int> targets = w.ToWindowRanks(group);
  PostMatching& posts = w.pscw.mpi_posts;
  int rc = MPI_SUCCESS;
  if (!posts.matches(assert)) {
    rc = PMPI_Win_start(group, assert, w.app_win());
  } else {
    std::vector<int> world_targets;
    if (!ToWorldRanks(w, targets, &world_targets)) {
      return RaiseOnWindow(w.app_win(), MPI_ERR_GROUP);
    }
    if (const int wait_rc = posts.AwaitPosts(world_targets)) {
      return RaiseOnWindow(w.app_win(), wait_rc);
    }
    rc = PMPI_Win_start(group, assert | MPI_MODE_NOCHECK, w.app_win());
  }
  if (rc == MPI_SUCCESS) OpenMpiAccessGroup(w, targets);
  return rc;
}

void CloseMpiAccessGroup(ManagedWindow& w) {
  StateGuard guard(w.state_mutex);
  for (int t : w.pscw.access_group) {
    w.locks[t].in_access_group = false;
    w.locks[t].direct = false;
  }
  w.pscw.access_group.clear();
  w.SetEpoch(AccessEpoch::kNone);
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
  return MpiStart(*w, group, assert);
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
  std::atomic_thread_fence(std::memory_order_seq_cst);  // direct copies
  const int rc = PMPI_Win_complete(win);
  if (rc == MPI_SUCCESS) CloseMpiAccessGroup(*w);
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
    return MpiPost(*w, group, assert);
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
    if (rc != MPI_SUCCESS) return rc;
    w->pscw.exposed = false;
    return RaiseOnWindow(win, w->pscw.mpi_posts.FinishPosts());
  }
  return RaiseOnWindow(win, ShmWait(*w));
}

int MPI_Win_test(MPI_Win win, int* flag) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kTest);
  if (w == nullptr) return PMPI_Win_test(win, flag);
  if (!w->locks_in_shm()) {
    const int rc = PMPI_Win_test(win, flag);
    if (rc != MPI_SUCCESS || !*flag) return rc;
    w->pscw.exposed = false;
    return RaiseOnWindow(win, w->pscw.mpi_posts.FinishPosts());
  }
  return RaiseOnWindow(win, ShmTest(*w, flag));
}

}  // extern "C"
