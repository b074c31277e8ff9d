// The agent on windows spanning nodes (shim/agent/agent.h): counters that every
// rank updates at every target with the whole accumulate family, in every
// epoch kind (lock_all, shared and exclusive locks; and fence and PSCW,
// whose accumulates go to MPI there), on MPI_Win_allocate and
// MPI_Win_create memory, add up exactly (no update lost between node-local
// origins, served in shared memory, and remote ones, applied by the
// target's agent); tickets are unique; in passive epochs none of it went
// to MPI and every remote operation was applied by an agent. Exclusive,
// shared and lock_all lockers, node-local and remote, exclude each other in
// the shim's lock words (remote ones' taken by the agents). And a remote
// origin's lock, accumulate and unlock, and its puts and gets, complete
// while the target computes without calling MPI.
#include <gtest/gtest.h>
#include <mpi.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <numeric>
#include <string>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AgentLocksGranted;
using rmashim_test::AgentStats;
using rmashim_test::AllOnOneNode;
using rmashim_test::HangWatchdog;
using rmashim_test::NodeLocalRanks;
using rmashim_test::PassedToMpi;
using rmashim_test::Rank;
using rmashim_test::ReadAgentStats;
using rmashim_test::Size;

long long SumOverRanks(long long value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_LONG_LONG, MPI_SUM,
                MPI_COMM_WORLD);
  return value;
}

// Counters at the start of every rank's window memory.
struct Counters {
  int64_t added;    // MPI_Accumulate(MPI_SUM)
  int64_t tickets;  // MPI_Fetch_and_op(MPI_SUM)
  int64_t swapped;  // incremented with compare-and-swap retries
  int64_t pair[2];  // MPI_Get_accumulate(MPI_SUM) of two elements
  double sum;       // MPI_Accumulate(MPI_SUM) of a double
};

enum class Flavor { kAllocate, kCreate };
enum class Epoch { kLockAll, kShared, kExclusive, kFence, kPscw };

bool Active(Epoch e) { return e == Epoch::kFence || e == Epoch::kPscw; }

// Opens an epoch of kind `e` that gives access to every rank (lock_all,
// fence, PSCW with every rank in both groups), or none for the lock kinds.
void OpenEpoch(Epoch e, MPI_Win win, MPI_Group world) {
  if (e == Epoch::kLockAll) MPI_Win_lock_all(0, win);
  if (e == Epoch::kFence) MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (e == Epoch::kPscw) {
    MPI_Win_post(world, 0, win);
    MPI_Win_start(world, 0, win);
  }
}

void CloseEpoch(Epoch e, MPI_Win win) {
  if (e == Epoch::kLockAll) MPI_Win_unlock_all(win);
  if (e == Epoch::kFence) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (e == Epoch::kPscw) {
    MPI_Win_complete(win);
    MPI_Win_wait(win);
  }
}

std::string Name(Flavor f) {
  return f == Flavor::kAllocate ? "allocate" : "create";
}

class AgentTest : public testing::TestWithParam<Flavor> {
 protected:
  void SetUp() override {
    constexpr MPI_Aint kBytes = 4096;
    if (GetParam() == Flavor::kAllocate) {
      ASSERT_EQ(MPI_Win_allocate(kBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                 &mem_, &win_),
                MPI_SUCCESS);
    } else {
      buffer_.assign(kBytes / sizeof(int64_t), 0);
      mem_ = buffer_.data();
      ASSERT_EQ(
          MPI_Win_create(mem_, kBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_),
          MPI_SUCCESS);
    }
    ASSERT_MANAGED(win_);
    spans_nodes_ = !AllOnOneNode(MPI_COMM_WORLD);
    local_ = NodeLocalRanks();
  }
  void TearDown() override { MPI_Win_free(&win_); }

