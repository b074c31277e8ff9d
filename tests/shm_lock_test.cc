// The shared-memory lock protocol, exercised by threads of one process (the
// words are plain atomics, so threads see what processes see).
#include "shim/shm_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace rmashim {
namespace {

constexpr int kThreads = 4;
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
  EXPECT_EQ(target.lock.load(), 0u);
  EXPECT_EQ(all.all.load(), 0u);
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
  EXPECT_EQ(target.lock.load(), 0u);
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
  EXPECT_EQ(all.all.load(), 0u);
}

TEST(ShmLockTest, ExclusiveOnDifferentTargetsDoNotBlockEachOther) {
  LockWords all, a, b;
  AcquireExclusive(all, a);
  AcquireExclusive(all, b);  // would spin forever if it conflicted with `a`
  EXPECT_EQ(all.all.load() >> 32, 2u);
  ReleaseExclusive(all, b);
  ReleaseExclusive(all, a);
  EXPECT_EQ(all.all.load(), 0u);
}

TEST(ShmLockTest, StripeWritersExcludeEveryoneReadersShare) {
  std::atomic<uint32_t> stripe{0};
  long plain = 0;                // written only under the exclusive stripe
  std::atomic<long> atomic{0};   // updated atomically under the shared one
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
  EXPECT_EQ(stripe.load(), 0u);
}

}  // namespace
}  // namespace rmashim
