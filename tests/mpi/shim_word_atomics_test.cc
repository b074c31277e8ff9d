// Word atomics and bulk accumulates on the same counters from different
// ranks at once (shim/sync/word_atomics.h): fetch_and_op, compare_and_swap and
// one-word accumulates skip the stripes while no bulk update is in
// progress, so a bulk MPI_Accumulate must wait for them, and they for it.
// Every update must survive, on one node and across the simulated node
// splits (where windows spanning nodes keep accumulates in MPI). One-word
// accumulates are queued until the next synchronization
// (shim/windows/deferred_atomics.h): later accumulate-family calls see them in
// program order, and every synchronization makes them visible.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::Size;

constexpr int kCounters = 2048;  // one 16 KiB accumulate stripe of int64
// Windows spanning the simulated nodes send these to MPI: a 500th of the
// single updates there, a 50th of the bulk ones. With 4 ranks on 2 cores,
// native MPICH 4.0.2 by itself (no shim) sometimes serves a flushed
// fetch_and_op only once per scheduler time slice: the same number of them
// took hundreds of times longer in some runs than in others (a plain C
// program, same pattern, nothing preloaded).
int AtomicOps() {
  return rmashim_test::AllOnOneNode(MPI_COMM_WORLD) ? 100000 : 200;
}
int BulkOps() { return rmashim_test::AllOnOneNode(MPI_COMM_WORLD) ? 400 : 8; }

