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
// target with --gtest_filter. Rank 0 is the origin; the target is the last
// rank on another node, its lock server that node's first rank (the same
// rank on 2 and 3 ranks, not on 4: oddeven puts 1 and 3 on one node);
// further ranks only take part in the collectives.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AgentLocksGranted;
using rmashim_test::AgentLocksWaiting;
using rmashim_test::ErrorClass;
using rmashim_test::FailAgentLink;
using rmashim_test::HangWatchdog;
using rmashim_test::NodeLocalRanks;
using rmashim_test::PollUntil;
using rmashim_test::Rank;
using rmashim_test::ReadAgentStats;
using rmashim_test::Size;

constexpr int kOrigin = 0;
constexpr double kWatchdogSeconds = 60;
constexpr double kPollSeconds = 10;  // for what the agent's thread does

// Fails this process's agent's link from `origin` once the origin has
// opened it (its first request to this process opens it).
int FailLinkFromOnceOpen(int origin) {
  return PollUntil(
             [origin] { return FailAgentLink(origin, true) == MPI_SUCCESS; },
             kPollSeconds)
             ? MPI_SUCCESS
             : MPI_ERR_OTHER;
}

class AgentLostLinkTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ReadAgentStats().running) << "RMASHIM_AGENT=1 on a split";
    const std::vector<bool> local = NodeLocalRanks();  // collective
    // The last rank on another node than the origin's, and the first on
    // that node (the agent that grants exclusive locks there).
    target_ = -1;
    if (Rank() == kOrigin) {
      for (int r = 0; r < Size(); ++r) {
        if (!local[r]) target_ = r;
      }
    }
    MPI_Bcast(&target_, 1, MPI_INT, kOrigin, MPI_COMM_WORLD);
    ASSERT_GE(target_, 0) << "needs ranks on two nodes";
    server_ = target_;
    if (Rank() == target_) {
      for (int r = target_; r >= 0; --r) {
        if (local[r]) server_ = r;
      }
    }
    MPI_Bcast(&server_, 1, MPI_INT, target_, MPI_COMM_WORLD);
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

  bool Involved() const { return Rank() == kOrigin || Rank() == target_; }

  // One MPI_SUM of 1 to the target's counter.
  int AddOne() {
    static const int64_t one = 1;
    return MPI_Accumulate(&one, 1, MPI_INT64_T, target_, 0, 1, MPI_INT64_T,
                          MPI_SUM, win_);
  }
  // The target's counter, read by the target in an exclusive lock of its
  // own (after a lost link, one the gone origin held until the agent
  // released it).
  int64_t TargetCount() {
    EXPECT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target_, 0, win_), MPI_SUCCESS);
    const int64_t n = *mem_;
    EXPECT_EQ(MPI_Win_unlock(target_, win_), MPI_SUCCESS);
    return n;
  }
  // `rank`'s counter, read with MPI_Get in an exclusive lock.
  int64_t ReadLocked(int rank) {
    int64_t seen = -1;
    EXPECT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win_), MPI_SUCCESS);
    EXPECT_EQ(MPI_Get(&seen, 1, MPI_INT64_T, rank, 0, 1, MPI_INT64_T, win_),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Win_unlock(rank, win_), MPI_SUCCESS);
    return seen;
  }
  // A fence epoch in which the origin adds one (`*added`: its call's
  // error), failing its link to the target first if asked; the fence's
  // error.
  int FenceAddingOne(bool fail_first, int* added) {
    *added = MPI_SUCCESS;
    if (Rank() == kOrigin) {
      *added = AddOne();
      if (fail_first) {
        EXPECT_EQ(FailAgentLink(target_, false), MPI_SUCCESS);
      }
    }
    HangWatchdog watchdog(kWatchdogSeconds, "MPI_Win_fence");
    return MPI_Win_fence(0, win_);
  }
  // The agents' applied counts, summed over ranks.
  static long long AppliedEverywhere() {
    long long applied = ReadAgentStats().applied;
    MPI_Allreduce(MPI_IN_PLACE, &applied, 1, MPI_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    return applied;
  }
  // A PSCW epoch of the origin (access) and the target (exposure, ended by
  // a wait or by polling tests) in which the origin adds one, failing its
  // link first if asked; the epoch end's error.
  int PscwAddingOne(bool by_test, bool fail_first, MPI_Group origin,
                    MPI_Group target) {
    HangWatchdog watchdog(kWatchdogSeconds, "a PSCW epoch");
    int rc = MPI_SUCCESS;
    if (Rank() == kOrigin) {
      EXPECT_EQ(MPI_Win_start(target, 0, win_), MPI_SUCCESS);
      const int added = AddOne();
      if (fail_first) {
        EXPECT_EQ(FailAgentLink(target_, false), MPI_SUCCESS);
      }
      rc = MPI_Win_complete(win_);
      if (rc == MPI_SUCCESS) rc = added;
    } else if (Rank() == target_) {
      EXPECT_EQ(MPI_Win_post(origin, 0, win_), MPI_SUCCESS);
      if (by_test) {
        for (int flag = 0; !flag && rc == MPI_SUCCESS;) {
          rc = MPI_Win_test(win_, &flag);
        }
      } else {
        rc = MPI_Win_wait(win_);
      }
    }
    return rc;
  }
  void PscwEpochs(bool by_test) {
    MPI_Group world, origin, target;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &kOrigin, &origin);
    MPI_Group_incl(world, 1, &target_, &target);
    for (int epoch = 0; epoch < 3; ++epoch) {
      const int rc = PscwAddingOne(by_test, epoch == 1, origin, target);
      if (epoch == 0) {
        EXPECT_EQ(rc, MPI_SUCCESS);
        if (Rank() == target_) {
          EXPECT_EQ(*mem_, 1);
        }
      } else if (Involved()) {
        EXPECT_EQ(ErrorClass(rc), MPI_ERR_OTHER) << "epoch " << epoch;
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
    if (Rank() == target_) {
      EXPECT_EQ(TargetCount(), 1);
    }
    MPI_Group_free(&origin);
    MPI_Group_free(&target);
    MPI_Group_free(&world);
  }

  int64_t* mem_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
  int target_ = -1;
  int server_ = -1;
};

// The origin's link fails with an update queued on it: its fence and the
// target's report MPI_ERR_OTHER; in the next epoch the origin's
// accumulate fails at once and both fences report it again; nothing hangs,
// and the ranks not involved see no error.
TEST_F(AgentLostLinkTest, FenceOriginEnd) {
  ASSERT_EQ(MPI_Win_fence(MPI_MODE_NOPRECEDE, win_), MPI_SUCCESS);
  const long long applied = AppliedEverywhere();
  int added = MPI_SUCCESS;
  ASSERT_EQ(FenceAddingOne(false, &added), MPI_SUCCESS);
  ASSERT_EQ(added, MPI_SUCCESS);
  EXPECT_EQ(AppliedEverywhere(), applied + 1) << "not through the agent";
  if (Rank() == target_) {
    EXPECT_EQ(*mem_, 1);
  }
  const int rc = FenceAddingOne(true, &added);
  EXPECT_EQ(added, MPI_SUCCESS) << "queued before the link failed";
  const int again = FenceAddingOne(false, &added);
  if (Involved()) {
    EXPECT_EQ(ErrorClass(rc), MPI_ERR_OTHER) << "the lost update's fence";
    EXPECT_EQ(ErrorClass(again), MPI_ERR_OTHER) << "a fence after it";
  } else {
    EXPECT_EQ(rc, MPI_SUCCESS);
    EXPECT_EQ(again, MPI_SUCCESS);
  }
  if (Rank() == kOrigin) {
    EXPECT_EQ(ErrorClass(added), MPI_ERR_OTHER) << "an update on a lost link";
  }
  HangWatchdog watchdog(kWatchdogSeconds, "the last fence and lock");
  const int last = MPI_Win_fence(MPI_MODE_NOSUCCEED, win_);
  EXPECT_EQ(Involved() ? ErrorClass(last) : last,
            Involved() ? MPI_ERR_OTHER : MPI_SUCCESS)
      << "the loss sticks";
  if (Rank() == target_) {
    EXPECT_EQ(TargetCount(), 1) << "updates on the cut link were applied";
  }
}

// The target's agent ends the link from the origin: the origin may learn of
// it only at its next request, so its fence may succeed, but the target's
// fence, which counts an update that cannot come, reports MPI_ERR_OTHER,
// and so does the next one on both.
TEST_F(AgentLostLinkTest, FenceAgentEnd) {
  ASSERT_EQ(MPI_Win_fence(MPI_MODE_NOPRECEDE, win_), MPI_SUCCESS);
  int added = MPI_SUCCESS;
  ASSERT_EQ(FenceAddingOne(false, &added), MPI_SUCCESS);  // the link is open
  if (Rank() == target_) {
    ASSERT_EQ(*mem_, 1);
    ASSERT_EQ(FailAgentLink(kOrigin, true), MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int rc = FenceAddingOne(false, &added);
  const int again = FenceAddingOne(false, &added);
  if (Rank() == target_) {
    EXPECT_EQ(ErrorClass(rc), MPI_ERR_OTHER);
    EXPECT_EQ(ErrorClass(again), MPI_ERR_OTHER);
  } else if (Rank() == kOrigin) {
    EXPECT_TRUE(rc == MPI_SUCCESS || ErrorClass(rc) == MPI_ERR_OTHER) << rc;
    EXPECT_EQ(ErrorClass(again != MPI_SUCCESS ? again : added), MPI_ERR_OTHER)
        << "its link is gone by now";
  } else {
    EXPECT_EQ(rc, MPI_SUCCESS);
    EXPECT_EQ(again, MPI_SUCCESS);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win_);
  if (Rank() == target_) {
    EXPECT_EQ(TargetCount(), 1);
  }
}

// PSCW: the origin's complete and the target's wait (or test) report the
// lost link; the next epoch's too.
TEST_F(AgentLostLinkTest, PscwWait) { PscwEpochs(false); }

TEST_F(AgentLostLinkTest, PscwTest) { PscwEpochs(true); }

// A remote holder of the target's exclusive lock loses its link to the
// target with an update queued on it: its unlock fails, but the lock is
// released (by the target's
// node's first rank's agent, through the origin's link there when that is
// another rank, else when it sees the link end), so the target's own
// exclusive lock is granted.
TEST_F(AgentLostLinkTest, LockHolder) {
  const long long granted = AgentLocksGranted();
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == kOrigin) {
    HangWatchdog watchdog(kWatchdogSeconds, "the origin's epoch");
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target_, 0, win_), MPI_SUCCESS);
    ASSERT_EQ(AddOne(), MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(target_, win_), MPI_SUCCESS);
    ASSERT_EQ(FailAgentLink(target_, false), MPI_SUCCESS);
    ASSERT_EQ(AddOne(), MPI_SUCCESS);  // queued: the unlock must send it
    EXPECT_EQ(ErrorClass(MPI_Win_unlock(target_, win_)), MPI_ERR_OTHER);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == server_) {
    EXPECT_EQ(AgentLocksGranted(), granted + 1) << "not the agent's lock";
  }
  HangWatchdog watchdog(kWatchdogSeconds, "the target's lock after it");
  if (Rank() == target_) {
    EXPECT_EQ(TargetCount(), 1);
  }
}

