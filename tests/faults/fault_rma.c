/* RMA programs for the fault tests (tests/faults/faults.sh).
 *
 *   fault_rma windows SPEC...
 *     Creates one MPI_Win_allocate window per SPEC, all alive together, and
 *     drives fence, exclusive-lock put/get, lock_all accumulate,
 *     fetch_and_op, compare_and_swap and get_accumulate traffic on all of
 *     them, interleaved, touching both ends of every window. Every result is
 *     checked against its known value (exit 1 on a mismatch); rank 0 prints
 *     per-window checksums, identical natively and under the shim.
 *     SPEC = R0_MIB:OTHERS_MIB:EXPECT: rank 0 asks for R0_MIB MiB, every
 *     other rank for OTHERS_MIB; EXPECT m (managed by the shim) or u
 *     (unmanaged: the shim fell back to a plain MPI window), checked on
 *     every rank when the shim is preloaded; an optional 4th field c makes
 *     it an MPI_Win_create window over calloc'ed memory (a: allocate).
 *     A first SPEC "fill" makes rank 0 fill /dev/shm to the last page
 *     before any window is created (the file is removed at the end).
 *     A SPEC "then" ends a group: the windows before it are freed before
 *     those after it are created (freed segments may still be cached).
 *
 *   fault_rma alive MODE PIDDIR
 *     Windows of every flavor the shim manages (allocate, allocate_shared,
 *     create) alive together, RMA traffic on all of them; every rank writes
 *     "pid parent-pid" to PIDDIR/rank.N first. While they are alive rank 0
 *     checks that no rmashim.* name is left in /dev/shm. MODE:
 *       exit   traffic, free, finalize; rank 0 prints "alive exit ok"
 *       abort  the last rank calls MPI_Abort amid the others' traffic
 *       kill   the last rank SIGKILLs itself amid the others' traffic
 *     In abort/kill modes the surviving ranks keep up passive-target
 *     traffic until the launcher ends them (or fail after 40 s).
 *
 *   fault_rma churn PIDDIR
 *     Creates and frees windows of every flavor in a loop until killed (the
 *     test kills one rank at a random moment, usually inside a window
 *     creation).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int rank, nranks;

static void Fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rank %d: FAIL: ", rank);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

#define MPI_OK(call)                                              \
  do {                                                            \
    int rc_ = (call);                                             \
    if (rc_ != MPI_SUCCESS) Fail("%s returned %d", #call, rc_);   \
  } while (0)

/* 1 managed, 0 not, -1 the shim is not preloaded (native run). */
static int Managed(MPI_Win win) {
  int (*is_managed)(MPI_Win, int*) =
      (int (*)(MPI_Win, int*))dlsym(RTLD_DEFAULT, "rmashim_win_is_managed");
  if (is_managed == NULL) {
    /* faults.sh sets FAULT_RMA_SHIM=1 on runs that preload the shim. */
    if (getenv("FAULT_RMA_SHIM") != NULL) Fail("the shim is not preloaded");
    return -1;
  }
  int flag = 0;
  is_managed(win, &flag);
  return flag;
}

static void ExpectManaged(MPI_Win win, int expect, const char* what) {
  const int m = Managed(win);
  if (m >= 0 && m != expect) {
    Fail("%s: window is %s, expected %s", what, m ? "managed" : "unmanaged",
         expect ? "managed" : "unmanaged");
  }
}

/* No rmashim.* name may stay in /dev/shm while windows are alive. */
static void CheckNoNames(const char* when) {
  DIR* dir = opendir("/dev/shm");
  if (dir == NULL) Fail("cannot open /dev/shm");
  struct dirent* e;
  while ((e = readdir(dir)) != NULL) {
    if (strncmp(e->d_name, "rmashim.", 8) == 0) {
      Fail("%s: /dev/shm/%s exists", when, e->d_name);
    }
  }
  closedir(dir);
}

/* KiB of /dev/shm in use by files that have no name there: node segments
   (unnamed tmpfs files) and anything else unlinked but still open. */
