// Global pointers and global memory: dart_memalloc (Heap), team segments
// (the core's ManagedWindow over the team's communicator).
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "shim/dart/state.h"

namespace rmashim::dart {
namespace {

// Bytes of `nelem` elements of `dtype` (base elements for derived types).
bool ElementBytes(size_t nelem, dart_datatype_t dtype, uint64_t* bytes) {
  TypeInfo t;
  LockGuard guard;
  if (!g_dart.types.Describe(dtype, &t)) return false;
  return !__builtin_mul_overflow(static_cast<uint64_t>(nelem),
                                 static_cast<uint64_t>(t.base_size), bytes) &&
         *bytes <= static_cast<uint64_t>(LONG_MAX / 2);
}

// How this unit reaches every unit of the core's window.
void MapPeers(Segment& s, const ManagedWindow& w, int me) {
  s.peers.resize(w.comm_size());
  for (int r = 0; r < w.comm_size(); ++r) {
    const Target& t = w.target(r);
    Peer& p = s.peers[r];
    p.size = t.size;
    p.base = t.base;
    p.pid = t.pid;
    if (r == me || (t.node_local() && t.pid == 0)) {
      p.path = Path::kMapped;
    } else if (t.node_local()) {
      p.path = Path::kCrossMemory;
    } else {
      p.path = Path::kMpi;
      p.base = nullptr;
    }
  }
}

// Whether every node-local unit's memory is mapped here (CPU atomics reach
// it).
bool MapsEveryNodeLocalUnit(const Segment& s) {
  return std::none_of(s.peers.begin(), s.peers.end(), [](const Peer& p) {
    return p.path == Path::kCrossMemory;
  });
}

// MPI operations need a passive-target epoch for the segment's life: the
// core keeps one open on single-node windows; for the others DART opens
// lock_all on the window itself (as DART-MPI does).
void OpenEpoch(Segment& s, MPI_Win win) {
  PMPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  s.rma_win = win;
  if (s.window && s.window->holds_mpi_epoch()) return;
  PMPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  s.locked_all = true;
}

dart_gptr_t SegmentGptr(const Team& team, int16_t segid) {
  dart_gptr_t g = DART_GPTR_NULL;
  g.unitid = 0;
  g.flags = 0;
  g.segid = segid;
  g.teamid = team.id;
  g.addr_or_offs.offset = 0;
  return g;
}

void Store(Team& team, std::unique_ptr<Segment> s) {
  auto& table = s->id > 0 ? team.allocated : team.registered;
  const size_t index = static_cast<size_t>(s->id > 0 ? s->id : -s->id);
  if (table.size() <= index) table.resize(index + 1);
  table[index] = std::move(s);
}

// The team's window for registered memory: one MPI dynamic window per
// team (as in DART-MPI), made at the first registration, in a lock_all
// epoch until the team goes. Registration attaches to it and exchanges
// addresses (collective); deregistration only detaches (local).
dart_ret_t DynamicWindow(Team& team, MPI_Win* win) {
  if (team.dyn_win == MPI_WIN_NULL) {
    MPI_Win w;
    if (PMPI_Win_create_dynamic(MPI_INFO_NULL, team.comm, &w) != MPI_SUCCESS) {
      return DART_ERR_OTHER;
    }
    PMPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, w);
    team.dyn_win = w;
  }
  *win = team.dyn_win;
  return DART_OK;
}

// Collective: the smallest registered-segment id no unit of the team uses
// (units deregister on their own, so their free ids may differ).
int AgreeOnRegisteredId(const Team& team) {
  constexpr int kWords = kMaxTeams / 64;
  std::vector<uint64_t> mine(kWords, 0), all(kWords, 0);
  mine[0] = 1;  // id 0 is DART_SEGMENT_LOCAL
  for (size_t i = 1; i < team.registered.size(); ++i) {
    if (team.registered[i]) mine[i / 64] |= uint64_t{1} << (i % 64);
  }
  if (PMPI_Allreduce(mine.data(), all.data(), kWords, MPI_UINT64_T, MPI_BOR,
                     team.comm) != MPI_SUCCESS) {
    return -1;
  }
  for (int w = 0; w < kWords; ++w) {
    if (~all[w] != 0) return w * 64 + __builtin_ctzll(~all[w]);
  }
  return -1;
}

struct RegisteredPart {
  MPI_Aint address;  // MPI_Get_address of the unit's memory
  MPI_Aint size;
  pid_t pid;
};

dart_ret_t Register(dart_team_t teamid, size_t nelem, dart_datatype_t dtype,
                    void* addr, dart_gptr_t* gptr, bool aligned) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* team = FindTeam(teamid);
  if (team == nullptr) return DART_ERR_INVAL;
  uint64_t bytes = 0;
  const bool ok = gptr != nullptr && ElementBytes(nelem, dtype, &bytes) &&
                  (addr != nullptr || bytes == 0);
  // Aligned registration: the same size everywhere.
  long long mine[2] = {ok ? static_cast<long long>(bytes) : -1,
                       ok ? -static_cast<long long>(bytes) : 1},
            all[2];
  PMPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_MIN, team->comm);
  if (all[0] < 0 || all[1] > 0 || (aligned && all[0] != -all[1])) {
    return DART_ERR_INVAL;
  }
  MPI_Win win;
  if (dart_ret_t rc = DynamicWindow(*team, &win)) return rc;
  const int id = AgreeOnRegisteredId(*team);
  if (id < 0) return DART_ERR_NOMEM;
  auto s = std::make_unique<Segment>();
  s->id = static_cast<int16_t>(-id);
  s->registered = true;
  s->my_base = static_cast<std::byte*>(addr);
  s->my_size = static_cast<MPI_Aint>(bytes);
  int attached = 1;
  if (s->my_size > 0) {
    attached = PMPI_Win_attach(win, addr, s->my_size) == MPI_SUCCESS;
    if (attached) s->dyn_win = win;
  }
  // Node-local units may attach to this memory: allowed before the
  // exchange below, so before any of them tries.
  for (int r = 0; r < team->size; ++r) {
    if (r != team->myid && g_dart.node_local[team->members[r]]) {
      s->cross_memory_grant.Hold();
    }
  }
  RegisteredPart part{0, s->my_size, getpid()};
  PMPI_Get_address(addr, &part.address);
  std::vector<RegisteredPart> parts(team->size);
  PMPI_Allgather(&part, sizeof(part), MPI_BYTE, parts.data(), sizeof(part),
                 MPI_BYTE, team->comm);
  // Node-local units read and write each other's registered memory with
  // cross-memory attach when the kernel lets them, else through MPI.
  int cross = 1;
  for (int r = 0; r < team->size; ++r) {
    const dart_unit_t u = team->members[r];
    if (r == team->myid || !g_dart.node_local[u] || parts[r].size == 0) {
      continue;
    }
    char byte;
    iovec local{&byte, 1};
    iovec remote{reinterpret_cast<void*>(parts[r].address), 1};
    if (process_vm_readv(parts[r].pid, &local, 1, &remote, 1, 0) != 1) {
      cross = 0;
    }
  }
  int both[2] = {cross, attached}, agreed[2];
  PMPI_Allreduce(both, agreed, 2, MPI_INT, MPI_MIN, team->comm);
  if (agreed[1] == 0) return DART_ERR_OTHER;  // s detaches in its destructor
  if (agreed[0] == 0) s->cross_memory_grant.Drop();
  s->peers.resize(team->size);
  for (int r = 0; r < team->size; ++r) {
    Peer& p = s->peers[r];
    const dart_unit_t u = team->members[r];
    p.size = parts[r].size;
    p.pid = parts[r].pid;
    p.disp_base = parts[r].address;
    if (r == team->myid) {
      p.path = Path::kMapped;
      p.base = s->my_base;
    } else if (g_dart.node_local[u] && agreed[0] != 0) {
      p.path = Path::kCrossMemory;
      p.base = reinterpret_cast<std::byte*>(parts[r].address);
    } else {
      p.path = Path::kMpi;
      p.base = nullptr;
    }
  }
  s->rma_win = win;
  s->pending.assign(team->size, 0);
  s->direct_atomics = false;  // user memory is not mapped by peers
  *gptr = SegmentGptr(*team, s->id);
  LockGuard guard;
  Store(*team, std::move(s));
  return DART_OK;
}

