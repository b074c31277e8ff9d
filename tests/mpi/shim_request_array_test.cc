// Request-based RMA on managed windows at its edges: arrays of RMA requests
// alone under an exclusive lock, MPI_Testall that must leave requests alone
// until all are complete, MPI_PROC_NULL targets, and MPI_ERR_RMA_SYNC
// outside passive-target epochs.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <numeric>
#include <utility>
#include <vector>

#include "tests/mpi/shim_request_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::request {
namespace {

// Arrays of RMA requests only, with an inactive entry, under a per-target
// exclusive lock and through a strided datatype on both sides: each index
// is reported once, then MPI_UNDEFINED.
TEST(RequestArrayTest, RmaOnlyArraysUnderExclusiveLock) {
  const int rank = Rank(), size = Size();
  constexpr int kN = 12;
  // Even cells: put/get through `every_other`; cell 1: accumulated.
  AllocWindow w(2 * kN * sizeof(int), sizeof(int));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int* mem = w.base<int>();
  std::fill(mem, mem + 2 * kN, -1);
  MPI_Datatype every_other;
  MPI_Type_vector(kN, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Barrier(MPI_COMM_WORLD);
  const int target = (rank + 1) % size;
  std::vector<int> values(kN), back(2 * kN, -2);
  std::iota(values.begin(), values.end(), rank * 100);
  const Completion kinds[] = {Completion::kWaitany, Completion::kWaitsome,
                              Completion::kTestsome, Completion::kTestany};
  ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win()), MPI_SUCCESS);
  for (Completion how : kinds) {
    std::vector<MPI_Request> requests(3, MPI_REQUEST_NULL);
    EXPECT_EQ(MPI_Rput(values.data(), kN, MPI_INT, target, 0, 1, every_other,
                       w.win(), &requests[0]),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Wait(&requests[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
    // The get must see the put: only a flush orders them.
    EXPECT_EQ(MPI_Win_flush(target, w.win()), MPI_SUCCESS);
    EXPECT_EQ(MPI_Rget(back.data(), 1, every_other, target, 0, 1, every_other,
                       w.win(), &requests[1]),
              MPI_SUCCESS);
    const int one = 1;
    EXPECT_EQ(MPI_Raccumulate(&one, 1, MPI_INT, target, 1, 1, MPI_INT, MPI_SUM,
                              w.win(), &requests[2]),
              MPI_SUCCESS);
    std::vector<MPI_Status> statuses;
    ASSERT_TRUE(Complete(how, requests, statuses)) << Name(how);
    for (int i = 0; i < kN; ++i) {
      EXPECT_EQ(back[2 * i], values[i]) << Name(how) << " element " << i;
      EXPECT_EQ(back[2 * i + 1], -2) << Name(how) << " gap " << i;
    }
    std::fill(back.begin(), back.end(), -2);
  }
  ASSERT_EQ(MPI_Win_unlock(target, w.win()), MPI_SUCCESS);
  MPI_Type_free(&every_other);
  MPI_Barrier(MPI_COMM_WORLD);
  const int origin = (rank + size - 1) % size;
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(mem[2 * i], origin * 100 + i) << "cell " << 2 * i;
  }
  EXPECT_EQ(mem[1], -1 + static_cast<int>(std::size(kinds)));
  for (int i = 1; i < kN; ++i) EXPECT_EQ(mem[2 * i + 1], -1) << 2 * i + 1;
}

// MPI_Testall that returns false modifies no request (MPI-3.1 3.7.5), even
// when some of them (here a node-local MPI_Rput) are complete.
TEST(RequestArrayTest, TestallLeavesRequestsAloneUntilAllComplete) {
  const int rank = Rank(), size = Size();
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  AllocWindow w(sizeof(int64_t), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_MANAGED(w.win());
  *w.base<int64_t>() = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
  const int64_t stamp = 500 + rank;
  int in = -1;
  MPI_Request requests[2];
  EXPECT_EQ(MPI_Rput(&stamp, 1, MPI_INT64_T, rank, 0, 1, MPI_INT64_T, w.win(),
                     &requests[0]),
            MPI_SUCCESS);
  // Nobody sends before the barrier below, so this cannot complete yet.
  MPI_Irecv(&in, 1, MPI_INT, left, kTag, MPI_COMM_WORLD, &requests[1]);
  const MPI_Request before[2] = {requests[0], requests[1]};
  int flag = -1;
  EXPECT_EQ(MPI_Testall(2, requests, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);
  EXPECT_EQ(requests[0], before[0]) << "the completed Rput was modified";
  EXPECT_EQ(requests[1], before[1]);
  MPI_Barrier(MPI_COMM_WORLD);
  const int out = rank;
  MPI_Send(&out, 1, MPI_INT, right, kTag, MPI_COMM_WORLD);
  EXPECT_EQ(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(in, left);
  ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(*w.base<int64_t>(), stamp);
}

// A request-based operation to MPI_PROC_NULL completes at once.
TEST(RequestArrayTest, ProcNullTargetCompletes) {
  AllocWindow w(sizeof(int64_t) * 2, sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_MANAGED(w.win());
  int64_t v = 5, r = -1;
  ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
  // Null to start with, so a call that returns no request shows (and the
  // Testall below stays valid).
  MPI_Request q[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                      MPI_REQUEST_NULL};
  EXPECT_EQ(MPI_Rput(&v, 1, MPI_INT64_T, MPI_PROC_NULL, 0, 1, MPI_INT64_T,
                     w.win(), &q[0]),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_Rget(&r, 1, MPI_INT64_T, MPI_PROC_NULL, 0, 1, MPI_INT64_T,
                     w.win(), &q[1]),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_Raccumulate(&v, 1, MPI_INT64_T, MPI_PROC_NULL, 0, 1,
                            MPI_INT64_T, MPI_SUM, w.win(), &q[2]),
            MPI_SUCCESS);
  EXPECT_EQ(
      MPI_Rget_accumulate(&v, 1, MPI_INT64_T, &r, 1, MPI_INT64_T, MPI_PROC_NULL,
                          0, 1, MPI_INT64_T, MPI_SUM, w.win(), &q[3]),
      MPI_SUCCESS);
  const char* names[] = {"MPI_Rput", "MPI_Rget", "MPI_Raccumulate",
                         "MPI_Rget_accumulate"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(q[i], MPI_REQUEST_NULL) << names[i] << " returned no request";
  }
  int flag = 0;
  EXPECT_TRUE(PollUntil(
      [&] {
        EXPECT_EQ(MPI_Testall(4, q, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        return flag != 0;
      },
      kTimeoutSeconds));
  EXPECT_EQ(r, -1) << "nothing is read from MPI_PROC_NULL";
  ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
}

// Request-based operations are valid only in passive-target epochs
// (MPI-3.1 11.3.5): with no epoch, in a fence epoch and in a PSCW epoch
// they fail with MPI_ERR_RMA_SYNC, create no request and write nothing.
// (Native MPICH checks only the no-epoch case and carries them out in
// fence and PSCW epochs.)
TEST(RequestErrorsTest, OutsidePassiveEpochIsRmaSync) {
  const int rank = Rank(), size = Size();
  AllocWindow w(4 * sizeof(int64_t), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  MPI_Win_set_errhandler(w.win(), MPI_ERRORS_RETURN);
  int64_t* mem = w.base<int64_t>();
  for (int i = 0; i < 4; ++i) mem[i] = 100 * rank + i;
  MPI_Group world, self;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &rank, &self);
  MPI_Barrier(MPI_COMM_WORLD);
  const int target = (rank + 1) % size;
  enum class Epoch { kNone, kFence, kPscw };
  for (Epoch epoch : {Epoch::kNone, Epoch::kFence, Epoch::kPscw}) {
    // PSCW: an epoch on self, so the call is refused for its kind, not
    // for its target.
    const int t = epoch == Epoch::kPscw ? rank : target;
    if (epoch == Epoch::kFence) MPI_Win_fence(0, w.win());
    if (epoch == Epoch::kPscw) {
      MPI_Win_post(self, 0, w.win());
      MPI_Win_start(self, 0, w.win());
    }
    const int64_t v = -7;
    int64_t r = -9;
    std::vector<std::pair<const char*, std::function<int(MPI_Request*)>>>
        calls = {
            {"MPI_Rput",
             [&](MPI_Request* q) {
               return MPI_Rput(&v, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T,
                               w.win(), q);
             }},
            {"MPI_Rget",
             [&](MPI_Request* q) {
               return MPI_Rget(&r, 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T,
                               w.win(), q);
             }},
            {"MPI_Raccumulate",
             [&](MPI_Request* q) {
               return MPI_Raccumulate(&v, 1, MPI_INT64_T, t, 2, 1, MPI_INT64_T,
                                      MPI_SUM, w.win(), q);
             }},
            {"MPI_Rget_accumulate",
             [&](MPI_Request* q) {
               return MPI_Rget_accumulate(&v, 1, MPI_INT64_T, &r, 1,
                                          MPI_INT64_T, t, 3, 1, MPI_INT64_T,
                                          MPI_SUM, w.win(), q);
             }},
        };
    for (const auto& [name, call] : calls) {
      MPI_Request q = MPI_REQUEST_NULL;
      EXPECT_EQ(ErrorClass(call(&q)), MPI_ERR_RMA_SYNC)
          << name << " in epoch " << static_cast<int>(epoch);
      if (q != MPI_REQUEST_NULL) {
        ADD_FAILURE() << name << " returned a request";
        MPI_Wait(&q, MPI_STATUS_IGNORE);
      }
      EXPECT_EQ(r, -9) << name << " wrote the result buffer";
    }
    if (epoch == Epoch::kFence) MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win());
    if (epoch == Epoch::kPscw) {
      MPI_Win_complete(w.win());
      MPI_Win_wait(w.win());
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(mem[i], 100 * rank + i) << "cell " << i << " written";
  }
  MPI_Group_free(&self);
  MPI_Group_free(&world);
}

}  // namespace
}  // namespace rmashim_test::request
