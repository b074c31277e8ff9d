/* PSCW with posts for a later epoch arriving early. Rank 0 is the origin:
 * each round it starts an access epoch to rank 1 alone, then one to the
 * other ranks (the early posters). The early posters post first (their
 * exposure groups hold rank 0 only), then tell rank 1, which waits a moment
 * more, stores this round's value in its window and only then posts. MPI
 * requires rank 0's first start to wait for rank 1's post (MPI-4.1 12.5.2:
 * a start returns once every target of its group has posted, or is held
 * back at the first access to it), so rank 0 must read the stored value and
 * rank 1 must see rank 0's put after its wait.
 *
 * Natively MPICH 4.0.2 counts posts per window, whoever sent them
 * (shim/sync/mpi_pscw.h): rank 0's first start returns on an early poster's
 * post, before rank 1 has posted, and reads the previous round's value
 * (3 and 4 ranks, on one node and split). Under the shim, windows on one node
 * match posts per target in shared memory and windows spanning nodes match them
 * with messages (shim/sync/mpi_pscw.h), so the test runs under the shim only
 * and checks every value it reads and every value put. 3 ranks or more. */
#define _DEFAULT_SOURCE /* usleep */
#include <unistd.h>

#include "tests/diff/diff_util.h"

#define ROUNDS 16

static int64_t Value(int rank, int round) {
  return (int64_t)round * 1000 + rank + 7;
}

static void Run(const char* flavor, int create) {
  const int me = du.rank, n = du.size;
  int64_t* own = NULL;
  MPI_Win win;
  /* Word 0: the owner's value of the round; word 1: what rank 0 put. */
  int64_t* w = du_int64_window(create, 2, &own, &win);
  MPI_Group world, origin_group, late_group, early_group;
  MPI_Win_get_group(win, &world);
  const int zero = 0, one = 1;
  MPI_Group_incl(world, 1, &zero, &origin_group);
  MPI_Group_incl(world, 1, &one, &late_group);
  const int range[1][3] = {{2, n - 1, 1}};
  MPI_Group_range_incl(world, 1, (int(*)[3])range, &early_group);
  char what[96];
  uint64_t h = DU_HASH_INIT;
  du_step(create ? "create: rounds" : "allocate: rounds");
  for (int round = 0; round < ROUNDS; ++round) {
    if (me == 0) {
      int64_t got = -1, mark = Value(0, round);
      MPI_Win_start(late_group, 0, win);
      MPI_Get(&got, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win);
      MPI_Put(&mark, 1, MPI_INT64_T, 1, 1, 1, MPI_INT64_T, win);
      MPI_Win_complete(win);
      snprintf(what, sizeof what, "%s: rank 1's value read in round %d", flavor,
               round);
      du_check_i64(what, got, Value(1, round));
      h = du_hash(h, &got, sizeof got);
      MPI_Win_start(early_group, 0, win);
      int64_t early[64];
      for (int t = 2; t < n && t < 66; ++t) {
        MPI_Get(&early[t - 2], 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, win);
      }
      MPI_Win_complete(win);
      for (int t = 2; t < n && t < 66; ++t) {
        snprintf(what, sizeof what, "%s: rank %d's value read in round %d",
                 flavor, t, round);
        du_check_i64(what, early[t - 2], Value(t, round));
      }
    } else if (me == 1) {
      for (int e = 2; e < n; ++e) {
        MPI_Recv(NULL, 0, MPI_BYTE, e, round, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      }
      usleep(2000); /* the early posts reach rank 0 first */
      w[0] = Value(1, round);
      MPI_Win_post(origin_group, 0, win);
      MPI_Win_wait(win);
      snprintf(what, sizeof what, "%s: rank 0's put in round %d", flavor,
               round);
      du_check_i64(what, w[1], Value(0, round));
      h = du_hash(h, &w[1], sizeof w[1]);
    } else {
      w[0] = Value(me, round);
      MPI_Win_post(origin_group, 0, win);
      MPI_Send(NULL, 0, MPI_BYTE, 1, round, MPI_COMM_WORLD);
      MPI_Win_wait(win);
    }
  }
  snprintf(what, sizeof what, "%s rounds", flavor);
  du_phase_local(what, h);
  MPI_Group_free(&early_group);
  MPI_Group_free(&late_group);
  MPI_Group_free(&origin_group);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  free(own);
}

/* Two windows alive at once: rank 1 posts on the second window, waits a
 * moment, stores the first window's value of the round and posts on the
 * first, while rank 0 starts on the first window and then on the second.
 * Rank 0's first start must wait for the first window's post (posts are
 * per window), so it reads this round's values from both. */
static void RunTwoWindows(void) {
  const int me = du.rank;
  int64_t *a = NULL, *b = NULL, *own_a = NULL, *own_b = NULL;
  MPI_Win win_a, win_b;
  a = du_int64_window(0, 1, &own_a, &win_a);
  b = du_int64_window(1, 1, &own_b, &win_b);
  MPI_Group world, origin_group, late_group;
  MPI_Win_get_group(win_a, &world);
  const int zero = 0, one = 1;
  MPI_Group_incl(world, 1, &zero, &origin_group);
  MPI_Group_incl(world, 1, &one, &late_group);
  char what[96];
  uint64_t h = DU_HASH_INIT;
  du_step("two windows: rounds");
  for (int round = 0; round < ROUNDS; ++round) {
    if (me == 0) {
      int64_t got[2] = {-1, -1};
      MPI_Win_start(late_group, 0, win_a);
      MPI_Get(&got[0], 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win_a);
      MPI_Win_complete(win_a);
      MPI_Win_start(late_group, 0, win_b);
      MPI_Get(&got[1], 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win_b);
      MPI_Win_complete(win_b);
      for (int k = 0; k < 2; ++k) {
        snprintf(what, sizeof what, "two windows: window %d read in round %d",
                 k, round);
        du_check_i64(what, got[k], Value(1 + 100 * k, round));
      }
      h = du_hash(h, got, sizeof got);
    } else if (me == 1) {
      b[0] = Value(101, round);
      MPI_Win_post(origin_group, 0, win_b);
      /* The second window's post reaches rank 0 first; MPI makes progress
       * meanwhile (as it would serve an early get natively). */
      const double until = MPI_Wtime() + 0.002;
      while (MPI_Wtime() < until) {
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                   MPI_STATUS_IGNORE);
      }
      a[0] = Value(1, round);
      MPI_Win_post(origin_group, 0, win_a);
      MPI_Win_wait(win_a);
      MPI_Win_wait(win_b);
    }
  }
  du_phase_local("two windows rounds", h);
  MPI_Group_free(&late_group);
  MPI_Group_free(&origin_group);
  MPI_Group_free(&world);
  MPI_Win_free(&win_b);
  MPI_Win_free(&win_a);
  free(own_a);
  free(own_b);
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  if (du.size < 3) {
    if (du.rank == 0)
      fprintf(stderr, "pscw_early_post needs 3 ranks or more\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Run("allocate", 0);
  Run("create", 1);
  RunTwoWindows();
  return du_finish();
}
