/* A lost-update detector for windows that span nodes. Every rank holds a
 * shared epoch (lock_all) while origins on the target's node and on other
 * (simulated) nodes increment the same counters in every rank's memory at
 * once, with MPI_Fetch_and_op, MPI_Accumulate and MPI_Get_accumulate. In
 * such an epoch MPI applies the remote origins' updates at the target (in
 * its progress engine, with ordinary loads and stores), so a shim that
 * served the node-local origins' updates with CPU atomics beside them would
 * lose updates; the shim must hand them to MPI (accumulate.cc, Admit).
 * split_accumulate.c checks the epochs in which serving them is safe; its
 * few rounds do not overlap updates enough to catch this.
 *
 * Origins run for as long as the slowest one (MPI through the other node is
 * slower than shared memory): each counts its increments, and the expected
 * totals are the counts summed over ranks, so the run ends when it has
 * overlapped, not after a fixed number of updates. The target ranks drive
 * MPI progress meanwhile by being origins themselves. */
#include "tests/diff/diff_util.h"

enum { kFop = 0, kAcc = 8, kGacc = 16, kWords = 24 }; /* a line apart */
enum { kMinRounds = 40, kBatch = 16 };

/* One batch of increments to `target`'s counters. */
static void Batch(MPI_Win win, int target) {
  const int64_t one = 1;
  int64_t old = 0;
  for (int i = 0; i < kBatch; ++i) {
    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, kFop, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT64_T, target, kAcc, 1, MPI_INT64_T, MPI_SUM,
                   win);
    MPI_Get_accumulate(&one, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, target,
                       kGacc, 1, MPI_INT64_T, MPI_SUM, win);
  }
  MPI_Win_flush(target, win);
}

static void Run(const char* flavor, int create) {
  const int me = du.rank, n = du.size;
  int64_t* own = NULL;
  MPI_Win win;
  int64_t* w = du_int64_window(create, kWords, &own, &win);

  du_step("overlapping increments");
  /* batches[t]: batches this rank applied to target t. A rank stops once it
   * did kMinRounds rounds and every rank has (a nonblocking barrier). */
  long long* batches = calloc((size_t)n, sizeof(long long));
  MPI_Request done = MPI_REQUEST_NULL;
  int finished = 0;
  MPI_Win_lock_all(0, win);
  for (long long round = 0; !finished; ++round) {
    for (int k = 0; k < n; ++k) {
      const int t = (me + k) % n;
      Batch(win, t);
      ++batches[t];
    }
    if (round + 1 == kMinRounds) MPI_Ibarrier(MPI_COMM_WORLD, &done);
    if (done != MPI_REQUEST_NULL) MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
  }
  MPI_Win_unlock_all(win);
  long long* totals = calloc((size_t)n, sizeof(long long));
  MPI_Allreduce(batches, totals, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
  const long long expected = totals[me] * kBatch;
  char what[64];
  snprintf(what, sizeof what, "%s fetch_and_op counter", flavor);
  du_check_i64(what, w[kFop] - expected, 0);
  snprintf(what, sizeof what, "%s accumulate counter", flavor);
  du_check_i64(what, w[kAcc] - expected, 0);
  snprintf(what, sizeof what, "%s get_accumulate counter", flavor);
  du_check_i64(what, w[kGacc] - expected, 0);
  MPI_Win_unlock(me, win);
  /* The counts vary from run to run; what is compared is that none was
   * lost (the differences above, zero on a right run). */
  int64_t lost[3] = {w[kFop] - expected, w[kAcc] - expected,
                     w[kGacc] - expected};
  snprintf(what, sizeof what, "%s counters minus increments", flavor);
  du_phase_local(what, du_hash(DU_HASH_INIT, lost, sizeof lost));
  MPI_Win_free(&win);
  free(own);
  free(batches);
  free(totals);
}

int main(int argc, char** argv) {
  du_tolerate_finalize_hang = 1; /* UCX over TCP (tests/diff/BUILD) */
  du_init(&argc, &argv);
  Run("allocate", 0);
  Run("create", 1);
  return du_finish();
}
