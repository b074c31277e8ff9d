// A lost agent link (shim/agent/agent.h, "Protocol"): a link between an
// origin and a remote target's agent fails, as a network failure would
// (rmashim_agent_fail_link), at either end. What must hold, with
// MPI_ERRORS_RETURN on the window: the updates sent before are applied
// exactly once; the epoch ends that may have lost updates report
// MPI_ERR_OTHER on the origin or the target instead of waiting forever
// (fence, PSCW wait and test), and so do the later ones; a remote lock
// holder or waiter whose link is gone holds the target's lock no longer;
// the window is freed and MPI finalizes. Each scenario is its own run
// (a lost link stays lost for the process's life): BUILD picks one per
// target with --gtest_filter. Rank 0 is the origin, rank 1, on another
// node, the target; further ranks only take part in the collectives.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AgentLocksGranted;
using rmashim_test::ErrorClass;
using rmashim_test::HangWatchdog;
using rmashim_test::NodeLocalRanks;
using rmashim_test::Rank;
using rmashim_test::ReadAgentStats;

constexpr int kOrigin = 0, kTarget = 1;
constexpr double kWatchdogSeconds = 60;

// rmashim_agent_fail_link: MPI_ERR_OTHER where the shim is not loaded.
int FailLink(int world_rank, bool agent_end) {
  using Fn = int (*)(int, int);
  auto fn =
      reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_agent_fail_link"));
  return fn != nullptr ? fn(world_rank, agent_end ? 1 : 0) : MPI_ERR_OTHER;
}

class AgentLostLinkTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ReadAgentStats().running) << "RMASHIM_AGENT=1 on a split";
    const std::vector<bool> local = NodeLocalRanks();  // collective
    if (Rank() == kOrigin || Rank() == kTarget) {
      ASSERT_FALSE(local[kOrigin + kTarget - Rank()])
          << "needs ranks 0 and 1 on different nodes";
    }
    ASSERT_EQ(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &mem_, &win_),
              MPI_SUCCESS);
    ASSERT_MANAGED(win_);
    MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
    *mem_ = 0;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  void TearDown() override {
    HangWatchdog watchdog(kWatchdogSeconds, "MPI_Win_free after a lost link");
    EXPECT_EQ(MPI_Win_free(&win_), MPI_SUCCESS);
  }

  // One MPI_SUM of 1 to the target's counter, from the origin.
  void AddOne() {
    static const int64_t one = 1;
    ASSERT_EQ(MPI_Accumulate(&one, 1, MPI_INT64_T, kTarget, 0, 1, MPI_INT64_T,
                             MPI_SUM, win_),
              MPI_SUCCESS);
  }
  // The target's counter, read by the target in an exclusive lock of its
  // own (after a lost link, possibly held by the gone origin until its
  // agent dropped it).
  int64_t TargetCount() {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win_);
    const int64_t n = *mem_;
    MPI_Win_unlock(kTarget, win_);
    return n;
  }
  // A fence epoch in which the origin adds one: its errors, origin and
  // target (MPI_SUCCESS elsewhere).
  int FenceAddingOne(bool fail_before_fence) {
    if (Rank() == kOrigin) {
      AddOne();
      if (fail_before_fence) EXPECT_EQ(FailLink(kTarget, false), MPI_SUCCESS);
    }
    HangWatchdog watchdog(kWatchdogSeconds, "MPI_Win_fence");
    return MPI_Win_fence(0, win_);
  }
  // The agent's applied count, summed over ranks.
  static long long AppliedEverywhere() {
    long long applied = ReadAgentStats().applied;
    MPI_Allreduce(MPI_IN_PLACE, &applied, 1, MPI_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    return applied;
  }

  int64_t* mem_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
};

