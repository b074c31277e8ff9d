// Data movement on managed windows: node-local targets are served by direct
// copies into the mapped segment; everything else goes to MPI on the window
// whose epoch covers it (ManagedWindow::passthrough_win).
#include <mpi.h>

#include <atomic>

#include "shim/access.h"
#include "shim/datatype.h"
#include "shim/runtime.h"
#include "shim/window.h"

namespace rmashim {
namespace {

enum class Direction { kPut, kGet };

// Picks the MPI window for a passed-through call and remembers that the
// target now has MPI operations to complete at flush/unlock.
MPI_Win PassThroughWin(ManagedWindow& w, int target) {
  if (target >= 0 && target < w.comm_size()) {
    w.locks[target].mpi_ops_pending = true;
    w.any_mpi_ops_pending = true;
  }
  return w.passthrough_win();
}

// Errors from the internal window (MPI_ERRORS_RETURN) are reported through
// the application's window, as if the call had gone there.
int Forwarded(const ManagedWindow& w, MPI_Win used, int rc) {
  return used == w.app_win() ? rc : RaiseOnWindow(w.app_win(), rc);
}

// The node-local fast path: checks, then one copy. Returns false when the
// call must pass through to MPI instead (off-node target, PSCW epoch).
bool TryDirect(ManagedWindow& w, Direction dir, void* origin, int origin_count,
               MPI_Datatype origin_type, int target, MPI_Aint disp,
               int target_count, MPI_Datatype target_type, int* rc) {
  Layout origin_layout, target_layout;
  if (!DescribeBuiltin(origin_count, origin_type, &origin_layout) &&
      (*rc = DescribeLayout(origin_count, origin_type, &origin_layout))) {
    return true;
  }
  if (!DescribeBuiltin(target_count, target_type, &target_layout) &&
      (*rc = DescribeLayout(target_count, target_type, &target_layout))) {
    return true;
  }
  if ((*rc = CheckTargetArgs(w, target, disp))) return true;
  if (target == MPI_PROC_NULL) return true;
  const EpochAccess access = CheckEpoch(w, target);
  if (access == EpochAccess::kNoEpoch) {
    *rc = MPI_ERR_RMA_SYNC;
    return true;
  }
  if (origin_layout.bytes != target_layout.bytes) {
    *rc = MPI_ERR_TYPE;  // type signatures must match (MPI-3 11.3)
    return true;
  }
  // Every rank's window size is known, so out-of-range accesses are caught
  // for remote targets too (MPICH would corrupt memory or crash).
  const Target& t = w.target(target);
  MPI_Aint offset = 0;
  if (!FitsInTarget(t, disp, target_layout, &offset)) {
    *rc = MPI_ERR_RMA_RANGE;
    return true;
  }
  if (!t.node_local() || access == EpochAccess::kPassThrough) return false;
  std::byte* addr = t.base + offset;
  *rc = dir == Direction::kPut
            ? CopyTyped(origin, origin_count, origin_type, origin_layout, addr,
                        target_count, target_type, target_layout)
            : CopyTyped(addr, target_count, target_type, target_layout, origin,
                        origin_count, origin_type, origin_layout);
  return true;
}

}  // namespace
}  // namespace rmashim

using rmashim::Direction;
using rmashim::Forwarded;
using rmashim::FindManaged;
using rmashim::ManagedWindow;
using rmashim::PassThroughWin;
using rmashim::RaiseOnWindow;
using rmashim::TryDirect;

