// The accumulate family on MPI_Win_create windows under contention: every
// rank updates the same counters in one rank's ordinary (malloc'd) memory at
// once, with accumulate, get_accumulate, fetch_and_op and compare_and_swap,
// small and page-crossing bulk updates mixed. On one node the shim serves
// them through cross-memory attach under the accumulate stripes; a lost
// update shows as a wrong total. On the simulated splits they go to MPI.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::HangWatchdog;
using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::Size;

constexpr int kRounds = 200;
constexpr int kBulk = 3000;  // int64s: 24000 bytes, six 4 KiB pages

// Cells of the target's memory: [0] fetch_and_op counter, [1] CAS-lock,
// [2] counter guarded by the CAS lock, [3] get_accumulate counter, then the
// bulk array, starting 8 bytes before a page boundary from the window base.
constexpr int kFop = 0, kLock = 1, kGuarded = 2, kGacc = 3, kBulkAt = 511;

TEST(CreateAccumulateTest, ConcurrentUpdatesLoseNothing) {
  // A lost update of the compare_and_swap lock word leaves ranks spinning.
  HangWatchdog watchdog(60, "contended create-window accumulates");
  const int me = Rank(), n = Size(), target = n - 1;
  std::vector<int64_t> memory(kBulkAt + kBulk, 0);
  MPI_Win win;
  ASSERT_EQ(
      MPI_Win_create(memory.data(), memory.size() * sizeof(int64_t),
                     sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win),
      MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(win));
  const std::vector<int64_t> ones(kBulk, 1);
  std::vector<int64_t> fetched(kBulk);
  MPI_Win_lock_all(0, win);
  for (int round = 0; round < kRounds; ++round) {
    const int64_t one = 1;
    int64_t old = 0;
    ASSERT_EQ(
        MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, kFop, MPI_SUM, win),
        MPI_SUCCESS);
    ASSERT_EQ(MPI_Get_accumulate(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T,
                                 target, kGacc, 1, MPI_INT64_T, MPI_SUM, win),
              MPI_SUCCESS);
    // Bulk: every round adds 1 to every element (page-crossing, plain loop
    // under exclusive stripes); every other round also fetches.
    if (round % 2) {
      ASSERT_EQ(MPI_Get_accumulate(ones.data(), kBulk, MPI_INT64_T,
                                   fetched.data(), kBulk, MPI_INT64_T, target,
                                   kBulkAt, kBulk, MPI_INT64_T, MPI_SUM, win),
                MPI_SUCCESS);
    } else {
      ASSERT_EQ(MPI_Accumulate(ones.data(), kBulk, MPI_INT64_T, target, kBulkAt,
                               kBulk, MPI_INT64_T, MPI_SUM, win),
                MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Win_flush(target, win), MPI_SUCCESS);
    if (round % 2) {  // a fetched snapshot is never torn within an element
      for (int i = 1; i < kBulk; ++i) ASSERT_GE(fetched[i], 0);
    }
    // A spin lock by compare_and_swap guards a get + put increment.
    const int64_t free_word = 0, mine = me + 1;
    int64_t seen = -1;
    do {
      ASSERT_EQ(MPI_Compare_and_swap(&mine, &free_word, &seen, MPI_INT64_T,
                                     target, kLock, win),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Win_flush(target, win), MPI_SUCCESS);
    } while (seen != 0);
    int64_t guarded = 0;
    ASSERT_EQ(MPI_Get(&guarded, 1, MPI_INT64_T, target, kGuarded, 1,
                      MPI_INT64_T, win),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(target, win), MPI_SUCCESS);
    ++guarded;
    ASSERT_EQ(MPI_Put(&guarded, 1, MPI_INT64_T, target, kGuarded, 1,
                      MPI_INT64_T, win),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(target, win), MPI_SUCCESS);
    ASSERT_EQ(MPI_Accumulate(&free_word, 1, MPI_INT64_T, target, kLock, 1,
                             MPI_INT64_T, MPI_REPLACE, win),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(target, win), MPI_SUCCESS);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == target) {
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
    const int64_t total = int64_t{kRounds} * n;
    EXPECT_EQ(memory[kFop], total);
    EXPECT_EQ(memory[kGacc], total);
    EXPECT_EQ(memory[kGuarded], total);
    EXPECT_EQ(memory[kLock], 0);
    for (int i = 0; i < kBulk; ++i) {
      ASSERT_EQ(memory[kBulkAt + i], total) << "bulk element " << i;
    }
    MPI_Win_unlock(me, win);
  }
  MPI_Win_free(&win);
}

}  // namespace