// The same for a lock_all holder: its unlock_all fails, and every node's
// share is released (its own node's by itself, the others' by their
// agents), so the target's exclusive lock is granted.
TEST_F(AgentLostLinkTest, LockAllHolder) {
  const long long granted = AgentLocksGranted();
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == kOrigin) {
    HangWatchdog watchdog(kWatchdogSeconds, "the origin's epoch");
    ASSERT_EQ(MPI_Win_lock_all(0, win_), MPI_SUCCESS);
    ASSERT_EQ(AddOne(), MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(target_, win_), MPI_SUCCESS);
    ASSERT_EQ(FailAgentLink(target_, false), MPI_SUCCESS);
    ASSERT_EQ(AddOne(), MPI_SUCCESS);  // queued: the unlock must send it
    EXPECT_EQ(ErrorClass(MPI_Win_unlock_all(win_)), MPI_ERR_OTHER);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == server_) {
    EXPECT_EQ(AgentLocksGranted(), granted + 1) << "not the agent's share";
  }
  HangWatchdog watchdog(kWatchdogSeconds, "exclusive locks after it");
  // The target's own lock, then every other rank's on the origin.
  if (Rank() == target_) {
    EXPECT_EQ(TargetCount(), 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() != kOrigin) {
    EXPECT_EQ(ReadLocked(kOrigin), 0);
  }
}

