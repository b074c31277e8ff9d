// Run with RMASHIM_DISABLE=1: the shim is loaded but must leave every window
// to MPI, and RMA must work as native MPICH does.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::IsManaged;
using rmashim_test::NativeSafeBytes;
using rmashim_test::Rank;
using rmashim_test::Size;

TEST(ShimDisabledTest, ShimIsLoadedButManagesNothing) {
  // Without the shim this test would prove nothing.
  ASSERT_NE(dlsym(RTLD_DEFAULT, "rmashim_win_is_managed"), nullptr);
  const int size = Size();
  AllocWindow allocated(NativeSafeBytes(size * sizeof(int)), sizeof(int));
  ASSERT_EQ(allocated.rc(), MPI_SUCCESS);
  EXPECT_FALSE(IsManaged(allocated.win()));
  int* flavor = nullptr;
  void* base = nullptr;
  int flag = 0;
  MPI_Win_get_attr(allocated.win(), MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  ASSERT_TRUE(flag);
  EXPECT_EQ(*flavor, MPI_WIN_FLAVOR_ALLOCATE);
  MPI_Win_get_attr(allocated.win(), MPI_WIN_BASE, &base, &flag);
  ASSERT_TRUE(flag);
  EXPECT_EQ(base, allocated.base<void>());

  std::vector<int> mem(size);
  MPI_Win created;
  ASSERT_EQ(MPI_Win_create(mem.data(), size * sizeof(int), sizeof(int),
                           MPI_INFO_NULL, MPI_COMM_WORLD, &created),
            MPI_SUCCESS);
  EXPECT_FALSE(IsManaged(created));
  MPI_Win_free(&created);
}

TEST(ShimDisabledTest, PassiveAndActiveTargetRmaWork) {
  const int rank = Rank(), size = Size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  // Slot per origin, plus a counter at the end.
  AllocWindow w(NativeSafeBytes((size + 1) * sizeof(int64_t)), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ASSERT_FALSE(IsManaged(w.win()));
  int64_t* mem = w.base<int64_t>();
  for (int i = 0; i <= size; ++i) mem[i] = -1;
  mem[size] = 0;
  MPI_Barrier(MPI_COMM_WORLD);

  // lock_all: everyone puts into everyone's slot and reads it back.
  MPI_Win_lock_all(0, w.win());
  for (int t = 0; t < size; ++t) {
    const int64_t value = rank * 100 + t;
    EXPECT_EQ(MPI_Put(&value, 1, MPI_INT64_T, t, rank, 1, MPI_INT64_T, w.win()),
              MPI_SUCCESS);
  }
  MPI_Win_flush_all(w.win());
  std::vector<int64_t> got(size, -2);
  for (int t = 0; t < size; ++t) {
    MPI_Get(&got[t], 1, MPI_INT64_T, t, rank, 1, MPI_INT64_T, w.win());
  }
  MPI_Win_unlock_all(w.win());
  for (int t = 0; t < size; ++t) EXPECT_EQ(got[t], rank * 100 + t);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int o = 0; o < size; ++o) EXPECT_EQ(mem[o], o * 100 + rank);

  // Exclusive locks: a counter at rank 0 loses no update.
  constexpr int kRounds = 5;
  for (int i = 0; i < kRounds; ++i) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win());
    int64_t counter = -1;
    MPI_Get(&counter, 1, MPI_INT64_T, 0, size, 1, MPI_INT64_T, w.win());
    MPI_Win_flush(0, w.win());
    ++counter;
    MPI_Put(&counter, 1, MPI_INT64_T, 0, size, 1, MPI_INT64_T, w.win());
    MPI_Win_unlock(0, w.win());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    EXPECT_EQ(mem[size], int64_t{kRounds} * size);
  }

  // Fence: put to the right neighbour and accumulate into its counter.
  MPI_Win_fence(0, w.win());
  const int64_t stamp = 7000 + rank, one = 1;
  EXPECT_EQ(
      MPI_Put(&stamp, 1, MPI_INT64_T, next, rank, 1, MPI_INT64_T, w.win()),
      MPI_SUCCESS);
  EXPECT_EQ(MPI_Accumulate(&one, 1, MPI_INT64_T, next, size, 1, MPI_INT64_T,
                           MPI_SUM, w.win()),
            MPI_SUCCESS);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win());
  EXPECT_EQ(mem[prev], 7000 + prev);
  EXPECT_EQ(mem[size], (rank == 0 ? int64_t{kRounds} * size : 0) + 1);
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
