/* ARMCI-MPI (Debian's libarmci-mpich) exercised the way Global Arrays and
 * NWChem use it, every value checked against what the ranks wrote:
 *   contiguous ARMCI_Put/Get/Acc, strided ARMCI_PutS/GetS/AccS (1 and 2
 *   stride levels), vector ARMCI_PutV/GetV/AccV, mutexes
 *   (ARMCI_Create_mutexes/Lock/Unlock around a get-increment-put counter)
 *   and read-modify-write (ARMCI_Rmw fetch-and-add int and long, swap).
 * Prints one line per part and "RESULT ok" or "RESULT wrong (N errors)";
 * exits 1 when anything was wrong. ARMCI-MPI's environment knobs
 * (ARMCI_USE_WIN_ALLOCATE, ARMCI_IOV_METHOD, ARMCI_STRIDED_METHOD, ...)
 * choose the MPI calls underneath; the program is the same for all.
 *   armci_check [ROUNDS]   (ROUNDS: mutex and fetch-and-add rounds per rank)
 */
#include <armci.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kContig = 512, kGrid = 32, kPlanes = 4, kVec = 1024 };

static int me, nproc;
static long errors;

/* Reports a mismatch (the first few of each part in full). */
static void expect(const char *part, long index, double got, double want) {
  static const char *last_part;
  static int shown;
  if (got == want) return;
  if (part != last_part) {
    last_part = part;
    shown = 0;
  }
  if (shown++ < 5)
    printf("rank %d %s: element %ld is %.17g, expected %.17g\n", me, part,
           index, got, want);
  errors++;
}

static void part_done(const char *part, long before) {
  long mine = errors - before, all;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("%-28s %s\n", part, all ? "WRONG" : "ok");
}

/* Contiguous: put my pattern into my right neighbour's block, read it back,
 * then everyone accumulates 2 * (r + i) into everyone. */
static void contiguous(double **base) {
  const char *part = "contiguous put/get/acc";
  long before = errors;
  int right = (me + 1) % nproc, left = (me + nproc - 1) % nproc;
  double *src = malloc(kVec * sizeof(double)),
         *dst = malloc(kVec * sizeof(double));
  for (int i = 0; i < kContig; i++) src[i] = 1000.0 * me + i;
  ARMCI_Put(src, base[right], kContig * sizeof(double), right);
  ARMCI_Barrier();
  ARMCI_Access_begin(base[me]);
  for (int i = 0; i < kContig; i++)
    expect(part, i, base[me][i], 1000.0 * left + i);
  ARMCI_Access_end(base[me]);
  ARMCI_Get(base[right], dst, kContig * sizeof(double), right);
  for (int i = 0; i < kContig; i++) expect(part, i, dst[i], src[i]);
  ARMCI_Barrier();

  double scale = 2.0;
  for (int i = 0; i < kContig; i++) src[i] = me + i;
  for (int k = 0; k < nproc; k++) {
    int t = (me + k) % nproc;
    ARMCI_Acc(ARMCI_ACC_DBL, &scale, src, base[t] + kContig,
              kContig * sizeof(double), t);
  }
  ARMCI_Barrier();
  ARMCI_Access_begin(base[me]);
  for (int i = 0; i < kContig; i++)
    expect(part, kContig + i, base[me][kContig + i],
           2.0 * (nproc * (double)i + nproc * (nproc - 1) / 2.0));
  ARMCI_Access_end(base[me]);
  ARMCI_Barrier();
  free(src);
  free(dst);
  part_done(part, before);
}

/* Strided: the right neighbour's 32x32 grid at offset 2*kContig gets an
 * 8x16 patch from a local array of row length 20; GetS reads it back into
 * row length 24. Then a 2-level patch (4 planes of 32x32 grids, 3 planes x
 * 6 rows x 10 columns) is accumulated by every rank into every rank. */
