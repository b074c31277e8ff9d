// The ranks of a window's communicator agree whether the shim manages it,
// even when the shim can manage it on some ranks only. Run with
// RMASHIM_TEST_WINDOW_LIMIT=1 on world rank 1 alone (tests/mpi/BUILD): there
// the table holds one window, so a second live window cannot be managed on that
// rank; it must then be left to MPI on every rank (managed on some ranks
// only, windows deadlocked or excluded nothing), work, and hold the right
// data; once the first is freed, windows are managed again everywhere.
#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>
#include <memory>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::HangWatchdog;
using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::ScopedComm;
using rmashim_test::Size;

constexpr int kSlots = 64;  // ints per rank

// One window of some flavor over `comm`, freed at scope exit.
class TestWindow {
 public:
  enum Kind { kAllocate, kCreate, kShared };
  TestWindow(Kind kind, MPI_Comm comm) : comm_(comm) {
    const MPI_Aint bytes = kSlots * sizeof(int);
    switch (kind) {
      case kAllocate:
        rc_ = MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, comm, &base_,
                               &win_);
        break;
      case kCreate:
        own_.resize(kSlots);
        base_ = own_.data();
        rc_ = MPI_Win_create(base_, bytes, sizeof(int), MPI_INFO_NULL, comm,
                             &win_);
        break;
      case kShared:
        rc_ = MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, comm,
                                      &base_, &win_);
        break;
    }
  }
  ~TestWindow() {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
  }
  int rc() const { return rc_; }
  MPI_Win win() const { return win_; }
  int* base() const { return static_cast<int*>(base_); }

  // -1 if the ranks of the communicator disagree, else whether all manage it.
  int AgreedManaged() const {
    const int mine = IsManaged(win_) ? 1 : 0;
    int lo = 0, hi = 0;
    MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, comm_);
    MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, comm_);
    return lo == hi ? lo : -1;
  }

 private:
  MPI_Comm comm_;
  std::vector<int> own_;
  void* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
  int rc_ = MPI_SUCCESS;
};

// Puts, gets and contended accumulates under every synchronization kind the
// exclusion depends on, checked on data.
void ExpectWindowWorks(const TestWindow& w, MPI_Comm comm) {
  const int rank = Rank(comm), size = Size(comm);
  int* mem = w.base();
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win());
  for (int i = 0; i < kSlots; ++i) mem[i] = 0;
  MPI_Win_unlock(rank, w.win());
  MPI_Barrier(comm);
  // Slot `rank` of every target: put under lock_all.
  MPI_Win_lock_all(0, w.win());
  for (int t = 0; t < size; ++t) {
    const int value = 1000 * rank + t;
    MPI_Put(&value, 1, MPI_INT, t, rank, 1, MPI_INT, w.win());
  }
  MPI_Win_unlock_all(w.win());
  // Slot kSlots-1 of every target: read-modify-write under exclusive locks
  // (a lost update shows when the locks do not exclude one another).
  constexpr int kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    for (int t = 0; t < size; ++t) {
      int value = 0;
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win());
      MPI_Get(&value, 1, MPI_INT, t, kSlots - 1, 1, MPI_INT, w.win());
      MPI_Win_flush(t, w.win());
      ++value;
      MPI_Put(&value, 1, MPI_INT, t, kSlots - 1, 1, MPI_INT, w.win());
      MPI_Win_unlock(t, w.win());
    }
  }
  MPI_Win_fence(0, w.win());
  // Fence epoch: every rank reads its right neighbour's slots.
  std::vector<int> seen(kSlots, -1);
  MPI_Get(seen.data(), kSlots, MPI_INT, (rank + 1) % size, 0, kSlots, MPI_INT,
          w.win());
  MPI_Win_fence(0, w.win());
  const int right = (rank + 1) % size;
  for (int o = 0; o < size; ++o) {
    EXPECT_EQ(seen[o], 1000 * o + right) << "slot " << o;
  }
  EXPECT_EQ(seen[kSlots - 1], kRounds * size) << "lost updates";
  MPI_Barrier(comm);
}

// A first window (managed on every rank), then a second one while the first
// lives (rank 1's table is full: MPI's on every rank), then a third after
// both are freed (managed again).
void RunScenario(TestWindow::Kind kind, MPI_Comm comm, bool limited_here) {
  HangWatchdog watchdog(60, "window creation with one rank's table full");
  {
    TestWindow first(kind, comm);
    ASSERT_EQ(first.rc(), MPI_SUCCESS);
    EXPECT_EQ(first.AgreedManaged(), 1) << "first window";
    {
      TestWindow second(kind, comm);
      ASSERT_EQ(second.rc(), MPI_SUCCESS);
      EXPECT_EQ(second.AgreedManaged(), limited_here ? 0 : 1)
          << "second window (-1: ranks disagree)";
      ExpectWindowWorks(second, comm);
    }
    ExpectWindowWorks(first, comm);
  }
  TestWindow third(kind, comm);
  ASSERT_EQ(third.rc(), MPI_SUCCESS);
  EXPECT_EQ(third.AgreedManaged(), 1) << "third window";
  ExpectWindowWorks(third, comm);
}

// Whether world rank 1 (the limited one) is in `comm`. Collective.
bool HoldsLimitedRank(MPI_Comm comm) {
  const int mine = Rank(MPI_COMM_WORLD) == 1 ? 1 : 0;
  int any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  return any != 0;
}

TEST(ShimAgreementTest, AllocateWithOneRankFull) {
  RunScenario(TestWindow::kAllocate, MPI_COMM_WORLD, true);
}

TEST(ShimAgreementTest, CreateWithOneRankFull) {
  RunScenario(TestWindow::kCreate, MPI_COMM_WORLD, true);
}

TEST(ShimAgreementTest, SharedWithOneRankFull) {
  ScopedComm node(rmashim_test::SplitNodeComm());
  RunScenario(TestWindow::kShared, node.get(), HoldsLimitedRank(node.get()));
}

}  // namespace
