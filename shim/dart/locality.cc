// Locality: every unit's hardware place (hwloc, gathered once at dart_init)
// and, per team, a tree of locality domains built from it without further
// communication: GLOBAL "." > NODE ".n" > MODULE ".n.0" > NUMA ".n.0.k" >
// CORE ".n.0.k.c". Units that share a core share its domain.
#include <hwloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

#include "shim/dart/domain.h"
#include "shim/dart/state.h"

namespace rmashim::dart {
namespace {

// What each unit tells the others about where it runs (fixed size, sent as
// bytes).
struct HwRecord {
  char host[DART_LOCALITY_HOST_MAX_SIZE];
  int num_cores, num_numa, numa_id, num_sockets, core_id, cpu_id, threads;
  int mhz, system_mib, numa_mib;
  int cache_sizes[DART_LOCALITY_MAX_CACHE_LEVELS];
  int cache_line_sizes[DART_LOCALITY_MAX_CACHE_LEVELS];
  int cache_ids[DART_LOCALITY_MAX_CACHE_LEVELS];
};

int CpuMhz(int cpu) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  int current = -1;
  while (std::getline(in, line)) {
    if (line.rfind("processor", 0) == 0) {
      current = std::atoi(line.c_str() + line.find(':') + 1);
    } else if (line.rfind("cpu MHz", 0) == 0 && (current == cpu || cpu < 0)) {
      return static_cast<int>(std::atof(line.c_str() + line.find(':') + 1));
    }
  }
  return -1;
}

HwRecord QueryHardware() {
  HwRecord r;
  std::memset(&r, 0, sizeof(r));
  gethostname(r.host, sizeof(r.host) - 1);
  r.num_cores = r.num_numa = r.numa_id = r.num_sockets = -1;
  r.core_id = r.cpu_id = r.threads = r.mhz = r.system_mib = r.numa_mib = -1;
  for (int i = 0; i < DART_LOCALITY_MAX_CACHE_LEVELS; ++i) {
    r.cache_sizes[i] = r.cache_line_sizes[i] = r.cache_ids[i] = -1;
  }
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return r;
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return r;
  }
  const int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  const int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  const int numas = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  const int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  r.num_cores = cores > 0 ? cores : pus;
  r.num_numa = numas > 0 ? numas : 1;
  r.num_sockets = packages > 0 ? packages : 1;
  r.threads = cores > 0 ? std::max(1, pus / cores) : 1;
  const hwloc_obj_t root = hwloc_get_root_obj(topo);
  r.system_mib = static_cast<int>(root->total_memory >> 20);
  hwloc_cpuset_t cpus = hwloc_bitmap_alloc();
  if (hwloc_get_last_cpu_location(topo, cpus, HWLOC_CPUBIND_PROCESS) == 0) {
    const int first = hwloc_bitmap_first(cpus);
    hwloc_obj_t pu =
        first < 0 ? nullptr : hwloc_get_pu_obj_by_os_index(topo, first);
    if (pu != nullptr) {
      r.cpu_id = static_cast<int>(pu->os_index);
      hwloc_obj_t core =
          hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
      r.core_id = static_cast<int>(core != nullptr ? core->logical_index
                                                   : pu->logical_index);
      for (hwloc_obj_t o = pu->parent; o != nullptr; o = o->parent) {
        if (!hwloc_obj_type_is_dcache(o->type)) continue;
        const int level = static_cast<int>(o->attr->cache.depth) - 1;
        if (level < 0 || level >= DART_LOCALITY_MAX_CACHE_LEVELS) continue;
        r.cache_sizes[level] = static_cast<int>(o->attr->cache.size);
        r.cache_line_sizes[level] = static_cast<int>(o->attr->cache.linesize);
        r.cache_ids[level] = static_cast<int>(o->logical_index);
      }
    }
    hwloc_nodeset_t nodes = hwloc_bitmap_alloc();
    hwloc_cpuset_to_nodeset(topo, cpus, nodes);
    r.numa_id = std::max(0, hwloc_bitmap_first(nodes));
    hwloc_obj_t numa =
        hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, r.numa_id);
    if (numa != nullptr)
      r.numa_mib = static_cast<int>(numa->total_memory >> 20);
    hwloc_bitmap_free(nodes);
  }
  hwloc_bitmap_free(cpus);
  hwloc_topology_destroy(topo);
  if (r.numa_mib < 0) r.numa_mib = r.system_mib;
  r.mhz = CpuMhz(r.cpu_id);
  return r;
}

