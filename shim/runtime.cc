#include "shim/runtime.h"

#include <hwloc.h>
#include <sys/prctl.h>

#include <cstdlib>
#include <cstring>

#include "shim/datatype.h"
#include "shim/shm_lock.h"

namespace rmashim {
namespace {

bool EnvIsTrue(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

void FindCoreAndNuma(Locality& loc) {
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return;
  if (hwloc_topology_load(topology) == 0) {
    hwloc_cpuset_t cpus = hwloc_bitmap_alloc();
    if (hwloc_get_last_cpu_location(topology, cpus, HWLOC_CPUBIND_PROCESS) ==
        0) {
      hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(
          topology, static_cast<unsigned>(hwloc_bitmap_first(cpus)));
      hwloc_obj_t core =
          pu ? hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_CORE, pu)
             : nullptr;
      loc.core = core ? static_cast<int>(core->logical_index)
                      : (pu ? static_cast<int>(pu->logical_index) : -1);
      hwloc_nodeset_t nodes = hwloc_bitmap_alloc();
      hwloc_cpuset_to_nodeset(topology, cpus, nodes);
      loc.numa_domain = hwloc_bitmap_first(nodes);
      hwloc_bitmap_free(nodes);
    }
    hwloc_bitmap_free(cpus);
  }
  hwloc_topology_destroy(topology);
}

}  // namespace

Runtime g_runtime;

namespace {

// Drives MPI's progress engine (a probe that matches nothing is enough).
void PokeMpi() {
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
              MPI_STATUS_IGNORE);
}

}  // namespace

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
  FindCoreAndNuma(locality_);
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
