/* A program with known RMA operation counts, run under the shim with
 * RMASHIM_PROFILE set; check_profile.py compares the profile's JSON with the
 * counts this program's structure implies (kept in one place: kPuts etc.). */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

enum { kPuts = 3, kGets = 2, kAccs = 5, kOptOutPuts = 4, kLocks = 2 };
enum { kRequests = 2, kFences = 3, kPscwRounds = 2, kDynamicPuts = 3 };
enum { kHoldMs = 200 };
/* 63 characters, the most the profile keeps: too long for a report line. */
static const char kContendedName[] =
    "contended (a name of 63 characters, longer than a report shows)";

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
    for (int i = 0; i < kPuts; ++i)
      MPI_Put(&v, 1, MPI_LONG, t, rank, 1, MPI_LONG, win);
    for (int i = 0; i < kGets; ++i)
      MPI_Get(&r, 1, MPI_LONG, t, rank, 1, MPI_LONG, win);
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
  MPI_Win_allocate(8 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &base2,
                   &optout);
  MPI_Info_free(&info);
  MPI_Win_set_name(optout, "optout");
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, optout);
  for (int i = 0; i < kOptOutPuts; ++i)
    MPI_Put(&v, 1, MPI_LONG, rank, 0, 1, MPI_LONG, optout);
  MPI_Win_unlock(rank, optout);

  /* "requests": to the right neighbour, kRequests rounds of rput, rget,
   * raccumulate and rget_accumulate under lock_all, one get_accumulate;
   * then kFences fences with a put between each two, and kPscwRounds
   * post/start/complete/wait rounds with one put each. */
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long* base3;
  MPI_Win requests;
  MPI_Win_allocate(16 * sizeof(long), sizeof(long), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base3, &requests);
  MPI_Win_set_name(requests, "requests");
  long got[4];
  MPI_Win_lock_all(0, requests);
  for (int i = 0; i < kRequests; ++i) {
    MPI_Request q[4];
    MPI_Rput(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, requests, &q[0]);
    MPI_Rget(&got[0], 1, MPI_LONG, right, 1, 1, MPI_LONG, requests, &q[1]);
    MPI_Raccumulate(&v, 1, MPI_LONG, right, 2, 1, MPI_LONG, MPI_SUM, requests,
                    &q[2]);
    MPI_Rget_accumulate(&v, 1, MPI_LONG, &got[1], 1, MPI_LONG, right, 3, 1,
                        MPI_LONG, MPI_SUM, requests, &q[3]);
    MPI_Status statuses[4];
    MPI_Waitall(4, q, statuses);
  }
  MPI_Get_accumulate(&v, 1, MPI_LONG, &got[2], 1, MPI_LONG, right, 3, 1,
                     MPI_LONG, MPI_SUM, requests);
  MPI_Win_unlock_all(requests);
  MPI_Win_fence(0, requests);
  for (int i = 1; i < kFences; ++i) {
    MPI_Put(&v, 1, MPI_LONG, right, 4, 1, MPI_LONG, requests);
    MPI_Win_fence(0, requests);
  }
  MPI_Group world, from_left, to_right;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &left, &from_left);
  MPI_Group_incl(world, 1, &right, &to_right);
  for (int i = 0; i < kPscwRounds; ++i) {
    MPI_Win_post(from_left, 0, requests);
    MPI_Win_start(to_right, 0, requests);
    MPI_Put(&v, 1, MPI_LONG, right, 5, 1, MPI_LONG, requests);
    MPI_Win_complete(requests);
    MPI_Win_wait(requests);
  }
  MPI_Group_free(&from_left);
  MPI_Group_free(&to_right);
  MPI_Group_free(&world);

  /* "dynamic": a flavor the shim leaves to MPI; kDynamicPuts to itself. */
  MPI_Win dynamic;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dynamic);
  MPI_Win_set_name(dynamic, "dynamic");
  long cell = 0;
  MPI_Win_attach(dynamic, &cell, sizeof(cell));
  MPI_Aint cell_address;
  MPI_Get_address(&cell, &cell_address);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, dynamic);
  for (int i = 0; i < kDynamicPuts; ++i) {
    MPI_Put(&v, 1, MPI_LONG, rank, cell_address, 1, MPI_LONG, dynamic);
  }
  MPI_Win_unlock(rank, dynamic);
  MPI_Win_detach(dynamic, &cell);
  MPI_Win_free(&dynamic);
  MPI_Win_free(&requests);

  /* "contended": rank 0 holds an exclusive lock on itself for kHoldMs while
   * every other rank asks for it: on one node (shared-memory locks) some of
   * them must wait, and the profile says how long. */
  MPI_Win contended;
  long* base4;
  MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base4, &contended);
  MPI_Win_set_name(contended, kContendedName);
  if (rank == 0) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, contended);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const struct timespec hold = {0, kHoldMs * 1000000L};
    nanosleep(&hold, NULL);
  } else {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, contended);
  }
  MPI_Win_unlock(0, contended);
  MPI_Win_free(&contended);

  /* Freed before finalize, like the others; the record must survive. */
  MPI_Win_free(&optout);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
