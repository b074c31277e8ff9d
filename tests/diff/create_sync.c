/* The accumulate family on an MPI_Win_create window (user memory) under
 * every kind of synchronization, with totals that do not depend on timing:
 *   fence epochs     MPI_Accumulate(MPI_SUM) from every rank to every rank;
 *   PSCW epochs      the same, with the world group on both sides;
 *   exclusive locks  read-modify-write: MPI_Fetch_and_op(MPI_NO_OP), flush,
 *                    MPI_Put of the incremented value, unlock;
 *   lock_all         MPI_Fetch_and_op(MPI_SUM) tickets and a
 *                    MPI_Compare_and_swap loop.
 * MPI_Win_create memory of other processes cannot be mapped, so these
 * operations travel through MPI even when the shim serves the window's
 * synchronization itself; the program checks that this combination neither
 * loses updates nor stops making progress (a step stuck for a minute ends
 * the run with a message naming it). */
#include "tests/diff/diff_util.h"

#define WORDS 16
#define FENCE_EPOCHS 4
#define PSCW_EPOCHS 4
#define RMW_ITERS 6
#define TICKETS 4

enum { kFence = 0, kPscw = 1, kRmw = 2, kTicket = 3, kCas = 4 };

static int64_t FenceVal(int o, int e) { return (int64_t)(o + 1) * 10 + e; }
static int64_t PscwVal(int o, int e) { return (int64_t)(o + 1) * 1000 + e * 3; }
static int64_t Delta(int o, int it) { return (int64_t)(o + 1) * 100 + it; }

static int CmpI64(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  const int me = du.rank, n = du.size;
  int64_t* w = aligned_alloc(64, WORDS * 8);
  for (int i = 0; i < WORDS; ++i) w[i] = 0;
  MPI_Win win;
  MPI_Win_create(w, WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int64_t* vals = malloc(sizeof(int64_t) * (size_t)n);

  /* Fence epochs. */
  du_step("fence epochs with MPI_Accumulate");
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  for (int e = 0; e < FENCE_EPOCHS; ++e) {
    for (int k = 0; k < n; ++k) {
      const int t = (me + k) % n;
      vals[t] = FenceVal(me, e);
      MPI_Accumulate(&vals[t], 1, MPI_INT64_T, t, kFence, 1, MPI_INT64_T,
                     MPI_SUM, win);
    }
    MPI_Win_fence(e + 1 == FENCE_EPOCHS ? MPI_MODE_NOSUCCEED : 0, win);
  }
  {
    int64_t want = 0;
    for (int o = 0; o < n; ++o) {
      for (int e = 0; e < FENCE_EPOCHS; ++e) want += FenceVal(o, e);
    }
    du_check_i64("fence accumulate total", w[kFence], want);
  }
  du_phase_local("fence epochs: accumulate",
                 du_hash_u64(DU_HASH_INIT, w[kFence]));

  /* PSCW epochs. */
  du_step("PSCW epochs with MPI_Accumulate");
  MPI_Group world;
  MPI_Win_get_group(win, &world);
  for (int e = 0; e < PSCW_EPOCHS; ++e) {
    MPI_Win_post(world, 0, win);
    MPI_Win_start(world, 0, win);
    for (int k = 0; k < n; ++k) {
      const int t = (me + n - k) % n;
      vals[t] = PscwVal(me, e);
      MPI_Accumulate(&vals[t], 1, MPI_INT64_T, t, kPscw, 1, MPI_INT64_T,
                     MPI_SUM, win);
    }
    MPI_Win_complete(win);
    MPI_Win_wait(win);
  }
  MPI_Group_free(&world);
  {
    int64_t want = 0;
    for (int o = 0; o < n; ++o) {
      for (int e = 0; e < PSCW_EPOCHS; ++e) want += PscwVal(o, e);
    }
    du_check_i64("pscw accumulate total", w[kPscw], want);
  }
  du_phase_local("pscw epochs: accumulate",
                 du_hash_u64(DU_HASH_INIT, w[kPscw]));

  /* Exclusive-lock read-modify-write. */
  du_step("exclusive lock: fetch_and_op, flush, put");
  MPI_Barrier(MPI_COMM_WORLD);
  for (int it = 0; it < RMW_ITERS; ++it) {
    const int t = (me + it) % n;
    int64_t v = -1;
    const int64_t unused = 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
    MPI_Fetch_and_op(&unused, &v, MPI_INT64_T, t, kRmw, MPI_NO_OP, win);
    MPI_Win_flush(t, win);
    v += Delta(me, it);
    MPI_Put(&v, 1, MPI_INT64_T, t, kRmw, 1, MPI_INT64_T, win);
    MPI_Win_unlock(t, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  {
    int64_t want = 0;
    for (int o = 0; o < n; ++o) {
      for (int it = 0; it < RMW_ITERS; ++it) {
        if ((o + it) % n == me) want += Delta(o, it);
      }
    }
    du_check_i64("exclusive rmw total", w[kRmw], want);
  }
  du_phase_local("exclusive lock: fetch_and_op/flush/put",
                 du_hash_u64(DU_HASH_INIT, w[kRmw]));

  /* lock_all: tickets from rank 0, CAS increments on the last rank. */
  du_step("lock_all: fetch_and_op tickets and compare_and_swap");
  int64_t mine[TICKETS];
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < TICKETS; ++i) {
    const int64_t one = 1;
    MPI_Fetch_and_op(&one, &mine[i], MPI_INT64_T, 0, kTicket, MPI_SUM, win);
    MPI_Win_flush(0, win);
  }
  const int host = n - 1;
  for (;;) {
    int64_t cur = 0, seen = 0;
    const int64_t unused = 0;
    MPI_Fetch_and_op(&unused, &cur, MPI_INT64_T, host, kCas, MPI_NO_OP, win);
    MPI_Win_flush(host, win);
    const int64_t next = cur + me + 1;
    MPI_Compare_and_swap(&next, &cur, &seen, MPI_INT64_T, host, kCas, win);
    MPI_Win_flush(host, win);
    if (seen == cur) break;
  }
  MPI_Win_unlock_all(win);
  int64_t* all = malloc(sizeof(int64_t) * (size_t)n * TICKETS);
  MPI_Allgather(mine, TICKETS, MPI_INT64_T, all, TICKETS, MPI_INT64_T,
                MPI_COMM_WORLD);
  qsort(all, (size_t)n * TICKETS, sizeof(int64_t), CmpI64);
  for (int i = 0; i < n * TICKETS; ++i) du_check_i64("ticket", all[i], i);
  if (me == 0) du_check_i64("ticket counter", w[kTicket], (int64_t)n * TICKETS);
  if (me == host) du_check_i64("cas total", w[kCas], (int64_t)n * (n + 1) / 2);
  du_phase_local("lock_all: tickets and compare_and_swap",
                 du_hash(DU_HASH_INIT, all, sizeof(int64_t) * n * TICKETS));
  free(all);
  du_report();
  du_print_per_rank("fence total", (long long)w[kFence]);
  du_print_per_rank("rmw total", (long long)w[kRmw]);

  MPI_Win_free(&win);
  free(vals);
  free(w);
  return du_finish();
}
