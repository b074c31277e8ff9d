// An agent that takes its first requests late: the target's agent thread
// is held off its work (rmashim_agent_hold) while every remote origin
// reaches it for the first time with a lock, an accumulate and an unlock,
// so their first messages (and the transport's own connection set-up,
// shim/agent/ucx_transport.cc) wait on a process that serves nothing. When
// the thread is released, the origins' calls succeed, having waited for
// it, the target's sum and its agent's counts (applied, locks granted) are
// right, and a fence epoch of accumulates afterwards ends without an
// error: a link taken for lost would make the target's epoch ends report
// MPI_ERR_OTHER for good (docs/how-it-works.md, "Lost links").
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

// Long beside a round trip, so the origins' first calls surely meet the
// held thread.
constexpr double kHoldS = 2.0;
constexpr double kWatchdogSeconds = 60;

TEST(AgentLateAgentTest, FirstRequestsWaitForAHeldAgentAndSucceed) {
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
    // The scenario happened: the calls waited for the held agent.
    EXPECT_GE(MPI_Wtime() - t0, kHoldS / 2);
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
