/* A small two-rank RMA program for valgrind memcheck under librmashim.so:
 * MPI_Win_allocate, passive-target put/get/accumulate/fetch_and_op/
 * compare_and_swap under exclusive and shared locks, lock_all + flush, and a
 * fence epoch. Checks every value it reads back and prints one line per
 * phase; exits non-zero on the first mismatch. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 64

static int rank, size;

static void Check(int ok, const char* what, long got, long want) {
  if (!ok) {
    fprintf(stderr, "rank %d: %s: got %ld, want %ld\n", rank, what, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int peer = 1 - rank;

  int64_t* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  /* Whether the shim manages the window (the test requires it: otherwise
   * valgrind would check MPICH's path only). */
  typedef int (*IsManaged)(MPI_Win, int*);
  IsManaged is_managed =
      (IsManaged)(uintptr_t)dlsym(RTLD_DEFAULT, "rmashim_win_is_managed");
  int managed = 0;
  if (is_managed == NULL || is_managed(win, &managed) != MPI_SUCCESS)
    managed = 0;
  if (rank == 0) printf("managed=%d\n", managed);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  for (int i = 0; i < N; ++i) base[i] = 0;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Put: each rank writes its pattern into the peer's first half. */
  int64_t src[N / 2];
  for (int i = 0; i < N / 2; ++i) src[i] = 1000 * (rank + 1) + i;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win);
  MPI_Put(src, N / 2, MPI_INT64_T, peer, 0, N / 2, MPI_INT64_T, win);
  MPI_Win_unlock(peer, win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Get it back from the peer and check. */
  int64_t got[N / 2];
  MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
  MPI_Get(got, N / 2, MPI_INT64_T, peer, 0, N / 2, MPI_INT64_T, win);
  MPI_Win_unlock(peer, win);
  for (int i = 0; i < N / 2; ++i)
    Check(got[i] == src[i], "get", got[i], src[i]);
  if (rank == 0) printf("put/get ok\n");
  MPI_Barrier(MPI_COMM_WORLD);

  /* Accumulate: both ranks add into rank 0's second half, 10 times. */
  int64_t one[N / 2];
  for (int i = 0; i < N / 2; ++i) one[i] = i + 1;
  for (int k = 0; k < 10; ++k) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Accumulate(one, N / 2, MPI_INT64_T, 0, N / 2, N / 2, MPI_INT64_T,
                   MPI_SUM, win);
    MPI_Win_unlock(0, win);
  }
  /* fetch_and_op and compare_and_swap on rank 1's last element. */
  MPI_Win_lock_all(0, win);
  int64_t inc = 1, old = -1;
  for (int k = 0; k < 5; ++k) {
    MPI_Fetch_and_op(&inc, &old, MPI_INT64_T, 1, N - 1, MPI_SUM, win);
    MPI_Win_flush(1, win);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    for (int i = 0; i < N / 2; ++i) {
      const int64_t want = 2 * 10 * (i + 1);
      Check(base[N / 2 + i] == want, "accumulate", base[N / 2 + i], want);
    }
    MPI_Win_unlock(0, win);
    printf("accumulate ok\n");
  }
  /* Rank 1's element N-1 (outside the puts and accumulates) is 10 now: 5
   * fetch_and_op increments from each rank. CAS 10 -> 77 from rank 0. */
  if (rank == 0) {
    int64_t cmp = 10, val = 77, res = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Compare_and_swap(&val, &cmp, &res, MPI_INT64_T, 1, N - 1, win);
    MPI_Win_unlock(1, win);
    Check(res == 10, "compare_and_swap result", res, 10);
    printf("fetch_and_op/compare_and_swap ok\n");
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* Fence epoch: every rank puts its rank into element 0 of the peer. */
  MPI_Win_fence(0, win);
  int64_t me = 500 + rank;
  MPI_Put(&me, 1, MPI_INT64_T, peer, 0, 1, MPI_INT64_T, win);
  MPI_Win_fence(0, win);
  Check(base[0] == 500 + peer, "fence put", base[0], 500 + peer);
  if (rank == 1) {
    Check(base[N - 1] == 77, "compare_and_swap target", base[N - 1], 77);
  }
  MPI_Win_fence(0, win);
  if (rank == 0) printf("fence ok\n");

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
