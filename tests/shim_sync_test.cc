// Synchronization on managed windows: passive-target locks (shared memory on
// single-node windows, MPI's on windows spanning nodes), fence and PSCW, and
// operations the shim passes through to MPI mixed into its own epochs.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::IsManaged;
using rmashim_test::PollUntil;
using rmashim_test::Rank;
using rmashim_test::ScopedComm;
using rmashim_test::Size;

// Long enough for any correct run on an oversubscribed node, short enough
// that a broken lock fails the test well before mpirun's timeout.
constexpr double kTimeoutSeconds = 5.0;

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

// Two managed world windows shared by the tests that fit in them (window
// creation is collective and slow on oversubscribed nodes): ints at
// disp_unit 4 and int64s at disp_unit 8. Each test writes what it reads and
// leaves no epoch open.
constexpr int kSharedInts = 256;
constexpr int kSharedInt64s = 64;

class SharedWindows : public testing::Environment {
 public:
  void SetUp() override {
    // Room for every user: at most 256 ints, or two per rank, or 4 + size
    // int64s.
    ints = new AllocWindow(std::max(kSharedInts, 2 * Size() + 2) * sizeof(int),
                           sizeof(int));
    int64s = new AllocWindow(
        std::max(kSharedInt64s, 4 + Size()) * sizeof(int64_t), sizeof(int64_t));
  }
  void TearDown() override {
    delete ints;
    delete int64s;
  }
  AllocWindow* ints = nullptr;
  AllocWindow* int64s = nullptr;
};

SharedWindows* const g_windows = static_cast<SharedWindows*>(
    testing::AddGlobalTestEnvironment(new SharedWindows));

AllocWindow& SharedIntWindow() { return *g_windows->ints; }
AllocWindow& SharedInt64Window() { return *g_windows->int64s; }

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

// Fence epochs: puts (direct to node-local targets, through MPI to the
// others) are visible after the closing fence, gets read the previous
// epoch's data, with and without the NOPRECEDE/NOSUCCEED assertions.
TEST(ShimSyncTest, FenceEpochsMoveData) {
  const int rank = Rank(), size = Size();
  // Words [0, size): put area, one per origin; [size, 2*size): get source.
  AllocWindow& w = SharedIntWindow();
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int* mem = w.base<int>();
  for (int i = 0; i < 2 * size; ++i) mem[i] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  ASSERT_EQ(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win()), MPI_SUCCESS);
  constexpr int kEpochs = 3;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    std::vector<int> got(size, -2);
    for (int t = 0; t < size; ++t) {
      const int value = epoch * 1000 + rank * 10 + t;
      EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, t, rank, 1, MPI_INT, w.win()),
                MPI_SUCCESS);
      EXPECT_EQ(
          MPI_Get(&got[t], 1, MPI_INT, t, size + rank, 1, MPI_INT, w.win()),
          MPI_SUCCESS);
    }
    const bool last = epoch == kEpochs - 1;
    ASSERT_EQ(MPI_Win_fence(last ? MPI_MODE_NOSUCCEED : 0, w.win()),
              MPI_SUCCESS);
    for (int origin = 0; origin < size; ++origin) {
      EXPECT_EQ(mem[origin], epoch * 1000 + origin * 10 + rank)
          << "epoch " << epoch << " origin " << origin;
    }
    for (int t = 0; t < size; ++t) {
      // The get source was published by the target between epochs.
      EXPECT_EQ(got[t], epoch == 0 ? -1 : (epoch - 1) * 1000 + t * 10 + rank)
          << "epoch " << epoch << " target " << t;
    }
    // Publish this epoch's get source for the next epoch: local stores
    // between fences are ordered by the fence.
    for (int origin = 0; origin < size; ++origin) {
      mem[size + origin] = epoch * 1000 + rank * 10 + origin;
    }
    if (!last) MPI_Win_fence(0, w.win());  // separates the stores above
  }
  // After NOSUCCEED the window is free for a passive epoch; the barrier
  // orders the last local stores before the reads below.
  MPI_Barrier(MPI_COMM_WORLD);
  const int next = (rank + 1) % size;
  int got = -1;
  ASSERT_EQ(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, w.win()), MPI_SUCCESS);
  MPI_Get(&got, 1, MPI_INT, next, size + rank, 1, MPI_INT, w.win());
  ASSERT_EQ(MPI_Win_unlock(next, w.win()), MPI_SUCCESS);
  EXPECT_EQ(got, (kEpochs - 1) * 1000 + next * 10 + rank);
  MPI_Barrier(MPI_COMM_WORLD);
}

