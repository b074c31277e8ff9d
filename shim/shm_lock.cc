// The fair gates of shm_lock.h: entering and leaving (waiting: spin_wait.h).
#include "shim/shm_lock.h"

namespace rmashim {

namespace {

using gate::kAMask;
using gate::kBUnit;
constexpr int kServingShift = 32;
constexpr int kNextShift = 48;
constexpr uint64_t kServingMask = uint64_t{0xffff} << kServingShift;
constexpr uint64_t kTicketUnit = uint64_t{1} << kNextShift;

uint64_t Serving(uint64_t w) { return (w >> kServingShift) & 0xffff; }
uint64_t Next(uint64_t w) { return w >> kNextShift; }

}  // namespace

bool gate::EnterQueued(GateWord& word, uint64_t unit, uint64_t conflicts) {
  // The ticket field is the word's top: adding wraps it within 16 bits.
  uint64_t w = word.fetch_add(kTicketUnit, std::memory_order_relaxed);
  const uint64_t ticket = Next(w);
  Backoff backoff;
  while (true) {
    const uint64_t serving = Serving(w);
    if (serving == ticket && (w & conflicts) == 0) {
      const uint64_t served = (w & ~kServingMask) |
                              (((ticket + 1) & 0xffff) << kServingShift);
      if (word.compare_exchange_weak(w, served + unit,
                                     std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
        return true;
      }
      continue;  // `w` was reloaded by the failed exchange
    }
    // Lockers ahead of this one, each to be served first (the ticket
    // counters wrap within 16 bits).
    backoff.WaitTurn(static_cast<uint32_t>((ticket - serving) & 0xffff));
    w = word.load(std::memory_order_relaxed);
  }
}

bool ExclusiveShare::AcquireSlow(const AllShards& all, GateWord& target) {
  if (!threaded_ && hold_ != 0) {  // nested: the shards are held already
    hold_ += kHoldUnit;
    return EnterTarget(target);
  }
  const bool waited_all = Enter(all);
  return EnterTarget(target) || waited_all;
}

bool AwaitAnnounced(const AllShards& all) {
  bool waited = false;
  for (int i = 0; i < all.announced_count; ++i) {
    Backoff backoff;
    while (all.announced[i]->load(std::memory_order_acquire) != 0) {
      backoff.Wait();
      waited = true;
    }
  }
  return waited;
}

bool ExclusiveShare::EnterShards(const AllShards& all) {
  bool waited = false;
  for (int i = 0; i < all.count; ++i) {
    waited |= gate::Enter(all.shards[i]->all, kBUnit, kAMask);
  }
  return waited;
}

void ExclusiveShare::LeaveShards(const AllShards& all) {
  for (int i = all.count - 1; i >= 0; --i) gate::Leave(all.shards[i]->all, kBUnit);
}

bool ExclusiveShare::EnterThreaded(const AllShards& all) {
  std::lock_guard<std::mutex> guard(mutex_);
  const bool waited = hold_ == 0 && EnterShards(all);
  hold_ += kHoldUnit;
  return waited;
}

void ExclusiveShare::LeaveThreaded(const AllShards& all) {
  std::lock_guard<std::mutex> guard(mutex_);
  hold_ -= kHoldUnit;
  if (hold_ == 0) LeaveShards(all);
}

}  // namespace rmashim