// Team and segment of a collective free; null when unknown.
Segment* FindForFree(const dart_gptr_t& gptr, bool registered, Team** team) {
  *team = FindTeam(gptr.teamid);
  if (*team == nullptr || (gptr.segid < 0) != registered || gptr.segid == 0) {
    return nullptr;
  }
  return (*team)->FindSegment(gptr.segid);
}

dart_ret_t FreeSegment(const dart_gptr_t& gptr, bool registered) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (DART_GPTR_ISNULL(gptr)) return DART_OK;
  Team* team = nullptr;
  std::unique_ptr<Segment> gone;
  {
    LockGuard guard;
    Segment* s = FindForFree(gptr, registered, &team);
    if (s == nullptr) return DART_ERR_INVAL;
    const int16_t id = s->id;
    if (id > 0) {
      gone = std::move(team->allocated[id]);
    } else {
      gone = std::move(team->registered[-id]);
    }
  }
  const int16_t id = gone->id;
  // Team memory: collective (frees the window). Registered memory: local
  // (detaches from the team's dynamic window once this unit's operations
  // on the segment are complete).
  if (id < 0 && gone->rma_win != MPI_WIN_NULL) {
    FlushPendingUnits(gone->rma_win, gone->pending);
  }
  gone.reset();
  if (id > 0) {
    LockGuard guard;
    team->allocated_ids.Give(id);
  }
  return DART_OK;
}

}  // namespace
}  // namespace rmashim::dart

