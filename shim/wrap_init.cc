// Start and stop the shim with MPI. Where the shim runs its agent (agent.h)
// it asks MPI for MPI_THREAD_MULTIPLE, and the application is still told,
// and MPI_Query_thread still answers, the level it asked for.
#include <mpi.h>

#include <algorithm>

#include "shim/agent.h"
#include "shim/profile.h"
#include "shim/runtime.h"

namespace {

// PMPI_Init_thread asking for `required`, or for MPI_THREAD_MULTIPLE when
// the agent is wanted; `*app_level` is what the application gets.
int InitMpi(int* argc, char*** argv, int required, int* app_level,
            int* mpi_level) {
  const int asked = rmashim::AgentWanted() ? MPI_THREAD_MULTIPLE : required;
  const int rc = PMPI_Init_thread(argc, argv, asked, mpi_level);
  *app_level = std::min(required, *mpi_level);
  return rc;
}

void StartShim(int app_level, int mpi_level) {
  rmashim::runtime().Start(app_level, mpi_level);
  rmashim::g_profiler.Start(app_level == MPI_THREAD_MULTIPLE);
}

}  // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  if (!rmashim::AgentWanted()) {
    const int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) {
      int level = MPI_THREAD_SINGLE;
      PMPI_Query_thread(&level);
      StartShim(level, level);
    }
    return rc;
  }
  int app_level = 0, mpi_level = 0;
  const int rc =
      InitMpi(argc, argv, MPI_THREAD_SINGLE, &app_level, &mpi_level);
  if (rc == MPI_SUCCESS) StartShim(app_level, mpi_level);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int mpi_level = 0;
  const int rc = InitMpi(argc, argv, required, provided, &mpi_level);
  if (rc == MPI_SUCCESS) StartShim(*provided, mpi_level);
  return rc;
}

int MPI_Query_thread(int* provided) {
  int initialized = 0;
  PMPI_Initialized(&initialized);
  if (!initialized || provided == nullptr) return PMPI_Query_thread(provided);
  *provided = rmashim::runtime().thread_level();
  return MPI_SUCCESS;
}

int MPI_Finalize(void) {
  rmashim::g_profiler.Report();
  rmashim::runtime().Stop();
  return PMPI_Finalize();
}

}  // extern "C"