static long UnnamedShmKiB(void) {
  struct statvfs fs;
  if (statvfs("/dev/shm", &fs) != 0) Fail("cannot statvfs /dev/shm");
  long used = (long)((fs.f_blocks - fs.f_bfree) * fs.f_frsize / 1024);
  DIR* dir = opendir("/dev/shm");
  if (dir == NULL) Fail("cannot open /dev/shm");
  struct dirent* e;
  while ((e = readdir(dir)) != NULL) {
    struct stat st;
    if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode)) {
      used -= (long)st.st_blocks / 2;
    }
  }
  closedir(dir);
  return used;
}

static void WritePid(const char* dir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/rank.%d", dir, rank);
  FILE* f = fopen(path, "w");
  if (f == NULL) Fail("cannot write %s", path);
  fprintf(f, "%ld %ld\n", (long)getpid(), (long)getppid());
  fclose(f);
}

/* ---- windows: exhausted node-shared memory ---- */

enum { K = 64, kCounters = 8 };

typedef struct {
  MPI_Win win;
  long* base;
  MPI_Aint longs;  /* this rank's window, in longs */
  MPI_Aint low, high, ctr;  /* offsets (longs) of the regions, same on all */
  int own_memory;  /* MPI_Win_create window over calloc'ed memory */
} Window;

static long Value(int w, int origin, int target, int i, int phase) {
  return (long)phase * 100000007L + (long)w * 1000003L + origin * 10007L +
         target * 101L + i;
}

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

static void RunWindows(int nspecs, char** specs) {
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
    if (sscanf(specs[w], "%ld:%ld:%c:%c", &r0, &others, &expect, &flavor) <
            3 ||
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
    ws[w].ctr = smallest - kCounters;          /* the last longs */
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

/* ---- alive: windows of every managed flavor, then exit/abort/kill ---- */

enum { kAliveLongs = 1 << 17 };  /* 1 MiB */

typedef struct {
  MPI_Win wins[3];
  long* bases[3];
  long last_count[3][64];
} Alive;

static const char* kFlavors[3] = {"allocate", "allocate_shared", "create"};

static void CreateAlive(Alive* a, MPI_Comm node, long* create_mem) {
  MPI_OK(MPI_Win_allocate(sizeof(long) * kAliveLongs, sizeof(long),
                          MPI_INFO_NULL, MPI_COMM_WORLD, &a->bases[0],
                          &a->wins[0]));
  MPI_OK(MPI_Win_allocate_shared(sizeof(long) * kAliveLongs, sizeof(long),
                                 MPI_INFO_NULL, node, &a->bases[1],
                                 &a->wins[1]));
  a->bases[2] = create_mem;
  MPI_OK(MPI_Win_create(create_mem, sizeof(long) * kAliveLongs, sizeof(long),
                        MPI_INFO_NULL, MPI_COMM_WORLD, &a->wins[2]));
}

/* One round of passive-target traffic on every window to every target:
   put own slot, get it back, fetch_and_op a counter (must only grow). */
static void AliveRound(Alive* a, int round) {
  long src[K], got[K];
  for (int f = 0; f < 3; ++f) {
    MPI_Group g;
    MPI_Win_get_group(a->wins[f], &g);
    int n = 0, me = 0;
    MPI_Group_size(g, &n);
    MPI_Group_rank(g, &me);
    MPI_Group_free(&g);
    for (int t = 0; t < n; ++t) {
      for (int i = 0; i < K; ++i) src[i] = Value(f, me, t, i, round);
      const long one = 1;
      long old = -1;
      MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, a->wins[f]));
      MPI_OK(MPI_Put(src, K, MPI_LONG, t, (MPI_Aint)(me + 1) * K, K, MPI_LONG,
                     a->wins[f]));
      MPI_OK(MPI_Win_flush(t, a->wins[f]));
      MPI_OK(MPI_Get(got, K, MPI_LONG, t, (MPI_Aint)(me + 1) * K, K, MPI_LONG,
                     a->wins[f]));
      MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, t, 0, MPI_SUM,
                              a->wins[f]));
      MPI_OK(MPI_Win_unlock(t, a->wins[f]));
      if (memcmp(src, got, sizeof(src)) != 0) {
        Fail("%s: put/get to %d in round %d", kFlavors[f], t, round);
      }
      if (t < 64) {
        if (old < a->last_count[f][t]) {
          Fail("%s: counter at %d went back", kFlavors[f], t);
        }
        a->last_count[f][t] = old;
      }
    }
  }
}

