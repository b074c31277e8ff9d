/* General active target synchronization (post/start/complete/wait) on an
 * MPI_Win_allocate window.
 *
 * Phase 1: a ring. Every iteration each rank exposes its inbox to its left
 * neighbour (MPI_Win_post, with MPI_MODE_NOSTORE after the first round),
 * opens an access epoch to its right neighbour (MPI_Win_start), puts its
 * state vector there, completes, and waits for its own inbox (MPI_Win_wait,
 * or polling MPI_Win_test on odd iterations). The new state is an integer
 * function of the received vector, so the serial reference replays the
 * whole ring exactly.
 *
 * Phase 2: all-to-all PSCW with the world group on both sides: puts into
 * every rank's block, and gets of data that stays constant in the epoch.
 *
 * Phase 3: a passive epoch after the PSCW epochs reads the inboxes back. */
#include "tests/diff/diff_util.h"

#define K 24 /* uint64 words in a state vector */
#define ITERS 32
#define BLOCK 8

static uint64_t Step(const uint64_t* in, int j, int rank, int it) {
  return in[j] * UINT64_C(6364136223846793005) + in[(j + 1) % K] +
         (uint64_t)rank * 977 + (uint64_t)it;
}

static void InitState(uint64_t* x, int rank) {
  for (int j = 0; j < K; ++j) x[j] = du_mix((uint64_t)rank * 1000 + j);
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  const int me = du.rank, n = du.size;
  const int left = (me + n - 1) % n, right = (me + 1) % n;

  /* Window: inbox (K words), n put blocks, one constant block. */
  const int words = K + n * BLOCK + BLOCK;
  uint64_t* w = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)words * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &w,
                   &win);
  uint64_t* inbox = w;
  uint64_t* blocks = w + K;
  uint64_t* constant = w + K + n * BLOCK;
  for (int i = 0; i < words; ++i) w[i] = 0;
  for (int j = 0; j < BLOCK; ++j) constant[j] = du_mix(0xc0ffee + me * 64 + j);

  MPI_Group world, left_group, right_group;
  MPI_Win_get_group(win, &world);
  MPI_Group_incl(world, 1, &left, &left_group);
  MPI_Group_incl(world, 1, &right, &right_group);

  /* Phase 1: the ring. */
  uint64_t x[K], next[K];
  InitState(x, me);
  uint64_t h = DU_HASH_INIT;
  MPI_Barrier(MPI_COMM_WORLD); /* window initialized everywhere */
  for (int it = 0; it < ITERS; ++it) {
    MPI_Win_post(left_group, it == 0 ? 0 : MPI_MODE_NOSTORE, win);
    MPI_Win_start(right_group, 0, win);
    MPI_Put(x, K, MPI_UINT64_T, right, 0, K, MPI_UINT64_T, win);
    MPI_Win_complete(win);
    if (it % 2 == 0) {
      MPI_Win_wait(win);
    } else {
      int flag = 0;
      while (!flag) MPI_Win_test(win, &flag);
    }
    for (int j = 0; j < K; ++j) next[j] = Step(inbox, j, me, it);
    memcpy(x, next, sizeof x);
    h = du_hash(h, x, sizeof x);
  }
  /* Serial reference: all ranks' states. */
  uint64_t* ref = malloc(sizeof(uint64_t) * (size_t)n * K);
  uint64_t* tmp = malloc(sizeof(uint64_t) * (size_t)n * K);
  for (int r = 0; r < n; ++r) InitState(ref + (size_t)r * K, r);
  for (int it = 0; it < ITERS; ++it) {
    for (int r = 0; r < n; ++r) {
      const uint64_t* in = ref + (size_t)((r + n - 1) % n) * K;
      for (int j = 0; j < K; ++j) tmp[(size_t)r * K + j] = Step(in, j, r, it);
    }
    memcpy(ref, tmp, sizeof(uint64_t) * (size_t)n * K);
  }
  du_check_bytes("ring: final state", x, ref + (size_t)me * K, sizeof x);
  du_phase_local("pscw ring", h);

  /* Phase 2: all-to-all. */
  uint64_t src[BLOCK];
  uint64_t* got = malloc(sizeof(uint64_t) * (size_t)n * BLOCK);
  for (int j = 0; j < BLOCK; ++j) src[j] = du_mix(0xabc + me * 100 + j);
  MPI_Win_post(world, MPI_MODE_NOSTORE, win);
  MPI_Win_start(world, 0, win);
  for (int k = 0; k < n; ++k) {
    const int t = (me + k) % n;
    MPI_Put(src, BLOCK, MPI_UINT64_T, t, K + me * BLOCK, BLOCK, MPI_UINT64_T,
            win);
    MPI_Get(got + (size_t)t * BLOCK, BLOCK, MPI_UINT64_T, t, K + n * BLOCK,
            BLOCK, MPI_UINT64_T, win);
  }
  MPI_Win_complete(win);
  MPI_Win_wait(win);
  for (int o = 0; o < n; ++o) {
    for (int j = 0; j < BLOCK; ++j) {
      du_check_i64("alltoall: block", (long long)blocks[o * BLOCK + j],
                   (long long)du_mix(0xabc + o * 100 + j));
    }
  }
  for (int t = 0; t < n; ++t) {
    for (int j = 0; j < BLOCK; ++j) {
      du_check_i64("alltoall: constant", (long long)got[t * BLOCK + j],
                   (long long)du_mix(0xc0ffee + t * 64 + j));
    }
  }
  h = du_hash(DU_HASH_INIT, blocks, sizeof(uint64_t) * (size_t)n * BLOCK);
  h = du_hash(h, got, sizeof(uint64_t) * (size_t)n * BLOCK);
  du_phase_local("pscw all-to-all put/get", h);

  /* Phase 3: passive read-back of the right neighbour's inbox, which holds
   * my state before the last step. */
  MPI_Barrier(MPI_COMM_WORLD);
  uint64_t back[K];
  MPI_Win_lock_all(0, win);
  MPI_Get(back, K, MPI_UINT64_T, right, 0, K, MPI_UINT64_T, win);
  MPI_Win_unlock_all(win);
  {
    /* Replay my own states up to ITERS - 1. */
    for (int r = 0; r < n; ++r) InitState(ref + (size_t)r * K, r);
    for (int it = 0; it + 1 < ITERS; ++it) {
      for (int r = 0; r < n; ++r) {
        const uint64_t* in = ref + (size_t)((r + n - 1) % n) * K;
        for (int j = 0; j < K; ++j) tmp[(size_t)r * K + j] = Step(in, j, r, it);
      }
      memcpy(ref, tmp, sizeof(uint64_t) * (size_t)n * K);
    }
    du_check_bytes("read-back after pscw", back, ref + (size_t)me * K,
                   sizeof back);
  }
  du_phase_local("passive read-back after pscw",
                 du_hash(DU_HASH_INIT, back, sizeof back));
  du_report();
  du_print_per_rank("final state word 0 (low 32 bits)",
                    (long long)(x[0] & 0xffffffffu));

  MPI_Group_free(&left_group);
  MPI_Group_free(&right_group);
  MPI_Group_free(&world);
  free(ref);
  free(tmp);
  free(got);
  MPI_Win_free(&win);
  return du_finish();
}
