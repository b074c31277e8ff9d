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
//  - The `all` gate is split into shards (AllShards), one per
//    kRanksPerAllShard node ranks, in the headers of the first window
//    ranks: class A are MPI_Win_lock_all holders, class B processes that
//    hold (or are taking) an exclusive lock on any target. A lock_all
//    enters its own shard only, so lock_all callers contend on a cache line
//    with at most kRanksPerAllShard - 1 others, not with the whole node. An
//    exclusive locker enters class B of every shard, in shard order. A and
//    B exclude each other, B does not exclude B: exclusive lockers of
//    different targets run in parallel. A process enters the shards once
//    for all of its exclusive locks (ExclusiveShare), so it never queues
//    behind a lock_all that waits for its own locks; and a lock_all holds
//    one shard only and waits holding nothing, so an exclusive locker that
//    holds some shards while it waits for a lock_all on the next cannot be
//    waited for in turn.
//  - An exclusive locker enters the shards (class B), then the target's
//    `lock`. lock_all vs shared locks: nothing to exclude.
//  - Announced exclusive locks: a single-threaded process whose first
//    exclusive lock finds no lock_all in or queued in any shard need not
//    enter them at all. It sets its own announcement word (one per node
//    rank, on its own cache line), takes the target's `lock` (a locked
//    instruction, so a full fence on x86), then reads every shard; if one
//    has a lock_all holder or anybody queued, it backs out (clears the
//    word, leaves `lock`) and enters the shards as above. A lock_all, once
//    in its shard (a locked instruction too), waits until every
//    announcement word is clear. Of two such racers at least one sees the
//    other (Dekker's pattern), so an announced lock and a lock_all never
//    overlap; an uncontended exclusive lock costs two atomics, not four, and
//    exclusive lockers of different targets share no cache line. The
//    waiting lock_all holds one shard only, and an announced process never
//    waits for a shard while it holds a lock, so neither can wait for the
//    other in a cycle. Announced holders' nested exclusive locks take the
//    target's `lock` only, as with the shards.
//  - Biased lock_all (after BRAVO, Dice and Kogan): while a window sees
//    lock_all and no exclusive lock, lock_all need not enter a shard or
//    read the announcements at all. The window has one bias word (in window
//    rank 0's header) and every node rank a visibility word on its own
//    announcement line. A lock_all that finds the bias on sets its own
//    visibility word (a locked exchange, a full fence), reads the bias
//    again, and holds the lock_all if it is still on: no shared line
//    written, nothing read that grows with the node. Otherwise it clears
//    its word and enters its shard as above. An exclusive locker, once it
//    holds its target and its shards or announcement, reads the bias; if
//    it is on, it revokes it (on -> revoking, one CAS), waits until every
//    visibility word is clear, and turns it off; a second revoker waits
//    for that. Of a lock_all setting its word and a revoker's CAS, one
//    sees the other (Dekker's pattern again). The bias is turned on only
//    by a lock_all that holds its shard the full way: then no exclusive
//    lock is held or can be until it leaves, and each one taken later
//    finds the bias on and revokes it. Biased holders wait for nothing, so
//    a revoker waiting for them cannot be part of a cycle. After a
//    revocation the bias stays off for 9 times as long as the revocation
//    took (within kBiasInhibitNs..kBiasInhibitMaxNs), so exclusive locks
//    that come often are not slowed by revoking again and again.
//  - Accumulate stripes are gates too: class A atomic updaters, class B
//    plain-loop updaters (B excludes A and B).
// `lock` and `all` sit on separate cache lines, so lock_all does not contend
// with lock traffic on the ranks that hold shards.
// Every operation is a CPU atomic on mapped memory: no target process ever
// has to call MPI for an origin to make progress (truly one-sided).
#ifndef RMASHIM_SHIM_SYNC_SHM_LOCK_H_
#define RMASHIM_SHIM_SYNC_SHM_LOCK_H_

#include <atomic>
#include <cstdint>
#include <mutex>

#include "shim/base/spin_wait.h"