static void strided(double **base) {
  const char *part = "strided putS/getS/accS";
  long before = errors;
  int right = (me + 1) % nproc, left = (me + nproc - 1) % nproc;
  double *grid = base[me] + 2 * kContig;
  double src[8 * 20], back[8 * 24];
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 20; c++) src[r * 20 + c] = me * 10000.0 + r * 100 + c;
  int src_stride[1] = {20 * sizeof(double)},
      dst_stride[1] = {kGrid * sizeof(double)};
  int count[2] = {16 * sizeof(double), 8};
  double *patch = base[right] + 2 * kContig + 4 * kGrid + 3; /* row 4, col 3 */
  ARMCI_PutS(src, src_stride, patch, dst_stride, count, 1, right);
  ARMCI_Barrier();
  ARMCI_Access_begin(base[me]);
  for (int r = 0; r < kGrid; r++)
    for (int c = 0; c < kGrid; c++) {
      int in = r >= 4 && r < 12 && c >= 3 && c < 19;
      double want = in ? left * 10000.0 + (r - 4) * 100 + (c - 3) : 0.0;
      expect(part, r * kGrid + c, grid[r * kGrid + c], want);
    }
  ARMCI_Access_end(base[me]);
  int back_stride[1] = {24 * sizeof(double)};
  memset(back, 0, sizeof back);
  ARMCI_GetS(patch, dst_stride, back, back_stride, count, 1, right);
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 24; c++)
      expect(part, r * 24 + c, back[r * 24 + c],
             c < 16 ? src[r * 20 + c] : 0.0);
  ARMCI_Barrier();

  /* Two stride levels: planes of kGrid x kGrid doubles. */
  double acc_src[3 * 6 * 10];
  for (int p = 0; p < 3; p++)
    for (int r = 0; r < 6; r++)
      for (int c = 0; c < 10; c++)
        acc_src[(p * 6 + r) * 10 + c] = me + 1.0 + p * 100 + r * 10 + c;
  int acc_src_stride[2] = {10 * sizeof(double), 60 * sizeof(double)};
  int acc_dst_stride[2] = {kGrid * sizeof(double),
                           kGrid * kGrid * sizeof(double)};
  int acc_count[3] = {10 * sizeof(double), 6, 3};
  double scale = 1.0;
  for (int k = 0; k < nproc; k++) {
    int t = (me + k) % nproc;
    double *cube = base[t] + 2 * kContig + kGrid * kGrid;
    ARMCI_AccS(ARMCI_ACC_DBL, &scale, acc_src, acc_src_stride,
               cube + 2 * kGrid + 5, acc_dst_stride, acc_count, 2, t);
  }
  ARMCI_Barrier();
  ARMCI_Access_begin(base[me]);
  double *cube = grid + kGrid * kGrid;
  double ranks_sum = nproc * (nproc + 1) / 2.0;
  for (int p = 0; p < kPlanes; p++)
    for (int r = 0; r < kGrid; r++)
      for (int c = 0; c < kGrid; c++) {
        int in = p < 3 && r >= 2 && r < 8 && c >= 5 && c < 15;
        double want =
            in ? ranks_sum + nproc * (p * 100.0 + (r - 2) * 10 + (c - 5)) : 0.0;
        long at = ((long)p * kGrid + r) * kGrid + c;
        expect(part, at, cube[at], want);
      }
  ARMCI_Access_end(base[me]);
  ARMCI_Barrier();
  part_done(part, before);
}

/* Vector: 2 descriptors (16 segments of 3 doubles, 5 segments of 7
 * doubles) scattered into the right neighbour's vector area; GetV gathers
 * them back; AccV from every rank into every rank's second half. */