  Counters* Mine() { return static_cast<Counters*>(mem_); }
  void Reset() {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, Rank(), 0, win_);
    *Mine() = Counters{0, 0, 0, {0, 0}, 0.0};
    MPI_Win_unlock(Rank(), win_);
    MPI_Barrier(MPI_COMM_WORLD);
  }

  // What one round fetches, where MPI may write it until the epoch ends.
  struct Fetched {
    int target = -1;
    int64_t ticket = -1;
    int64_t pair[2] = {-1, -1};
  };

  // One round of every kind at `target`, its results in `out`; counts the
  // calls made. `swap`: also a compare-and-swap increment, which reads
  // results within the epoch (so passive epochs only: in an active-target
  // epoch MPI defines a fetched value only once the epoch has ended).
  void Round(int target, Fetched* out, bool swap, long long* calls) {
    // Static: MPI may read an origin buffer until the epoch ends (in the
    // fence and PSCW epochs MPI serves), long after this call returns.
    static const int64_t one = 1;
    static const int64_t ones[2] = {1, 1};
    static const double half = 0.5;
    out->target = target;
    ASSERT_EQ(MPI_Fetch_and_op(&one, &out->ticket, MPI_INT64_T, target,
                               offsetof(Counters, tickets), MPI_SUM, win_),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Get_accumulate(ones, 2, MPI_INT64_T, out->pair, 2,
                                 MPI_INT64_T, target, offsetof(Counters, pair),
                                 2, MPI_INT64_T, MPI_SUM, win_),
              MPI_SUCCESS);
    ASSERT_EQ(
        MPI_Accumulate(&half, 1, MPI_DOUBLE, target, offsetof(Counters, sum), 1,
                       MPI_DOUBLE, MPI_SUM, win_),
        MPI_SUCCESS);
    *calls += 3;
    if (swap) SwapIncrement(target, calls);
    // Last, waiting for no answer: only the epoch's end or a flush
    // completes the round's last one.
    ASSERT_EQ(
        MPI_Accumulate(&one, 1, MPI_INT64_T, target, offsetof(Counters, added),
                       1, MPI_INT64_T, MPI_SUM, win_),
        MPI_SUCCESS);
    ++*calls;
  }

  // Compare-and-swap increment: read, then swap until nobody came between
  // (in a passive epoch: each fetched value is defined after its flush).
  void SwapIncrement(int target, long long* calls) {
    int64_t seen = 0;
    ASSERT_EQ(MPI_Fetch_and_op(nullptr, &seen, MPI_INT64_T, target,
                               offsetof(Counters, swapped), MPI_NO_OP, win_),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(target, win_), MPI_SUCCESS);
    ++*calls;
    for (int tries = 0;; ++tries) {
      ASSERT_LT(tries, 1000000) << "compare-and-swap never succeeded";
      const int64_t next = seen + 1;
      int64_t old = -1;
      ASSERT_EQ(MPI_Compare_and_swap(&next, &seen, &old, MPI_INT64_T, target,
                                     offsetof(Counters, swapped), win_),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Win_flush(target, win_), MPI_SUCCESS);
      ++*calls;
      if (old == seen) break;
      seen = old;
    }
  }

  // The lowest rank on another node than rank 0's, or -1 (collective:
  // rank 0's view, from its own node-local ranks).
  int FirstRemoteRank() const {
    int origin = -1;
    for (int r = Size() - 1; r >= 0; --r) {
      if (!local_[r]) origin = r;
    }
    MPI_Bcast(&origin, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return origin;
  }

  // This rank computes, watching its own counters with plain loads and
  // calling no MPI, until `tickets` and `added` both reach `count` (true)
  // or 60 s pass (false); the agent should take milliseconds.
  bool ComputeUntilCounted(int64_t count) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    Counters* c = Mine();
    while (std::chrono::steady_clock::now() < deadline) {
      if (__atomic_load_n(&c->tickets, __ATOMIC_ACQUIRE) == count &&
          __atomic_load_n(&c->added, __ATOMIC_ACQUIRE) == count) {
        return true;
      }
    }
    return false;
  }

  void* mem_ = nullptr;
  std::vector<int64_t> buffer_;
  MPI_Win win_ = MPI_WIN_NULL;
  bool spans_nodes_ = false;
  std::vector<bool> local_;
};

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
    // Every remote call was applied by an agent, none went to MPI; except
    // in fence and PSCW epochs on windows spanning nodes, whose accumulates
    // are MPI's (README's limitations).
    const AgentStats after = ReadAgentStats();
    const long long applied = SumOverRanks(after.applied);
    const long long issued = SumOverRanks(remote_calls);
    const long long passed = PassedToMpi(win_);
    MPI_Barrier(MPI_COMM_WORLD);
    if (spans_nodes_ && Active(epoch)) {
      EXPECT_GT(passed, 0);
      EXPECT_EQ(applied, applied_before);
    } else {
      EXPECT_EQ(passed, 0);
      if (spans_nodes_) {
        EXPECT_GT(issued, 0);
        EXPECT_EQ(applied - applied_before, issued);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Group_free(&world);
}

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
// passive epochs the target's agent moves a remote origin's puts and gets
// as it applies its accumulates (admission.cc), and none goes to MPI.
TEST_P(AgentTest, RemotePutGetProgressWhileTargetComputes) {
  ASSERT_TRUE(spans_nodes_) << "registered for the split layouts only";
  const int rank = Rank();
  const int origin = FirstRemoteRank();
  ASSERT_GE(origin, 0);
  Reset();
  if (rank == 0) Mine()->sum = 2.5;  // for the origin to get
  // Read before the barrier: once past it, the origin's calls may arrive.
  const long long applied_before = ReadAgentStats().applied;
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
  if (rank == 0) {
    EXPECT_EQ(ReadAgentStats().applied - applied_before, 4)
        << "rank 0's agent applied the two puts and two gets";
  }
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

INSTANTIATE_TEST_SUITE_P(Flavors, AgentTest,
                         testing::Values(Flavor::kAllocate, Flavor::kCreate),
                         [](const testing::TestParamInfo<Flavor>& info) {
                           return Name(info.param);
                         });

}  // namespace