extern "C" {

int MPI_Put(const void* origin_addr, int origin_count,
            MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  if (w == nullptr) {
    return PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank,
                    target_disp, target_count, target_datatype, win);
  }
  int rc = MPI_SUCCESS;
  if (TryDirect(*w, Direction::kPut, const_cast<void*>(origin_addr),
                origin_count, origin_datatype, target_rank, target_disp,
                target_count, target_datatype, &rc)) {
    return RaiseOnWindow(win, rc);
  }
  MPI_Win used = PassThroughWin(*w, target_rank);
  return Forwarded(*w, used,
                   PMPI_Put(origin_addr, origin_count, origin_datatype,
                            target_rank, target_disp, target_count,
                            target_datatype, used));
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  if (w == nullptr) {
    return PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank,
                    target_disp, target_count, target_datatype, win);
  }
  int rc = MPI_SUCCESS;
  if (TryDirect(*w, Direction::kGet, origin_addr, origin_count,
                origin_datatype, target_rank, target_disp, target_count,
                target_datatype, &rc)) {
    return RaiseOnWindow(win, rc);
  }
  MPI_Win used = PassThroughWin(*w, target_rank);
  return Forwarded(*w, used,
                   PMPI_Get(origin_addr, origin_count, origin_datatype,
                            target_rank, target_disp, target_count,
                            target_datatype, used));
}

// Not accelerated yet: the accumulate family and request-based operations go
// to MPI on the window whose epoch covers them.

int MPI_Accumulate(const void* origin_addr, int origin_count,
                   MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  MPI_Win used = w ? PassThroughWin(*w, target_rank) : win;
  const int rc = PMPI_Accumulate(origin_addr, origin_count, origin_datatype,
                                 target_rank, target_disp, target_count,
                                 target_datatype, op, used);
  return w ? Forwarded(*w, used, rc) : rc;
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count,
                       MPI_Datatype origin_datatype, void* result_addr,
                       int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype,
                       MPI_Op op, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  MPI_Win used = w ? PassThroughWin(*w, target_rank) : win;
  const int rc = PMPI_Get_accumulate(
      origin_addr, origin_count, origin_datatype, result_addr, result_count,
      result_datatype, target_rank, target_disp, target_count,
      target_datatype, op, used);
  return w ? Forwarded(*w, used, rc) : rc;
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr,
                     MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  MPI_Win used = w ? PassThroughWin(*w, target_rank) : win;
  const int rc = PMPI_Fetch_and_op(origin_addr, result_addr, datatype,
                                   target_rank, target_disp, op, used);
  return w ? Forwarded(*w, used, rc) : rc;
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr,
                         void* result_addr, MPI_Datatype datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  MPI_Win used = w ? PassThroughWin(*w, target_rank) : win;
  const int rc = PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr,
                                       datatype, target_rank, target_disp,
                                       used);
  return w ? Forwarded(*w, used, rc) : rc;
}

int MPI_Rput(const void* origin_addr, int origin_count,
             MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  ManagedWindow* w = FindManaged(win);
  MPI_Win used = w ? PassThroughWin(*w, target_rank) : win;
  const int rc = PMPI_Rput(origin_addr, origin_count, origin_datatype,
                           target_rank, target_disp, target_count,
                           target_datatype, used, request);
  return w ? Forwarded(*w, used, rc) : rc;
}

int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  ManagedWindow* w = FindManaged(win);
  MPI_Win used = w ? PassThroughWin(*w, target_rank) : win;
  const int rc = PMPI_Rget(origin_addr, origin_count, origin_datatype,
                           target_rank, target_disp, target_count,
                           target_datatype, used, request);
  return w ? Forwarded(*w, used, rc) : rc;
}

int MPI_Raccumulate(const void* origin_addr, int origin_count,
                    MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request* request) {
  ManagedWindow* w = FindManaged(win);
  MPI_Win used = w ? PassThroughWin(*w, target_rank) : win;
  const int rc = PMPI_Raccumulate(origin_addr, origin_count, origin_datatype,
                                  target_rank, target_disp, target_count,
                                  target_datatype, op, used, request);
  return w ? Forwarded(*w, used, rc) : rc;
}

int MPI_Rget_accumulate(const void* origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype,
                        MPI_Op op, MPI_Win win, MPI_Request* request) {
  ManagedWindow* w = FindManaged(win);
  MPI_Win used = w ? PassThroughWin(*w, target_rank) : win;
  const int rc = PMPI_Rget_accumulate(
      origin_addr, origin_count, origin_datatype, result_addr, result_count,
      result_datatype, target_rank, target_disp, target_count,
      target_datatype, op, used, request);
  return w ? Forwarded(*w, used, rc) : rc;
}

}  // extern "C"
