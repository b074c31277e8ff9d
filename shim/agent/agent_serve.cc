// The agent serving requests (agent_serve.h): each checked against the
// window it names before anything is applied (Check*), then updates and
// compare-and-swaps applied through the stripes, flushes, locks and
// releases answered; and a lost link's end.
#include "shim/agent/agent_serve.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <span>
#include <utility>

#include "shim/agent/agent_locks.h"
#include "shim/atomics/striped_apply.h"
#include "shim/types/element_ops.h"
#include "shim/types/flatten.h"
#include "shim/windows/served_windows.h"
#include "shim/windows/window.h"

namespace rmashim {

namespace {

// Wakes the epoch ends waiting for this agent (AwaitAgentArrivals).
void WakeArrivalWaiters(AgentState& s) {
  s.arrivals_wake.fetch_add(1);
  s.arrivals_wake.notify_all();
}

// Whether a request of `h`'s kind waits for an answer.
bool Answered(const RequestHeader& h) {
  return h.kind != RequestKind::kUpdate || h.fetching != 0;
}

// A request the agent will not apply: counted, the first one told, and
// answered with MPI_ERR_OTHER where its origin waits for an answer; one
// that waits for none fails the origin's next flush instead (its
// rejected_unanswered mark). From a rank of this job (the transport let
// only those through), so a bug or a forgery, never silently applied.
void Reject(AgentState& s, int origin, const char* what,
            const RequestHeader& h) {
  if (s.rejected.fetch_add(1) == 0) {
    std::fprintf(stderr,
                 "rmashim: agent: request from world rank %d refused (%s: "
                 "kind %u, window %d)\n",
                 origin, what, static_cast<unsigned>(h.kind), h.window);
  }
  if (Answered(h)) {
    (void)s.transport->Answer(origin, MPI_ERR_OTHER, {});
  } else {
    s.rejected_unanswered[origin] = 1;
  }
}

// Why `h` (a compare-and-swap, `body_bytes` after its header) cannot be
// applied to `t`; nullptr when it can.
const char* CheckCompareSwap(const RequestHeader& h, size_t body_bytes,
                             const Target& t, const CompareSwapOp** cas) {
  const auto size = static_cast<size_t>(h.element_size);
  const MPI_Aint base = h.disp * t.disp_unit;
  if (FindCompareSwap(h.element, cas) != MPI_SUCCESS) return "type";
  if ((*cas)->size != size || body_bytes != 2 * size) return "size";
  if (h.disp < 0 || base < 0 || base + static_cast<MPI_Aint>(size) > t.size) {
    return "range";
  }
  return nullptr;
}

// Why `h` (an update: runs, then `body_bytes` in all) cannot be applied to
// `t`; nullptr when it can. Every run is checked before any is applied.
const char* CheckUpdate(const RequestHeader& h, const std::byte* body,
                        size_t body_bytes, const Target& t, const ElementOp** e,
                        std::vector<ElementRun>* runs) {
  if (FindElementOp(h.element, h.op, e) != MPI_SUCCESS) return "type or op";
  const auto size = static_cast<size_t>(h.element_size);
  if ((*e)->size != size || h.elements < 0 || h.runs < 0 ||
      static_cast<uint64_t>(h.runs) > body_bytes / sizeof(ElementRun)) {
    return "size";
  }
  const size_t run_bytes = static_cast<size_t>(h.runs) * sizeof(ElementRun);
  if (h.op != MPI_NO_OP &&
      static_cast<uint64_t>(h.elements) > (body_bytes - run_bytes) / size) {
    return "size";
  }
  const size_t data_bytes =
      h.op == MPI_NO_OP ? 0 : static_cast<size_t>(h.elements) * size;
  if (body_bytes != run_bytes + data_bytes) return "size";
  runs->resize(static_cast<size_t>(h.runs));
  std::memcpy(runs->data(), body, run_bytes);
  const MPI_Aint base = h.disp * t.disp_unit;
  if (h.disp < 0 || base < 0) return "range";
  MPI_Aint done = 0;
  for (const ElementRun& run : *runs) {
    const MPI_Aint offset = base + run.offset;
    if (offset < 0 || run.count < 0 || run.count > h.elements - done ||
        run.count > (t.size - offset) / (*e)->extent ||
        offset + run.count * (*e)->extent > t.size) {
      return "range";
    }
    done += run.count;
  }
  return done == h.elements ? nullptr : "size";
}

// Applies a checked update to `t`, the old values into `result` when it
// fetches (never exclusive: other origins may be updating the same
// elements through the stripes).
void ApplyUpdate(const RequestHeader& h, const std::byte* body, const Target& t,
                 const ElementOp& e, std::span<const ElementRun> runs,
                 std::byte* result) {
  const size_t run_bytes = runs.size() * sizeof(ElementRun);
  const std::byte* origin_data = h.op != MPI_NO_OP ? body + run_bytes : nullptr;
  const MPI_Aint base = h.disp * t.disp_unit;
  MPI_Aint done = 0;
  for (const ElementRun& run : runs) {
    const MPI_Aint offset = base + run.offset;
    const std::byte* src =
        origin_data ? origin_data + done * e.size : t.base + offset;
    ApplyRun(e, /*exclusive=*/false, t, offset, src,
             result != nullptr ? result + done * e.size : nullptr,
             static_cast<size_t>(run.count));
    done += run.count;
  }
}

// Counted for fences and PSCW once applied; an epoch end waiting for this
// count is woken (epoch_state.h: AgentFenceCounts).
void CountApplied(AgentState& s, ManagedWindow& w) {
  AgentFenceCounts& counts = w.agent_fence();
  if (counts.applied.fetch_add(1) + 1 == counts.expected.load()) {
    WakeArrivalWaiters(s);
  }
}

// One update or compare-and-swap from `origin`, checked, applied to this
// process's memory of the window it names as a node-local origin's would
// be, and answered where it fetches.
void Apply(AgentState& s, int origin, const RequestHeader& h,
           const std::byte* body, size_t body_bytes) {
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
    if (found == nullptr) return Reject(s, origin, "unknown window", h);
    ManagedWindow& w = *found;
    const Target& t = w.target(w.rank());
    if (h.kind == RequestKind::kCompareSwap) {
      const CompareSwapOp* cas = nullptr;
      if (const char* why = CheckCompareSwap(h, body_bytes, t, &cas)) {
        return Reject(s, origin, why, h);
      }
      const auto size = static_cast<size_t>(h.element_size);
      result.resize(size);
      ApplyCompareSwap(*cas, /*exclusive=*/false, t, h.disp * t.disp_unit, body,
                       body + size, result.data());
    } else {
      const ElementOp* e = nullptr;
      std::vector<ElementRun> runs;
      if (const char* why = CheckUpdate(h, body, body_bytes, t, &e, &runs)) {
        return Reject(s, origin, why, h);
      }
      if (h.fetching) result.resize(static_cast<size_t>(h.elements) * e->size);
      ApplyUpdate(h, body, t, *e, runs, h.fetching ? result.data() : nullptr);
      // Counted before an epoch end that waits for it can learn of it.
      s.applied.fetch_add(1);
      if (h.counted) CountApplied(s, w);
    }
  }
  if (h.kind == RequestKind::kCompareSwap) s.applied.fetch_add(1);
  // The updates are visible before the origin learns they are done.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (Answered(h)) (void)s.transport->Answer(origin, MPI_SUCCESS, result);
}

// Answers a lock request held now.
void Grant(AgentState& s, int origin) {
  s.locks_granted.fetch_add(1, std::memory_order_relaxed);
  (void)s.transport->Answer(origin, MPI_SUCCESS, {});
}

}  // namespace