dart_hwinfo_t ToHwinfo(const HwRecord& r) {
  dart_hwinfo_t h;
  std::memset(&h, 0, sizeof(h));
  std::memcpy(h.host, r.host, sizeof(h.host));
  h.host[sizeof(h.host) - 1] = '\0';
  h.num_cores = r.num_cores;
  h.num_numa = r.num_numa;
  h.numa_id = r.numa_id;
  h.num_sockets = r.num_sockets;
  h.core_id = r.core_id;
  h.cpu_id = r.cpu_id;
  h.min_cpu_mhz = h.max_cpu_mhz = r.mhz;
  std::memcpy(h.cache_sizes, r.cache_sizes, sizeof(h.cache_sizes));
  std::memcpy(h.cache_line_sizes, r.cache_line_sizes,
              sizeof(h.cache_line_sizes));
  std::memcpy(h.cache_ids, r.cache_ids, sizeof(h.cache_ids));
  h.min_threads = h.max_threads = r.threads;
  const char* mbps = std::getenv("DASH_MAX_SHMEM_MBPS");
  h.max_shmem_mbps = mbps != nullptr ? std::atoi(mbps) : -1;
  h.system_memory_bytes = r.system_mib;
  h.numa_memory_bytes = r.numa_mib;
  return h;
}

void SetTag(dart_domain_locality_t* d, const dart_domain_locality_t* parent,
            int index) {
  if (parent == nullptr) {
    std::snprintf(d->domain_tag, sizeof(d->domain_tag), ".");
  } else if (std::strcmp(parent->domain_tag, ".") == 0) {
    std::snprintf(d->domain_tag, sizeof(d->domain_tag), ".%d", index);
  } else {
    std::snprintf(d->domain_tag, sizeof(d->domain_tag), "%s.%d",
                  parent->domain_tag, index);
  }
}

dart_domain_locality_t* Child(dart_domain_locality_t* parent,
                              dart_locality_scope_t scope, int index) {
  dart_domain_locality_t* d = NewDomain();
  d->scope = scope;
  d->level = parent->level + 1;
  d->relative_index = index;
  d->parent = parent;
  d->team = parent->team;
  d->node_id = parent->node_id;
  std::memcpy(d->host, parent->host, sizeof(d->host));
  SetTag(d, parent, index);
  AppendChild(parent, d);
  return d;
}

