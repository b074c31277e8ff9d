// The origin side of the agent (agent.h has the design): requests to
// remote targets' agents over this process's links, and the answers.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <span>

#include "shim/agent/agent.h"
#include "shim/agent/agent_state.h"
#include "shim/base/spin_wait.h"
#include "shim/process/runtime.h"
#include "shim/windows/window.h"

namespace rmashim {
namespace {

// The link to `world_rank`'s agent fails for good: a frame may have been
// cut, and what it still carried may never arrive, so no new stream is
// opened in its place (one could overtake the old). Every later request
// to that agent fails at once (Exchange), updates that wait for no answer
// included, and the ends of fence and PSCW epochs fail here and tell it
// that updates may be lost (UpdateCount) instead of letting it wait.
// The caller holds s.origin_mutex.
void LoseLink(AgentState& s, int world_rank) {
  int& fd = s.links[world_rank];
  if (fd == kLinkLost) return;
  std::fprintf(stderr,
               "rmashim: agent: link to world rank %d's agent lost (from "
               "world rank %d)\n",
               world_rank, s.world_rank);
  if (fd >= 0) close(fd);
  fd = kLinkLost;
  s.queued[world_rank].clear();
}

// The link to `world_rank`'s agent, opened at first use; -1 when it
// cannot be reached (then lost: LoseLink). The caller holds
// s.origin_mutex.
int LinkTo(AgentState& s, int world_rank) {
  int& fd = s.links[world_rank];
  if (fd == kLinkLost) return -1;
  if (fd < 0) {
    fd = ConnectAgent(s.endpoints[world_rank], {s.token, s.world_rank});
    if (fd < 0) {
      std::fprintf(stderr,
                   "rmashim: agent: cannot reach world rank %d's agent\n",
                   world_rank);
      LoseLink(s, world_rank);
      return -1;
    }
  }
  return fd;
}

// Appends one request to those queued for the agent of `world_rank`.
void Enqueue(AgentState& s, int world_rank, const std::vector<std::byte>& msg) {
  std::vector<std::byte>& queue = s.queued[world_rank];
  const auto length = static_cast<uint32_t>(msg.size());
  const size_t at = queue.size();
  queue.resize(at + sizeof length + msg.size());
  std::memcpy(queue.data() + at, &length, sizeof length);
  std::memcpy(queue.data() + at + sizeof length, msg.data(), msg.size());
}

// Sends what is queued for `world_rank`'s agent; its link, or -1 when the
// link is lost.
int SendQueued(AgentState& s, int world_rank) {
  std::vector<std::byte>& queue = s.queued[world_rank];
  const int fd = LinkTo(s, world_rank);
  if (fd < 0) {
    queue.clear();
    return -1;
  }
  if (!WriteAll(fd, queue.data(), queue.size())) {
    LoseLink(s, world_rank);
    return -1;
  }
  queue.clear();
  return fd;
}

// Polls `fd` for AgentSpinNs before the caller blocks on it: most answers
// come within one round trip, and a thread woken from sleep adds its wake-up
// to each (a few microseconds more per round trip). True when readable.
bool AwaitReadable(int fd) {
  const uint64_t spin = AgentSpinNs();
  if (spin == 0) return false;
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  const uint64_t until = NowNs() + spin;
  do {
    if (poll(&p, 1, 0) > 0) return true;
    CpuRelax();
  } while (NowNs() < until);
  return false;
}

// The answer to the oldest unanswered request to `world_rank`'s agent,
// `reply_bytes` of it into `reply`; MPI_ERR_OTHER when the link is lost.
// `on_wait` as for ReadFrame.
int AwaitReply(AgentState& s, int world_rank, void* reply, int reply_bytes,
               void (*on_wait)() = nullptr) {
  const int fd = s.links[world_rank];
  if (fd < 0) return MPI_ERR_OTHER;
  AwaitReadable(fd);
  std::vector<std::byte> frame;
  if (!ReadFrame(fd, &frame, on_wait) ||
      frame.size() != static_cast<size_t>(reply_bytes)) {
    LoseLink(s, world_rank);
    return MPI_ERR_OTHER;
  }
  if (reply_bytes > 0) std::memcpy(reply, frame.data(), frame.size());
  return MPI_SUCCESS;
}

// The empty answers to one request sent to each agent of `world_ranks`;
// the first error.
int AwaitEach(AgentState& s, const std::vector<int>& world_ranks) {
  int rc = MPI_SUCCESS;
  for (const int world_rank : world_ranks) {
    const int got = AwaitReply(s, world_rank, nullptr, 0);
    if (rc == MPI_SUCCESS) rc = got;
  }
  return rc;
}

// Waits for an answer that may take long (a lock's grant) from
// `world_rank`'s agent, letting MPI progress meanwhile (ReadAll,
// agent_link.h): the holders this lock waits for may be completing
// operations they handed to MPI at this process, which over emulated RMA
// need this process to enter MPI, as a node-local waiter's spin does
// (spin_wait.h). A blocking read, not a poll with a timeout before it:
// that took twice as long to wake on an answer.
int AwaitGrant(AgentState& s, int world_rank) {
  return AwaitReply(s, world_rank, nullptr, 0, DriveProgress);
}

// One request to the agent of `world_rank`, and its reply into `reply`
// (`reply_bytes`) when `reply_bytes` >= 0; otherwise it stays queued until
// kQueueBytes gather or a request that waits goes out. The caller holds
// s.origin_mutex. A lost link is an error of the call (MPI_ERR_OTHER),
// never a silent loss.
int Exchange(AgentState& s, int world_rank, const std::vector<std::byte>& msg,
             void* reply, int reply_bytes) {
  if (s.links[world_rank] == kLinkLost) return MPI_ERR_OTHER;
  Enqueue(s, world_rank, msg);
  if (reply_bytes < 0 && s.queued[world_rank].size() < kQueueBytes) {
    return MPI_SUCCESS;
  }
  if (SendQueued(s, world_rank) < 0) return MPI_ERR_OTHER;
  return reply_bytes < 0 ? MPI_SUCCESS
                         : AwaitReply(s, world_rank, reply, reply_bytes);
}

std::vector<std::byte> Message(const RequestHeader& h, size_t body_bytes) {
  std::vector<std::byte> msg(sizeof h + body_bytes);
  std::memcpy(msg.data(), &h, sizeof h);
  return msg;
}

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
// below the link's frame limit (kMaxFrame, agent_link.cc) and the int
// length of a fetched reply.
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
// last flush: every flush goes out before any answer is awaited, so the
// round trips overlap. Another thread's flush of the same targets waits on
// origin_mutex until these answers came: this one may have cleared its
// marks.
int FlushPending(ManagedWindow& w, int first, int last) {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  std::vector<int> targets;
  {
    StateGuard state_guard(w.state_mutex());
    if (!w.agent_served()) return MPI_SUCCESS;
    for (int target = first; target < last; ++target) {
      if (!w.agent_pending(target)) continue;
      w.AgentPendingDone(target);
      targets.push_back(target);
    }
    if (first == 0 && last == w.comm_size()) w.AllAgentPendingDone();
  }
  const RequestHeader h{.kind = RequestKind::kFlush};
  std::vector<int> agents;
  for (const int target : targets) {
    Enqueue(s, w.world_rank(target), Message(h, 0));
    if (SendQueued(s, w.world_rank(target)) >= 0) {
      agents.push_back(w.world_rank(target));
    }
  }
  const int rc = AwaitEach(s, agents);
  return agents.size() < targets.size() ? MPI_ERR_OTHER : rc;
}

}  // namespace

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
    if (!s.queued[world].empty() && SendQueued(s, world) < 0) {
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
  count.lost_links = s.links[w.world_rank(target)] == kLinkLost ? 1 : 0;
  return count;
}

// Whether this process's agent lost the link from an origin of `w`'s
// (agent.cc: EndLink); a scan of the window's ranks only once one was.
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

// Asleep, not spinning: the thread that must run is this process's own
// agent, which a spinning waiter would keep from a core (agent.cc wakes the
// waiter when the count reaches `expected`, or when a link is lost).
int AwaitAgentArrivals(ManagedWindow& w) {
  AgentState& s = TheAgent();
  AgentFenceCounts& counts = w.agent_fence();
  const uint64_t expected = counts.expected.load();
  for (;;) {
    const uint32_t wakes = s.arrivals_wake.load();
    if (ArrivalsLost(s, w)) return MPI_ERR_OTHER;
    if (counts.applied.load() >= expected) return MPI_SUCCESS;
    s.arrivals_wake.wait(wakes);
  }
}

int TestAgentArrivals(ManagedWindow& w, bool* applied) {
  const AgentFenceCounts& counts = w.agent_fence();
  *applied = true;  // nothing more to wait for once lost
  if (ArrivalsLost(TheAgent(), w)) return MPI_ERR_OTHER;
  *applied = counts.applied.load() >= counts.expected.load();
  return MPI_SUCCESS;
}

int AgentCompletePscw(ManagedWindow& w) {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  StateGuard state_guard(w.state_mutex());
  int rc = SendPending(s, w, w.pscw().access_group);
  for (const int target : w.pscw().access_group) {
    // Updates to node-local targets are direct (ApplyByReach,
    // accumulate.cc): nothing to count, and their waits expect nothing.
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

int AgentFlush(ManagedWindow& w, int target) {
  return FlushPending(w, target, target + 1);
}

int AgentFlushAll(ManagedWindow& w) {
  if (!w.any_agent_pending()) return MPI_SUCCESS;
  return FlushPending(w, 0, w.comm_size());
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
  return SendQueued(s, agent) < 0 ? MPI_ERR_OTHER : AwaitGrant(s, agent);
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
  if (server == target) {
    StateGuard state_guard(w.state_mutex());
    w.AgentPendingDone(target);
  }
  const int agent = w.world_rank(server);
  const int released = Exchange(
      s, agent, LockMessage(w, RequestKind::kUnlock, target, lock), nullptr, 0);
  return flushed != MPI_SUCCESS ? flushed : released;
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

int AgentUnlockAll(ManagedWindow& w) {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  std::vector<int> agents;
  bool all_sent = true;
  for (const int agent : w.remote_lock_agents()) {
    Enqueue(s, w.world_rank(agent),
            LockMessage(w, RequestKind::kUnlock, agent, AgentLockKind::kAll));
    if (SendQueued(s, w.world_rank(agent)) >= 0) {
      agents.push_back(w.world_rank(agent));
    } else {
      all_sent = false;
    }
  }
  const int rc = AwaitEach(s, agents);
  return all_sent ? rc : MPI_ERR_OTHER;
}

int AgentFailLink(int world_rank, bool agent_end) {
  if (agent_end) return FailLinkFrom(world_rank);
  AgentState& s = TheAgent();
  if (!s.running || world_rank < 0 ||
      static_cast<size_t>(world_rank) >= s.links.size()) {
    return MPI_ERR_OTHER;
  }
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  const int fd = LinkTo(s, world_rank);
  if (fd < 0) return MPI_ERR_OTHER;
  shutdown(fd, SHUT_RDWR);
  return MPI_SUCCESS;
}

}  // namespace rmashim
