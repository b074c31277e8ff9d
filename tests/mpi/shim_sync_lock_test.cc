// Passive-target locks on managed windows (shared memory on single-node
// windows, MPI's on windows spanning nodes): exclusive locks lose no update,
// shared locks are held together, flush makes puts visible, NOCHECK epochs,
// locks on several targets, lock_all against exclusive locks, and a target
// that makes no MPI call while node peers lock its window.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/mpi/shim_sync_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::sync {
namespace {

// Waits for `request`, giving up after kTimeoutSeconds. Returns whether it
// completed.
bool TestUntilDone(MPI_Request* request) {
  return PollUntil(
      [&] {
        int done = 0;
        MPI_Test(request, &done, MPI_STATUS_IGNORE);
        return done != 0;
      },
      kTimeoutSeconds);
}

// Every rank increments a counter at rank 0 under an exclusive lock with a
// plain get and put; a lost update or two holders at once show up as a
// wrong total or a repeated value.
TEST(ShimSyncTest, ExclusiveLockLosesNoUpdate) {
  const int rank = Rank(), size = Size();
  constexpr int kRounds = 16;
  AllocWindow& w = SharedInt64Window();
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  *w.base<int64_t>() = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<int64_t> seen;
  for (int i = 0; i < kRounds; ++i) {
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win()), MPI_SUCCESS);
    int64_t value = -1;
    EXPECT_EQ(MPI_Get(&value, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, w.win()),
              MPI_SUCCESS);
    MPI_Win_flush(0, w.win());
    seen.push_back(value);
    usleep(200);  // widen the window in which a second holder would slip in
    ++value;
    EXPECT_EQ(MPI_Put(&value, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, w.win()),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_unlock(0, w.win()), MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Every value 0 .. kRounds*size-1 was read exactly once.
  std::vector<int64_t> all(kRounds * size);
  MPI_Allgather(seen.data(), kRounds, MPI_INT64_T, all.data(), kRounds,
                MPI_INT64_T, MPI_COMM_WORLD);
  std::sort(all.begin(), all.end());
  for (int64_t i = 0; i < int64_t(all.size()); ++i) {
    ASSERT_EQ(all[i], i) << "a value was read twice or never";
  }
  if (rank == 0) {
    EXPECT_EQ(*w.base<int64_t>(), int64_t{kRounds} * size);
  }
}

// All ranks hold a shared lock on one target at the same time: each enters a
// nonblocking barrier while holding it, which can only complete if no lock
// request was kept waiting. Under the lock every rank reads the target.
TEST(ShimSyncTest, SharedLocksAreHeldTogether) {
  const int rank = Rank(), size = Size();
  constexpr int kInts = 8;
  AllocWindow& w = SharedIntWindow();
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  for (int i = 0; i < kInts; ++i) w.base<int>()[i] = rank * 1000 + i;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int target : {0, size - 1}) {
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, w.win()), MPI_SUCCESS);
    std::vector<int> got(kInts, -1);
    EXPECT_EQ(
        MPI_Get(got.data(), kInts, MPI_INT, target, 0, kInts, MPI_INT, w.win()),
        MPI_SUCCESS);
    MPI_Win_flush(target, w.win());
    for (int i = 0; i < kInts; ++i) EXPECT_EQ(got[i], target * 1000 + i);
    MPI_Request barrier;
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    const bool together = TestUntilDone(&barrier);
    EXPECT_TRUE(together) << "shared lock on " << target << " not concurrent";
    MPI_Win_unlock(target, w.win());
    if (!together) MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A put completed by flush is visible to the target once it hears so by a