namespace rmashim {

// One gate word: bits 0-15 class A holders, 16-31 class B holders, 32-47 the
// ticket being served, 48-63 the next ticket. 16 bits bound both the holders
// of one class and the lockers queued at once to 65535 (threads of a node).
using GateWord = std::atomic<uint64_t>;
static_assert(GateWord::is_always_lock_free,
              "lock words live in shared memory and must be address-free");

struct LockWords {
  alignas(64) GateWord lock{0};  // per target
  alignas(64) GateWord all{0};   // used in the shard holders' headers only
};

// Node ranks per `all` shard: up to 8 ranks share one (one shard, as one
// word, on nodes of up to 8 ranks, where an exclusive lock then costs one
// extra atomic, not one per shard).
inline constexpr int kRanksPerAllShard = 8;

// An exclusive locker's announcement (see the top of this file): nonzero
// while the process holds exclusive locks without having entered the
// shards. One per node rank, alone on its cache line.
using AnnounceWord = std::atomic<uint32_t>;

// A node rank's lock_all visibility word (biased lock_all, top of this
// file): nonzero while it holds a lock_all by the bias. Written by that
// rank only, read by revokers.
using VisibleWord = std::atomic<uint32_t>;

// The window's lock_all bias (top of this file), alone on its cache line.
struct alignas(64) LockAllBias {
  static constexpr uint32_t kOff = 0, kOn = 1, kRevoking = 2;
  std::atomic<uint32_t> state{kOff};
  // Not turned on before this time (NowNs, spin_wait.h): set by revokers.
  std::atomic<uint64_t> inhibit_until_ns{0};
};
// The least and the most time the bias stays off after a revocation (the
// most: a revocation that waited for a long-held lock_all says little
// about what revoking costs).
inline constexpr uint64_t kBiasInhibitNs = 100'000;
inline constexpr uint64_t kBiasInhibitMaxNs = 10'000'000;

// A window's `all` shards as mapped in this process, in shard order, and
// every node rank's announcement word (lock_all waits for them); with the
// bias, every node rank's visibility word (revokers wait for them, indexed
// like `announced`).
struct AllShards {
  LockWords* const* shards = nullptr;
  int count = 0;
  AnnounceWord* const* announced = nullptr;
  int announced_count = 0;
  LockAllBias* bias = nullptr;  // null: no biased lock_all
  VisibleWord* const* visible = nullptr;
};

// Biased lock_all (top of this file). Once an exclusive locker holds its
// lock: revokes the bias if it is on (or waits for a revocation under way
// to end). Returns true when it had to wait.
bool SettleBias(const AllShards& all);
inline bool BiasOff(const LockAllBias* bias) {
  return bias == nullptr ||
         bias->state.load(std::memory_order_acquire) == LockAllBias::kOff;
}

// Holders of class A / B in a gate word (tests and assertions).
inline uint64_t GateAHolders(uint64_t word) { return word & 0xffff; }
inline uint64_t GateBHolders(uint64_t word) { return (word >> 16) & 0xffff; }

namespace gate {

inline constexpr uint64_t kAUnit = 1;
inline constexpr uint64_t kBUnit = uint64_t{1} << 16;
inline constexpr uint64_t kAMask = 0xffff;
inline constexpr uint64_t kBMask = kAMask << 16;

// Bits 32-47 serve, 48-63 the next ticket: equal means nobody queued.
inline bool NobodyQueued(uint64_t w) {
  return ((w >> 32) & 0xffff) == (w >> 48);
}

// Queued lockers wait for their ticket; returns true (it waited).
bool EnterQueued(GateWord& word, uint64_t unit, uint64_t conflicts);

// Enters `word` as one holder (`unit`: kAUnit or kBUnit) once no holder of
// `conflicts` is in: at once with one CAS if nobody is queued, else in
// ticket order (EnterQueued). Returns whether it had to wait. Inline: an
// uncontended lock is one load and one CAS on the caller's path.
inline bool Enter(GateWord& word, uint64_t unit, uint64_t conflicts) {
  uint64_t w = word.load(std::memory_order_relaxed);
  while (NobodyQueued(w) && (w & conflicts) == 0) {
    if (word.compare_exchange_weak(w, w + unit, std::memory_order_acquire,
                                   std::memory_order_relaxed)) {
      return false;
    }
  }
  return EnterQueued(word, unit, conflicts);
}

// Enters `word` only if that takes one CAS (nobody queued, no conflicting
// holder, no racing change); false leaves it untouched. For fast paths
// whose miss goes to one that calls Enter.
[[nodiscard]] inline bool TryEnter(GateWord& word, uint64_t unit,
                                   uint64_t conflicts) {
  uint64_t w = word.load(std::memory_order_relaxed);
  return NobodyQueued(w) && (w & conflicts) == 0 &&
         word.compare_exchange_strong(w, w + unit, std::memory_order_acquire,
                                      std::memory_order_relaxed);
}

// Enters `word` as one holder of `unit` only if it is free (no holder of
// either class, nobody queued): one CAS from the free word that its ticket
// counters imply. False leaves it untouched. For exclusive fast paths.
[[nodiscard]] inline bool TryEnterFree(GateWord& word, uint64_t unit) {
  const uint64_t next = word.load(std::memory_order_relaxed) >> 48;
  uint64_t free = (next * 0x10001) << 32;  // serving == next, no holders
  return word.compare_exchange_strong(
      free, free + unit, std::memory_order_acquire, std::memory_order_relaxed);
}

inline void Leave(GateWord& word, uint64_t unit) {
  word.fetch_sub(unit, std::memory_order_release);
}

// Enter without waiting in the call, for a caller that must not block (the
// agent, shim/agent/agent_locks.h, which takes gates for remote origins while
// it serves other requests): Start enters at once as Enter's fast path does, or
// draws a ticket; Poll then enters once the ticket is served and no conflicting
// holder is in. A drawn ticket must be polled until it enters: lockers behind
// it wait for it.
class PendingEntry {
 public:
  PendingEntry(GateWord& word, uint64_t unit, uint64_t conflicts)
      : word_(&word), unit_(unit), conflicts_(conflicts) {}
  // True: entered.
  [[nodiscard]] bool Start();
  [[nodiscard]] bool Poll();
  // Waiters ahead of this one at the last Poll (0 before a ticket).
  uint32_t ahead() const { return ahead_; }

