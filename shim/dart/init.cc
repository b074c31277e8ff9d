// dart_init / dart_exit and the queries that need nothing else.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dart/dart_rmashim.h"
#include "shim/agent/agent.h"
#include "shim/base/hardware.h"
#include "shim/base/spin_wait.h"
#include "shim/dart/state.h"
#include "shim/process/runtime.h"
#include "shim/types/datatype.h"

namespace rmashim::dart {
namespace {

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

// The core's agent (shim/agent/agent.h) on a job spanning nodes where every
// unit asks for it (RMASHIM_AGENT, as for librmashim.so). Collective over
// MPI_COMM_WORLD, as dart_init is; libdart's core is its own, so a
// preloaded librmashim.so runs a second agent beside it.
void StartAgentWhereWanted(State& s) {
  if (!s.spans_nodes || AgentRunning()) return;
  int wanted = AgentWanted();
  PMPI_Allreduce(MPI_IN_PLACE, &wanted, 1, MPI_INT, MPI_MIN, s.world);
  if (!wanted) return;
  StartAgent();
  s.started_agent = AgentRunning();
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
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  s.threaded =
      required == MPI_THREAD_MULTIPLE && provided == MPI_THREAD_MULTIPLE;
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &s.world) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  PMPI_Comm_set_errhandler(s.world, MPI_ERRORS_RETURN);
  PMPI_Comm_rank(s.world, &s.myid);
  PMPI_Comm_size(s.world, &s.size);
  PMPI_Comm_group(s.world, &s.world_group);
  StartNodeTable();  // the core's windows find node peers with it
  FindNodes(s);
  StartAgentWhereWanted(s);
  CalibrateSpin(static_cast<int>(
      std::count(s.node_local.begin(), s.node_local.end(), true)));
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
  if (rc == DART_OK) {
    *thread_safety =
        g_dart.threaded ? DART_THREAD_MULTIPLE : DART_THREAD_SINGLE;
  }
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
    FlushPendingUnits(s.heap.win(), s.heap.pending());
    s.handles.Reap(s.heap.win(), /*all_complete=*/true);
  }
  s.heap.Finalize();
  if (s.started_agent) {  // every window that used it is gone
    rmashim::StopAgent();
    s.started_agent = false;
  }
  s.types.Clear();
  FreePairTypes();
  for (dart_group_t g : s.groups) delete g;
  s.groups.clear();
  s.locality.clear();
  // The core makes its pack communicator once per process (call_once), so
  // it stays while MPI does: a program that owns MPI may dart_init again
  // (DASH's tests do, once per test).
  if (s.owns_mpi) rmashim::StopDatatypeSupport();
  PMPI_Group_free(&s.world_group);
  PMPI_Comm_free(&s.world);
  s.initialized = false;
  s.threaded = false;
  if (s.owns_mpi) {
    s.owns_mpi = false;
    if (MPI_Finalize() != MPI_SUCCESS) return DART_ERR_OTHER;
  }
  return DART_OK;
}

bool dart_initialized(void) { return g_dart.initialized; }

dart_ret_t dart_rmashim_agent_stats(int32_t* running, int64_t* applied) {
  if (running == nullptr || applied == nullptr) return DART_ERR_INVAL;
  *running = rmashim::AgentRunning() ? 1 : 0;
  *applied = rmashim::AgentApplied();
  return DART_OK;
}

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

}  // extern "C"
