// Helpers shared by the DART test suites.
#ifndef RMASHIM_TESTS_DART_TEST_UTIL_H_
#define RMASHIM_TESTS_DART_TEST_UTIL_H_

#include <dart/dart.h>
#include <dart/dart_rmashim.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace dart_testing {

inline int MyId() {
  dart_global_unit_t u;
  dart_myid(&u);
  return u.id;
}

inline int Size() {
  size_t n = 0;
  dart_size(&n);
  return static_cast<int>(n);
}

inline int TeamMyId(dart_team_t team) {
  dart_team_unit_t u;
  dart_team_myid(team, &u);
  return u.id;
}

inline int TeamSize(dart_team_t team) {
  size_t n = 0;
  dart_team_size(team, &n);
  return static_cast<int>(n);
}

// Every unit's value of `g` (collective over `team`).
inline std::vector<dart_gptr_t> AllGptrs(dart_gptr_t g,
                                         dart_team_t team = DART_TEAM_ALL) {
  std::vector<dart_gptr_t> all(TeamSize(team));
  dart_allgather(&g, all.data(), sizeof(dart_gptr_t), DART_TYPE_BYTE, team);
  return all;
}

// `g` moved to `unit` and `bytes` further.
inline dart_gptr_t At(dart_gptr_t g, int unit, int64_t bytes = 0) {
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(unit));
  dart_gptr_incaddr(&g, bytes);
  return g;
}

// For every global unit, whether it shares this unit's node as MPI sees it
// (honours the simulated two-node layouts). Collective.
inline std::vector<bool> NodeLocalUnits() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int leader = MyId();
  MPI_Bcast(&leader, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  std::vector<int> leaders(Size());
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT,
                MPI_COMM_WORLD);
  std::vector<bool> local(Size());
  for (int u = 0; u < Size(); ++u) local[u] = leaders[u] == leader;
  return local;
}

// Whether every unit shares this unit's node (then DART's atomics and
// locks are CPU atomics; otherwise MPI atomics, much slower on an
// oversubscribed machine, so tests scale their rounds down).
inline bool AllNodeLocal() {
  for (bool local : NodeLocalUnits()) {
    if (!local) return false;
  }
  return true;
}

// Whether libdart runs the core's agent here: on a layout spanning nodes
// unless RMASHIM_AGENT=0 (collective).
inline bool AgentExpected() {
  const char* wanted = std::getenv("RMASHIM_AGENT");
  return !AllNodeLocal() &&
         (wanted == nullptr || std::strcmp(wanted, "0") != 0);
}

// Remote units' atomics the agents of all units have applied so far, and
// whether this unit's agent runs (collective).
inline int64_t AgentAppliedEverywhere(bool* running = nullptr) {
  int32_t on = 0;
  int64_t applied = 0, total = 0;
  dart_rmashim_agent_stats(&on, &applied);
  if (running != nullptr) *running = on != 0;
  MPI_Allreduce(&applied, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

inline int Rounds(int node_local, int spanning) {
  return AllNodeLocal() ? node_local : spanning;
}

}  // namespace dart_testing

#endif  // RMASHIM_TESTS_DART_TEST_UTIL_H_
