/* Counters on an MPI_Win_allocate window whose final values are
 * deterministic however the ranks interleave.
 *
 * Phase 1: read-modify-write under MPI_LOCK_EXCLUSIVE: read a counter
 *   (MPI_Get, MPI_Fetch_and_op(MPI_NO_OP) or MPI_Get_accumulate(MPI_NO_OP)),
 *   flush, put the incremented value, unlock.
 * Phase 2: MPI_Accumulate under lock_all: MPI_SUM on int64 (also through a
 *   vector target datatype) and on doubles holding small integers, MPI_BXOR,
 *   MPI_MAX.
 * Phase 3: direct puts reset the accumulators in their own epoch, then
 *   accumulates under shared per-target locks add on top.
 * Phase 4: MPI_Fetch_and_op(MPI_SUM) tickets: the fetched values of all
 *   ranks together must be exactly 0..N-1.
 * Phase 5: MPI_Compare_and_swap: an election (exactly one rank swaps -1
 *   for its rank) and a CAS-loop increment. */
#include "tests/diff/diff_util.h"

#define NC 4 /* RMW counters per rank */
#define RMW_ITERS 12
#define NA 8 /* accumulators per kind */
#define ACC_ITERS 5
#define TICKETS 6
#define CAS_INCS 3

/* Window layout, in 8-byte words. */
enum {
  kRmw = 0,
  kSum = kRmw + NC,
  kVec = kSum + NA, /* 2 * NA words, every other one accumulated */
  kDbl = kVec + 2 * NA,
  kXor = kDbl + NA,
  kMax = kXor + NA,
  kTicket = kMax + NA,
  kElect = kTicket + 1,
  kCas = kElect + 1,
  /* MPICH 4.0.2 (ch4) misplaces remote accesses on single-node
   * MPI_Win_allocate windows whose size is not a multiple of 16 bytes, so
   * round up generously. */
  kWords = (kCas + 1 + 7) / 8 * 8,
};

static int64_t Delta(int r, int it) { return (int64_t)(r + 1) * 1000 + it * 7; }
static int64_t AccVal(int o, int t, int it, int j) {
  return (int64_t)(o + 1) * 100 + t * 10 + it * 3 + j;
}
static int64_t XorVal(int o, int t, int it, int j) {
  return (int64_t)du_mix((uint64_t)o << 40 ^ (uint64_t)t << 32 ^
                         (uint64_t)it << 8 ^ (uint64_t)j);
}
static int64_t MaxVal(int o, int t, int it, int j) {
  return (int64_t)((o * 37 + t * 11 + it * 5 + j * 3) % 97) - 40;
}

