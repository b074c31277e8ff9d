// Where an admitted put, get or accumulate-family call goes: a small pure
// function of what is known about the window, the epoch and the target
// once the call's arguments have passed their checks (admission.h), with
// no MPI call and no window behind it, so that every combination of its
// inputs is tested without MPI (tests/unit/routing_test.cc). Admit gathers
// the facts and acts on the route (completing what went to MPI first where
// the route says so); the family's apply steps dispatch on its path.
#ifndef RMASHIM_SHIM_MOVE_ROUTING_H_
#define RMASHIM_SHIM_MOVE_ROUTING_H_

#include <mpi.h>

#include <cstdint>

#include "shim/profile/profile.h"

namespace rmashim {

// What the call does to the target's memory.
enum class Access : uint8_t {
  kCopy,    // put, get: bytes copied in or out
  kUpdate,  // the accumulate family: elements combined atomically
};

// The way to the target's memory.
enum class Path : uint8_t {
  kNoOp,         // nothing to move (a put or get of no bytes)
  kInPlace,      // memory this process maps: copies, CPU atomics
  kCrossMemory,  // MPI_Win_create memory of a node peer (cross_memory.h)
  kAgent,        // a remote target's agent applies it (agent.h)
  kMpi,          // MPI moves it on the application's window
};

struct Route {
  Path path = Path::kMpi;
  Fallback why = Fallback::kMultiNodeWindow;  // kMpi: the reason
  // An update after this process's operations to the target that went to
  // MPI in this epoch: MPI orders one origin's accumulates to a location
  // (accumulate_ordering, MPI-3 11.7.2), so those complete first.
  bool after_mpi_completes = false;
  // This process holds an exclusive lock on the target: no other origin
  // touches its memory, so updates take no stripes.
  bool exclusive = false;
};

// What routing needs to know, read once from the window (its kind), the
// epoch and the target.
struct RouteFacts {
  Access access = Access::kCopy;
  // The window's kind, fixed at creation (agent_served) or at the epoch's
  // start (counts: the agents count this epoch's updates).
  bool single_node = false;   // locks_in_shm: every origin honours stripes
  bool agent_served = false;  // the agents serve remote origins
  bool agent_counts_epoch = false;
  // The epoch: passive (lock, lock_all), and whether MPI judges this
  // target (MPI's PSCW on a window spanning nodes, a target that is not a
  // node-local one of the start: CheckEpoch's kPassThrough).
  bool passive = false;
  bool mpi_judges_target = false;
  bool holds_exclusive = false;
  // This epoch handed an update for the target to MPI already.
  bool mpi_has_updates = false;
  // The target.
  bool node_local = false;
  bool cross_memory = false;  // node-local MPI_Win_create memory of a peer
  MPI_Aint bytes = 0;         // the target layout's size
};

// The largest put or get a remote target's agent moves: as one RMA
// operation of the agents' transport where both layouts are dense
// (agent_rma.cc), else as updates in requests of at most 16 MiB
// (agent_origin.cc); MPI moves larger ones.
inline constexpr MPI_Aint kAgentCopyBytes = MPI_Aint{16} << 20;

// The route of an admitted call with `facts`.
Route RouteCall(const RouteFacts& facts);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_MOVE_ROUTING_H_