 private:
  friend bool EnterQueued(GateWord&, uint64_t, uint64_t);
  GateWord* word_;
  uint64_t unit_, conflicts_;
  uint64_t ticket_ = 0;
  uint32_t ahead_ = 0;
};

}  // namespace gate

// This process's entry in the `all` gate's class B for one window: its
// first exclusive lock enters (or announces itself), its last leaves (see
// the top of this file).
class ExclusiveShare {
 public:
  // Without `threaded` (one thread calls MPI) the count needs no mutex.
  explicit ExclusiveShare(bool threaded = true) : threaded_(threaded) {}
  void set_threaded(bool threaded) {
    threaded_ = threaded;
    UpdateSolo();
  }
  // This process's announcement word; without one (or when threaded) every
  // first exclusive lock enters the shards. `single_shard`: the window's
  // `all` word when it has one shard only (nodes of up to
  // kRanksPerAllShard ranks), else null: TryAcquireAnnounced serves those
  // windows only, and Acquire the others.
  void set_announcement(AnnounceWord* word,
                        const GateWord* single_shard = nullptr,
                        const LockAllBias* bias = nullptr) {
    announcement_ = word;
    single_shard_ = single_shard;
    bias_ = bias;
    UpdateSolo();
  }

  // Takes an exclusive lock on `target` with this process's share of the
  // shards. Returns true when it had to wait.
  bool Acquire(const AllShards& all, GateWord& target) {
    bool waited = false;
    if (!threaded_ && hold_ == 0 && announcement_ != nullptr &&
        Announce(
            announcement_, target,
            [&] { return waited = EnterTarget(target), true; },
            [&] { return ShardsOpen(all); })) {
      return SettleBias(all) || waited;
    }
    return AcquireThroughShards(all, target);
  }
  void Release(const AllShards& all, GateWord& target) {
    gate::Leave(target, gate::kBUnit);
    Leave(all);
  }

  // The uncontended first exclusive lock of a single-threaded process on a
  // window of one shard, for MPI_Win_lock's inline path: announced (see
  // the top of this file) with one CAS on a free target and nobody to wait
  // for. False: nothing was taken or changed (Acquire then queues as usual).
  [[nodiscard]] [[gnu::always_inline]] bool TryAcquireAnnounced(
      GateWord& target) {
    AnnounceWord* const announcement = solo_announcement_;
    if (hold_ != 0 || announcement == nullptr) return false;
    // A bias on (or being revoked) needs the full path, which revokes it.
    return Announce(
        announcement, target,
        [&] { return gate::TryEnterFree(target, gate::kBUnit); },
        [&] { return ShardOpen(*single_shard_) && BiasOff(bias_); });
  }
  // Whether ReleaseAnnounced may release this process's exclusive lock: it
  // is its only one, taken by announcement.
  bool HoldsOneAnnounced() const { return hold_ == kOneAnnounced; }
  // Releases it (HoldsOneAnnounced): the target, then the announcement.
  [[gnu::always_inline]] void ReleaseAnnounced(GateWord& target) {
    gate::Leave(target, gate::kBUnit);
    hold_ = 0;
    announcement_->store(0, std::memory_order_release);
  }

