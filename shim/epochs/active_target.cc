#include "shim/epochs/active_target.h"

#include <atomic>

#include "shim/process/runtime.h"
#include "shim/sync/shm_lock.h"
#include "shim/windows/passthrough.h"

namespace rmashim {

// A dissemination barrier (Hensgen, Finkel and Manber) over the node's
// ranks of the window: in round k each rank adds 1 to entry k of the rank
// 2^k above it (modulo the node size) and waits until its own entry k has
// been bumped as often as it has passed barriers. After ceil(log2 n)
// rounds every rank has heard, directly or through others, from every
// rank's arrival: the release/acquire pairs chain each rank's stores before
// the barrier to every rank's loads after it. Each rank waits on its own
// header's line, written by one rank per round, so nothing on the path is
// shared by all n ranks (a central counter serializes n atomics on one
// line). The counters only grow, by one per barrier from the one rank that
// writes each: a rank waits for entry k to reach the number of barriers it
// has passed, and a partner already in the next barrier has added its next
// arrival too, which `>=` accepts (that partner has left this barrier's
// round k behind); the next barrier finds its own arrival counted.
void NodeBarrier(ManagedWindow& w) {
  const int n = w.node_size();
  const uint32_t passed = w.PassNodeBarrier();
  if (n <= 1) return;
  const int me = w.node_index();
  std::atomic<uint32_t>* mine = w.header(w.rank()).barrier_arrivals;
  for (int k = 0, d = 1; d < n; ++k, d *= 2) {
    SegmentHeader& partner = w.header(w.node_rank((me + d) % n));
    partner.barrier_arrivals[k].fetch_add(1, std::memory_order_release);
    if (mine[k].load(std::memory_order_acquire) - passed < 0x80000000u) {
      continue;  // already arrived (the counters wrap after 2^32 barriers)
    }
    Backoff backoff;
    while (mine[k].load(std::memory_order_acquire) - passed >= 0x80000000u) {
      backoff.Wait();
    }
  }
}

void ConsumePost(ManagedWindow& w, int target) {
  TargetLockState& s = w.lock_state(target);
  uint32_t& consumed = w.pscw().posts_consumed[target];
  if (!w.pscw().access_nocheck) {
    std::atomic<uint32_t>& posted = w.header(w.rank()).post_counters()[target];
    Backoff backoff;
    while (posted.load(std::memory_order_acquire) == consumed) {
      backoff.Wait();
    }
  }
  StateGuard guard(w.state_mutex());
  if (s.post_seen) return;  // another thread matched it meanwhile
  if (!w.pscw().access_nocheck) ++consumed;
  s.post_seen = true;
  s.direct = true;  // PSCW here is the shared-memory one
}

Verdict ShmFence(ManagedWindow& w, int assert) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const Verdict flushed = FlushPassedThrough(w, Completion::kRemote);
  // With nothing before and nothing after, the fence orders nothing.
  const bool noop =
      (assert& MPI_MODE_NOPRECEDE) && (assert& MPI_MODE_NOSUCCEED);
  if (!noop) NodeBarrier(w);
  w.SetEpoch((assert& MPI_MODE_NOSUCCEED) ? AccessEpoch::kNone
                                          : AccessEpoch::kFence);
  return flushed;
}

Verdict ShmPost(ManagedWindow& w, MPI_Group group, int assert) {
  if (w.pscw().exposed) return Verdict::Error(MPI_ERR_RMA_SYNC);
  const std::vector<int> origins = w.ToWindowRanks(group);
  for (int o : origins) {
    if (o == MPI_UNDEFINED) return Verdict::Error(MPI_ERR_GROUP);
  }
  // Local stores to the window happen before any origin's access.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  StateGuard guard(w.state_mutex());
  if (!(assert& MPI_MODE_NOCHECK)) {
    for (int o : origins) {
      w.header(o).post_counters()[w.rank()].fetch_add(
          1, std::memory_order_release);
    }
  }
  w.pscw().expected_completes += origins.size();
  w.pscw().exposed = true;
  return Verdict::Served();
}

Verdict ShmStart(ManagedWindow& w, MPI_Group group, int assert) {
  std::vector<int> targets = w.ToWindowRanks(group);
  for (int t : targets) {
    if (t == MPI_UNDEFINED) return Verdict::Error(MPI_ERR_GROUP);
  }
  StateGuard guard(w.state_mutex());
  for (int t : targets) {
    w.lock_state(t).in_access_group = true;
    w.lock_state(t).post_seen = false;
  }
  w.pscw().access_group = std::move(targets);
  w.pscw().access_nocheck = (assert& MPI_MODE_NOCHECK) != 0;
  w.SetEpoch(AccessEpoch::kPscw);
  return Verdict::Served();
}

Verdict ShmComplete(ManagedWindow& w) {
  if (w.epoch() != AccessEpoch::kPscw) return Verdict::Error(MPI_ERR_RMA_SYNC);
  const Verdict flushed = FlushPassedThrough(w, Completion::kRemote);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int t : w.pscw().access_group) {
    AwaitPost(w, t);  // a target we never accessed must still have posted
    w.header(t).completes.fetch_add(1, std::memory_order_release);
    w.lock_state(t).in_access_group = false;
    w.lock_state(t).post_seen = false;
    w.lock_state(t).direct = false;
  }
  w.pscw().access_group.clear();
  w.SetEpoch(AccessEpoch::kNone);
  return flushed;
}

Verdict ShmWait(ManagedWindow& w) {
  if (!w.pscw().exposed) return Verdict::Error(MPI_ERR_RMA_SYNC);
  std::atomic<uint64_t>& completes = w.header(w.rank()).completes;
  Backoff backoff;
  while (completes.load(std::memory_order_acquire) <
         w.pscw().expected_completes) {
    backoff.Wait();
  }
  w.pscw().exposed = false;
  return Verdict::Served();
}

Verdict ShmTest(ManagedWindow& w, int* flag) {
  if (!w.pscw().exposed) return Verdict::Error(MPI_ERR_RMA_SYNC);
  *flag = w.header(w.rank()).completes.load(std::memory_order_acquire) >=
          w.pscw().expected_completes;
  if (*flag) {
    w.pscw().exposed = false;
  } else {
    DriveProgress();  // a polling target must still serve MPI operations
  }
  return Verdict::Served();
}

}  // namespace rmashim
