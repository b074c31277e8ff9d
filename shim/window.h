// A window managed by the shim: the application's MPI window laid over
// node-shared memory, plus what the fast path needs to reach node-local
// targets directly ("nested windows", mpi3-shared-memory-for-pgas).
#ifndef RMASHIM_SHIM_WINDOW_H_
#define RMASHIM_SHIM_WINDOW_H_

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shim/shm_lock.h"

namespace rmashim {

// Spin locks that make accumulates on elements too wide for CPU atomics
// (long double, complex, MINLOC/MAXLOC pairs) element-wise atomic. An
// element's stripe depends only on its offset, so every origin updating the
// same element with the same type takes the same lock.
inline constexpr int kStripes = 256;

// The start of every rank's shared segment; the window's memory follows it.
struct alignas(64) SegmentHeader {
  LockWords lock_words;
  std::atomic<uint32_t> stripes[kStripes];
};
inline constexpr MPI_Aint kHeaderBytes = 4096;  // keeps user memory page-aligned
static_assert(sizeof(SegmentHeader) <= kHeaderBytes);

// One rank of the window's communicator as seen from this process.
struct Target {
  std::byte* base = nullptr;  // mapped window memory (never null on-node); nullptr off-node
  MPI_Aint size = 0;          // bytes
  int disp_unit = 1;
  SegmentHeader* header = nullptr;  // node-local targets only
  bool node_local() const { return base != nullptr; }
};

// The access epoch this process has opened on the window (MPI-3 11.5).
enum class AccessEpoch : uint8_t { kNone, kFence, kPscw, kLock, kLockAll };

enum class LockMode : uint8_t { kNone, kShared, kExclusive };

struct TargetLockState {
  LockMode mode = LockMode::kNone;
  bool nocheck = false;          // MPI_MODE_NOCHECK: no lock word was taken
  bool mpi_ops_pending = false;  // passed-through ops not yet flushed
};

class ManagedWindow {
 public:
  // Collective over `comm`, like MPI_Win_allocate. On success `*out` owns
  // every MPI object it created.
  static int Allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                      MPI_Comm comm, void* baseptr, ManagedWindow** out);
  ~ManagedWindow();  // frees the MPI objects (collective, like MPI_Win_free)

  ManagedWindow(const ManagedWindow&) = delete;
  ManagedWindow& operator=(const ManagedWindow&) = delete;

  MPI_Win app_win() const { return app_win_; }
  int rank() const { return rank_; }
  int comm_size() const { return static_cast<int>(targets_.size()); }
  const Target& target(int rank) const { return targets_[rank]; }

  // Locks live in shared memory only when every rank is on this node; a
  // window spanning nodes keeps MPI's own lock so remote origins are
  // excluded too.
  bool locks_in_shm() const { return internal_win_ != MPI_WIN_NULL; }

  // The MPI window that operations the shim passes through must use: while
  // the shim serves a passive epoch in shared memory the application's
  // window has no MPI epoch, so they go to the internal window that is kept
  // in a lock_all(MPI_MODE_NOCHECK) epoch for its whole life.
  MPI_Win passthrough_win() const {
    const bool shm_epoch = locks_in_shm() && (epoch == AccessEpoch::kLock ||
                                              epoch == AccessEpoch::kLockAll);
    return shm_epoch ? internal_win_ : app_win_;
  }
  MPI_Win internal_win() const { return internal_win_; }
  MPI_Comm node_comm() const { return node_comm_; }
  bool has_node_peers() const { return node_size_ > 1; }

  LockWords& lock_words(int rank) { return targets_[rank].header->lock_words; }
  LockWords& all_lock_words() { return targets_[0].header->lock_words; }

  // Origin-side epoch state (local to this process).
  AccessEpoch epoch = AccessEpoch::kNone;
  int locks_held = 0;
  bool lock_all_nocheck = false;
  bool any_mpi_ops_pending = false;
  std::vector<TargetLockState> locks;  // indexed by target rank

 private:
  ManagedWindow() = default;

  MPI_Win app_win_ = MPI_WIN_NULL;
  MPI_Win internal_win_ = MPI_WIN_NULL;
  MPI_Win shm_win_ = MPI_WIN_NULL;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int node_size_ = 1;
  std::vector<Target> targets_;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOW_H_
