// Basic managed-window behaviour under the preloaded shim: every rank puts
// to every rank and reads back.
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "tests/mpi_test_util.h"

namespace {

TEST(ShimBasicTest, EveryRankPutsToEveryRank) {
  const int rank = rmashim_test::Rank(), size = rmashim_test::Size();
  int* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate(size * sizeof(int), sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &base, &win),
            MPI_SUCCESS);
  EXPECT_TRUE(rmashim_test::IsManaged(win));
  for (int i = 0; i < size; ++i) base[i] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < size; ++t) {
    const int value = rank * 100 + t;
    ASSERT_EQ(MPI_Put(&value, 1, MPI_INT, t, rank, 1, MPI_INT, win),
              MPI_SUCCESS);
  }
  MPI_Win_flush_all(win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int origin = 0; origin < size; ++origin) {
    EXPECT_EQ(base[origin], origin * 100 + rank) << "from origin " << origin;
  }
  MPI_Win_free(&win);
}

}  // namespace
