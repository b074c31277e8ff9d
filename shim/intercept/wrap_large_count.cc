// MPI-4's large-count RMA calls (MPI_Put_c and the rest). Counts that fit
// an int take the int-count wrappers, so they are served like any other
// call. Larger ones go to MPI on the window's MPI window; on a managed
// window the shim admits them first (AdmitLargeCount: the target, the
// epoch and the range, which MPI would not check there: the shim keeps a
// single-node window's MPI window in a lock_all epoch), and FinishCall
// counts them with their reason and notes the target, so the next flush,
// unlock, fence or complete completes them (passthrough.h). Without the
// note the shim's flushes, which call MPI only for targets it handed
// operations to, would return before they were done.
#include <mpi.h>

#include <climits>

#include "shim/base/large_count_calls.h"
#include "shim/intercept/finish_call.h"
#include "shim/move/admission.h"
#include "shim/process/runtime.h"
#include "shim/profile/profile.h"

using namespace rmashim;  // NOLINT: wrappers below only forward

namespace {

bool FitsInt(MPI_Count a, MPI_Count b = 0, MPI_Count c = 0) {
  return a <= INT_MAX && b <= INT_MAX && c <= INT_MAX;
}

// A call too large for the int forms of `kind`, reaching `count` x `type`
// at `disp` of `target`: MPI's, after the shim's admission on a managed
// window. `call` takes the MPI window to use.
template <typename Call>
int LargeCall(MPI_Win win, OpKind kind, Access access, int target,
              MPI_Aint disp, MPI_Count count, MPI_Datatype type,
              MPI_Request* request, Call call) {
  if (!HasLargeCountCalls()) return RaiseOnWindow(win, MPI_ERR_COUNT);
  ManagedWindow* w = FindManaged(win);
  if (w == nullptr) {
    CountUnmanagedOp(win, kind, target, count, type);
    return call(win);
  }
  const Form form = request != nullptr ? Form::kRequest : Form::kPlain;
  return FinishCall(
      *w, target, AdmitLargeCount(*w, access, form, target, disp, count, type),
      {kind, count, type}, request, call);
}

}  // namespace

extern "C" {

int MPI_Put_c(const void* origin_addr, MPI_Count origin_count,
              MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win) {
  if (FitsInt(origin_count, target_count)) {
    return MPI_Put(origin_addr, static_cast<int>(origin_count), origin_datatype,
                   target_rank, target_disp, static_cast<int>(target_count),
                   target_datatype, win);
  }
  return LargeCall(win, OpKind::kPut, Access::kCopy, target_rank, target_disp,
                   target_count, target_datatype, nullptr, [&](MPI_Win used) {
                     return PMPI_Put_c(origin_addr, origin_count,
                                       origin_datatype, target_rank,
                                       target_disp, target_count,
                                       target_datatype, used);
                   });
}

int MPI_Get_c(void* origin_addr, MPI_Count origin_count,
              MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win) {
  if (FitsInt(origin_count, target_count)) {
    return MPI_Get(origin_addr, static_cast<int>(origin_count), origin_datatype,
                   target_rank, target_disp, static_cast<int>(target_count),
                   target_datatype, win);
  }
  return LargeCall(win, OpKind::kGet, Access::kCopy, target_rank, target_disp,
                   target_count, target_datatype, nullptr, [&](MPI_Win used) {
                     return PMPI_Get_c(origin_addr, origin_count,
                                       origin_datatype, target_rank,
                                       target_disp, target_count,
                                       target_datatype, used);
                   });
}

int MPI_Rput_c(const void* origin_addr, MPI_Count origin_count,
               MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win,
               MPI_Request* request) {
  if (FitsInt(origin_count, target_count)) {
    return MPI_Rput(origin_addr, static_cast<int>(origin_count),
                    origin_datatype, target_rank, target_disp,
                    static_cast<int>(target_count), target_datatype, win,
                    request);
  }
  return LargeCall(win, OpKind::kRput, Access::kCopy, target_rank, target_disp,
                   target_count, target_datatype, request, [&](MPI_Win used) {
                     return PMPI_Rput_c(origin_addr, origin_count,
                                        origin_datatype, target_rank,
                                        target_disp, target_count,
                                        target_datatype, used, request);
                   });
}

int MPI_Rget_c(void* origin_addr, MPI_Count origin_count,
               MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win,
               MPI_Request* request) {
  if (FitsInt(origin_count, target_count)) {
    return MPI_Rget(origin_addr, static_cast<int>(origin_count),
                    origin_datatype, target_rank, target_disp,
                    static_cast<int>(target_count), target_datatype, win,
                    request);
  }
  return LargeCall(win, OpKind::kRget, Access::kCopy, target_rank, target_disp,
                   target_count, target_datatype, request, [&](MPI_Win used) {
                     return PMPI_Rget_c(origin_addr, origin_count,
                                        origin_datatype, target_rank,
                                        target_disp, target_count,
                                        target_datatype, used, request);
                   });
}

int MPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count,
                     MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Count target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  if (FitsInt(origin_count, target_count)) {
    return MPI_Accumulate(origin_addr, static_cast<int>(origin_count),
                          origin_datatype, target_rank, target_disp,
                          static_cast<int>(target_count), target_datatype, op,
                          win);
  }
  return LargeCall(
      win, OpKind::kAccumulate, Access::kUpdate, target_rank, target_disp,
      target_count, target_datatype, nullptr, [&](MPI_Win used) {
        return PMPI_Accumulate_c(origin_addr, origin_count, origin_datatype,
                                 target_rank, target_disp, target_count,
                                 target_datatype, op, used);
      });
}

int MPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count,
                      MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                      MPI_Request* request) {
  if (FitsInt(origin_count, target_count)) {
    return MPI_Raccumulate(origin_addr, static_cast<int>(origin_count),
                           origin_datatype, target_rank, target_disp,
                           static_cast<int>(target_count), target_datatype, op,
                           win, request);
  }
  return LargeCall(
      win, OpKind::kRaccumulate, Access::kUpdate, target_rank, target_disp,
      target_count, target_datatype, request, [&](MPI_Win used) {
        return PMPI_Raccumulate_c(origin_addr, origin_count, origin_datatype,
                                  target_rank, target_disp, target_count,
                                  target_datatype, op, used, request);
      });
}

int MPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                         MPI_Datatype origin_datatype, void* result_addr,
                         MPI_Count result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, MPI_Datatype target_datatype,
                         MPI_Op op, MPI_Win win) {
  if (FitsInt(origin_count, result_count, target_count)) {
    return MPI_Get_accumulate(
        origin_addr, static_cast<int>(origin_count), origin_datatype,
        result_addr, static_cast<int>(result_count), result_datatype,
        target_rank, target_disp, static_cast<int>(target_count),
        target_datatype, op, win);
  }
  return LargeCall(
      win, OpKind::kGetAccumulate, Access::kUpdate, target_rank, target_disp,
      target_count, target_datatype, nullptr, [&](MPI_Win used) {
        return PMPI_Get_accumulate_c(origin_addr, origin_count, origin_datatype,
                                     result_addr, result_count, result_datatype,
                                     target_rank, target_disp, target_count,
                                     target_datatype, op, used);
      });
}

int MPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void* result_addr,
                          MPI_Count result_count, MPI_Datatype result_datatype,
                          int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype,
                          MPI_Op op, MPI_Win win, MPI_Request* request) {
  if (FitsInt(origin_count, result_count, target_count)) {
    return MPI_Rget_accumulate(
        origin_addr, static_cast<int>(origin_count), origin_datatype,
        result_addr, static_cast<int>(result_count), result_datatype,
        target_rank, target_disp, static_cast<int>(target_count),
        target_datatype, op, win, request);
  }
  return LargeCall(
      win, OpKind::kRgetAccumulate, Access::kUpdate, target_rank, target_disp,
      target_count, target_datatype, request, [&](MPI_Win used) {
        return PMPI_Rget_accumulate_c(
            origin_addr, origin_count, origin_datatype, result_addr,
            result_count, result_datatype, target_rank, target_disp,
            target_count, target_datatype, op, used, request);
      });
}

}  // extern "C"
