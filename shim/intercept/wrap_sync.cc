// Passive-target locks on managed windows: lock, unlock, lock_all and
// unlock_all (the flushes that complete their epochs, and MPI_Win_sync, are
// in wrap_flush.cc). On a window whose ranks all share this node the shim
// serves locks with the lock words of shim/sync/shm_lock.h, so an origin
// never waits for the target to call MPI; the shim keeps the application's
// MPI window in an MPI lock_all epoch for what it passes to MPI. A window
// that spans nodes keeps MPI's own lock on the application's window (it
// must exclude remote origins too) unless the agent's locks serve it
// (shim/agent/agent_locks.h); direct copies to node-local targets happen
// inside that epoch.
//
// Active target (fence, PSCW) is in wrap_active.cc.
#include <mpi.h>

#include <atomic>

#include "shim/agent/agent.h"
#include "shim/base/direct_stores.h"
#include "shim/base/spin_wait.h"
#include "shim/intercept/finish_call.h"
#include "shim/intercept/passive_target.h"
#include "shim/move/accumulate.h"
#include "shim/process/runtime.h"
#include "shim/sync/mpi_lock_all.h"
#include "shim/sync/shm_lock.h"
#include "shim/windows/passthrough.h"
#include "shim/windows/window.h"

namespace rmashim {
namespace {

AgentLockKind AgentLockKindOf(int lock_type) {
  return lock_type == MPI_LOCK_SHARED ? AgentLockKind::kShared
                                      : AgentLockKind::kExclusive;
}

LockMode LockModeOf(int lock_type) {
  return lock_type == MPI_LOCK_SHARED ? LockMode::kShared
                                      : LockMode::kExclusive;
}

// Whether MPI_Win_lock's inline path applies: a valid rank with no lock of
// this process yet, in no epoch or a lock epoch, on a plain
// window.
[[gnu::always_inline]] inline bool FastLockApplies(const ManagedWindow& w,
                                                   int rank) {
  const AccessEpoch epoch = w.epoch();  // one load of the atomic byte
  return w.PlainRank(rank) &&
         (epoch == AccessEpoch::kNone || epoch == AccessEpoch::kLock) &&
         w.lock_state(rank).mode == LockMode::kNone;
}

// The common unlock: a lock word this process took (an exclusive one by
// announcement, its only one), nothing passed to MPI, no accumulate queued.
// One compare of the target's whole lock state against LockedBits says
// "locked, not NOCHECK, nothing passed to MPI"; a locked target means a
// lock epoch (ManagedWindow::NoteLocked sets both; NoteUnlocked clears the
// mode and ends the epoch with the last lock). As in MPI_Win_lock, nothing here
// calls out, and false changes nothing the full path would not (it ends the
// accumulate burst too).
[[nodiscard]] [[gnu::always_inline]] inline bool TryFastUnlock(ManagedWindow& w,
                                                               int rank) {
  if (!w.PlainRank(rank)) return false;
  if (!w.deferred().idle()) [[unlikely]] {
    if (!w.deferred().empty()) return false;
    w.deferred().Disarm();  // the burst ends here, as in CompleteDeferred
  }
  // The exclusive release laid out straight through (no taken branch), the
  // shared one aside; in each the bookkeeping first, the release last, so
  // the two do not end alike and the compiler does not merge their tails.
  TargetLockState& state = w.lock_state(rank);
  const uint64_t bits = state.bits();
  if (bits != LockedBits(LockMode::kExclusive) ||
      !w.exclusive_share().HoldsOneAnnounced()) [[unlikely]] {
    if (bits != LockedBits(LockMode::kShared)) return false;
    w.NoteUnlocked(state);
    PublishBeforeInlineLockedRelease();
    ReleaseShared(w.lock_words(rank));
    return true;
  }
  w.NoteUnlocked(state);
  PublishBeforeInlineLockedRelease();
  w.exclusive_share().ReleaseAnnounced(w.lock_words(rank).lock);
  return true;
}

Verdict Lock(ManagedWindow& w, int lock_type, int rank, int assert) {
  if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE) {
    // What MPICH reports (not MPI_ERR_LOCKTYPE).
    return Verdict::Error(MPI_ERR_ARG);
  }
  if (rank < MPI_PROC_NULL || rank >= w.comm_size()) {
    return Verdict::Error(MPI_ERR_RANK);
  }
  if (!ValidAssert(assert, kLockAsserts)) return Verdict::Error(MPI_ERR_ARG);
  if (rank == MPI_PROC_NULL) return Verdict::Served();
  // One read of the epoch: under MPI_THREAD_MULTIPLE another thread's
  // unlock of its last lock may turn kLock into kNone between two reads,
  // and a check that saw kLock first and kNone second would fail a valid
  // lock (either value alone admits it).
  const AccessEpoch epoch = w.epoch();
  if (!(epoch == AccessEpoch::kNone || epoch == AccessEpoch::kFence ||
        epoch == AccessEpoch::kLock) ||
      w.lock_state(rank).mode != LockMode::kNone) {
    return Verdict::Error(MPI_ERR_RMA_SYNC);
  }
  const bool nocheck = (assert& MPI_MODE_NOCHECK) != 0;
  if (!w.lock_gates()) {
    if (const int rc = PMPI_Win_lock(lock_type, rank, assert, w.app_win())) {
      return Verdict::Raised(rc);
    }
  } else {
    if (const Verdict v = w.OpenMpiPassiveEpoch(); !v.ok()) return v;
    if (nocheck) {
    } else if (w.target(rank).node_local()) {
      AcquireCounted(w.profile(), [&] {
        return lock_type == MPI_LOCK_SHARED
                   ? AcquireShared(w.lock_words(rank))
                   : AcquireExclusive(w.exclusive_share(), w.all_shards(),
                                      w.lock_words(rank));
      });
    } else if (const int rc = AgentLock(w, rank, AgentLockKindOf(lock_type))) {
      return Verdict::Error(rc);
    }
  }
  StateGuard guard(w.state_mutex());  // taken after spinning, never during
  // After a fence that opened an epoch: every other target's byte cleared.
  if (GivesEveryTarget(w.epoch())) w.SetEpoch(AccessEpoch::kNone);
  w.NoteLocked(w.lock_state(rank), LockModeOf(lock_type), nocheck);
  return Verdict::Served();
}

// The first failure of an epoch's end; the later steps still run (the
// lock is released whatever MPI said of a flush). A later failure MPI has
// raised already replaces one the shim has not, so the window's handler
// runs once.
void KeepFirstFailure(Verdict& first, Verdict next) {
  if (first.ok() || (!first.raised() && next.raised())) first = next;
}

Verdict Unlock(ManagedWindow& w, int rank) {
  if (rank < MPI_PROC_NULL || rank >= w.comm_size()) {
    return Verdict::Error(MPI_ERR_RANK);
  }
  if (rank == MPI_PROC_NULL) return Verdict::Served();
  TargetLockState& state = w.lock_state(rank);
  if (w.epoch() != AccessEpoch::kLock || state.mode == LockMode::kNone) {
    return Verdict::Error(MPI_ERR_RMA_SYNC);
  }
  CompleteDeferred(w);
  // Releasing the lock word publishes the stores by itself on x86.
  if (w.lock_gates() && !state.nocheck) {
    PublishBeforeLockedRelease();
  } else {
    FenceAll();
  }
  // A lock an agent granted: AgentUnlock completes the agent's updates
  // with the release.
  const bool released_by_agent =
      w.locks_via_agent() && !state.nocheck && !w.target(rank).node_local();
  // A failed flush (a lost agent link) is reported, but the lock is still
  // released.
  const int flushed = released_by_agent ? MPI_SUCCESS : AgentFlush(w, rank);
  StateGuard guard(w.state_mutex());
  Verdict result = Verdict::Error(flushed);
  if (!w.lock_gates()) {
    KeepFirstFailure(result,
                     Verdict::Raised(PMPI_Win_unlock(rank, w.app_win())));
  } else {
    if (state.passed_to_mpi()) {
      KeepFirstFailure(result,
                       Verdict::Raised(PMPI_Win_flush(rank, w.app_win())));
    }
    if (state.nocheck) {
    } else if (!w.target(rank).node_local()) {  // after its operations
      KeepFirstFailure(result,
                       Verdict::Error(AgentUnlock(
                           w, rank,
                           AgentLockKindOf(state.mode == LockMode::kShared
                                               ? MPI_LOCK_SHARED
                                               : MPI_LOCK_EXCLUSIVE))));
    } else {
      if (state.mode == LockMode::kShared) {
        ReleaseShared(w.lock_words(rank));
      } else {
        ReleaseExclusive(w.exclusive_share(), w.all_shards(),
                         w.lock_words(rank));
      }
    }
    // A window spanning nodes: a program may poll node-local memory with
    // lock, fetch_and_op and unlock (OpenCoarrays' atomic_ref) while other
    // origins' puts and gets through MPI wait for this process (spin_wait.h).
    if (!w.locks_in_shm()) DriveProgressNowAndThen();
  }
  w.NoteUnlocked(state);
  return result;
}

// Every other lock and unlock: timed for the profile, checked in full.
// The wrappers' own arguments, so their inline paths end in a jump here.
[[gnu::noinline]] int LockTimed(int lock_type, int rank, int assert,
                                MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kLock);
  return w ? FinishSync(*w, Lock(*w, lock_type, rank, assert))
           : PMPI_Win_lock(lock_type, rank, assert, win);
}

