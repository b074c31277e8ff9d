// MPI-4's large-count RMA calls (MPI_Put_c, MPI_Get_c, MPI_Accumulate_c,
// MPI_Get_accumulate_c and their request forms) on a managed window, in
// lock_all, fence and exclusive-lock epochs: data checked, and completed by
// the synchronization that ends each epoch (also on windows spanning
// nodes, where the shim's flushes call MPI only for targets it handed
// operations to). Runs natively too (the same expectations).
#include <gtest/gtest.h>
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::Rank;
using rmashim_test::Size;

constexpr int kWords = 8;  // 0-3: from the left neighbour; 4: counter

bool UnderShim() {
  const char* v = std::getenv("RMASHIM_EXPECT_MANAGED");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

int64_t Pattern(int from, int i) { return from * 1000 + i + 1; }

class LargeCountCalls : public testing::Test {
 protected:
  LargeCountCalls() : window_(kWords * 8, 8) {
    EXPECT_EQ(MPI_SUCCESS, window_.rc());
    if (UnderShim()) {
      EXPECT_MANAGED(window_.win());
    }
    MPI_Win_set_errhandler(window_.win(), MPI_ERRORS_RETURN);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, Rank(), 0, window_.win());
    std::memset(window_.base(), 0, kWords * 8);
    MPI_Win_unlock(Rank(), window_.win());
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // Puts this rank's pattern to the right neighbour's words 0-3 and adds 1
  // to rank 0's counter; returns what a get_accumulate(NO_OP) read there.
  void Issue(bool requests) {
    const int right = (Rank() + 1) % Size();
    for (int i = 0; i < 4; ++i) mine_[i] = Pattern(Rank(), i);
    const MPI_Count four = 4, one = 1;
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (requests) {
      ASSERT_EQ(MPI_SUCCESS,
                MPI_Rput_c(mine_, four, MPI_INT64_T, right, 0, four,
                           MPI_INT64_T, window_.win(), &r[0]));
      ASSERT_EQ(MPI_SUCCESS,
                MPI_Raccumulate_c(&one_, one, MPI_INT64_T, 0, 4, one,
                                  MPI_INT64_T, MPI_SUM, window_.win(), &r[1]));
      ASSERT_EQ(MPI_SUCCESS, MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    } else {
      ASSERT_EQ(MPI_SUCCESS, MPI_Put_c(mine_, four, MPI_INT64_T, right, 0, four,
                                       MPI_INT64_T, window_.win()));
      ASSERT_EQ(MPI_SUCCESS,
                MPI_Accumulate_c(&one_, one, MPI_INT64_T, 0, 4, one,
                                 MPI_INT64_T, MPI_SUM, window_.win()));
    }
  }
  // After the epoch: the left neighbour's pattern here, and every rank's
  // increment on rank 0, read with get_c and get_accumulate_c (NO_OP).
  void Check(int increments_per_rank) {
    MPI_Barrier(MPI_COMM_WORLD);
    const int left = (Rank() + Size() - 1) % Size();
    int64_t got[4] = {}, counter = -1, fetched = -1;
    const MPI_Count four = 4, one = 1;
    MPI_Win_lock_all(0, window_.win());
    ASSERT_EQ(MPI_SUCCESS, MPI_Get_c(got, four, MPI_INT64_T, Rank(), 0, four,
                                     MPI_INT64_T, window_.win()));
    ASSERT_EQ(MPI_SUCCESS, MPI_Get_c(&counter, one, MPI_INT64_T, 0, 4, one,
                                     MPI_INT64_T, window_.win()));
    MPI_Request r = MPI_REQUEST_NULL;
    ASSERT_EQ(MPI_SUCCESS,
              MPI_Rget_accumulate_c(nullptr, 0, MPI_INT64_T, &fetched, one,
                                    MPI_INT64_T, 0, 4, one, MPI_INT64_T,
                                    MPI_NO_OP, window_.win(), &r));
    ASSERT_EQ(MPI_SUCCESS, MPI_Wait(&r, MPI_STATUS_IGNORE));
    ASSERT_EQ(MPI_SUCCESS, MPI_Win_flush_all(window_.win()));
    MPI_Win_unlock_all(window_.win());
    for (int i = 0; i < 4; ++i) EXPECT_EQ(Pattern(left, i), got[i]) << i;
    EXPECT_EQ(increments_per_rank * Size(), counter);
    EXPECT_EQ(counter, fetched);
    int64_t again = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, window_.win());
    ASSERT_EQ(
        MPI_SUCCESS,
        MPI_Get_accumulate_c(nullptr, 0, MPI_INT64_T, &again, one, MPI_INT64_T,
                             0, 4, one, MPI_INT64_T, MPI_NO_OP, window_.win()));
    MPI_Win_unlock(0, window_.win());
    EXPECT_EQ(counter, again);
    MPI_Barrier(MPI_COMM_WORLD);
  }

  AllocWindow window_;
  int64_t mine_[4] = {};
  const int64_t one_ = 1;
};

TEST_F(LargeCountCalls, LockAllFlushAll) {
  MPI_Win_lock_all(0, window_.win());
  Issue(false);
  ASSERT_EQ(MPI_SUCCESS, MPI_Win_flush_all(window_.win()));
  MPI_Win_unlock_all(window_.win());
  Check(1);
}

TEST_F(LargeCountCalls, RequestsInLockAll) {
  MPI_Win_lock_all(0, window_.win());
  Issue(true);
  ASSERT_EQ(MPI_SUCCESS, MPI_Win_flush_all(window_.win()));
  MPI_Win_unlock_all(window_.win());
  Check(1);
}

TEST_F(LargeCountCalls, Fence) {
  MPI_Win_fence(0, window_.win());
  Issue(false);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, window_.win());
  Check(1);
}