// Builds the tree of `team` and fills team.locality.
void BuildTeamLocality(Team& team) {
  const State& s = g_dart;
  // node -> numa -> core -> global units, ordered by index.
  std::map<int, std::map<int, std::map<int, std::vector<dart_unit_t>>>> place;
  for (dart_unit_t u : team.members) {
    const dart_hwinfo_t& h = s.locality[u].hwinfo;
    place[s.node_index[u]][std::max(0, h.numa_id)][h.core_id].push_back(u);
  }
  dart_domain_locality_t* root = NewDomain();
  root->scope = DART_LOCALITY_SCOPE_GLOBAL;
  root->team = team.id;
  SetTag(root, nullptr, 0);
  std::map<dart_unit_t, std::string> unit_tag;
  // Cores each unit may use, as DART-MPI counts them: its NUMA domain's
  // cores shared evenly by the team's units there, at least one. DASH sizes
  // a unit's OpenMP thread count by it (dash::util::UnitLocality).
  std::map<dart_unit_t, int> unit_cores;
  int numa_global = 0, core_global = 0, node_rel = 0;
  for (auto& [node, numas] : place) {
    dart_domain_locality_t* n = Child(root, DART_LOCALITY_SCOPE_NODE, node_rel);
    n->global_index = node_rel;
    n->node_id = node_rel++;
    const dart_hwinfo_t& first =
        s.locality[numas.begin()->second.begin()->second.front()].hwinfo;
    std::memcpy(n->host, first.host, sizeof(n->host));
    n->num_cores = first.num_cores;
    dart_domain_locality_t* m = Child(n, DART_LOCALITY_SCOPE_MODULE, 0);
    m->global_index = n->global_index;
    m->num_cores = first.num_cores;
    int numa_rel = 0;
    const int numa_count = first.num_numa > 0 ? first.num_numa : 1;
    for (auto& [numa, cores] : numas) {
      dart_domain_locality_t* k =
          Child(m, DART_LOCALITY_SCOPE_NUMA, numa_rel++);
      k->global_index = numa_global++;
      k->num_cores = std::max(1, first.num_cores / numa_count);
      int numa_units = 0;
      for (const auto& core_units : cores) {
        numa_units += static_cast<int>(core_units.second.size());
      }
      const int share = std::max(1, k->num_cores / numa_units);
      int core_rel = 0;
      for (auto& [core, units] : cores) {
        dart_domain_locality_t* c =
            Child(k, DART_LOCALITY_SCOPE_CORE, core_rel++);
        c->global_index = core_global++;
        c->num_cores = 1;
        c->num_nodes = 1;
        c->num_units = static_cast<int>(units.size());
        c->unit_ids = static_cast<dart_global_unit_t*>(
            std::malloc(sizeof(dart_global_unit_t) * units.size()));
        for (size_t i = 0; i < units.size(); ++i) {
          c->unit_ids[i].id = units[i];
          unit_tag[units[i]] = c->domain_tag;
          unit_cores[units[i]] = share;
        }
      }
    }
  }
  UpdateUnits(root);
  // Counts above the NUMA level come from the hardware, not the units.
  root->num_cores = 0;
  for (int i = 0; i < root->num_domains; ++i) {
    root->num_cores += root->children[i]->num_cores;
  }
  team.domain = root;
  // Rebuilt in place: pointers from dart_unit_locality stay valid.
  if (team.locality.size() != static_cast<size_t>(team.size)) {
    team.locality.resize(team.size);
  }
  for (int u = 0; u < team.size; ++u) {
    const dart_unit_t g = team.members[u];
    dart_unit_locality_t& l = team.locality[u];
    l = s.locality[g];
    l.unit.id = u;
    l.team = team.id;
    std::snprintf(l.domain_tag, sizeof(l.domain_tag), "%s",
                  unit_tag[g].c_str());
    dart_hwinfo_t& h = l.hwinfo;
    h.num_cores = unit_cores[g];
    h.num_scopes = 4;
    h.scopes[0] = {DART_LOCALITY_SCOPE_CORE, h.core_id};  // hwloc's index
    h.scopes[1] = {DART_LOCALITY_SCOPE_NUMA, std::max(0, h.numa_id)};
    h.scopes[2] = {DART_LOCALITY_SCOPE_MODULE, 0};
    h.scopes[3] = {DART_LOCALITY_SCOPE_NODE, s.node_index[g]};
  }
}

}  // namespace

void GatherLocality(State& s) {
  HwRecord mine = QueryHardware();
  std::vector<HwRecord> all(s.size);
  PMPI_Allgather(&mine, sizeof(HwRecord), MPI_BYTE, all.data(),
                 sizeof(HwRecord), MPI_BYTE, s.world);
  s.locality.assign(s.size, dart_unit_locality_t{});
  for (int u = 0; u < s.size; ++u) {
    dart_unit_locality_t& l = s.locality[u];
    l.unit.id = u;
    l.team = DART_TEAM_ALL;
    l.hwinfo = ToHwinfo(all[u]);
  }
}

