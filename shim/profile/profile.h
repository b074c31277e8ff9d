// The profile: what each window did, by operation and locality and by
// target rank, how long synchronization took, and what fell back to MPI
// and why. Off unless
// RMASHIM_PROFILE is set; when off, the data paths pay one predictable
// branch on a null pointer.
#ifndef RMASHIM_SHIM_PROFILE_PROFILE_H_
#define RMASHIM_SHIM_PROFILE_PROFILE_H_

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace rmashim {

enum class OpKind : uint8_t {
  kPut,
  kGet,
  kAccumulate,
  kGetAccumulate,
  kFetchAndOp,
  kCompareAndSwap,
  kRput,
  kRget,
  kRaccumulate,
  kRgetAccumulate,
  kCount
};
enum class Reach : uint8_t { kSelf, kNode, kRemote, kCount };
enum class SyncKind : uint8_t {
  kLock,
  kUnlock,
  kLockAll,
  kUnlockAll,
  kFlush,
  kFlushLocal,
  kFlushAll,
  kFlushLocalAll,
  kSync,
  kFence,
  kPost,
  kStart,
  kComplete,
  kWait,
  kTest,
  kCount
};
// Why a node-local operation went to MPI instead of shared memory.
enum class Fallback : uint8_t {
  kUnmanagedFlavor,   // MPI_Win_create_dynamic
  kOptedOut,          // info rmashim_managed=false, or RMASHIM_DISABLE
  kNoSharedMemory,    // /dev/shm exhausted, cross-memory attach refused
  kShimSetupFailed,   // the shim's window table full, or its setup failed
  kMultiNodeWindow,   // accumulate family / PSCW on a window spanning nodes
  kCreateAccumulate,  // (kept in the schema; no longer given: MPI_Win_create
                      // memory is shared or reached by cross-memory attach)
  kDatatype,          // layout the shim does not flatten (darray, ...)
  kLargeCount,        // MPI-4 large-count call with a count beyond int
  kCount
};

const char* Name(OpKind k);
const char* Name(Reach r);
const char* Name(SyncKind k);
const char* Name(Fallback f);

// One rank's record of one window: plain data, gathered with MPI_BYTE.
struct WindowProfile {
  int owner = 0;     // world rank of the window's rank 0
  int sequence = 0;  // the owner's count of windows it owns, from 0
  int ranks = 0;     // size of the window's group
  int world_rank = 0;
  char flavor[12] = {};
  char name[64] = {};  // MPI_Win_set_name, if any
  bool managed = false;
  Fallback unmanaged_why = Fallback::kOptedOut;  // when not managed
  struct Ops {
    uint64_t count, bytes;
  } ops[int(OpKind::kCount)][int(Reach::kCount)] = {};
  struct Sync {
    uint64_t calls;
    double seconds;
  } sync[int(SyncKind::kCount)] = {};
  uint64_t contended_locks = 0;  // shm lock acquisitions that had to wait
  double contended_seconds = 0;  // and how long they waited
  uint64_t fallbacks[int(Fallback::kCount)] = {};
  // Operations to remote targets handed to MPI; the other remote ones went
  // through the target's agent (shim/agent/agent.h).
  uint64_t remote_to_mpi = 0;
  // This process's operations and bytes by target window rank (`ranks`
  // entries), allocated on the window's first counted operation
  // (Profiler::TargetRow); an address of this process, meaningless once
  // the record is gathered.
  Ops* by_target = nullptr;
};

class Profiler {
 public:
  // Reads RMASHIM_PROFILE: unset or 0 = off, 1 = report, path.json = report
  // and JSON file. Called from MPI_Init.
  void Start(bool thread_multiple);
  bool on() const { return on_; }

  // Collective over `comm` (window creation): a new record for `win`, a
  // managed window or one left to MPI for the reason `unmanaged_why`.
  WindowProfile* OpenManaged(MPI_Win win, MPI_Comm comm, const char* flavor);
  WindowProfile* OpenUnmanaged(MPI_Win win, MPI_Comm comm, const char* flavor,
                               Fallback unmanaged_why);
  // The record of a live window, or nullptr.
  WindowProfile* Find(MPI_Win win);
  // Reach of `target` in an unmanaged window's group.
  Reach ReachOf(MPI_Win win, int target);
  void Close(MPI_Win win);  // the record stays for the report
  // `p`'s by_target row, allocated (zeros) on the first call.
  WindowProfile::Ops* TargetRow(WindowProfile* p);

  // Collective over MPI_COMM_WORLD, right before MPI_Finalize: aggregates
  // and prints on rank 0 (stderr), writes JSON if asked.
  void Report();

  bool thread_multiple() const { return thread_multiple_; }

 private:
  WindowProfile* Open(MPI_Win win, MPI_Comm comm, const char* flavor,
                      bool managed, Fallback unmanaged_why);
  struct Live {
    WindowProfile* record;
    std::vector<uint8_t> node_local;  // by window rank
    int rank;
  };
  // A record's by_target row and the world rank of each window rank
  // (empty where the window's ranks are the world's).
  struct Targets {
    std::vector<WindowProfile::Ops> row;
    std::vector<int> world_of;
  };
  bool on_ = false;
  bool thread_multiple_ = false;
  std::string json_path_;
  int next_sequence_ = 0;
  std::mutex mutex_;
  std::deque<WindowProfile> records_;  // stable addresses
  std::unordered_map<MPI_Win, Live> live_;
  std::unordered_map<const WindowProfile*, Targets> targets_;
};

extern Profiler g_profiler;

// Counting helpers: no-ops on a null record.
inline void Bump(uint64_t& counter, uint64_t by) {
  if (g_profiler.thread_multiple()) {
    std::atomic_ref<uint64_t>(counter).fetch_add(by, std::memory_order_relaxed);
  } else {
    counter += by;
  }
}
inline void AddSeconds(double& total, double seconds) {
  if (g_profiler.thread_multiple()) {
    std::atomic_ref<double>(total).fetch_add(seconds,
                                             std::memory_order_relaxed);
  } else {
    total += seconds;
  }
}
// Counts one operation of `bytes` to window rank `target` (ignored out of
// range; callers pass MPI_PROC_NULL through).
inline void CountOp(WindowProfile* p, OpKind kind, Reach reach, int target,
                    uint64_t bytes) {
  if (p == nullptr) return;
  WindowProfile::Ops& ops = p->ops[int(kind)][int(reach)];
  Bump(ops.count, 1);
  Bump(ops.bytes, bytes);
  if (target < 0 || target >= p->ranks) return;
  WindowProfile::Ops* row = std::atomic_ref<WindowProfile::Ops*>(p->by_target)
                                .load(std::memory_order_acquire);
  if (row == nullptr) row = g_profiler.TargetRow(p);
  Bump(row[target].count, 1);
  Bump(row[target].bytes, bytes);
}
inline void CountFallback(WindowProfile* p, Fallback why) {
  if (p != nullptr) Bump(p->fallbacks[int(why)], 1);
}
inline void CountRemoteToMpi(WindowProfile* p) {
  if (p != nullptr) Bump(p->remote_to_mpi, 1);
}

// Bytes of `count` x `type` (0 for invalid input).
uint64_t PayloadBytes(MPI_Count count, MPI_Datatype type);

// Counts one operation of `count` x `type` (bytes computed only when
// profiling).
inline void CountOp(WindowProfile* p, OpKind kind, Reach reach, int target,
                    MPI_Count count, MPI_Datatype type) {
  if (p != nullptr) CountOp(p, kind, reach, target, PayloadBytes(count, type));
}

// The same for a window the shim does not manage: node-local operations on
// it are counted as fallbacks too. Inline, so profiling off costs one branch.
void RecordUnmanagedOp(MPI_Win win, OpKind kind, int target, MPI_Count count,
                       MPI_Datatype type);
inline void CountUnmanagedOp(MPI_Win win, OpKind kind, int target,
                             MPI_Count count, MPI_Datatype type) {
  if (g_profiler.on()) RecordUnmanagedOp(win, kind, target, count, type);
}
inline WindowProfile* UnmanagedProfile(MPI_Win win) {
  return g_profiler.on() ? g_profiler.Find(win) : nullptr;
}

// Acquires a shared-memory lock with `acquire` (returns whether it had to
// wait); with profiling on, records acquisitions that waited and how long.
template <class Acquire>
void AcquireCounted(WindowProfile* p, Acquire acquire) {
  if (p == nullptr) {
    acquire();
    return;
  }
  const double start = PMPI_Wtime();
  if (!acquire()) return;
  Bump(p->contended_locks, 1);
  AddSeconds(p->contended_seconds, PMPI_Wtime() - start);
}

// Times one synchronization call into the window's record.
class SyncTimer {
 public:
  SyncTimer(WindowProfile* p, SyncKind kind)
      : p_(p), kind_(kind), start_(p ? PMPI_Wtime() : 0) {}
  ~SyncTimer() {
    if (p_ == nullptr) return;
    WindowProfile::Sync& s = p_->sync[int(kind_)];
    Bump(s.calls, 1);
    AddSeconds(s.seconds, PMPI_Wtime() - start_);
  }
  SyncTimer(const SyncTimer&) = delete;
  SyncTimer& operator=(const SyncTimer&) = delete;

 private:
  WindowProfile* p_;
  SyncKind kind_;
  double start_;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_PROFILE_PROFILE_H_