// A remote origin waits for the target's exclusive lock when the agent that
// queued its request (the target's node's first rank's) ends its link:
// the origin's lock fails; when the target releases, the dropped request
// takes its turn and leaves at once, so the next exclusive locks are
// granted and read the holder's data.
TEST_F(AgentLostLinkTest, LockWaiter) {
  if (Rank() == target_) {
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target_, 0, win_), MPI_SUCCESS);
    *mem_ = 7;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == kOrigin) {
    HangWatchdog watchdog(kWatchdogSeconds, "the origin's lock");
    EXPECT_EQ(ErrorClass(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target_, 0, win_)),
              MPI_ERR_OTHER);
  } else if (Rank() == server_) {
    // Once the origin's request waits at this agent, so that the cut drops
    // a waiting request.
    PollUntil([] { return AgentLocksWaiting() >= 1; }, kPollSeconds);
    EXPECT_EQ(AgentLocksWaiting(), 1) << "the origin's request never queued";
    EXPECT_EQ(FailLinkFromOnceOpen(kOrigin), MPI_SUCCESS)
        << "the origin never opened its link";
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the target still holds its lock here
  if (Rank() == target_) MPI_Win_unlock(target_, win_);
  MPI_Barrier(MPI_COMM_WORLD);
  HangWatchdog watchdog(kWatchdogSeconds, "locks after the lost waiter");
  if (Rank() == target_) {
    EXPECT_EQ(TargetCount(), 7);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() != kOrigin) {
    EXPECT_EQ(ReadLocked(target_), 7);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == server_) {  // as of the agent's next pass
    PollUntil([] { return AgentLocksWaiting() == 0; }, kPollSeconds);
    EXPECT_EQ(AgentLocksWaiting(), 0) << "the dropped request never left";
  }
}

}  // namespace
