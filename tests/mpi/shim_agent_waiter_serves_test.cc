// Fence and PSCW ends serve what arrived for their own agent themselves
// (ServeArrived, shim/agent/agent_state.h): with every process's agent
// thread held off its work (rmashim_agent_hold), an epoch of accumulates
// from every rank to every rank still ends, in a fence and in MPI's PSCW
// (completed by MPI_Win_wait and by polling MPI_Win_test), with every sum
// right, and each agent's applied count grows by the remote updates sent
// to it: the waiting ranks applied them. The origins send their updates
// before the count exchange (the fence's collective, the complete's count
// messages), and within a host UCX's shared memory puts a small message
// in the target's queue within the send, so the first pass of a wait finds
// them, oversubscribed or not; a hold returns only once the thread is out
// of its pass (rmashim_agent_hold), which would keep the waiter from
// serving. The links are opened in a first epoch with the threads
// running: a first message to a peer waits for UCX's wire-up, which needs
// the target's worker progressed.
// An origin's own waits serve too (agent_requests.h: ReceiveStandingIn):
// with only the agent threads held, ranks on different nodes fetch from
// each other at once, each waiting for its answer while the other's
// request waits for it, and every fetch and flush completes, applied by
// the waiting origins.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::HangWatchdog;
using rmashim_test::HoldAgent;
using rmashim_test::HoldAgentThreadOnly;
using rmashim_test::NodeLocalRanks;
using rmashim_test::Rank;
using rmashim_test::ReadAgentStats;
using rmashim_test::Size;

constexpr double kWatchdogSeconds = 60;
constexpr int kAdds = 5;  // per origin and target, each epoch

enum class End { kFence, kPscwWait, kPscwTest };

// One epoch in which every rank adds kAdds times (rank + 1) to word 0 of
// every rank, ended as `end` says (a fence epoch opens with a fence and
// closes with MPI_MODE_NOSUCCEED, so a PSCW epoch may follow).
void AccumulateEpoch(MPI_Win win, MPI_Group world, End end) {
  const int size = Size();
  if (end == End::kFence) {
    ASSERT_EQ(MPI_Win_fence(0, win), MPI_SUCCESS);
  } else {
    ASSERT_EQ(MPI_Win_post(world, 0, win), MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_start(world, 0, win), MPI_SUCCESS);
  }
  const int64_t mine = Rank() + 1;
  for (int target = 0; target < size; ++target) {
    for (int k = 0; k < kAdds; ++k) {
      ASSERT_EQ(MPI_Accumulate(&mine, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T,
                               MPI_SUM, win),
                MPI_SUCCESS);
    }
  }
  if (end == End::kFence) {
    ASSERT_EQ(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), MPI_SUCCESS);
    return;
  }
  ASSERT_EQ(MPI_Win_complete(win), MPI_SUCCESS);
  if (end == End::kPscwWait) {
    ASSERT_EQ(MPI_Win_wait(win), MPI_SUCCESS);
    return;
  }
  int done = 0;
  while (!done) ASSERT_EQ(MPI_Win_test(win, &done), MPI_SUCCESS);
}

// The ranks on other nodes than this one (`local`: NodeLocalRanks).
int RemoteRanks(const std::vector<bool>& local) {
  int remote = 0;
  for (const bool on_this_node : local) remote += on_this_node ? 0 : 1;
  return remote;
}

