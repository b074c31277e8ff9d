/* Active target with fences on MPI_Win_allocate windows.
 *
 * Phase 1: a Jacobi-like smoothing of a periodic 1D array distributed over
 * a ring of ranks. Each iteration has a communication epoch (the left ghost
 * cells arrive by MPI_Put from the left neighbour, the right ghost cells are
 * read with MPI_Get from the right neighbour) and a compute epoch (local
 * stores into the window), separated by fences with asserts:
 *   first fence                MPI_MODE_NOPRECEDE
 *   after communication        MPI_MODE_NOSTORE | MPI_MODE_NOPUT
 *   after computation          MPI_MODE_NOPRECEDE (plain 0 every third
 *                              iteration)
 *   last fence                 MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED
 * The serial reference smooths the whole array with the same arithmetic.
 *
 * Phase 2: an all-to-all through fence epochs: puts and integer
 * accumulates to every rank in one epoch, then gets of what a third rank
 * wrote in the next (MPI_MODE_NOSTORE), plus a put to MPI_PROC_NULL. */
#include "tests/diff/diff_util.h"

#define N 48 /* interior cells per rank */
#define H 2  /* halo width */
#define ITERS 24
#define BLOCK 16 /* ints per (origin, target) pair in phase 2 */

static double Initial(long g) { return (double)((g * 37) % 101) / 8.0; }

static double Stencil(const double* u) { /* u[-2..2] */
  return ((((u[-2] + 4.0 * u[-1]) + 6.0 * u[0]) + 4.0 * u[1]) + u[2]) * 0.0625;
}

static void Jacobi(void) {
  const int me = du.rank, n = du.size;
  const int left = (me + n - 1) % n, right = (me + 1) % n;
  /* Window: H left ghosts, N interior cells, in doubles. */
  double* w = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)(H + N) * sizeof(double), sizeof(double),
                   MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win);
  double* u = w + H;
  for (int i = 0; i < N; ++i) u[i] = Initial((long)me * N + i);
  for (int i = 0; i < H; ++i) w[i] = -1.0;

  double ext[H + N + H]; /* left ghosts, interior, right ghosts */
  double rg[H];
  uint64_t h = DU_HASH_INIT;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  for (int it = 0; it < ITERS; ++it) {
    /* My last H cells become the right neighbour's left ghosts. */
    MPI_Put(&u[N - H], H, MPI_DOUBLE, right, 0, H, MPI_DOUBLE, win);
    /* The right neighbour's first H cells are my right ghosts. */
    MPI_Get(rg, H, MPI_DOUBLE, right, H, H, MPI_DOUBLE, win);
    MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win);
    memcpy(ext, w, sizeof(double) * (H + N));
    memcpy(ext + H + N, rg, sizeof rg);
    for (int i = 0; i < N; ++i) u[i] = Stencil(&ext[H + i]);
    if (it + 1 == ITERS) {
      MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win);
    } else {
      MPI_Win_fence(it % 3 == 2 ? 0 : MPI_MODE_NOPRECEDE, win);
    }
    if (it % 8 == 7) h = du_hash(h, u, sizeof(double) * N);
  }
  (void)left;

  /* Serial reference over the whole ring. */
  const long total = (long)n * N;
  double* a = malloc(sizeof(double) * (size_t)(total + 2 * H));
  double* b = malloc(sizeof(double) * (size_t)total);
  for (long g = 0; g < total; ++g) b[g] = Initial(g);
  for (int it = 0; it < ITERS; ++it) {
    for (long g = 0; g < total; ++g) a[H + g] = b[g];
    for (int i = 0; i < H; ++i) {
      a[i] = b[total - H + i];
      a[H + total + i] = b[i];
    }
    for (long g = 0; g < total; ++g) b[g] = Stencil(&a[H + g]);
  }
  du_check_bytes("jacobi: my cells", u, b + (long)me * N, sizeof(double) * N);
  for (int i = 0; i < H; ++i) {
    du_check_bytes("jacobi: left ghosts", &w[i], &a[H + (long)me * N - H + i],
                   sizeof(double));
  }
  du_phase_local("jacobi fence ring", h);

  /* Rank 0 prints the gathered array's checksum and a few cells. */
  double* all = me == 0 ? malloc(sizeof(double) * (size_t)total) : NULL;
  MPI_Gather(u, N, MPI_DOUBLE, all, N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (me == 0) {
    printf("jacobi after %d iterations: hash %016" PRIx64 "\n", ITERS,
           du_hash(DU_HASH_INIT, all, sizeof(double) * (size_t)total));
    printf("jacobi cells: %.17g %.17g %.17g\n", all[0], all[total / 2],
           all[total - 1]);
    free(all);
  }
  du_report();
  free(a);
  free(b);
  MPI_Win_free(&win);
}