using namespace rmashim;
using namespace rmashim::dart;

extern "C" {

dart_ret_t dart_gptr_getaddr(const dart_gptr_t gptr, void** addr) {
  LockGuard guard;
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (addr == nullptr) return DART_ERR_INVAL;
  *addr = nullptr;
  const uint64_t offset = gptr.addr_or_offs.offset;
  if (gptr.segid == DART_SEGMENT_LOCAL) {
    if (gptr.teamid != DART_TEAM_ALL) {
      return DART_GPTR_ISNULL(gptr) ? DART_OK : DART_ERR_INVAL;
    }
    if (offset >= Heap::kReserve) return DART_ERR_INVAL;
    if (gptr.unitid == g_dart.myid) *addr = g_dart.heap.local_base() + offset;
    return DART_OK;
  }
  Team* team = FindTeam(gptr.teamid);
  Segment* s = team ? team->FindSegment(gptr.segid) : nullptr;
  if (s == nullptr) return DART_ERR_NOTFOUND;
  if (gptr.unitid != team->myid) return DART_OK;
  if (offset > static_cast<uint64_t>(s->my_size)) return DART_ERR_INVAL;
  *addr = s->my_base + offset;
  return DART_OK;
}

dart_ret_t dart_gptr_setaddr(dart_gptr_t* gptr, void* addr) {
  LockGuard guard;
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (gptr == nullptr) return DART_ERR_INVAL;
  auto* p = static_cast<std::byte*>(addr);
  if (gptr->segid == DART_SEGMENT_LOCAL) {
    if (gptr->teamid != DART_TEAM_ALL || !g_dart.heap.Contains(p)) {
      return DART_ERR_INVAL;
    }
    gptr->addr_or_offs.offset =
        static_cast<uint64_t>(p - g_dart.heap.local_base());
    return DART_OK;
  }
  Team* team = FindTeam(gptr->teamid);
  Segment* s = team ? team->FindSegment(gptr->segid) : nullptr;
  if (s == nullptr) return DART_ERR_NOTFOUND;
  if (p < s->my_base || p > s->my_base + s->my_size) return DART_ERR_INVAL;
  gptr->addr_or_offs.offset = static_cast<uint64_t>(p - s->my_base);
  return DART_OK;
}

dart_ret_t dart_gptr_incaddr(dart_gptr_t* gptr, int64_t offs) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (gptr == nullptr) return DART_ERR_INVAL;
  gptr->addr_or_offs.offset += static_cast<uint64_t>(offs);
  return DART_OK;
}

dart_ret_t dart_gptr_setunit(dart_gptr_t* gptr, dart_team_unit_t unit) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (gptr == nullptr || unit.id < 0 || unit.id >= (1 << 23)) {
    return DART_ERR_INVAL;
  }
  gptr->unitid = unit.id;
  return DART_OK;
}

dart_ret_t dart_gptr_getflags(dart_gptr_t gptr, uint16_t* flags) {
  LockGuard guard;
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (flags == nullptr) return DART_ERR_INVAL;
  if (gptr.segid == DART_SEGMENT_LOCAL) {
    *flags = static_cast<uint16_t>(gptr.flags);
    return DART_OK;
  }
  Team* team = FindTeam(gptr.teamid);
  Segment* s = team ? team->FindSegment(gptr.segid) : nullptr;
  if (s == nullptr) return DART_ERR_NOTFOUND;
  *flags = s->flags;
  return DART_OK;
}

dart_ret_t dart_gptr_setflags(dart_gptr_t* gptr, uint16_t flags) {
  LockGuard guard;
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (gptr == nullptr) return DART_ERR_INVAL;
  if (gptr->segid != DART_SEGMENT_LOCAL) {
    Team* team = FindTeam(gptr->teamid);
    Segment* s = team ? team->FindSegment(gptr->segid) : nullptr;
    if (s == nullptr) return DART_ERR_NOTFOUND;
    s->flags = flags;
  }
  gptr->flags = flags & 0xff;
  return DART_OK;
}