// kCounters zeroed int64 counters per rank in a managed window, every
// rank past its zeroing.
void AllocateCounters(int64_t** base, MPI_Win* win) {
  ASSERT_EQ(MPI_Win_allocate(kCounters * sizeof(int64_t), sizeof(int64_t),
                             MPI_INFO_NULL, MPI_COMM_WORLD, base, win),
            MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(*win));
  for (int i = 0; i < kCounters; ++i) (*base)[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
}

enum class Single { kFetchAndOp, kCompareAndSwap, kAccumulate };

// Even ranks update counters one at a time (fetch_and_op, compare_and_swap
// loops that add one, or one-word accumulates), odd ranks add one to all of
// them with one MPI_Accumulate; all on rank 0's window, in one lock_all
// epoch.
void RunMixed(Single single) {
  const int rank = Rank(), size = Size();
  const int kAtomicOps = AtomicOps(), kBulkOps = BulkOps();
  int64_t* base = nullptr;
  MPI_Win win;
  ASSERT_NO_FATAL_FAILURE(AllocateCounters(&base, &win));
  MPI_Win_lock_all(0, win);
  if (rank % 2 == 0) {
    const int64_t one = 1;
    for (int op = 0; op < kAtomicOps; ++op) {
      const MPI_Aint disp = op % kCounters;
      if (single == Single::kAccumulate) {
        MPI_Accumulate(&one, 1, MPI_INT64_T, 0, disp, 1, MPI_INT64_T, MPI_SUM,
                       win);
        if (op % 100 == 99) MPI_Win_flush(0, win);
        continue;
      }
      if (single == Single::kFetchAndOp) {
        int64_t old = 0;
        MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, disp, MPI_SUM, win);
        MPI_Win_flush(0, win);
        continue;
      }
      int64_t seen = 0, swapped = -1;
      MPI_Fetch_and_op(nullptr, &seen, MPI_INT64_T, 0, disp, MPI_NO_OP, win);
      MPI_Win_flush(0, win);
      while (true) {
        const int64_t next = seen + 1;
        MPI_Compare_and_swap(&next, &seen, &swapped, MPI_INT64_T, 0, disp, win);
        MPI_Win_flush(0, win);
        if (swapped == seen) break;
        seen = swapped;
      }
    }
  } else {
    const std::vector<int64_t> ones(kCounters, 1);
    for (int op = 0; op < kBulkOps; ++op) {
      MPI_Accumulate(ones.data(), kCounters, MPI_INT64_T, 0, 0, kCounters,
                     MPI_INT64_T, MPI_SUM, win);
      MPI_Win_flush(0, win);
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const int atomic_ranks = (size + 1) / 2, bulk_ranks = size / 2;
    int64_t lost = 0;
    for (int i = 0; i < kCounters; ++i) {
      const int64_t expected = atomic_ranks * (kAtomicOps / kCounters +
                                               (i < kAtomicOps % kCounters)) +
                               bulk_ranks * kBulkOps;
      lost += expected - base[i];
    }
    EXPECT_EQ(lost, 0) << "updates lost over " << kCounters << " counters";
    EXPECT_EQ(base[kCounters - 1],
              atomic_ranks * (kAtomicOps / kCounters) + bulk_ranks * kBulkOps);
  }
  MPI_Win_free(&win);
}

TEST(WordAtomics, FetchAndOpAgainstBulkAccumulates) {
  RunMixed(Single::kFetchAndOp);
}

TEST(WordAtomics, CompareAndSwapAgainstBulkAccumulates) {
  RunMixed(Single::kCompareAndSwap);
}

TEST(WordAtomics, OneWordAccumulatesAgainstBulkAccumulates) {
  RunMixed(Single::kAccumulate);
}

// The word lane (shim/move/word_lane.h) hands a fetch_and_op or
// compare_and_swap to the stripe path when the target's mode word asks for
// stripes, as it does right after a bulk accumulate (and until 256 updates
// found no bulk updater). Each rank bulk-updates the upper half of the next
// rank's window, then runs every lane op (MPI_REPLACE, MPI_NO_OP, MPI_SUM,
// compare_and_swap; two 8-byte integer types) on its own counter there:
// the results must be the lane's.
TEST(WordAtomics, LaneOpsRightAfterABulkAccumulate) {
  const int rank = Rank(), size = Size();
  int64_t* base = nullptr;
  MPI_Win win;
  ASSERT_NO_FATAL_FAILURE(AllocateCounters(&base, &win));
  const int target = (rank + 1) % size;
  constexpr int kHalf = kCounters / 2;
  const std::vector<int64_t> ones(kHalf, 1);
  constexpr int kRounds = 3;
  MPI_Win_lock_all(0, win);
  for (int round = 0; round < kRounds; ++round) {
    MPI_Accumulate(ones.data(), kHalf, MPI_INT64_T, target, kHalf, kHalf,
                   MPI_INT64_T, MPI_SUM, win);
    MPI_Win_flush(target, win);
    const MPI_Datatype type = round % 2 ? MPI_UINT64_T : MPI_LONG;
    const int64_t start = round * 1000, replaced = start + 100 + rank, five = 5,
                  swapped = start + 7;
    int64_t old = -1, seen = -1;
    MPI_Fetch_and_op(&replaced, &old, type, target, rank, MPI_REPLACE, win);
    MPI_Win_flush(target, win);
    EXPECT_EQ(old, round == 0 ? 0 : (round - 1) * 1000 + 7) << round;
    MPI_Fetch_and_op(nullptr, &seen, type, target, rank, MPI_NO_OP, win);
    MPI_Win_flush(target, win);
    EXPECT_EQ(seen, replaced) << round;
    MPI_Fetch_and_op(&five, &old, type, target, rank, MPI_SUM, win);
    MPI_Win_flush(target, win);
    EXPECT_EQ(old, replaced) << round;
    const int64_t compare = replaced + 5;
    MPI_Compare_and_swap(&swapped, &compare, &old, type, target, rank, win);
    MPI_Win_flush(target, win);
    EXPECT_EQ(old, compare) << round;
    MPI_Compare_and_swap(&five, &compare, &old, type, target, rank, win);
    MPI_Win_flush(target, win);
    EXPECT_EQ(old, swapped) << round << ": a failed compare must not swap";
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  const int from = (rank + size - 1) % size;  // whose counter lies here
  EXPECT_EQ(base[from], (kRounds - 1) * 1000 + 7);
  for (int i = kHalf; i < kCounters; ++i) {
    ASSERT_EQ(base[i], kRounds) << "bulk-updated counter " << i;
  }
  MPI_Win_free(&win);
}

// accumulate_ordering (MPI-3 11.7.2): queued one-word accumulates apply
// before any later accumulate-family call of the same origin, with no
// flush in between. Every rank works on its own counter of rank 0's window.
TEST(DeferredAccumulates, KeepProgramOrderWithFetchingCalls) {
  const int rank = Rank();
  int64_t* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate(Size() * sizeof(int64_t), sizeof(int64_t),
                             MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
            MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(win));
  base[rank] = 0;  // every rank's own slot of its own window
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  const int64_t five = 5, two = 2, one = 1, mask = 0xff, seven = 7;
  MPI_Accumulate(&five, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, MPI_REPLACE,
                 win);
  for (int i = 0; i < 3; ++i) {
    MPI_Accumulate(&two, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, MPI_SUM, win);
  }
  int64_t seen = -1;
  MPI_Fetch_and_op(nullptr, &seen, MPI_INT64_T, 0, rank, MPI_NO_OP, win);
  MPI_Win_flush(0, win);
  EXPECT_EQ(seen, 11);
  MPI_Accumulate(&one, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, MPI_SUM, win);
  MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, &seen, 1, MPI_INT64_T, 0, rank, 1,
                     MPI_INT64_T, MPI_NO_OP, win);
  MPI_Win_flush(0, win);
  EXPECT_EQ(seen, 12);
  MPI_Accumulate(&mask, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, MPI_BXOR, win);
  const int64_t expected_old = 12 ^ 0xff;
  MPI_Compare_and_swap(&seven, &expected_old, &seen, MPI_INT64_T, 0, rank, win);
  MPI_Win_flush(0, win);
  EXPECT_EQ(seen, expected_old);
  // More than a queue's worth, then a bulk accumulate over the counter.
  for (int i = 0; i < 200; ++i) {
    MPI_Accumulate(&one, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, MPI_SUM, win);
  }
  MPI_Win_flush(0, win);
  MPI_Get(&seen, 1, MPI_INT64_T, 0, rank, 1, MPI_INT64_T, win);
  MPI_Win_flush(0, win);
  EXPECT_EQ(seen, 207);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
}

// Each passive-target synchronization completes queued accumulates at the
// target: another rank reads them right after it (and a barrier).
TEST(DeferredAccumulates, EverySynchronizationMakesThemVisible) {
  const int rank = Rank(), size = Size();
  int64_t* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &base, &win),
            MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(win));
  *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const int target = (rank + 1) % size;
  const int64_t one = 1;
  enum Sync { kFlush, kFlushAll, kUnlockAll, kUnlock, kWinSync, kSyncs };
  int64_t expected = 0;
  for (int sync = 0; sync < kSyncs; ++sync) {
    if (sync == kUnlock) {
      MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    } else {
      MPI_Win_lock_all(0, win);
    }
    MPI_Accumulate(&one, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T, MPI_SUM,
                   win);
    ++expected;
    if (sync == kFlush) MPI_Win_flush(target, win);
    if (sync == kFlushAll) MPI_Win_flush_all(win);
    if (sync == kWinSync) MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);  // the accumulate is complete before this
    // What this rank's own memory holds now, updated by rank - 1.
    const int64_t mine = std::atomic_ref<int64_t>(*base).load();
    if (sync != kUnlockAll && sync != kUnlock && sync != kWinSync) {
      EXPECT_EQ(mine, expected) << "after sync " << sync;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (sync == kUnlock) {
      MPI_Win_unlock(target, win);
    } else {
      MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_EQ(std::atomic_ref<int64_t>(*base).load(), expected)
        << "after sync " << sync << " and the epoch's end";
    MPI_Barrier(MPI_COMM_WORLD);  // read before the next round's update
  }
  MPI_Win_free(&win);
}

}  // namespace