static void RunAlive(const char* mode, const char* piddir) {
  WritePid(piddir);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  long* create_mem = calloc(kAliveLongs, sizeof(long));
  MPI_Barrier(MPI_COMM_WORLD);
  const long unnamed_before = rank == 0 ? UnnamedShmKiB() : 0;
  Alive a;
  memset(&a, 0, sizeof(a));
  CreateAlive(&a, node, create_mem);
  for (int f = 0; f < 3; ++f) {
    ExpectManaged(a.wins[f], 1, kFlavors[f]);
    MPI_OK(MPI_Win_fence(0, a.wins[f]));
    a.bases[f][0] = 0;
    MPI_OK(MPI_Win_fence(0, a.wins[f]));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    /* The measure the script checks for leftovers must see live windows'
       segments (growth since before they were created; MPICH's own unnamed
       shared memory is in both), or its check would pass vacuously. */
    CheckNoNames("windows alive");
    char path[4096];
    snprintf(path, sizeof(path), "%s/alive_unnamed_growth_kib", piddir);
    FILE* f = fopen(path, "w");
    if (f == NULL) Fail("cannot write %s", path);
    fprintf(f, "%ld\n", UnnamedShmKiB() - unnamed_before);
    fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int victim = nranks - 1;
  if (strcmp(mode, "exit") == 0) {
    for (int round = 0; round < 20; ++round) AliveRound(&a, round);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int f = 0; f < 3; ++f) MPI_OK(MPI_Win_free(&a.wins[f]));
    if (rank == 0) printf("alive exit ok\n");
  } else if (strcmp(mode, "abort") == 0 || strcmp(mode, "kill") == 0) {
    const double start = MPI_Wtime();
    for (int round = 0;; ++round) {
      AliveRound(&a, round);
      if (rank == victim && round == 20) {
        /* A file, not only stderr: the launcher may drop output on abort. */
        char path[4096];
        snprintf(path, sizeof(path), "%s/victim", piddir);
        FILE* f = fopen(path, "w");
        if (f == NULL) Fail("cannot write %s", path);
        fprintf(f, "rank %d: %s amid RMA traffic\n", rank, mode);
        fclose(f);
        fprintf(stderr, "rank %d: %s amid RMA traffic\n", rank, mode);
        fflush(stderr);
        if (mode[0] == 'a') MPI_Abort(MPI_COMM_WORLD, 7);
        kill(getpid(), SIGKILL);
      }
      if (MPI_Wtime() - start > 40) Fail("still running after 40 s");
    }
  } else {
    Fail("unknown mode %s", mode);
  }
  MPI_Comm_free(&node);
  free(create_mem);
}

/* ---- churn: window creation and destruction until killed ---- */

static void RunChurn(const char* piddir) {
  WritePid(piddir);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  long* create_mem = calloc(kAliveLongs, sizeof(long));
  const double start = MPI_Wtime();
  for (long i = 0;; ++i) {
    Alive a;
    memset(&a, 0, sizeof(a));
    CreateAlive(&a, node, create_mem);
    for (int f = 0; f < 3; ++f) MPI_OK(MPI_Win_free(&a.wins[f]));
    if (i == 0 && rank == 0) {
      printf("churning\n");
      fflush(stdout);
    }
    if (MPI_Wtime() - start > 40) Fail("still running after 40 s");
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (nranks > 64) Fail("at most 64 ranks");
  if (argc >= 3 && strcmp(argv[1], "windows") == 0) {
    /* Each group of SPECs up to a "then" in turn. */
    for (int first = 2, end = 2; first < argc; first = end + 1) {
      end = first;
      while (end < argc && strcmp(argv[end], "then") != 0) ++end;
      if (end == first) Fail("empty group of window specs");
      RunWindows(end - first, argv + first);
    }
  } else if (argc == 4 && strcmp(argv[1], "alive") == 0) {
    RunAlive(argv[2], argv[3]);
  } else if (argc == 3 && strcmp(argv[1], "churn") == 0) {
    RunChurn(argv[2]);
  } else {
    Fail("usage: fault_rma windows SPEC... | alive MODE PIDDIR | churn PIDDIR");
  }
  MPI_Finalize();
  return 0;
}
