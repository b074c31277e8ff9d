// Active-target epochs on managed windows beyond the halo exchanges: a
// NOPRECEDE|NOSUCCEED fence between epochs, MPI_Win_test polling, the truly
// one-sided PSCW of single-node windows (the target spins on its own memory
// without calling MPI while origins access it), and an all-to-all PSCW
// epoch that includes every rank itself.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/mpi/shim_active_target_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::active_target {
namespace {

constexpr double kTimeoutSeconds = 5.0;

// A fence with NOPRECEDE and NOSUCCEED together orders nothing; puts in the
// epochs around it still land.
TEST(FenceTest, NoPrecedeNoSucceedFenceBetweenEpochs) {
  const int rank = Rank(), size = Size();
  AllocWindow w(size * sizeof(int), sizeof(int));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int* mem = w.base<int>();
  std::fill(mem, mem + size, -1);
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win()), MPI_SUCCESS);
    for (int t = 0; t < size; ++t) {
      const int v = round * 1000 + rank * 10 + t;
      EXPECT_EQ(MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, w.win()),
                MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE, w.win()),
              MPI_SUCCESS);
    for (int o = 0; o < size; ++o) {
      EXPECT_EQ(mem[o], round * 1000 + o * 10 + rank) << "round " << round;
    }
    // An epoch with nothing before or after it.
    ASSERT_EQ(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, w.win()),
              MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);  // all checked before the next round's puts
  }
}