  // Enters the shards (class B) for one more exclusive lock, or counts it
  // when this process is in already; true when it had to wait.
  bool Enter(const AllShards& all) {
    if (threaded_) return EnterThreaded(all);
    if (hold_ != 0) {
      hold_ += kHoldUnit;
      return false;
    }
    hold_ = kHoldUnit;
    return all.count == 1
               ? gate::Enter(all.shards[0]->all, gate::kBUnit, gate::kAMask)
               : EnterShards(all);
  }
  void Leave(const AllShards& all) {
    if (threaded_) return LeaveThreaded(all);
    hold_ -= kHoldUnit;
    if (hold_ >= kHoldUnit) return;
    if (hold_ == kAnnounced) {
      hold_ = 0;
      return announcement_->store(0, std::memory_order_release);
    }
    if (all.count == 1) return gate::Leave(all.shards[0]->all, gate::kBUnit);
    LeaveShards(all);
  }

 private:
  // The announced protocol (top of this file): announce, `enter` the
  // target (false: it did not, and changed nothing), then `open` reads the
  // shards. True: the lock is held by announcement. False: everything is
  // as it was.
  template <typename EnterFn, typename OpenFn>
  [[gnu::always_inline]] bool Announce(AnnounceWord* announcement,
                                       GateWord& target, EnterFn enter,
                                       OpenFn open) {
    announcement->store(1, std::memory_order_relaxed);
    // Entering the target is a locked instruction: the store above is
    // visible before the shards are read (x86; elsewhere a fence). The
    // compiler must not sink the store past it either (an acquire CAS
    // alone would let it): a compiler-only fence, no instruction.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (enter()) [[likely]] {
      FenceAfterAnnouncing();
      if (!open()) [[unlikely]] {
        gate::Leave(target, gate::kBUnit);
        announcement->store(0, std::memory_order_release);
        return false;
      }
      hold_ = kOneAnnounced;
      return true;
    }
    announcement->store(0, std::memory_order_release);
    return false;
  }
  static bool EnterTarget(GateWord& target) {
    return gate::Enter(target, gate::kBUnit, gate::kAMask | gate::kBMask);
  }
  // No lock_all holder and nobody queued in any shard. A process has an
  // announcement word only on windows with shared-memory locks, which have
  // at least one shard.
  static bool ShardsOpen(const AllShards& all) {
    int i = 0;
    do {
      if (!ShardOpen(all.shards[i]->all)) return false;
    } while (++i < all.count);
    return true;
  }
  // One test of both: no class A holder, tickets served == drawn.
  static bool ShardOpen(const GateWord& shard) {
    const uint64_t w = shard.load(std::memory_order_relaxed);
    return ((w & gate::kAMask) | (((w >> 32) ^ (w >> 48)) & 0xffff)) == 0;
  }
  void UpdateSolo() {
    solo_announcement_ =
        threaded_ || single_shard_ == nullptr ? nullptr : announcement_;
  }
  [[gnu::noinline]] bool AcquireThroughShards(const AllShards& all,
                                              GateWord& target);
  static bool EnterShards(const AllShards& all);
  static void LeaveShards(const AllShards& all);
  bool EnterThreaded(const AllShards& all);
  void LeaveThreaded(const AllShards& all);

  // Orders the announcement before the shards are read where entering the
  // target (a locked instruction on x86) does not.
  static void FenceAfterAnnouncing() {
#if !defined(__x86_64__) && !defined(__i386__)
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
  }

