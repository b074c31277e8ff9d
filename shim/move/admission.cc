// Admit (admission.h): the checks and the choice between the shim's own
// path and MPI's, for put, get and the accumulate family, argued here.
#include "shim/move/admission.h"

#include "shim/move/access.h"
#include "shim/process/runtime.h"

namespace rmashim {
namespace {

// The largest put or get a remote target's agent moves (Admit).
constexpr MPI_Aint kAgentCopyBytes = MPI_Aint{16} << 20;

// Operations this process passed to MPI for `target` earlier in the epoch
// complete before a direct accumulate to it: MPI orders accumulates from one
// origin to the same location (accumulate_ordering, MPI-3 11.7.2).
int CompletePassedThrough(ManagedWindow& w, int target) {
  StateGuard guard(w.state_mutex());
  if (!w.lock_state(target).passed_to_mpi()) return MPI_SUCCESS;
  w.lock_state(target).mpi_pending = MpiPending::kNothing;
  return PMPI_Win_flush(target, w.app_win());
}

// Admitted, once the operations passed to MPI before are complete.
std::optional<Verdict> AdmittedAfterPassedThrough(ManagedWindow& w,
                                                  int target) {
  if (const int rc = CompletePassedThrough(w, target)) {
    return Verdict::Raised(rc);  // MPI_Win_flush on the window raised it
  }
  return std::nullopt;
}

}  // namespace

bool HoldsExclusive(const ManagedWindow& w, int target) {
  return w.epoch() == AccessEpoch::kLock &&
         w.lock_state(target).mode == LockMode::kExclusive;
}

std::optional<Verdict> Admit(ManagedWindow& w, Access access, Form form,
                             int target, MPI_Aint disp,
                             const Layout& target_layout,
                             MPI_Aint origin_bytes) {
  if (const int rc = CheckTargetArgs(w, target, disp)) {
    return Verdict::Error(rc);
  }
  if (target == MPI_PROC_NULL) return Verdict::Served();
  if (!FormAllowedInEpoch(w, form)) return Verdict::Error(MPI_ERR_RMA_SYNC);
  const EpochAccess epoch = CheckEpoch(w, target);
  if (epoch == EpochAccess::kNoEpoch) return Verdict::Error(MPI_ERR_RMA_SYNC);
  // MPI's PSCW on a window spanning nodes: an accumulate goes to MPI at
  // once; a put or get after its own checks, below.
  if (epoch == EpochAccess::kPassThrough && access == Access::kUpdate) {
    return Verdict::PassThrough(Fallback::kMultiNodeWindow);
  }
  if (access == Access::kCopy && origin_bytes != target_layout.bytes) {
    return Verdict::Error(MPI_ERR_TYPE);  // type signatures must match
  }
  const Target& t = w.target(target);
  MPI_Aint offset;
  if (!FitsInTarget(t, disp, target_layout, &offset)) {
    return Verdict::Error(MPI_ERR_RMA_RANGE);
  }
  if (access == Access::kCopy) {
    // Zero counts and zero-size types are legal no-ops on every target;
    // node-local targets are copied to or from directly in every epoch the
    // shim serves, also on windows spanning nodes.
    if (target_layout.bytes == 0) return Verdict::Served();
    if (epoch == EpochAccess::kPassThrough) {
      return Verdict::PassThrough(Fallback::kMultiNodeWindow);
    }
    if (t.node_local()) return std::nullopt;
    // A remote target's agent (agent.h) moves it in passive epochs, as it
    // applies accumulates (below), so the target need not call MPI for it;
    // MPI orders no put or get against another, so what went to MPI before
    // need not complete first. Up to kAgentCopyBytes: as one RMA operation
    // of the agents' transport where both layouts are dense (agent_rma.cc),
    // else as updates, packed and in requests of at most 16 MiB
    // (agent_origin.cc); MPI moves larger ones, and in fence and PSCW
    // epochs every one.
    if (w.agent_served() && IsPassive(w.epoch()) &&
        target_layout.bytes <= kAgentCopyBytes) {
      return std::nullopt;
    }
    return Verdict::PassThrough(Fallback::kMultiNodeWindow);
  }
  // On a single-node window every origin honours the stripes, also on
  // MPI_Win_create memory of another process, which is updated through
  // cross-memory attach under them.
  if (w.locks_in_shm()) return std::nullopt;
  // A window spanning nodes: remote origins' accumulates are applied by MPI,
  // which cannot be atomic with our CPU atomics, so the family goes to MPI,
  // except where no other origin can touch the target during this epoch.
  // That is so while this process holds MPI's exclusive lock on it (with or
  // without MPI_MODE_NOCHECK): no other process holds a lock on the target
  // meanwhile (MPI-3 11.5.3), an active-target epoch on the window at the
  // same time is erroneous (11.5), and so are the target's own local stores
  // conflicting with the epoch (11.7). Updates of node-local memory are then
  // atomic by exclusion, as under an exclusive lock on a single-node window
  // (plain loops, no stripes).
  if (HoldsExclusive(w, target) && t.node_local()) {
    return AdmittedAfterPassedThrough(w, target);
  }
  // With the agent (agent.h) every origin's accumulate reaches the target
  // through the stripes: node-local origins' directly, remote ones' through
  // the target's agent. In passive epochs; and where the shim matches
  // posts (agent_active_target) in fence epochs, whose fences wait until
  // the agents have applied them (AgentCompleteFence), and in MPI's PSCW,
  // whose waits receive each origin's count of them (AgentCompletePscw). An
  // epoch of another kind on the window while another origin holds one of these
  // on the same target is erroneous (MPI-3 11.5).
  if (!w.agent_served()) {
    return Verdict::PassThrough(Fallback::kMultiNodeWindow);
  }
  const AccessEpoch now = w.epoch();
  if (IsPassive(now)) return AdmittedAfterPassedThrough(w, target);
  // In an active-target epoch nothing can complete MPI's accumulates before
  // its end (MPI_Win_flush is erroneous there). MPI orders one origin's
  // accumulates to a location, so once this epoch handed one for `target`
  // to MPI (a layout the shim does not flatten), the rest follow it there.
  if (w.agent_counts_epoch() &&
      !Includes(w.lock_state(target).mpi_pending, MpiPending::kUpdates)) {
    return std::nullopt;
  }
  return Verdict::PassThrough(Fallback::kMultiNodeWindow);
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
  if (const auto ends =
          Admit(w, access, form, target, disp, layout, layout.bytes)) {
    return *ends;
  }
  return Verdict::PassThrough(Fallback::kLargeCount);
}

}  // namespace rmashim
