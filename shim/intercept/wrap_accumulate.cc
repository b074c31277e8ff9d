// The accumulate family's wrappers: each tries its inline lane, then makes
// one call into move/ (accumulate.h's Serve*: the queue, the fast run, the
// full path with Admit's route) and FinishCall ends the call with its
// verdict; on a window the shim does not manage MPI moves it.
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

// A call on `win` past its inline lane (or without one): on a managed
// window (`w`) one call into move/ (`serve`: accumulate.h's Serve*) gives
// the verdict and FinishCall ends the call with it; otherwise MPI moves it
// on `win`.
template <typename Serve, typename Mpi>
int ServeOrPass(ManagedWindow* w, MPI_Win win, int target, MPI_Request* request,
                Profiled what, Serve serve, Mpi mpi) {
  if (w == nullptr) {
    CountUnmanagedOp(win, what.kind, target, what.count, what.type);
    return mpi(win);
  }
  return FinishCall(*w, target, serve(*w), what, request, mpi);
}

// MPI_Accumulate, MPI_Get_accumulate and their request forms.
[[gnu::noinline]] int AccumulateOnWindow(MPI_Win win, const AccumulateCall& c,
                                         MPI_Request* request) {
  const bool fetching = c.fetching;
  const OpKind kind =
      request ? (fetching ? OpKind::kRgetAccumulate : OpKind::kRaccumulate)
              : (fetching ? OpKind::kGetAccumulate : OpKind::kAccumulate);
  return ServeOrPass(
      FindManaged(win), win, c.target, request,
      {kind, c.target_count, c.target_type},
      [&](ManagedWindow& w) { return ServeAccumulate(w, c); },
      [&](MPI_Win used) {
        if (!c.fetching) {
          return request
                     ? PMPI_Raccumulate(c.origin, c.origin_count, c.origin_type,
                                        c.target, c.disp, c.target_count,
                                        c.target_type, c.op, used, request)
                     : PMPI_Accumulate(c.origin, c.origin_count, c.origin_type,
                                       c.target, c.disp, c.target_count,
                                       c.target_type, c.op, used);
        }
        return request ? PMPI_Rget_accumulate(
                             c.origin, c.origin_count, c.origin_type, c.result,
                             c.result_count, c.result_type, c.target, c.disp,
                             c.target_count, c.target_type, c.op, used, request)
                       : PMPI_Get_accumulate(
                             c.origin, c.origin_count, c.origin_type, c.result,
                             c.result_count, c.result_type, c.target, c.disp,
                             c.target_count, c.target_type, c.op, used);
      });
}

// MPI_Fetch_and_op and MPI_Compare_and_swap past their word lanes; out of
// line with the wrappers' own arguments, so the lanes end in a jump here
// and need no stack frame.
[[gnu::noinline]] int FetchAndOpOnWindow(const void* origin_addr,
                                         void* result_addr,
                                         MPI_Datatype datatype, int target_rank,
                                         MPI_Aint target_disp, MPI_Op op,
                                         MPI_Win win) {
  return ServeOrPass(
      FindManaged(win), win, target_rank, nullptr,
      {OpKind::kFetchAndOp, 1, datatype},
      [&](ManagedWindow& w) {
        return ServeFetchAndOp(w, origin_addr, result_addr, datatype,
                               target_rank, target_disp, op);
      },
      [&](MPI_Win used) {
        return PMPI_Fetch_and_op(origin_addr, result_addr, datatype,
                                 target_rank, target_disp, op, used);
      });
}

[[gnu::noinline]] int CompareAndSwapOnWindow(
    const void* origin_addr, const void* compare_addr, void* result_addr,
    MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
  return ServeOrPass(
      FindManaged(win), win, target_rank, nullptr,
      {OpKind::kCompareAndSwap, 1, datatype},
      [&](ManagedWindow& w) {
        return ServeCompareAndSwap(w, origin_addr, compare_addr, result_addr,
                                   datatype, target_rank, target_disp);
      },
      [&](MPI_Win used) {
        return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr,
                                     datatype, target_rank, target_disp, used);
      });
}

// MPI_Accumulate past its word lane: the same arguments, so the wrapper
// ends in a jump here.
[[gnu::noinline]] int AccumulateWithTypes(
    const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
    int target_rank, MPI_Aint target_disp, int target_count,
    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return AccumulateOnWindow(
      win,
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
  // then arm, as ServeAccumulate would have before applying it, so the
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
  return AccumulateOnWindow(
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
  return AccumulateOnWindow(
      win,
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
  return AccumulateOnWindow(
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