void GrantWaitingLocks(AgentState& s) {
  for (const int origin : s.locks.Progress()) Grant(s, origin);
}

namespace {

// A lock or release from `origin`, checked against the window it names:
// a lock kind, and a target that is a rank of this process's node; false
// (and `why`) when it is not one.
bool CheckLock(const RequestHeader& h, int origin, AgentLockRequest* r,
               const char** why) {
  std::lock_guard<std::mutex> guard(served_windows().mutex());
  ManagedWindow* w = served_windows().Find(h.window);
  const auto target = static_cast<int>(h.disp);
  if (w == nullptr) {
    *why = "unknown window";
  } else if (h.lock != AgentLockKind::kShared &&
             h.lock != AgentLockKind::kExclusive &&
             h.lock != AgentLockKind::kAll) {
    *why = "lock kind";
  } else if (!w->locks_via_agent() || h.disp < 0 || h.disp >= w->comm_size() ||
             !w->target(target).node_local()) {
    *why = "lock target";
  } else {
    *r = {.link = origin,
          .window_id = h.window,
          .window = w,
          .target = target,
          .kind = h.lock};
    return true;
  }
  return false;
}

// The origin's flush or release: answered once everything it sent before
// is applied (a release completes the updates before it: agent.h,
// AgentUnlock and AgentUnlockAll), with MPI_ERR_OTHER when one of those was
// refused.
void AnswerCompletion(AgentState& s, int origin) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const int status = std::exchange(s.rejected_unanswered[origin], 0) != 0
                         ? MPI_ERR_OTHER
                         : MPI_SUCCESS;
  (void)s.transport->Answer(origin, status, {});
}