  std::mutex mutex_;  // threads of this process taking exclusive locks
  bool threaded_;
  // Exclusive locks this process holds in the window, times kHoldUnit,
  // plus kAnnounced when it holds them by announcement (not in the shards):
  // one word, so the inline paths test one value (0: none; kOneAnnounced).
  static constexpr uint32_t kAnnounced = 1;
  static constexpr uint32_t kHoldUnit = 2;
  static constexpr uint32_t kOneAnnounced = kHoldUnit | kAnnounced;
  uint32_t hold_ = 0;
  AnnounceWord* announcement_ = nullptr;
  const GateWord* single_shard_ = nullptr;
  const LockAllBias* bias_ = nullptr;
  // announcement_ when single-threaded on a window of one shard, else
  // null: the inline path's one test.
  AnnounceWord* solo_announcement_ = nullptr;
};

// The Acquire functions return true when they had to wait (contention).
inline bool AcquireShared(LockWords& target) {
  return gate::Enter(target.lock, gate::kAUnit, gate::kBMask);
}
inline void ReleaseShared(LockWords& target) {
  gate::Leave(target.lock, gate::kAUnit);
}
// `share`: the calling process's ExclusiveShare of the window. Without it,
// every call enters `all` on its own (one holder per call).
inline bool AcquireExclusive(ExclusiveShare& share, const AllShards& all,
                             LockWords& target) {
  return share.Acquire(all, target.lock);
}
inline void ReleaseExclusive(ExclusiveShare& share, const AllShards& all,
                             LockWords& target) {
  share.Release(all, target.lock);
}
inline bool AcquireExclusive(LockWords& all_owner, LockWords& target) {
  const bool waited_all =
      gate::Enter(all_owner.all, gate::kBUnit, gate::kAMask);
  const bool waited =
      gate::Enter(target.lock, gate::kBUnit, gate::kAMask | gate::kBMask);
  return waited_all || waited;
}
inline void ReleaseExclusive(LockWords& all_owner, LockWords& target) {
  gate::Leave(target.lock, gate::kBUnit);
  gate::Leave(all_owner.all, gate::kBUnit);
}
// Waits until no exclusive locker is announced in `all` (after entering a
// shard: see the top of this file). Returns true when it had to wait.
bool AwaitAnnounced(const AllShards& all);
// `shard`: the caller's own shard of the window's `all` gate; `all`: the
// window's shards and announcements.
inline bool AcquireAll(LockWords& shard, const AllShards& all) {
  const bool waited = gate::Enter(shard.all, gate::kAUnit, gate::kBMask);
  return AwaitAnnounced(all) || waited;
}
// Biased lock_all (top of this file): holds a lock_all by the bias, with
// `mine` the caller's visibility word, or returns false having changed
// nothing (then AcquireAll; release with ReleaseAllBiased, resp. ReleaseAll).
[[nodiscard]] inline bool TryAcquireAllBiased(const AllShards& all,
                                              VisibleWord& mine) {
  if (all.bias == nullptr ||
      all.bias->state.load(std::memory_order_relaxed) != LockAllBias::kOn) {
    return false;
  }
  mine.exchange(1, std::memory_order_seq_cst);  // then read the bias again
  if (all.bias->state.load(std::memory_order_seq_cst) == LockAllBias::kOn) {
    return true;
  }
  mine.store(0, std::memory_order_release);
  return false;
}
inline void ReleaseAllBiased(VisibleWord& mine) {
  mine.store(0, std::memory_order_release);
}
// Called by a lock_all that holds its shard the full way (AcquireAll):
// turns the bias on unless a revocation asked for it to stay off for now.
void OfferBias(const AllShards& all);
// Without announcements (tests of the gates alone).
inline bool AcquireAll(LockWords& all_owner) {
  return gate::Enter(all_owner.all, gate::kAUnit, gate::kBMask);
}
inline void ReleaseAll(LockWords& all_owner) {
  gate::Leave(all_owner.all, gate::kAUnit);
}

// The accumulate stripes (window.h): shared for atomic updaters, exclusive
// for plain-loop updaters.
using StripeWord = GateWord;
inline void AcquireStripeShared(StripeWord& word) {
  gate::Enter(word, gate::kAUnit, gate::kBMask);
}
inline void ReleaseStripeShared(StripeWord& word) {
  gate::Leave(word, gate::kAUnit);
}
inline void AcquireStripeExclusive(StripeWord& word) {
  gate::Enter(word, gate::kBUnit, gate::kAMask | gate::kBMask);
}
inline void ReleaseStripeExclusive(StripeWord& word) {
  gate::Leave(word, gate::kBUnit);
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_SYNC_SHM_LOCK_H_
