// Put and get on a managed window past their inline path (or without
// one: profiled windows, the request forms): the fast test once, then
// every check in MPICH's order, the admission and its route (admission.h,
// routing.h), and one copy to or from a node-local target (through
// cross-memory attach for MPI_Win_create memory of another process), the
// target's agent's RMA or element updates, or MPI's with the reason.
#ifndef RMASHIM_SHIM_MOVE_TRANSFER_H_
#define RMASHIM_SHIM_MOVE_TRANSFER_H_

#include <mpi.h>

#include "shim/move/access.h"
#include "shim/types/datatype.h"
#include "shim/windows/verdict.h"
#include "shim/windows/window.h"

namespace rmashim {

enum class Direction { kPut, kGet };

struct Transfer {
  Direction dir;
  void* origin;
  int origin_count;
  MPI_Datatype origin_type;
  int target;
  MPI_Aint disp;
  int target_count;
  MPI_Datatype target_type;
};

// The common case in a few instructions, inlined into MPI_Put and MPI_Get:
// one predefined type on both sides, equal counts, a node-local target
// mapped here in an epoch that gives access. Sets the target address and
// `*bytes`; false sends the call through ServeTransfer's full checks
// (everything else, and every error).
// `ranks`: the targets it may serve (DirectWordBelow).
[[gnu::always_inline]] inline bool FastAddress(
    const ManagedWindow& w, int ranks, const void* origin, int count,
    MPI_Datatype origin_type, int target, MPI_Aint disp, int target_count,
    MPI_Datatype target_type, MPI_Aint* bytes, std::byte** addr) {
  if (origin_type != target_type || count != target_count ||
      !IsBuiltinType(origin_type) || origin == nullptr) {
    return false;
  }
  // Negative and zero counts, and zero-size types, end up <= 0.
  *bytes = static_cast<MPI_Aint>(count) * BuiltinTypeSize(origin_type);
  return *bytes > 0 && DirectWordBelow(w, ranks, target, disp, *bytes, addr);
}

// A put or get of `form` on `w` (its full path; the inline path in
// intercept/wrap_rma.cc serves the common case before it).
Verdict ServeTransfer(ManagedWindow& w, const Transfer& x, Form form);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_MOVE_TRANSFER_H_
