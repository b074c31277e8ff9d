/* A program with known RMA operation counts, run under the shim with
 * RMASHIM_PROFILE set; check_profile.py compares the profile's JSON with the
 * counts this program's structure implies (kept in one place: kPuts etc.). */
#include <mpi.h>
#include <stdlib.h>

enum { kPuts = 3, kGets = 2, kAccs = 5, kOptOutPuts = 4, kLocks = 2 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* "counts": every rank puts kPuts and gets kGets ints to/from every rank,
   * accumulates kAccs times into rank 0, one fetch_and_op to every rank, one
   * compare_and_swap on itself, and kLocks lock/unlock pairs on rank 0. */
  long* base;
  MPI_Win win;
  MPI_Win_allocate(64 * sizeof(long), sizeof(long), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  MPI_Win_set_name(win, "counts");
  long v = rank, r;
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < size; ++t) {
    for (int i = 0; i < kPuts; ++i) MPI_Put(&v, 1, MPI_LONG, t, rank, 1, MPI_LONG, win);
    for (int i = 0; i < kGets; ++i) MPI_Get(&r, 1, MPI_LONG, t, rank, 1, MPI_LONG, win);
    MPI_Fetch_and_op(&v, &r, MPI_LONG, t, 40, MPI_SUM, win);
  }
  for (int i = 0; i < kAccs; ++i) {
    MPI_Accumulate(&v, 1, MPI_LONG, 0, 41, 1, MPI_LONG, MPI_SUM, win);
  }
  long compare = 0;
  MPI_Compare_and_swap(&v, &compare, &r, MPI_LONG, rank, 42, win);
  MPI_Win_flush_all(win);
  MPI_Win_unlock_all(win);
  for (int i = 0; i < kLocks; ++i) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* "optout": a plain MPI window; kOptOutPuts puts to itself. */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "rmashim_managed", "false");
  long* base2;
  MPI_Win optout;
  MPI_Win_allocate(8 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD,
                   &base2, &optout);
  MPI_Info_free(&info);
  MPI_Win_set_name(optout, "optout");
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, optout);
  for (int i = 0; i < kOptOutPuts; ++i) MPI_Put(&v, 1, MPI_LONG, rank, 0, 1, MPI_LONG, optout);
  MPI_Win_unlock(rank, optout);

  /* Freed before finalize, like the others; the record must survive. */
  MPI_Win_free(&optout);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