// Post-start-complete-wait around a ring of `comm`: each rank exposes its
// window to its left neighbour and accesses its right neighbour's. No
// barrier between rounds: a target refills its window (after dawdling) and
// only then posts, so an access that does not wait for the post, or a wait
// that does not wait for the complete, shows up as stale or overwritten
// data.
void PscwRing(MPI_Comm comm) {
  const int rank = Rank(comm), size = Size(comm);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  constexpr int kInts = 4;
  // [0, kInts): written by prev; [kInts, 2*kInts): read by prev.
  AllocWindow w(2 * kInts * sizeof(int), sizeof(int), MPI_INFO_NULL, comm);
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int* mem = w.base<int>();
  MPI_Group group, to_group, from_group;
  MPI_Comm_group(comm, &group);
  MPI_Group_incl(group, 1, &next, &to_group);
  MPI_Group_incl(group, 1, &prev, &from_group);
  for (int round = 0; round < 3; ++round) {
    usleep(10 * 1000);  // an early origin must wait for the post below
    for (int i = 0; i < kInts; ++i) {
      mem[i] = -1;
      mem[kInts + i] = (round * 100 + rank) * kInts + i;
    }
    ASSERT_EQ(MPI_Win_post(from_group, 0, w.win()), MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_start(to_group, 0, w.win()), MPI_SUCCESS);
    std::vector<int> data(kInts), got(kInts, -2);
    for (int i = 0; i < kInts; ++i) data[i] = (round * 100 + rank) * 7 + i;
    EXPECT_EQ(
        MPI_Put(data.data(), kInts, MPI_INT, next, 0, kInts, MPI_INT, w.win()),
        MPI_SUCCESS);
    EXPECT_EQ(MPI_Get(got.data(), kInts, MPI_INT, next, kInts, kInts, MPI_INT,
                      w.win()),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_complete(w.win()), MPI_SUCCESS);
    if (round == 1) {
      // MPI_Win_test instead of MPI_Win_wait this time.
      const bool done = PollUntil(
          [&] {
            int flag = 0;
            EXPECT_EQ(MPI_Win_test(w.win(), &flag), MPI_SUCCESS);
            return flag != 0;
          },
          kTimeoutSeconds);
      ASSERT_TRUE(done) << "MPI_Win_test never reported the exposure done";
    } else {
      ASSERT_EQ(MPI_Win_wait(w.win()), MPI_SUCCESS);
    }
    for (int i = 0; i < kInts; ++i) {
      EXPECT_EQ(mem[i], (round * 100 + prev) * 7 + i) << "round " << round;
      EXPECT_EQ(got[i], (round * 100 + next) * kInts + i) << "round " << round;
    }
  }
  MPI_Group_free(&to_group);
  MPI_Group_free(&from_group);
  MPI_Group_free(&group);
  MPI_Barrier(comm);
}

TEST(ShimSyncTest, PscwRingExchange) { PscwRing(MPI_COMM_WORLD); }

// The same on a communicator whose ranks run opposite to the world's, so
// groups must be translated to window ranks, not taken as world ranks.
TEST(ShimSyncTest, PscwRingOnAReversedCommunicator) {
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, Size() - Rank(), &reversed);
  ScopedComm comm(reversed);
  PscwRing(comm.get());
}

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
