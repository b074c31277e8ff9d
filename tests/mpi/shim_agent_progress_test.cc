// The agent's progress for remote origins (shim/agent/agent.h): a remote
// origin's accumulates, puts and gets, and its exclusive, shared and
// lock_all epochs complete while the target computes without calling MPI
// (MPI's own path waits for the target to enter MPI). Registered for the
// split layouts only; the fixture is in shim_agent_test.h, and its
// instantiation for both window flavors in shim_agent_test.cc.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tests/mpi/shim_agent_test.h"

namespace rmashim_agent_test {
namespace {

// A remote origin opens a lock_all epoch (MPI_MODE_NOCHECK: MPI's lock
// protocol, which needs the target to call MPI, is not involved), adds to
// two of rank 0's counters (fetch_and_op, accumulate) and ends the epoch,
// while rank 0 computes, watching its own memory with plain loads, without
// calling MPI: the agent applies the updates and answers the flush.
TEST_P(AgentTest, RemoteOriginProgressesWhileTargetComputes) {
  ASSERT_TRUE(spans_nodes_) << "registered for the split layouts only";
  const int rank = Rank();
  const int origin = FirstRemoteRank();
  ASSERT_GE(origin, 0);
  Reset();
  HangWatchdog watchdog(120, "remote origin against a computing target");
  if (rank == 0) {
    EXPECT_TRUE(ComputeUntilCounted(1))
        << "the remote origin's updates did not arrive while the target "
           "computed";
  } else if (rank == origin) {
    const int64_t one = 1;
    int64_t old = -1;
    ASSERT_EQ(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), MPI_SUCCESS);
    ASSERT_EQ(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0,
                               offsetof(Counters, tickets), MPI_SUM, win_),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, offsetof(Counters, added),
                             1, MPI_INT64_T, MPI_SUM, win_),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_unlock_all(win_), MPI_SUCCESS);
    EXPECT_EQ(old, 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A remote origin's gets and puts, in an exclusive lock epoch and a
// lock_all epoch, complete while rank 0 computes without calling MPI: in
// passive epochs contiguous ones are RMA of the agents' transport
// (shim/agent/agent_rma.cc: one-sided, or progressed by the target's agent
// where UCX emulates RMA), and none goes to MPI nor to the agent as a
// request.
TEST_P(AgentTest, RemotePutGetProgressWhileTargetComputes) {
  ASSERT_TRUE(spans_nodes_) << "registered for the split layouts only";
  const int rank = Rank();
  const int origin = FirstRemoteRank();
  ASSERT_GE(origin, 0);
  Reset();
  if (rank == 0) Mine()->sum = 2.5;  // for the origin to get
  // Read before the barrier: once past it, the origin's calls may arrive.
  const long long applied_before = ReadAgentStats().applied;
  const long long rma_before = rmashim_test::AgentRmaOps();
  const long long passed_before = PassedToMpi(win_);
  MPI_Barrier(MPI_COMM_WORLD);
  HangWatchdog watchdog(120, "remote put and get against a computing target");
  if (rank == 0) {
    EXPECT_TRUE(ComputeUntilCounted(2))
        << "the remote origin's puts did not arrive while the target "
           "computed";
  } else if (rank == origin) {
    static const int64_t two = 2;  // MPI may read it until the epoch ends
    double got = -1;
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win_), MPI_SUCCESS);
    ASSERT_EQ(MPI_Get(&got, 1, MPI_DOUBLE, 0, offsetof(Counters, sum), 1,
                      MPI_DOUBLE, win_),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Put(&two, 1, MPI_INT64_T, 0, offsetof(Counters, tickets), 1,
                      MPI_INT64_T, win_),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_unlock(0, win_), MPI_SUCCESS);
    int64_t back = -1;
    ASSERT_EQ(MPI_Win_lock_all(0, win_), MPI_SUCCESS);
    ASSERT_EQ(MPI_Put(&two, 1, MPI_INT64_T, 0, offsetof(Counters, added), 1,
                      MPI_INT64_T, win_),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(0, win_), MPI_SUCCESS);
    ASSERT_EQ(MPI_Get(&back, 1, MPI_INT64_T, 0, offsetof(Counters, added), 1,
                      MPI_INT64_T, win_),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_unlock_all(win_), MPI_SUCCESS);
    EXPECT_EQ(got, 2.5);
    EXPECT_EQ(back, 2);
    EXPECT_EQ(PassedToMpi(win_), passed_before) << "a put or get went to MPI";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  long long counts[2] = {ReadAgentStats().applied - applied_before,
                         rmashim_test::AgentRmaOps() - rma_before};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG_LONG, MPI_SUM,
                MPI_COMM_WORLD);
  EXPECT_EQ(counts[1], 4) << "the two puts and two gets as RMA";
  EXPECT_EQ(counts[0], 0) << "no agent applied a put or get as a request";
}

// A remote origin's exclusive lock, shared lock and lock_all (MPI's lock
// protocol is not involved: the target's agent grants them in the shim's
// lock words), each with a fetch_and_op and an accumulate, complete while
// rank 0 computes without calling MPI.
TEST_P(AgentTest, RemoteLocksProgressWhileTargetComputes) {
  ASSERT_TRUE(spans_nodes_) << "registered for the split layouts only";
  const int rank = Rank();
  const int origin = FirstRemoteRank();
  ASSERT_GE(origin, 0);
  Reset();
  HangWatchdog watchdog(120, "remote locks against a computing target");
  if (rank == 0) {
    EXPECT_TRUE(ComputeUntilCounted(3))
        << "the remote origin's locked epochs did not complete while the "
           "target computed";
  } else if (rank == origin) {
    const int64_t one = 1;
    std::vector<int64_t> tickets;
    for (int epoch = 0; epoch < 3; ++epoch) {
      if (epoch == 2) {
        ASSERT_EQ(MPI_Win_lock_all(0, win_), MPI_SUCCESS);
      } else {
        ASSERT_EQ(
            MPI_Win_lock(epoch == 0 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0,
                         0, win_),
            MPI_SUCCESS);
      }
      int64_t old = -1;
      ASSERT_EQ(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0,
                                 offsetof(Counters, tickets), MPI_SUM, win_),
                MPI_SUCCESS);
      ASSERT_EQ(
          MPI_Accumulate(&one, 1, MPI_INT64_T, 0, offsetof(Counters, added), 1,
                         MPI_INT64_T, MPI_SUM, win_),
          MPI_SUCCESS);
      tickets.push_back(old);
      if (epoch == 2) {
        ASSERT_EQ(MPI_Win_unlock_all(win_), MPI_SUCCESS);
      } else {
        ASSERT_EQ(MPI_Win_unlock(0, win_), MPI_SUCCESS);
      }
    }
    EXPECT_EQ(tickets, (std::vector<int64_t>{0, 1, 2}));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace rmashim_agent_test