// One request from `origin`, `frame` (its own copy: heap memory is aligned
// for every element type).
void ServeRequest(AgentState& s, int origin,
                  const std::vector<std::byte>& frame) {
  RequestHeader h;
  if (frame.size() < sizeof h) {
    h.kind = RequestKind::kUpdate;  // answers nothing: the next flush fails
    return Reject(s, origin, "short", h);
  }
  std::memcpy(&h, frame.data(), sizeof h);
  AgentLockRequest lock;
  const char* why = nullptr;
  switch (h.kind) {
    case RequestKind::kFlush:
      return AnswerCompletion(s, origin);
    case RequestKind::kUpdate:
    case RequestKind::kCompareSwap:
      return Apply(s, origin, h, frame.data() + sizeof h,
                   frame.size() - sizeof h);
    case RequestKind::kLock:
      if (!CheckLock(h, origin, &lock, &why)) return Reject(s, origin, why, h);
      if (s.locks.Request(lock)) Grant(s, origin);
      return;
    case RequestKind::kUnlock:  // answered: the origin's window may go next
      if (!CheckLock(h, origin, &lock, &why)) return Reject(s, origin, why, h);
      s.locks.Release(lock);
      return AnswerCompletion(s, origin);
  }
  h.kind = RequestKind::kUpdate;
  Reject(s, origin, "kind", h);
}

// The frames of one batch, in order; a length past the batch's end refuses
// the rest of it.
void ServeBatch(AgentState& s, const ArrivedBatch& batch,
                std::vector<std::byte>& frame) {
  std::span<const std::byte> rest(batch.frames);
  while (!rest.empty()) {
    uint32_t length = 0;
    if (rest.size() < sizeof length) break;
    std::memcpy(&length, rest.data(), sizeof length);
    if (length > rest.size() - sizeof length) break;
    frame.assign(rest.begin() + sizeof length,
                 rest.begin() + sizeof length + length);
    ServeRequest(s, batch.origin, frame);
    rest = rest.subspan(sizeof length + length);
  }
  if (!rest.empty()) {
    Reject(s, batch.origin, "frame",
           RequestHeader{.kind = RequestKind::kUpdate});
  }
}

}  // namespace

bool ServeTaken(AgentState& s) {
  bool served = false;
  ArrivedBatch batch;
  std::vector<std::byte> frame;
  while (s.transport->TakeArrived(&batch)) {
    ServeBatch(s, batch, frame);
    served = true;
  }
  for (int origin = -1; s.transport->TakeLostLink(&origin);) {
    EndLink(s, origin);
    served = true;
  }
  return served;
}

void EndLink(AgentState& s, int origin) {
  s.locks.DropLink(origin);
  std::fprintf(stderr,
               "rmashim: agent: world rank %d's link to this agent (world "
               "rank %d) was lost\n",
               origin, s.world_rank);
  if (!s.inbound_lost[origin].exchange(true)) {
    s.inbound_losses.fetch_add(1);
  }
  WakeArrivalWaiters(s);
}

}  // namespace rmashim
