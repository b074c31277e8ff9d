// Groups (local, sorted sets of global unit ids) and teams (collective).
#include <algorithm>
#include <array>
#include <iterator>

#include "shim/dart/state.h"

namespace rmashim::dart {
namespace {

bool ValidGroup(const dart_group_t g) {
  LockGuard guard;
  return g != nullptr && g_dart.groups.count(g) != 0;
}

dart_ret_t NewGroup(std::vector<dart_unit_t> members, dart_group_t* out) {
  auto* g = new dart_group_struct{std::move(members)};
  LockGuard guard;
  g_dart.groups.insert(g);
  *out = g;
  return DART_OK;
}

bool ValidUnit(dart_unit_t u) { return u >= 0 && u < g_dart.size; }

// Collective over the parent team: the smallest team id no unit of the
// parent uses, and whether every unit's arguments were valid.
constexpr int kIdWords = kMaxTeams / 64;

dart_ret_t AgreeOnTeamId(const Team& parent, bool ok, int* id) {
  std::array<uint64_t, kIdWords + 1> mine{}, all{};
  {
    LockGuard guard;
    for (int i = 0; i < kMaxTeams; ++i) {
      if (g_dart.team_ids.test(i)) mine[i / 64] |= uint64_t{1} << (i % 64);
    }
  }
  mine[kIdWords] = ok ? 0 : 1;
  if (PMPI_Allreduce(mine.data(), all.data(), kIdWords + 1, MPI_UINT64_T,
                     MPI_BOR, parent.comm) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  if (all[kIdWords] != 0) return DART_ERR_INVAL;
  for (int w = 0; w < kIdWords; ++w) {
    if (~all[w] != 0) {
      *id = w * 64 + __builtin_ctzll(~all[w]);
      return DART_OK;
    }
  }
  return DART_ERR_NOMEM;
}

}  // namespace
}  // namespace rmashim::dart

using namespace rmashim;
using namespace rmashim::dart;

extern "C" {

dart_ret_t dart_group_create(dart_group_t* group) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (group == nullptr) return DART_ERR_INVAL;
  return NewGroup({}, group);
}

dart_ret_t dart_group_destroy(dart_group_t* group) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (group == nullptr || !ValidGroup(*group)) return DART_ERR_INVAL;
  LockGuard guard;
  g_dart.groups.erase(*group);
  delete *group;
  *group = DART_GROUP_NULL;
  return DART_OK;
}

dart_ret_t dart_group_clone(const dart_group_t gin, dart_group_t* gout) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidGroup(gin) || gout == nullptr) return DART_ERR_INVAL;
  return NewGroup(gin->members, gout);
}

dart_ret_t dart_group_union(const dart_group_t g1, const dart_group_t g2,
                            dart_group_t* gout) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidGroup(g1) || !ValidGroup(g2) || gout == nullptr) {
    return DART_ERR_INVAL;
  }
  std::vector<dart_unit_t> merged;
  std::set_union(g1->members.begin(), g1->members.end(), g2->members.begin(),
                 g2->members.end(), std::back_inserter(merged));
  return NewGroup(std::move(merged), gout);
}

dart_ret_t dart_group_intersect(const dart_group_t g1, const dart_group_t g2,
                                dart_group_t* gout) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidGroup(g1) || !ValidGroup(g2) || gout == nullptr) {
    return DART_ERR_INVAL;
  }
  std::vector<dart_unit_t> common;
  std::set_intersection(g1->members.begin(), g1->members.end(),
                        g2->members.begin(), g2->members.end(),
                        std::back_inserter(common));
  return NewGroup(std::move(common), gout);
}

dart_ret_t dart_group_addmember(dart_group_t g, dart_global_unit_t unitid) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidGroup(g) || !ValidUnit(unitid.id)) return DART_ERR_INVAL;
  auto it = std::lower_bound(g->members.begin(), g->members.end(), unitid.id);
  if (it == g->members.end() || *it != unitid.id) {
    g->members.insert(it, unitid.id);
  }
  return DART_OK;
}

dart_ret_t dart_group_delmember(dart_group_t g, dart_global_unit_t unitid) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidGroup(g) || !ValidUnit(unitid.id)) return DART_ERR_INVAL;
  auto it = std::lower_bound(g->members.begin(), g->members.end(), unitid.id);
  if (it != g->members.end() && *it == unitid.id) g->members.erase(it);
  return DART_OK;
}

dart_ret_t dart_group_ismember(const dart_group_t g, dart_global_unit_t unitid,
                               int32_t* ismember) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidGroup(g) || ismember == nullptr) return DART_ERR_INVAL;
  *ismember =
      std::binary_search(g->members.begin(), g->members.end(), unitid.id) ? 1
                                                                          : 0;
  return DART_OK;
}

dart_ret_t dart_group_size(const dart_group_t g, size_t* size) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidGroup(g) || size == nullptr) return DART_ERR_INVAL;
  *size = g->members.size();
  return DART_OK;
}

dart_ret_t dart_group_getmembers(const dart_group_t g,
                                 dart_global_unit_t* unitids) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidGroup(g) || (unitids == nullptr && !g->members.empty())) {
    return DART_ERR_INVAL;
  }
  for (size_t i = 0; i < g->members.size(); ++i) unitids[i].id = g->members[i];
  return DART_OK;
}