// The origin's link fails with an update queued on it: its fence and the
// target's report MPI_ERR_OTHER, so do the next fence's, and nothing hangs.
TEST_F(AgentLostLinkTest, FenceOriginEnd) {
  ASSERT_EQ(MPI_Win_fence(MPI_MODE_NOPRECEDE, win_), MPI_SUCCESS);
  const long long applied = AppliedEverywhere();
  ASSERT_EQ(FenceAddingOne(false), MPI_SUCCESS);
  EXPECT_EQ(AppliedEverywhere(), applied + 1) << "not through the agent";
  if (Rank() == kTarget) EXPECT_EQ(*mem_, 1);
  const int rc = FenceAddingOne(true);
  const int again = FenceAddingOne(false);
  if (Rank() == kOrigin || Rank() == kTarget) {
    EXPECT_EQ(ErrorClass(rc), MPI_ERR_OTHER) << "the lost update's fence";
    EXPECT_EQ(ErrorClass(again), MPI_ERR_OTHER) << "a fence after it";
  } else {
    EXPECT_EQ(rc, MPI_SUCCESS);
    EXPECT_EQ(again, MPI_SUCCESS);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win_);
  const int64_t count = Rank() == kTarget ? TargetCount() : 0;
  if (Rank() == kTarget) {
    EXPECT_EQ(count, 1) << "updates on the cut link were applied";
  }
}

