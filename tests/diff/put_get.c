/* Passive-target put/get on MPI_Win_allocate windows: every rank to every
 * rank (itself included), several element sizes, counts and displacements,
 * disp_unit 1, 2, 4 and 8 (unaligned byte displacements with disp_unit 1),
 * under lock_all with flush / flush_all / flush_local, then under shared
 * per-target locks with request-based MPI_Rput / MPI_Rget.
 *
 * Every origin owns a SLOT-byte slot in every target's window; rounds write
 * overlapping regions of that slot, separated by flushes, so the final
 * contents are deterministic. The reference replays all rounds serially. */
#include "tests/diff/diff_util.h"

#define SLOT 4096 /* bytes every origin owns in every target's window */

typedef struct {
  const char* name;
  int disp_unit;
  int elem; /* bytes per element */
  MPI_Datatype type;
  int misalign; /* extra byte offset (disp_unit 1 only) */
} config_t;

typedef struct {
  int off;   /* byte offset in the slot, a multiple of 8 */
  int count; /* elements; -1: up to the end of the slot */
} round_t;

/* Later rounds overlap earlier ones only partly, so every round leaves
 * bytes of its own in the final window. */
static const round_t kLockAllRounds[] = {
    {0, 1}, {8, 3}, {64, 17}, {40, 10}, {0, 0}, {1024, -1}, {512, 300},
};
enum { kNumLockAllRounds = sizeof kLockAllRounds / sizeof kLockAllRounds[0] };

static const round_t kRequestRounds[] = {{16, 33}, {2048, -1}, {40, 5}};
enum { kNumRequestRounds = sizeof kRequestRounds / sizeof kRequestRounds[0] };

static int RoundCount(const config_t* c, const round_t* r) {
  if (r->count >= 0) return r->count;
  return (SLOT - r->off - c->misalign) / c->elem;
}

/* Value of element i written by origin o to target t in round `round` of
 * configuration `cfg`: the low `elem` bytes of a mixed 64-bit value. */
static void Fill(unsigned char* dst, const config_t* c, int cfg, int round,
                 int o, int t, int n) {
  for (int i = 0; i < n; ++i) {
    const uint64_t v =
        du_mix(((uint64_t)cfg << 50) ^ ((uint64_t)round << 40) ^
               ((uint64_t)o << 32) ^ ((uint64_t)t << 24) ^ (uint64_t)i);
    memcpy(dst + (size_t)i * c->elem, &v, (size_t)c->elem);
  }
}

static void InitWindow(unsigned char* w, size_t bytes, int t, int cfg) {
  for (size_t j = 0; j < bytes; ++j) {
    w[j] = (unsigned char)((t * 31 + cfg * 7 + (int)(j * 13)) & 0xff);
  }
}

/* Serial reference of target t's window after the first `nl` lock_all
 * rounds. */
static void Reference(unsigned char* ref, const config_t* c, int cfg, int t,
                      int nl) {
  const size_t bytes = (size_t)du.size * SLOT;
  InitWindow(ref, bytes, t, cfg);
  for (int o = 0; o < du.size; ++o) {
    unsigned char* slot = ref + (size_t)o * SLOT + c->misalign;
    for (int r = 0; r < nl; ++r) {
      const round_t* rd = &kLockAllRounds[r];
      Fill(slot + rd->off, c, cfg, r, o, t, RoundCount(c, rd));
    }
  }
}

static MPI_Aint Disp(const config_t* c, int origin, int off) {
  return ((MPI_Aint)origin * SLOT + off + c->misalign) / c->disp_unit;
}