dart_ret_t dart_group_split(const dart_group_t g, size_t n, size_t* nout,
                            dart_group_t* gout) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidGroup(g) || n == 0 || nout == nullptr || gout == nullptr) {
    return DART_ERR_INVAL;
  }
  const size_t size = g->members.size();
  const size_t parts = std::min(n, size);
  size_t begin = 0;
  for (size_t i = 0; i < parts; ++i) {
    // The first size % parts groups get one member more.
    const size_t len = size / parts + (i < size % parts ? 1 : 0);
    NewGroup(std::vector<dart_unit_t>(g->members.begin() + begin,
                                      g->members.begin() + begin + len),
             &gout[i]);
    begin += len;
  }
  for (size_t i = parts; i < n; ++i) gout[i] = DART_GROUP_NULL;
  *nout = parts;
  return DART_OK;
}

dart_ret_t dart_team_create(dart_team_t teamid, const dart_group_t group,
                            dart_team_t* newteam) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* parent = FindTeam(teamid);
  if (parent == nullptr) return DART_ERR_INVAL;  // not a member: no collective
  bool ok = newteam != nullptr && (group == nullptr || ValidGroup(group));
  std::vector<dart_unit_t> members;
  if (ok && group != nullptr) {
    members = group->members;
    for (dart_unit_t u : members) {
      if (parent->ToTeamUnit(u) < 0) ok = false;  // not in the parent team
    }
  }
  int id = -1;
  if (dart_ret_t rc = AgreeOnTeamId(*parent, ok, &id)) return rc;
  *newteam = DART_TEAM_NULL;
  if (!std::binary_search(members.begin(), members.end(), g_dart.myid)) {
    return DART_OK;
  }
  MPI_Group mpi_group;
  PMPI_Group_incl(g_dart.world_group, static_cast<int>(members.size()),
                  members.data(), &mpi_group);
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = PMPI_Comm_create_group(parent->comm, mpi_group, id, &comm);
  PMPI_Group_free(&mpi_group);
  if (rc != MPI_SUCCESS || comm == MPI_COMM_NULL) return DART_ERR_OTHER;
  auto team = std::make_unique<Team>();
  team->id = static_cast<dart_team_t>(id);
  team->comm = comm;
  team->members = std::move(members);
  team->size = static_cast<int>(team->members.size());
  PMPI_Comm_rank(comm, &team->myid);
  LockGuard guard;
  g_dart.teams[id] = std::move(team);
  g_dart.team_ids.set(id);
  *newteam = static_cast<dart_team_t>(id);
  return DART_OK;
}

dart_ret_t dart_team_destroy(dart_team_t* teamid) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (teamid == nullptr || *teamid == DART_TEAM_ALL) return DART_ERR_INVAL;
  Team* team = FindTeam(*teamid);
  if (team == nullptr) return DART_ERR_INVAL;
  ReleaseTeamResources(*team);
  PMPI_Comm_free(&team->comm);
  LockGuard guard;
  g_dart.team_ids.reset(*teamid);
  g_dart.teams[*teamid].reset();
  *teamid = DART_TEAM_NULL;
  return DART_OK;
}

dart_ret_t dart_team_clone(dart_team_t team, dart_team_t* newteam) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* t = FindTeam(team);
  if (t == nullptr || newteam == nullptr) return DART_ERR_INVAL;
  // A group of DART's own for the call (not a handle of the caller's).
  dart_group_t group = nullptr;
  NewGroup(t->members, &group);
  const dart_ret_t rc = dart_team_create(team, group, newteam);
  dart_group_destroy(&group);
  return rc;
}

dart_ret_t dart_team_get_group(dart_team_t teamid, dart_group_t* group) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* t = FindTeam(teamid);
  if (t == nullptr || group == nullptr) return DART_ERR_INVAL;
  return NewGroup(t->members, group);
}

dart_ret_t dart_team_myid(dart_team_t teamid, dart_team_unit_t* myid) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* t = FindTeam(teamid);
  if (t == nullptr || myid == nullptr) return DART_ERR_INVAL;
  myid->id = t->myid;
  return DART_OK;
}

dart_ret_t dart_team_size(dart_team_t teamid, size_t* size) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* t = FindTeam(teamid);
  if (t == nullptr || size == nullptr) return DART_ERR_INVAL;
  *size = static_cast<size_t>(t->size);
  return DART_OK;
}

dart_ret_t dart_team_unit_l2g(dart_team_t team, dart_team_unit_t localid,
                              dart_global_unit_t* globalid) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* t = FindTeam(team);
  if (t == nullptr || globalid == nullptr || localid.id < 0 ||
      localid.id >= t->size) {
    return DART_ERR_INVAL;
  }
  globalid->id = t->members[localid.id];
  return DART_OK;
}

dart_ret_t dart_team_unit_g2l(dart_team_t team, dart_global_unit_t globalid,
                              dart_team_unit_t* localid) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* t = FindTeam(team);
  if (t == nullptr || localid == nullptr || !ValidUnit(globalid.id)) {
    return DART_ERR_INVAL;
  }
  localid->id = t->ToTeamUnit(globalid.id);
  return DART_OK;
}

}  // extern "C"
