// The accumulate family's wrappers: each tries its inline lane, then
// move/accumulate.h's fast run once (the queue applied, or the call queued;
// TryRunAtOnce and its kin), then the full path (AccumulateFullPath
// and its kin: the checks, Admit's route, the apply), whose verdict
// FinishCall ends; on a window the shim does not manage MPI moves it.
#include <mpi.h>

#include "shim/intercept/finish_call.h"
#include "shim/move/access.h"
#include "shim/move/accumulate.h"
#include "shim/move/word_lane.h"
#include "shim/process/runtime.h"
#include "shim/profile/profile.h"
#include "shim/windows/passthrough.h"

using namespace rmashim;  // NOLINT: wrappers below only forward

namespace {

// A call the fast run served (TryRunAtOnce and its kin): counted
// where the window is profiled, a request-based call's request completed.
int Served(const ManagedWindow& w, OpKind kind, int target, int count,
           MPI_Datatype type, MPI_Request* request = nullptr) {
  if (request != nullptr) *request = kCompletedRequest;
  return w.profile() != nullptr ? CountServed(w, kind, target, count, type)
                                : MPI_SUCCESS;
}

// MPI's own call for `c` on `win`.
[[gnu::noinline]] int AccumulateThroughMpi(const AccumulateCall& c, MPI_Win win,
                                           MPI_Request* request) {
  if (!c.fetching) {
    return request ? PMPI_Raccumulate(c.origin, c.origin_count, c.origin_type,
                                      c.target, c.disp, c.target_count,
                                      c.target_type, c.op, win, request)
                   : PMPI_Accumulate(c.origin, c.origin_count, c.origin_type,
                                     c.target, c.disp, c.target_count,
                                     c.target_type, c.op, win);
  }
  return request ? PMPI_Rget_accumulate(c.origin, c.origin_count, c.origin_type,
                                        c.result, c.result_count, c.result_type,
                                        c.target, c.disp, c.target_count,
                                        c.target_type, c.op, win, request)
                 : PMPI_Get_accumulate(c.origin, c.origin_count, c.origin_type,
                                       c.result, c.result_count, c.result_type,
                                       c.target, c.disp, c.target_count,
                                       c.target_type, c.op, win);
}

OpKind KindOf(const AccumulateCall& c, const MPI_Request* request) {
  return request ? (c.fetching ? OpKind::kRgetAccumulate : OpKind::kRaccumulate)
                 : (c.fetching ? OpKind::kGetAccumulate : OpKind::kAccumulate);
}

// The full path of a call on `win` the fast run did not serve: on a
// managed window (`w`) `full` gives the verdict and FinishCall ends the
// call with it; otherwise MPI moves it (`mpi`) on `win`.
template <typename Full, typename Mpi>
int FullPathOrMpi(ManagedWindow* w, MPI_Win win, int target,
                  MPI_Request* request, Profiled what, Full full, Mpi mpi) {
  if (w == nullptr) {
    CountUnmanagedOp(win, what.kind, target, what.count, what.type);
    return mpi(win);
  }
  return FinishCall(*w, target, full(*w), what, request, mpi);
}

[[gnu::noinline]] int AccumulateFully(ManagedWindow* w, MPI_Win win,
                                      const AccumulateCall& c,
                                      MPI_Request* request) {
  return FullPathOrMpi(
      w, win, c.target, request,
      {KindOf(c, request), c.target_count, c.target_type},
      [&](ManagedWindow& w) { return AccumulateFullPath(w, c); },
      [&](MPI_Win used) { return AccumulateThroughMpi(c, used, request); });
}

// Whether the fast run may take a call with these sides (TryRunAtOnce):
// the target's count and type on the origin side (where the op reads it)
// and on the result side (where it fetches), and a form the epoch allows.
bool SameShapes(const ManagedWindow& w, const AccumulateCall& c) {
  const bool same_origin =
      c.op == MPI_NO_OP
          ? c.fetching
          : c.origin_type == c.target_type && c.origin_count == c.target_count;
  const bool same_result =
      !c.fetching || (c.result != nullptr && c.result_type == c.target_type &&
                      c.result_count == c.target_count);
  return same_origin && same_result && FormAllowedInEpoch(w, c.form);
}

// The request forms: the fast run once, else the full path.
[[gnu::noinline]] int AccumulateWithRequest(MPI_Win win,
                                            const AccumulateCall& c,
                                            MPI_Request* request) {
  ManagedWindow* w = FindManaged(win);
  if (w != nullptr && SameShapes(*w, c) &&
      TryRunAtOnce(*w, c.target_type, c.target_count, c.op, c.target, c.disp,
                   c.origin, c.fetching ? c.result : nullptr)) {
    return Served(*w, KindOf(c, request), c.target, c.target_count,
                  c.target_type, request);
  }
  return AccumulateFully(w, win, c, request);
}

// MPI_Fetch_and_op and MPI_Compare_and_swap past their word lanes; out of
// line with the wrappers' own arguments, so the lanes end in a jump here
// and need no stack frame.
[[gnu::noinline]] int FetchAndOpFully(ManagedWindow* w, const void* origin_addr,
                                      void* result_addr, MPI_Datatype datatype,
                                      int target_rank, MPI_Aint target_disp,
                                      MPI_Op op, MPI_Win win) {
  return FullPathOrMpi(
      w, win, target_rank, nullptr, {OpKind::kFetchAndOp, 1, datatype},
      [&](ManagedWindow& w) {
        return FetchAndOpFullPath(w, origin_addr, result_addr, datatype,
                                  target_rank, target_disp, op);
      },
      [&](MPI_Win used) {
        return PMPI_Fetch_and_op(origin_addr, result_addr, datatype,
                                 target_rank, target_disp, op, used);
      });
}

[[gnu::noinline]] int FetchAndOpOnWindow(const void* origin_addr,
                                         void* result_addr,
                                         MPI_Datatype datatype, int target_rank,
                                         MPI_Aint target_disp, MPI_Op op,
                                         MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  if (w != nullptr &&
      TryFetchAndOpAtOnce(*w, origin_addr, result_addr, datatype, target_rank,
                          target_disp, op)) [[likely]] {
    return Served(*w, OpKind::kFetchAndOp, target_rank, 1, datatype);
  }
  return FetchAndOpFully(w, origin_addr, result_addr, datatype, target_rank,
                         target_disp, op, win);
}

[[gnu::noinline]] int CompareAndSwapFully(
    ManagedWindow* w, const void* origin_addr, const void* compare_addr,
    void* result_addr, MPI_Datatype datatype, int target_rank,
    MPI_Aint target_disp, MPI_Win win) {
  return FullPathOrMpi(
      w, win, target_rank, nullptr, {OpKind::kCompareAndSwap, 1, datatype},
      [&](ManagedWindow& w) {
        return CompareAndSwapFullPath(w, origin_addr, compare_addr, result_addr,
                                      datatype, target_rank, target_disp);
      },
      [&](MPI_Win used) {
        return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr,
                                     datatype, target_rank, target_disp, used);
      });
}

