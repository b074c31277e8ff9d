// The origin side of the agent (agent.h has the design): a process's
// updates, flushes and locks on remote targets, as requests to their
// agents (agent_requests.h sends them; the ends of fence and PSCW epochs
// are agent_epoch_ends.cc's).
#include <algorithm>
#include <cstring>
#include <functional>
#include <span>

#include "shim/agent/agent.h"
#include "shim/agent/agent_requests.h"
#include "shim/agent/agent_state.h"
#include "shim/process/runtime.h"
#include "shim/windows/window.h"

namespace rmashim {
namespace {

// An update that waits for no answer went to `target`'s agent: flushes and
// unlocks must complete it, and the end of its fence or PSCW epoch counts
// it (`counted`). Passive epochs' updates are not counted: their flushes
// and unlocks complete them, and a count reported to no target (an origin
// outside a later post's group) would stand in for another's update.
void NotePending(ManagedWindow& w, int target, bool counted) {
  StateGuard guard(w.state_mutex());
  w.NoteAgentUpdate(target);
  if (counted) ++w.agent_fence().sent[target].updates;
}

// The most one update request carries (runs and packed elements): far
// below a frame's 32-bit length and the int length of a fetched reply.
constexpr size_t kUpdateRequestBytes = size_t{16} << 20;

// One update request: the whole of AgentUpdate's call, or one piece of it.
int SendUpdate(ManagedWindow& w, int target, MPI_Aint disp,
               MPI_Datatype element, MPI_Op op,
               std::span<const ElementRun> runs, size_t elements,
               size_t element_size, const std::byte* origin,
               std::byte* result) {
  const bool counted = w.agent_counts_epoch();
  const RequestHeader h{.kind = RequestKind::kUpdate,
                        .window = w.agent_id(target),
                        .disp = disp,
                        .element = element,
                        .op = op,
                        .elements = static_cast<int64_t>(elements),
                        .element_size = static_cast<int64_t>(element_size),
                        .runs = static_cast<int64_t>(runs.size()),
                        .fetching = result != nullptr,
                        .counted = result == nullptr && counted};
  const size_t run_bytes = runs.size() * sizeof(ElementRun);
  const size_t data_bytes = origin != nullptr ? elements * element_size : 0;
  std::vector<std::byte> msg = Message(h, run_bytes + data_bytes);
  std::memcpy(msg.data() + sizeof h, runs.data(), run_bytes);
  if (data_bytes)
    std::memcpy(msg.data() + sizeof h + run_bytes, origin, data_bytes);
  const int reply_bytes =
      result != nullptr ? static_cast<int>(elements * element_size) : -1;
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  const int rc = Exchange(s, w.world_rank(target), msg, result, reply_bytes);
  if (rc == MPI_SUCCESS && result == nullptr) NotePending(w, target, counted);
  return rc;
}

}  // namespace

// A call larger than kUpdateRequestBytes goes as several requests, each the
// next elements in the runs' order (a run may be cut between two), on the
// same stream. That changes nothing a program can observe: MPI makes an
// accumulate atomic per element only (MPI-3 11.7.1), and the agent applies
// one origin's requests in the order they were sent.
int AgentUpdate(ManagedWindow& w, int target, MPI_Aint disp,
                MPI_Datatype element, MPI_Op op,
                std::span<const ElementRun> runs, size_t elements,
                size_t element_size, const std::byte* origin,
                std::byte* result) {
  // Each element costs element_size bytes: of origin data or of the reply.
  if (runs.size() * sizeof(ElementRun) + elements * element_size <=
      kUpdateRequestBytes) {
    return SendUpdate(w, target, disp, element, op, runs, elements,
                      element_size, origin, result);
  }
  MPI_Aint lb = 0, extent = 0;  // consecutive elements of a run
  if (PMPI_Type_get_extent(element, &lb, &extent) != MPI_SUCCESS) {
    return MPI_ERR_TYPE;
  }
  std::vector<ElementRun> piece;
  size_t sent = 0;    // elements sent so far
  size_t run = 0;     // the run the next piece starts in
  MPI_Aint skip = 0;  // and its elements already sent
  while (run < runs.size()) {
    piece.clear();
    size_t n = 0, bytes = 0;
    while (run < runs.size() &&
           bytes + sizeof(ElementRun) + element_size <= kUpdateRequestBytes) {
      const MPI_Aint left = runs[run].count - skip;
      const auto room = static_cast<MPI_Aint>(
          (kUpdateRequestBytes - bytes - sizeof(ElementRun)) / element_size);
      const MPI_Aint take = std::min(left, room);
      if (take > 0) {
        piece.push_back({runs[run].offset + skip * extent, take});
        bytes += sizeof(ElementRun) + static_cast<size_t>(take) * element_size;
        n += static_cast<size_t>(take);
      }
      skip += take;
      if (skip < runs[run].count) break;  // the piece is full
      ++run;
      skip = 0;
    }
    if (n == 0) continue;  // only empty runs were left
    if (const int rc = SendUpdate(
            w, target, disp, element, op, piece, n, element_size,
            origin != nullptr ? origin + sent * element_size : nullptr,
            result != nullptr ? result + sent * element_size : nullptr)) {
      return rc;
    }
    sent += n;
  }
  return MPI_SUCCESS;
}

int AgentCompareSwap(ManagedWindow& w, int target, MPI_Aint disp,
                     MPI_Datatype type, size_t size, const std::byte* origin,
                     const std::byte* compare, std::byte* result) {
  const RequestHeader h{.kind = RequestKind::kCompareSwap,
                        .window = w.agent_id(target),
                        .disp = disp,
                        .element = type,
                        .op = MPI_REPLACE,
                        .elements = 1,
                        .element_size = static_cast<int64_t>(size),
                        .runs = 0,
                        .fetching = 1};
  std::vector<std::byte> msg = Message(h, 2 * size);
  std::memcpy(msg.data() + sizeof h, origin, size);
  std::memcpy(msg.data() + sizeof h + size, compare, size);
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  return Exchange(s, w.world_rank(target), msg, result, static_cast<int>(size));
}

namespace {

// Flushes the targets in [first, last) that were sent updates since their
// last flush, but those in `released_next`, whose agents the caller sends a
// release next (AgentUnlockAll): every flush goes out before any answer is
// awaited, so the round trips overlap. Another thread's flush of the same
// targets waits on origin_mutex until these answers came: this one may have
// cleared its marks.
int FlushPending(ManagedWindow& w, int first, int last,
                 std::span<const int> released_next = {}) {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  const int rma = FlushRmaLocked(s, w, first, last);
  if (!w.any_agent_pending()) return rma;
  std::vector<int> targets;
  {
    StateGuard state_guard(w.state_mutex());
    if (!w.agent_served()) return MPI_SUCCESS;
    for (int target = first; target < last; ++target) {
      if (!w.agent_pending(target) ||
          std::find(released_next.begin(), released_next.end(), target) !=
              released_next.end()) {
        continue;
      }
      w.AgentPendingDone(target);
      targets.push_back(target);
    }
    if (first == 0 && last == w.comm_size() && released_next.empty()) {
      w.AllAgentPendingDone();
    }
  }
  const RequestHeader h{.kind = RequestKind::kFlush};
  std::vector<int> agents;
  for (const int target : targets) {
    Enqueue(s, w.world_rank(target), Message(h, 0));
    if (SendQueued(s, w.world_rank(target))) {
      agents.push_back(w.world_rank(target));
    }
  }
  const int rc = AwaitEach(s, agents);
  if (agents.size() < targets.size() || rma != MPI_SUCCESS) {
    return MPI_ERR_OTHER;
  }
  return rc;
}

}  // namespace

int AgentFlush(ManagedWindow& w, int target) {
  return FlushPending(w, target, target + 1);
}

int AgentFlushAll(ManagedWindow& w) {
  return FlushPending(w, 0, w.comm_size());
}

int AgentFlushAllButLockAgents(ManagedWindow& w) {
  return FlushPending(w, 0, w.comm_size(), w.remote_lock_agents());
}

namespace {

// The window rank whose agent serves `lock` on `target` (agent_locks.h):
// the target's own for a shared lock, else its node's first rank's.
int AgentLockServer(const ManagedWindow& w, int target, AgentLockKind lock) {
  return lock == AgentLockKind::kShared ? target : w.lock_agent_rank(target);
}

std::vector<std::byte> LockMessage(ManagedWindow& w, RequestKind kind,
                                   int target, AgentLockKind lock) {
  const RequestHeader h{.kind = kind,
                        .window = w.agent_id(AgentLockServer(w, target, lock)),
                        .disp = target,
                        .lock = lock};
  return Message(h, 0);
}

}  // namespace

int AgentLock(ManagedWindow& w, int target, AgentLockKind lock) {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  const int agent = w.world_rank(AgentLockServer(w, target, lock));
  Enqueue(s, agent, LockMessage(w, RequestKind::kLock, target, lock));
  return SendQueued(s, agent) ? AwaitGrant(s, agent) : MPI_ERR_OTHER;
}

// Updates queued for the target go out ahead of the release when the
// target's own agent serves the lock: it applies them first, on the same
// stream. Otherwise they are flushed first.
int AgentUnlock(ManagedWindow& w, int target, AgentLockKind lock) {
  const int server = AgentLockServer(w, target, lock);
  // The release goes out even when the flush failed (a lost link to the
  // target): the server's link may be fine, and the lock must not stay
  // held for good.
  const int flushed = server != target ? AgentFlush(w, target) : MPI_SUCCESS;
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  // RMA is on no request stream: complete before the release.
  const int rma =
      server == target ? FlushRmaLocked(s, w, target, target + 1) : MPI_SUCCESS;
  if (server == target) {
    StateGuard state_guard(w.state_mutex());
    w.AgentPendingDone(target);
  }
  const int agent = w.world_rank(server);
  const int released = Exchange(
      s, agent, LockMessage(w, RequestKind::kUnlock, target, lock), nullptr, 0);
  if (flushed != MPI_SUCCESS) return flushed;
  return rma != MPI_SUCCESS ? rma : released;
}

// Node by node in the order of their first window ranks, this node's
// share (`lock_own_node`) in its place: two lock_all callers then never hold
// one node's share while waiting behind the other on an earlier node (with
// the gates' first come, first served order, exclusive lockers queued on
// both nodes would otherwise close a cycle).
int AgentLockAll(ManagedWindow& w, const std::function<void()>& lock_own_node) {
  bool own_done = false;
  const std::vector<int>& agents = w.remote_lock_agents();
  for (size_t i = 0; i < agents.size(); ++i) {
    if (!own_done && agents[i] > w.first_node_rank()) {
      lock_own_node();
      own_done = true;
    }
    if (const int rc = AgentLock(w, agents[i], AgentLockKind::kAll)) {
      for (size_t j = 0; j < i; ++j) {  // best effort: the link is broken
        (void)AgentUnlock(w, agents[j], AgentLockKind::kAll);
      }
      return rc;  // this node's share, if taken, is the caller's to release
    }
  }
  if (!own_done) lock_own_node();
  return MPI_SUCCESS;
}

// Each release follows the updates queued for its agent's own rank on the
// same stream, and the agent answers it after applying them: the answers
// complete those updates too (AgentFlushAllButLockAgents flushed the rest).
// The caller holds w's state mutex (wrap_sync.cc: UnlockAll).
int AgentUnlockAll(ManagedWindow& w) {
  for (const int agent : w.remote_lock_agents()) w.AgentPendingDone(agent);
  w.AllAgentPendingDone();
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  std::vector<int> agents;
  bool all_sent = true;
  for (const int agent : w.remote_lock_agents()) {
    Enqueue(s, w.world_rank(agent),
            LockMessage(w, RequestKind::kUnlock, agent, AgentLockKind::kAll));
    if (SendQueued(s, w.world_rank(agent))) {
      agents.push_back(w.world_rank(agent));
    } else {
      all_sent = false;
    }
  }
  const int rc = AwaitEach(s, agents);
  return all_sent ? rc : MPI_ERR_OTHER;
}

}  // namespace rmashim
