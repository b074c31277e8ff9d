// The accumulate family applied directly to node-local target memory:
// element-wise atomic as MPI requires, lock-free CPU atomics where the
// element fits a machine word, striped spin locks in the target's segment
// header otherwise, and plain loops when the origin holds an exclusive lock.
#ifndef RMASHIM_SHIM_ACCUMULATE_H_
#define RMASHIM_SHIM_ACCUMULATE_H_

#include <mpi.h>

#include "shim/element_ops.h"
#include "shim/window.h"

namespace rmashim {

struct AccumulateCall {
  bool fetching = false;  // Get_accumulate: old values go to `result`
  const void* origin = nullptr;
  int origin_count = 0;
  MPI_Datatype origin_type = MPI_DATATYPE_NULL;
  void* result = nullptr;
  int result_count = 0;
  MPI_Datatype result_type = MPI_DATATYPE_NULL;
  int target = 0;
  MPI_Aint disp = 0;
  int target_count = 0;
  MPI_Datatype target_type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};

// Outcome of trying the direct path: done (rc holds the MPI error code, 0
// on success) or the call must go to MPI.
enum class Route { kDone, kPassThrough };

// Applies `e` (element_ops.h) to `n` elements at byte `offset` of node-local
// target `t`, page by page under the stripe protocol of window.h (kStripes).
// `origin` and `result` are packed. With `exclusive` (the caller holds an
// exclusive lock on the target) no stripe is taken. Shared by the MPI
// wrappers and DART, so both agree on how an element is updated.
void ApplyRun(const ElementOp& e, bool exclusive, const Target& t,
              MPI_Aint offset, const std::byte* origin, std::byte* result,
              size_t n);

// Compare-and-swap of one element at byte `offset` of node-local target
// `t` under the same stripe protocol as ApplyRun (a shared stripe around the
// CPU atomic, an exclusive one around the plain fallback for a misaligned
// element; none with `exclusive`). Shared by the MPI wrappers and DART.
void ApplyCompareSwap(const CompareSwapOp& cas, bool exclusive, const Target& t,
                      MPI_Aint offset, const std::byte* origin,
                      const std::byte* compare, std::byte* result);

// Accumulate / Get_accumulate (result != nullptr).
Route AccumulateDirect(ManagedWindow& w, const AccumulateCall& call, int* rc);

Route FetchAndOpDirect(ManagedWindow& w, const void* origin, void* result,
                       MPI_Datatype type, int target, MPI_Aint disp,
                       MPI_Op op, int* rc);

Route CompareAndSwapDirect(ManagedWindow& w, const void* origin,
                           const void* compare, void* result,
                           MPI_Datatype type, int target, MPI_Aint disp,
                           int* rc);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_ACCUMULATE_H_