static int CmpI64(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  const int me = du.rank, n = du.size;
  int64_t* w = NULL;
  MPI_Win win;
  MPI_Win_allocate(kWords * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win);
  for (int i = 0; i < kWords; ++i) w[i] = 0;
  w[kElect] = -1;
  for (int j = 0; j < NA; ++j) w[kMax + j] = INT64_MIN;
  double* wd = (double*)(w + kDbl);
  for (int j = 0; j < NA; ++j) wd[j] = 0.0;
  MPI_Barrier(MPI_COMM_WORLD);

  /* Phase 1: exclusive-lock read-modify-write. */
  for (int it = 0; it < RMW_ITERS; ++it) {
    const int t = (me + it) % n;
    const int c = it % NC;
    int64_t v = -1;
    const int64_t zero = 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
    switch (it % 3) {
      case 0:
        MPI_Get(&v, 1, MPI_INT64_T, t, kRmw + c, 1, MPI_INT64_T, win);
        break;
      case 1:
        MPI_Fetch_and_op(&zero, &v, MPI_INT64_T, t, kRmw + c, MPI_NO_OP, win);
        break;
      default:
        MPI_Get_accumulate(&zero, 1, MPI_INT64_T, &v, 1, MPI_INT64_T, t,
                           kRmw + c, 1, MPI_INT64_T, MPI_NO_OP, win);
        break;
    }
    MPI_Win_flush(t, win);
    v += Delta(me, it);
    MPI_Put(&v, 1, MPI_INT64_T, t, kRmw + c, 1, MPI_INT64_T, win);
    MPI_Win_unlock(t, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int c = 0; c < NC; ++c) {
    int64_t want = 0;
    for (int r = 0; r < n; ++r) {
      for (int it = 0; it < RMW_ITERS; ++it) {
        if ((r + it) % n == me && it % NC == c) want += Delta(r, it);
      }
    }
    du_check_i64("exclusive rmw counter", w[kRmw + c], want);
  }
  du_phase_local("exclusive lock get/flush/put counters",
                 du_hash(DU_HASH_INIT, w + kRmw, 8 * NC));

  /* Phase 2: accumulates under lock_all. */
  MPI_Datatype every_other;
  MPI_Type_vector(NA, 1, 2, MPI_INT64_T, &every_other);
  MPI_Type_commit(&every_other);
  /* Origin buffers must stay untouched until the epoch completes them. */
  const size_t nbuf = (size_t)ACC_ITERS * n * NA;
  int64_t* s = malloc(sizeof(int64_t) * nbuf);
  int64_t* x = malloc(sizeof(int64_t) * nbuf);
  int64_t* m = malloc(sizeof(int64_t) * nbuf);
  double* d = malloc(sizeof(double) * nbuf);
  MPI_Win_lock_all(0, win);
  for (int it = 0; it < ACC_ITERS; ++it) {
    for (int k = 0; k < n; ++k) {
      const int t = (me + k) % n;
      const size_t at = ((size_t)it * n + t) * NA;
      for (int j = 0; j < NA; ++j) {
        s[at + j] = AccVal(me, t, it, j);
        x[at + j] = XorVal(me, t, it, j);
        m[at + j] = MaxVal(me, t, it, j);
        d[at + j] = (double)AccVal(me, t, it, j) * 0.5;
      }
      MPI_Accumulate(s + at, NA, MPI_INT64_T, t, kSum, NA, MPI_INT64_T, MPI_SUM,
                     win);
      MPI_Accumulate(s + at, NA, MPI_INT64_T, t, kVec, 1, every_other, MPI_SUM,
                     win);
      MPI_Accumulate(d + at, NA, MPI_DOUBLE, t, kDbl, NA, MPI_DOUBLE, MPI_SUM,
                     win);
      MPI_Accumulate(x + at, NA, MPI_INT64_T, t, kXor, NA, MPI_INT64_T,
                     MPI_BXOR, win);
      MPI_Accumulate(m + at, NA, MPI_INT64_T, t, kMax, NA, MPI_INT64_T, MPI_MAX,
                     win);
    }
    if (it == 1) MPI_Win_flush_all(win);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int j = 0; j < NA; ++j) {
    int64_t want_sum = 0, want_xor = 0, want_max = INT64_MIN;
    double want_dbl = 0.0;
    for (int o = 0; o < n; ++o) {
      for (int it = 0; it < ACC_ITERS; ++it) {
        want_sum += AccVal(o, me, it, j);
        want_xor ^= XorVal(o, me, it, j);
        if (MaxVal(o, me, it, j) > want_max) want_max = MaxVal(o, me, it, j);
        want_dbl += (double)AccVal(o, me, it, j) * 0.5;
      }
    }
    du_check_i64("acc sum", w[kSum + j], want_sum);
    du_check_i64("acc vector sum", w[kVec + 2 * j], want_sum);
    du_check_i64("acc vector gap", w[kVec + 2 * j + 1], 0);
    du_check_i64("acc xor", w[kXor + j], want_xor);
    du_check_i64("acc max", w[kMax + j], want_max);
    DU_CHECK(wd[j] == want_dbl, "acc double sum %d: %.17g != %.17g", j, wd[j],
             want_dbl);
  }
  free(s);
  free(x);
  free(m);
  free(d);
  du_phase_local("accumulate sum/vector/double/bxor/max",
                 du_hash(DU_HASH_INIT, w + kSum, 8 * (kTicket - kSum)));

  /* Phase 3: direct puts reset the right neighbour's sums, then shared-lock
   * accumulates add on top, in separate epochs. */
  const int right = (me + 1) % n;
  MPI_Barrier(MPI_COMM_WORLD); /* everyone has checked its sums */
  {
    int64_t reset[NA];
    for (int j = 0; j < NA; ++j) reset[j] = -(int64_t)(me + 1) * 1000000 - j;
    MPI_Win_lock_all(0, win);
    MPI_Put(reset, NA, MPI_INT64_T, right, kSum, NA, MPI_INT64_T, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < n; ++k) {
      const int t = (me + n - k) % n;
      int64_t one[NA];
      for (int j = 0; j < NA; ++j) one[j] = me + j + 1;
      MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
      MPI_Accumulate(one, NA, MPI_INT64_T, t, kSum, NA, MPI_INT64_T, MPI_SUM,
                     win);
      MPI_Win_unlock(t, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const int left = (me + n - 1) % n;
    for (int j = 0; j < NA; ++j) {
      int64_t want = -(int64_t)(left + 1) * 1000000 - j;
      for (int o = 0; o < n; ++o) want += o + j + 1;
      du_check_i64("reset then accumulate", w[kSum + j], want);
    }
    du_phase_local("put reset then shared-lock accumulate",
                   du_hash(DU_HASH_INIT, w + kSum, 8 * NA));
  }

  /* Phase 4: fetch-and-add tickets from rank 0's counter. */
  int64_t mine[TICKETS];
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < TICKETS; ++i) {
    const int64_t one = 1;
    MPI_Fetch_and_op(&one, &mine[i], MPI_INT64_T, 0, kTicket, MPI_SUM, win);
    MPI_Win_flush_local(0, win);
  }
  MPI_Win_unlock_all(win);
  int64_t* all = malloc(sizeof(int64_t) * (size_t)n * TICKETS);
  MPI_Allgather(mine, TICKETS, MPI_INT64_T, all, TICKETS, MPI_INT64_T,
                MPI_COMM_WORLD);
  qsort(all, (size_t)n * TICKETS, sizeof(int64_t), CmpI64);
  for (int i = 0; i < n * TICKETS; ++i) du_check_i64("ticket", all[i], i);
  for (int i = 1; i < TICKETS; ++i) {
    DU_CHECK(mine[i] > mine[i - 1], "tickets of one rank must increase");
  }
  if (me == 0) du_check_i64("ticket counter", w[kTicket], (int64_t)n * TICKETS);
  du_phase_local("fetch_and_op tickets",
                 du_hash(DU_HASH_INIT, all, sizeof(int64_t) * n * TICKETS));
  free(all);

  /* Phase 5a: election on the last rank's slot. */
  const int host = n - 1;
  int64_t old = 0;
  {
    const int64_t cand = me, none = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, host, 0, win);
    MPI_Compare_and_swap(&cand, &none, &old, MPI_INT64_T, host, kElect, win);
    MPI_Win_unlock(host, win);
  }
  int won = old == -1, winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  du_check_i64("election winners", winners, 1);
  {
    /* Everyone reads the slot: it must name the rank that won. */
    int64_t slot = -2;
    MPI_Win_lock(MPI_LOCK_SHARED, host, 0, win);
    MPI_Get(&slot, 1, MPI_INT64_T, host, kElect, 1, MPI_INT64_T, win);
    MPI_Win_unlock(host, win);
    int winner = won ? me : -1, named = -1;
    MPI_Allreduce(&winner, &named, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    du_check_i64("election slot", slot, named);
    DU_CHECK(won || (old >= 0 && old < n), "loser saw %lld", (long long)old);
  }
  du_phase_local("compare_and_swap election", DU_HASH_INIT);

  /* Phase 5b: CAS-loop increments of the last rank's counter. */
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < CAS_INCS; ++i) {
    for (;;) {
      int64_t cur = 0, seen = 0;
      const int64_t dummy = 0;
      MPI_Fetch_and_op(&dummy, &cur, MPI_INT64_T, host, kCas, MPI_NO_OP, win);
      MPI_Win_flush(host, win);
      const int64_t want = cur + me + 1;
      MPI_Compare_and_swap(&want, &cur, &seen, MPI_INT64_T, host, kCas, win);
      MPI_Win_flush(host, win);
      if (seen == cur) break;
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  int64_t cas_total = 0;
  for (int r = 0; r < n; ++r) cas_total += (int64_t)CAS_INCS * (r + 1);
  if (me == host) du_check_i64("cas counter", w[kCas], cas_total);
  du_phase_local(
      "compare_and_swap increments",
      me == host ? du_hash_u64(DU_HASH_INIT, (uint64_t)w[kCas]) : DU_HASH_INIT);
  du_report();

  du_print_per_rank("rmw counter 0", (long long)w[kRmw]);
  du_print_per_rank("sum accumulator 0 after reset", (long long)w[kSum]);
  du_print_per_rank("max accumulator 0", (long long)w[kMax]);
  du_print_per_rank("cas counter", (long long)w[kCas]);

  MPI_Type_free(&every_other);
  MPI_Win_free(&win);
  return du_finish();
}
