#include "shim/runtime.h"

#include <sys/prctl.h>

#include <cstdlib>
#include <cstring>

#include "shim/datatype.h"
#include "shim/hardware.h"
#include "shim/shm_lock.h"

namespace rmashim {
namespace {

bool EnvIsTrue(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

// Drives MPI's progress engine (a probe that matches nothing is enough).
void PokeMpi() {
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
              MPI_STATUS_IGNORE);
}

}  // namespace

Runtime g_runtime;

void Runtime::Start(int thread_level) {
  SetSpinProgress(&PokeMpi);
  StartDatatypeSupport();
  enabled_ = !EnvIsTrue("RMASHIM_DISABLE");
  thread_multiple_ = thread_level == MPI_THREAD_MULTIPLE;
  // Under Yama's ptrace restriction, let node-local peers use cross-memory
  // attach on this process's MPI_Win_create memory.
  if (enabled_) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  MPI_Comm node_comm;
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                       &node_comm);
  PMPI_Comm_rank(node_comm, &locality_.node_rank);
  PMPI_Comm_size(node_comm, &locality_.node_size);
  locality_.node_id = world_rank;
  PMPI_Bcast(&locality_.node_id, 1, MPI_INT, 0, node_comm);
  PMPI_Comm_free(&node_comm);
  const HardwarePlace place = QueryHardwarePlace();
  locality_.numa_domain = place.numa_domain;
  locality_.core = place.core;
}

void Runtime::Stop() {
  enabled_ = false;
  SetSpinProgress(nullptr);  // MPI is about to go away
  StopDatatypeSupport();
}

std::vector<int> NodeRanksOf(MPI_Group group, MPI_Comm node_comm) {
  int size = 0;
  PMPI_Group_size(group, &size);
  MPI_Group node_group;
  PMPI_Comm_group(node_comm, &node_group);
  std::vector<int> ranks(size), node_ranks(size);
  for (int r = 0; r < size; ++r) ranks[r] = r;
  PMPI_Group_translate_ranks(group, size, ranks.data(), node_group,
                             node_ranks.data());
  PMPI_Group_free(&node_group);
  return node_ranks;
}

int RaiseOnWindow(MPI_Win win, int code) {
  if (code != MPI_SUCCESS) PMPI_Win_call_errhandler(win, code);
  return code;
}

}  // namespace rmashim
