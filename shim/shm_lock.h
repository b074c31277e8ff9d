// Passive-target locks in shared memory, after foMPI's protocol.
//
// Every target's segment header holds one `lock` word: bit 63 is set while an
// origin holds MPI_LOCK_EXCLUSIVE on it, bits 0..62 count MPI_LOCK_SHARED
// holders. Window rank 0's header also holds the `all` word: its high half
// counts origins that hold (or are acquiring) an exclusive lock on any
// target, its low half counts MPI_Win_lock_all holders.
//
// Why this excludes correctly:
//  - shared vs exclusive on one target: a shared locker increments `lock` and
//    backs off (undoes) if it saw the exclusive bit; an exclusive locker only
//    wins the CAS 0 -> EXCLUSIVE, i.e. with no shared holder and no other
//    exclusive holder. Whoever moves `lock` first wins; the other retries.
//  - lock_all vs exclusive: lock_all increments the low half of `all` and
//    backs off if the high half is non-zero; an exclusive locker increments
//    the high half first and backs off if the low half is non-zero, and only
//    then tries the target's `lock`. Both are fetch-and-adds on one word, so
//    at most one side sees the other's count as zero.
//  - lock_all vs shared: both are shared, nothing to exclude.
// Every operation is a CPU atomic on mapped memory: no target process ever
// has to call MPI for an origin to make progress (truly one-sided).
#ifndef RMASHIM_SHIM_SHM_LOCK_H_
#define RMASHIM_SHIM_SHM_LOCK_H_

#include <atomic>
#include <cstdint>

namespace rmashim {

struct alignas(64) LockWords {
  std::atomic<uint64_t> lock{0};  // per target
  std::atomic<uint64_t> all{0};   // used in window rank 0's header only
};
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "lock words live in shared memory and must be address-free");

inline constexpr uint64_t kExclusiveBit = uint64_t{1} << 63;
inline constexpr uint64_t kWriterUnit = uint64_t{1} << 32;  // `all` high half
inline constexpr uint64_t kReaderMask = kWriterUnit - 1;    // `all` low half

// Spins politely: pause instructions with exponential growth, then yields the
// core (ranks are often oversubscribed on small nodes) and runs the progress
// hook: a process waiting for a lock is inside an MPI call, so it must keep
// serving the MPI operations other processes direct at it.
class Backoff {
 public:
  void Wait();
  bool waited() const { return round_ != 0; }

 private:
  uint32_t round_ = 0;
};

// Called while a Backoff yields; set once at startup (nullptr: none).
void SetSpinProgress(void (*progress)());
// Runs that hook once (for polling calls such as MPI_Win_test).
void DriveProgress();

// The Acquire functions return true when they had to wait (contention).
bool AcquireShared(LockWords& target);
void ReleaseShared(LockWords& target);
bool AcquireExclusive(LockWords& all_owner, LockWords& target);
void ReleaseExclusive(LockWords& all_owner, LockWords& target);
bool AcquireAll(LockWords& all_owner);
void ReleaseAll(LockWords& all_owner);

// Reader-writer spin lock on one shared word (the accumulate stripes): the
// top bit marks a writer, the rest count readers.
inline constexpr uint32_t kStripeWriter = uint32_t{1} << 31;
void AcquireStripeShared(std::atomic<uint32_t>& word);
void ReleaseStripeShared(std::atomic<uint32_t>& word);
void AcquireStripeExclusive(std::atomic<uint32_t>& word);
void ReleaseStripeExclusive(std::atomic<uint32_t>& word);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_SHM_LOCK_H_
