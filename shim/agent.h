// The target-side agent: on a job that spans nodes, the accumulate family
// from remote origins is applied to this process's window memory by a
// thread of the shim, with the CPU atomics and stripes that node-local
// origins use (accumulate.h: ApplyRun), so node-local accumulates can be
// served in shared memory in passive epochs on windows spanning nodes and
// stay atomic with remote ones (MPI-3 11.7.1).
//
// Why an agent at all. MPICH over UCX sends a remote origin's accumulate,
// fetch_and_op and compare_and_swap to the target as an active message and
// applies it there in software, under a mutex private to MPICH: it cannot
// be atomic with CPU atomics on the same memory. So either every
// accumulate to a target with remote origins goes through MPI (what the
// shim did before: node-local ones too, 0% served for Global Arrays), or
// the shim applies the remote ones itself. Something in the target process
// must run to apply them: over UCX's TCP transport (and any without
// hardware atomics) MPI's own RMA needs the target to enter UCX as well.
//
// Why a thread per process, talking MPI point-to-point. The choices
// (docs/how-it-works.md "Windows spanning nodes" has the argument in full):
//  - Ghost processes (Casper): extra ranks hidden from MPI_COMM_WORLD, so
//    every communicator call must be translated; a launcher change too.
//  - Request rings in the node segment written with MPI_Put and a polling
//    agent that makes no MPI call: over TCP an MPI_Put itself waits for
//    the target to enter UCX, so the ring would never fill.
//  - A thread in each process over a private duplicate of MPI_COMM_WORLD:
//    no change to the application's communicators, and its polling drives
//    MPI's progress engine too, so MPI's own locks and the operations the
//    shim passes to MPI progress while the application computes. Costs:
//    MPI runs at MPI_THREAD_MULTIPLE underneath (the application still
//    sees the level it asked for; calls the shim serves in shared memory
//    make no MPI call, so the cost lands only on what goes to MPI), and a
//    thread that naps when idle (below).
// One thread per process rather than per node: each applies updates to
// its own process's memory only (MPI_Win_create memory included, which its
// node peers may not have mapped), and a node's remote traffic is spread
// over its processes.
//
// Protocol. An origin sends one message per operation to the target's
// agent (tag kAgentRequest on the agent's communicator): a header, the
// target's element runs (flatten.h, byte offsets from the displacement)
// and the packed origin elements. Fetching operations wait for the reply
// (the old values, packed). Others are complete at the origin when the
// send returns; MPI_Win_flush (and unlock, flush_all, unlock_all) sends a
// flush request that the agent answers after applying everything that
// origin sent before it: MPI does not let messages from one sender on one
// communicator and tag overtake each other, and the agent handles them in
// arrival order. So operations of one origin to one target are applied in
// issue order, which covers MPI's accumulate ordering (MPI-3 11.7.2).
//
// Idling. The agent polls with MPI_Improbe; after work it polls a few
// more times, then naps with nanosleep, doubling the nap up to
// RMASHIM_AGENT_NAP_US (default kDefaultNapMicros), so an idle agent wakes
// a few thousand times a second for one probe each; a request arriving
// then waits at most one nap. bench/agent.cc measures both
// (bench/results/agent_oddeven.md).
//
// What the measurements say about this design: a remote origin's update
// reaches a target that computes without calling MPI in well under a
// millisecond (natively it waits for the target's next MPI call), but one
// to a target that sits in a blocking MPI call takes tens of microseconds
// instead of about one: MPICH (global critical section) holds its mutex
// while that call polls, and the agent's probe waits for the handoff. And
// an idle agent costs several percent of a core. The next step is a
// transport that needs no MPICH lock on the target side.
//
// When. Off unless asked for: RMASHIM_AGENT=1 starts it on a job that
// spans nodes; RMASHIM_AGENT=auto where the launcher's environment says
// the job spans nodes (AgentWanted). Not yet the default: with the agent's
// thread probing, MPICH 4.0.2's own PSCW on windows spanning nodes hangs
// now and then in MPI_Win_start, a post never seen (tests/diff pscw_ring,
// 3 ranks on the three-clique split: 3 of 30 runs; 0 of 30 without the
// agent, 0 of 30 natively at MPI_THREAD_MULTIPLE without a second thread,
// 0 of 30 with the agent probing once a second: RMASHIM_AGENT_NAP_US=1000000).
// A window uses the agent only when every one of its ranks runs one
// (agreed at creation); otherwise accumulates on windows spanning nodes go
// to MPI as before.
#ifndef RMASHIM_SHIM_AGENT_H_
#define RMASHIM_SHIM_AGENT_H_

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shim/element_ops.h"
#include "shim/flatten.h"

namespace rmashim {

class ManagedWindow;

inline constexpr int kDefaultNapMicros = 200;

// Before MPI_Init: whether to ask MPI for MPI_THREAD_MULTIPLE and start
// the agent once MPI runs: RMASHIM_AGENT=1; with RMASHIM_AGENT=auto, the
// launcher's environment (Hydra's MPI_LOCALNRANKS below PMI_SIZE, Slurm's
// SLURM_NNODES above 1, or MPICH's simulated node splits). False when
// RMASHIM_DISABLE is set.
bool AgentWanted();

// Starts the agent thread (Runtime::Start, MPI at MPI_THREAD_MULTIPLE, the
// job spanning nodes); collective over MPI_COMM_WORLD (it duplicates it).
void StartAgent();
// Collective over MPI_COMM_WORLD, at MPI_Finalize: every process stops
// sending requests, then each agent is stopped and joined.
void StopAgent();
bool AgentRunning();
// Remote operations this process's agent has applied so far.
long long AgentApplied();

// A window's id at this process's agent (for origins to name it), or -1
// when no agent runs. Unregister before the window's memory goes.
int RegisterAgentWindow(ManagedWindow* w);
void UnregisterAgentWindow(int id);

// Holds the agent parked at the top of its loop (not inside MPI, touching
// no memory of the application) for a scope: shared_user_memory.h copies
// and maps over pages the agent could otherwise be updating.
class AgentParked {
 public:
  AgentParked();
  ~AgentParked();
  AgentParked(const AgentParked&) = delete;
  AgentParked& operator=(const AgentParked&) = delete;

 private:
  bool parked_ = false;
};

// Origin side. Each returns an MPI error code (MPI_SUCCESS); the caller
// raises it on the window.
//
// `elements` elements of predefined `element` (`element_size` bytes
// packed) at `runs` from displacement `disp` of window rank `target`
// (remote, on a window w.agent_served()), combined with `op`: `origin`
// packed (nullptr for MPI_NO_OP); with `result`, the old values come back
// there, packed, before the call returns.
int AgentUpdate(ManagedWindow& w, int target, MPI_Aint disp,
                MPI_Datatype element, MPI_Op op,
                const std::vector<ElementRun>& runs, size_t elements,
                size_t element_size, const std::byte* origin,
                std::byte* result);
// Compare-and-swap of one `size`-byte element of predefined `type`.
int AgentCompareSwap(ManagedWindow& w, int target, MPI_Aint disp,
                     MPI_Datatype type, size_t size, const std::byte* origin,
                     const std::byte* compare, std::byte* result);
// Remote completion of every update this process sent `target`'s agent on
// `w` (no message when there is none).
int AgentFlush(ManagedWindow& w, int target);
// ... of every target's.
int AgentFlushAll(ManagedWindow& w);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_H_
