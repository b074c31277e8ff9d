/* Helpers every mode of fault_rma uses (declared in fault_rma_util.h), so
 * that the windows and alive files do not each carry a copy. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/faults/fault_rma_util.h"

int rank, nranks;

void Fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rank %d: FAIL: ", rank);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

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

void ExpectManaged(MPI_Win win, int expect, const char* what) {
  const int m = Managed(win);
  if (m >= 0 && m != expect) {
    Fail("%s: window is %s, expected %s", what, m ? "managed" : "unmanaged",
         expect ? "managed" : "unmanaged");
  }
}

long Value(int w, int origin, int target, int i, int phase) {
  return (long)phase * 100000007L + (long)w * 1000003L + origin * 10007L +
         target * 101L + i;
}
