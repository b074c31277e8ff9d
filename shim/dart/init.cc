// dart_init / dart_exit and the queries that need nothing else.
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "shim/dart/state.h"
#include "shim/datatype.h"
#include "shim/hardware.h"
#include "shim/runtime.h"

namespace rmashim::dart {
namespace {

// What each unit tells the others about where it runs.
struct HwRecord {
  char host[64];
  int num_cores, num_numa, numa_id, core_id, cpu_id, threads;
};

HwRecord QueryHardware() {
  HwRecord r{};
  gethostname(r.host, sizeof(r.host) - 1);
  const HardwarePlace place = QueryHardwarePlace();
  r.num_cores = place.num_cores;
  r.num_numa = place.num_numa;
  r.numa_id = place.numa_domain;
  r.core_id = place.core;
  r.cpu_id = place.cpu;
  r.threads = place.threads_per_core;
  return r;
}

// Node of every unit (dense index in order of the nodes' first units), from
// MPI's view of shared memory (which honours simulated cliques).
void FindNodes(State& s) {
  MPI_Comm node;
  PMPI_Comm_split_type(s.world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int leader = s.myid;
  PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
  PMPI_Comm_free(&node);
  std::vector<int> leaders(s.size);
  PMPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, s.world);
  std::vector<int> distinct = leaders;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  s.node_index.resize(s.size);
  s.node_local.resize(s.size);
  for (int u = 0; u < s.size; ++u) {
    s.node_index[u] = static_cast<int>(
        std::lower_bound(distinct.begin(), distinct.end(), leaders[u]) -
        distinct.begin());
    s.node_local[u] = leaders[u] == leader;
  }
  s.spans_nodes = distinct.size() > 1;
}

void GatherLocality(State& s) {
  HwRecord mine = QueryHardware();
  std::vector<HwRecord> all(s.size);
  PMPI_Allgather(&mine, sizeof(HwRecord), MPI_BYTE, all.data(),
                 sizeof(HwRecord), MPI_BYTE, s.world);
  s.locality.assign(s.size, dart_unit_locality_t{});
  for (int u = 0; u < s.size; ++u) {
    dart_unit_locality_t& l = s.locality[u];
    const HwRecord& r = all[u];
    l.unit.id = u;
    l.team = DART_TEAM_ALL;
    std::snprintf(l.hwinfo.host, sizeof(l.hwinfo.host), "%s", r.host);
    l.hwinfo.num_cores = r.num_cores;
    l.hwinfo.num_numa = r.num_numa;
    l.hwinfo.numa_id = r.numa_id;
    l.hwinfo.core_id = r.core_id;
    l.hwinfo.cpu_id = r.cpu_id;
    l.hwinfo.min_threads = l.hwinfo.max_threads = r.threads;
    std::snprintf(l.domain_tag, sizeof(l.domain_tag), ".%d.%d", s.node_index[u],
                  r.numa_id < 0 ? 0 : r.numa_id);
  }
}

dart_ret_t Init(int* argc, char*** argv, int required) {
  State& s = g_dart;
  if (s.initialized) return DART_ERR_INVAL;
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (finalized) return DART_ERR_OTHER;
  if (!initialized) {
    // MPI_Init_thread, not PMPI_: a preloaded librmashim.so starts too.
    int provided = 0;
    if (MPI_Init_thread(argc, argv, required, &provided) != MPI_SUCCESS) {
      return DART_ERR_OTHER;
    }
    s.owns_mpi = true;
  }
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &s.world) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  PMPI_Comm_set_errhandler(s.world, MPI_ERRORS_RETURN);
  PMPI_Comm_rank(s.world, &s.myid);
  PMPI_Comm_size(s.world, &s.size);
  PMPI_Comm_group(s.world, &s.world_group);
  StartNodeTable();  // the core's windows find node peers with it
  // Node-local peers may read and write registered memory with cross-memory
  // attach even under Yama's ptrace restrictions.
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  FindNodes(s);
  GatherLocality(s);
  if (dart_ret_t rc = s.heap.Init(s.world, s.node_local, s.spans_nodes)) {
    return rc;
  }
  auto all = std::make_unique<Team>();
  all->id = DART_TEAM_ALL;
  all->comm = s.world;
  all->owns_comm = false;
  all->size = s.size;
  all->myid = s.myid;
  all->members.resize(s.size);
  for (int u = 0; u < s.size; ++u) all->members[u] = u;
  s.teams[DART_TEAM_ALL] = std::move(all);
  s.team_ids.set(DART_TEAM_ALL);
  s.initialized = true;
  return DART_OK;
}

}  // namespace
}  // namespace rmashim::dart

