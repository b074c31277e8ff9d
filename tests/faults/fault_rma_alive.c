/* fault_rma alive and churn (usage in fault_rma.c): windows of every
 * flavor the shim manages kept alive under traffic, then a normal exit,
 * MPI_Abort or SIGKILL; or created and freed in a loop until a rank is
 * killed. Together because both are about what a job leaves in /dev/shm,
 * and share the windows they create and the pid and /dev/shm helpers. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tests/faults/fault_rma_util.h"

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

/* ---- alive: windows of every managed flavor, then exit/abort/kill ---- */

enum { kAliveLongs = 1 << 17 }; /* 1 MiB */

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
      MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, t, 0, MPI_SUM, a->wins[f]));
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

void RunAlive(const char* mode, const char* piddir) {
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

void RunChurn(const char* piddir) {
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
