// The fair gates of shm_lock.h: entering and leaving (waiting: spin_wait.h).
#include "shim/sync/shm_lock.h"

#include <algorithm>

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
  PendingEntry entry(word, unit, conflicts);
  // The ticket field is the word's top: adding wraps it within 16 bits.
  entry.ticket_ = Next(word.fetch_add(kTicketUnit, std::memory_order_relaxed));
  Backoff backoff;
  while (!entry.Poll()) {
    // Lockers ahead of this one, each to be served first.
    backoff.WaitTurn(entry.ahead());
  }
  return true;
}

bool gate::PendingEntry::Start() {
  if (TryEnter(*word_, unit_, conflicts_)) return true;
  ticket_ = Next(word_->fetch_add(kTicketUnit, std::memory_order_relaxed));
  return Poll();
}

bool gate::PendingEntry::Poll() {
  uint64_t w = word_->load(std::memory_order_relaxed);
  while (true) {
    const uint64_t serving = Serving(w);
    if (serving != ticket_ || (w & conflicts_) != 0) {
      // The ticket counters wrap within 16 bits.
      ahead_ = static_cast<uint32_t>((ticket_ - serving) & 0xffff);
      return false;
    }
    const uint64_t served =
        (w & ~kServingMask) | (((ticket_ + 1) & 0xffff) << kServingShift);
    if (word_->compare_exchange_weak(w, served + unit_,
                                     std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
      return true;
    }
    // `w` was reloaded by the failed exchange: look again.
  }
}

bool ExclusiveShare::AcquireThroughShards(const AllShards& all,
                                          GateWord& target) {
  if (!threaded_ && hold_ != 0) {  // nested: the shards are held already
    hold_ += kHoldUnit;
    return EnterTarget(target);  // and the bias off (see OfferBias)
  }
  const bool waited_all = Enter(all);
  const bool waited = EnterTarget(target);
  return SettleBias(all) || waited || waited_all;
}

bool SettleBias(const AllShards& all) {
  if (all.bias == nullptr) return false;
  // A lock_all that turned the bias on did so before it left its shard
  // (released); this locker's entry, or its announced path's relaxed read
  // of the shards, saw that release: an acquire fence orders the bias read
  // after it (no instruction on x86). No store-load ordering is needed
  // here: the bias cannot turn on while this locker holds its lock.
  std::atomic_thread_fence(std::memory_order_acquire);
  LockAllBias& bias = *all.bias;
  uint32_t state = bias.state.load(std::memory_order_acquire);
  if (state == LockAllBias::kOff) return false;
  if (state == LockAllBias::kOn &&
      bias.state.compare_exchange_strong(state, LockAllBias::kRevoking,
                                         std::memory_order_seq_cst)) {
    const uint64_t start = NowNs();
    for (int i = 0; i < all.announced_count; ++i) {
      Backoff backoff;
      while (all.visible[i]->load(std::memory_order_seq_cst) != 0) {
        backoff.Wait();
      }
    }
    const uint64_t end = NowNs();
    bias.inhibit_until_ns.store(
        end + std::clamp<uint64_t>(9 * (end - start), kBiasInhibitNs,
                                   kBiasInhibitMaxNs),
        std::memory_order_relaxed);
    bias.state.store(LockAllBias::kOff, std::memory_order_release);
    return true;
  }
  // Another exclusive locker revokes it: the bias cannot turn on again
  // while this one holds its lock.
  Backoff backoff;
  while (bias.state.load(std::memory_order_acquire) != LockAllBias::kOff) {
    backoff.Wait();
  }
  return true;
}

void OfferBias(const AllShards& all) {
  if (all.bias == nullptr) return;
  LockAllBias& bias = *all.bias;
  // Off here means off for good until this lock_all leaves: only exclusive
  // holders revoke, and none can hold while it does.
  if (bias.state.load(std::memory_order_relaxed) != LockAllBias::kOff ||
      NowNs() < bias.inhibit_until_ns.load(std::memory_order_relaxed)) {
    return;
  }
  bias.state.store(LockAllBias::kOn, std::memory_order_release);
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
  for (int i = all.count - 1; i >= 0; --i)
    gate::Leave(all.shards[i]->all, kBUnit);
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
