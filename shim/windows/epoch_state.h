// A process's synchronization state on one managed window, as the window
// keeps it (window.h): which access epoch it has open, what it holds on
// each target, and its PSCW bookkeeping; and the assert bits each
// synchronization call accepts.
#ifndef RMASHIM_SHIM_WINDOWS_EPOCH_STATE_H_
#define RMASHIM_SHIM_WINDOWS_EPOCH_STATE_H_

#include <mpi.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <vector>

#include "shim/sync/mpi_pscw.h"

namespace rmashim {

// The assert bits each synchronization call accepts (MPI-3 11.5.5); others
// get MPI_ERR_ARG, as from MPICH.
inline constexpr int kLockAsserts = MPI_MODE_NOCHECK;
inline constexpr int kFenceAsserts =
    MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;
inline constexpr int kPostAsserts =
    MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT;
inline constexpr int kStartAsserts = MPI_MODE_NOCHECK;
inline bool ValidAssert(int assert, int allowed) {
  return (assert & ~allowed) == 0;
}

// What this process handed MPI for a target and has not completed yet
// (passthrough.h). Puts and gets are told apart from the accumulate family
// because MPICH moves them differently: over UCX's RMA, whose worker flush
// in MPI's fence and complete may miss fragments still queued
// (shim/sync/mpi_flush.h), against the accumulate family's active messages
// (MPIDIG in MPICH 4.0-5.0's ch4), each its own UCX request: MPI's fence
// waits for their local completion and for the targets' acknowledgements
// of accumulates, and complete for their local completion, then sends its
// complete message behind them on the same path.
// Flags: what went to MPI since the last completion.
enum class MpiPending : uint8_t {
  kNothing = 0,
  kUpdates = 1,  // accumulates, fetch_and_op or compare_and_swap
  kCopies = 2,   // puts or gets
};
inline MpiPending operator|(MpiPending a, MpiPending b) {
  return static_cast<MpiPending>(static_cast<uint8_t>(a) |
                                 static_cast<uint8_t>(b));
}
// Whether `marks` include `kind`.
inline bool Includes(MpiPending marks, MpiPending kind) {
  return (static_cast<uint8_t>(marks) & static_cast<uint8_t>(kind)) != 0;
}

// The access epoch this process has opened on the window (MPI-3 11.5).
// Bit 2 marks the epochs that give access to every target (fence,
// lock_all): the fast paths test it with one instruction.
enum class AccessEpoch : uint8_t {
  kNone = 0,
  kPscw = 1,
  kLock = 2,
  kFence = 4,
  kLockAll = 5,
};
inline bool GivesEveryTarget(AccessEpoch e) {
  return (static_cast<uint8_t>(e) & 4) != 0;
}
// A passive-target epoch: lock or lock_all. Callers read the epoch once
// (EpochWord below): two reads may see two values under MPI_THREAD_MULTIPLE.
inline bool IsPassive(AccessEpoch e) {
  return e == AccessEpoch::kLock || e == AccessEpoch::kLockAll;
}

// The epoch word of a window. Under MPI_THREAD_MULTIPLE one thread changes it
// (MPI_Win_lock/unlock, fence, PSCW; under the window's state mutex) while
// other threads read it without the mutex on the data path (access checks of
// put/get/accumulate, the epoch checks of lock/unlock/flush). A plain enum
// there is a data race (undefined behaviour; ThreadSanitizer reports it in
// shim_threads_test), so it is a relaxed atomic: the same single-byte loads
// and stores on x86, no fence, nothing on the data path gets slower. The
// mutex still orders everything else the epoch guards.
class EpochWord {
 public:
  operator AccessEpoch() const { return v_.load(std::memory_order_relaxed); }
  EpochWord& operator=(AccessEpoch e) {
    v_.store(e, std::memory_order_relaxed);
    return *this;
  }

