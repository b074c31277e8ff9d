// Operations the shim passes through to MPI (atomics, accumulates,
// request-based operations) mixed with its own direct put and get in the
// epochs it serves: lock, lock_all and fence epochs on managed windows.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/mpi/shim_sync_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::sync {
namespace {

// Inside a shim-served lock epoch, MPI's atomics and request-based
// operations (passed through) and the shim's direct put/get see each other's
// results once flushed.
TEST(ShimSyncTest, PassedThroughOpsMixWithDirectOpsInALockEpoch) {
  const int rank = Rank(), size = Size();
  // Words: 0 fetch_and_op counter, 1 accumulate sum, 2 CAS counter,
  // 3 direct put/get counter, 4.. one Rput slot per origin.
  const int words = 4 + size;
  AllocWindow& w = SharedInt64Window();
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int64_t* mem = w.base<int64_t>();
  std::fill(mem, mem + words, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  constexpr int kRounds = 3;
  const int target = 0;
  std::vector<int64_t> fetched;
  for (int round = 0; round < kRounds; ++round) {
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win()),
              MPI_SUCCESS);
    const int64_t one = 1, mine = rank + 1;
    int64_t old = -1;
    EXPECT_EQ(
        MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, 0, MPI_SUM, w.win()),
        MPI_SUCCESS);
    EXPECT_EQ(MPI_Accumulate(&mine, 1, MPI_INT64_T, target, 1, 1, MPI_INT64_T,
                             MPI_SUM, w.win()),
              MPI_SUCCESS);
    MPI_Win_flush(target, w.win());
    fetched.push_back(old);
    // A direct get sees the accumulate's result; the lock keeps it stable.
    int64_t sum = -1;
    EXPECT_EQ(MPI_Get(&sum, 1, MPI_INT64_T, target, 1, 1, MPI_INT64_T, w.win()),
              MPI_SUCCESS);
    MPI_Win_flush(target, w.win());
    // CAS from what a direct get read: under the lock it must succeed.
    int64_t cas_now = -1, cas_old = -2;
    MPI_Get(&cas_now, 1, MPI_INT64_T, target, 2, 1, MPI_INT64_T, w.win());
    MPI_Win_flush(target, w.win());
    const int64_t cas_new = cas_now + 1;
    EXPECT_EQ(MPI_Compare_and_swap(&cas_new, &cas_now, &cas_old, MPI_INT64_T,
                                   target, 2, w.win()),
              MPI_SUCCESS);
    MPI_Win_flush(target, w.win());
    EXPECT_EQ(cas_old, cas_now) << "compare-and-swap lost under the lock";
    // Direct read-modify-write of word 3, then check it through Rget.
    int64_t direct = -1;
    MPI_Get(&direct, 1, MPI_INT64_T, target, 3, 1, MPI_INT64_T, w.win());
    MPI_Win_flush(target, w.win());
    ++direct;
    MPI_Put(&direct, 1, MPI_INT64_T, target, 3, 1, MPI_INT64_T, w.win());
    MPI_Win_flush(target, w.win());
    int64_t via_rget = -1;
    MPI_Request rget;
    EXPECT_EQ(MPI_Rget(&via_rget, 1, MPI_INT64_T, target, 3, 1, MPI_INT64_T,
                       w.win(), &rget),
              MPI_SUCCESS);
    MPI_Wait(&rget, MPI_STATUS_IGNORE);
    EXPECT_EQ(via_rget, direct);
    // Rput a stamp, flush, and read it back directly.
    const int64_t stamp = (round + 1) * 1000 + rank;
    MPI_Request rput;
    EXPECT_EQ(MPI_Rput(&stamp, 1, MPI_INT64_T, target, 4 + rank, 1, MPI_INT64_T,
                       w.win(), &rput),
              MPI_SUCCESS);
    MPI_Wait(&rput, MPI_STATUS_IGNORE);
    MPI_Win_flush(target, w.win());
    int64_t stamp_back = -1;
    MPI_Get(&stamp_back, 1, MPI_INT64_T, target, 4 + rank, 1, MPI_INT64_T,
            w.win());
    ASSERT_EQ(MPI_Win_unlock(target, w.win()), MPI_SUCCESS);
    EXPECT_EQ(stamp_back, stamp);
    EXPECT_GE(sum, mine);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Fetched values are all distinct: 0 .. kRounds*size-1.
  std::vector<int64_t> all(kRounds * size);
  MPI_Allgather(fetched.data(), kRounds, MPI_INT64_T, all.data(), kRounds,
                MPI_INT64_T, MPI_COMM_WORLD);
  std::sort(all.begin(), all.end());
  for (int64_t i = 0; i < int64_t(all.size()); ++i) ASSERT_EQ(all[i], i);
  if (rank == target) {
    const int64_t total = int64_t{kRounds} * size;
    EXPECT_EQ(mem[0], total);
    EXPECT_EQ(mem[1], int64_t{kRounds} * size * (size + 1) / 2);
    EXPECT_EQ(mem[2], total);
    EXPECT_EQ(mem[3], total);
    for (int origin = 0; origin < size; ++origin) {
      EXPECT_EQ(mem[4 + origin], kRounds * 1000 + origin);
    }
  }
}

