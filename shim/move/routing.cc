// RouteCall (routing.h): the choice between the shim's own ways to a
// target's memory and MPI's, for put, get and the accumulate family,
// argued here.
#include "shim/move/routing.h"

namespace rmashim {
namespace {

Route ToMpi() {
  return {.path = Path::kMpi, .why = Fallback::kMultiNodeWindow};
}

// The shim's own way to the target: node-local memory in place or through
// cross-memory attach, a remote target through its agent (never without
// one: MPI's then).
Route ByReach(const RouteFacts& f, bool after_mpi_completes) {
  if (!f.node_local) {
    if (!f.agent_served) return ToMpi();
    return {.path = Path::kAgent, .after_mpi_completes = after_mpi_completes};
  }
  return {.path = f.cross_memory ? Path::kCrossMemory : Path::kInPlace,
          .after_mpi_completes = after_mpi_completes,
          .exclusive = f.holds_exclusive};
}

// Put and get. Zero counts and zero-size types are legal no-ops on every
// target; node-local targets are copied to or from directly in every
// epoch the shim serves, also on windows spanning nodes. A remote target's
// agent (agent.h) moves it in passive epochs, as it applies accumulates,
// so the target need not call MPI for it; MPI orders no put or get against
// another, so what went to MPI before need not complete first. MPI moves
// larger ones than kAgentCopyBytes, and in fence and PSCW epochs every one.
Route RouteCopy(const RouteFacts& f) {
  if (f.bytes == 0) return {.path = Path::kNoOp};
  if (f.mpi_judges_target) return ToMpi();
  if (f.node_local) return ByReach(f, false);
  if (f.agent_served && f.passive && f.bytes <= kAgentCopyBytes) {
    return ByReach(f, false);
  }
  return ToMpi();
}

// The accumulate family: every update to a location must be applied one
// way, CPU atomics under the stripes or MPI's, never both.
Route RouteUpdate(const RouteFacts& f) {
  if (f.mpi_judges_target) return ToMpi();
  // On a single-node window every origin honours the stripes, also on
  // MPI_Win_create memory of another process, which is updated through
  // cross-memory attach under them.
  if (f.single_node) return ByReach(f, false);
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
  if (f.holds_exclusive && f.node_local) return ByReach(f, true);
  // With the agent (agent.h) every origin's accumulate reaches the target
  // through the stripes: node-local origins' directly, remote ones' through
  // the target's agent. In passive epochs; and where the shim matches
  // posts (agent_active_target) in fence epochs, whose fences wait until
  // the agents have applied them (AgentCompleteFence), and in MPI's PSCW,
  // whose waits receive each origin's count of them (AgentCompletePscw). An
  // epoch of another kind on the window while another origin holds one of
  // these on the same target is erroneous (MPI-3 11.5).
  if (!f.agent_served) return ToMpi();
  if (f.passive) return ByReach(f, true);
  // In an active-target epoch nothing can complete MPI's accumulates before
  // its end (MPI_Win_flush is erroneous there). MPI orders one origin's
  // accumulates to a location, so once this epoch handed one for the target
  // to MPI (a layout the shim does not flatten), the rest follow it there.
  if (f.agent_counts_epoch && !f.mpi_has_updates) return ByReach(f, false);
  return ToMpi();
}

}  // namespace

Route RouteCall(const RouteFacts& facts) {
  return facts.access == Access::kCopy ? RouteCopy(facts) : RouteUpdate(facts);
}

}  // namespace rmashim
