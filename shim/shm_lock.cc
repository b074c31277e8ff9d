#include "shim/shm_lock.h"

#include <sched.h>

namespace rmashim {

namespace {
std::atomic<void (*)()> g_spin_progress{nullptr};
}  // namespace

void SetSpinProgress(void (*progress)()) { g_spin_progress.store(progress); }

void DriveProgress() {
  if (void (*progress)() = g_spin_progress.load(std::memory_order_relaxed)) {
    progress();
  }
}

void Backoff::Wait() {
  constexpr uint32_t kSpinRounds = 10;  // up to 2^10 pauses before yielding
  if (round_ < kSpinRounds) {
    for (uint32_t i = 0; i < (1u << round_); ++i) __builtin_ia32_pause();
    ++round_;
    return;
  }
  DriveProgress();
  sched_yield();
}

bool AcquireShared(LockWords& target) {
  Backoff backoff;
  while (true) {
    const uint64_t seen = target.lock.fetch_add(1, std::memory_order_acquire);
    if ((seen & kExclusiveBit) == 0) return backoff.waited();
    target.lock.fetch_sub(1, std::memory_order_relaxed);
    do {
      backoff.Wait();
    } while (target.lock.load(std::memory_order_relaxed) & kExclusiveBit);
  }
}

void ReleaseShared(LockWords& target) {
  target.lock.fetch_sub(1, std::memory_order_release);
}

bool AcquireExclusive(LockWords& all_owner, LockWords& target) {
  Backoff backoff;
  while (true) {
    const uint64_t all =
        all_owner.all.fetch_add(kWriterUnit, std::memory_order_acquire);
    if ((all & kReaderMask) == 0) {
      uint64_t expected = 0;
      if (target.lock.compare_exchange_strong(expected, kExclusiveBit,
                                              std::memory_order_acquire,
                                              std::memory_order_relaxed)) {
        return backoff.waited();
      }
    }
    all_owner.all.fetch_sub(kWriterUnit, std::memory_order_relaxed);
    backoff.Wait();
  }
}

void ReleaseExclusive(LockWords& all_owner, LockWords& target) {
  target.lock.fetch_and(~kExclusiveBit, std::memory_order_release);
  all_owner.all.fetch_sub(kWriterUnit, std::memory_order_release);
}

bool AcquireAll(LockWords& all_owner) {
  Backoff backoff;
  while (true) {
    const uint64_t all = all_owner.all.fetch_add(1, std::memory_order_acquire);
    if ((all & ~kReaderMask) == 0) return backoff.waited();
    all_owner.all.fetch_sub(1, std::memory_order_relaxed);
    do {
      backoff.Wait();
    } while (all_owner.all.load(std::memory_order_relaxed) & ~kReaderMask);
  }
}

void ReleaseAll(LockWords& all_owner) {
  all_owner.all.fetch_sub(1, std::memory_order_release);
}

void AcquireStripeShared(std::atomic<uint32_t>& word) {
  Backoff backoff;
  while (word.fetch_add(1, std::memory_order_acquire) & kStripeWriter) {
    word.fetch_sub(1, std::memory_order_relaxed);
    do {
      backoff.Wait();
    } while (word.load(std::memory_order_relaxed) & kStripeWriter);
  }
}

void ReleaseStripeShared(std::atomic<uint32_t>& word) {
  word.fetch_sub(1, std::memory_order_release);
}

void AcquireStripeExclusive(std::atomic<uint32_t>& word) {
  Backoff backoff;
  uint32_t expected = 0;
  while (!word.compare_exchange_weak(expected, kStripeWriter,
                                     std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
    expected = 0;
    backoff.Wait();
  }
}

void ReleaseStripeExclusive(std::atomic<uint32_t>& word) {
  word.fetch_and(~kStripeWriter, std::memory_order_release);
}

}  // namespace rmashim
