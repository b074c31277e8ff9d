/* Lock_all epochs beside exclusive locks: even ranks accumulate to every
 * rank in lock_all epochs while odd ranks accumulate under exclusive locks
 * on one target after another, as fast as they can. Each process holds one
 * epoch at a time, so MPI requires every epoch to be granted.
 *
 * Natively MPICH 4.0.2 deadlocks here within a few dozen rounds on 4
 * ranks (every rank in MPI_Win_lock or MPI_Win_lock_all for ever): it
 * queues lock requests at a target first come, first served and sends a
 * lock_all's requests to all targets at once, so two lock_alls can each
 * hold one target and wait at the other behind an exclusive request
 * (shim/sync/mpi_lock_all.h gives the whole cycle). The shim takes MPI's locks
 * one target at a time in rank order where they stay MPI's (windows
 * spanning nodes) and its own lock words otherwise, so the test runs under
 * the shim only and checks the totals, which are known exactly. */
#include "tests/diff/diff_util.h"

/* Rounds per window: 60, or the first argument (fewer for oversubscribed
 * runs, where every lock round trip waits for a core). */
static int g_rounds = 60;

static void Run(const char* flavor, int create) {
  const int me = du.rank, n = du.size;
  int64_t* own = NULL;
  MPI_Win win;
  /* Word r of every rank: what rank r added there. */
  int64_t* w = du_int64_window(create, n, &own, &win);
  const int64_t one = 1;
  du_step(create ? "create: rounds" : "allocate: rounds");
  for (int round = 0; round < g_rounds; ++round) {
    if (me % 2 == 0) {
      MPI_Win_lock_all(0, win);
      for (int t = 0; t < n; ++t) {
        MPI_Accumulate(&one, 1, MPI_INT64_T, t, me, 1, MPI_INT64_T, MPI_SUM,
                       win);
      }
      MPI_Win_unlock_all(win);
    } else {
      const int t = (me + round) % n;
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
      MPI_Accumulate(&one, 1, MPI_INT64_T, t, me, 1, MPI_INT64_T, MPI_SUM, win);
      MPI_Win_unlock(t, win);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
  char what[64];
  for (int r = 0; r < n; ++r) {
    long long want = 0;
    for (int round = 0; round < g_rounds; ++round) {
      want += r % 2 == 0 || (r + round) % n == me;
    }
    snprintf(what, sizeof what, "%s: rank %d's additions", flavor, r);
    du_check_i64(what, w[r], want);
  }
  snprintf(what, sizeof what, "%s counters", flavor);
  du_phase_local(what, du_hash(DU_HASH_INIT, w, 8 * (size_t)n));
  MPI_Win_unlock(me, win);
  MPI_Win_free(&win);
  free(own);
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  if (argc > 1) g_rounds = atoi(argv[1]);
  Run("allocate", 0);
  Run("create", 1);
  return du_finish();
}
