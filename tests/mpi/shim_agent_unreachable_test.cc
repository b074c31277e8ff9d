// A window whose ranks' agents cannot all reach each other stays MPI's for
// what needs the agents, agreed at creation (shim/windows/window.cc:
// JoinAgent, ReachesRemoteAgents), and never hangs. Before MPI_Init each
// process gives the agents' UCX context (RMASHIM_UCX_TLS, the agent's
// alone; MPI's own transport is untouched) only TCP on even world ranks
// and only shared memory on odd ones, so on the odd-even split every agent
// starts but none reaches an agent on the other node. Then on every rank:
// the agent runs, the window has no agent id for any rank, every rank's
// fetch_and_op to every rank is applied exactly once (through MPI, which
// the shim counts as passed to it), and node-local puts are still the
// shim's.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AgentRunning;
using rmashim_test::AgentWindowId;
using rmashim_test::AllocWindow;
using rmashim_test::IsManaged;
using rmashim_test::NodeLocalRanks;
using rmashim_test::PassedToMpi;
using rmashim_test::Rank;
using rmashim_test::Size;

// Runs before main's MPI_Init: Hydra gives each process its rank.
const bool kTransportsChosen = [] {
  const char* rank = std::getenv("PMI_RANK");
  const bool even = rank == nullptr || std::atoi(rank) % 2 == 0;
  setenv("RMASHIM_UCX_TLS", even ? "tcp" : "sm", 1);
  return true;
}();

constexpr int kIters = 20;

TEST(AgentUnreachable, WindowStaysMpisAndAccumulatesAreExact) {
  ASSERT_TRUE(kTransportsChosen);
  const int rank = Rank(), size = Size();
  ASSERT_TRUE(AgentRunning()) << "the agents started with their transports";
  AllocWindow w(sizeof(int64_t) * (1 + size), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(w.win()));
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(AgentWindowId(w.win(), r), -1) << "rank " << r;
  }
  int64_t* words = w.base<int64_t>();
  for (int i = 0; i <= size; ++i) words[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);

  const long long passed_before = PassedToMpi(w.win());
  MPI_Win_lock_all(0, w.win());
  const int64_t one = 1;
  int64_t old = 0;
  for (int i = 0; i < kIters; ++i) {
    for (int t = 0; t < size; ++t) {
      MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, 0, MPI_SUM, w.win());
      MPI_Win_flush(t, w.win());
    }
  }
  // A node-local put of this rank's number into its slot of every
  // node-local target.
  const std::vector<bool> local = NodeLocalRanks();
  const int64_t mine = rank + 1;
  for (int t = 0; t < size; ++t) {
    if (local[t])
      MPI_Put(&mine, 1, MPI_INT64_T, t, 1 + rank, 1, MPI_INT64_T, w.win());
  }
  MPI_Win_unlock_all(w.win());
  const long long passed = PassedToMpi(w.win()) - passed_before;
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win());
  EXPECT_EQ(words[0], int64_t{kIters} * size);
  for (int o = 0; o < size; ++o) {
    EXPECT_EQ(words[1 + o], local[o] ? o + 1 : 0) << "slot of origin " << o;
  }
  MPI_Win_unlock(rank, w.win());
  // Every fetch_and_op went to MPI (the window's accumulates need the
  // agents); the puts did not.
  EXPECT_EQ(passed, int64_t{kIters} * size);
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
