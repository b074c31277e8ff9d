// Biased lock_all (shim/sync/shm_lock.h): while no exclusive lock comes, a
// lock_all sets its own visibility word and enters no shard; an exclusive
// locker revokes the bias and waits for the biased holders; the bias comes
// back only from a lock_all that holds its shard, and not for a while after
// a revocation. Threads stand in for the node's processes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "shim/sync/shm_lock.h"
#include "tests/unit/shm_lock_test_node.h"

namespace rmashim {
namespace {

// A lock_all through the shard that turns the bias on.
void TurnBiasOn(Node& node, int rank) {
  LockWords& shard = node.shard_words[rank % node.shard_words.size()];
  AcquireAll(shard, node.view());
  OfferBias(node.view());
  ReleaseAll(shard);
}

TEST(ShmLockBiasTest, BiasedLockAllTouchesNoShard) {
  Node node(4, 1, /*biased=*/true);
  EXPECT_FALSE(TryAcquireAllBiased(node.view(), node.visible[1]))
      << "the bias starts off";
  EXPECT_EQ(node.visible[1].load(), 0u);
  TurnBiasOn(node, 0);
  EXPECT_EQ(node.bias.state.load(), LockAllBias::kOn);
  const uint64_t shard = node.shard_words[0].all.load();
  for (int r = 1; r < 4; ++r) {
    EXPECT_TRUE(TryAcquireAllBiased(node.view(), node.visible[r]));
    EXPECT_EQ(node.visible[r].load(), 1u);
  }
  EXPECT_EQ(node.shard_words[0].all.load(), shard) << "no shard written";
  for (int r = 1; r < 4; ++r) ReleaseAllBiased(node.visible[r]);
  for (int r = 1; r < 4; ++r) EXPECT_EQ(node.visible[r].load(), 0u);
  // Without a bias word (windows spanning nodes, or the gate tests) it
  // never applies.
  Node plain(2, 1);
  EXPECT_FALSE(TryAcquireAllBiased(plain.view(), plain.visible[0]));
}

TEST(ShmLockBiasTest, ExclusiveRevokesAndWaitsForBiasedHolders) {
  Node node(3, 1, /*biased=*/true);
  TurnBiasOn(node, 0);
  ASSERT_TRUE(TryAcquireAllBiased(node.view(), node.visible[2]));
  std::atomic<bool> released{false}, exclusive_in{false};
  std::thread locker([&] {
    ExclusiveShare share(/*threaded=*/false);
    node.Join(share, 1);
    LockWords target;
    EXPECT_TRUE(AcquireExclusive(share, node.view(), target)) << "waited";
    exclusive_in = true;
    EXPECT_TRUE(released.load()) << "in beside a biased lock_all";
    EXPECT_EQ(node.bias.state.load(), LockAllBias::kOff);
    ReleaseExclusive(share, node.view(), target);
  });
  // Until the locker revokes (it holds its lock then, waiting for us).
  while (node.bias.state.load() != LockAllBias::kRevoking) {
    std::this_thread::yield();
  }
  // New lock_alls see the revocation and take the shards.
  EXPECT_FALSE(TryAcquireAllBiased(node.view(), node.visible[0]));
  EXPECT_EQ(node.visible[0].load(), 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(exclusive_in.load());
  released = true;
  ReleaseAllBiased(node.visible[2]);
  locker.join();
  EXPECT_TRUE(exclusive_in.load());
  EXPECT_EQ(ShardHolders(node), 0u);
  // Off for a while after the revocation: a lock_all through the shard
  // does not turn it on again at once.
  TurnBiasOn(node, 0);
  EXPECT_EQ(node.bias.state.load(), LockAllBias::kOff);
  std::this_thread::sleep_for(
      std::chrono::nanoseconds(kBiasInhibitMaxNs + 30'000'000));
  TurnBiasOn(node, 0);
  EXPECT_EQ(node.bias.state.load(), LockAllBias::kOn);
}

// MPI_Win_lock's inline attempt declines while the bias is on, leaving
// everything as it was; the full path then revokes.
TEST(ShmLockBiasTest, InlineExclusiveDeclinesWhileBiasOn) {
  Node node(2, 1, /*biased=*/true);
  TurnBiasOn(node, 0);
  LockWords target;
  ExclusiveShare share(/*threaded=*/false);
  node.Join(share, 1);
  EXPECT_FALSE(share.TryAcquireAnnounced(target.lock));
  EXPECT_EQ(node.announced[1].load(), 0u);
  EXPECT_EQ(target.lock.load() & 0xffffffff, 0u);
  EXPECT_FALSE(share.HoldsOneAnnounced());
  EXPECT_TRUE(AcquireExclusive(share, node.view(), target)) << "revoked";
  EXPECT_EQ(node.bias.state.load(), LockAllBias::kOff);
  ReleaseExclusive(share, node.view(), target);
  // Off: the inline attempt serves again.
  EXPECT_TRUE(share.TryAcquireAnnounced(target.lock));
  share.ReleaseAnnounced(target.lock);
}

// Lock_all callers (biased when they can) and exclusive lockers (inline
// attempt, announced and shard paths) never overlap, nobody hangs, and the
// bias is both used and revoked.
class BiasStressTest : public ::testing::TestWithParam<int> {};

TEST_P(BiasStressTest, BiasedLockAllAndExclusiveNeverOverlap) {
  constexpr int kRanks = 4;
  const int shards = GetParam();
  Node node(kRanks, shards, /*biased=*/true);
  std::vector<LockWords> targets(2);
  std::atomic<int> lock_all_in{0}, exclusive_in{0};
  std::atomic<bool> overlap{false}, stop{false};
  std::atomic<long> biased_entries{0}, revocations{0}, exclusive_entries{0};
  std::vector<std::thread> threads;
  const auto end =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
  for (int id = 0; id < kRanks; ++id) {
    threads.emplace_back([&, id] {
      ExclusiveShare share(/*threaded=*/false);
      node.Join(share, id);
      for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        if (id < 2) {
          LockWords& shard = node.shard_words[id % shards];
          const bool biased =
              TryAcquireAllBiased(node.view(), node.visible[id]);
          if (!biased) {
            AcquireAll(shard, node.view());
            OfferBias(node.view());
          }
          lock_all_in.fetch_add(1);
          Watch(exclusive_in, overlap);
          lock_all_in.fetch_sub(1);
          if (biased) {
            biased_entries.fetch_add(1);
            ReleaseAllBiased(node.visible[id]);
          } else {
            ReleaseAll(shard);
          }
          if (id == 0 && std::chrono::steady_clock::now() > end) stop = true;
        } else {
          // Exclusive lockers come now and then, so the bias comes back.
          std::this_thread::sleep_for(std::chrono::microseconds(300));
          LockWords& target = targets[id - 2];
          const bool inline_path = id == 3;
          const uint32_t before = node.bias.state.load();
          if (!inline_path || !share.TryAcquireAnnounced(target.lock)) {
            AcquireExclusive(share, node.view(), target);
          }
          if (before == LockAllBias::kOn) revocations.fetch_add(1);
          exclusive_in.fetch_add(1);
          exclusive_entries.fetch_add(1);
          Watch(lock_all_in, overlap);
          exclusive_in.fetch_sub(1);
          if (inline_path && share.HoldsOneAnnounced()) {
            share.ReleaseAnnounced(target.lock);
          } else {
            ReleaseExclusive(share, node.view(), target);
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(overlap.load());
  EXPECT_GT(biased_entries.load(), 0) << "the bias never served";
  EXPECT_GT(revocations.load(), 0) << "no exclusive lock met the bias";
  EXPECT_GT(exclusive_entries.load(), 0);
  EXPECT_EQ(ShardHolders(node), 0u);
  for (const VisibleWord& v : node.visible) EXPECT_EQ(v.load(), 0u);
  for (const AnnounceWord& a : node.announced) EXPECT_EQ(a.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Shards, BiasStressTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace rmashim
