// Active-target synchronization on managed windows: fence epochs move data
// with and without the NOPRECEDE/NOSUCCEED assertions, and PSCW around a
// ring, on the world and on a communicator whose ranks run opposite to it.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "tests/mpi/shim_sync_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::sync {
namespace {

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

}  // namespace
}  // namespace rmashim_test::sync