static int PutValue(int o, int t, int j) { return o * 100000 + t * 1000 + j; }
static int AccValue(int o, int t, int j) { return (o + 1) * (t + 3) + j; }

static void AllToAll(void) {
  const int me = du.rank, n = du.size;
  /* Window: n put blocks (one per origin), then BLOCK accumulated ints. */
  const int words = n * BLOCK + BLOCK;
  int* w = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)words * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &w, &win);
  for (int i = 0; i < words; ++i) w[i] = -7;
  for (int j = 0; j < BLOCK; ++j) w[n * BLOCK + j] = 0;

  int* src = malloc(sizeof(int) * (size_t)n * BLOCK);
  int* acc = malloc(sizeof(int) * (size_t)n * BLOCK);
  int* got = malloc(sizeof(int) * (size_t)n * BLOCK);
  MPI_Win_fence(0, win);
  for (int k = 0; k < n; ++k) {
    const int t = (me + k) % n;
    for (int j = 0; j < BLOCK; ++j) {
      src[t * BLOCK + j] = PutValue(me, t, j);
      acc[t * BLOCK + j] = AccValue(me, t, j);
    }
    MPI_Put(&src[t * BLOCK], BLOCK, MPI_INT, t, me * BLOCK, BLOCK, MPI_INT,
            win);
    MPI_Accumulate(&acc[t * BLOCK], BLOCK, MPI_INT, t, n * BLOCK, BLOCK,
                   MPI_INT, MPI_SUM, win);
  }
  MPI_Put(src, BLOCK, MPI_INT, MPI_PROC_NULL, 0, BLOCK, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSTORE, win);
  /* From every target, the block a third rank wrote. */
  const int third = (me + 2) % n;
  for (int k = 0; k < n; ++k) {
    const int t = (me + n - k) % n;
    MPI_Get(&got[t * BLOCK], BLOCK, MPI_INT, t, third * BLOCK, BLOCK, MPI_INT,
            win);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

  for (int o = 0; o < n; ++o) {
    for (int j = 0; j < BLOCK; ++j) {
      du_check_i64("alltoall: put block", w[o * BLOCK + j], PutValue(o, me, j));
    }
  }
  for (int j = 0; j < BLOCK; ++j) {
    long long sum = 0;
    for (int o = 0; o < n; ++o) sum += AccValue(o, me, j);
    du_check_i64("alltoall: accumulated", w[n * BLOCK + j], sum);
  }
  for (int t = 0; t < n; ++t) {
    for (int j = 0; j < BLOCK; ++j) {
      du_check_i64("alltoall: get", got[t * BLOCK + j], PutValue(third, t, j));
    }
  }
  uint64_t h = du_hash(DU_HASH_INIT, w, sizeof(int) * (size_t)words);
  h = du_hash(h, got, sizeof(int) * (size_t)n * BLOCK);
  du_phase_local("alltoall fence put/accumulate/get", h);
  long long s = 0;
  for (int j = 0; j < BLOCK; ++j) s += w[n * BLOCK + j];
  du_report();
  du_print_per_rank("alltoall accumulated sums", s);
  free(src);
  free(acc);
  free(got);
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  Jacobi();
  AllToAll();
  return du_finish();
}
