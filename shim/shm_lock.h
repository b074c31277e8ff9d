// Passive-target locks and accumulate stripes in shared memory: fair
// (first come, first served) reader-writer gates on single words, after
// foMPI's layout, so no stream of one kind of locker can starve another.
//
// Every gate is one 64-bit word (Gate below): how many hold it in each of
// two classes, and a ticket turnstile. A locker that finds nobody queued
// and nothing conflicting enters with one CAS; otherwise it draws a ticket
// and enters, in ticket order, once the holders it conflicts with have
// left. Lockers behind it wait even if they would not conflict with the
// current holders, so a waiter is passed by nobody that arrived after it:
// its wait is bounded by the epochs of those ahead of it.
//
//  - Every target's segment header holds the target's `lock` gate: class A
//    are MPI_LOCK_SHARED holders, class B the MPI_LOCK_EXCLUSIVE holder
//    (B excludes A and B).
//  - Window rank 0's header holds the `all` gate: class A are
//    MPI_Win_lock_all holders, class B processes that hold (or are taking)
//    an exclusive lock on any target. A and B exclude each other, B does not
//    exclude B: exclusive lockers of different targets run in parallel. A
//    process enters `all` once for all of its exclusive locks (ExclusiveShare),
//    so it never queues behind a lock_all that waits for its own locks.
//  - An exclusive locker enters `all` (class B), then the target's `lock`.
//    lock_all vs shared locks: nothing to exclude.
//  - Accumulate stripes are gates too: class A atomic updaters, class B
//    plain-loop updaters (B excludes A and B).
// `lock` and `all` sit on separate cache lines, so lock_all does not contend
// with lock traffic on window rank 0 (lock_all itself is still one word on
// rank 0's header: README Limitations).
// Every operation is a CPU atomic on mapped memory: no target process ever
// has to call MPI for an origin to make progress (truly one-sided).
#ifndef RMASHIM_SHIM_SHM_LOCK_H_
#define RMASHIM_SHIM_SHM_LOCK_H_

#include <atomic>
#include <cstdint>
#include <mutex>

namespace rmashim {

// One gate word: bits 0-15 class A holders, 16-31 class B holders, 32-47 the
// ticket being served, 48-63 the next ticket. 16 bits bound both the holders
// of one class and the lockers queued at once to 65535 (threads of a node).
using GateWord = std::atomic<uint64_t>;
static_assert(GateWord::is_always_lock_free,
              "lock words live in shared memory and must be address-free");

struct LockWords {
  alignas(64) GateWord lock{0};  // per target
  alignas(64) GateWord all{0};   // used in window rank 0's header only
};

// Holders of class A / B in a gate word (tests and assertions).
inline uint64_t GateAHolders(uint64_t word) { return word & 0xffff; }
inline uint64_t GateBHolders(uint64_t word) { return (word >> 16) & 0xffff; }

// Spins politely: relax instructions with exponential growth, then yields
// the core (ranks are often oversubscribed on small nodes) and runs the
// progress hook: a process waiting for a lock is inside an MPI call, so it
// must keep serving the MPI operations other processes direct at it.
class Backoff {
 public:
  void Wait();
  bool waited() const { return round_ != 0; }

 private:
  uint32_t round_ = 0;
};

// One spin-wait hint to the CPU: pause on x86, yield on Arm, nothing where
// there is no such instruction.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

// Called while a Backoff yields; set once at startup (nullptr: none).
void SetSpinProgress(void (*progress)());
// Runs that hook once (for polling calls such as MPI_Win_test).
void DriveProgress();

// This process's entry in the `all` gate's class B for one window: its
// first exclusive lock enters, its last leaves (see the top of this file).
class ExclusiveShare {
 public:
  // Without `threaded` (one thread calls MPI) the count needs no mutex.
  explicit ExclusiveShare(bool threaded = true) : threaded_(threaded) {}
  void set_threaded(bool threaded) { threaded_ = threaded; }

  bool Enter(LockWords& all_owner);  // true when it had to wait
  void Leave(LockWords& all_owner);

 private:
  std::mutex mutex_;  // threads of this process taking exclusive locks
  bool threaded_;
  int held_ = 0;
};

// The Acquire functions return true when they had to wait (contention).
bool AcquireShared(LockWords& target);
void ReleaseShared(LockWords& target);
// `share`: the calling process's ExclusiveShare of the window. Without it,
// every call enters `all` on its own (one holder per call).
bool AcquireExclusive(ExclusiveShare& share, LockWords& all_owner,
                      LockWords& target);
void ReleaseExclusive(ExclusiveShare& share, LockWords& all_owner,
                      LockWords& target);
bool AcquireExclusive(LockWords& all_owner, LockWords& target);
void ReleaseExclusive(LockWords& all_owner, LockWords& target);
bool AcquireAll(LockWords& all_owner);
void ReleaseAll(LockWords& all_owner);

// The accumulate stripes (window.h): shared for atomic updaters, exclusive
// for plain-loop updaters.
using StripeWord = GateWord;
void AcquireStripeShared(StripeWord& word);
void ReleaseStripeShared(StripeWord& word);
void AcquireStripeExclusive(StripeWord& word);
void ReleaseStripeExclusive(StripeWord& word);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_SHM_LOCK_H_
