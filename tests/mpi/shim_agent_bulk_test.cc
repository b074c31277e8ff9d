// Bulk accumulates through the agent (shim/agent/agent.h) on a window
// spanning nodes: a contiguous MPI_Accumulate and MPI_Get_accumulate of 24
// MiB of doubles and a strided MPI_Accumulate of 2 Mi one-element runs (32
// MiB of run descriptions) to the next rank, in a lock_all epoch. Calls
// larger than one request's 16 MiB go to the target's agent as several
// requests (agent_origin.cc's AgentUpdate): every element must arrive once,
// the fetched values must be the target's before the call, none of it goes
// to MPI, and the agents must have applied more requests than there were
// calls to remote targets.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllOnOneNode;
using rmashim_test::NodeLocalRanks;
using rmashim_test::PassedToMpi;
using rmashim_test::Rank;
using rmashim_test::ReadAgentStats;
using rmashim_test::Size;

constexpr MPI_Aint kContiguous = MPI_Aint{3} << 20;  // doubles: 24 MiB
constexpr int kStrided = 2 << 20;                    // one-element runs

// Exact in double: integers below 2^40.
double Base(int rank, MPI_Aint i) { return double(rank) * 1e9 + double(i); }
double Added(int from, MPI_Aint i) {
  return double(from + 1) * 3 + double(i % 1000);
}

TEST(AgentBulk, LargeAccumulatesArriveWhole) {
  // Run on the splits with RMASHIM_AGENT=1 (tests/mpi/BUILD): the agent
  // must be running there.
  ASSERT_FALSE(AllOnOneNode(MPI_COMM_WORLD)) << "needs a window spanning nodes";
  ASSERT_TRUE(ReadAgentStats().running) << "the agent is not running";
  const int right = (Rank() + 1) % Size();
  const int left = (Rank() + Size() - 1) % Size();
  const MPI_Aint doubles = kContiguous + 2 * MPI_Aint{kStrided};
  double* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_SUCCESS, MPI_Win_allocate(doubles * 8, 8, MPI_INFO_NULL,
                                          MPI_COMM_WORLD, &base, &win));
  for (MPI_Aint i = 0; i < doubles; ++i) base[i] = Base(Rank(), i);
  std::vector<double> origin(kContiguous), fetched(kContiguous, -1.0);
  for (MPI_Aint i = 0; i < kContiguous; ++i) origin[i] = Added(Rank(), i);
  MPI_Datatype every_other;  // kStrided doubles, one of every two
  MPI_Type_vector(kStrided, 1, 2, MPI_DOUBLE, &every_other);
  MPI_Type_commit(&every_other);
  const long long applied_before = ReadAgentStats().applied;
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Win_lock_all(0, win);
  ASSERT_EQ(MPI_SUCCESS,
            MPI_Accumulate(origin.data(), kContiguous, MPI_DOUBLE, right, 0,
                           kContiguous, MPI_DOUBLE, MPI_SUM, win));
  ASSERT_EQ(MPI_SUCCESS,
            MPI_Get_accumulate(origin.data(), kContiguous, MPI_DOUBLE,
                               fetched.data(), kContiguous, MPI_DOUBLE, right,
                               0, kContiguous, MPI_DOUBLE, MPI_SUM, win));
  ASSERT_EQ(MPI_SUCCESS,
            MPI_Accumulate(origin.data(), kStrided, MPI_DOUBLE, right,
                           kContiguous, 1, every_other, MPI_SUM, win));
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  // The fetched values: the right neighbour's memory after the first call.
  MPI_Aint wrong_fetched = 0;
  for (MPI_Aint i = 0; i < kContiguous; ++i) {
    wrong_fetched += fetched[i] != Base(right, i) + Added(Rank(), i);
  }
  EXPECT_EQ(0, wrong_fetched);
  // This rank's memory: the left neighbour's origin added twice to the
  // contiguous part, once to every other double of the strided part.
  MPI_Aint wrong = 0;
  for (MPI_Aint i = 0; i < kContiguous; ++i) {
    wrong += base[i] != Base(Rank(), i) + 2 * Added(left, i);
  }
  for (MPI_Aint k = 0; k < 2 * MPI_Aint{kStrided}; ++k) {
    const MPI_Aint i = kContiguous + k;
    const double expected =
        Base(Rank(), i) + (k % 2 == 0 ? Added(left, k / 2) : 0.0);
    wrong += base[i] != expected;
  }
  EXPECT_EQ(0, wrong);

  // Served: nothing went to MPI, and the remote targets' agents applied
  // the three calls each in more requests than calls.
  EXPECT_EQ(0, PassedToMpi(win));
  const int remote_origin = NodeLocalRanks()[right] ? 0 : 1;
  long long sums[2] = {ReadAgentStats().applied - applied_before,
                       remote_origin};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  ASSERT_GT(sums[1], 0) << "no rank had a remote right neighbour";
  EXPECT_GT(sums[0], 3 * sums[1])
      << "the agents applied " << sums[0] << " requests for " << 3 * sums[1]
      << " remote calls: larger calls were not split";
  MPI_Type_free(&every_other);
  MPI_Win_free(&win);
}

}  // namespace
