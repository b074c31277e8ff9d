// Window creation, destruction and queries. MPI_Win_allocate,
// MPI_Win_allocate_shared and MPI_Win_create windows are managed (unless
// switched off); dynamic windows pass through.
#include <mpi.h>

#include <cstdio>
#include <cstring>

#include "include/rmashim/rmashim.h"
#include "shim/agent/agent.h"
#include "shim/base/spin_wait.h"
#include "shim/process/runtime.h"
#include "shim/windows/window.h"

namespace rmashim {
namespace {

// The per-window opt-out: info key rmashim_managed=false.
bool InfoOptsOut(MPI_Info info) {
  if (info == MPI_INFO_NULL) return false;
  char value[16] = {};
  int flag = 0;
  PMPI_Info_get(info, "rmashim_managed", sizeof(value) - 1, value, &flag);
  return flag &&
         (std::strcmp(value, "false") == 0 || std::strcmp(value, "0") == 0);
}

// One line on stderr from the communicator's rank 0.
void WarnOnce(MPI_Comm comm, const char* what) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  if (rank == 0) std::fprintf(stderr, "rmashim: %s\n", what);
}

// This rank's say in whether a new window is managed; claims room in the
// window table (`*reserved`) when it votes to manage it.
Vote LocalVote(MPI_Info info, bool* reserved) {
  *reserved = false;
  if (InfoOptsOut(info)) return Vote::kOptOut;
  if (!runtime().windows().Reserve()) {
    std::fprintf(stderr, "rmashim: too many managed windows\n");
    return Vote::kDecline;
  }
  *reserved = true;
  return Vote::kManage;
}

// Why the ranks left a window to MPI, for the profile (and a warning).
Fallback FallbackOf(MPI_Comm comm, Vote agreed) {
  switch (agreed) {
    case Vote::kOptOut:
      return Fallback::kOptedOut;
    case Vote::kNoMemory:
      WarnOnce(comm, "node-shared memory exhausted; window left to MPI");
      return Fallback::kNoSharedMemory;
    default:
      return Fallback::kShimSetupFailed;
  }
}

// Other flavors: MPI creates the window, then the shim adopts it. Whether
// it does is agreed by every rank (ManagedWindow::Adopt).
// `memory`: MPI_Win_create memory made node-shared (shared_user_memory.h),
// handed to Adopt (unshared here when MPI's creation fails).
template <typename Create>
int CreateAndAdopt(Flavor flavor, MPI_Info info, MPI_Comm comm, MPI_Win* win,
                   Create create, const UserMemoryId& memory = {},
                   void* create_base = nullptr) {
  const char* flavor_name = flavor == Flavor::kShared ? "shared" : "create";
  const int rc = create();
  if (rc != MPI_SUCCESS) {
    UnshareUserMemory(memory);
    return rc;
  }
  if (!runtime().enabled()) {
    g_profiler.OpenUnmanaged(*win, comm, flavor_name, Fallback::kOptedOut);
    return rc;
  }
  void* base = nullptr;
  MPI_Aint* size = nullptr;
  int* disp_unit = nullptr;
  int flag = 0;
  PMPI_Win_get_attr(*win, MPI_WIN_BASE, &base, &flag);
  PMPI_Win_get_attr(*win, MPI_WIN_SIZE, &size, &flag);
  PMPI_Win_get_attr(*win, MPI_WIN_DISP_UNIT, &disp_unit, &flag);
  // MPI_Win_create: the memory the application gave. MPICH 4.0.2 over UCX
  // reports (and uses) the start of a registration it merged with an
  // earlier live window's instead, when the two windows' pages overlap.
  if (flavor == Flavor::kCreate) base = create_base;
  bool reserved = false;
  const Vote vote = LocalVote(info, &reserved);
  Vote agreed = Vote::kManage;
  ManagedWindow* w = nullptr;
  const int arc = ManagedWindow::Adopt(flavor, *win, base, *size, *disp_unit,
                                       comm, &w, vote, &agreed, memory);
  Fallback why = Fallback::kNoSharedMemory;
  if (agreed != Vote::kManage) {
    why = FallbackOf(comm, agreed);
  } else if (arc == MPI_SUCCESS && w == nullptr) {
    WarnOnce(comm,
             "cross-memory attach refused; MPI_Win_create window left to MPI");
  } else if (arc != MPI_SUCCESS) {
    why = Fallback::kShimSetupFailed;  // the shim's own failure
  }
  // Room was reserved before the agreement, so this Insert cannot fail.
  if (w != nullptr) runtime().windows().Insert(*win, w);
  if (w != nullptr) {
    AgentOpenRma(*w, comm);  // collective: the same w == nullptr everywhere
    w->SetProfile(g_profiler.OpenManaged(*win, comm, flavor_name));
  } else {
    if (reserved) runtime().windows().Release();
    g_profiler.OpenUnmanaged(*win, comm, flavor_name, why);
  }
  return MPI_SUCCESS;
}

const int kFlavorAllocate = MPI_WIN_FLAVOR_ALLOCATE;

}  // namespace
}  // namespace rmashim

