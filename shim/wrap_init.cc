// Start and stop the shim with MPI.
#include <mpi.h>

#include "shim/runtime.h"

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) rmashim::runtime().Start(MPI_THREAD_SINGLE);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) rmashim::runtime().Start(*provided);
  return rc;
}

int MPI_Finalize(void) {
  rmashim::runtime().Stop();
  return PMPI_Finalize();
}

}  // extern "C"
