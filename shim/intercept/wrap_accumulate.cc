// The accumulate family's wrappers: each tries its inline lane, then takes
// the full path, where Admit (shim/move/admission.h) decides: served in
// shared memory or by a remote target's agent (shim/move/accumulate.cc), an
// error, or passed to MPI with the reason; FinishCall ends the call.
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

// The full path of a call on `win` (`w`: its managed window, or null): on
// a managed window queued accumulates are applied first, then `direct`
// gives the verdict (its first step is the inline run of accumulate.h) and
// FinishCall ends the call with it; otherwise MPI moves it on `win`.
template <typename Direct, typename Mpi>
int FullPath(ManagedWindow* w, MPI_Win win, int target, MPI_Request* request,
             Profiled what, Direct direct, Mpi mpi) {
  if (w == nullptr) {
    CountUnmanagedOp(win, what.kind, target, what.count, what.type);
    return mpi(win);
  }
  ApplyDeferred(*w);
  return FinishCall(*w, target, direct(*w), what, request, mpi);
}

// A call the inline fast path served (TryFastRun, TryFastCompareSwap).
int Served(const ManagedWindow& w, OpKind kind, int target, int count,
           MPI_Datatype type) {
  return w.profile() != nullptr ? CountServed(w, kind, target, count, type)
                                : MPI_SUCCESS;
}

