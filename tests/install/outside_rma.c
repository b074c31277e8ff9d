/* An MPI RMA program as a user would write it outside this project, built
 * with mpicc.mpich and the installed rmashim.pc and run under the installed
 * launcher (launcher_test.sh): puts around a ring, accumulates into rank 0
 * and gets back from the left neighbour on an MPI_Win_allocate window the
 * shim serves, plus a few puts on a dynamic window the shim passes to MPI (so
 * the profile has a fallback for the report's advice). Prints one result
 * line on rank 0 and exits non-zero if any value is wrong. */
#include <dlfcn.h>
#include <mpi.h>
#include <rmashim/rmashim.h>
#include <stdio.h>

enum { kInts = 256, kAccRounds = 5, kDynamicPuts = 3 };

/* 1 when the preloaded shim manages `win`, 0 when not, -1 when no shim is
 * loaded (looked up at run time: the program does not link the shim). */
static int managed(MPI_Win win) {
  int (*is_managed)(MPI_Win, int *) =
      (int (*)(MPI_Win, int *))dlsym(RTLD_DEFAULT, "rmashim_win_is_managed");
  int flag = -1;
  if (is_managed != NULL) is_managed(win, &flag);
  return flag;
}

/* Every rank writes kInts values into its right neighbour, accumulates its
 * rank + 1 into rank 0 kAccRounds times, then reads its left neighbour
 * back. Returns the number of wrong values this rank saw. */
static int ring(MPI_Win win, int *base, int rank, int size) {
  int out[kInts], back[kInts], wrong = 0;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int i = 0; i < kInts; ++i) out[i] = rank * 1000 + i;
  MPI_Win_lock_all(0, win);
  MPI_Put(out, kInts, MPI_INT, right, 0, kInts, MPI_INT, win);
  MPI_Win_flush_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(win);
  for (int i = 0; i < kInts; ++i) wrong += base[i] != left * 1000 + i;
  const int mine = rank + 1;
  for (int r = 0; r < kAccRounds; ++r) {
    MPI_Accumulate(&mine, 1, MPI_INT, 0, kInts, 1, MPI_INT, MPI_SUM, win);
  }
  MPI_Win_flush_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(win);
  MPI_Get(back, kInts, MPI_INT, left, 0, kInts, MPI_INT, win);
  MPI_Win_flush_all(win);
  MPI_Win_unlock_all(win);
  const int left_of_left = (left + size - 1) % size;
  for (int i = 0; i < kInts; ++i) wrong += back[i] != left_of_left * 1000 + i;
  if (rank == 0) wrong += base[kInts] != kAccRounds * size * (size + 1) / 2;
  return wrong;
}

/* kDynamicPuts puts into rank 0's attached int (the shim leaves dynamic
 * windows to MPI). Returns the number of wrong values. */
static int dynamic(int rank, int size) {
  MPI_Win win;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_set_name(win, "dynamic");
  int slot[1] = {-1};
  MPI_Win_attach(win, slot, sizeof slot);
  MPI_Aint address;
  MPI_Get_address(slot, &address);
  MPI_Bcast(&address, 1, MPI_AINT, 0, MPI_COMM_WORLD);
  MPI_Win_fence(0, win);
  if (rank == size - 1) {
    for (int i = 0; i < kDynamicPuts; ++i) {
      MPI_Put(&i, 1, MPI_INT, 0, address, 1, MPI_INT, win);
      MPI_Win_fence(0, win);
    }
  } else {
    for (int i = 0; i < kDynamicPuts; ++i) MPI_Win_fence(0, win);
  }
  const int wrong = rank == 0 && slot[0] != kDynamicPuts - 1;
  MPI_Win_detach(win, slot);
  MPI_Win_free(&win);
  return wrong;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int *base;
  MPI_Win win;
  /* A multiple of 16 bytes: native MPICH 4.0.2 misplaces node-local RMA on
   * other sizes (docs/using-and-tuning.md "Real applications"), and --disable
   * runs natively. */
  MPI_Win_allocate((kInts + 4) * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  MPI_Win_set_name(win, "ring");
  for (int i = 0; i <= kInts; ++i) base[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  int wrong = ring(win, base, rank, size);
  const int is_managed = managed(win);
  const int sum = base[kInts];
  MPI_Win_free(&win);
  wrong += dynamic(rank, size);
  int all = 0;
  MPI_Reduce(&wrong, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("outside_rma: ranks=%d wrong=%d accumulated=%d managed=%d\n", size,
           all, sum, is_managed);
  }
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
