// A rank blocked in an MPI synchronization call is inside MPI, so MPI must
// make progress for it (MPI-3 11.7.3): operations the shim leaves to MPI that
// target such a rank must complete. The windows are MPI_Win_create windows
// over the node communicator (one node in every layout, so the shim serves
// their synchronization in shared memory), and the operations accumulates,
// which the shim leaves to MPI for that flavor. In each test the origin
// dawdles so the target is already blocked when the operation is issued.
// HangWatchdog turns a deadlock into a fast failure.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::HangWatchdog;
using rmashim_test::Rank;
using rmashim_test::ScopedComm;
using rmashim_test::Size;

constexpr double kHangSeconds = 10;
constexpr int kDawdleMicros = 20 * 1000;

// An MPI_Win_create window of a few ints per rank over this rank's node.
class NodeCreateWindow {
 public:
  NodeCreateWindow() : node_(rmashim_test::SplitNodeComm()), mem_(4, 0) {
    rc_ = MPI_Win_create(mem_.data(), mem_.size() * sizeof(int), sizeof(int),
                         MPI_INFO_NULL, node_.get(), &win_);
  }
  ~NodeCreateWindow() { MPI_Win_free(&win_); }
  int rc() const { return rc_; }
  MPI_Win win() const { return win_; }
  MPI_Comm comm() const { return node_.get(); }
  int* mem() { return mem_.data(); }

 private:
  ScopedComm node_;
  std::vector<int> mem_;
  MPI_Win win_ = MPI_WIN_NULL;
  int rc_ = MPI_SUCCESS;
};

// Node rank 0 waits in MPI_Win_lock for an exclusive lock on itself while
// the holder's MPI_Get_accumulate to it needs rank 0's progress.
TEST(ShimProgressTest, LockWaiterServesOperationsOnIt) {
  NodeCreateWindow w;
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ASSERT_MANAGED(w.win());  // else this would test MPICH's own progress
  const int node_rank = Rank(w.comm()), node_size = Size(w.comm());
  const int holder = node_size > 1 ? 1 : 0;
  const int add = 5;
  HangWatchdog watchdog(kHangSeconds, "exclusive lock with a waiting target");
  if (node_rank == holder) {
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win()), MPI_SUCCESS);
    if (holder != 0) MPI_Send(&add, 1, MPI_INT, 0, 7, w.comm());
    usleep(kDawdleMicros);  // rank 0 is waiting for the lock by now
    int old = -1;
    EXPECT_EQ(MPI_Get_accumulate(&add, 1, MPI_INT, &old, 1, MPI_INT, 0, 0, 1,
                                 MPI_INT, MPI_SUM, w.win()),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_unlock(0, w.win()), MPI_SUCCESS);
    EXPECT_EQ(old, 0);
  }
  if (node_rank == 0 && holder != 0) {
    int token = 0;
    MPI_Recv(&token, 1, MPI_INT, holder, 7, w.comm(), MPI_STATUS_IGNORE);
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win()), MPI_SUCCESS);
    int now = -1;
    MPI_Get(&now, 1, MPI_INT, 0, 0, 1, MPI_INT, w.win());
    ASSERT_EQ(MPI_Win_unlock(0, w.win()), MPI_SUCCESS);
    EXPECT_EQ(now, add);
  }
  MPI_Barrier(w.comm());
  if (node_rank == 0) {
    EXPECT_EQ(w.mem()[0], add);
  }
}

// Node rank 0 only exposes its window: it reaches the closing fence at
// once and waits there, while the other node ranks dawdle, then accumulate
// to it (which needs its progress) and fence.
TEST(ShimProgressTest, FenceWaiterServesOperationsOnIt) {
  NodeCreateWindow w;
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ASSERT_MANAGED(w.win());  // else this would test MPICH's own progress
  const int node_rank = Rank(w.comm()), node_size = Size(w.comm());
  const bool origin = node_rank != 0 || node_size == 1;
  HangWatchdog watchdog(kHangSeconds, "fence with accumulates");
  ASSERT_EQ(MPI_Win_fence(0, w.win()), MPI_SUCCESS);
  if (origin) {
    usleep(kDawdleMicros);
    const int mine = node_rank + 1;
    EXPECT_EQ(
        MPI_Accumulate(&mine, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, w.win()),
        MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win()), MPI_SUCCESS);
  if (node_rank == 0) {
    // Every origin added its node rank + 1.
    int expected = 0;
    for (int r = 0; r < node_size; ++r) {
      if (r != 0 || node_size == 1) expected += r + 1;
    }
    EXPECT_EQ(w.mem()[0], expected);
  }
}

// Node rank 0 exposes its window and waits in MPI_Win_wait; node rank 1
// starts an access epoch, dawdles, accumulates to it and completes.
TEST(ShimProgressTest, PscwWaiterServesOperationsOnIt) {
  NodeCreateWindow w;
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ASSERT_MANAGED(w.win());  // else this would test MPICH's own progress
  const int node_rank = Rank(w.comm()), node_size = Size(w.comm());
  const int target = 0, origin = node_size > 1 ? 1 : 0;
  MPI_Group group, target_group, origin_group;
  MPI_Comm_group(w.comm(), &group);
  MPI_Group_incl(group, 1, &target, &target_group);
  MPI_Group_incl(group, 1, &origin, &origin_group);
  const int add = 9;
  {
    HangWatchdog watchdog(kHangSeconds, "PSCW with accumulates");
    if (node_rank == target) {
      ASSERT_EQ(MPI_Win_post(origin_group, 0, w.win()), MPI_SUCCESS);
    }
    if (node_rank == origin) {
      ASSERT_EQ(MPI_Win_start(target_group, 0, w.win()), MPI_SUCCESS);
      usleep(kDawdleMicros);  // the target is in MPI_Win_wait by now
      EXPECT_EQ(MPI_Accumulate(&add, 1, MPI_INT, target, 0, 1, MPI_INT, MPI_SUM,
                               w.win()),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Win_complete(w.win()), MPI_SUCCESS);
    }
    if (node_rank == target) {
      ASSERT_EQ(MPI_Win_wait(w.win()), MPI_SUCCESS);
      EXPECT_EQ(w.mem()[0], add);
    }
  }
  MPI_Group_free(&target_group);
  MPI_Group_free(&origin_group);
  MPI_Group_free(&group);
  MPI_Barrier(w.comm());
}

}  // namespace