[[gnu::noinline]] int AccumulateFullPath(ManagedWindow* w,
                                         const AccumulateCall& c, MPI_Win win,
                                         MPI_Request* request) {
  const bool fetching = c.fetching;
  const OpKind kind =
      request ? (fetching ? OpKind::kRgetAccumulate : OpKind::kRaccumulate)
              : (fetching ? OpKind::kGetAccumulate : OpKind::kAccumulate);
  return FullPath(
      w, win, c.target, request, {kind, c.target_count, c.target_type},
      [&](ManagedWindow& w) { return AccumulateDirect(w, c); },
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

// The fetch_and_op and compare_and_swap calls their fast paths did not
// serve; out of line, so the fast paths need no stack frame.
[[gnu::noinline]] int FetchAndOpFullPath(ManagedWindow* w,
                                         const void* origin_addr,
                                         void* result_addr,
                                         MPI_Datatype datatype, int target_rank,
                                         MPI_Aint target_disp, MPI_Op op,
                                         MPI_Win win) {
  return FullPath(
      w, win, target_rank, nullptr, {OpKind::kFetchAndOp, 1, datatype},
      [&](ManagedWindow& w) {
        return FetchAndOpDirect(w, origin_addr, result_addr, datatype,
                                target_rank, target_disp, op);
      },
      [&](MPI_Win used) {
        return PMPI_Fetch_and_op(origin_addr, result_addr, datatype,
                                 target_rank, target_disp, op, used);
      });
}

[[gnu::noinline]] int CompareAndSwapFullPath(
    ManagedWindow* w, const void* origin_addr, const void* compare_addr,
    void* result_addr, MPI_Datatype datatype, int target_rank,
    MPI_Aint target_disp, MPI_Win win) {
  return FullPath(
      w, win, target_rank, nullptr, {OpKind::kCompareAndSwap, 1, datatype},
      [&](ManagedWindow& w) {
        return CompareAndSwapDirect(w, origin_addr, compare_addr, result_addr,
                                    datatype, target_rank, target_disp);
      },
      [&](MPI_Win used) {
        return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr,
                                     datatype, target_rank, target_disp, used);
      });
}

// What the word lanes inlined into MPI_Fetch_and_op and
// MPI_Compare_and_swap did not serve: queued accumulates applied first,
// then the word lane once more (on windows the inline lane does not take:
// found off the home slot, profiled), the inline run of accumulate.h (any
// builtin type), then the full path. Out of line with the wrappers' own
// arguments, so the lanes end in a jump here. (A miss of the inline run
// tries it once more as the full path's first step, which serves callers
// that come without trying it; that costs only on the way to MPI or to
// the full checks.)
[[gnu::noinline]] int FetchAndOpOffLane(const void* origin_addr,
                                        void* result_addr,
                                        MPI_Datatype datatype, int target_rank,
                                        MPI_Aint target_disp, MPI_Op op,
                                        MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  if (w != nullptr) {
    ApplyDeferred(*w);
    if (TryWordFetchAndOp(*w, datatype, op, target_rank, target_disp,
                          origin_addr, result_addr)) {
      return MPI_SUCCESS;
    }
    if (result_addr != nullptr &&
        TryFastRun(*w, datatype, 1, op, target_rank, target_disp, origin_addr,
                   result_addr)) {
      return Served(*w, OpKind::kFetchAndOp, target_rank, 1, datatype);
    }
  }
  return FetchAndOpFullPath(w, origin_addr, result_addr, datatype, target_rank,
                            target_disp, op, win);
}

[[gnu::noinline]] int CompareAndSwapOffLane(
    const void* origin_addr, const void* compare_addr, void* result_addr,
    MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  if (w != nullptr) {
    ApplyDeferred(*w);
    if (TryWordCompareAndSwap(*w, datatype, target_rank, target_disp,
                              origin_addr, compare_addr, result_addr)) {
      return MPI_SUCCESS;
    }
    if (TryFastCompareSwap(*w, datatype, target_rank, target_disp, origin_addr,
                           compare_addr, result_addr)) {
      return Served(*w, OpKind::kCompareAndSwap, target_rank, 1, datatype);
    }
  }
  return CompareAndSwapFullPath(w, origin_addr, compare_addr, result_addr,
                                datatype, target_rank, target_disp, win);
}

// What the word lane inlined into MPI_Accumulate did not serve. One
// element of the same type on both sides in a passive epoch: the first
// since the last synchronization arms the queue (deferred_atomics.h) and is
// applied at once, the burst after it is queued where TryDeferAccumulate
// takes it. Everything else is applied at once: after what is queued,
// through the inline run of accumulate.h where it applies, else the full
// path. Out of line with the wrapper's own arguments, so the lane ends in a
// jump.
[[gnu::noinline]] int AccumulateOffLane(
    const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
    int target_rank, MPI_Aint target_disp, int target_count,
    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  if (w != nullptr && target_count == 1 && origin_count == 1 &&
      origin_datatype == target_datatype && op != MPI_NO_OP) {
    if (!w->deferred().armed()) {
      w->deferred().Arm();
    } else if (TryDeferAccumulate(*w, target_datatype, op, target_rank,
                                  target_disp, origin_addr)) {
      return Served(*w, OpKind::kAccumulate, target_rank, 1, target_datatype);
    }
  }
  if (w != nullptr) {
    ApplyDeferred(*w);
    if (origin_datatype == target_datatype && origin_count == target_count &&
        op != MPI_NO_OP &&
        TryFastRun(*w, target_datatype, target_count, op, target_rank,
                   target_disp, origin_addr, nullptr)) {
      return Served(*w, OpKind::kAccumulate, target_rank, target_count,
                    target_datatype);
    }
  }
  return AccumulateFullPath(
      w,
      AccumulateOf(origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, op),
      win, nullptr);
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
[[gnu::noinline]] int AccumulateOneOffLane(const void* origin_addr, MPI_Op op,
                                           MPI_Datatype datatype,
                                           int target_rank,
                                           MPI_Aint target_disp, MPI_Win win) {
  return AccumulateOffLane(origin_addr, 1, datatype, target_rank, target_disp,
                           1, datatype, op, win);
}

}  // namespace

extern "C" {

int MPI_Accumulate(const void* origin_addr, int origin_count,
                   MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  // One word at once through the lane when nothing is queued or armed;
  // then arm, as AccumulateOffLane would have before applying it, so the
  // burst that follows is queued. Epochs that never queue (fence, PSCW:
  // TryDeferAccumulate refuses them) take the lane while armed too.
  if (origin_count != 1 || target_count != 1 ||
      origin_datatype != target_datatype) [[unlikely]] {
    return AccumulateOffLane(origin_addr, origin_count, origin_datatype,
                             target_rank, target_disp, target_count,
                             target_datatype, op, win);
  }
  ManagedWindow* w = FindManagedHome(win);  // a miss: AccumulateOneOffLane
  if (w != nullptr && AccumulatesAtOnce(*w) &&
      TryWordAccumulate<LaneMiss::kDecline>(
          *w, origin_datatype, op, target_rank, target_disp, origin_addr)) {
    w->deferred().Arm();
    return MPI_SUCCESS;  // a plain window: no profile
  }
  return AccumulateOneOffLane(origin_addr, op, origin_datatype, target_rank,
                              target_disp, win);
}

int MPI_Raccumulate(const void* origin_addr, int origin_count,
                    MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request* request) {
  return AccumulateFullPath(
      FindManaged(win),
      AccumulateOf(origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, op,
                   Form::kRequest),
      win, request);
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count,
                       MPI_Datatype origin_datatype, void* result_addr,
                       int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  ManagedWindow* w = FindManaged(win);
  if (w != nullptr) ApplyDeferred(*w);
  if (w != nullptr && result_addr != nullptr &&
      result_datatype == target_datatype && result_count == target_count &&
      (op == MPI_NO_OP ||
       (origin_datatype == target_datatype && origin_count == target_count)) &&
      TryFastRun(*w, target_datatype, target_count, op, target_rank,
                 target_disp, origin_addr, result_addr)) {
    return Served(*w, OpKind::kGetAccumulate, target_rank, target_count,
                  target_datatype);
  }
  return AccumulateFullPath(
      w,
      GetAccumulateOf(origin_addr, origin_count, origin_datatype, result_addr,
                      result_count, result_datatype, target_rank, target_disp,
                      target_count, target_datatype, op),
      win, nullptr);
}

int MPI_Rget_accumulate(const void* origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request* request) {
  return AccumulateFullPath(
      FindManaged(win),
      GetAccumulateOf(origin_addr, origin_count, origin_datatype, result_addr,
                      result_count, result_datatype, target_rank, target_disp,
                      target_count, target_datatype, op, Form::kRequest),
      win, request);
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr,
                     MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  ManagedWindow* w = FindManagedHome(win);  // a miss: FetchAndOpOffLane
  if (w != nullptr && w->deferred().empty() &&
      TryWordFetchAndOp<LaneMiss::kInline>(*w, datatype, op, target_rank,
                                           target_disp, origin_addr,
                                           result_addr)) {
    return MPI_SUCCESS;  // a plain window: no profile
  }
  return FetchAndOpOffLane(origin_addr, result_addr, datatype, target_rank,
                           target_disp, op, win);
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr,
                         void* result_addr, MPI_Datatype datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Win win) {
  ManagedWindow* w = FindManagedHome(win);  // a miss: CompareAndSwapOffLane
  if (w != nullptr && w->deferred().empty() &&
      TryWordCompareAndSwap<LaneMiss::kInline>(*w, datatype, target_rank,
                                               target_disp, origin_addr,
                                               compare_addr, result_addr)) {
    return MPI_SUCCESS;  // a plain window: no profile
  }
  return CompareAndSwapOffLane(origin_addr, compare_addr, result_addr, datatype,
                               target_rank, target_disp, win);
}

}  // extern "C"