// A spinlock built from MPI_Compare_and_swap inside one lock_all epoch
// guards a plain get/put read-modify-write: atomics and ordinary put/get on
// one window must be ordered by flush, whichever path the shim takes for
// each.
TEST(ShimSyncTest, CompareAndSwapSpinlockGuardsPutAndGet) {
  const int rank = Rank(), size = Size();
  const int owner = size - 1;  // holds the lock word and the counter
  constexpr int kRounds = 4;
  AllocWindow& w = SharedInt64Window();
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int64_t* mem = w.base<int64_t>();
  mem[0] = 0;  // lock word: 0 free, else holder rank + 1
  mem[1] = 0;  // counter, only touched while holding the lock word
  MPI_Barrier(MPI_COMM_WORLD);
  ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
  const int64_t mine = rank + 1, free_word = 0;
  bool acquired_every_time = true;
  for (int i = 0; i < kRounds && acquired_every_time; ++i) {
    acquired_every_time = PollUntil(
        [&] {
          int64_t seen = -1;
          MPI_Compare_and_swap(&mine, &free_word, &seen, MPI_INT64_T, owner, 0,
                               w.win());
          MPI_Win_flush(owner, w.win());
          return seen == free_word;
        },
        kTimeoutSeconds);
    if (!acquired_every_time) break;
    int64_t counter = -1;
    MPI_Get(&counter, 1, MPI_INT64_T, owner, 1, 1, MPI_INT64_T, w.win());
    MPI_Win_flush(owner, w.win());
    ++counter;
    MPI_Put(&counter, 1, MPI_INT64_T, owner, 1, 1, MPI_INT64_T, w.win());
    MPI_Win_flush(owner, w.win());
    // Release atomically; the old value must still be ours.
    int64_t released = -1;
    MPI_Fetch_and_op(&free_word, &released, MPI_INT64_T, owner, 0, MPI_REPLACE,
                     w.win());
    MPI_Win_flush(owner, w.win());
    EXPECT_EQ(released, mine) << "someone else held the lock";
  }
  EXPECT_TRUE(acquired_every_time) << "lock word never became free";
  ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == owner) {
    EXPECT_EQ(mem[0], 0);
    EXPECT_EQ(mem[1], int64_t{kRounds} * size);
  }
}

// lock_all epoch: accumulates and get_accumulates pass through while puts
// go direct; everything is in place at unlock_all.
TEST(ShimSyncTest, PassedThroughOpsMixWithDirectOpsInALockAllEpoch) {
  const int rank = Rank(), size = Size();
  // Word 0: accumulate sum from everyone; words 1..size: put slot per origin.
  AllocWindow& w = SharedInt64Window();
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int64_t* mem = w.base<int64_t>();
  std::fill(mem, mem + 1 + size, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
  std::vector<int64_t> before(size, -1);
  for (int t = 0; t < size; ++t) {
    const int64_t add = rank + 1, stamp = rank * 100 + t;
    EXPECT_EQ(
        MPI_Get_accumulate(&add, 1, MPI_INT64_T, &before[t], 1, MPI_INT64_T, t,
                           0, 1, MPI_INT64_T, MPI_SUM, w.win()),
        MPI_SUCCESS);
    EXPECT_EQ(
        MPI_Put(&stamp, 1, MPI_INT64_T, t, 1 + rank, 1, MPI_INT64_T, w.win()),
        MPI_SUCCESS);
    MPI_Request req;
    EXPECT_EQ(MPI_Raccumulate(&add, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T,
                              MPI_SUM, w.win(), &req),
              MPI_SUCCESS);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  // Each origin added rank+1 twice to every target.
  EXPECT_EQ(mem[0], int64_t{size} * (size + 1));
  for (int origin = 0; origin < size; ++origin) {
    EXPECT_EQ(mem[1 + origin], origin * 100 + rank) << "origin " << origin;
  }
  for (int t = 0; t < size; ++t) {
    EXPECT_GE(before[t], 0);
    EXPECT_LE(before[t], int64_t{size} * (size + 1) - (rank + 1));
  }
}

// Fence epochs mixing direct puts with accumulates passed through to MPI.
TEST(ShimSyncTest, FenceWithDirectPutsAndAccumulates) {
  const int rank = Rank(), size = Size();
  // Word 0: accumulated count; words 1..size: put slot per origin.
  AllocWindow& w = SharedIntWindow();
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int* mem = w.base<int>();
  std::fill(mem, mem + 1 + size, 0);
  MPI_Win_fence(0, w.win());
  constexpr int kEpochs = 3;
  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    for (int t = 0; t < size; ++t) {
      const int stamp = epoch * 100 + rank, inc = rank + 1;
      EXPECT_EQ(MPI_Put(&stamp, 1, MPI_INT, t, 1 + rank, 1, MPI_INT, w.win()),
                MPI_SUCCESS);
      EXPECT_EQ(
          MPI_Accumulate(&inc, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, w.win()),
          MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Win_fence(0, w.win()), MPI_SUCCESS);
    EXPECT_EQ(mem[0], epoch * size * (size + 1) / 2) << "epoch " << epoch;
    for (int origin = 0; origin < size; ++origin) {
      EXPECT_EQ(mem[1 + origin], epoch * 100 + origin)
          << "epoch " << epoch << " origin " << origin;
    }
    MPI_Win_fence(0, w.win());  // nobody writes before everyone checked
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win());
}

}  // namespace
}  // namespace rmashim_test::sync
