// DART's process-wide state: its own, independent of the MPI wrappers'
// g_runtime (DART works whether or not librmashim.so is preloaded).
#ifndef RMASHIM_SHIM_DART_STATE_H_
#define RMASHIM_SHIM_DART_STATE_H_

#include <dart/dart.h>
#include <mpi.h>
#include <sys/types.h>

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_set>
#include <vector>

#include "shim/base/spin_wait.h"
#include "shim/dart/heap.h"
#include "shim/dart/types.h"
#include "shim/sync/mpi_flush.h"
#include "shim/windows/ptracer.h"
#include "shim/windows/window.h"

// Opaque handles of the C interface.
struct dart_group_struct {
  std::vector<dart_unit_t> members;  // global ids, ascending, unique
};

struct dart_handle_struct {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Win win = MPI_WIN_NULL;
  int target = 0;  // rank in `win`
  bool in_use = false;
};

namespace rmashim::dart {

inline constexpr int kMaxTeams = 1 << 15;  // dart_team_t is int16_t

// How this unit reaches one unit's part of a segment.
enum class Path : uint8_t {
  kMapped,       // mapped here: memcpy and CPU atomics
  kCrossMemory,  // another process's memory on this node: process_vm_*v
  kMpi,          // MPI RMA
};

struct Peer {
  std::byte* base = nullptr;  // kMapped: here; kCrossMemory: in process pid
  MPI_Aint size = 0;
  pid_t pid = 0;
  Path path = Path::kMpi;
  MPI_Aint disp_base = 0;  // MPI displacement of offset 0 (dynamic windows)
};

// Memory of a team: dart_team_memalloc_aligned (segid > 0) or registered
// user memory (segid < 0). Destroying it is collective over the team.
struct Segment {
  Segment() = default;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment();

  int16_t id = 0;
  bool registered = false;
  // The core's window; null for registered memory the core could not
  // manage (cross-memory attach refused), which then uses plain_win.
  std::unique_ptr<ManagedWindow> window;
  MPI_Win plain_win = MPI_WIN_NULL;
  MPI_Win rma_win = MPI_WIN_NULL;  // MPI operations go here
  bool locked_all = false;         // DART opened rma_win's lock_all epoch
  bool direct_atomics = false;     // CPU atomics (every unit node-local)
  // Spanning nodes, every unit running the agent: CPU atomics on the
  // node-local units, the remote units' agents for the others (atomics.cc).
  bool agent_atomics = false;
  // Registered memory: the team's dynamic window my_base is attached to
  // (detached when the segment goes).
  MPI_Win dyn_win = MPI_WIN_NULL;
  std::byte* my_base = nullptr;
  MPI_Aint my_size = 0;
  uint16_t flags = 0;
  std::vector<Peer> peers;       // by team unit
  std::vector<uint8_t> pending;  // MPI operations to flush, by team unit
  // Registered memory node-local units attach to (ptracer.h); released last.
  CrossMemoryGrant cross_memory_grant;
};

// Deterministic id allocation: every member of a team takes and returns
// ids in the same collective order, so they agree without communicating.
class IdPool {
 public:
  int Take();  // -1 when exhausted
  void Give(int id);

 private:
  int next_ = 1;
  std::set<int> free_;
};

// Queue words of a team's locks (locks.cc).
struct LockBlock {
  LockBlock() = default;
  LockBlock(const LockBlock&) = delete;
  LockBlock& operator=(const LockBlock&) = delete;
  ~LockBlock();  // collective over the team

  std::unique_ptr<ManagedWindow> window;
  MPI_Win rma_win = MPI_WIN_NULL;  // MPI atomics go here
  bool locked_all = false;         // DART opened rma_win's lock_all epoch
  bool shm = false;                // every unit node-local: CPU atomics
  bool agent = false;  // spanning nodes: remote units' words by their agents
};

struct Team {
  Team() = default;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  dart_team_t id = DART_TEAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  bool owns_comm = true;
  std::vector<dart_unit_t> members;  // global ids; index = team unit id
  int myid = 0;
  int size = 0;
  std::vector<std::unique_ptr<Segment>> allocated;   // index segid
  std::vector<std::unique_ptr<Segment>> registered;  // index -segid
  IdPool allocated_ids, registered_ids;
  int locks_created = 0;
  std::vector<dart_lock_t> locks;  // live locks, creation order
  // Windows holding the queue words of the team's locks, kLocksPerBlock
  // locks each (creating a window per lock would make dart_team_lock_init
  // as slow as a window creation), and the free slots (block * kLocksPerBlock
  // + index), taken and returned in the same collective order everywhere.
  std::vector<std::unique_ptr<LockBlock>> lock_blocks;
  std::set<int> free_lock_slots;
  // Registered memory of every unit is attached to this dynamic window
  // (made at the team's first registration, freed with the team).
  MPI_Win dyn_win = MPI_WIN_NULL;
  // Locality: the team's domain tree (owned, freed by
  // dart_team_locality_finalize) and its units' records (valid until the
  // team goes); built on first query (locality.cc).
  dart_domain_locality_t* domain = nullptr;
  std::vector<dart_unit_locality_t> locality;

