// Completion on managed windows: MPI_Win_flush, MPI_Win_flush_local, their
// _all forms and MPI_Win_sync. Direct copies are complete when the call
// that issued them returns, so a flush only needs a memory fence
// (shim/base/direct_stores.h: none after only locked atomics on x86), the
// accumulates queued on the window (shim/windows/deferred_atomics.h) and,
// when operations went to MPI or the agent in the epoch, their completion
// there. The locks whose epochs these complete are in wrap_sync.cc.
#include <mpi.h>

#include "shim/agent/agent.h"
#include "shim/base/direct_stores.h"
#include "shim/base/spin_wait.h"
#include "shim/intercept/finish_call.h"
#include "shim/intercept/passive_target.h"
#include "shim/move/accumulate.h"
#include "shim/process/runtime.h"
#include "shim/profile/profile.h"
#include "shim/windows/passthrough.h"
#include "shim/windows/window.h"

namespace rmashim {
namespace {

bool InPassiveEpochWith(const ManagedWindow& w, int rank) {
  const AccessEpoch epoch = w.epoch();  // one load
  if (epoch == AccessEpoch::kLockAll) [[likely]]
    return true;
  return epoch == AccessEpoch::kLock &&
         w.lock_state(rank).mode != LockMode::kNone;
}

using FlushFn = int (*)(int, MPI_Win);

// Completes what this process issued to `rank`: direct copies are complete
// already; MPI operations are completed by `flush` on the window they used,
// only where some went to MPI (every call handed to it is marked:
// passthrough.h, PassThrough), so a remote target served by its agent
// costs no MPI flush, whose empty form still polls MPI's network.
Verdict FlushTarget(ManagedWindow& w, int rank, FlushFn flush) {
  if (rank < MPI_PROC_NULL || rank >= w.comm_size()) {
    return Verdict::Error(MPI_ERR_RANK);
  }
  if (rank == MPI_PROC_NULL) return Verdict::Served();
  if (!InPassiveEpochWith(w, rank)) return Verdict::Error(MPI_ERR_RMA_SYNC);
  CompleteDeferred(w);
  PublishDirectStores();
  // Updates sent to the target's agent are complete at the origin already;
  // its RMA is not (agent_rma.cc).
  if (const int rc = flush == PMPI_Win_flush ? AgentFlush(w, rank)
                                             : AgentFlushRma(w, rank)) {
    return Verdict::Error(rc);
  }
  StateGuard guard(w.state_mutex());
  TargetLockState& state = w.lock_state(rank);
  if (state.passed_to_mpi()) {
    if (const int rc = flush(rank, w.app_win())) return Verdict::Raised(rc);
    if (flush == PMPI_Win_flush) state.mpi_pending = MpiPending::kNothing;
  } else if (!w.locks_in_shm()) {
    DriveProgressNowAndThen();
  }
  return Verdict::Served();
}

// The common flushes, inlined into MPI_Win_flush and MPI_Win_flush_local
// (InlineFlush): a passive epoch, profiling off, one thread, nothing passed
// to MPI. On a plain window (all of that on a single node) every target is
// node-local and nothing is pending anywhere unless any_mpi_ops_pending
// says so: no per-target state.
inline bool PlainFlushApplies(const ManagedWindow& w, int rank) {
  return InPassiveEpochWith(w, rank) && !w.mpi_ops_pending();
}

// On a window spanning nodes the target must be node-local with nothing of
// its own pending (such a window has no queued accumulates: they need an
// unstriped slot, which only single-node windows have).
inline bool NodeLocalFlushApplies(const ManagedWindow& w, int rank) {
  return static_cast<unsigned>(rank) < static_cast<unsigned>(w.comm_size()) &&
         !w.plain() && InPassiveEpochWith(w, rank) && w.profile() == nullptr &&
         !w.locks_in_shm() && !g_runtime.thread_multiple() &&
         w.target(rank).node_local() && !w.lock_state(rank).passed_to_mpi();
}

// A fast flush with accumulates queued: they are applied first. Out of
// line, so FastFlush ends in a jump here and needs no stack frame.
[[gnu::noinline]] int FlushQueued(ManagedWindow& w) {
  CompleteDeferred(w);
  PublishDirectStores();
  return MPI_SUCCESS;
}

// What a flush PlainFlushApplies to does: the burst of queued accumulates
// ended, stores published (a fence, when there are any).
[[gnu::always_inline]] inline int FastFlush(ManagedWindow& w) {
  if (!w.deferred().idle()) [[unlikely]] {
    if (!w.deferred().empty()) return FlushQueued(w);
    w.deferred().Disarm();
  }
  PublishDirectStores();
  return MPI_SUCCESS;
}

// Every other flush: timed for the profile, checked in full. The wrappers'
// own arguments first, so their inline paths end in a jump here.
[[gnu::noinline]] int FlushTimed(int rank, MPI_Win win, SyncKind kind,
                                 FlushFn flush) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), kind);
  return w ? FinishSync(*w, FlushTarget(*w, rank, flush)) : flush(rank, win);
}

