// The one admission of a data-movement call on a managed window: put, get
// and the accumulate family ask Admit, after checking their own datatypes
// and buffers, whether the shim moves the data itself, and which way
// (routing.h), or the call ends here (an error in MPICH's order, a no-op,
// or MPI's with the reason). The inline fast paths (access.h's
// DirectWordBelow, word_lane.h) only ever say yes where Admit would.
#ifndef RMASHIM_SHIM_MOVE_ADMISSION_H_
#define RMASHIM_SHIM_MOVE_ADMISSION_H_

#include <mpi.h>

#include <optional>

#include "shim/move/access.h"
#include "shim/move/routing.h"
#include "shim/types/datatype.h"
#include "shim/windows/verdict.h"
#include "shim/windows/window.h"

namespace rmashim {

// Whether this process holds an exclusive lock on `target` in its current
// epoch (then no other origin can touch the target's memory: updates need
// no stripes).
bool HoldsExclusive(const ManagedWindow& w, int target);

// Admit's answer: the call's verdict, or the way the shim moves it.
struct Admission {
  std::optional<Verdict> ends;
  Route route;  // when !ends: kInPlace, kCrossMemory or kAgent
};

// The admission of a call of `form` to `target` at `disp` laid out as
// `target_layout` (for kCopy, `origin_bytes` is the origin side's size,
// which must equal the target's: MPI-3 11.3). It ends with MPI_ERR_RANK /
// MPI_ERR_DISP, a no-op (MPI_PROC_NULL, no bytes), MPI_ERR_RMA_SYNC outside
// an epoch that gives access (for a request-based call, outside a passive
// one), MPI_ERR_TYPE, MPI_ERR_RMA_RANGE (for remote targets too: MPI would
// corrupt memory), or MPI's where RouteCall says so (routing.cc argues
// when). Otherwise the route, once this process's operations that went to
// MPI before are complete where the route needs them to be.
Admission Admit(ManagedWindow& w, Access access, Form form, int target,
                MPI_Aint disp, const Layout& target_layout,
                MPI_Aint origin_bytes = 0);

// The same for MPI-4's large-count forms with a count beyond int
// (wrap_large_count.cc): `count` x `type` at the target. The shim checks
// them as Admit does, then MPI moves them (Fallback::kLargeCount; to
// MPI_PROC_NULL too, so that MPI checks the datatypes).
Verdict AdmitLargeCount(ManagedWindow& w, Access access, Form form, int target,
                        MPI_Aint disp, MPI_Count count, MPI_Datatype type);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_MOVE_ADMISSION_H_