static void RunConfig(const config_t* c, int cfg, MPI_Win win,
                      unsigned char* base) {
  const int me = du.rank, n = du.size;
  const size_t bytes = (size_t)n * SLOT;
  InitWindow(base, bytes, me, cfg);
  MPI_Barrier(MPI_COMM_WORLD);

  unsigned char* src = malloc((size_t)n * SLOT);
  unsigned char* dst = malloc((size_t)n * SLOT);
  unsigned char* ref = malloc(bytes);
  unsigned char* whole = malloc(bytes);
  char what[160];

  /* Phase 1: lock_all; each round puts to everyone and completes the puts
   * (flush_all, or flush per target); odd rounds read back what they wrote
   * and complete the gets locally (flush_local_all / flush_local). */
  MPI_Win_lock_all(0, win);
  for (int r = 0; r < kNumLockAllRounds; ++r) {
    const round_t* rd = &kLockAllRounds[r];
    const int count = RoundCount(c, rd);
    for (int k = 0; k < n; ++k) {
      const int t = (me + k) % n;
      unsigned char* s = src + (size_t)t * SLOT;
      Fill(s, c, cfg, r, me, t, count);
      MPI_Put(s, count, c->type, t, Disp(c, me, rd->off), count, c->type, win);
    }
    MPI_Put(src, count, c->type, MPI_PROC_NULL, 0, count, c->type, win);
    if (r % 4 == 1) {
      for (int k = 0; k < n; ++k) MPI_Win_flush((me + n - k) % n, win);
    } else {
      MPI_Win_flush_all(win);
    }
    if (r % 2 == 0) continue;
    memset(dst, 0xEE, (size_t)n * SLOT);
    for (int k = 0; k < n; ++k) {
      const int t = (me + n - k) % n;
      MPI_Get(dst + (size_t)t * SLOT, count, c->type, t, Disp(c, me, rd->off),
              count, c->type, win);
    }
    if (r % 4 == 1) {
      MPI_Win_flush_local_all(win);
    } else {
      for (int k = 0; k < n; ++k) MPI_Win_flush_local(k, win);
    }
    for (int t = 0; t < n; ++t) {
      snprintf(what, sizeof what, "%s round %d read back from %d", c->name, r,
               t);
      du_check_bytes(what, dst + (size_t)t * SLOT, src + (size_t)t * SLOT,
                     (size_t)count * c->elem);
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  Reference(ref, c, cfg, me, kNumLockAllRounds);
  snprintf(what, sizeof what, "%s lock_all: own window", c->name);
  du_check_bytes(what, base, ref, bytes);
  uint64_t h = du_hash(DU_HASH_INIT, base, bytes);

  /* Everyone reads a neighbour's window whole, as bytes. */
  MPI_Win_lock_all(0, win);
  {
    const int t = (me + 1) % n;
    MPI_Get(whole, (int)bytes, MPI_BYTE, t, 0, (int)bytes, MPI_BYTE, win);
    MPI_Win_flush(t, win);
    Reference(ref, c, cfg, t, kNumLockAllRounds);
    snprintf(what, sizeof what, "%s lock_all: window of %d", c->name, t);
    du_check_bytes(what, whole, ref, bytes);
    h = du_hash(h, whole, bytes);
  }
  MPI_Win_unlock_all(win);
  snprintf(what, sizeof what, "%s lock_all put/get", c->name);
  du_phase(what, h);

  /* Phase 2: shared lock per target, MPI_Rput then MPI_Rget in separate
   * epochs. */
  for (int r = 0; r < kNumRequestRounds; ++r) {
    const round_t* rd = &kRequestRounds[r];
    const int count = RoundCount(c, rd);
    const int id = kNumLockAllRounds + r;
    const int t = (me + 1 + r) % n;
    MPI_Request req;
    Fill(src, c, cfg, id, me, t, count);
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    MPI_Rput(src, count, c->type, t, Disp(c, me, rd->off), count, c->type, win,
             &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_unlock(t, win);
    memset(dst, 0xEE, SLOT);
    MPI_Win_lock(MPI_LOCK_SHARED, t, r == 1 ? MPI_MODE_NOCHECK : 0, win);
    MPI_Rget(dst, count, c->type, t, Disp(c, me, rd->off), count, c->type, win,
             &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_unlock(t, win);
    snprintf(what, sizeof what, "%s request round %d read back from %d",
             c->name, r, t);
    du_check_bytes(what, dst, src, (size_t)count * c->elem);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* Reference: the lock_all rounds, then origin o's request round r in
   * target (o + 1 + r) % n. */
  Reference(ref, c, cfg, me, kNumLockAllRounds);
  for (int o = 0; o < n; ++o) {
    for (int r = 0; r < kNumRequestRounds; ++r) {
      if ((o + 1 + r) % n != me) continue;
      const round_t* rd = &kRequestRounds[r];
      Fill(ref + (size_t)o * SLOT + c->misalign + rd->off, c, cfg,
           kNumLockAllRounds + r, o, me, RoundCount(c, rd));
    }
  }
  snprintf(what, sizeof what, "%s requests: own window", c->name);
  du_check_bytes(what, base, ref, bytes);
  h = du_hash(DU_HASH_INIT, base, bytes);
  snprintf(what, sizeof what, "%s shared lock rput/rget", c->name);
  du_phase(what, h);

  /* A few values, as rank 0 sees its window: the first element each origin
   * wrote in the last lock_all round. */
  if (me == 0) {
    printf("%s sample:", c->name);
    for (int o = 0; o < n; ++o) {
      uint64_t v = 0;
      memcpy(&v,
             base + (size_t)o * SLOT + c->misalign +
                 kLockAllRounds[kNumLockAllRounds - 1].off,
             (size_t)c->elem);
      printf(" %" PRIx64, v);
    }
    printf("\n");
  }

  free(src);
  free(dst);
  free(ref);
  free(whole);
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  /* Configurations with the same disp_unit share a window. */
  const config_t configs[] = {
      {"du1_byte", 1, 1, MPI_BYTE, 0},
      {"du1_int_unaligned", 1, 4, MPI_INT, 3},
      {"du4_int", 4, 4, MPI_INT, 0},
      {"du4_uint64", 4, 8, MPI_UINT64_T, 0},
      {"du8_int64", 8, 8, MPI_INT64_T, 0},
  };
  const int num_configs = (int)(sizeof configs / sizeof configs[0]);
  MPI_Win win = MPI_WIN_NULL;
  unsigned char* base = NULL;
  for (int i = 0; i < num_configs; ++i) {
    if (i == 0 || configs[i].disp_unit != configs[i - 1].disp_unit) {
      if (win != MPI_WIN_NULL) MPI_Win_free(&win);
      MPI_Win_allocate((MPI_Aint)du.size * SLOT, configs[i].disp_unit,
                       MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    }
    RunConfig(&configs[i], i, win, base);
  }
  MPI_Win_free(&win);
  return du_finish();
}
