#include "shim/active_target.h"

#include <atomic>

#include "shim/passthrough.h"
#include "shim/runtime.h"
#include "shim/shm_lock.h"

namespace rmashim {

void NodeBarrier(ManagedWindow& w) {
  SegmentHeader& root = w.header(w.first_node_rank());
  const int parties = w.node_size();
  const uint32_t generation =
      root.fence_generation.load(std::memory_order_acquire);
  if (root.fence_arrived.fetch_add(1, std::memory_order_acq_rel) ==
      static_cast<uint32_t>(parties - 1)) {
    root.fence_arrived.store(0, std::memory_order_relaxed);
    root.fence_generation.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  Backoff backoff;
  while (root.fence_generation.load(std::memory_order_acquire) == generation) {
    backoff.Wait();
  }
}

void AwaitPostSlow(ManagedWindow& w, int target) {
  TargetLockState& s = w.locks[target];
  uint32_t& consumed = w.pscw.posts_consumed[target];
  if (!w.pscw.access_nocheck) {
    std::atomic<uint32_t>& posted = w.header(w.rank()).post_counters()[target];
    Backoff backoff;
    while (posted.load(std::memory_order_acquire) == consumed) {
      backoff.Wait();
    }
  }
  StateGuard guard(w.state_mutex);
  if (s.post_seen) return;  // another thread matched it meanwhile
  if (!w.pscw.access_nocheck) ++consumed;
  s.post_seen = true;
  s.direct = true;  // PSCW here is the shared-memory one
}

int ShmFence(ManagedWindow& w, int assert) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const int rc = FlushPassedThrough(w, Completion::kRemote);
  // With nothing before and nothing after, the fence orders nothing.
  const bool noop = (assert & MPI_MODE_NOPRECEDE) && (assert & MPI_MODE_NOSUCCEED);
  if (!noop) NodeBarrier(w);
  w.SetEpoch((assert & MPI_MODE_NOSUCCEED) ? AccessEpoch::kNone
                                            : AccessEpoch::kFence);
  return rc;
}

int ShmPost(ManagedWindow& w, MPI_Group group, int assert) {
  if (w.pscw.exposed) return MPI_ERR_RMA_SYNC;
  const std::vector<int> origins = w.ToWindowRanks(group);
  for (int o : origins) {
    if (o == MPI_UNDEFINED) return MPI_ERR_GROUP;
  }
  // Local stores to the window happen before any origin's access.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  StateGuard guard(w.state_mutex);
  if (!(assert & MPI_MODE_NOCHECK)) {
    for (int o : origins) {
      w.header(o).post_counters()[w.rank()].fetch_add(
          1, std::memory_order_release);
    }
  }
  w.pscw.expected_completes += origins.size();
  w.pscw.exposed = true;
  return MPI_SUCCESS;
}

int ShmStart(ManagedWindow& w, MPI_Group group, int assert) {
  std::vector<int> targets = w.ToWindowRanks(group);
  for (int t : targets) {
    if (t == MPI_UNDEFINED) return MPI_ERR_GROUP;
  }
  StateGuard guard(w.state_mutex);
  for (int t : targets) {
    w.locks[t].in_access_group = true;
    w.locks[t].post_seen = false;
  }
  w.pscw.access_group = std::move(targets);
  w.pscw.access_nocheck = (assert & MPI_MODE_NOCHECK) != 0;
  w.SetEpoch(AccessEpoch::kPscw);
  return MPI_SUCCESS;
}

int ShmComplete(ManagedWindow& w) {
  if (w.epoch != AccessEpoch::kPscw) return MPI_ERR_RMA_SYNC;
  const int rc = FlushPassedThrough(w, Completion::kRemote);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int t : w.pscw.access_group) {
    AwaitPost(w, t);  // a target we never accessed must still have posted
    w.header(t).completes.fetch_add(1, std::memory_order_release);
    w.locks[t].in_access_group = false;
    w.locks[t].post_seen = false;
    w.locks[t].direct = false;
  }
  w.pscw.access_group.clear();
  w.SetEpoch(AccessEpoch::kNone);
  return rc;
}

int ShmWait(ManagedWindow& w) {
  if (!w.pscw.exposed) return MPI_ERR_RMA_SYNC;
  std::atomic<uint64_t>& completes = w.header(w.rank()).completes;
  Backoff backoff;
  while (completes.load(std::memory_order_acquire) < w.pscw.expected_completes) {
    backoff.Wait();
  }
  w.pscw.exposed = false;
  return MPI_SUCCESS;
}

int ShmTest(ManagedWindow& w, int* flag) {
  if (!w.pscw.exposed) return MPI_ERR_RMA_SYNC;
  *flag = w.header(w.rank()).completes.load(std::memory_order_acquire) >=
          w.pscw.expected_completes;
  if (*flag) {
    w.pscw.exposed = false;
  } else {
    DriveProgress();  // a polling target must still serve MPI operations
  }
  return MPI_SUCCESS;
}

}  // namespace rmashim
