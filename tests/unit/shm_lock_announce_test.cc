// Announced exclusive locks (shim/sync/shm_lock.h): a process's first exclusive
// lock that finds no lock_all in any shard sets its own announcement word
// instead of entering the shards, and every lock_all waits for those words.
// Threads of one process stand in for processes (the words are plain
// atomics, so threads see what processes see).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "shim/sync/shm_lock.h"
#include "tests/unit/shm_lock_test_node.h"

namespace rmashim {
namespace {

TEST(ShmLockAnnounceTest, UncontendedExclusiveTouchesNoShard) {
  Node node(4, 2);
  LockWords t1, t2;
  ExclusiveShare share(/*threaded=*/false);
  node.Join(share, 3);
  EXPECT_FALSE(AcquireExclusive(share, node.view(), t1));
  EXPECT_EQ(node.announced[3].load(), 1u);
  EXPECT_EQ(ShardHolders(node), 0u);
  EXPECT_EQ(GateBHolders(t1.lock.load()), 1u);
  AcquireExclusive(share, node.view(), t2);  // nested: the target only
  EXPECT_EQ(ShardHolders(node), 0u);
  ReleaseExclusive(share, node.view(), t1);
  EXPECT_EQ(node.announced[3].load(), 1u) << "t2 is still held";
  ReleaseExclusive(share, node.view(), t2);
  EXPECT_EQ(node.announced[3].load(), 0u);
  EXPECT_EQ(t1.lock.load() & 0xffffffff, 0u);
  EXPECT_EQ(t2.lock.load() & 0xffffffff, 0u);
}

// A lock_all is in: the exclusive locker backs out of its announcement and
// the target, and gets in through the shards once the lock_all has left.
TEST(ShmLockAnnounceTest, ExclusiveWaitsInShardsBehindLockAll) {
  Node node(2, 1);
  LockWords target;
  AcquireAll(node.shard_words[0], node.view());
  std::atomic<bool> in{false};
  std::thread locker([&] {
    ExclusiveShare share(/*threaded=*/false);
    node.Join(share, 1);
    AcquireExclusive(share, node.view(), target);
    in = true;
    EXPECT_EQ(node.announced[1].load(), 0u) << "entered through the shards";
    EXPECT_EQ(GateBHolders(node.shard_words[0].all.load()), 1u);
    ReleaseExclusive(share, node.view(), target);
  });
  // Until the locker has queued in the shard.
  while (node.shard_words[0].all.load() >> 48 == 0) std::this_thread::yield();
  EXPECT_FALSE(in.load());
  EXPECT_EQ(node.announced[1].load(), 0u) << "backed out";
  EXPECT_EQ(target.lock.load() & 0xffffffff, 0u) << "left the target";
  ReleaseAll(node.shard_words[0]);
  locker.join();
  EXPECT_TRUE(in.load());
  EXPECT_EQ(ShardHolders(node), 0u);
}

// An announced holder keeps a lock_all out until its last lock is gone, and
// its nested lock does not queue behind that lock_all (a deadlock). Whether
// AcquireAll reports having waited depends on the scheduler (the waiter may
// read the announcement only after both locks are gone), so exclusion is
// checked by lock_all_in alone.
TEST(ShmLockAnnounceTest, LockAllWaitsForAnnouncedHolder) {
  Node node(2, 1);
  LockWords t1, t2;
  ExclusiveShare share(/*threaded=*/false);
  node.Join(share, 0);
  AcquireExclusive(share, node.view(), t1);
  std::atomic<bool> lock_all_in{false};
  std::thread waiter([&] {
    static_cast<void>(AcquireAll(node.shard_words[0], node.view()));
    lock_all_in = true;
    ReleaseAll(node.shard_words[0]);
  });
  // Until the waiter is in its shard, waiting for the announcement.
  while (GateAHolders(node.shard_words[0].all.load()) == 0) {
    std::this_thread::yield();
  }
  AcquireExclusive(share, node.view(), t2);  // would hang behind the waiter
  EXPECT_FALSE(lock_all_in.load());
  ReleaseExclusive(share, node.view(), t2);
  EXPECT_FALSE(lock_all_in.load());
  ReleaseExclusive(share, node.view(), t1);
  waiter.join();
  EXPECT_TRUE(lock_all_in.load());
  EXPECT_EQ(ShardHolders(node), 0u);
}

// Threads as processes, every rank with its announcement word: lock_all
// callers (on one shard, or on two) and exclusive lockers (some nesting a
// second lock) never overlap, and nobody hangs. Fails when lock_all does
// not wait for the announcement words. The inline attempt serves windows
// of one shard only; on two it always declines.
class AnnouncedStressTest : public ::testing::TestWithParam<int> {};

TEST_P(AnnouncedStressTest, LockAllAndAnnouncedExclusiveNeverOverlap) {
  constexpr int kRanks = 4, kRounds = 10000;
  const int shards = GetParam();
  Node node(kRanks, shards);
  // Ranks 2 and 3 lock targets 0 and 1, and both nest target 2 (with one
  // target for both, each would mostly find the other holding or queued
  // on it, and the one-CAS attempt would rarely find it free).
  std::vector<LockWords> targets(3);
  std::atomic<int> lock_all_in{0}, exclusive_in{0};
  std::atomic<bool> overlap{false};
  std::atomic<long> announced_entries{0}, inline_entries{0};
  std::atomic<int> lock_all_done{0}, solo_turn{2};
  std::vector<std::thread> threads;
  for (int id = 0; id < kRanks; ++id) {
    threads.emplace_back([&, id] {
      ExclusiveShare share(/*threaded=*/false);
      node.Join(share, id);
      // lock_all callers stop after half the rounds. The exclusive lockers
      // then also run 500 rounds each alone, one after the other: while
      // lockers keep arriving at a shard whose ticket queue is not empty
      // every one of them queues (first come, first served), so two of them
      // can keep each other in the shards indefinitely, and how long the
      // contended phase lasts depends on the machine.
      for (int i = 0; id < 2 ? i < kRounds / 2 : i < kRounds; ++i) {
        if (id < 2) {  // lock_all, on shard 0 or 1
          LockWords& shard = node.shard_words[id % shards];
          AcquireAll(shard, node.view());
          lock_all_in.fetch_add(1);
          Watch(exclusive_in, overlap);
          lock_all_in.fetch_sub(1);
          ReleaseAll(shard);
          for (int k = 0; k < 512; ++k) CpuRelax();  // let announced ones in
          if (i + 1 == kRounds / 2) lock_all_done.fetch_add(1);
        } else {
          // Rank 3 locks as MPI_Win_lock's inline path does: the one-CAS
          // attempt first, the full one when it declines.
          const bool inline_path = id == 3;
          LockWords& target = targets[id - 2];
          if (!inline_path || !share.TryAcquireAnnounced(target.lock)) {
            AcquireExclusive(share, node.view(), target);
          } else {
            inline_entries.fetch_add(1);
          }
          if (node.announced[id].load() != 0) announced_entries.fetch_add(1);
          exclusive_in.fetch_add(1);
          Watch(lock_all_in, overlap);
          if (i % 4 == 0) {
            AcquireExclusive(share, node.view(), targets[2]);
            ReleaseExclusive(share, node.view(), targets[2]);
          }
          exclusive_in.fetch_sub(1);
          if (inline_path && share.HoldsOneAnnounced()) {
            share.ReleaseAnnounced(target.lock);
          } else {
            ReleaseExclusive(share, node.view(), target);
          }
        }
      }
      if (id < 2) return;
      while (lock_all_done.load() != 2 || solo_turn.load() != id) {
        std::this_thread::yield();
      }
      const bool inline_path = id == 3;
      LockWords& target = targets[id - 2];
      for (int i = 0; i < 500; ++i) {
        if (!inline_path || !share.TryAcquireAnnounced(target.lock)) {
          AcquireExclusive(share, node.view(), target);
        } else {
          inline_entries.fetch_add(1);
        }
        if (node.announced[id].load() != 0) announced_entries.fetch_add(1);
        if (inline_path && share.HoldsOneAnnounced()) {
          share.ReleaseAnnounced(target.lock);
        } else {
          ReleaseExclusive(share, node.view(), target);
        }
      }
      solo_turn.fetch_add(1);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(overlap.load());
  EXPECT_GT(announced_entries.load(), 0)
      << "the announced path never ran; shard 0 word " << std::hex
      << node.shard_words[0].all.load() << std::dec << ", lock_all done "
      << lock_all_done.load();
  if (shards == 1) {
    EXPECT_GT(inline_entries.load(), 0) << "the inline path never ran";
  } else {
    EXPECT_EQ(inline_entries.load(), 0) << "inline path on two shards";
  }
  EXPECT_EQ(ShardHolders(node), 0u);
  for (const AnnounceWord& a : node.announced) EXPECT_EQ(a.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Shards, AnnouncedStressTest, ::testing::Values(1, 2));

// MPI_Win_lock's inline attempt (TryAcquireAnnounced) takes the lock only
// when one CAS does it and nobody is in the shards; when it declines, every
// word is as it was, so the full path can start from the top.
TEST(ShmLockAnnounceTest, InlineAttemptTakesOrLeavesEverythingAsItWas) {
  Node node(3, 1);
  LockWords t1, t2;
  ExclusiveShare share(/*threaded=*/false);
  node.Join(share, 0);
  auto unchanged = [&](const char* why) {
    EXPECT_EQ(node.announced[0].load(), 0u) << why;
    EXPECT_EQ(t1.lock.load() & 0xffffffff, 0u) << why;
    EXPECT_FALSE(share.HoldsOneAnnounced()) << why;
  };

  // A lock_all holds the shard: declined, announcement withdrawn.
  AcquireAll(node.shard_words[0], node.view());
  EXPECT_FALSE(share.TryAcquireAnnounced(t1.lock));
  unchanged("lock_all in");
  ReleaseAll(node.shard_words[0]);

  // Another holder of the target: declined without queueing.
  ExclusiveShare other(/*threaded=*/false);
  node.Join(other, 1);
  AcquireExclusive(other, node.view(), t2);
  EXPECT_FALSE(share.TryAcquireAnnounced(t2.lock));
  EXPECT_EQ(node.announced[0].load(), 0u);
  EXPECT_EQ(t2.lock.load() >> 48, 0u) << "no ticket drawn";
  ReleaseExclusive(other, node.view(), t2);

  // Open: taken with the announcement, the shard untouched; released.
  EXPECT_TRUE(share.TryAcquireAnnounced(t1.lock));
  EXPECT_EQ(node.announced[0].load(), 1u);
  EXPECT_EQ(GateBHolders(t1.lock.load()), 1u);
  EXPECT_EQ(ShardHolders(node), 0u);
  EXPECT_TRUE(share.HoldsOneAnnounced());

  // Nested: declined (the full path counts it), then released by that.
  EXPECT_FALSE(share.TryAcquireAnnounced(t2.lock));
  AcquireExclusive(share, node.view(), t2);
  EXPECT_FALSE(share.HoldsOneAnnounced()) << "two locks held";
  ReleaseExclusive(share, node.view(), t2);
  EXPECT_TRUE(share.HoldsOneAnnounced());
  share.ReleaseAnnounced(t1.lock);
  unchanged("released");

  // A threaded process never announces.
  ExclusiveShare threaded(/*threaded=*/true);
  node.Join(threaded, 2);
  EXPECT_FALSE(threaded.TryAcquireAnnounced(t1.lock));
  EXPECT_EQ(node.announced[2].load(), 0u);
  EXPECT_EQ(t1.lock.load() & 0xffffffff, 0u);
}

// A threaded process (MPI_THREAD_MULTIPLE) always enters the shards.
TEST(ShmLockAnnounceTest, ThreadedShareEntersShards) {
  Node node(2, 1);
  LockWords target;
  ExclusiveShare share(/*threaded=*/true);
  node.Join(share, 0);
  AcquireExclusive(share, node.view(), target);
  EXPECT_EQ(node.announced[0].load(), 0u);
  EXPECT_EQ(GateBHolders(node.shard_words[0].all.load()), 1u);
  ReleaseExclusive(share, node.view(), target);
  EXPECT_EQ(ShardHolders(node), 0u);
}

}  // namespace
}  // namespace rmashim
