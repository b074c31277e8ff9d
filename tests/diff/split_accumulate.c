/* Contended counters in every rank's memory, updated at once by origins on
 * the same node and on other (simulated) nodes, with the epochs mixed: an
 * exclusive lock on the target (on a window spanning nodes the shim applies
 * node-local accumulates itself there, atomic by the lock's exclusion), a
 * shared lock and lock_all (MPI applies them there). A lost update changes
 * a total, which is known exactly: every rank adds its contributions to
 * every rank's counters. Runs on an MPI_Win_allocate and an MPI_Win_create
 * window. */
#include "tests/diff/diff_util.h"

#define ROUNDS 12
#define BULK 1100 /* int64s from word 500: crosses page boundaries */
enum {
  kFop = 0,
  kAcc = 1,
  kGacc = 2,
  kCasInc = 3,
  kBulk = 500,
  kWords = kBulk + BULK + 4
};

static void Round(MPI_Win win, int target, int round, int64_t* ones,
                  int64_t* fetched) {
  const int64_t one = 1;
  int64_t old = 0;
  MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, kFop, MPI_SUM, win);
  MPI_Accumulate(&one, 1, MPI_INT64_T, target, kAcc, 1, MPI_INT64_T, MPI_SUM,
                 win);
  MPI_Get_accumulate(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, target, kGacc,
                     1, MPI_INT64_T, MPI_SUM, win);
  if (round % 2) {
    MPI_Get_accumulate(ones, BULK, MPI_INT64_T, fetched, BULK, MPI_INT64_T,
                       target, kBulk, BULK, MPI_INT64_T, MPI_SUM, win);
  } else {
    MPI_Accumulate(ones, BULK, MPI_INT64_T, target, kBulk, BULK, MPI_INT64_T,
                   MPI_SUM, win);
  }
  MPI_Win_flush(target, win);
  /* Increment by compare-and-swap retries. */
  int64_t seen = 0, want = 0;
  MPI_Fetch_and_op(NULL, &seen, MPI_INT64_T, target, kCasInc, MPI_NO_OP, win);
  MPI_Win_flush(target, win);
  do {
    want = seen + 1;
    const int64_t expect = seen;
    MPI_Compare_and_swap(&want, &expect, &seen, MPI_INT64_T, target, kCasInc,
                         win);
    MPI_Win_flush(target, win);
    if (seen == expect) break;
  } while (1);
}

static void Run(const char* flavor, int create) {
  const int me = du.rank, n = du.size;
  int64_t* own = NULL;
  MPI_Win win;
  int64_t* w = du_int64_window(create, kWords, &own, &win);
  int64_t* ones = malloc(BULK * sizeof(int64_t));
  int64_t* fetched = malloc(BULK * sizeof(int64_t));
  for (int i = 0; i < BULK; ++i) ones[i] = 1;
  du_step("mixed epochs");
  for (int round = 0; round < ROUNDS; ++round) {
    for (int k = 0; k < n; ++k) {
      const int t = (me + k) % n;
      switch ((round + me) % 3) {
        case 0:
          MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
          Round(win, t, round, ones, fetched);
          MPI_Win_unlock(t, win);
          break;
        case 1:
          MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
          Round(win, t, round, ones, fetched);
          MPI_Win_unlock(t, win);
          break;
        default:
          MPI_Win_lock_all(0, win);
          Round(win, t, round, ones, fetched);
          MPI_Win_unlock_all(win);
          break;
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
  const long long total = (long long)ROUNDS * n;
  char what[64];
  snprintf(what, sizeof what, "%s fetch_and_op counter", flavor);
  du_check_i64(what, w[kFop], total);
  snprintf(what, sizeof what, "%s accumulate counter", flavor);
  du_check_i64(what, w[kAcc], total);
  snprintf(what, sizeof what, "%s get_accumulate counter", flavor);
  du_check_i64(what, w[kGacc], total);
  snprintf(what, sizeof what, "%s compare_and_swap counter", flavor);
  du_check_i64(what, w[kCasInc], total);
  int bad = 0;
  for (int i = 0; i < BULK; ++i) bad += w[kBulk + i] != total;
  snprintf(what, sizeof what, "%s bulk elements off", flavor);
  du_check_i64(what, bad, 0);
  MPI_Win_unlock(me, win);
  snprintf(what, sizeof what, "%s counters", flavor);
  du_phase_local(what, du_hash(DU_HASH_INIT, w, 8 * kWords));
  MPI_Win_free(&win);
  free(own);
  free(ones);
  free(fetched);
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  Run("allocate", 0);
  Run("create", 1);
  return du_finish();
}