// The target's agent ends the link from the origin: the origin may learn of
// it only at its next request, so its fence may succeed, but the target's
// fence, which counts an update that cannot come, reports MPI_ERR_OTHER.
TEST_F(AgentLostLinkTest, FenceAgentEnd) {
  ASSERT_EQ(MPI_Win_fence(MPI_MODE_NOPRECEDE, win_), MPI_SUCCESS);
  ASSERT_EQ(FenceAddingOne(false), MPI_SUCCESS);  // the link is open
  if (Rank() == kTarget) {
    ASSERT_EQ(*mem_, 1);
    ASSERT_EQ(FailLink(kOrigin, true), MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int rc = FenceAddingOne(false);
  const int again = FenceAddingOne(false);
  if (Rank() == kTarget) {
    EXPECT_EQ(ErrorClass(rc), MPI_ERR_OTHER);
    EXPECT_EQ(ErrorClass(again), MPI_ERR_OTHER);
  } else if (Rank() == kOrigin) {
    EXPECT_TRUE(rc == MPI_SUCCESS || ErrorClass(rc) == MPI_ERR_OTHER) << rc;
    EXPECT_EQ(ErrorClass(again), MPI_ERR_OTHER) << "its link is gone by now";
  } else {
    EXPECT_EQ(rc, MPI_SUCCESS);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win_);
  if (Rank() == kTarget) EXPECT_EQ(TargetCount(), 1);
}

// PSCW: the origin's complete and the target's wait (or test) report the
// lost link; the next epoch's too.
void PscwEpochs(MPI_Win win, bool by_test, void (*add_one)(MPI_Win),
                int64_t* mem) {
  MPI_Group world, origin, target;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &kOrigin, &origin);
  MPI_Group_incl(world, 1, &kTarget, &target);
  for (int epoch = 0; epoch < 3; ++epoch) {
    HangWatchdog watchdog(kWatchdogSeconds, "a PSCW epoch");
    int rc = MPI_SUCCESS;
    if (Rank() == kOrigin) {
      ASSERT_EQ(MPI_Win_start(target, 0, win), MPI_SUCCESS);
      add_one(win);
      if (epoch == 1) ASSERT_EQ(FailLink(kTarget, false), MPI_SUCCESS);
      rc = MPI_Win_complete(win);
    } else if (Rank() == kTarget) {
      ASSERT_EQ(MPI_Win_post(origin, 0, win), MPI_SUCCESS);
      if (by_test) {
        for (int flag = 0; !flag && rc == MPI_SUCCESS;) {
          rc = MPI_Win_test(win, &flag);
        }
      } else {
        rc = MPI_Win_wait(win);
      }
    }
    if (Rank() == kOrigin || Rank() == kTarget) {
      if (epoch == 0) {
        EXPECT_EQ(rc, MPI_SUCCESS);
        if (Rank() == kTarget) EXPECT_EQ(*mem, 1);
      } else {
        EXPECT_EQ(ErrorClass(rc), MPI_ERR_OTHER) << "epoch " << epoch;
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (Rank() == kTarget) EXPECT_EQ(*mem, 1);
  MPI_Group_free(&origin);
  MPI_Group_free(&target);
  MPI_Group_free(&world);
}

void AddOneTo(MPI_Win win) {
  static const int64_t one = 1;
  ASSERT_EQ(MPI_Accumulate(&one, 1, MPI_INT64_T, kTarget, 0, 1, MPI_INT64_T,
                           MPI_SUM, win),
            MPI_SUCCESS);
}

TEST_F(AgentLostLinkTest, PscwWait) { PscwEpochs(win_, false, AddOneTo, mem_); }

TEST_F(AgentLostLinkTest, PscwTest) { PscwEpochs(win_, true, AddOneTo, mem_); }

// A remote holder of the target's exclusive lock loses its link: its unlock
// fails, and the target's agent releases the lock, so the target's own
// exclusive lock is granted.
TEST_F(AgentLostLinkTest, LockHolder) {
  const long long granted = AgentLocksGranted();
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == kOrigin) {
    HangWatchdog watchdog(kWatchdogSeconds, "the origin's epoch");
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win_), MPI_SUCCESS);
    AddOne();
    ASSERT_EQ(MPI_Win_flush(kTarget, win_), MPI_SUCCESS);
    ASSERT_EQ(FailLink(kTarget, false), MPI_SUCCESS);
    EXPECT_EQ(ErrorClass(MPI_Win_unlock(kTarget, win_)), MPI_ERR_OTHER);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == kTarget) {
    EXPECT_EQ(AgentLocksGranted(), granted + 1) << "not the agent's lock";
    HangWatchdog watchdog(kWatchdogSeconds, "the target's lock after it");
    EXPECT_EQ(TargetCount(), 1);
  }
}

// A remote origin waits for the target's exclusive lock when the target's
// agent ends its link: the origin's lock fails; when the target releases,
// the dropped request takes its turn and leaves at once, so the target's
// next lock is granted, and a lock from a third rank too.
TEST_F(AgentLostLinkTest, LockWaiter) {
  if (Rank() == kTarget) {
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win_), MPI_SUCCESS);
    *mem_ = 7;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == kOrigin) {
    HangWatchdog watchdog(kWatchdogSeconds, "the origin's lock");
    EXPECT_EQ(ErrorClass(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win_)),
              MPI_ERR_OTHER);
  } else if (Rank() == kTarget) {
    // Once the origin's link is open (its lock opens it), and a while for
    // its request to queue at this agent: either way the origin's lock
    // fails, the while only picks where the link is cut.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int cut = MPI_ERR_OTHER;
    for (int tries = 0; tries < 1000 && cut != MPI_SUCCESS; ++tries) {
      cut = FailLink(kOrigin, true);
      if (cut != MPI_SUCCESS) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    EXPECT_EQ(cut, MPI_SUCCESS) << "the origin never opened its link";
    MPI_Win_unlock(kTarget, win_);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  HangWatchdog watchdog(kWatchdogSeconds, "locks after the lost waiter");
  if (Rank() == kTarget) EXPECT_EQ(TargetCount(), 7);
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() != kOrigin) {
    int64_t seen = -1;
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win_), MPI_SUCCESS);
    ASSERT_EQ(MPI_Get(&seen, 1, MPI_INT64_T, kTarget, 0, 1, MPI_INT64_T, win_),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_unlock(kTarget, win_), MPI_SUCCESS);
    EXPECT_EQ(seen, 7);
  }
}

}  // namespace
