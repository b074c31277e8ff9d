// Admit (admission.h): the checks of put, get and the accumulate family
// in MPICH's order, then the route (routing.h) from the facts of the
// window, the epoch and the target, acted on.
#include "shim/move/admission.h"

#include "shim/move/access.h"
#include "shim/process/runtime.h"

namespace rmashim {
namespace {

// Operations this process passed to MPI for `target` earlier in the epoch
// complete before a direct accumulate to it: MPI orders accumulates from one
// origin to the same location (accumulate_ordering, MPI-3 11.7.2).
int CompletePassedThrough(ManagedWindow& w, int target) {
  StateGuard guard(w.state_mutex());
  if (!w.lock_state(target).passed_to_mpi()) return MPI_SUCCESS;
  w.lock_state(target).mpi_pending = MpiPending::kNothing;
  return PMPI_Win_flush(target, w.app_win());
}

// What routing needs of `w`'s kind, its epoch and admitted `target`. The
// target's lock state is read only where the route depends on it: its
// lock mode for updates, and its marks of what went to MPI only in the
// active-target epochs of a window the agents serve, where no other thread
// of this process can flush (MPI_Win_flush is erroneous there). In passive
// epochs another thread's flush rewrites those marks under the window's
// state mutex (CompletePassedThrough reads them under it).
RouteFacts FactsOf(const ManagedWindow& w, Access access, int target,
                   EpochAccess epoch, MPI_Aint bytes) {
  const Target& t = w.target(target);
  const bool update = access == Access::kUpdate;
  const bool passive = IsPassive(w.epoch());
  const bool counted_epoch = update && !w.locks_in_shm() && w.agent_served() &&
                             w.agent_counts_epoch() && !passive;
  return {.access = access,
          .single_node = w.locks_in_shm(),
          .agent_served = w.agent_served(),
          .agent_counts_epoch = w.agent_counts_epoch(),
          .passive = passive,
          .mpi_judges_target = epoch == EpochAccess::kPassThrough,
          .holds_exclusive = update && HoldsExclusive(w, target),
          .mpi_has_updates =
              counted_epoch &&
              Includes(w.lock_state(target).mpi_pending, MpiPending::kUpdates),
          .node_local = t.node_local(),
          .cross_memory = t.node_local() && t.pid != 0,
          .bytes = bytes};
}

Admission Ends(Verdict v) { return {.ends = v, .route = {}}; }

// The route acted on: a no-op, MPI's, or the shim's way once what went to
// MPI before is complete where the route needs it.
Admission Follow(ManagedWindow& w, int target, const Route& route) {
  if (route.path == Path::kNoOp) return Ends(Verdict::Served());
  if (route.path == Path::kMpi) return Ends(Verdict::PassThrough(route.why));
  if (route.after_mpi_completes) {
    if (const int rc = CompletePassedThrough(w, target)) {
      return Ends(Verdict::Raised(rc));  // MPI_Win_flush raised it
    }
  }
  return {.ends = std::nullopt, .route = route};
}

}  // namespace

bool HoldsExclusive(const ManagedWindow& w, int target) {
  return w.epoch() == AccessEpoch::kLock &&
         w.lock_state(target).mode == LockMode::kExclusive;
}

Admission Admit(ManagedWindow& w, Access access, Form form, int target,
                MPI_Aint disp, const Layout& target_layout,
                MPI_Aint origin_bytes) {
  if (const int rc = CheckTargetArgs(w, target, disp)) {
    return Ends(Verdict::Error(rc));
  }
  if (target == MPI_PROC_NULL) return Ends(Verdict::Served());
  if (!FormAllowedInEpoch(w, form)) {
    return Ends(Verdict::Error(MPI_ERR_RMA_SYNC));
  }
  const EpochAccess epoch = CheckEpoch(w, target);
  if (epoch == EpochAccess::kNoEpoch) {
    return Ends(Verdict::Error(MPI_ERR_RMA_SYNC));
  }
  const Route route =
      RouteCall(FactsOf(w, access, target, epoch, target_layout.bytes));
  // MPI's PSCW on a window spanning nodes judges an accumulate to a target
  // it owns with its own checks; a put or get after the shim's, below.
  if (epoch == EpochAccess::kPassThrough && access == Access::kUpdate) {
    return Ends(Verdict::PassThrough(route.why));
  }
  if (access == Access::kCopy && origin_bytes != target_layout.bytes) {
    return Ends(Verdict::Error(MPI_ERR_TYPE));  // type signatures must match
  }
  MPI_Aint offset;
  if (!FitsInTarget(w.target(target), disp, target_layout, &offset)) {
    return Ends(Verdict::Error(MPI_ERR_RMA_RANGE));
  }
  return Follow(w, target, route);
}

Verdict AdmitLargeCount(ManagedWindow& w, Access access, Form form, int target,
                        MPI_Aint disp, MPI_Count count, MPI_Datatype type) {
  if (const int rc = CheckTargetArgs(w, target, disp)) {
    return Verdict::Error(rc);
  }
  if (target == MPI_PROC_NULL)
    return Verdict::PassThrough(Fallback::kLargeCount);
  Layout layout;
  if (const int rc = DescribeLayout(count, type, &layout)) {
    return Verdict::Error(rc);
  }
  if (const Admission a =
          Admit(w, access, form, target, disp, layout, layout.bytes);
      a.ends) {
    return *a.ends;
  }
  return Verdict::PassThrough(Fallback::kLargeCount);
}

}  // namespace rmashim
