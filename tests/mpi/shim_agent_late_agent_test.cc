// An agent that answers a link's hello late: the origin gives the attempt up
// after its answer wait, sends the given-up connection the goodbye frame and
// connects again (ConnectAgent, shim/agent/agent_link.h). The target's agent
// thread is held off its work (rmashim_agent_hold) for longer than one
// attempt's answer wait while every remote origin opens its first link to
// it with a lock, an accumulate and an unlock. When the thread is released
// it takes both connections: the given-up one must end as closed, not as a
// lost link, and the later one carries the requests. So the origins' calls
// succeed, after more than one attempt's wait, the target's sum and its
// agent's counts (applied, locks granted) are right, and a fence epoch of
// accumulates afterwards ends without an error: a link taken for lost would
// make the target's epoch ends report MPI_ERR_OTHER for good
// (docs/how-it-works.md, "Lost links").
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AgentLocksGranted;
using rmashim_test::HangWatchdog;
using rmashim_test::HoldAgent;
using rmashim_test::NodeLocalRanks;
using rmashim_test::Rank;
using rmashim_test::ReadAgentStats;
using rmashim_test::Size;

// One connection attempt waits 5 s for the agent's answer
// (shim/agent/agent_link.cc: kConnectTimeoutMs); the hold outlasts it, so
// every origin's first attempt is given up.
constexpr double kAnswerWaitS = 5.0;
constexpr double kHoldS = 7.0;
constexpr double kWatchdogSeconds = 60;

TEST(AgentLateAgentTest, GivenUpConnectionEndsClosedAndTheNextCarriesTheCall) {
  ASSERT_TRUE(ReadAgentStats().running) << "RMASHIM_AGENT=1 on a split";
  const std::vector<bool> local = NodeLocalRanks();
  // The origins: the ranks on other nodes than rank 0 (this rank's view of
  // rank 0's node is what NodeLocalRanks gives on rank 0).
  std::vector<int> flags(Size());
  if (Rank() == 0) {
    for (int r = 0; r < Size(); ++r) flags[r] = local[r] ? 0 : 1;
  }
  MPI_Bcast(flags.data(), Size(), MPI_INT, 0, MPI_COMM_WORLD);
  int origins = 0;
  int64_t want = 0;
  for (int r = 0; r < Size(); ++r) {
    origins += flags[r];
    if (flags[r]) want += r + 1;
  }
  ASSERT_GT(origins, 0) << "needs ranks on two nodes";
  const bool origin = flags[Rank()] != 0;

  int64_t* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &base, &win),
            MPI_SUCCESS);
  ASSERT_MANAGED(win);
  // A lost link's error is returned to be asserted on, not fatal.
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  *base = 0;
  HangWatchdog watchdog(kWatchdogSeconds, "links opened to a late agent");
  const long long applied_before = ReadAgentStats().applied;
  const long long granted_before = AgentLocksGranted();
  if (Rank() == 0) {
    ASSERT_EQ(HoldAgent(true), MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0's thread held before any link

  const int64_t mine = Rank() + 1;
  if (Rank() == 0) {  // outside MPI while held, as a computing target is
    std::this_thread::sleep_for(std::chrono::duration<double>(kHoldS));
    ASSERT_EQ(HoldAgent(false), MPI_SUCCESS);
  } else if (origin) {
    const double t0 = MPI_Wtime();
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_SUCCESS);
    ASSERT_EQ(MPI_Accumulate(&mine, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T,
                             MPI_SUM, win),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_unlock(0, win), MPI_SUCCESS);
    // The scenario happened: the first attempt's answer wait ran out.
    EXPECT_GE(MPI_Wtime() - t0, kAnswerWaitS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == 0) {
    EXPECT_EQ(*base, want);
    EXPECT_GE(ReadAgentStats().applied - applied_before, origins);
    EXPECT_GE(AgentLocksGranted() - granted_before, origins);
  }

  // A fence epoch over the same links: each origin adds again.
  EXPECT_EQ(MPI_Win_fence(0, win), MPI_SUCCESS);  // every rank goes on
  if (origin) {
    ASSERT_EQ(MPI_Accumulate(&mine, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T,
                             MPI_SUM, win),
              MPI_SUCCESS);
  }
  EXPECT_EQ(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), MPI_SUCCESS);
  if (Rank() == 0) {
    EXPECT_EQ(*base, 2 * want);
  }
  MPI_Win_free(&win);
}

}  // namespace