[[gnu::noinline]] int UnlockTimed(int rank, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kUnlock);
  return w ? FinishSync(*w, Unlock(*w, rank)) : PMPI_Win_unlock(rank, win);
}

Verdict LockAll(ManagedWindow& w, int assert) {
  if (!ValidAssert(assert, kLockAsserts)) return Verdict::Error(MPI_ERR_ARG);
  if (!w.may_start_epoch()) return Verdict::Error(MPI_ERR_RMA_SYNC);
  w.set_lock_all_nocheck((assert& MPI_MODE_NOCHECK) != 0);
  if (!w.lock_gates()) {
    const int rc = LocksAllTargetsInOrder(w.comm_size(), w.lock_all_nocheck())
                       ? LockEveryTargetShared(w.app_win(), w.comm_size())
                       : PMPI_Win_lock_all(assert, w.app_win());
    if (rc != MPI_SUCCESS) return Verdict::Raised(rc);
  } else if (const Verdict v = w.OpenMpiPassiveEpoch(); !v.ok()) {
    return v;
  } else if (!w.lock_all_nocheck()) {
    bool own_taken = false;
    const auto lock_own_node = [&] {
      w.set_lock_all_biased(
          TryAcquireAllBiased(w.all_shards(), w.own_lock_all_visible()));
      if (!w.lock_all_biased()) {
        AcquireCounted(w.profile(), [&] {
          return AcquireAll(w.own_all_shard(), w.all_shards());
        });
        OfferBias(w.all_shards());
      }
      own_taken = true;
    };
    if (!w.locks_via_agent()) {
      lock_own_node();
    } else if (const int rc = AgentLockAll(w, lock_own_node)) {
      if (own_taken) ReleaseAll(w.own_all_shard());  // no bias off one node
      return Verdict::Error(rc);
    }
  }
  w.SetEpoch(AccessEpoch::kLockAll);
  return Verdict::Served();
}

