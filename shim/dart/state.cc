#include "shim/dart/state.h"

#include <algorithm>

#include "shim/agent/agent.h"

namespace rmashim::dart {

State g_dart;

int IdPool::Take() {
  if (!free_.empty()) {
    const int id = *free_.begin();
    free_.erase(free_.begin());
    return id;
  }
  return next_ < kMaxTeams ? next_++ : -1;
}

void IdPool::Give(int id) { free_.insert(id); }

int Team::ToTeamUnit(dart_unit_t unit) const {
  auto it = std::lower_bound(members.begin(), members.end(), unit);
  return it != members.end() && *it == unit
             ? static_cast<int>(it - members.begin())
             : -1;
}

Segment::~Segment() {
  // Atomics this unit sent agents complete before the window goes, which no
  // unit leaves before every unit got here: no agent sees one after.
  if (agent_atomics) AgentFlushAll(*window);
  if (locked_all) PMPI_Win_unlock_all(rma_win);
  g_dart.handles.Reap(rma_win, /*all_complete=*/true);
  window.reset();  // collective: frees the core's MPI objects
  if (plain_win != MPI_WIN_NULL) PMPI_Win_free(&plain_win);
  if (dyn_win != MPI_WIN_NULL) PMPI_Win_detach(dyn_win, my_base);  // local
}

dart_handle_t HandlePool::Take() {
  LockGuard guard;
  if (free_.empty()) {
    slabs_.push_back(std::make_unique<dart_handle_struct[]>(kSlab));
    dart_handle_struct* slab = slabs_.back().get();
    for (size_t i = kSlab; i-- > 0;) free_.push_back(&slab[i]);
  }
  dart_handle_t h = free_.back();
  free_.pop_back();
  h->in_use = true;
  return h;
}

void HandlePool::Give(dart_handle_t h) {
  LockGuard guard;
  h->in_use = false;
  h->request = MPI_REQUEST_NULL;
  free_.push_back(h);
}

void HandlePool::Release(dart_handle_t h) {
  LockGuard guard;
  if (h->request != MPI_REQUEST_NULL)
    released_.emplace_back(h->win, h->request);
  Give(h);
}

void HandlePool::Reap(MPI_Win win, bool all_complete) {
  LockGuard guard;
  std::erase_if(released_, [&](std::pair<MPI_Win, MPI_Request>& r) {
    if (r.first != win) return false;
    int done = 1;
    if (all_complete) {
      PMPI_Wait(&r.second, MPI_STATUS_IGNORE);
    } else {
      PMPI_Test(&r.second, &done, MPI_STATUS_IGNORE);
    }
    return done != 0;
  });
}

bool HandlePool::Valid(dart_handle_t h) const {
  LockGuard guard;
  for (const auto& slab : slabs_) {
    const auto p = reinterpret_cast<uintptr_t>(h);
    const auto first = reinterpret_cast<uintptr_t>(slab.get());
    if (p >= first && p < first + kSlab * sizeof(dart_handle_struct)) {
      return (p - first) % sizeof(dart_handle_struct) == 0 && h->in_use;
    }
  }
  return false;
}

bool AllAgree(MPI_Comm comm, bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
    return false;
  }
  return all != 0;
}

void ReleaseTeamResources(Team& team) {
  // Same order on every member: locks by creation, then segments by id.
  while (!team.locks.empty()) DestroyLock(team.locks.front());
  team.lock_blocks.clear();  // collective: frees the lock windows
  team.free_lock_slots.clear();
  for (auto& s : team.allocated) s.reset();
  for (auto& s : team.registered) s.reset();
  team.allocated.clear();
  team.registered.clear();
  if (team.dyn_win != MPI_WIN_NULL) {
    PMPI_Win_unlock_all(team.dyn_win);
    g_dart.handles.Reap(team.dyn_win, /*all_complete=*/true);
    PMPI_Win_free(&team.dyn_win);  // collective
  }
  FreeTeamLocality(team);
}

}  // namespace rmashim::dart