using namespace rmashim;  // NOLINT: wrappers below only forward

extern "C" {

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                     void* baseptr, MPI_Win* win) {
  // Bad arguments go to MPI so they get its errors.
  if (!runtime().enabled() || size < 0 || disp_unit <= 0 ||
      comm == MPI_COMM_NULL || baseptr == nullptr || win == nullptr) {
    const int rc = PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    if (rc == MPI_SUCCESS) {
      g_profiler.OpenUnmanaged(*win, comm, "allocate", Fallback::kOptedOut);
    }
    return rc;
  }
  bool reserved = false;
  const Vote vote = LocalVote(info, &reserved);
  Vote agreed = Vote::kManage;
  ManagedWindow* w = nullptr;
  const int rc = ManagedWindow::Allocate(size, disp_unit, info, comm, baseptr,
                                         &w, vote, &agreed);
  if (rc != MPI_SUCCESS && reserved) runtime().windows().Release();
  if (agreed != Vote::kManage) {  // on every rank: plain MPI
    const Fallback why = FallbackOf(comm, agreed);
    const int prc =
        PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    if (prc == MPI_SUCCESS)
      g_profiler.OpenUnmanaged(*win, comm, "allocate", why);
    return prc;
  }
  if (rc != MPI_SUCCESS) return rc;
  // Room was reserved before the agreement, so this Insert cannot fail.
  runtime().windows().Insert(w->app_win(), w);
  *win = w->app_win();
  AgentOpenRma(*w, comm);
  w->SetProfile(g_profiler.OpenManaged(*win, comm, "allocate"));
  return MPI_SUCCESS;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  const int rc = PMPI_Win_create_dynamic(info, comm, win);
  if (rc == MPI_SUCCESS) {
    g_profiler.OpenUnmanaged(*win, comm, "dynamic", Fallback::kUnmanagedFlavor);
  }
  return rc;
}

int MPI_Win_set_name(MPI_Win win, const char* name) {
  const int rc = PMPI_Win_set_name(win, name);
  WindowProfile* p = ProfileOf(win, FindManaged(win));
  if (rc == MPI_SUCCESS && p != nullptr) {
    std::snprintf(p->name, sizeof(p->name), "%s", name);
  }
  return rc;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                            MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return CreateAndAdopt(Flavor::kShared, info, comm, win, [&] {
    return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
  });
}

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                   MPI_Comm comm, MPI_Win* win) {
  // Before MPI registers the memory (shared_user_memory.h); only where a
  // node peer could use it.
  UserMemoryId memory;
  if (runtime().enabled() && runtime().locality().node_size > 1 && size > 0 &&
      disp_unit > 0 && comm != MPI_COMM_NULL && win != nullptr &&
      !InfoOptsOut(info)) {
    const AgentParked parked;  // the shim's own thread stays off the pages
    memory = ShareUserMemory(base, static_cast<size_t>(size));
  }
  return CreateAndAdopt(
      Flavor::kCreate, info, comm, win,
      [&] { return PMPI_Win_create(base, size, disp_unit, info, comm, win); },
      memory, base);
}

int MPI_Win_free(MPI_Win* win) {
  ManagedWindow* w = win ? FindManaged(*win) : nullptr;
  if (w == nullptr) {
    if (win != nullptr) g_profiler.Close(*win);
    return PMPI_Win_free(win);
  }
  // Not inside an access or exposure epoch (MPICH: MPI_ERR_RMA_SYNC); the
  // window and its profile record stay as they are.
  if (!w->may_start_epoch() || w->pscw().exposed) {
    return RaiseOnWindow(*win, MPI_ERR_RMA_SYNC);
  }
  g_profiler.Close(*win);
  runtime().windows().Erase(*win);
  runtime().windows().Release();
  const AgentRmaRetired rma(*w);  // released after the free
  delete w;  // collective: frees the application's and the shim's windows
  *win = MPI_WIN_NULL;
  return MPI_SUCCESS;
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val,
                     int* flag) {
  // MPI_Win_allocate's window is created over the shared segment; report
  // the flavor the application asked for.
  ManagedWindow* w = FindManaged(win);
  if (win_keyval == MPI_WIN_CREATE_FLAVOR && w != nullptr &&
      w->flavor() == Flavor::kAllocate && attribute_val != nullptr &&
      flag != nullptr) {
    *static_cast<const int**>(attribute_val) = &kFlavorAllocate;
    *flag = 1;
    return MPI_SUCCESS;
  }
  // MPI_Win_create's base as the application gave it (CreateAndAdopt).
  if (win_keyval == MPI_WIN_BASE && w != nullptr &&
      w->flavor() == Flavor::kCreate && attribute_val != nullptr &&
      flag != nullptr) {
    *static_cast<void**>(attribute_val) = w->target(w->rank()).base;
    *flag = 1;
    return MPI_SUCCESS;
  }
  return PMPI_Win_get_attr(win, win_keyval, attribute_val, flag);
}