dart_ret_t EnsureTeamLocality(Team& team) {
  if (team.domain == nullptr) BuildTeamLocality(team);
  return DART_OK;
}

void FreeTeamLocality(Team& team) {
  if (team.domain != nullptr) DestroyDomain(team.domain);
  team.domain = nullptr;
  team.locality.clear();
}

}  // namespace rmashim::dart

using namespace rmashim::dart;

extern "C" {

dart_ret_t dart_team_locality_init(dart_team_t team) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  LockGuard guard;
  Team* t = FindTeam(team);
  if (t == nullptr) return DART_ERR_INVAL;
  return EnsureTeamLocality(*t);
}

dart_ret_t dart_team_locality_finalize(dart_team_t team) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  LockGuard guard;
  Team* t = FindTeam(team);
  if (t == nullptr) return DART_ERR_INVAL;
  // The unit records stay (dart_unit_locality pointers remain valid until
  // the team is destroyed); only the tree goes, and comes back on demand.
  if (t->domain != nullptr) DestroyDomain(t->domain);
  t->domain = nullptr;
  return DART_OK;
}

dart_ret_t dart_domain_team_locality(dart_team_t team, const char* domain_tag,
                                     dart_domain_locality_t** team_domain_out) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (team_domain_out == nullptr) return DART_ERR_INVAL;
  *team_domain_out = nullptr;
  if (domain_tag == nullptr) return DART_ERR_INVAL;
  LockGuard guard;
  Team* t = FindTeam(team);
  if (t == nullptr) return DART_ERR_INVAL;
  EnsureTeamLocality(*t);  // tree and unit records, built together
  dart_domain_locality_t* d = FindDomain(t->domain, domain_tag);
  if (d == nullptr) return DART_ERR_NOTFOUND;
  *team_domain_out = d;
  return DART_OK;
}

dart_ret_t dart_unit_locality(dart_team_t team, dart_team_unit_t unit,
                              dart_unit_locality_t** loc) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (loc == nullptr) return DART_ERR_INVAL;
  *loc = nullptr;
  LockGuard guard;
  Team* t = FindTeam(team);
  if (t == nullptr || unit.id < 0 || unit.id >= t->size) {
    return DART_ERR_INVAL;
  }
  if (t->locality.empty()) EnsureTeamLocality(*t);
  *loc = &t->locality[unit.id];
  return DART_OK;
}

dart_ret_t dart_group_locality_split(const dart_group_t g,
                                     dart_domain_locality_t* domain,
                                     dart_locality_scope_t scope, size_t n,
                                     size_t* nout, dart_group_t* gout) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (g == nullptr || domain == nullptr || n == 0 || nout == nullptr ||
      gout == nullptr) {
    return DART_ERR_INVAL;
  }
  LockGuard guard;
  if (g_dart.groups.count(g) == 0) return DART_ERR_INVAL;
  std::vector<dart_domain_locality_t*> domains;
  CollectScope(domain, scope, &domains);
  if (domains.empty()) return DART_ERR_NOTFOUND;
  const std::vector<std::vector<dart_domain_locality_t*>> parts =
      BalancedParts(domains, std::min(n, domains.size()));
  for (size_t i = 0; i < n; ++i) gout[i] = DART_GROUP_NULL;
  for (size_t p = 0; p < parts.size(); ++p) {
    std::vector<dart_unit_t> units;
    for (const dart_domain_locality_t* d : parts[p]) {
      for (int u = 0; u < d->num_units; ++u) {
        if (std::binary_search(g->members.begin(), g->members.end(),
                               d->unit_ids[u].id)) {
          units.push_back(d->unit_ids[u].id);
        }
      }
    }
    std::sort(units.begin(), units.end());
    units.erase(std::unique(units.begin(), units.end()), units.end());
    auto* group = new dart_group_struct{std::move(units)};
    g_dart.groups.insert(group);
    gout[p] = group;
  }
  *nout = parts.size();
  return DART_OK;
}

}  // extern "C"