[[gnu::noinline]] int CompareAndSwapOnWindow(
    const void* origin_addr, const void* compare_addr, void* result_addr,
    MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  if (w != nullptr &&
      TryCompareAndSwapAtOnce(*w, origin_addr, compare_addr, result_addr,
                              datatype, target_rank, target_disp)) [[likely]] {
    return Served(*w, OpKind::kCompareAndSwap, target_rank, 1, datatype);
  }
  return CompareAndSwapFully(w, origin_addr, compare_addr, result_addr,
                             datatype, target_rank, target_disp, win);
}

// MPI_Accumulate past its word lane: the same arguments, so the wrapper
// ends in a jump here. One element of the same type on both sides may be
// queued (QueueAccumulate); the rest is applied at once, after what is
// queued, through the fast run where the sides allow it, else the full
// path.
[[gnu::noinline]] int AccumulateWithTypes(
    const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
    int target_rank, MPI_Aint target_disp, int target_count,
    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  if (w != nullptr && origin_datatype == target_datatype &&
      origin_count == target_count && op != MPI_NO_OP) {
    if (target_count == 1 &&
        QueueAccumulate(*w, target_datatype, op, target_rank, target_disp,
                        origin_addr)) {
      return Served(*w, OpKind::kAccumulate, target_rank, 1, target_datatype);
    }
    if (TryRunAtOnce(*w, target_datatype, target_count, op, target_rank,
                     target_disp, origin_addr, nullptr)) {
      return Served(*w, OpKind::kAccumulate, target_rank, target_count,
                    target_datatype);
    }
  }
  return AccumulateFully(
      w, win,
      AccumulateOf(origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, op),
      nullptr);
}

