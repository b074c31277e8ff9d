// The agent tests' fixture (shim_agent_test.cc, shim_agent_progress_test.cc):
// a window of each flavor the agent serves with counters at the start of
// every rank's memory, epochs of every kind, one round of the whole
// accumulate family at a target, and a target that computes without
// calling MPI until its counters arrive.
#ifndef RMASHIM_TESTS_MPI_SHIM_AGENT_TEST_H_
#define RMASHIM_TESTS_MPI_SHIM_AGENT_TEST_H_

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/mpi_test_util.h"

namespace rmashim_agent_test {
using rmashim_test::AgentLocksGranted;
using rmashim_test::AgentStats;
using rmashim_test::AllOnOneNode;
using rmashim_test::HangWatchdog;
using rmashim_test::NodeLocalRanks;
using rmashim_test::PassedToMpi;
using rmashim_test::Rank;
using rmashim_test::ReadAgentStats;
using rmashim_test::Size;

inline long long SumOverRanks(long long value) {
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

inline bool Active(Epoch e) { return e == Epoch::kFence || e == Epoch::kPscw; }

// Opens an epoch of kind `e` that gives access to every rank (lock_all,
// fence, PSCW with every rank in both groups), or none for the lock kinds.
inline void OpenEpoch(Epoch e, MPI_Win win, MPI_Group world) {
  if (e == Epoch::kLockAll) MPI_Win_lock_all(0, win);
  if (e == Epoch::kFence) MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (e == Epoch::kPscw) {
    MPI_Win_post(world, 0, win);
    MPI_Win_start(world, 0, win);
  }
}

inline void CloseEpoch(Epoch e, MPI_Win win) {
  if (e == Epoch::kLockAll) MPI_Win_unlock_all(win);
  if (e == Epoch::kFence) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (e == Epoch::kPscw) {
    MPI_Win_complete(win);
    MPI_Win_wait(win);
  }
}

inline std::string Name(Flavor f) {
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

}  // namespace rmashim_agent_test

#endif  // RMASHIM_TESTS_MPI_SHIM_AGENT_TEST_H_
