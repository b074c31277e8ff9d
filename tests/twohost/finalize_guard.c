/* Marks that a rank has finished all its MPI work, for the two-host tier's
 * runner (tests/twohost/run_twohost.sh): MPICH 4.0.2 over UCX between the
 * two simulated hosts often hangs inside MPI_Finalize (docs/testing.md
 * "Tests"), natively and under the shim alike, after the program's output and
 * the shim's profile are complete. Preloaded into every rank of both runs
 * (after librmashim.so, so the shim's own MPI_Finalize work has run before), it
 * wraps MPI_Finalize and PMPI_Finalize: barrier on MPI_COMM_WORLD, flush
 * stdio, create $RMASHIM_TWOHOST_MARKS/final.<world rank>, then the real
 * PMPI_Finalize. When every rank's mark exists the runner may end a job that
 * does not exit. It changes nothing else. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*finalize_fn)(void);

static int guarded_finalize(void) {
  static int entered = 0;
  finalize_fn real = (finalize_fn)dlsym(RTLD_NEXT, "PMPI_Finalize");
  if (real == NULL) {
    fprintf(stderr, "finalize_guard: no PMPI_Finalize after this library\n");
    abort();
  }
  if (entered++) return real();
  const char* dir = getenv("RMASHIM_TWOHOST_MARKS");
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (dir != NULL && initialized && !finalized) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Barrier(MPI_COMM_WORLD);
    fflush(NULL);
    char path[4096];
    snprintf(path, sizeof(path), "%s/final.%d", dir, rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
  }
  return real();
}

int MPI_Finalize(void) { return guarded_finalize(); }
int PMPI_Finalize(void) { return guarded_finalize(); }