 private:
  std::atomic<AccessEpoch> v_{AccessEpoch::kNone};
};

enum class LockMode : uint8_t { kNone, kShared, kExclusive };

// This process's passive- and active-target state towards one target.
// Eight bytes, so the fast paths index the array with a scaled address.
struct alignas(8) TargetLockState {
  // The current epoch gives direct access to the target without waiting:
  // a fence or lock_all epoch (every target: ManagedWindow::SetEpoch), a
  // lock on it (mode != kNone), or, in a shared-memory PSCW epoch, a
  // target of the current start whose post has been matched. Kept by the
  // code that changes those epochs and fields, so DirectWord (access.h)
  // tests this one byte for them all.
  bool direct = false;
  LockMode mode = LockMode::kNone;
  bool nocheck = false;  // MPI_MODE_NOCHECK: no lock word was taken
  MpiPending mpi_pending = MpiPending::kNothing;  // passed through, not flushed
  bool in_access_group = false;  // PSCW: target of the current start
  bool post_seen = false;        // PSCW: its post for this epoch arrived
  uint8_t unused[2] = {};        // no padding: bits() sees defined bytes

  bool passed_to_mpi() const { return mpi_pending != MpiPending::kNothing; }

  // All fields as one value, so MPI_Win_unlock's inline path tests them
  // with one compare against LockedBits.
  uint64_t bits() const { return std::bit_cast<uint64_t>(*this); }
};
static_assert(sizeof(TargetLockState) == 8);

// The bits() of a target locked in `mode` by the shared-memory locks, with
// nothing passed to MPI since: what ManagedWindow::NoteLocked leaves and the
// inline unlock releases. (In a lock epoch the PSCW fields are always clear.)
constexpr uint64_t LockedBits(LockMode mode) {
  return std::bit_cast<uint64_t>(TargetLockState{.direct = true, .mode = mode});
}

// PSCW state of this process.
struct PscwState {
  std::vector<int> access_group;         // window ranks of the current start
  std::vector<uint32_t> posts_consumed;  // per target: posts matched so far
  bool access_nocheck = false;
  // Between post and wait/test. Atomic: fence, free and the PSCW calls of
  // other threads read it without the state mutex.
  std::atomic<bool> exposed{false};
  uint64_t expected_completes = 0;  // completes owed to this rank so far
  PostMatching mpi_posts;  // windows spanning nodes: MPI's PSCW (mpi_pscw.h)
  // MPI's PSCW on agent windows: the origins of the current post on other
  // nodes (world ranks), and whether their counts of updates were all
  // received.
  std::vector<int> exposure_origins;
  bool counts_received = false;
};

// Fence epochs on a window whose remote targets' agents apply its updates
// (shim/agent/agent.h, AgentCompleteFence): updates that wait for no
// answer, counted where they are sent and where they are applied.
struct AgentFenceCounts {
  // Origin: per target, updates sent to its agent since this process's
  // last fence or PSCW complete (with whether the link there was lost,
  // filled in when they are reported).
  std::vector<UpdateCount> sent;
  // Target: updates to this window this process's agent has applied
  // (written by the agent's thread), and how many the fences so far said
  // had been sent here (the agent wakes an epoch end waiting in between
  // once `applied` reaches it, agent_state.h's arrivals_wake; all
  // sequentially consistent, so either the waiter sees the last update or
  // the agent sees what it waits for).
  std::atomic<uint64_t> applied{0};
  std::atomic<uint64_t> expected{0};
  // A link from an origin of this window to this process's agent was lost
  // (an origin's count said so, or the agent saw it end): every epoch end
  // reports MPI_ERR_OTHER from then on, waiting for nothing (the counts
  // cannot be trusted). Used by the thread that calls MPI.
  bool lost = false;
  // The window's ranks as a communicator, made at the first fence that
  // needs one (MPI_Comm_create_group), freed with the window.
  MPI_Comm comm = MPI_COMM_NULL;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOWS_EPOCH_STATE_H_