static void vector(double **base) {
  const char *part = "vector putV/getV/accV";
  long before = errors;
  int right = (me + 1) % nproc, left = (me + nproc - 1) % nproc;
  double *area = base[me] + 2 * kContig + (1 + kPlanes) * kGrid * kGrid;
  double *rarea = base[right] + 2 * kContig + (1 + kPlanes) * kGrid * kGrid;
  double src[16 * 3 + 5 * 7], back[16 * 3 + 5 * 7];
  void *s0[16], *d0[16], *s1[5], *d1[5], *b0[16], *b1[5];
  for (int i = 0; i < 16 * 3 + 5 * 7; i++) src[i] = me * 1000.0 + i + 0.5;
  for (int j = 0; j < 16; j++) { /* segment j at 8*j */
    s0[j] = src + 3 * j;
    d0[j] = rarea + 8 * j;
    b0[j] = back + 3 * j;
  }
  for (int j = 0; j < 5; j++) { /* segment j at 200 + 11*j */
    s1[j] = src + 48 + 7 * j;
    d1[j] = rarea + 200 + 11 * j;
    b1[j] = back + 48 + 7 * j;
  }
  armci_giov_t iov[2] = {{s0, d0, 3 * sizeof(double), 16},
                         {s1, d1, 7 * sizeof(double), 5}};
  ARMCI_PutV(iov, 2, right);
  ARMCI_Barrier();
  ARMCI_Access_begin(base[me]);
  for (int i = 0; i < kVec / 2; i++) {
    double want = 0.0;
    if (i < 128 && i % 8 < 3) want = left * 1000.0 + 3 * (i / 8) + i % 8 + 0.5;
    if (i >= 200 && i < 255 && (i - 200) % 11 < 7)
      want = left * 1000.0 + 48 + 7 * ((i - 200) / 11) + (i - 200) % 11 + 0.5;
    expect(part, i, area[i], want);
  }
  ARMCI_Access_end(base[me]);
  memset(back, 0, sizeof back);
  armci_giov_t giov[2] = {{d0, b0, 3 * sizeof(double), 16},
                          {d1, b1, 7 * sizeof(double), 5}};
  ARMCI_GetV(giov, 2, right);
  for (int i = 0; i < 16 * 3 + 5 * 7; i++) expect(part, i, back[i], src[i]);
  ARMCI_Barrier();

  /* AccV: 32 segments of 4 doubles at stride 6 in the second half. */
  double acc_src[32 * 4];
  void *as[32], *ad[32];
  double scale = 3.0;
  for (int i = 0; i < 32 * 4; i++) acc_src[i] = me + i;
  for (int k = 0; k < nproc; k++) {
    int t = (me + k) % nproc;
    double *tarea =
        base[t] + 2 * kContig + (1 + kPlanes) * kGrid * kGrid + kVec / 2;
    for (int j = 0; j < 32; j++) {
      as[j] = acc_src + 4 * j;
      ad[j] = tarea + 6 * j;
    }
    armci_giov_t aiov = {as, ad, 4 * sizeof(double), 32};
    ARMCI_AccV(ARMCI_ACC_DBL, &scale, &aiov, 1, t);
  }
  ARMCI_Barrier();
  ARMCI_Access_begin(base[me]);
  for (int i = 0; i < kVec / 2; i++) {
    double want = 0.0;
    if (i < 32 * 6 && i % 6 < 4) {
      int s = 4 * (i / 6) + i % 6;
      want = 3.0 * (nproc * (double)s + nproc * (nproc - 1) / 2.0);
    }
    expect(part, kVec / 2 + i, area[kVec / 2 + i], want);
  }
  ARMCI_Access_end(base[me]);
  ARMCI_Barrier();
  part_done(part, before);
}

/* Mutex: ROUNDS times per rank, lock mutex 1 at rank 0 and increment a
 * counter on rank nproc-1 by get + put (not atomic without the mutex). */
static void mutexes(long **counter, int rounds) {
  const char *part = "mutex lock/unlock counter";
  long before = errors;
  int owner = nproc - 1;
  ARMCI_Create_mutexes(2);
  ARMCI_Barrier();
  for (int k = 0; k < rounds; k++) {
    long v;
    ARMCI_Lock(1, 0);
    ARMCI_Get(counter[owner], &v, sizeof v, owner);
    v++;
    ARMCI_Put(&v, counter[owner], sizeof v, owner);
    ARMCI_Fence(owner);
    ARMCI_Unlock(1, 0);
  }
  ARMCI_Barrier();
  long final;
  ARMCI_Get(counter[owner], &final, sizeof final, owner);
  expect(part, 0, final, (double)nproc * rounds);
  ARMCI_Barrier();
  ARMCI_Destroy_mutexes();
  part_done(part, before);
}

static int compare_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Every value in 0 .. n*rounds-1 fetched exactly once over all ranks. */
static void check_tickets(const char *part, long *mine, int rounds) {
  long *all = malloc(sizeof(long) * rounds * nproc);
  MPI_Gather(mine, rounds, MPI_LONG, all, rounds, MPI_LONG, 0, MPI_COMM_WORLD);
  if (me == 0) {
    qsort(all, (size_t)rounds * nproc, sizeof(long), compare_long);
    long dup = 0;
    for (long i = 0; i < (long)rounds * nproc; i++)
      if (all[i] != i) dup++;
    if (dup) {
      printf(
          "rank 0 %s: %ld of %ld fetched values are not the tickets "
          "0..%ld (updates lost or fetched twice)\n",
          part, dup, (long)rounds * nproc, (long)rounds * nproc - 1);
      errors++;
    }
  }
  free(all);
}