Verdict UnlockAll(ManagedWindow& w) {
  if (w.epoch() != AccessEpoch::kLockAll)
    return Verdict::Error(MPI_ERR_RMA_SYNC);
  CompleteDeferred(w);
  if (w.lock_all_biased()) {
    PublishDirectStores();  // before the plain release store below
  } else if (w.lock_gates() && !w.lock_all_nocheck()) {
    PublishBeforeLockedRelease();
  } else {
    FenceAll();
  }
  // A failed flush (a lost agent link) is reported, but the epoch still
  // ends and every lock share is released. The releases of other nodes'
  // shares complete the updates to those nodes' lock agents.
  const bool agent_releases = w.lock_gates() && !w.lock_all_nocheck() &&
                              !w.lock_all_biased() && w.locks_via_agent();
  const int flushed =
      agent_releases ? AgentFlushAllButLockAgents(w) : AgentFlushAll(w);
  StateGuard guard(w.state_mutex());
  Verdict result = Verdict::Error(flushed);
  if (!w.lock_gates()) {
    KeepFirstFailure(
        result, Verdict::Raised(
                    LocksAllTargetsInOrder(w.comm_size(), w.lock_all_nocheck())
                        ? UnlockEveryTarget(w.app_win(), w.comm_size())
                        : PMPI_Win_unlock_all(w.app_win())));
  } else {
    KeepFirstFailure(result, FlushPassedThrough(w, Completion::kRemote));
    if (w.lock_all_nocheck()) {
    } else if (w.lock_all_biased()) {
      ReleaseAllBiased(w.own_lock_all_visible());
    } else {
      ReleaseAll(w.own_all_shard());
      if (agent_releases) {
        KeepFirstFailure(result, Verdict::Error(AgentUnlockAll(w)));
      }
    }
    w.set_lock_all_biased(false);
    if (!w.locks_in_shm()) DriveProgressNowAndThen();  // as in Unlock
  }
  w.AllMpiPendingDone();
  w.SetEpoch(AccessEpoch::kNone);
  return result;
}

}  // namespace
}  // namespace rmashim

