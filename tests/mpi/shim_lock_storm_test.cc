// Bounded progress of passive-target locks under a storm: one rank needs a
// fixed number of lock epochs of one kind while every other rank keeps
// taking epochs of the conflicting kind until that rank is done (an
// MPI_Ibarrier it enters when done). MPI_Win_lock_all against a stream of
// exclusive locks on different targets, and the reverse. With unfair locks
// (lockers retrying in a loop that keeps the other kind out) the needy rank
// can starve and the watchdog ends the run. Data checks that the locks still
// exclude: an exclusive holder writes two slots of its target in two steps,
// readers under lock_all must never see them differ, and the counts add up.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::EnvInt;
using rmashim_test::HangWatchdog;
using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::Size;

// Per target: [0] and [1] the pair an exclusive holder updates in two steps,
// [2 + r] how many updates origin r made there.
constexpr int kPairA = 0, kPairB = 1, kCounts = 2;

// One exclusive epoch on `target`: bumps the pair (with a flush between its
// halves) and this origin's count there. Returns false if the pair differed
// on entry (another epoch overlapped this one).
// Streaming ranks hold each epoch this long, so their epochs overlap (a
// waiter of the other kind then finds no gap unless the locks are fair).
void Hold(bool stream) {
  static const int hold_us = EnvInt("LOCK_STORM_HOLD_US", 300);
  if (stream) std::this_thread::sleep_for(std::chrono::microseconds(hold_us));
}

bool ExclusiveUpdate(MPI_Win win, int target, int me, bool stream) {
  int pair[2] = {-1, -2}, count = 0;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
  MPI_Get(pair, 2, MPI_INT, target, kPairA, 2, MPI_INT, win);
  MPI_Get(&count, 1, MPI_INT, target, kCounts + me, 1, MPI_INT, win);
  MPI_Win_flush(target, win);
  Hold(stream);
  const int next = pair[0] + 1;
  ++count;
  MPI_Put(&next, 1, MPI_INT, target, kPairA, 1, MPI_INT, win);
  MPI_Win_flush(target, win);
  MPI_Put(&next, 1, MPI_INT, target, kPairB, 1, MPI_INT, win);
  MPI_Put(&count, 1, MPI_INT, target, kCounts + me, 1, MPI_INT, win);
  MPI_Win_unlock(target, win);
  return pair[0] == pair[1];
}

// One lock_all epoch reading every target's pair. Returns the number of
// targets whose halves differed (an exclusive epoch overlapped).
int LockAllRead(MPI_Win win, int size, bool stream) {
  std::vector<int> pairs(2 * size, 0);
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < size; ++t) {
    MPI_Get(&pairs[2 * t], 2, MPI_INT, t, kPairA, 2, MPI_INT, win);
  }
  MPI_Win_flush_all(win);
  Hold(stream);
  MPI_Win_unlock_all(win);
  int torn = 0;
  for (int t = 0; t < size; ++t) torn += pairs[2 * t] != pairs[2 * t + 1];
  return torn;
}

enum class Kind { kExclusive, kLockAll };

// One epoch of `kind`; `round` picks the exclusive target (never the same
// twice in a row when there are several: "different targets").
int Epoch(Kind kind, MPI_Win win, int round, int me, int size, int* updates) {
  const bool stream = me != 0;
  if (kind == Kind::kLockAll) return LockAllRead(win, size, stream);
  const int target = (me + 1 + round) % size;
  ++updates[target];
  return ExclusiveUpdate(win, target, me, stream) ? 0 : 1;
}

// `needy` (world rank 0) takes `rounds` epochs of `needs`; the others take
// epochs of the other kind until the needy rank is done.
void Storm(Kind needs, const char* what) {
  const int me = Rank(), size = Size();
  const int slots = kCounts + size;
  AllocWindow w(slots * sizeof(int), sizeof(int));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(w.win())) << "the shim must manage the window";
  for (int i = 0; i < slots; ++i) w.base<int>()[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  // Across (simulated) nodes the locks are MPICH's, each a round trip that
  // needs the target's progress: fewer rounds keep the run short.
  const bool one_node = rmashim_test::AllOnOneNode(MPI_COMM_WORLD);
  const int rounds = EnvInt("LOCK_STORM_ROUNDS", one_node ? 200 : 50);
  const double limit = EnvInt("LOCK_STORM_SECONDS", 60);
  std::vector<int> updates(size, 0);  // exclusive updates this rank made
  int torn = 0, epochs = 0;
  {
    HangWatchdog watchdog(limit, std::string(what) + " (starvation)");
    MPI_Request done;
    if (me == 0) {
      for (int i = 0; i < rounds; ++i, ++epochs) {
        torn += Epoch(needs, w.win(), i, me, size, updates.data());
      }
      MPI_Ibarrier(MPI_COMM_WORLD, &done);
      MPI_Wait(&done, MPI_STATUS_IGNORE);
    } else {
      const Kind other =
          needs == Kind::kLockAll ? Kind::kExclusive : Kind::kLockAll;
      MPI_Ibarrier(MPI_COMM_WORLD, &done);
      int finished = 0;
      while (!finished) {
        torn += Epoch(other, w.win(), epochs++, me, size, updates.data());
        MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(torn, 0) << "epochs overlapped an exclusive epoch";
  // Every target's counts are what the origins say they did, and its pair
  // counted every exclusive epoch on it.
  std::vector<int> total(size, 0);
  MPI_Allreduce(updates.data(), total.data(), size, MPI_INT, MPI_SUM,
                MPI_COMM_WORLD);
  std::vector<int> by_origin(size, 0);
  for (int o = 0; o < size; ++o) by_origin[o] = w.base<int>()[kCounts + o];
  std::vector<int> made_here(size, 0);  // origin o's updates on this rank
  MPI_Alltoall(updates.data(), 1, MPI_INT, made_here.data(), 1, MPI_INT,
               MPI_COMM_WORLD);
  for (int o = 0; o < size; ++o) {
    EXPECT_EQ(by_origin[o], made_here[o]) << "origin " << o << " lost updates";
  }
  EXPECT_EQ(w.base<int>()[kPairA], total[me]);
  EXPECT_EQ(w.base<int>()[kPairB], total[me]);
  if (me == 0) {
    std::printf("%s: %d epochs on rank 0, %d exclusive updates in all\n", what,
                epochs, [&] {
                  int s = 0;
                  for (int t : total) s += t;
                  return s;
                }());
  }
}

TEST(ShimLockStormTest, LockAllAmidExclusiveStream) {
  Storm(Kind::kLockAll, "lock_all amid exclusive locks");
}

TEST(ShimLockStormTest, ExclusiveAmidLockAllStream) {
  Storm(Kind::kExclusive, "exclusive locks amid lock_all");
}

}  // namespace