  Segment* FindSegment(int16_t segid) const {
    if (segid > 0) {
      return static_cast<size_t>(segid) < allocated.size()
                 ? allocated[segid].get()
                 : nullptr;
    }
    const size_t index = static_cast<size_t>(-static_cast<int>(segid));
    return index < registered.size() ? registered[index].get() : nullptr;
  }
  // Team unit of global unit `unit`, or -1.
  int ToTeamUnit(dart_unit_t unit) const;
};

class HandlePool {
 public:
  dart_handle_t Take();
  void Give(dart_handle_t h);
  // Whether `h` is a handle of this pool currently handed out.
  bool Valid(dart_handle_t h) const;
  // dart_handle_free of an incomplete handle: MPICH 4.0.2 cannot
  // MPI_Request_free an RMA request, so the request is kept until a flush
  // of its window has completed it, and the handle goes back to the pool.
  void Release(dart_handle_t h);
  // Frees the kept requests of `win` that have completed. With
  // `all_complete` (after a flush_all, flush_local_all or unlock_all of
  // `win`) they all have.
  void Reap(MPI_Win win, bool all_complete);

 private:
  static constexpr size_t kSlab = 256;
  std::vector<std::unique_ptr<dart_handle_struct[]>> slabs_;
  std::vector<dart_handle_t> free_;
  std::vector<std::pair<MPI_Win, MPI_Request>> released_;
};

struct State {
  bool initialized = false;
  // dart_init_thread: DART_THREAD_MULTIPLE. Then LockGuard serializes the
  // calls that change or read DART's tables (never around a blocking MPI
  // call, so concurrent collectives on different teams cannot deadlock).
  bool threaded = false;
  std::recursive_mutex mu;
  bool owns_mpi = false;  // dart_init started MPI
  int myid = 0;
  int size = 0;
  MPI_Comm world = MPI_COMM_NULL;  // a duplicate of MPI_COMM_WORLD
  MPI_Group world_group = MPI_GROUP_NULL;
  std::vector<uint8_t> node_local;  // by global unit
  std::vector<int> node_index;      // by global unit
  bool spans_nodes = false;
  // dart_init started the core's agent (shim/agent/agent.h): team memory and
  // locks spanning nodes then take node-local atomics in shared memory and
  // send remote ones to the target's agent.
  bool started_agent = false;
  // Before the teams: their segments reap freed handles when destroyed
  // (members are destroyed in reverse order, e.g. at exit without dart_exit).
  HandlePool handles;
  std::array<std::unique_ptr<Team>, kMaxTeams> teams;  // O(1) by team id
  std::bitset<kMaxTeams> team_ids;  // ids of the teams this unit is in
  Heap heap;
  TypeRegistry types;
  std::unordered_set<dart_group_t> groups;
  std::unordered_set<dart_lock_t> locks;
  std::vector<dart_unit_locality_t> locality;  // by global unit
};

extern State g_dart;

// Holds g_dart.mu for its scope when DART runs DART_THREAD_MULTIPLE.
class LockGuard {
 public:
  LockGuard() : locked_(g_dart.threaded) {
    if (locked_) g_dart.mu.lock();
  }
  ~LockGuard() {
    if (locked_) g_dart.mu.unlock();
  }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  bool locked_;
};

inline Team* FindTeam(dart_team_t id) {
  return id >= 0 ? g_dart.teams[id].get() : nullptr;
}

// Where one unit's bytes [offset + lo, offset + hi) of a gptr are, and how
// to reach them.
struct Where {
  Path path = Path::kMpi;
  std::byte* addr = nullptr;  // kMapped / kCrossMemory: at `offset`
  pid_t pid = 0;
  MPI_Win win = MPI_WIN_NULL;  // kMpi (and the fallback of kCrossMemory)
  int rank = 0;
  MPI_Aint disp = 0;
  uint8_t* pending = nullptr;  // set when an MPI operation is issued
  Segment* segment = nullptr;  // null: dart_memalloc memory
  bool direct_atomics = false;
  bool agent_atomics = false;
};

// Validates the gptr and the byte range (DART_ERR_INVAL, DART_ERR_NOTFOUND
// for unknown teams or segments) and fills `out`.
inline dart_ret_t Resolve(const dart_gptr_t& g, MPI_Aint lo, MPI_Aint hi,
                          Where* out) {
  const int unit = g.unitid;
  const uint64_t offset = g.addr_or_offs.offset;
  if (g.segid == DART_SEGMENT_LOCAL) {
    if (g.teamid != DART_TEAM_ALL || unit < 0 || unit >= g_dart.size) {
      return DART_ERR_INVAL;
    }
    Heap& heap = g_dart.heap;
    std::byte* addr = nullptr;
    if (dart_ret_t rc = heap.Locate(unit, offset + lo, hi - lo, &addr)) {
      return rc;
    }
    out->path = addr != nullptr ? Path::kMapped : Path::kMpi;
    out->addr = addr != nullptr ? addr - lo : nullptr;
    out->win = heap.win();
    out->rank = unit;
    out->disp = heap.RemoteDisp(unit, offset);
    out->pending = &heap.pending()[unit];
    out->segment = nullptr;
    out->direct_atomics = heap.direct_atomics();
    return DART_OK;
  }
  const Team* team = FindTeam(g.teamid);
  if (team == nullptr) return DART_ERR_NOTFOUND;
  Segment* s = team->FindSegment(g.segid);
  if (s == nullptr) return DART_ERR_NOTFOUND;
  if (unit < 0 || unit >= team->size) return DART_ERR_INVAL;
  const Peer& p = s->peers[unit];
  MPI_Aint end = 0;
  if (offset > static_cast<uint64_t>(p.size) ||
      __builtin_add_overflow(static_cast<MPI_Aint>(offset), hi, &end) ||
      end > p.size || static_cast<MPI_Aint>(offset) + lo < 0) {
    return DART_ERR_INVAL;
  }
  out->path = p.path;
  out->addr = p.base + offset;
  out->pid = p.pid;
  out->win = s->rma_win;
  out->rank = unit;
  out->disp = p.disp_base + static_cast<MPI_Aint>(offset);
  out->pending = &s->pending[unit];
  out->segment = s;
  out->direct_atomics = s->direct_atomics;
  out->agent_atomics = s->agent_atomics;
  return DART_OK;
}

// Lets MPI progress: on a team spanning nodes, other units' MPI operations
// may need this unit's MPI to land (MPICH's netmods emulate RMA with active
// messages). A unit that polls memory it reaches directly (its own or a
// node-local peer's) would otherwise never enter MPI while it waits for
// them. Free on one node.
inline void PokeProgress() {
  if (!g_dart.spans_nodes) return;
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, g_dart.world, &flag,
              MPI_STATUS_IGNORE);
}