TEST(AgentWaiterServesTest, EpochEndsServeWhileTheAgentThreadIsHeld) {
  ASSERT_TRUE(ReadAgentStats().running) << "RMASHIM_AGENT=1 on a split";
  const std::vector<bool> local = NodeLocalRanks();
  const int remote_origins = RemoteRanks(local);  // their updates come here
  ASSERT_GT(remote_origins, 0) << "needs ranks on two nodes";

  int64_t* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &base, &win),
            MPI_SUCCESS);
  ASSERT_MANAGED(win);
  *base = 0;
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  HangWatchdog watchdog(kWatchdogSeconds,
                        "epoch ends with the agent threads held");
  MPI_Barrier(MPI_COMM_WORLD);  // every word 0 before any update

  // The links open with the threads running.
  AccumulateEpoch(win, world, End::kFence);
  int64_t sum_of_ranks = 0;  // what one add from every rank comes to
  for (int r = 0; r < Size(); ++r) sum_of_ranks += r + 1;
  int64_t want = kAdds * sum_of_ranks;
  ASSERT_EQ(*base, want);

  for (const End end : {End::kFence, End::kPscwWait, End::kPscwTest}) {
    SCOPED_TRACE(end == End::kFence      ? "fence"
                 : end == End::kPscwWait ? "PSCW, MPI_Win_wait"
                                         : "PSCW, MPI_Win_test");
    ASSERT_EQ(HoldAgent(true), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);  // every thread held before any update
    const long long applied_before = ReadAgentStats().applied;
    AccumulateEpoch(win, world, end);
    const long long applied = ReadAgentStats().applied - applied_before;
    MPI_Barrier(MPI_COMM_WORLD);  // no thread released before every end
    ASSERT_EQ(HoldAgent(false), MPI_SUCCESS);
    want += kAdds * sum_of_ranks;
    EXPECT_EQ(*base, want);
    // Every remote origin's updates applied here, at least one request
    // from each, while this process's thread was held.
    EXPECT_GE(applied, remote_origins);
  }
  MPI_Group_free(&world);
  MPI_Win_free(&win);
}

TEST(AgentWaiterServesTest, OriginsWaitingForTheirFetchesServeEachOther) {
  ASSERT_TRUE(ReadAgentStats().running) << "RMASHIM_AGENT=1 on a split";
  const std::vector<bool> local = NodeLocalRanks();
  const int remote_origins = RemoteRanks(local);
  ASSERT_GT(remote_origins, 0) << "needs ranks on two nodes";
  int64_t* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &base, &win),
            MPI_SUCCESS);
  ASSERT_MANAGED(win);
  *base = 0;
  HangWatchdog watchdog(kWatchdogSeconds,
                        "fetches between nodes with the agent threads held");
  MPI_Barrier(MPI_COMM_WORLD);
  ASSERT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
  const int64_t one = 1;
  std::vector<int64_t> last(Size(), -1);  // the last value fetched from each
  // Every remote target once with the threads running (endpoints open),
  // then kFetches rounds with them held.
  constexpr int kFetches = 200;
  long long applied_before = 0;
  for (int round = 0; round <= kFetches; ++round) {
    if (round == 1) {
      ASSERT_EQ(HoldAgentThreadOnly(), MPI_SUCCESS);
      // Read before the barrier: no origin's round 1 comes here before it.
      applied_before = ReadAgentStats().applied;
      MPI_Barrier(MPI_COMM_WORLD);  // every thread held before round 1
    }
    for (int target = 0; target < Size(); ++target) {
      if (local[target]) continue;
      int64_t old = -1;
      ASSERT_EQ(
          MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, 0, MPI_SUM, win),
          MPI_SUCCESS);
      ASSERT_EQ(MPI_Win_flush(target, win), MPI_SUCCESS);
      // This origin's own earlier add is in every later answer.
      ASSERT_GT(old, last[target])
          << "target " << target << ", round " << round;
      last[target] = old;
    }
  }
  // Every origin's fetches answered (applied here) before it enters the
  // barrier, which serves those still arriving; no thread released before.
  MPI_Barrier(MPI_COMM_WORLD);
  const long long applied = ReadAgentStats().applied - applied_before;
  ASSERT_EQ(HoldAgent(false), MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(*base, int64_t{kFetches + 1} * remote_origins);
  // Every remote origin's fetches of the held rounds applied here, by this
  // process's waiting calls.
  EXPECT_GE(applied, int64_t{kFetches} * remote_origins);
  MPI_Win_free(&win);
}

}  // namespace