TEST_F(LargeCountCalls, ExclusiveLocks) {
  const int right = (Rank() + 1) % Size();
  for (int i = 0; i < 4; ++i) mine_[i] = Pattern(Rank(), i);
  const MPI_Count four = 4, one = 1;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, window_.win());
  ASSERT_EQ(MPI_SUCCESS, MPI_Put_c(mine_, four, MPI_INT64_T, right, 0, four,
                                   MPI_INT64_T, window_.win()));
  MPI_Win_unlock(right, window_.win());
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, window_.win());
  ASSERT_EQ(MPI_SUCCESS, MPI_Accumulate_c(&one_, one, MPI_INT64_T, 0, 4, one,
                                          MPI_INT64_T, MPI_SUM, window_.win()));
  MPI_Win_unlock(0, window_.win());
  Check(1);
}

// Outside any epoch: MPI_ERR_RMA_SYNC, as from the int-count forms.
TEST_F(LargeCountCalls, NoEpochIsAnError) {
  const MPI_Count one = 1;
  int cls = MPI_SUCCESS;
  MPI_Error_class(MPI_Put_c(&one_, one, MPI_INT64_T, (Rank() + 1) % Size(), 0,
                            one, MPI_INT64_T, window_.win()),
                  &cls);
  EXPECT_EQ(MPI_ERR_RMA_SYNC, cls);
}

// As on an MPI-3 library (RMASHIM_TEST_WITHOUT_MPI4=1: the shim acts as if
// MPI had no large-count functions, shim/base/large_count_calls.h): counts
// that fit an int still work (the tests above), larger ones are
// MPI_ERR_COUNT on the window's handler, and nothing is touched.
TEST_F(LargeCountCalls, BeyondIntWithoutMpi4IsCountError) {
  const char* v = std::getenv("RMASHIM_TEST_WITHOUT_MPI4");
  if (v == nullptr || std::strcmp(v, "1") != 0) {
    GTEST_SKIP() << "only without MPI-4's large-count functions";
  }
  const MPI_Count beyond = MPI_Count{INT_MAX} + 1;
  MPI_Win_lock_all(0, window_.win());
  int cls = MPI_SUCCESS;
  MPI_Error_class(MPI_Put_c(&one_, beyond, MPI_BYTE, (Rank() + 1) % Size(), 0,
                            beyond, MPI_BYTE, window_.win()),
                  &cls);
  EXPECT_EQ(MPI_ERR_COUNT, cls);
  MPI_Error_class(MPI_Accumulate_c(&one_, beyond, MPI_BYTE, 0, 0, beyond,
                                   MPI_BYTE, MPI_BOR, window_.win()),
                  &cls);
  EXPECT_EQ(MPI_ERR_COUNT, cls);
  MPI_Win_unlock_all(window_.win());
  for (int i = 0; i < kWords; ++i) {
    EXPECT_EQ(0, window_.base<int64_t>()[i]) << "word " << i;
  }
}

}  // namespace