dart_ret_t dart_memalloc(size_t nelem, dart_datatype_t dtype,
                         dart_gptr_t* gptr) {
  LockGuard guard;
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  uint64_t bytes = 0;
  if (gptr == nullptr || !ElementBytes(nelem, dtype, &bytes)) {
    return DART_ERR_INVAL;
  }
  uint64_t offset = 0;
  if (dart_ret_t rc = g_dart.heap.Allocate(bytes, &offset)) return rc;
  dart_gptr_t g = DART_GPTR_NULL;
  g.unitid = g_dart.myid;
  g.flags = 0;
  g.segid = DART_SEGMENT_LOCAL;
  g.teamid = DART_TEAM_ALL;
  g.addr_or_offs.offset = offset;
  *gptr = g;
  return DART_OK;
}

dart_ret_t dart_memfree(dart_gptr_t gptr) {
  LockGuard guard;
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (DART_GPTR_ISNULL(gptr)) return DART_OK;
  if (gptr.segid != DART_SEGMENT_LOCAL || gptr.teamid != DART_TEAM_ALL ||
      gptr.unitid != g_dart.myid) {
    return DART_ERR_INVAL;
  }
  return g_dart.heap.Free(gptr.addr_or_offs.offset);
}

dart_ret_t dart_team_memalloc_aligned(dart_team_t teamid, size_t nelem,
                                      dart_datatype_t dtype,
                                      dart_gptr_t* gptr) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* team = FindTeam(teamid);
  if (team == nullptr) return DART_ERR_INVAL;
  uint64_t bytes = 0;
  const bool ok = gptr != nullptr && ElementBytes(nelem, dtype, &bytes);
  if (!AllAgree(team->comm, ok)) return DART_ERR_INVAL;
  const int id = team->allocated_ids.Take();
  if (id < 0) return DART_ERR_NOMEM;
  auto s = std::make_unique<Segment>();
  s->id = static_cast<int16_t>(id);
  ManagedWindow* w = nullptr;
  void* base = nullptr;
  if (ManagedWindow::Allocate(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL,
                              team->comm, &base, &w) != MPI_SUCCESS) {
    team->allocated_ids.Give(id);
    return DART_ERR_NOMEM;
  }
  s->window.reset(w);
  s->my_base = static_cast<std::byte*>(base);
  s->my_size = static_cast<MPI_Aint>(bytes);
  MapPeers(*s, *w, team->myid);
  OpenEpoch(*s, w->app_win());
  s->pending.assign(team->size, 0);
  // CPU atomics only when no unit of the team is remote: MPI applies
  // remote units' accumulates, which could not be atomic with them. Unless
  // the remote units' agents apply them (shim/agent/agent.h), with the same CPU
  // atomics: then node-local units take CPU atomics as well.
  s->direct_atomics = w->locks_in_shm();
  s->agent_atomics = w->agent_served() && MapsEveryNodeLocalUnit(*s);
  *gptr = SegmentGptr(*team, s->id);
  LockGuard guard;
  Store(*team, std::move(s));
  return DART_OK;
}

dart_ret_t dart_team_memfree(dart_gptr_t gptr) {
  return FreeSegment(gptr, /*registered=*/false);
}

dart_ret_t dart_team_memregister_aligned(dart_team_t teamid, size_t nelem,
                                         dart_datatype_t dtype, void* addr,
                                         dart_gptr_t* gptr) {
  return Register(teamid, nelem, dtype, addr, gptr, /*aligned=*/true);
}

dart_ret_t dart_team_memregister(dart_team_t teamid, size_t nlelem,
                                 dart_datatype_t dtype, void* addr,
                                 dart_gptr_t* gptr) {
  return Register(teamid, nlelem, dtype, addr, gptr, /*aligned=*/false);
}

dart_ret_t dart_team_memderegister(dart_gptr_t gptr) {
  return FreeSegment(gptr, /*registered=*/true);
}

dart_ret_t dart_type_create_strided(dart_datatype_t basetype, size_t stride,
                                    size_t blocklen, dart_datatype_t* newtype) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  LockGuard guard;
  return g_dart.types.CreateStrided(basetype, stride, blocklen, newtype);
}

dart_ret_t dart_type_create_indexed(dart_datatype_t basetype, size_t count,
                                    const size_t blocklen[],
                                    const size_t offset[],
                                    dart_datatype_t* newtype) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  LockGuard guard;
  return g_dart.types.CreateIndexed(basetype, count, blocklen, offset, newtype);
}

dart_ret_t dart_type_create_custom(size_t num_bytes, dart_datatype_t* newtype) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  LockGuard guard;
  return g_dart.types.CreateCustom(num_bytes, newtype);
}

dart_ret_t dart_type_destroy(dart_datatype_t* dart_type) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  LockGuard guard;
  return g_dart.types.Destroy(dart_type);
}

}  // extern "C"
