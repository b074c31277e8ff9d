// Start and stop the shim with MPI.
#include <mpi.h>

#include "shim/intercept/lifecycle.h"
#include "shim/profile/profile.h"

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    rmashim::StartShim(MPI_THREAD_SINGLE);
    rmashim::g_profiler.Start(false);
  }
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) {
    rmashim::StartShim(*provided);
    rmashim::g_profiler.Start(*provided == MPI_THREAD_MULTIPLE);
  }
  return rc;
}

int MPI_Finalize(void) {
  rmashim::g_profiler.Report();
  rmashim::StopShim();
  return PMPI_Finalize();
}

}  // extern "C"