// Whether an MPI_Accumulate now is applied at once (not queued): nothing
// queued, and no burst armed or an epoch that never queues.
[[gnu::always_inline]] inline bool AccumulatesAtOnce(const ManagedWindow& w) {
  if (w.deferred().idle()) [[likely]]
    return true;
  const AccessEpoch epoch = w.epoch();
  return w.deferred().empty() && epoch != AccessEpoch::kLock &&
         epoch != AccessEpoch::kLockAll;
}

// ... for one element of the same type on both sides, past the lane's
// checks: six arguments, all in registers (the type, rank and displacement
// where MPI_Accumulate receives them), so the lane keeps few alive.
[[gnu::noinline]] int AccumulateOneElement(const void* origin_addr, MPI_Op op,
                                           MPI_Datatype datatype,
                                           int target_rank,
                                           MPI_Aint target_disp, MPI_Win win) {
  return AccumulateWithTypes(origin_addr, 1, datatype, target_rank, target_disp,
                             1, datatype, op, win);
}

}  // namespace

extern "C" {

int MPI_Accumulate(const void* origin_addr, int origin_count,
                   MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  // One word at once through the lane when nothing is queued or armed;
  // then arm, as QueueAccumulate would have before applying it, so the
  // burst that follows is queued. Epochs that never queue (fence, PSCW:
  // TryDeferAccumulate refuses them) take the lane while armed too.
  if (origin_count != 1 || target_count != 1 ||
      origin_datatype != target_datatype) [[unlikely]] {
    return AccumulateWithTypes(origin_addr, origin_count, origin_datatype,
                               target_rank, target_disp, target_count,
                               target_datatype, op, win);
  }
  ManagedWindow* w = FindManagedHome(win);  // a miss: AccumulateOneElement
  if (w != nullptr && AccumulatesAtOnce(*w) &&
      TryWordAccumulate<LaneMiss::kDecline>(
          *w, origin_datatype, op, target_rank, target_disp, origin_addr)) {
    w->deferred().Arm();
    return MPI_SUCCESS;  // a plain window: no profile
  }
  return AccumulateOneElement(origin_addr, op, origin_datatype, target_rank,
                              target_disp, win);
}

int MPI_Raccumulate(const void* origin_addr, int origin_count,
                    MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request* request) {
  return AccumulateWithRequest(
      win,
      AccumulateOf(origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, op,
                   Form::kRequest),
      request);
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count,
                       MPI_Datatype origin_datatype, void* result_addr,
                       int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  if (w != nullptr && result_addr != nullptr &&
      result_datatype == target_datatype && result_count == target_count &&
      (op == MPI_NO_OP ||
       (origin_datatype == target_datatype && origin_count == target_count)) &&
      TryRunAtOnce(*w, target_datatype, target_count, op, target_rank,
                   target_disp, origin_addr, result_addr)) {
    return Served(*w, OpKind::kGetAccumulate, target_rank, target_count,
                  target_datatype);
  }
  return AccumulateFully(
      w, win,
      GetAccumulateOf(origin_addr, origin_count, origin_datatype, result_addr,
                      result_count, result_datatype, target_rank, target_disp,
                      target_count, target_datatype, op),
      nullptr);
}

int MPI_Rget_accumulate(const void* origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request* request) {
  return AccumulateWithRequest(
      win,
      GetAccumulateOf(origin_addr, origin_count, origin_datatype, result_addr,
                      result_count, result_datatype, target_rank, target_disp,
                      target_count, target_datatype, op, Form::kRequest),
      request);
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr,
                     MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  ManagedWindow* w = FindManagedHome(win);  // a miss: FetchAndOpOnWindow
  if (w != nullptr && w->deferred().empty() &&
      TryWordFetchAndOp<LaneMiss::kInline>(*w, datatype, op, target_rank,
                                           target_disp, origin_addr,
                                           result_addr)) {
    return MPI_SUCCESS;  // a plain window: no profile
  }
  return FetchAndOpOnWindow(origin_addr, result_addr, datatype, target_rank,
                            target_disp, op, win);
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr,
                         void* result_addr, MPI_Datatype datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Win win) {
  ManagedWindow* w = FindManagedHome(win);  // a miss: CompareAndSwapOnWindow
  if (w != nullptr && w->deferred().empty() &&
      TryWordCompareAndSwap<LaneMiss::kInline>(*w, datatype, target_rank,
                                               target_disp, origin_addr,
                                               compare_addr, result_addr)) {
    return MPI_SUCCESS;  // a plain window: no profile
  }
  return CompareAndSwapOnWindow(origin_addr, compare_addr, result_addr,
                                datatype, target_rank, target_disp, win);
}

}  // extern "C"
