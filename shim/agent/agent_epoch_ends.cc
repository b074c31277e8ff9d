// The ends of fence and PSCW epochs on agent windows (agent.h:
// AgentCompleteFence, AgentCompletePscw), at the origins and at the
// targets, whose waits end when their agent has applied what was counted
// or when a link is lost.
#include <mpi.h>

#include <algorithm>
#include <mutex>
#include <numeric>
#include <vector>

#include "shim/agent/agent.h"
#include "shim/agent/agent_requests.h"
#include "shim/agent/agent_state.h"
#include "shim/base/spin_wait.h"
#include "shim/process/runtime.h"
#include "shim/windows/window.h"

namespace rmashim {

namespace {

// Sends what is queued for those of `targets` that were sent updates since
// their last flush, without a flush request (nothing is awaited); clears
// their marks. The caller holds s.origin_mutex and w's state mutex.
int SendPending(AgentState& s, ManagedWindow& w,
                const std::vector<int>& targets) {
  int rc = MPI_SUCCESS;
  for (const int target : targets) {
    if (!w.agent_pending(target)) continue;
    w.AgentPendingDone(target);
    const int world = w.world_rank(target);
    if (!s.queued[world].empty() && !SendQueued(s, world)) {
      rc = MPI_ERR_OTHER;
    }
  }
  return rc;
}

// What this process tells `target`'s agent at the end of an epoch: the
// updates it sent, and whether its link there was lost (LoseLink). The
// caller holds s.origin_mutex and w's state mutex.
UpdateCount& UpdateCountFor(AgentState& s, ManagedWindow& w, int target) {
  UpdateCount& count = w.agent_fence().sent[target];
  count.lost_links = s.transport->LinkToLost(w.world_rank(target)) ? 1 : 0;
  return count;
}

// Whether this process's agent lost the link from an origin of `w`'s
// (agent_serve.cc: EndLink); a scan of the window's ranks only once one was.
bool LostLinkFromRankOf(AgentState& s, const ManagedWindow& w) {
  if (s.inbound_losses.load() == 0) return false;
  for (int rank = 0; rank < w.comm_size(); ++rank) {
    if (s.inbound_lost[w.world_rank(rank)].load()) return true;
  }
  return false;
}

}  // namespace

int AddAgentArrivals(ManagedWindow& w, const UpdateCount& arriving) {
  AgentFenceCounts& counts = w.agent_fence();
  if (arriving.lost_links > 0) counts.lost = true;
  if (counts.lost) return MPI_ERR_OTHER;
  counts.expected.store(counts.expected.load() + arriving.updates);
  return MPI_SUCCESS;
}

namespace {

// Whether `w`'s epoch ends report a lost link, now or from before.
bool ArrivalsLost(AgentState& s, ManagedWindow& w) {
  AgentFenceCounts& counts = w.agent_fence();
  if (!counts.lost && LostLinkFromRankOf(s, w)) counts.lost = true;
  return counts.lost;
}

}  // namespace

// The waiter stands in for the agent (AgentStandIn) and serves what
// arrived itself (ServeArrived), for kServeWhileWaitingNs where the node
// has a core per rank, else once, and then hands the serving back and
// sleeps: a spinning waiter on a full node would keep this process's agent
// from a core (agent_serve.cc wakes the waiter when the count reaches
// `expected`, or when a link is lost).
int AwaitAgentArrivals(ManagedWindow& w) {
  constexpr uint64_t kServeWhileWaitingNs = 100'000;
  AgentState& s = TheAgent();
  AgentFenceCounts& counts = w.agent_fence();
  const uint64_t expected = counts.expected.load();
  const uint64_t serve_until =
      spin_settings().oversubscribed ? 0 : NowNs() + kServeWhileWaitingNs;
  AgentStandIn stand_in;
  for (bool first = true;; first = false) {
    const uint32_t wakes = s.arrivals_wake.load();
    if (ArrivalsLost(s, w)) return MPI_ERR_OTHER;
    if (counts.applied.load() >= expected) return MPI_SUCCESS;
    if (first || NowNs() < serve_until) {
      if (!ServeArrived(s)) CpuRelax();
      continue;
    }
    stand_in.HandBack();
    s.arrivals_wake.wait(wakes);
  }
}

int TestAgentArrivals(ManagedWindow& w, bool* applied) {
  const AgentFenceCounts& counts = w.agent_fence();
  *applied = true;  // nothing more to wait for once lost
  if (ArrivalsLost(TheAgent(), w)) return MPI_ERR_OTHER;
  if (counts.applied.load() < counts.expected.load()) {
    ServeArrived(TheAgent());
  }
  *applied = counts.applied.load() >= counts.expected.load();
  return MPI_SUCCESS;
}

int AgentCompletePscw(ManagedWindow& w) {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  StateGuard state_guard(w.state_mutex());
  int rc = SendPending(s, w, w.pscw().access_group);
  for (const int target : w.pscw().access_group) {
    // Updates to node-local targets are direct (RouteCall,
    // routing.cc): nothing to count, and their waits expect nothing.
    if (w.target(target).node_local()) continue;
    UpdateCount& count = UpdateCountFor(s, w, target);
    if (count.lost_links > 0 && rc == MPI_SUCCESS) rc = MPI_ERR_OTHER;
    const int sent_rc =
        w.pscw().mpi_posts.SendCount(w.world_rank(target), count);
    count = {};
    if (rc == MPI_SUCCESS) rc = sent_rc;
  }
  return rc;
}

// What MPICH's CH3 fence did with its own operation counts: the origins'
// counts summed by target in one collective, each target then waiting for
// its own arrivals, here its agent's. No round trip to any agent: each
// target waits only for the frames sent to it, which its agent applies as
// they come; what it waits on is a counter in its own memory.
int AgentCompleteFence(ManagedWindow& w) {
  AgentState& s = TheAgent();
  AgentFenceCounts& counts = w.agent_fence();
  int rc = MPI_SUCCESS;  // reported after the collective below
  {
    std::lock_guard<std::mutex> guard(s.origin_mutex);
    StateGuard state_guard(w.state_mutex());
    std::vector<int> all(w.comm_size());
    std::iota(all.begin(), all.end(), 0);
    rc = SendPending(s, w, all);
    w.AllAgentPendingDone();
    for (const int target : all) {
      if (UpdateCountFor(s, w, target).lost_links > 0) rc = MPI_ERR_OTHER;
    }
  }
  if (counts.comm == MPI_COMM_NULL) {
    // Any tag: one thread calls MPI on agent_active_target windows.
    constexpr int kTag = 0x524d;
    if (const int e = PMPI_Comm_create_group(MPI_COMM_WORLD, w.group(), kTag,
                                             &counts.comm)) {
      return e;
    }
  }
  UpdateCount arriving;
  const int e = PMPI_Reduce_scatter_block(counts.sent.data(), &arriving, 2,
                                          MPI_UINT64_T, MPI_SUM, counts.comm);
  std::fill(counts.sent.begin(), counts.sent.end(), UpdateCount{});
  if (e != MPI_SUCCESS) return e;
  const int lost = AddAgentArrivals(w, arriving);
  const int late = lost == MPI_SUCCESS ? AwaitAgentArrivals(w) : lost;
  return rc != MPI_SUCCESS ? rc : late;
}

}  // namespace rmashim