using rmashim::dart::g_dart;

extern "C" {

dart_ret_t dart_init(int* argc, char*** argv) {
  return rmashim::dart::Init(argc, argv, MPI_THREAD_SINGLE);
}

dart_ret_t dart_init_thread(int* argc, char*** argv,
                            dart_thread_support_level_t* thread_safety) {
  if (thread_safety == nullptr) return DART_ERR_INVAL;
  const dart_ret_t rc = rmashim::dart::Init(argc, argv, MPI_THREAD_MULTIPLE);
  if (rc == DART_OK) *thread_safety = DART_THREAD_SINGLE;
  return rc;
}

dart_ret_t dart_exit(void) {
  using namespace rmashim::dart;
  State& s = g_dart;
  if (!s.initialized) return DART_ERR_NOTINIT;
  PMPI_Barrier(s.world);
  // Teams in ascending id order on every unit, so the collective teardown
  // of teams sharing units happens in the same order everywhere.
  for (int id = 1; id < kMaxTeams; ++id) {
    if (!s.teams[id]) continue;
    ReleaseTeamResources(*s.teams[id]);
    if (s.teams[id]->owns_comm) PMPI_Comm_free(&s.teams[id]->comm);
    s.teams[id].reset();
  }
  ReleaseTeamResources(*s.teams[DART_TEAM_ALL]);
  s.teams[DART_TEAM_ALL].reset();
  s.team_ids.reset();
  if (s.heap.win() != MPI_WIN_NULL) {
    // Requests of freed handles on the heap complete with this flush.
    PMPI_Win_flush_all(s.heap.win());
    s.handles.Reap(s.heap.win(), /*all_complete=*/true);
  }
  s.heap.Finalize();
  s.types.Clear();
  for (dart_group_t g : s.groups) delete g;
  s.groups.clear();
  s.locality.clear();
  rmashim::StopDatatypeSupport();
  PMPI_Group_free(&s.world_group);
  PMPI_Comm_free(&s.world);
  s.initialized = false;
  if (s.owns_mpi) {
    s.owns_mpi = false;
    if (MPI_Finalize() != MPI_SUCCESS) return DART_ERR_OTHER;
  }
  return DART_OK;
}

bool dart_initialized(void) { return g_dart.initialized; }

void dart_abort(int errorcode) {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (initialized && !finalized) PMPI_Abort(MPI_COMM_WORLD, errorcode);
  std::_Exit(errorcode);
}

dart_ret_t dart_myid(dart_global_unit_t* myid) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (myid == nullptr) return DART_ERR_INVAL;
  myid->id = g_dart.myid;
  return DART_OK;
}

dart_ret_t dart_size(size_t* size) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (size == nullptr) return DART_ERR_INVAL;
  *size = static_cast<size_t>(g_dart.size);
  return DART_OK;
}

dart_ret_t dart_unit_locality(dart_team_t team, dart_team_unit_t unit,
                              dart_unit_locality_t** loc) {
  using namespace rmashim::dart;
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* t = FindTeam(team);
  if (t == nullptr || loc == nullptr || unit.id < 0 || unit.id >= t->size) {
    return DART_ERR_INVAL;
  }
  if (t->locality.empty()) {
    t->locality.resize(t->size);
    for (int u = 0; u < t->size; ++u) {
      t->locality[u] = g_dart.locality[t->members[u]];
      t->locality[u].unit.id = u;
      t->locality[u].team = t->id;
    }
  }
  *loc = &t->locality[unit.id];
  return DART_OK;
}

}  // extern "C"
