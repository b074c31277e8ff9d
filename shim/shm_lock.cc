// The fair gates of shm_lock.h: entering and leaving, and the spin policy.
#include "shim/shm_lock.h"

#include <sched.h>

namespace rmashim {

namespace {
std::atomic<void (*)()> g_spin_progress{nullptr};

constexpr uint64_t kAUnit = 1;
constexpr uint64_t kBUnit = uint64_t{1} << 16;
constexpr uint64_t kAMask = 0xffff;
constexpr uint64_t kBMask = kAMask << 16;
constexpr int kServingShift = 32;
constexpr int kNextShift = 48;
constexpr uint64_t kServingMask = uint64_t{0xffff} << kServingShift;
constexpr uint64_t kTicketUnit = uint64_t{1} << kNextShift;

uint64_t Serving(uint64_t w) { return (w >> kServingShift) & 0xffff; }
uint64_t Next(uint64_t w) { return w >> kNextShift; }

// Enters `word` as one holder (`unit`: kAUnit or kBUnit) once no holder of
// `conflicts` is in: at once if nobody is queued, else in ticket order.
// Returns whether it had to wait.
bool Enter(GateWord& word, uint64_t unit, uint64_t conflicts) {
  uint64_t w = word.load(std::memory_order_relaxed);
  while (Next(w) == Serving(w) && (w & conflicts) == 0) {
    if (word.compare_exchange_weak(w, w + unit, std::memory_order_acquire,
                                   std::memory_order_relaxed)) {
      return false;
    }
  }
  // The ticket field is the word's top: adding wraps it within 16 bits.
  w = word.fetch_add(kTicketUnit, std::memory_order_relaxed);
  const uint64_t ticket = Next(w);
  Backoff backoff;
  while (true) {
    if (Serving(w) == ticket && (w & conflicts) == 0) {
      const uint64_t served = (w & ~kServingMask) |
                              (((ticket + 1) & 0xffff) << kServingShift);
      if (word.compare_exchange_weak(w, served + unit,
                                     std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
        return true;
      }
      continue;  // `w` was reloaded by the failed exchange
    }
    backoff.Wait();
    w = word.load(std::memory_order_relaxed);
  }
}

void Leave(GateWord& word, uint64_t unit) {
  word.fetch_sub(unit, std::memory_order_release);
}

}  // namespace

void SetSpinProgress(void (*progress)()) { g_spin_progress.store(progress); }

void DriveProgress() {
  if (void (*progress)() = g_spin_progress.load(std::memory_order_relaxed)) {
    progress();
  }
}

void Backoff::Wait() {
  constexpr uint32_t kSpinRounds = 10;  // up to 2^10 relaxes before yielding
  if (round_ < kSpinRounds) {
    for (uint32_t i = 0; i < (1u << round_); ++i) CpuRelax();
    ++round_;
    return;
  }
  DriveProgress();
  sched_yield();
}

bool ExclusiveShare::Enter(LockWords& all_owner) {
  std::unique_lock<std::mutex> guard(mutex_, std::defer_lock);
  if (threaded_) guard.lock();
  const bool waited = held_ == 0 && rmashim::Enter(all_owner.all, kBUnit, kAMask);
  ++held_;
  return waited;
}

void ExclusiveShare::Leave(LockWords& all_owner) {
  std::unique_lock<std::mutex> guard(mutex_, std::defer_lock);
  if (threaded_) guard.lock();
  if (--held_ == 0) rmashim::Leave(all_owner.all, kBUnit);
}

bool AcquireShared(LockWords& target) {
  return Enter(target.lock, kAUnit, kBMask);
}

void ReleaseShared(LockWords& target) { Leave(target.lock, kAUnit); }

bool AcquireExclusive(ExclusiveShare& share, LockWords& all_owner,
                      LockWords& target) {
  const bool waited_all = share.Enter(all_owner);
  const bool waited = Enter(target.lock, kBUnit, kAMask | kBMask);
  return waited_all || waited;
}

void ReleaseExclusive(ExclusiveShare& share, LockWords& all_owner,
                      LockWords& target) {
  Leave(target.lock, kBUnit);
  share.Leave(all_owner);
}

bool AcquireExclusive(LockWords& all_owner, LockWords& target) {
  const bool waited_all = Enter(all_owner.all, kBUnit, kAMask);
  const bool waited = Enter(target.lock, kBUnit, kAMask | kBMask);
  return waited_all || waited;
}

void ReleaseExclusive(LockWords& all_owner, LockWords& target) {
  Leave(target.lock, kBUnit);
  Leave(all_owner.all, kBUnit);
}

bool AcquireAll(LockWords& all_owner) {
  return Enter(all_owner.all, kAUnit, kBMask);
}

void ReleaseAll(LockWords& all_owner) { Leave(all_owner.all, kAUnit); }

void AcquireStripeShared(StripeWord& word) { Enter(word, kAUnit, kBMask); }

void ReleaseStripeShared(StripeWord& word) { Leave(word, kAUnit); }

void AcquireStripeExclusive(StripeWord& word) {
  Enter(word, kBUnit, kAMask | kBMask);
}

void ReleaseStripeExclusive(StripeWord& word) { Leave(word, kBUnit); }

}  // namespace rmashim
