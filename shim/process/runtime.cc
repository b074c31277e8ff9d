#include "shim/process/runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "shim/base/hardware.h"
#include "shim/base/spin_wait.h"

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

// Test hook: RMASHIM_TEST_WINDOW_LIMIT=N caps the live managed windows at
// N, on the MPI_COMM_WORLD rank RMASHIM_TEST_WINDOW_LIMIT_RANK only when
// that is set, so a test can make one rank's table full (the ranks must
// still agree whether each window is managed).
void ApplyTestWindowLimit(int world_rank, WindowTable& table) {
  const char* limit = std::getenv("RMASHIM_TEST_WINDOW_LIMIT");
  if (limit == nullptr || *limit == '\0') return;
  const char* only = std::getenv("RMASHIM_TEST_WINDOW_LIMIT_RANK");
  if (only != nullptr && *only != '\0' && std::atoi(only) != world_rank) return;
  table.SetLimit(std::atoi(limit));
}

// Test hook: RMASHIM_TEST_DISPLACE_WINDOWS=1 puts every managed window past
// its home slot in the window table (see WindowTable::SetDisplaced).
void ApplyTestDisplacement(WindowTable& table) {
  const char* displace = std::getenv("RMASHIM_TEST_DISPLACE_WINDOWS");
  if (displace != nullptr && std::atoi(displace) != 0) {
    table.SetDisplaced(true);
  }
}

// The node of every MPI_COMM_WORLD rank: the world rank of its node's first
// rank. Written once by StartNodeTable, read-only after.
std::vector<int>& WorldNodes() {
  static std::vector<int> nodes;
  return nodes;
}

}  // namespace

Runtime g_runtime;

void StartNodeTable() {
  std::vector<int>& nodes = WorldNodes();
  if (!nodes.empty()) return;
  int world_rank = 0, world_size = 0, node_id = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm node_comm;
  PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                       &node_comm);
  node_id = world_rank;
  PMPI_Bcast(&node_id, 1, MPI_INT, 0, node_comm);
  PMPI_Comm_free(&node_comm);
  std::vector<int> all(world_size);
  PMPI_Allgather(&node_id, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  nodes = std::move(all);
}

void Runtime::Start(int thread_level) {
  SetSpinProgress(&PokeMpi);
  enabled_ = !EnvIsTrue("RMASHIM_DISABLE");
  thread_multiple_ = thread_level == MPI_THREAD_MULTIPLE;
  StartNodeTable();
  const std::vector<int>& nodes = WorldNodes();
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  ApplyTestWindowLimit(world_rank, windows_);
  ApplyTestDisplacement(windows_);
  locality_.node_id = nodes[world_rank];
  locality_.node_rank = static_cast<int>(
      std::count(nodes.begin(), nodes.begin() + world_rank, nodes[world_rank]));
  locality_.node_size = static_cast<int>(
      std::count(nodes.begin(), nodes.end(), nodes[world_rank]));
  CalibrateSpin(locality_.node_size);
  const HardwarePlace place = QueryHardwarePlace();
  locality_.numa_domain = place.numa_domain;
  locality_.core = place.core;
  spans_nodes_ = std::count(nodes.begin(), nodes.end(), nodes[0]) !=
                 static_cast<std::ptrdiff_t>(nodes.size());
}

void Runtime::Stop() {
  enabled_ = false;
  SetSpinProgress(nullptr);  // MPI is about to go away
}

std::vector<int> NodeIndexOf(MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  MPI_Group group, world;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(size), world_ranks(size);
  for (int r = 0; r < size; ++r) ranks[r] = r;
  PMPI_Group_translate_ranks(group, size, ranks.data(), world,
                             world_ranks.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  const std::vector<int>& nodes = WorldNodes();
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const int mine = nodes.empty() ? -1 : nodes[world_rank];
  std::vector<int> index(size, MPI_UNDEFINED);
  int next = 0;
  for (int r = 0; r < size; ++r) {
    const int w = world_ranks[r];
    if (w != MPI_UNDEFINED && w < static_cast<int>(nodes.size()) &&
        nodes[w] == mine) {
      index[r] = next++;
    }
  }
  return index;
}

int RaiseOnWindow(MPI_Win win, int code) {
  if (code != MPI_SUCCESS) PMPI_Win_call_errhandler(win, code);
  return code;
}

}  // namespace rmashim
