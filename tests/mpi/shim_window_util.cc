// The attribute reader and the all-to-all round of shim_window_util.h.
#include "tests/mpi/shim_window_util.h"

#include <gtest/gtest.h>

#include "tests/mpi_test_util.h"

namespace rmashim_test::window {

WinAttrs GetAttrs(MPI_Win win) {
  WinAttrs a;
  int f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0;
  void* base = nullptr;
  MPI_Aint* size = nullptr;
  int *disp_unit = nullptr, *flavor = nullptr, *model = nullptr;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &f1);
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &f2);
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &disp_unit, &f3);
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &f4);
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &f5);
  a.ok = f1 && f2 && f3 && f4 && f5;
  if (!a.ok) return a;
  a.base = base;
  a.size = *size;
  a.disp_unit = *disp_unit;
  a.flavor = *flavor;
  a.model = *model;
  return a;
}

void ExpectAllToAllPutGet(MPI_Win win, int* local, MPI_Comm comm,
                          const std::vector<MPI_Aint>& dynamic_base) {
  const int rank = Rank(comm), size = Size(comm);
  const int salt = 17;
  auto disp = [&](int t, int slot) -> MPI_Aint {
    return dynamic_base.empty() ? slot : dynamic_base[t] + slot * sizeof(int);
  };
  for (int i = 0; i < size; ++i) local[i] = -1;
  MPI_Barrier(comm);
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < size; ++t) {
    const int value = rank * salt + t;
    EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, t, disp(t, rank), 1, MPI_INT, win),
              MPI_SUCCESS);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(comm);
  for (int origin = 0; origin < size; ++origin) {
    EXPECT_EQ(local[origin], origin * salt + rank) << "from " << origin;
  }
  std::vector<int> got(size * size, -2);
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < size; ++t) {
    EXPECT_EQ(MPI_Get(&got[t * size], size, MPI_INT, t, disp(t, 0), size,
                      MPI_INT, win),
              MPI_SUCCESS);
  }
  MPI_Win_unlock_all(win);
  for (int t = 0; t < size; ++t) {
    for (int origin = 0; origin < size; ++origin) {
      EXPECT_EQ(got[t * size + origin], origin * salt + t)
          << "target " << t << " slot " << origin;
    }
  }
  MPI_Barrier(comm);
}

}  // namespace rmashim_test::window