// MPI-4 allows shared_query on any flavor: for MPI_Win_allocate windows
// node-local peers' memory is returned, off-node ranks give size 0 and a
// NULL base. Other flavors answer as MPI does.
int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit,
                         void* baseptr) {
  ManagedWindow* w = FindManaged(win);
  if (w == nullptr || w->flavor() != Flavor::kAllocate) {
    return PMPI_Win_shared_query(win, rank, size, disp_unit, baseptr);
  }
  if (rank < MPI_PROC_NULL || rank >= w->comm_size()) {
    return RaiseOnWindow(win, MPI_ERR_RANK);
  }
  if (rank == MPI_PROC_NULL) {  // the lowest node-local rank with memory
    for (int r = 0; r < w->comm_size(); ++r) {
      if (w->target(r).node_local() && w->target(r).size > 0) {
        rank = r;
        break;
      }
    }
  }
  const Target* t = rank == MPI_PROC_NULL ? nullptr : &w->target(rank);
  const bool mapped = t != nullptr && t->node_local();
  *size = mapped ? t->size : 0;
  *disp_unit = t != nullptr ? t->disp_unit : 1;
  *static_cast<void**>(baseptr) = mapped ? t->base : nullptr;
  return MPI_SUCCESS;
}

int rmashim_win_is_managed(MPI_Win win, int* flag) {
  *flag = FindManaged(win) != nullptr;
  return MPI_SUCCESS;
}

int rmashim_win_target_mapped(MPI_Win win, int rank, int* flag) {
  *flag = 0;
  const ManagedWindow* w = FindManaged(win);
  if (w == nullptr) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->comm_size()) return MPI_ERR_RANK;
  const Target& t = w->target(rank);
  *flag = t.node_local() && t.pid == 0;
  return MPI_SUCCESS;
}

int rmashim_win_passed_to_mpi(MPI_Win win, long long* count) {
  const ManagedWindow* w = FindManaged(win);
  *count = w != nullptr ? w->passed_to_mpi() : 0;
  return MPI_SUCCESS;
}

int rmashim_win_agent_id(MPI_Win win, int rank, int* id) {
  *id = -1;
  const ManagedWindow* w = FindManaged(win);
  if (w == nullptr || !w->agent_served()) return MPI_SUCCESS;
  if (rank < 0 || rank >= w->comm_size()) return MPI_ERR_RANK;
  *id = w->agent_id(rank);
  return MPI_SUCCESS;
}

int rmashim_agent_stats(int* running, long long* applied) {
  *running = AgentRunning();
  *applied = AgentApplied();
  return MPI_SUCCESS;
}

int rmashim_agent_lock_stats(long long* granted) {
  *granted = AgentLocksGranted();
  return MPI_SUCCESS;
}

int rmashim_agent_locks_waiting(long long* waiting) {
  *waiting = AgentLocksWaiting();
  return MPI_SUCCESS;
}

int rmashim_agent_rma_ops(long long* ops) {
  *ops = AgentRmaOps();
  return MPI_SUCCESS;
}

int rmashim_agent_rejected(long long* rejected) {
  *rejected = AgentRejected();
  return MPI_SUCCESS;
}

int rmashim_mpi_progress_yields(long long* yields) {
  *yields = static_cast<long long>(MpiProgressYields());
  return MPI_SUCCESS;
}

int rmashim_agent_send_forged(int world_rank, int claimed_origin,
                              unsigned long long token_xor, const void* frames,
                              size_t bytes) {
  return AgentSendForged(world_rank, claimed_origin, token_xor,
                         {static_cast<const std::byte*>(frames), bytes});
}

int rmashim_agent_fail_link(int world_rank, int agent_end) {
  return AgentFailLink(world_rank, agent_end != 0);
}

// 0: release; 1: the thread and the waits that stand in for it; 2: the
// thread alone (AgentHold).
int rmashim_agent_hold(int held) {
  if (held < 0 || held > 2) return MPI_ERR_ARG;
  return AgentHoldThread(static_cast<AgentHold>(held));
}

int rmashim_get_locality(rmashim_locality_t* out) {
  const Locality& loc = runtime().locality();
  *out = {loc.node_id, loc.node_rank, loc.node_size, loc.numa_domain, loc.core};
  return MPI_SUCCESS;
}

}  // extern "C"
