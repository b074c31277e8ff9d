// Active-target synchronization on managed windows. Single-node windows are
// served in shared memory (shim/epochs/active_target.h). Windows spanning nodes
// use MPI's fence and PSCW on the application's window: direct copies in a
// fence epoch are published by a memory fence before MPI_Win_fence, whose
// barrier orders them before the targets' next accesses; in PSCW epochs
// there node-local put/get are direct between MPI's start and complete
// (OpenMpiAccessGroup says why). The accumulate family goes to MPI, except
// on windows whose agents apply it (shim/agent/agent.h), whose fences and
// PSCW ends wait for the agents (AgentCompleteFence, AgentCompletePscw).
#include <mpi.h>

#include <atomic>
#include <vector>

#include "shim/agent/agent.h"
#include "shim/epochs/active_target.h"
#include "shim/intercept/finish_call.h"
#include "shim/process/runtime.h"
#include "shim/sync/mpi_pscw.h"
#include "shim/windows/passthrough.h"
#include "shim/windows/window.h"

using namespace rmashim;  // NOLINT: wrappers below only forward

namespace {

Verdict MpiFence(ManagedWindow& w, int assert) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // What went to MPI is complete before MPI's fence returns (mpi_flush.h).
  if (w.epoch() == AccessEpoch::kFence) {
    StateGuard guard(w.state_mutex());
    if (const Verdict v = FlushPassedThroughEndpoints(w); !v.ok()) return v;
  }
  if (const Verdict v = w.CloseMpiPassiveEpoch(); !v.ok()) return v;
  // Updates sent to remote targets' agents are applied before MPI's fence
  // (every rank takes part, so MPI's fence follows even after an error).
  int agent_rc = MPI_SUCCESS;
  if (w.agent_active_target() && !(assert& MPI_MODE_NOPRECEDE)) {
    agent_rc = AgentCompleteFence(w);
  }
  if (const int rc = PMPI_Win_fence(assert, w.app_win())) {
    return Verdict::Raised(rc);
  }
  const bool opens_epoch = (assert& MPI_MODE_NOSUCCEED) == 0;
  // With MPI_MODE_NOPRECEDE MPI may skip its barrier; direct copies of the
  // new epoch must still wait until every node-local target has fenced.
  if (opens_epoch && (assert& MPI_MODE_NOPRECEDE) && w.has_node_peers()) {
    NodeBarrier(w);
  }
  w.SetEpoch(opens_epoch ? AccessEpoch::kFence : AccessEpoch::kNone);
  return Verdict::Error(agent_rc);  // after the epoch's bookkeeping
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
// On agent windows (ManagedWindow::agent_active_target) every target of the
// start joins the access group: accumulates to remote ones go to their agents,
// and MPI_Win_complete tells each how many.
void OpenMpiAccessGroup(ManagedWindow& w, const std::vector<int>& targets) {
  StateGuard guard(w.state_mutex());
  w.SetEpoch(AccessEpoch::kPscw);
  w.pscw().access_group.clear();
  const bool every_target = w.agent_active_target();
  for (int t : targets) {
    if (t == MPI_UNDEFINED) continue;
    const bool local = w.target(t).node_local();
    if (!local && !every_target) continue;
    w.lock_state(t).in_access_group = true;
    w.lock_state(t).direct = local;
    w.pscw().access_group.push_back(t);
  }
}

// ... and its end, at MPI's complete.
void CloseMpiAccessGroup(ManagedWindow& w) {
  StateGuard guard(w.state_mutex());
  for (int t : w.pscw().access_group) {
    w.lock_state(t).in_access_group = false;
    w.lock_state(t).direct = false;
  }
  w.pscw().access_group.clear();
  w.SetEpoch(AccessEpoch::kNone);
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
Verdict MpiPost(ManagedWindow& w, MPI_Group group, int assert) {
  PostMatching& posts = w.pscw().mpi_posts;
  if (!posts.matches(assert)) {
    const int rc = PMPI_Win_post(group, assert, w.app_win());
    if (rc == MPI_SUCCESS) w.pscw().exposed = true;
    return Verdict::Raised(rc);
  }
  std::vector<int> origins;
  if (!ToWorldRanks(w, w.ToWindowRanks(group), &origins)) {
    return Verdict::Error(MPI_ERR_GROUP);
  }
  if (const int rc =
          PMPI_Win_post(group, assert | MPI_MODE_NOCHECK, w.app_win())) {
    return Verdict::Raised(rc);
  }
  w.pscw().exposed = true;
  return Verdict::Error(posts.Post(origins));
}

// MPI's post on an agent window: the origins whose counts of updates the
// wait or test will receive (mpi_pscw.h), those on other nodes (node-local
// ones move their updates directly and send none: AgentCompletePscw), then
// the post.
Verdict MpiPostCounted(ManagedWindow& w, MPI_Group group, int assert) {
  if (!w.agent_active_target()) return MpiPost(w, group, assert);
  std::vector<int> origins;
  for (const int origin : w.ToWindowRanks(group)) {
    if (origin == MPI_UNDEFINED) return Verdict::Error(MPI_ERR_GROUP);
    if (!w.target(origin).node_local()) origins.push_back(w.world_rank(origin));
  }
  const Verdict v = MpiPost(w, group, assert);
  if (w.pscw().exposed) {
    w.pscw().exposure_origins = std::move(origins);
    w.pscw().counts_received = false;
  }
  return v;
}

Verdict MpiStart(ManagedWindow& w, MPI_Group group, int assert) {
  const std::vector<int> targets = w.ToWindowRanks(group);
  PostMatching& posts = w.pscw().mpi_posts;
  int rc = MPI_SUCCESS;
  if (!posts.matches(assert)) {
    rc = PMPI_Win_start(group, assert, w.app_win());
  } else {
    std::vector<int> world_targets;
    if (!ToWorldRanks(w, targets, &world_targets)) {
      return Verdict::Error(MPI_ERR_GROUP);
    }
    if (const int wait_rc = posts.AwaitPosts(world_targets)) {
      return Verdict::Error(wait_rc);
    }
    rc = PMPI_Win_start(group, assert | MPI_MODE_NOCHECK, w.app_win());
  }
  if (rc == MPI_SUCCESS) OpenMpiAccessGroup(w, targets);
  return Verdict::Raised(rc);
}

// MPI's complete, after what went to MPI has left (mpi_flush.h) and the
// direct copies are published.
// On agent windows the agents' updates go out first, and each target is
// told how many (AgentCompletePscw).
Verdict MpiComplete(ManagedWindow& w) {
  const bool counted =
      w.epoch() == AccessEpoch::kPscw && w.agent_active_target();
  if (w.epoch() == AccessEpoch::kPscw) {
    StateGuard guard(w.state_mutex());
    if (const Verdict v = FlushPassedThroughEndpoints(w); !v.ok()) return v;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);  // direct copies
  // MPI's complete follows even after an error (the targets wait for it).
  const int agent_rc = counted ? AgentCompletePscw(w) : MPI_SUCCESS;
  const int rc = PMPI_Win_complete(w.app_win());
  if (rc == MPI_SUCCESS) CloseMpiAccessGroup(w);
  if (!counted || rc != MPI_SUCCESS) return Verdict::Raised(rc);
  const int sends_rc = w.pscw().mpi_posts.FinishCounts();
  return Verdict::Error(agent_rc != MPI_SUCCESS ? agent_rc : sends_rc);
}

// An agent window's wait or test (`flag` null: wait): the origins' counts
// of updates sent to this process's agent, then the agent's having applied
// them. For a test, *flag says whether both are there. A lost link
// (agent.h: AddAgentArrivals, AwaitAgentArrivals) ends the wait at once
// with its error in *lost, so that MPI's wait still ends the epoch.
Verdict AwaitAgentUpdates(ManagedWindow& w, int* flag, int* lost) {
  PscwState& p = w.pscw();
  if (!p.counts_received) {
    UpdateCount arriving;
    bool all = true;
    const int rc = flag == nullptr ? p.mpi_posts.ReceiveCounts(
                                         p.exposure_origins, &arriving)
                                   : p.mpi_posts.ReceiveSomeCounts(
                                         p.exposure_origins, &all, &arriving);
    if (rc != MPI_SUCCESS) return Verdict::Error(rc);
    if (!all) {
      *flag = 0;
      DriveProgress();
      return Verdict::Served();
    }
    // A loss it reports is reported again below (sticky).
    (void)AddAgentArrivals(w, arriving);
    p.counts_received = true;
  }
  if (flag == nullptr) {
    *lost = AwaitAgentArrivals(w);
  } else {
    bool applied = false;
    *lost = TestAgentArrivals(w, &applied);
    *flag = applied ? 1 : 0;
  }
  return Verdict::Served();
}

// MPI's wait or test (`flag` null for wait), then the exposure epoch's end
// in the shim's post matching.
Verdict MpiWaitOrTest(ManagedWindow& w, int* flag) {
  int lost = MPI_SUCCESS;
  if (w.agent_active_target() && w.pscw().exposed) {
    if (const Verdict v = AwaitAgentUpdates(w, flag, &lost); !v.ok()) return v;
    if (flag != nullptr && !*flag) return Verdict::Served();
  }
  const int rc = flag == nullptr ? PMPI_Win_wait(w.app_win())
                                 : PMPI_Win_test(w.app_win(), flag);
  if (rc != MPI_SUCCESS || (flag != nullptr && !*flag)) {
    return Verdict::Raised(rc);
  }
  w.pscw().exposed = false;
  w.pscw().counts_received = false;
  const int posts_rc = w.pscw().mpi_posts.FinishPosts();
  return Verdict::Error(lost != MPI_SUCCESS ? lost : posts_rc);
}

// The checks of MPI_Win_fence, then the fence of the window's kind.
Verdict Fence(ManagedWindow& w, int assert) {
  if (!ValidAssert(assert, kFenceAsserts)) return Verdict::Error(MPI_ERR_ARG);
  // Nor during an exposure epoch (post without wait), as in MPICH.
  if (!w.may_start_epoch() || w.pscw().exposed) {
    return Verdict::Error(MPI_ERR_RMA_SYNC);
  }
  return w.locks_in_shm() ? ShmFence(w, assert) : MpiFence(w, assert);
}

Verdict Start(ManagedWindow& w, MPI_Group group, int assert) {
  if (!ValidAssert(assert, kStartAsserts)) return Verdict::Error(MPI_ERR_ARG);
  if (!w.may_start_epoch()) return Verdict::Error(MPI_ERR_RMA_SYNC);
  if (w.locks_in_shm()) return ShmStart(w, group, assert);
  if (const Verdict v = w.CloseMpiPassiveEpoch(); !v.ok()) return v;
  return MpiStart(w, group, assert);
}

Verdict Post(ManagedWindow& w, MPI_Group group, int assert) {
  if (!w.locks_in_shm()) {  // MPI's PSCW; the shim still tracks exposure
    if (!IsPassive(w.epoch())) {
      if (const Verdict v = w.CloseMpiPassiveEpoch(); !v.ok()) return v;
    }
    return MpiPostCounted(w, group, assert);
  }
  if (!ValidAssert(assert, kPostAsserts)) return Verdict::Error(MPI_ERR_ARG);
  return ShmPost(w, group, assert);
}

}  // namespace

extern "C" {

int MPI_Win_fence(int assert, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kFence);
  return w ? FinishSync(*w, Fence(*w, assert)) : PMPI_Win_fence(assert, win);
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kStart);
  return w ? FinishSync(*w, Start(*w, group, assert))
           : PMPI_Win_start(group, assert, win);
}

int MPI_Win_complete(MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kComplete);
  if (w == nullptr) return PMPI_Win_complete(win);
  return FinishSync(*w, w->locks_in_shm() ? ShmComplete(*w) : MpiComplete(*w));
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kPost);
  return w ? FinishSync(*w, Post(*w, group, assert))
           : PMPI_Win_post(group, assert, win);
}

int MPI_Win_wait(MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kWait);
  if (w == nullptr) return PMPI_Win_wait(win);
  return FinishSync(
      *w, w->locks_in_shm() ? ShmWait(*w) : MpiWaitOrTest(*w, nullptr));
}

int MPI_Win_test(MPI_Win win, int* flag) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kTest);
  if (w == nullptr) return PMPI_Win_test(win, flag);
  return FinishSync(
      *w, w->locks_in_shm() ? ShmTest(*w, flag) : MpiWaitOrTest(*w, flag));
}

}  // extern "C"
