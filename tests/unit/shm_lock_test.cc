// The shared-memory lock protocol, exercised by threads of one process (the
// words are plain atomics, so threads see what processes see).
#include "shim/sync/shm_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

namespace rmashim {
namespace {

constexpr int kThreads = 4;

uint64_t Holders(uint64_t word) {
  return GateAHolders(word) + GateBHolders(word);
}
constexpr int kRounds = 20000;

template <typename Body>
void RunThreads(Body body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(body, t);
  for (std::thread& th : threads) th.join();
}

TEST(ShmLockTest, ExclusiveLockLosesNoUpdate) {
  LockWords all, target;
  long counter = 0;  // deliberately non-atomic: the lock must protect it
  RunThreads([&](int) {
    for (int i = 0; i < kRounds; ++i) {
      AcquireExclusive(all, target);
      counter = counter + 1;
      ReleaseExclusive(all, target);
    }
  });
  EXPECT_EQ(counter, long{kThreads} * kRounds);
  EXPECT_EQ(Holders(target.lock.load()), 0u);
  EXPECT_EQ(Holders(all.all.load()), 0u);
}

TEST(ShmLockTest, SharedHoldersCoexistAndExcludeWriters) {
  LockWords all, target;
  std::atomic<int> readers{0}, writers{0}, max_readers{0};
  std::atomic<bool> overlap{false};
  RunThreads([&](int id) {
    for (int i = 0; i < kRounds / 4; ++i) {
      if (id == 0 && i % 8 == 0) {
        AcquireExclusive(all, target);
        if (writers.fetch_add(1) != 0 || readers.load() != 0) overlap = true;
        writers.fetch_sub(1);
        ReleaseExclusive(all, target);
      } else {
        AcquireShared(target);
        const int now = readers.fetch_add(1) + 1;
        int seen = max_readers.load();
        while (now > seen && !max_readers.compare_exchange_weak(seen, now)) {
        }
        if (writers.load() != 0) overlap = true;
        readers.fetch_sub(1);
        ReleaseShared(target);
      }
    }
  });
  EXPECT_FALSE(overlap.load());
  EXPECT_EQ(Holders(target.lock.load()), 0u);
}

TEST(ShmLockTest, LockAllExcludesExclusiveLocks) {
  LockWords all;
  std::vector<LockWords> targets(kThreads);
  std::atomic<int> all_holders{0}, exclusive_holders{0};
  std::atomic<bool> overlap{false};
  RunThreads([&](int id) {
    for (int i = 0; i < kRounds / 4; ++i) {
      if (id % 2 == 0) {
        AcquireAll(all);
        all_holders.fetch_add(1);
        if (exclusive_holders.load() != 0) overlap = true;
        all_holders.fetch_sub(1);
        ReleaseAll(all);
      } else {
        AcquireExclusive(all, targets[id]);
        exclusive_holders.fetch_add(1);
        if (all_holders.load() != 0) overlap = true;
        exclusive_holders.fetch_sub(1);
        ReleaseExclusive(all, targets[id]);
      }
    }
  });
  EXPECT_FALSE(overlap.load());
  EXPECT_EQ(Holders(all.all.load()), 0u);
}

TEST(ShmLockTest, ExclusiveOnDifferentTargetsDoNotBlockEachOther) {
  LockWords all, a, b;
  AcquireExclusive(all, a);
  AcquireExclusive(all, b);  // would spin forever if it conflicted with `a`
  EXPECT_EQ(GateBHolders(all.all.load()), 2u);
  ReleaseExclusive(all, b);
  ReleaseExclusive(all, a);
  EXPECT_EQ(Holders(all.all.load()), 0u);
}

TEST(ShmLockTest, StripeWritersExcludeEveryoneReadersShare) {
  StripeWord stripe{0};
  long plain = 0;               // written only under the exclusive stripe
  std::atomic<long> atomic{0};  // updated atomically under the shared one
  std::atomic<int> writers{0};
  std::atomic<bool> overlap{false};
  RunThreads([&](int id) {
    for (int i = 0; i < kRounds / 4; ++i) {
      if (id % 2 == 0) {
        AcquireStripeExclusive(stripe);
        if (writers.fetch_add(1) != 0) overlap = true;
        plain = plain + 1;
        atomic.store(atomic.load() + 1);  // a plain read-modify-write
        writers.fetch_sub(1);
        ReleaseStripeExclusive(stripe);
      } else {
        AcquireStripeShared(stripe);
        if (writers.load() != 0) overlap = true;
        atomic.fetch_add(1);
        ReleaseStripeShared(stripe);
      }
    }
  });
  EXPECT_FALSE(overlap.load());
  EXPECT_EQ(plain, long{kThreads / 2} * (kRounds / 4));
  EXPECT_EQ(atomic.load(), long{kThreads} * (kRounds / 4));
  EXPECT_EQ(Holders(stripe.load()), 0u);
}

// TryEnterFree enters a gate only when nobody holds or waits for it, from
// whatever ticket the counters have reached; otherwise it changes nothing.
TEST(ShmLockTest, TryEnterFreeTakesOnlyAFreeGate) {
  GateWord word{0};
  EXPECT_TRUE(gate::TryEnterFree(word, gate::kBUnit));
  EXPECT_EQ(word.load(), gate::kBUnit);
  EXPECT_FALSE(gate::TryEnterFree(word, gate::kBUnit)) << "held";
  EXPECT_EQ(word.load(), gate::kBUnit);
  gate::Leave(word, gate::kBUnit);

  // Tickets served and drawn alike (7): free.
  const uint64_t served = (uint64_t{7} << 48) | (uint64_t{7} << 32);
  word = served;
  EXPECT_TRUE(gate::TryEnterFree(word, gate::kAUnit));
  EXPECT_EQ(word.load(), served + gate::kAUnit);
  gate::Leave(word, gate::kAUnit);

  // A shared holder, or a locker queued (ticket 8 drawn, 7 served): not
  // free, untouched.
  word = served + gate::kAUnit;
  EXPECT_FALSE(gate::TryEnterFree(word, gate::kBUnit));
  EXPECT_EQ(word.load(), served + gate::kAUnit);
  const uint64_t queued = (uint64_t{8} << 48) | (uint64_t{7} << 32);
  word = queued;
  EXPECT_FALSE(gate::TryEnterFree(word, gate::kBUnit));
  EXPECT_EQ(word.load(), queued);

  // The ticket counters at their top (0xffff): still recognised as free.
  const uint64_t top = (uint64_t{0xffff} << 48) | (uint64_t{0xffff} << 32);
  word = top;
  EXPECT_TRUE(gate::TryEnterFree(word, gate::kBUnit));
  EXPECT_EQ(word.load(), top + gate::kBUnit);
}

// Fairness: `streams` threads take epochs of one kind back to back, each
// held `hold`, staggered so that at every moment one of them holds (a
// waiter that needs a gap between them never finds one), until the needy
// thread has had `needed` epochs of the conflicting kind or `limit` passed.
// Returns whether the needy thread finished while the streams still ran
// (bounded waiting: it got in between stream epochs).
bool NeedyFinishesAmidStreams(int streams,
                              const std::function<void(int)>& stream_epoch,
                              const std::function<void()>& needy_epoch) {
  using Clock = std::chrono::steady_clock;
  constexpr int kNeeded = 20;
  const auto limit = Clock::now() + std::chrono::seconds(5);
  std::atomic<bool> needy_done{false};
  std::vector<std::thread> threads;
  for (int s = 0; s < streams; ++s) {
    threads.emplace_back([&, s] {
      // Staggered start: stream s begins s/streams of an epoch later.
      std::this_thread::sleep_for(std::chrono::microseconds(500 * s));
      while (!needy_done.load() && Clock::now() < limit) stream_epoch(s);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // streams run
  for (int i = 0; i < kNeeded; ++i) needy_epoch();
  const bool in_time = Clock::now() < limit;
  needy_done = true;
  for (std::thread& t : threads) t.join();
  return in_time;
}

void HoldFor(int us) {
  std::this_thread::sleep_for(std::chrono::microseconds(us));
}

TEST(ShmLockFairnessTest, LockAllAmidExclusiveLocksOnOtherTargets) {
  LockWords all;
  std::vector<LockWords> targets(3);
  EXPECT_TRUE(NeedyFinishesAmidStreams(
      2,
      [&](int s) {
        AcquireExclusive(all, targets[s]);
        HoldFor(1000);
        ReleaseExclusive(all, targets[s]);
      },
      [&] {
        AcquireAll(all);
        ReleaseAll(all);
      }))
      << "MPI_Win_lock_all starved by exclusive locks";
}

TEST(ShmLockFairnessTest, ExclusiveAmidLockAll) {
  LockWords all, target;
  EXPECT_TRUE(NeedyFinishesAmidStreams(
      2,
      [&](int) {
        AcquireAll(all);
        HoldFor(1000);
        ReleaseAll(all);
      },
      [&] {
        AcquireExclusive(all, target);
        ReleaseExclusive(all, target);
      }))
      << "exclusive lock starved by lock_all";
}

TEST(ShmLockFairnessTest, ExclusiveAmidSharedLocks) {
  LockWords all, target;
  EXPECT_TRUE(NeedyFinishesAmidStreams(
      2,
      [&](int) {
        AcquireShared(target);
        HoldFor(1000);
        ReleaseShared(target);
      },
      [&] {
        AcquireExclusive(all, target);
        ReleaseExclusive(all, target);
      }))
      << "exclusive lock starved by shared locks";
}

// A process holding an exclusive lock takes another one while a lock_all is
// queued for the first: it must not queue behind that lock_all (which waits
// for the process's locks: a deadlock).
TEST(ShmLockFairnessTest, NestedExclusiveDoesNotQueueBehindLockAll) {
  LockWords all, t1, t2;
  LockWords* one_shard[] = {&all};
  const AllShards shards{one_shard, 1};
  ExclusiveShare share;  // one process's
  AcquireExclusive(share, shards, t1);
  std::atomic<bool> lock_all_in{false};
  std::thread waiter([&] {
    AcquireAll(all);
    lock_all_in = true;
    ReleaseAll(all);
  });
  // Until the waiter has drawn its ticket.
  while (all.all.load() >> 48 == 0) std::this_thread::yield();
  AcquireExclusive(share, shards, t2);  // would hang behind the waiter
  EXPECT_FALSE(lock_all_in.load());
  ReleaseExclusive(share, shards, t2);
  EXPECT_FALSE(lock_all_in.load());
  ReleaseExclusive(share, shards, t1);
  waiter.join();
  EXPECT_TRUE(lock_all_in.load());
  EXPECT_EQ(Holders(all.all.load()), 0u);
}

TEST(ShmLockFairnessTest, StripeWriterAmidReaders) {
  StripeWord stripe{0};
  EXPECT_TRUE(NeedyFinishesAmidStreams(
      2,
      [&](int) {
        AcquireStripeShared(stripe);
        HoldFor(1000);
        ReleaseStripeShared(stripe);
      },
      [&] {
        AcquireStripeExclusive(stripe);
        ReleaseStripeExclusive(stripe);
      }))
      << "stripe writer starved by readers";
}

// ---- The `all` gate split into shards (several lock_all callers per node).

struct Shards {
  std::vector<LockWords> words = std::vector<LockWords>(3);
  std::vector<LockWords*> pointers{&words[0], &words[1], &words[2]};
  AllShards view() const { return {pointers.data(), 3}; }
};

TEST(ShmLockShardTest, LockAllTouchesOnlyItsShardExclusiveTakesAll) {
  Shards all;
  LockWords target;
  AcquireAll(all.words[1]);
  EXPECT_EQ(GateAHolders(all.words[1].all.load()), 1u);
  EXPECT_EQ(all.words[0].all.load(), 0u);
  EXPECT_EQ(all.words[2].all.load(), 0u);
  ReleaseAll(all.words[1]);
  ExclusiveShare share(/*threaded=*/false);
  AcquireExclusive(share, all.view(), target);
  for (const LockWords& w : all.words)
    EXPECT_EQ(GateBHolders(w.all.load()), 1u);
  ReleaseExclusive(share, all.view(), target);
  for (const LockWords& w : all.words) EXPECT_EQ(w.all.load() & 0xffffffff, 0u);
}

// Threads as processes: lock_all callers on different shards and exclusive
// lockers (each with its own ExclusiveShare, some holding two locks at
// once) never overlap, and nobody hangs.
TEST(ShmLockShardTest, LockAllOnAnyShardExcludesExclusiveLockers) {
  Shards all;
  std::vector<LockWords> targets(2);
  std::atomic<int> lock_all_in{0}, exclusive_in{0};
  std::atomic<bool> overlap{false};
  RunThreads([&](int id) {
    ExclusiveShare share(/*threaded=*/false);
    for (int i = 0; i < kRounds / 2; ++i) {
      if (id < 2) {  // lock_all on shard 0 or 2
        LockWords& shard = all.words[id * 2];
        AcquireAll(shard);
        lock_all_in.fetch_add(1);
        if (exclusive_in.load() != 0) overlap = true;
        lock_all_in.fetch_sub(1);
        ReleaseAll(shard);
      } else {  // exclusive on one target, then nested on the other
        // Both take target 0 first: nested locks in one order (taking
        // them in opposite orders deadlocks with any blocking lock).
        LockWords& first = targets[0];
        LockWords& second = targets[1];
        AcquireExclusive(share, all.view(), first);
        exclusive_in.fetch_add(1);
        if (lock_all_in.load() != 0) overlap = true;
        if (i % 4 == 0) {
          AcquireExclusive(share, all.view(), second);
          ReleaseExclusive(share, all.view(), second);
        }
        exclusive_in.fetch_sub(1);
        ReleaseExclusive(share, all.view(), first);
      }
    }
  });
  EXPECT_FALSE(overlap.load());
  for (const LockWords& w : all.words) EXPECT_EQ(Holders(w.all.load()), 0u);
}

}  // namespace
}  // namespace rmashim
