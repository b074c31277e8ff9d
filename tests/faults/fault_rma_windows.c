/* fault_rma windows (usage in fault_rma.c): windows alive together while
 * node-shared memory runs out, every kind of RMA traffic on all of them,
 * checked against known values and summed into checksums that must be the
 * same natively and under the shim. A file of its own because it is the
 * largest mode and shares nothing but fault_rma_util.h with the others. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/faults/fault_rma_util.h"

enum { kCounters = 8 };

typedef struct {
  MPI_Win win;
  long* base;
  MPI_Aint longs;          /* this rank's window, in longs */
  MPI_Aint low, high, ctr; /* offsets (longs) of the regions, same on all */
  int own_memory;          /* MPI_Win_create window over calloc'ed memory */
} Window;

static long Sum(const long* v, int n) {
  long s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  return s;
}

/* Rank 0 fills /dev/shm (the test's private tmpfs) up to the last page. */
static const char kFiller[] = "/dev/shm/fault_rma.filler";

static void FillShm(void) {
  if (rank == 0) {
    const int fd = open(kFiller, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) Fail("cannot create %s", kFiller);
    off_t size = 0;
    for (off_t step = 1 << 20; step >= 4096; step /= 2) {
      while (posix_fallocate(fd, size, step) == 0) size += step;
    }
    close(fd);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void RunWindows(int nspecs, char** specs) {
  const int fill = strcmp(specs[0], "fill") == 0;
  if (fill) {
    FillShm();
    ++specs;
    --nspecs;
  }
  Window* ws = calloc(nspecs, sizeof(Window));
  long* checks = calloc(nspecs, sizeof(long));
  long* tmp = malloc(sizeof(long) * K);
  long* src = malloc(sizeof(long) * K);
  MPI_Aint min_longs = -1;
  for (int w = 0; w < nspecs; ++w) {
    long r0 = 0, others = 0;
    char expect = 0, flavor = 'a';
    if (sscanf(specs[w], "%ld:%ld:%c:%c", &r0, &others, &expect, &flavor) < 3 ||
        (expect != 'm' && expect != 'u') || (flavor != 'a' && flavor != 'c')) {
      Fail("bad window spec %s", specs[w]);
    }
    const MPI_Aint bytes = (MPI_Aint)(rank == 0 ? r0 : others) << 20;
    if (flavor == 'a') {
      MPI_OK(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &ws[w].base, &ws[w].win));
    } else {
      ws[w].base = calloc(bytes / sizeof(long), sizeof(long));
      ws[w].own_memory = 1;
      if (ws[w].base == NULL) Fail("out of memory");
      MPI_OK(MPI_Win_create(ws[w].base, bytes, sizeof(long), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &ws[w].win));
    }
    ExpectManaged(ws[w].win, expect == 'm', specs[w]);
    ws[w].longs = bytes / (MPI_Aint)sizeof(long);
    /* Regions every rank has: the smallest window decides. */
    MPI_Aint smallest = 0;
    MPI_Allreduce(&ws[w].longs, &smallest, 1, MPI_AINT, MPI_MIN,
                  MPI_COMM_WORLD);
    if (smallest < (MPI_Aint)(2 * K * nranks + kCounters)) {
      Fail("window %d too small", w);
    }
    ws[w].low = 0;
    ws[w].ctr = smallest - kCounters; /* the last longs */
    ws[w].high = ws[w].ctr - (MPI_Aint)K * nranks;
    if (min_longs < 0 || smallest < min_longs) min_longs = smallest;
  }

  /* Phase 0: local initialization inside a fence epoch. */
  for (int w = 0; w < nspecs; ++w) MPI_OK(MPI_Win_fence(0, ws[w].win));
  for (int w = 0; w < nspecs; ++w) {
    memset(ws[w].base + ws[w].low, 0, sizeof(long) * K * nranks);
    memset(ws[w].base + ws[w].high, 0,
           sizeof(long) * ((size_t)K * nranks + kCounters));
  }
  for (int w = 0; w < nspecs; ++w) MPI_OK(MPI_Win_fence(0, ws[w].win));

  /* Phase 1: fence, every rank puts to every rank's high region. */
  for (int w = 0; w < nspecs; ++w) {
    for (int t = 0; t < nranks; ++t) {
      for (int i = 0; i < K; ++i) src[i] = Value(w, rank, t, i, 1);
      MPI_OK(MPI_Put(src, K, MPI_LONG, t, ws[w].high + (MPI_Aint)rank * K, K,
                     MPI_LONG, ws[w].win));
    }
  }
  for (int w = 0; w < nspecs; ++w) MPI_OK(MPI_Win_fence(0, ws[w].win));
  for (int w = 0; w < nspecs; ++w) {
    for (int o = 0; o < nranks; ++o) {
      for (int i = 0; i < K; ++i) {
        const long got = ws[w].base[ws[w].high + (MPI_Aint)o * K + i];
        if (got != Value(w, o, rank, i, 1)) {
          Fail("fence put: window %d from %d [%d] = %ld", w, o, i, got);
        }
      }
      checks[w] += Sum(ws[w].base + ws[w].high + (MPI_Aint)o * K, K);
    }
  }
  for (int w = 0; w < nspecs; ++w) MPI_OK(MPI_Win_fence(0, ws[w].win));

  /* Phase 2: exclusive lock, put, flush, get back, unlock; windows
     interleaved inside the loop over targets. */
  for (int t = 0; t < nranks; ++t) {
    for (int w = 0; w < nspecs; ++w) {
      for (int i = 0; i < K; ++i) src[i] = Value(w, rank, t, i, 2);
      MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, ws[w].win));
      MPI_OK(MPI_Put(src, K, MPI_LONG, t, ws[w].low + (MPI_Aint)rank * K, K,
                     MPI_LONG, ws[w].win));
      MPI_OK(MPI_Win_flush(t, ws[w].win));
      MPI_OK(MPI_Get(tmp, K, MPI_LONG, t, ws[w].low + (MPI_Aint)rank * K, K,
                     MPI_LONG, ws[w].win));
      MPI_OK(MPI_Win_unlock(t, ws[w].win));
      if (memcmp(tmp, src, sizeof(long) * K) != 0) {
        Fail("lock put/get: window %d target %d", w, t);
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int w = 0; w < nspecs; ++w) {
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, ws[w].win));
    for (int o = 0; o < nranks; ++o) {
      for (int i = 0; i < K; ++i) {
        const long got = ws[w].base[ws[w].low + (MPI_Aint)o * K + i];
        if (got != Value(w, o, rank, i, 2)) {
          Fail("lock put: window %d from %d [%d] = %ld", w, o, i, got);
        }
      }
      checks[w] += Sum(ws[w].base + ws[w].low + (MPI_Aint)o * K, K);
    }
    MPI_OK(MPI_Win_unlock(rank, ws[w].win));
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* Phase 3: lock_all; accumulate SUM, fetch_and_op SUM, get_accumulate
     SUM on the counters at the very end of every window. */
  const int reps = 5;
  for (int w = 0; w < nspecs; ++w) MPI_OK(MPI_Win_lock_all(0, ws[w].win));
  for (int rep = 0; rep < reps; ++rep) {
    for (int w = 0; w < nspecs; ++w) {
      for (int t = 0; t < nranks; ++t) {
        const long add = rank + 1, fadd = 2 * (rank + 1);
        long vec[2] = {rank + 1, 1}, fetched[2] = {0, 0}, old = -1;
        MPI_OK(MPI_Accumulate(&add, 1, MPI_LONG, t, ws[w].ctr, 1, MPI_LONG,
                              MPI_SUM, ws[w].win));
        MPI_OK(MPI_Fetch_and_op(&fadd, &old, MPI_LONG, t, ws[w].ctr + 1,
                                MPI_SUM, ws[w].win));
        MPI_OK(MPI_Get_accumulate(vec, 2, MPI_LONG, fetched, 2, MPI_LONG, t,
                                  ws[w].ctr + 2, 2, MPI_LONG, MPI_SUM,
                                  ws[w].win));
        MPI_OK(MPI_Win_flush(t, ws[w].win));
        if (old < 0 || old % 2 != 0 || fetched[0] < 0 || fetched[1] < 0) {
          Fail("fetch: window %d target %d old %ld fetched %ld %ld", w, t, old,
               fetched[0], fetched[1]);
        }
      }
    }
  }
  for (int w = 0; w < nspecs; ++w) MPI_OK(MPI_Win_unlock_all(ws[w].win));
  MPI_Barrier(MPI_COMM_WORLD);
  const long tri = (long)nranks * (nranks + 1) / 2;
  for (int w = 0; w < nspecs; ++w) {
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, ws[w].win));
    const long* c = ws[w].base + ws[w].ctr;
    if (c[0] != reps * tri || c[1] != 2 * reps * tri || c[2] != reps * tri ||
        c[3] != (long)reps * nranks) {
      Fail("accumulate: window %d counters %ld %ld %ld %ld", w, c[0], c[1],
           c[2], c[3]);
    }
    checks[w] += c[0] + c[1] + c[2] + c[3];
    MPI_OK(MPI_Win_unlock(rank, ws[w].win));
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* Phase 4: compare_and_swap chain, rank s swaps s -> s+1 on every
     target; then fence-separated get_accumulate MPI_NO_OP reads. */
  for (int s = 0; s < nranks; ++s) {
    if (rank == s) {
      for (int w = 0; w < nspecs; ++w) {
        for (int t = 0; t < nranks; ++t) {
          const long expect = s, next = s + 1;
          long old = -1;
          MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, ws[w].win));
          MPI_OK(MPI_Compare_and_swap(&next, &expect, &old, MPI_LONG, t,
                                      ws[w].ctr + 4, ws[w].win));
          MPI_OK(MPI_Win_unlock(t, ws[w].win));
          if (old != s) Fail("cas: window %d target %d old %ld", w, t, old);
        }
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  for (int w = 0; w < nspecs; ++w) MPI_OK(MPI_Win_fence(0, ws[w].win));
  for (int w = 0; w < nspecs; ++w) {
    const int t = (rank + 1) % nranks;
    long got[K];
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_LONG, got, K, MPI_LONG, t,
                              ws[w].high + (MPI_Aint)rank * K, K, MPI_LONG,
                              MPI_NO_OP, ws[w].win));
    MPI_OK(MPI_Win_fence(0, ws[w].win));
    for (int i = 0; i < K; ++i) {
      if (got[i] != Value(w, rank, t, i, 1)) Fail("no_op read: window %d", w);
    }
    if (ws[w].base[ws[w].ctr + 4] != nranks) {
      Fail("cas: window %d final %ld", w, ws[w].base[ws[w].ctr + 4]);
    }
    checks[w] += Sum(got, K) + ws[w].base[ws[w].ctr + 4];
  }

  /* Checksums, summed over ranks; freed in reverse order. */
  long* totals = calloc(nspecs, sizeof(long));
  MPI_Reduce(checks, totals, nspecs, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int w = 0; w < nspecs; ++w) {
      printf("window %d (%s): %d ranks verified, checksum %ld\n", w, specs[w],
             nranks, totals[w]);
    }
  }
  for (int w = nspecs - 1; w >= 0; --w) {
    MPI_OK(MPI_Win_free(&ws[w].win));
    if (ws[w].own_memory) free(ws[w].base);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (fill && rank == 0) unlink(kFiller);
  free(totals);
  free(ws);
  free(checks);
  free(tmp);
  free(src);
}