// ... once every kServedCallsPerProgress calls (shim/base/spin_wait.h): for the
// calls served without MPI on a team spanning nodes (atomics on node-local
// units with the agent running, a failed dart_lock_try_acquire), which a
// unit may poll, where each would enter MPI without the agent.
inline void PokeProgressNowAndThen() {
  if (!g_dart.spans_nodes) return;
  thread_local uint32_t calls = 0;
  if (++calls % kServedCallsPerProgress == 0) PokeProgress();
}

// Completes this unit's MPI operations on `win` at every unit `pending`
// marks, one unit at a time (never MPI_Win_flush_all: shim/sync/mpi_flush.h
// says why), and clears the marks of those completed remotely.
inline int FlushPendingUnits(MPI_Win win, std::vector<uint8_t>& pending,
                             Completion completion = Completion::kRemote) {
  return FlushEachTarget(
      win, static_cast<int>(pending.size()), completion,
      [&](int unit) { return pending[unit] != 0; },
      [&](int unit) {
        if (completion == Completion::kRemote) pending[unit] = 0;
      });
}

// MPI return code -> DART.
inline dart_ret_t FromMpi(int rc) {
  return rc == MPI_SUCCESS ? DART_OK : DART_ERR_OTHER;
}

// Collective over `comm`: whether every caller passed ok.
bool AllAgree(MPI_Comm comm, bool ok);

// Frees a team's locks and segments (collective over the team).
void ReleaseTeamResources(Team& team);
// Frees a lock's slot for reuse (locks.cc); not collective by itself.
void DestroyLock(dart_lock_t lock);

// Frees the pair types of DART_OP_MINMAX reductions (collectives.cc).
void FreePairTypes();

// Locality (locality.cc): every unit's hardware, gathered by dart_init
// (collective); a team's tree and unit records, built on demand.
void GatherLocality(State& s);
dart_ret_t EnsureTeamLocality(Team& team);
void FreeTeamLocality(Team& team);

}  // namespace rmashim::dart

#endif  // RMASHIM_SHIM_DART_STATE_H_