/* Read-modify-write: fetch-and-add of int (counter at rank 0) and long
 * (rank nproc-1), then swap chains. */
static void rmw(int **ints, long **longs, int rounds) {
  const char *part = "rmw fetch-and-add/swap";
  long before = errors;
  long *tickets = malloc(sizeof(long) * rounds);
  for (int k = 0; k < rounds; k++) {
    int old;
    ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &old, ints[0], 1, 0);
    tickets[k] = old;
  }
  check_tickets("fetch-and-add int", tickets, rounds);
  for (int k = 0; k < rounds; k++) {
    long old;
    ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, longs[nproc - 1], 1, nproc - 1);
    tickets[k] = old;
  }
  check_tickets("fetch-and-add long", tickets, rounds);
  ARMCI_Barrier();
  expect(part, 0, ARMCI_GetValueInt(ints[0], 0), (double)nproc * rounds);
  expect(part, 1, ARMCI_GetValueLong(longs[nproc - 1], nproc - 1),
         (double)nproc * rounds);
  ARMCI_Barrier();

  /* Swap: rank 0's int starts at -1; every rank swaps in its own unique
   * values. The fetched values plus the final one must be exactly -1 and
   * every value swapped in, each once. */
  if (me == 0) ARMCI_PutValueInt(-1, ints[0], 0);
  ARMCI_Barrier();
  int swaps = rounds < 64 ? rounds : 64;
  long *olds = malloc(sizeof(long) * swaps);
  for (int k = 0; k < swaps; k++) {
    int v = me * swaps + k;
    ARMCI_Rmw(ARMCI_SWAP, &v, ints[0], 0, 0);
    olds[k] = v;
  }
  ARMCI_Barrier();
  long *all = malloc(sizeof(long) * (swaps * nproc + 1));
  MPI_Gather(olds, swaps, MPI_LONG, all, swaps, MPI_LONG, 0, MPI_COMM_WORLD);
  if (me == 0) {
    all[swaps * nproc] = ARMCI_GetValueInt(ints[0], 0);
    qsort(all, (size_t)swaps * nproc + 1, sizeof(long), compare_long);
    for (long i = 0; i <= (long)swaps * nproc; i++)
      expect(part, 2 + i, all[i], i - 1);
  }
  free(all);
  free(olds);
  free(tickets);
  ARMCI_Barrier();
  part_done(part, before);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  MPI_Init(&argc, &argv);
  ARMCI_Init();
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nproc);
  double t0 = MPI_Wtime();

  long doubles = 2 * kContig + (1 + kPlanes) * kGrid * kGrid + kVec;
  double **base = malloc(sizeof(double *) * nproc);
  long **longs = malloc(sizeof(long *) * nproc);
  int **ints = malloc(sizeof(int *) * nproc);
  ARMCI_Malloc((void **)base, doubles * sizeof(double));
  /* One counter per rank: small allocations, as GA's task counters are. */
  ARMCI_Malloc((void **)longs, sizeof(long));
  ARMCI_Malloc((void **)ints, sizeof(int));
  ARMCI_Access_begin(base[me]);
  memset(base[me], 0, doubles * sizeof(double));
  ARMCI_Access_end(base[me]);
  ARMCI_PutValueLong(0, longs[me], me);
  ARMCI_PutValueInt(0, ints[me], me);
  ARMCI_Barrier();

  contiguous(base);
  strided(base);
  vector(base);
  mutexes(longs, rounds);
  ARMCI_Barrier();
  ARMCI_PutValueLong(0, longs[me], me);
  ARMCI_Barrier();
  rmw(ints, longs, rounds);

  ARMCI_Free(ints[me]);
  ARMCI_Free(longs[me]);
  ARMCI_Free(base[me]);
  long all;
  MPI_Allreduce(&errors, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) {
    printf("ranks %d, rounds %d, %.3f s\n", nproc, rounds, MPI_Wtime() - t0);
    if (all)
      printf("RESULT wrong (%ld errors)\n", all);
    else
      printf("RESULT ok\n");
  }
  free(ints);
  free(longs);
  free(base);
  ARMCI_Finalize();
  MPI_Finalize();
  return all ? 1 : 0;
}
