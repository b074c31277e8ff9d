/* What the files of fault_rma (the fault tests' RMA program, usage in
 * fault_rma.c) share: this rank and the job size, failing a rank with a
 * message, the shim's verdict on a window, the known values RMA traffic
 * carries, and the modes main dispatches to. Split out of fault_rma.c so
 * that each mode has a file of its own and the helpers exist once. */
#ifndef RMASHIM_TESTS_FAULTS_FAULT_RMA_UTIL_H_
#define RMASHIM_TESTS_FAULTS_FAULT_RMA_UTIL_H_

#include <mpi.h>

/* Set by main right after MPI_Init. */
extern int rank, nranks;

/* Longs per RMA block (one rank's slot in a window region). */
enum { K = 64 };

/* Prints "rank N: FAIL: ..." to stderr and aborts the job. */
void Fail(const char* fmt, ...);

#define MPI_OK(call)                                            \
  do {                                                          \
    int rc_ = (call);                                           \
    if (rc_ != MPI_SUCCESS) Fail("%s returned %d", #call, rc_); \
  } while (0)

/* Fails unless the shim manages win (expect 1) or left it to MPI (0);
   checks nothing in a native run. */
void ExpectManaged(MPI_Win win, int expect, const char* what);

/* The known value origin writes to target at index i of block w (a window
   or a flavor) in phase (or round) phase. */
long Value(int w, int origin, int target, int i, int phase);

/* The modes (fault_rma.c's usage comment): fault_rma_windows.c, and
   fault_rma_alive.c for alive and churn. */
void RunWindows(int nspecs, char** specs);
void RunAlive(const char* mode, const char* piddir);
void RunChurn(const char* piddir);

#endif /* RMASHIM_TESTS_FAULTS_FAULT_RMA_UTIL_H_ */