// MPI_Win_test reports false while an origin has not completed and true
// once it has; polling it is a full substitute for MPI_Win_wait.
TEST(PscwTest, WinTestPollsUntilOriginCompletes) {
  const int rank = Rank(), size = Size();
  const int origin = (rank + size - 1) % size, target = (rank + 1) % size;
  AllocWindow w(2 * sizeof(int64_t), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int64_t* mem = w.base<int64_t>();
  mem[0] = mem[1] = -1;
  Group from(MPI_COMM_WORLD, {origin}), to(MPI_COMM_WORLD, {target});
  MPI_Barrier(MPI_COMM_WORLD);
  const int rounds = Iterations(20, 6);
  for (int round = 0; round < rounds; ++round) {
    ASSERT_EQ(MPI_Win_post(from.get(), 0, w.win()), MPI_SUCCESS);
    int flag = -1;
    // The origin starts only after our go-ahead, so it cannot be done yet.
    ASSERT_EQ(MPI_Win_test(w.win(), &flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 0) << "round " << round;
    const int go = round;
    MPI_Request sent;
    MPI_Isend(&go, 1, MPI_INT, origin, 7, MPI_COMM_WORLD, &sent);
    int got_go = -1;
    MPI_Recv(&got_go, 1, MPI_INT, target, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_EQ(got_go, round);
    ASSERT_EQ(MPI_Win_start(to.get(), 0, w.win()), MPI_SUCCESS);
    const int64_t stamp[2] = {int64_t{round} * 100 + rank, -int64_t{round}};
    EXPECT_EQ(
        MPI_Put(stamp, 2, MPI_INT64_T, target, 0, 2, MPI_INT64_T, w.win()),
        MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_complete(w.win()), MPI_SUCCESS);
    MPI_Wait(&sent, MPI_STATUS_IGNORE);
    const bool done = PollUntil(
        [&] {
          flag = 0;
          EXPECT_EQ(MPI_Win_test(w.win(), &flag), MPI_SUCCESS);
          return flag != 0;
        },
        kTimeoutSeconds);
    ASSERT_TRUE(done) << "MPI_Win_test never reported completion";
    EXPECT_EQ(mem[0], int64_t{round} * 100 + origin) << "round " << round;
    EXPECT_EQ(mem[1], -int64_t{round}) << "round " << round;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Truly one-sided PSCW on a single-node window: node rank 0 posts, then
// spins on its own memory without calling MPI until every origin's puts
// and accumulates of the epoch have landed; only then does it call
// MPI_Win_wait. Native MPICH may need the target inside MPI to progress,
// so only a managed window is held to it.
TEST(PscwTest, TargetNeedsNoMpiCallsOnSingleNodeWindow) {
  ScopedComm node(rmashim_test::SplitNodeComm());
  const int node_rank = Rank(node.get()), node_size = Size(node.get());
  // Cells: 0 accumulated sum; 1..node_size one put slot per origin.
  AllocWindow w((1 + node_size) * sizeof(int64_t), sizeof(int64_t),
                MPI_INFO_NULL, node.get());
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  const bool managed = IsManaged(w.win());
  EXPECT_TRUE(managed);
  volatile int64_t* mem = w.base<int64_t>();
  for (int i = 0; i <= node_size; ++i) mem[i] = 0;
  std::vector<int> others;
  for (int r = 1; r < node_size; ++r) others.push_back(r);
  if (others.empty()) others.push_back(0);  // alone: target of itself
  Group origins(node.get(), others), home(node.get(), {0});
  MPI_Barrier(node.get());
  constexpr int kRounds = 4;
  for (int round = 1; round <= kRounds; ++round) {
    const bool is_origin = node_rank != 0 || node_size == 1;
    auto access = [&] {
      if (node_rank != 0) usleep(5 * 1000);  // let the target settle
      ASSERT_EQ(MPI_Win_start(home.get(), 0, w.win()), MPI_SUCCESS);
      const int64_t stamp = int64_t{round} * 1000 + node_rank, one = round;
      EXPECT_EQ(MPI_Put(&stamp, 1, MPI_INT64_T, 0, 1 + node_rank, 1,
                        MPI_INT64_T, w.win()),
                MPI_SUCCESS);
      EXPECT_EQ(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T,
                               MPI_SUM, w.win()),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Win_complete(w.win()), MPI_SUCCESS);
    };
    if (node_rank == 0) {
      ASSERT_EQ(MPI_Win_post(origins.get(), 0, w.win()), MPI_SUCCESS);
      if (node_size == 1) access();
      const int writers = static_cast<int>(others.size());
      // Cumulative sum of `round` over the writers of every round so far.
      const int64_t want_sum = int64_t{writers} * round * (round + 1) / 2;
      if (managed) {
        const bool landed = PollUntil(
            [&] {
              if (mem[0] != want_sum) return false;
              for (int r : others) {
                if (mem[1 + r] != int64_t{round} * 1000 + r) return false;
              }
              return true;
            },
            kTimeoutSeconds);
        EXPECT_TRUE(landed)
            << "round " << round << ": sum " << mem[0] << " of " << want_sum;
      }
      ASSERT_EQ(MPI_Win_wait(w.win()), MPI_SUCCESS);
      EXPECT_EQ(mem[0], want_sum);
      for (int r : others) EXPECT_EQ(mem[1 + r], int64_t{round} * 1000 + r);
    } else if (is_origin) {
      access();
    }
  }
  MPI_Barrier(node.get());
}

// PSCW where every rank exposes to and accesses every rank, including
// itself, with gets, puts and accumulates in one epoch. Who moves what: every
// put and get to a target whose memory is mapped here is the shim's, on a
// window spanning nodes too (there between MPI's start and complete), the
// others MPI's; accumulates are the shim's on a single-node window and MPI's on
// one spanning nodes.
TEST(PscwTest, AllToAllEpochWithSelf) {
  const int rank = Rank(), size = Size();
  // Cells: 0 accumulated sum, 1..size put slot per origin.
  AllocWindow w((1 + size) * sizeof(int64_t), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(w.win()));
  int mapped = 0;
  for (int t = 0; t < size; ++t) mapped += IsMapped(w.win(), t);
  EXPECT_TRUE(IsMapped(w.win(), rank));
  const long long unmapped = size - mapped;
  // On a window spanning nodes the accumulates go to MPI, unless the
  // agents apply them (shim/agent/agent.h: MPI's PSCW with counted
  // completes).
  const long long accumulates_to_mpi =
      unmapped > 0 && !AgentRunning() ? size : 0;
  int64_t* mem = w.base<int64_t>();
  std::vector<int> all(size);
  for (int r = 0; r < size; ++r) all[r] = r;
  Group everyone(MPI_COMM_WORLD, all);
  for (int round = 0; round < 3; ++round) {
    mem[0] = 0;
    for (int o = 0; o < size; ++o) mem[1 + o] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    ASSERT_EQ(MPI_Win_post(everyone.get(), 0, w.win()), MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_start(everyone.get(), 0, w.win()), MPI_SUCCESS);
    const long long before_puts = PassedToMpi(w.win());
    std::vector<int64_t> stamps(size);
    for (int t = 0; t < size; ++t) {
      stamps[t] = round * 10000 + rank * 100 + t;
      const int64_t add = rank + 1;
      EXPECT_EQ(MPI_Put(&stamps[t], 1, MPI_INT64_T, t, 1 + rank, 1, MPI_INT64_T,
                        w.win()),
                MPI_SUCCESS);
      EXPECT_EQ(MPI_Accumulate(&add, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T,
                               MPI_SUM, w.win()),
                MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Win_complete(w.win()), MPI_SUCCESS);
    EXPECT_EQ(PassedToMpi(w.win()) - before_puts, unmapped + accumulates_to_mpi)
        << "round " << round << ": " << mapped << " of " << size
        << " targets mapped";
    ASSERT_EQ(MPI_Win_wait(w.win()), MPI_SUCCESS);
    EXPECT_EQ(mem[0], int64_t{size} * (size + 1) / 2) << "round " << round;
    for (int o = 0; o < size; ++o) {
      EXPECT_EQ(mem[1 + o], round * 10000 + o * 100 + rank)
          << "round " << round << " origin " << o;
    }
    // Read everything back with gets in a second epoch.
    MPI_Barrier(MPI_COMM_WORLD);
    ASSERT_EQ(MPI_Win_post(everyone.get(), MPI_MODE_NOPUT, w.win()),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_start(everyone.get(), 0, w.win()), MPI_SUCCESS);
    const long long before_gets = PassedToMpi(w.win());
    std::vector<int64_t> back(size, -2);
    // A derived target type: the full checks (Admit), not the inline path.
    MPI_Datatype one_word;
    MPI_Type_contiguous(1, MPI_INT64_T, &one_word);
    MPI_Type_commit(&one_word);
    for (int t = 0; t < size; ++t) {
      EXPECT_EQ(
          MPI_Get(&back[t], 1, MPI_INT64_T, t, 1 + rank, 1, one_word, w.win()),
          MPI_SUCCESS);
    }
    MPI_Type_free(&one_word);
    ASSERT_EQ(MPI_Win_complete(w.win()), MPI_SUCCESS);
    EXPECT_EQ(PassedToMpi(w.win()) - before_gets, unmapped)
        << "round " << round;
    ASSERT_EQ(MPI_Win_wait(w.win()), MPI_SUCCESS);
    EXPECT_EQ(back, stamps) << "round " << round;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace rmashim_test::active_target