// MPI_Win_flush and MPI_Win_flush_local: a plain window's flush; else a
// node-local target's on a window spanning nodes, where MPI may be carrying
// other origins' operations to this process (spin_wait.h); else FlushTimed.
[[gnu::always_inline]] inline int InlineFlush(int rank, MPI_Win win,
                                              SyncKind kind, FlushFn flush) {
  ManagedWindow* w = FindManagedHome(win);
  if (w != nullptr) {
    if (w->PlainRank(rank)) [[likely]] {
      if (PlainFlushApplies(*w, rank)) return FastFlush(*w);
    } else if (NodeLocalFlushApplies(*w, rank)) {
      PublishDirectStores();
      DriveProgressNowAndThen();
      return MPI_SUCCESS;
    }
  }
  return FlushTimed(rank, win, kind, flush);
}

// MPI_Win_flush_all and MPI_Win_flush_local_all: direct copies are complete
// already; what went to MPI is flushed target by target (FlushPassedThrough).
Verdict FlushAllTargets(ManagedWindow& w, Completion completion) {
  if (!IsPassive(w.epoch())) return Verdict::Error(MPI_ERR_RMA_SYNC);
  CompleteDeferred(w);
  PublishDirectStores();
  if (const int rc = completion == Completion::kRemote ? AgentFlushAll(w)
                                                       : AgentFlushRmaAll(w)) {
    return Verdict::Error(rc);
  }
  StateGuard guard(w.state_mutex());
  return FlushPassedThrough(w, completion);
}

Verdict Sync(ManagedWindow& w) {
  // Only inside a passive-target epoch, as MPICH checks (MPI's own lock_all
  // epoch on a single-node window's MPI window is not the application's).
  if (!IsPassive(w.epoch())) return Verdict::Error(MPI_ERR_RMA_SYNC);
  CompleteDeferred(w);
  FenceAll();  // the window is unified: a fence is all it takes
  return w.locks_in_shm() ? Verdict::Served()
                          : Verdict::Raised(PMPI_Win_sync(w.app_win()));
}

}  // namespace
}  // namespace rmashim

using namespace rmashim;  // NOLINT: wrappers below only forward

extern "C" {

int MPI_Win_flush(int rank, MPI_Win win) {
  return InlineFlush(rank, win, SyncKind::kFlush, PMPI_Win_flush);
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
  return InlineFlush(rank, win, SyncKind::kFlushLocal, PMPI_Win_flush_local);
}

int MPI_Win_flush_all(MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kFlushAll);
  return w ? FinishSync(*w, FlushAllTargets(*w, Completion::kRemote))
           : PMPI_Win_flush_all(win);
}

int MPI_Win_flush_local_all(MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kFlushLocalAll);
  return w ? FinishSync(*w, FlushAllTargets(*w, Completion::kLocal))
           : PMPI_Win_flush_local_all(win);
}

int MPI_Win_sync(MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kSync);
  return w ? FinishSync(*w, Sync(*w)) : PMPI_Win_sync(win);
}

}  // extern "C"
