// Large puts that must not be lost: every rank puts a 1 MiB block to every
// rank of a window, round after round, completes them with each
// synchronization that completes operations (flush_all, flush_local_all,
// fence, PSCW's complete, and lock_all with a flush per target), overwrites
// its origin buffers at once, and after a barrier every rank checks every
// block it received, byte for byte.
//
// On windows that span (simulated) nodes the remote puts are MPICH's, and
// MPICH 4.0.2 over UCX 1.13 completes flush_all, flush_local_all and fence
// with a UCX worker flush that can return while a large put's fragments
// still wait to be sent (shim/sync/mpi_flush.h): natively some blocks then
// arrive after the barrier, or carry the overwritten origin data, a few rounds
// in a hundred on oversubscribed ranks. The shim completes what it passes to
// MPI target by target and must lose nothing. Under the shim the window must be
// managed (EXPECT_MANAGED); node-local puts are the shim's own copies.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::HangWatchdog;
using rmashim_test::Rank;
using rmashim_test::Size;

constexpr size_t kBlockInts = 256 << 10;  // 1 MiB per origin and target

// Rounds per synchronization kind: RMASHIM_LOST_PUT_ROUNDS, else 40.
int Rounds() {
  const char* env = std::getenv("RMASHIM_LOST_PUT_ROUNDS");
  return env != nullptr ? std::atoi(env) : 40;
}

// The value `from` puts at element `i` of its block in `to`, in `round`.
int32_t Value(int from, int to, size_t i, int round) {
  return static_cast<int32_t>((from * 1000003 + to * 7919 + round * 104729) ^
                              static_cast<int32_t>(i));
}

// What a synchronization kind does around one round of puts.
struct Sync {
  std::function<void(MPI_Win)> open;    // before the rounds
  std::function<void(MPI_Win)> begin;   // before a round's puts
  std::function<void(MPI_Win)> finish;  // completes them (origin buffers free)
  std::function<void(MPI_Win)> remote;  // then makes them visible at targets
  std::function<void(MPI_Win)> close;   // after the rounds
};

void Nothing(MPI_Win) {}

// Runs the rounds; returns the number of blocks found wrong on this rank.
int RunRounds(const Sync& sync) {
  const int me = Rank(), size = Size();
  AllocWindow window(static_cast<MPI_Aint>(kBlockInts * 4 * size), 4);
  EXPECT_EQ(MPI_SUCCESS, window.rc());
  EXPECT_MANAGED(window.win());
  int32_t* mine = window.base<int32_t>();
  std::vector<std::vector<int32_t>> origin(size,
                                           std::vector<int32_t>(kBlockInts));
  int wrong = 0;
  sync.open(window.win());
  for (int round = 0; round < Rounds(); ++round) {
    std::memset(mine, 0, kBlockInts * 4 * size);
    MPI_Barrier(MPI_COMM_WORLD);
    sync.begin(window.win());
    for (int to = 0; to < size; ++to) {
      for (size_t i = 0; i < kBlockInts; ++i) {
        origin[to][i] = Value(me, to, i, round);
      }
      EXPECT_EQ(MPI_SUCCESS, MPI_Put(origin[to].data(), kBlockInts, MPI_INT, to,
                                     static_cast<MPI_Aint>(kBlockInts * me),
                                     kBlockInts, MPI_INT, window.win()));
    }
    sync.finish(window.win());
    // The origin buffers are the program's again: a put still reading them
    // would deliver this.
    for (auto& block : origin) std::fill(block.begin(), block.end(), -1);
    sync.remote(window.win());
    MPI_Barrier(MPI_COMM_WORLD);
    for (int from = 0; from < size; ++from) {
      const int32_t* got = mine + kBlockInts * from;
      for (size_t i = 0; i < kBlockInts; ++i) {
        if (got[i] != Value(from, me, i, round)) {
          ADD_FAILURE() << "round " << round << ": block from rank " << from
                        << " wrong at element " << i << " of " << kBlockInts
                        << " (" << got[i] << ")";
          ++wrong;
          break;
        }
      }
    }
  }
  sync.close(window.win());
  return wrong;
}

void LockAll(MPI_Win win) { EXPECT_EQ(MPI_SUCCESS, MPI_Win_lock_all(0, win)); }
void UnlockAll(MPI_Win win) { EXPECT_EQ(MPI_SUCCESS, MPI_Win_unlock_all(win)); }
void FlushAll(MPI_Win win) { EXPECT_EQ(MPI_SUCCESS, MPI_Win_flush_all(win)); }
void Fence(MPI_Win win) { EXPECT_EQ(MPI_SUCCESS, MPI_Win_fence(0, win)); }

// Every test runs under a watchdog: a lost fragment may also hang MPI.
class LostPut : public testing::Test {
 protected:
  HangWatchdog watchdog_{150.0, "lost_put_test"};
};

TEST_F(LostPut, FlushAll) {
  EXPECT_EQ(0, RunRounds({LockAll, Nothing, FlushAll, Nothing, UnlockAll}));
}

TEST_F(LostPut, FlushLocalAllThenFlushAll) {
  EXPECT_EQ(0, RunRounds({LockAll, Nothing,
                          [](MPI_Win win) {
                            EXPECT_EQ(MPI_SUCCESS,
                                      MPI_Win_flush_local_all(win));
                          },
                          FlushAll, UnlockAll}));
}

TEST_F(LostPut, FlushEachTarget) {
  EXPECT_EQ(0, RunRounds({LockAll, Nothing,
                          [](MPI_Win win) {
                            for (int t = 0; t < Size(); ++t) {
                              EXPECT_EQ(MPI_SUCCESS, MPI_Win_flush(t, win));
                            }
                          },
                          Nothing, UnlockAll}));
}

TEST_F(LostPut, UnlockAll) {
  EXPECT_EQ(0, RunRounds({Nothing, LockAll, UnlockAll, Nothing, Nothing}));
}

TEST_F(LostPut, Fence) {
  EXPECT_EQ(0, RunRounds({Fence, Nothing, Fence, Nothing, [](MPI_Win win) {
                            EXPECT_EQ(MPI_SUCCESS,
                                      MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
                          }}));
}

// Every rank exposes to and accesses every rank.
TEST_F(LostPut, PostStartCompleteWait) {
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  EXPECT_EQ(
      0,
      RunRounds(
          {Nothing,
           [&](MPI_Win win) {
             EXPECT_EQ(MPI_SUCCESS, MPI_Win_post(world, 0, win));
             EXPECT_EQ(MPI_SUCCESS, MPI_Win_start(world, 0, win));
           },
           [](MPI_Win win) { EXPECT_EQ(MPI_SUCCESS, MPI_Win_complete(win)); },
           [](MPI_Win win) { EXPECT_EQ(MPI_SUCCESS, MPI_Win_wait(win)); },
           Nothing}));
  MPI_Group_free(&world);
}

}  // namespace
