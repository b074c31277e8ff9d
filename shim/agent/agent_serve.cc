// The agent's thread serving requests (agent_serve.h): updates and
// compare-and-swaps applied through the stripes, flushes, locks and
// releases answered, and a link's end.
#include "shim/agent/agent_serve.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <span>
#include <utility>

#include "shim/agent/agent.h"
#include "shim/atomics/striped_apply.h"
#include "shim/windows/served_windows.h"
#include "shim/windows/window.h"

namespace rmashim {

namespace {

[[noreturn]] void Malformed(const char* what, const RequestHeader& h) {
  std::fprintf(stderr,
               "rmashim: agent: malformed request (%s: kind %u, window %d)\n",
               what, static_cast<unsigned>(h.kind), h.window);
  std::abort();  // the agent's thread makes no MPI call, MPI_Abort included
}

// The registered window a request names. The caller holds
// served_windows().mutex().
ManagedWindow& WindowOf(const RequestHeader& h) {
  ManagedWindow* w = served_windows().Find(h.window);
  if (w == nullptr) Malformed("unknown window", h);
  return *w;
}

// Wakes the epoch ends waiting for this agent (AwaitAgentArrivals).
void WakeArrivalWaiters(AgentState& s) {
  s.arrivals_wake.fetch_add(1);
  s.arrivals_wake.notify_all();
}

// Applies one update or compare-and-swap to this process's memory of the
// window it names, as a node-local origin would (never exclusive: other
// origins may be updating the same elements through the stripes).
void Apply(AgentState& s, const RequestHeader& h, const std::byte* body,
           size_t body_bytes, int link) {
  std::vector<std::byte> result;
  {
    std::lock_guard<std::mutex> guard(served_windows().mutex());
    ManagedWindow* found = served_windows().Find(h.window);
    if (found == nullptr && h.kind == RequestKind::kUpdate && !h.fetching) {
      // Only after a lost link: the epoch it was sent in ended without it
      // (AwaitAgentArrivals) and its window is gone. Its origin waits for
      // nothing, and no later window has its id (served_windows.h).
      static bool noted = false;
      if (!std::exchange(noted, true)) {
        std::fprintf(stderr,
                     "rmashim: agent: updates for a freed window dropped "
                     "(their epoch ended after a lost link)\n");
      }
      return;
    }
    if (found == nullptr) Malformed("unknown window", h);
    ManagedWindow& w = *found;
    const Target& t = w.target(w.rank());
    const MPI_Aint base = h.disp * t.disp_unit;
    const auto size = static_cast<size_t>(h.element_size);
    if (h.kind == RequestKind::kCompareSwap) {
      const CompareSwapOp* cas = nullptr;
      if (body_bytes != 2 * size ||
          FindCompareSwap(h.element, &cas) != MPI_SUCCESS || base < 0 ||
          base + static_cast<MPI_Aint>(size) > t.size) {
        Malformed("compare-and-swap", h);
      }
      result.resize(size);
      ApplyCompareSwap(*cas, /*exclusive=*/false, t, base, body, body + size,
                       result.data());
    } else {
      const ElementOp* e = nullptr;
      const size_t run_bytes = static_cast<size_t>(h.runs) * sizeof(ElementRun);
      const size_t data_bytes =
          h.op == MPI_NO_OP ? 0 : static_cast<size_t>(h.elements) * size;
      if (FindElementOp(h.element, h.op, &e) != MPI_SUCCESS ||
          body_bytes != run_bytes + data_bytes || e->size != size) {
        Malformed("update", h);
      }
      std::vector<ElementRun> runs(h.runs);
      std::memcpy(runs.data(), body, run_bytes);
      const std::byte* origin_data = data_bytes ? body + run_bytes : nullptr;
      if (h.fetching) result.resize(static_cast<size_t>(h.elements) * size);
      MPI_Aint done = 0;
      for (const ElementRun& run : runs) {
        const MPI_Aint offset = base + run.offset;
        if (offset < 0 || run.count < 0 ||
            offset + run.count * e->extent > t.size ||
            done + run.count > h.elements) {
          Malformed("range", h);
        }
        const std::byte* src =
            origin_data ? origin_data + done * e->size : t.base + offset;
        ApplyRun(*e, /*exclusive=*/false, t, offset, src,
                 h.fetching ? result.data() + done * e->size : nullptr,
                 static_cast<size_t>(run.count));
        done += run.count;
      }
      // Counted for fences and PSCW once applied; an epoch end waiting
      // for this count is woken (epoch_state.h: AgentFenceCounts).
      if (h.counted) {
        AgentFenceCounts& counts = w.agent_fence();
        if (counts.applied.fetch_add(1) + 1 == counts.expected.load()) {
          WakeArrivalWaiters(s);
        }
      }
    }
  }
  // The updates are visible before the origin learns they are done.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  s.applied.fetch_add(1, std::memory_order_relaxed);
  if (h.kind == RequestKind::kCompareSwap || h.fetching) {
    WriteFrame(link, result.data(), result.size());
  }
}

// Answers a lock request held now.
bool Grant(AgentState& s, int link) {
  s.locks_granted.fetch_add(1, std::memory_order_relaxed);
  return WriteFrame(link, nullptr, 0);
}

}  // namespace

void GrantWaitingLocks(AgentState& s) {
  for (const int link : s.locks.Progress()) Grant(s, link);
}

namespace {

// A lock or release from the origin on `link`, checked against the window
// it names: the target must be a rank of this process's node.
AgentLockRequest LockRequest(const RequestHeader& h, int link) {
  std::lock_guard<std::mutex> guard(served_windows().mutex());
  ManagedWindow* w = &WindowOf(h);
  const auto target = static_cast<int>(h.disp);
  if (h.lock != AgentLockKind::kShared && h.lock != AgentLockKind::kExclusive &&
      h.lock != AgentLockKind::kAll) {
    Malformed("lock kind", h);
  }
  if (!w->locks_via_agent() || target < 0 || target >= w->comm_size() ||
      !w->target(target).node_local()) {
    Malformed("lock target", h);
  }
  return {.link = link,
          .window_id = h.window,
          .window = w,
          .target = target,
          .kind = h.lock};
}

// One request from the origin on `link`, `frame` (its own copy: heap
// memory is aligned for every element type).
LinkEnd ServeRequest(AgentState& s, int link,
                     const std::vector<std::byte>& frame) {
  RequestHeader h;
  if (frame.size() < sizeof h) Malformed("short", h);
  std::memcpy(&h, frame.data(), sizeof h);
  bool answered = true;
  switch (h.kind) {
    case RequestKind::kFlush:
      std::atomic_thread_fence(std::memory_order_seq_cst);
      answered = WriteFrame(link, nullptr, 0);
      break;
    case RequestKind::kUpdate:
    case RequestKind::kCompareSwap:
      Apply(s, h, frame.data() + sizeof h, frame.size() - sizeof h, link);
      break;
    case RequestKind::kLock:
      answered = !s.locks.Request(LockRequest(h, link)) || Grant(s, link);
      break;
    case RequestKind::kUnlock:  // answered: the origin's window may go next
      s.locks.Release(LockRequest(h, link));
      answered = WriteFrame(link, nullptr, 0);
      break;
    case RequestKind::kGoodbye:
      return LinkEnd::kGoodbye;
    default:
      Malformed("kind", h);
  }
  return answered ? LinkEnd::kOpen : LinkEnd::kLost;
}

}  // namespace

LinkEnd ServeReceived(AgentState& s, int link, FrameReader& reader,
                      std::vector<std::byte>& frame) {
  if (!reader.Receive(link)) return LinkEnd::kLost;
  std::span<const std::byte> next;
  while (reader.Next(&next)) {
    frame.assign(next.begin(), next.end());
    if (const LinkEnd end = ServeRequest(s, link, frame);
        end != LinkEnd::kOpen) {
      return end;
    }
  }
  return reader.bad() ? LinkEnd::kLost : LinkEnd::kOpen;
}

void EndLink(AgentState& s, int epoll, int fd, const OriginLink& origin,
             LinkEnd end) {
  epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
  s.locks.DropLink(fd);
  close(fd);
  if (end != LinkEnd::kLost) return;
  std::fprintf(stderr,
               "rmashim: agent: world rank %d's link to this agent (world "
               "rank %d) was lost\n",
               origin.world_rank, s.world_rank);
  if (!s.inbound_lost[origin.world_rank].exchange(true)) {
    s.inbound_losses.fetch_add(1);
  }
  WakeArrivalWaiters(s);
}

}  // namespace rmashim
