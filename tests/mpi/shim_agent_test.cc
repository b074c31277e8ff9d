// The agent on windows spanning nodes (shim/agent/agent.h): counters that every
// rank updates at every target with the whole accumulate family, in every
// epoch kind (lock_all, shared and exclusive locks, fence, PSCW), on
// MPI_Win_allocate and MPI_Win_create memory, add up exactly (no update
// lost between node-local origins, served in shared memory, and remote
// ones, applied by the target's agent); tickets are unique; none of it
// went to MPI and every remote operation was applied by an agent. Exclusive,
// shared and lock_all lockers, node-local and remote, exclude each other in
// the shim's lock words (remote ones' taken by the agents). The fixture is
// in shim_agent_test.h; the progress tests (a target that computes without
// calling MPI) in shim_agent_progress_test.cc.
#include "tests/mpi/shim_agent_test.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <deque>
#include <numeric>
#include <string>
#include <vector>

namespace rmashim_agent_test {
namespace {

TEST_P(AgentTest, CountersAddUpInEveryEpoch) {
  const int rank = Rank(), size = Size();
  const AgentStats before = ReadAgentStats();
  // The tests run with RMASHIM_AGENT=1 or auto: the agent runs exactly
  // when the job spans nodes.
  EXPECT_EQ(before.running != 0, spans_nodes_) << "agent running";
  // Fewer rounds at size: every round visits every target (CI's time).
  const int rounds = size > 3 ? 4 : 12;
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  for (Epoch epoch : {Epoch::kLockAll, Epoch::kShared, Epoch::kExclusive,
                      Epoch::kFence, Epoch::kPscw}) {
    SCOPED_TRACE(Name(GetParam()) + " epoch " +
                 std::to_string(static_cast<int>(epoch)));
    Reset();
    const long long applied_before = SumOverRanks(ReadAgentStats().applied);
    std::deque<Fetched> fetched;  // stable addresses for MPI to write
    long long remote_calls = 0;
    const bool every_target =
        epoch == Epoch::kLockAll || Active(epoch);  // no per-target lock
    OpenEpoch(epoch, win_, world);
    for (int round = 0; round < rounds; ++round) {
      for (int k = 0; k < size; ++k) {
        const int target = (rank + k) % size;
        if (!every_target) {
          MPI_Win_lock(
              epoch == Epoch::kShared ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE,
              target, 0, win_);
        }
        long long calls = 0;
        Round(target, &fetched.emplace_back(), !Active(epoch), &calls);
        if (!local_[target]) remote_calls += calls;
        if (round % 3 == 0 && !Active(epoch)) MPI_Win_flush(target, win_);
        if (!every_target) MPI_Win_unlock(target, win_);
      }
      if (epoch == Epoch::kLockAll && round % 4 == 1) MPI_Win_flush_all(win_);
      if (Active(epoch) && round % 4 == 1) {  // an epoch ends, the next opens
        if (epoch == Epoch::kFence) {
          MPI_Win_fence(0, win_);
        } else {
          CloseEpoch(epoch, win_);
          OpenEpoch(epoch, win_, world);
        }
      }
    }
    CloseEpoch(epoch, win_);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win_);
    const Counters c = *Mine();
    MPI_Win_unlock(rank, win_);
    const int64_t total = int64_t{rounds} * size;
    EXPECT_EQ(c.added, total);
    EXPECT_EQ(c.tickets, total);
    EXPECT_EQ(c.swapped, Active(epoch) ? 0 : total);
    EXPECT_EQ(c.pair[0], total);
    EXPECT_EQ(c.pair[1], total);
    EXPECT_EQ(c.sum, 0.5 * static_cast<double>(total));
    // Target 0's tickets: each of 0 .. total-1 exactly once; each element
    // of a fetched pair a value the element had (MPI makes each element's
    // update atomic, not the pair's).
    std::vector<int64_t> tickets_at_0;
    for (const Fetched& f : fetched) {
      for (const int64_t v : f.pair) {
        EXPECT_TRUE(v >= 0 && v < total) << v << " fetched at " << f.target;
      }
      if (f.target == 0) tickets_at_0.push_back(f.ticket);
    }
    std::vector<int> counts(size);
    const int mine = static_cast<int>(tickets_at_0.size());
    MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> offsets(size, 0);
    std::partial_sum(counts.begin(), counts.end() - 1, offsets.begin() + 1);
    std::vector<int64_t> all(rank == 0 ? total : 0);
    MPI_Gatherv(tickets_at_0.data(), mine, MPI_INT64_T, all.data(),
                counts.data(), offsets.data(), MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      std::sort(all.begin(), all.end());
      for (int64_t i = 0; i < total; ++i) ASSERT_EQ(all[i], i);
    }
    // Every remote call was applied by an agent, none went to MPI.
    const AgentStats after = ReadAgentStats();
    const long long applied = SumOverRanks(after.applied);
    const long long issued = SumOverRanks(remote_calls);
    const long long passed = PassedToMpi(win_);
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_EQ(passed, 0);
    if (spans_nodes_) {
      EXPECT_GT(issued, 0);
      EXPECT_EQ(applied - applied_before, issued);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Group_free(&world);
}

// MPI_Win_unlock_all completes the epoch's updates at every target before
// it returns: after a barrier each target finds every rank's accumulates of
// the round in its memory, remote ones applied by agents. The releases of
// other nodes' shares complete the updates to those nodes' lock agents
// (agent.h: AgentUnlockAll), flushes the others'; every rank accumulates to
// every rank at once, so releases and updates of all origins meet.
TEST_P(AgentTest, UnlockAllCompletesUpdatesAtEveryTarget) {
  const int rank = Rank(), size = Size();
  Reset();
  // Summed over the ranks: read everywhere before any update is sent.
  const long long applied_before = SumOverRanks(ReadAgentStats().applied);
  const int64_t one = 1;
  constexpr int kRounds = 20;
  long long remote_calls = 0;
  for (int round = 0; round < kRounds; ++round) {
    ASSERT_EQ(MPI_Win_lock_all(0, win_), MPI_SUCCESS);
    for (int k = 0; k < size; ++k) {
      const int target = (rank + k) % size;
      ASSERT_EQ(MPI_Accumulate(&one, 1, MPI_INT64_T, target,
                               offsetof(Counters, added), 1, MPI_INT64_T,
                               MPI_SUM, win_),
                MPI_SUCCESS);
      if (!local_[target]) ++remote_calls;
    }
    ASSERT_EQ(MPI_Win_unlock_all(win_), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win_);
    const int64_t added = Mine()->added;
    MPI_Win_unlock(rank, win_);
    ASSERT_EQ(added, int64_t{size} * (round + 1)) << "round " << round;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  const long long applied = SumOverRanks(ReadAgentStats().applied);
  EXPECT_EQ(applied - applied_before, SumOverRanks(remote_calls));
  if (spans_nodes_) {
    EXPECT_GT(SumOverRanks(remote_calls), 0);
  }
  EXPECT_EQ(PassedToMpi(win_), 0);
}

// Nodes the job spans (each node's first rank counts it).
int NodeCount() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
  int nodes = node_rank == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return nodes;
}

// Where the exclusion test keeps its pair, past the counters.
constexpr MPI_Aint kPairAt = 256;

// Exclusive lockers, local and remote, raise a pair of words at every
// target one after the other with plain get and put (a flush between), so
// that the words differ while a holder is inside; shared lockers and
// lock_all holders read both and must find them equal. Any overlap of an
// exclusive holder with another holder of either kind shows as a lost
// increment (the pair ends below size * rounds) or an unequal read. The
// locks of remote origins were granted by agents (one per remote lock, one
// per other node for each lock_all), not by MPI.
TEST_P(AgentTest, LocksExcludeLocalAndRemoteLockers) {
  const int rank = Rank(), size = Size();
  const int rounds = size > 4 ? 3 : size > 3 ? 6 : 12;
  const int nodes = NodeCount();
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win_);
  auto* pair = reinterpret_cast<int64_t*>(static_cast<char*>(mem_) + kPairAt);
  pair[0] = pair[1] = 0;
  MPI_Win_unlock(rank, win_);
  MPI_Barrier(MPI_COMM_WORLD);
  const long long granted_before = SumOverRanks(AgentLocksGranted());
  long long remote_locks = 0, unequal = 0;
  const auto read_pair = [&](int target) {
    int64_t seen[2] = {-1, -2};
    ASSERT_EQ(
        MPI_Get(seen, 2, MPI_INT64_T, target, kPairAt, 2, MPI_INT64_T, win_),
        MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(target, win_), MPI_SUCCESS);
    if (seen[0] != seen[1]) ++unequal;
  };
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < size; ++k) {
      const int target = (rank + k) % size;
      const bool remote = !local_[target];
      // Exclusive: a, then b, each raised by one with a flush between.
      ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win_), MPI_SUCCESS);
      int64_t value = -1;
      ASSERT_EQ(MPI_Get(&value, 1, MPI_INT64_T, target, kPairAt, 1, MPI_INT64_T,
                        win_),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Win_flush(target, win_), MPI_SUCCESS);
      ++value;
      for (int word = 0; word < 2; ++word) {
        ASSERT_EQ(MPI_Put(&value, 1, MPI_INT64_T, target,
                          kPairAt + word * MPI_Aint{sizeof value}, 1,
                          MPI_INT64_T, win_),
                  MPI_SUCCESS);
        ASSERT_EQ(MPI_Win_flush(target, win_), MPI_SUCCESS);
      }
      ASSERT_EQ(MPI_Win_unlock(target, win_), MPI_SUCCESS);
      // Shared: the words agree.
      const int reader = (target + 1) % size;
      ASSERT_EQ(MPI_Win_lock(MPI_LOCK_SHARED, reader, 0, win_), MPI_SUCCESS);
      read_pair(reader);
      ASSERT_EQ(MPI_Win_unlock(reader, win_), MPI_SUCCESS);
      remote_locks += remote ? 1 : 0;
      remote_locks += local_[reader] ? 0 : 1;
    }
    // lock_all: every target's words agree.
    ASSERT_EQ(MPI_Win_lock_all(0, win_), MPI_SUCCESS);
    for (int target = 0; target < size; ++target) read_pair(target);
    ASSERT_EQ(MPI_Win_unlock_all(win_), MPI_SUCCESS);
    remote_locks += nodes - 1;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win_);
  const int64_t a = pair[0], b = pair[1];
  MPI_Win_unlock(rank, win_);
  EXPECT_EQ(a, int64_t{rounds} * size)
      << "an exclusive lock overlapped another";
  EXPECT_EQ(b, a);
  EXPECT_EQ(unequal, 0) << "a shared or lock_all holder saw a holder inside";
  const long long granted = SumOverRanks(AgentLocksGranted()) - granted_before;
  const long long issued = SumOverRanks(remote_locks);
  if (spans_nodes_) {
    EXPECT_GT(issued, 0);
    EXPECT_EQ(granted, issued) << "remote locks not granted by the agents";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

INSTANTIATE_TEST_SUITE_P(Flavors, AgentTest,
                         testing::Values(Flavor::kAllocate, Flavor::kCreate),
                         [](const testing::TestParamInfo<Flavor>& info) {
                           return Name(info.param);
                         });

}  // namespace
}  // namespace rmashim_agent_test
