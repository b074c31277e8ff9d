/* What the real applications trip over, reduced: MPI_Win_allocate windows
 * whose size is not a multiple of 16 bytes (one int, one long, a few
 * doubles: the counters of Global Arrays and ARMCI, scalar coarrays). Native
 * MPICH 4.0.2 (ch4:ucx) on one node sends RMA aimed at a node-local peer's
 * window to the wrong address there (below the peer's base), so puts,
 * gets, accumulates and atomics silently hit other memory. Window sizes 4 to
 * 32 bytes; every rank updates its right neighbour with accumulate,
 * fetch_and_op and put, reads it back with get, and checks its own memory.
 * Prints one line per size and "RESULT ok" or "RESULT wrong (N errors)";
 * exits 1 when anything was wrong.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int right = (rank + 1) % n, left = (rank + n - 1) % n;
  long errors = 0;
  for (int size = 4; size <= 32; size += 4) {
    MPI_Win win;
    int *base;
    MPI_Win_allocate(size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    long wrong = 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    *base = 0;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Accumulate 1 and fetch-and-add 1 on the right neighbour's int. */
    int one = 1, fetched = -1;
    MPI_Win_lock_all(0, win);
    MPI_Accumulate(&one, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_flush(right, win);
    MPI_Fetch_and_op(&one, &fetched, MPI_INT, right, 0, MPI_SUM, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    int own = *base;
    MPI_Win_unlock(rank, win);
    wrong += (fetched != 1) + (own != 2);

    /* Put my mark into the right neighbour, get the left one's back. */
    MPI_Barrier(MPI_COMM_WORLD);
    int mark = 100 + rank, got = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(&mark, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    int own_mark = *base;
    MPI_Win_unlock(rank, win);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    MPI_Win_unlock(right, win);
    wrong += (own_mark != 100 + left) + (got != mark);

    long all;
    MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 1 % n && wrong)
      printf(
          "size %2d, rank %d: accumulate+fetch_and_op left %d (expected 2), "
          "fetched %d (expected 1); put left %d (expected %d), get %d "
          "(expected %d)\n",
          size, rank, own, fetched, own_mark, 100 + left, got, mark);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
      printf("window of %2d bytes: %s\n", size, all ? "WRONG" : "ok");
    fflush(stdout);
    errors += all;
    MPI_Win_free(&win);
  }
  if (rank == 0) {
    if (errors)
      printf("RESULT wrong (%ld errors)\n", errors);
    else
      printf("RESULT ok\n");
  }
  MPI_Finalize();
  return errors ? 1 : 0;
}