// message, whichever passive epoch and flush flavor the origin used.
TEST(ShimSyncTest, FlushThenNotifyMakesPutsVisible) {
  const int rank = Rank(), size = Size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  constexpr int kInts = 256;
  AllocWindow& w = SharedIntWindow();
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int* mem = w.base<int>();
  std::fill(mem, mem + kInts, -1);
  MPI_Barrier(MPI_COMM_WORLD);
  enum Variant { kLockAllFlush, kLockAllFlushAll, kLockSharedFlush };
  for (int round = 0; round < 6; ++round) {
    const Variant variant = static_cast<Variant>(round % 3);
    std::vector<int> data(kInts);
    for (int i = 0; i < kInts; ++i) data[i] = (round * 100 + rank) * kInts + i;
    if (variant == kLockSharedFlush) {
      MPI_Win_lock(MPI_LOCK_SHARED, next, 0, w.win());
    } else {
      MPI_Win_lock_all(0, w.win());
    }
    EXPECT_EQ(
        MPI_Put(data.data(), kInts, MPI_INT, next, 0, kInts, MPI_INT, w.win()),
        MPI_SUCCESS);
    if (variant == kLockAllFlushAll) {
      MPI_Win_flush_all(w.win());
    } else {
      MPI_Win_flush(next, w.win());
    }
    int token = round;
    MPI_Request send;
    MPI_Isend(&token, 1, MPI_INT, next, round, MPI_COMM_WORLD, &send);
    int heard = -1;
    MPI_Recv(&heard, 1, MPI_INT, prev, round, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    EXPECT_EQ(heard, round);
    MPI_Win_sync(w.win());  // the target's loads after an RMA update
    int wrong = 0;
    for (int i = 0; i < kInts; ++i) {
      wrong += mem[i] != (round * 100 + prev) * kInts + i;
    }
    EXPECT_EQ(wrong, 0) << "round " << round << " variant " << variant;
    if (variant == kLockSharedFlush) {
      MPI_Win_unlock(next, w.win());
    } else {
      MPI_Win_unlock_all(w.win());
    }
    // The next round overwrites; nobody may still be reading.
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// MPI_MODE_NOCHECK epochs (the program guarantees no conflicting lock)
// still move data, for lock_all and for single-target locks.
TEST(ShimSyncTest, NoCheckEpochsMoveData) {
  const int rank = Rank(), size = Size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  // Not a shared window: on windows spanning nodes (MPICH's own locks),
  // MPICH 4.0.2 can hang later lock requests on a window after an exclusive
  // MPI_MODE_NOCHECK lock of it, native windows included.
  AllocWindow w(2 * sizeof(int), sizeof(int));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int* mem = w.base<int>();
  mem[0] = mem[1] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  const int a = rank * 10 + 1, b = rank * 10 + 2;
  ASSERT_EQ(MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win()), MPI_SUCCESS);
  EXPECT_EQ(MPI_Put(&a, 1, MPI_INT, next, 0, 1, MPI_INT, w.win()), MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
  // Each target is written by exactly one origin, so no lock can conflict.
  ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, MPI_MODE_NOCHECK, w.win()),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_Put(&b, 1, MPI_INT, next, 1, 1, MPI_INT, w.win()), MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_unlock(next, w.win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(mem[0], prev * 10 + 1);
  EXPECT_EQ(mem[1], prev * 10 + 2);
  // A normal lock right after NOCHECK ones must not wait for a lock word
  // the NOCHECK epochs never took.
  int got[2] = {-1, -1};
  ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, prev, 0, w.win()), MPI_SUCCESS);
  EXPECT_EQ(MPI_Get(got, 2, MPI_INT, prev, 0, 2, MPI_INT, w.win()),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_unlock(prev, w.win()), MPI_SUCCESS);
  const int prev2 = (prev + size - 1) % size;
  EXPECT_EQ(got[0], prev2 * 10 + 1);
  EXPECT_EQ(got[1], prev2 * 10 + 2);
  MPI_Barrier(MPI_COMM_WORLD);
}

// One origin holds locks on several targets at once (exclusive on even
// targets, shared on odd ones), taken in ascending order so origins cannot
// deadlock.
TEST(ShimSyncTest, LocksOnSeveralTargetsAtOnce) {
  const int rank = Rank(), size = Size();
  // Word 0: counter (exclusive holders only); words 1..size: one slot per
  // origin (disjoint, so shared holders may write them).
  AllocWindow& w = SharedIntWindow();
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int* mem = w.base<int>();
  std::fill(mem, mem + 1 + size, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  constexpr int kRounds = 2;
  for (int round = 0; round < kRounds; ++round) {
    for (int t = 0; t < size; ++t) {
      const int type = t % 2 == 0 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
      ASSERT_EQ(MPI_Win_lock(type, t, 0, w.win()), MPI_SUCCESS);
    }
    for (int t = 0; t < size; ++t) {
      if (t % 2 == 0) {
        int counter = -1;
        MPI_Get(&counter, 1, MPI_INT, t, 0, 1, MPI_INT, w.win());
        MPI_Win_flush(t, w.win());
        ++counter;
        EXPECT_EQ(MPI_Put(&counter, 1, MPI_INT, t, 0, 1, MPI_INT, w.win()),
                  MPI_SUCCESS);
      }
      const int stamp = (round + 1) * 100 + rank;
      EXPECT_EQ(MPI_Put(&stamp, 1, MPI_INT, t, 1 + rank, 1, MPI_INT, w.win()),
                MPI_SUCCESS);
    }
    for (int t = size - 1; t >= 0; --t) {
      ASSERT_EQ(MPI_Win_unlock(t, w.win()), MPI_SUCCESS);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(mem[0], rank % 2 == 0 ? kRounds * size : 0);
  for (int origin = 0; origin < size; ++origin) {
    EXPECT_EQ(mem[1 + origin], kRounds * 100 + origin) << "origin " << origin;
  }
}

// Exclusive locks and lock_all exclude each other, checked with a handshake
// instead of luck: one side signals (by message) that it holds its lock,
// then dawdles between two halves of an update or of a read; the other side
// only then asks for the conflicting lock, so any overlap tears the pair.
TEST(ShimSyncTest, LockAllAndExclusiveLocksExcludeEachOther) {
  const int rank = Rank(), size = Size();
  const int target = size - 1, writer = 0;
  constexpr int kDawdleMicros = 30 * 1000;
  AllocWindow& w = SharedIntWindow();
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  w.base<int>()[0] = w.base<int>()[1] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  int value = 0;
  // Round 1: the writer holds the exclusive lock; readers ask for lock_all.
  ++value;
  if (rank == writer) {
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win()),
              MPI_SUCCESS);
    MPI_Put(&value, 1, MPI_INT, target, 0, 1, MPI_INT, w.win());
    MPI_Win_flush(target, w.win());
    for (int r = 0; r < size; ++r) {
      if (r != writer) MPI_Send(&value, 1, MPI_INT, r, 1, MPI_COMM_WORLD);
    }
    usleep(kDawdleMicros);
    MPI_Put(&value, 1, MPI_INT, target, 1, 1, MPI_INT, w.win());
    ASSERT_EQ(MPI_Win_unlock(target, w.win()), MPI_SUCCESS);
  } else {
    int token = 0;
    MPI_Recv(&token, 1, MPI_INT, writer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int pair[2] = {-1, -2};
    ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
    MPI_Get(pair, 2, MPI_INT, target, 0, 2, MPI_INT, w.win());
    ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
    EXPECT_EQ(pair[0], value) << "lock_all granted during an exclusive lock";
    EXPECT_EQ(pair[1], value) << "lock_all granted during an exclusive lock";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Round 2: readers hold lock_all; the writer asks for the exclusive lock.
  ++value;
  if (rank == writer) {
    for (int r = 0; r < size; ++r) {
      int token = 0;
      if (r != writer) {
        MPI_Recv(&token, 1, MPI_INT, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win()),
              MPI_SUCCESS);
    const int pair[2] = {value, value};
    MPI_Put(pair, 2, MPI_INT, target, 0, 2, MPI_INT, w.win());
    ASSERT_EQ(MPI_Win_unlock(target, w.win()), MPI_SUCCESS);
  } else {
    int first = -1, second = -2;
    ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
    MPI_Get(&first, 1, MPI_INT, target, 0, 1, MPI_INT, w.win());
    MPI_Win_flush(target, w.win());
    MPI_Send(&first, 1, MPI_INT, writer, 2, MPI_COMM_WORLD);
    usleep(kDawdleMicros);
    MPI_Get(&second, 1, MPI_INT, target, 1, 1, MPI_INT, w.win());
    ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
    EXPECT_EQ(first, value - 1);
    EXPECT_EQ(second, value - 1)
        << "exclusive lock granted during a lock_all epoch";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == target) {
    EXPECT_EQ(w.base<int>()[0], value);
    EXPECT_EQ(w.base<int>()[1], value);
  }
}
// Truly one-sided: node rank 0 waits on its own memory without calling MPI
// while its node peers lock, update and unlock its window. Native MPICH
// needs the target to enter MPI for that, so only a managed window is held
// to it.
TEST(ShimSyncTest, TargetMakesNoMpiCallsWhileOthersLockAndPut) {
  ScopedComm node(rmashim_test::SplitNodeComm());
  const int node_rank = Rank(node.get()), node_size = Size(node.get());
  // Word 0: counter (exclusive lock); words 1..node_size: slot per writer
  // (lock_all).
  AllocWindow w((1 + node_size) * sizeof(int), sizeof(int), MPI_INFO_NULL,
                node.get());
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  const bool managed = IsManaged(w.win());
  EXPECT_TRUE(managed);
  volatile int* mem = w.base<int>();
  for (int i = 0; i <= node_size; ++i) mem[i] = 0;
  MPI_Barrier(node.get());
  if (!managed) return;
  const int writers = node_size > 1 ? node_size - 1 : 1;
  if (node_rank != 0 || node_size == 1) {
    usleep(20 * 1000);  // let node rank 0 settle into its MPI-free wait
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win());
    int counter = -1;
    MPI_Get(&counter, 1, MPI_INT, 0, 0, 1, MPI_INT, w.win());
    MPI_Win_flush(0, w.win());
    ++counter;
    MPI_Put(&counter, 1, MPI_INT, 0, 0, 1, MPI_INT, w.win());
    MPI_Win_unlock(0, w.win());
    const int stamp = 100 + node_rank;
    MPI_Win_lock_all(0, w.win());
    MPI_Put(&stamp, 1, MPI_INT, 0, 1 + node_rank, 1, MPI_INT, w.win());
    MPI_Win_unlock_all(w.win());
  }
  if (node_rank == 0) {
    const bool arrived = PollUntil(
        [&] {
          if (mem[0] != writers) return false;
          for (int r = node_size > 1 ? 1 : 0; r < node_size; ++r) {
            if (mem[1 + r] != 100 + r) return false;
          }
          return true;
        },
        kTimeoutSeconds);
    EXPECT_TRUE(arrived) << "counter " << mem[0] << " of " << writers;
  }
  MPI_Barrier(node.get());
}

}  // namespace
}  // namespace rmashim_test::sync