using namespace rmashim;  // NOLINT: wrappers below only forward

extern "C" {

// The inline path takes a lock word only when one CAS does it (for an
// exclusive lock, the process's first, announced: TryAcquireAnnounced).
// Every miss, having changed nothing, jumps to the full path; past the
// checks with the arguments it knows (assert 0, the lock type), so fewer
// stay in registers and the inline path needs no stack frame.
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  // Asserts first: past this test `assert` is 0 and its register is free.
  if (assert != 0) return LockTimed(lock_type, rank, assert, win);
  ManagedWindow* w = FindManagedHome(win);  // a miss: the full path
  if (w == nullptr || !FastLockApplies(*w, rank)) {
    return LockTimed(lock_type, rank, 0, win);
  }
  // Its address taken before the lock word's CAS, which the compiler
  // cannot move loads across (the vector's data pointer is not reloaded).
  TargetLockState& state = w->lock_state(rank);
  // NoteLocked with a constant mode in each branch: its stores merge.
  if (lock_type == MPI_LOCK_EXCLUSIVE) [[likely]] {
    if (!w->exclusive_share().TryAcquireAnnounced(w->lock_words(rank).lock)) {
      return LockTimed(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    }
    w->NoteLocked(state, LockMode::kExclusive, /*nocheck=*/false);
    return MPI_SUCCESS;
  }
  if (lock_type == MPI_LOCK_SHARED &&
      gate::TryEnter(w->lock_words(rank).lock, gate::kAUnit, gate::kBMask)) {
    w->NoteLocked(state, LockMode::kShared, /*nocheck=*/false);
    return MPI_SUCCESS;
  }
  return LockTimed(lock_type, rank, 0, win);
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  ManagedWindow* w = FindManagedHome(win);
  if (w != nullptr && TryFastUnlock(*w, rank)) return MPI_SUCCESS;
  return UnlockTimed(rank, win);
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kLockAll);
  return w ? FinishSync(*w, LockAll(*w, assert))
           : PMPI_Win_lock_all(assert, win);
}

int MPI_Win_unlock_all(MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  SyncTimer timer(ProfileOf(win, w), SyncKind::kUnlockAll);
  return w ? FinishSync(*w, UnlockAll(*w)) : PMPI_Win_unlock_all(win);
}
}  // extern "C"
