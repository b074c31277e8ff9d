// The target-side agent: on a job that spans nodes, the accumulate family
// from remote origins is applied to this process's window memory by a
// thread of the shim, with the CPU atomics and stripes that node-local
// origins use (accumulate.h: ApplyRun), so node-local accumulates can be
// served in shared memory in passive epochs on windows spanning nodes and
// stay atomic with remote ones (MPI-3 11.7.1); in fence and PSCW epochs
// too, whose ends wait until the agents have applied them
// (AgentCompleteFence, AgentCompletePscw). In
// passive epochs remote origins' puts and gets go the agents' way too
// (admission.cc, wrap_rma.cc's MoveThroughAgent): contiguous ones as
// one-sided RMA of the agents' transport into the target's memory,
// registered at the window's creation (agent_rma.cc), others as updates
// with MPI_REPLACE and fetching MPI_NO_OP, so a remote origin's whole
// passive epoch completes without the target calling MPI.
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
// Why a thread per process with links of its own. The choices:
//  - Ghost processes (Casper): extra ranks hidden from MPI_COMM_WORLD, so
//    every communicator call must be translated; a launcher change too.
//  - Request rings in the node segment written with MPI_Put and a polling
//    agent that makes no MPI call: over TCP an MPI_Put itself waits for
//    the target to enter UCX, so the ring would never fill.
//  - A thread per process that receives requests with MPI point-to-point
//    over a duplicate of MPI_COMM_WORLD. Tried first, and measured
//    (bench/agent.cc): it needs MPI_THREAD_MULTIPLE underneath; while the
//    target's main thread sits in a blocking MPI call, MPICH holds its
//    mutex as that call polls, and the agent's probe waits for the handoff
//    (tens of times what MPI itself takes per remote operation); an idle
//    agent that napped between probes took a few percent of a core; and
//    with its probes running beside the main thread, MPICH 4.0.2's own PSCW
//    on windows spanning nodes hung in MPI_Win_start in 3 of 30 runs of
//    tests/diff's pscw_ring (0 of 30 when the agent probed once a second).
//  - A thread per process with TCP sockets of its own: what was built
//    next. It made no MPI call and slept in epoll_wait when idle, but it
//    was a transport of its own (one descriptor per origin-target pair,
//    hellos, keep-alives, retries), the kernel's TCP even where MPI had
//    shared memory or RDMA.
//  - A thread per process on UCX, with a context and worker of its own
//    (agent_transport.h, ucx_transport.cc): what is built. UCX is the
//    engine MPICH's ch4:ucx runs on, so the agent's messages take the
//    transport UCX picks for each peer (shared memory between the
//    processes of one host, verbs on InfiniBand and RoCE, TCP), under the
//    same settings (UCX_TLS, UCX_NET_DEVICES; RMASHIM_UCX_* for the
//    agent's context alone). The agent still makes no MPI call, so MPI
//    keeps the application's thread level; it sleeps on its worker's
//    event descriptor when idle; the worker addresses are exchanged over
//    MPI once, at MPI_Init (memory: every rank's address, a few hundred
//    bytes each); nothing grows per peer but UCX's endpoints. The thread's
//    wake-up was the cost to beat: where ranks busy-poll every core, a
//    sleeping agent woken for each remote request puts a signal (UCX's
//    shared-memory event) and two context switches on every operation,
//    several times what MPICH's own progress costs. So a thread that already
//    waits in the shim serves instead (AgentStandIn below): the target's
//    blocking MPI calls, an origin's own waits for a reply or a flush
//    (agent_requests.h: ReceiveStandingIn, FlushRmaStandingIn), an epoch end's
//    wait for arrivals; the agent's thread sleeps unarmed meanwhile and for 1
//    ms after the last short wait (agent.cc: SleepWhileStoodIn), so a target in
//    MPI costs a poll (bench/results/agent_oddeven.md has the figures). MPI's
//    own progress is not driven: MPI's locks and the operations the shim passes
//    to MPI still need the target to call MPI.
// One thread per process rather than per node: each applies updates to
// its own process's memory only (MPI_Win_create memory included, which its
// node peers may not have mapped), and a node's remote traffic is spread
// over its processes.
//
// Protocol. An origin sends the target's agent one frame per operation
// (agent_wire.h): a header, the target's element runs (flatten.h, byte
// offsets from the displacement) and the packed origin elements. Fetching
// operations wait for the answer (the old values, packed). Others are
// complete at the origin once copied into its queue for that agent, which
// goes out as one batch with the next request to that agent that waits
// for an answer, or when 64 KiB have gathered (MPI completes them at the
// target only at the origin's next synchronization, and a burst then costs
// one message); MPI_Win_flush (and unlock, flush_all, unlock_all) sends a
// flush request that the agent answers after applying everything that
// origin sent before it, and a release to an agent answers the same way, so
// an unlock or unlock_all sends no flush to the ranks whose agents serve
// its locks: the release that follows their updates completes them. The
// transport keeps each origin's batches to an agent in order, so operations of
// one origin to one target are applied in issue order, which covers MPI's
// accumulate ordering (MPI-3 11.7.2). Every request is checked before anything
// is applied (agent_serve.cc: the window id and its generation live, the range
// inside the target's memory, the type, operation and sizes the ones the window
// allows); one that fails is refused, counted (AgentRejected) and reported to
// its origin (its answer, or its next flush, is MPI_ERR_OTHER). A batch with
// another job's token or from no rank of this job never reaches the agent.
// A link that fails (a peer that died, a network error UCX reports)
// fails the call with MPI_ERR_OTHER on the window's handler and is lost
// for good (what it still carried may never arrive); the ends of fence
// and PSCW epochs then report it on both sides instead of waiting for
// updates that may never come, and the target agent releases the locks
// that origin held (AgentLocks::DropLink).
//
// When. On by default where the launcher's environment says the job spans
// nodes (AgentWanted: RMASHIM_AGENT unset or auto); RMASHIM_AGENT=1 on
// every job whose MPI nodes are several, RMASHIM_AGENT=0 never. A remote
// operation to a target that waits in a blocking MPI call costs a poll of
// the target's own thread (AgentStandIn), not a sleeping thread's
// wake-up. A window uses the agent only when every one of its ranks runs
// one (agreed at creation); otherwise accumulates on windows spanning
// nodes go to MPI as before.
#ifndef RMASHIM_SHIM_AGENT_AGENT_H_
#define RMASHIM_SHIM_AGENT_AGENT_H_

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "shim/agent/agent_locks.h"
#include "shim/base/spin_wait.h"
#include "shim/sync/mpi_pscw.h"
#include "shim/types/element_ops.h"
#include "shim/types/flatten.h"

namespace rmashim {

class ManagedWindow;

// Whether to start the agent: RMASHIM_AGENT=1; unset or auto (the
// default), where the launcher's environment says the job spans nodes (Hydra's
// MPI_LOCALNRANKS below PMI_SIZE, Slurm's SLURM_NNODES above 1, or MPICH's
// simulated node splits). Asked only where the shim is enabled
// (Runtime::Start).
bool AgentWanted();

// Starts the agent thread (Runtime::Start, on a job spanning nodes);
// collective over MPI_COMM_WORLD (the workers' addresses are exchanged over
// it). On no rank when any rank cannot open its transport.
void StartAgent();
// Collective over MPI_COMM_WORLD, at MPI_Finalize: every process stops
// sending requests, then each agent is stopped and joined.
void StopAgent();
bool AgentRunning();
// How long the agent's thread polls after serving a request before it
// sleeps: RMASHIM_AGENT_SPIN_US microseconds (default 0: never) where the
// node has two processing units per rank by MPI's count, else 0. Off by
// default: jobs fill their nodes' cores, and a spinning second thread then
// takes a core a rank needs; with spare cores it saves the agent's
// wake-ups (scripts/bench_agent.sh --spin-us).
uint64_t AgentSpinNs();
// How long an origin's thread that waits for an agent's answer (a fetch,
// a flush, a lock) polls before it sleeps: RMASHIM_AGENT_ANSWER_SPIN_US
// microseconds as set, else kSpinAloneNs where the node has a processing
// unit per rank and 0 where it is oversubscribed. The waiting thread is
// the rank's own, inside an MPI call, where MPICH would poll too: its core
// is its own, so polling saves its wake-up at the answer and takes no core
// from another rank.
uint64_t AgentAnswerSpinNs();
// ... for a lock's grant: at most 20 us of it, about an uncontended
// grant's round trip. A grant that waits for a holder may wait long, and a
// polling origin then takes a core from the agent that grants it on a full
// node.
uint64_t AgentGrantSpinNs();
// How long the agent polls a remote origin's lock request without sleeping
// once the request is next in its gate (only holders to leave), from then
// on: RMASHIM_AGENT_LOCK_SPIN_US microseconds as set (0: never), else 1000
// where the host has two processing units per rank (SpinSettings::
// core_per_thread) and 0 where it has not. Nobody tells the agent of a
// node-local holder's release; a poll that sleeps adds its interval and a
// thread's wake-up to the handover, while MPICH's origin spins in
// MPI_Win_lock and its target grants from the unlock
// (bench/results/agent_oddeven.md, the handover row). The cost: up to that
// long of a spare core per gate a request waits its turn at (an origin's
// first exclusive lock on a window waits at each `all` shard's gate and
// then the target's, agent_locks.h); after it the polls sleep
// (AgentLocks::poll_interval_cap_ns), adding at most a sixteenth of the
// wait to a long one.
uint64_t AgentLockSpinNs();

// Remote operations this process's agent has applied so far, and the
// locks it has granted remote origins (agent_locks.h).
long long AgentApplied();
long long AgentLocksGranted();
// Remote origins' lock requests it has queued (dropped ones included: they
// wait for their turn too), as of its loop's last pass.
long long AgentLocksWaiting();
// Requests this process's agent refused (agent_serve.cc: Reject) or its
// transport dropped before the agent saw them (another job's token, no
// rank of this job: agent_transport.h).
long long AgentRejected();

// Holds the agent parked at the top of its loop (touching no memory of the
// application) for a scope: shared_user_memory.h copies
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
// there, packed, before the call returns. A call of more than 16 MiB goes
// as several requests, in order (agent_origin.cc).
int AgentUpdate(ManagedWindow& w, int target, MPI_Aint disp,
                MPI_Datatype element, MPI_Op op,
                std::span<const ElementRun> runs, size_t elements,
                size_t element_size, const std::byte* origin,
                std::byte* result);
// ... for `elements` consecutive elements from `disp`.
inline int AgentUpdateContiguous(ManagedWindow& w, int target, MPI_Aint disp,
                                 MPI_Datatype element, MPI_Op op,
                                 size_t elements, size_t element_size,
                                 const std::byte* origin, std::byte* result) {
  const ElementRun run{0, static_cast<MPI_Aint>(elements)};
  return AgentUpdate(w, target, disp, element, op, {&run, 1}, elements,
                     element_size, origin, result);
}
// Compare-and-swap of one `size`-byte element of predefined `type`.
int AgentCompareSwap(ManagedWindow& w, int target, MPI_Aint disp,
                     MPI_Datatype type, size_t size, const std::byte* origin,
                     const std::byte* compare, std::byte* result);
// Remote completion of every update this process sent `target`'s agent on
// `w` (no message when there is none).
int AgentFlush(ManagedWindow& w, int target);
// ... of every target's.
int AgentFlushAll(ManagedWindow& w);
// ... of every target's but the remote lock agents' (ManagedWindow::
// remote_lock_agents), at an MPI_Win_unlock_all whose AgentUnlockAll
// completes those: a round trip less per node.
int AgentFlushAllButLockAgents(ManagedWindow& w);

// Remote put and get as RMA (agent_rma.cc has the design). Collective over
// `comm` (the window's) after a window's creation: on a window the agents
// serve, registers this rank's memory and exchanges keys (unless
// RMASHIM_AGENT_RMA=0 on some rank).
void AgentOpenRma(ManagedWindow& w, MPI_Comm comm);
// Takes a window's registration out at MPI_Win_free and releases it when
// destroyed: after the window's collective free, when no origin can reach
// it any more.
struct WindowRma;
class AgentRmaRetired {
 public:
  explicit AgentRmaRetired(const ManagedWindow& w);
  ~AgentRmaRetired();
  AgentRmaRetired(const AgentRmaRetired&) = delete;
  AgentRmaRetired& operator=(const AgentRmaRetired&) = delete;

 private:
  WindowRma* record_ = nullptr;
};
// A put (`put`) or get of `bytes` contiguous bytes between `origin` and
// byte `offset` of remote window rank `target` (Admit checked the range),
// complete at the next AgentFlush, AgentFlushAll or AgentUnlock of it, or
// before it returns with `complete_now`: an MPI error code, or nullopt where
// the window has no RMA to `target` (the caller sends it as a request).
std::optional<int> AgentRmaMove(ManagedWindow& w, bool put, int target,
                                MPI_Aint offset, std::byte* origin,
                                size_t bytes, bool complete_now);
// Local completion (MPI_Win_flush_local, flush_local_all) of the puts and
// gets started as RMA to `target` of `w`, or to every target: the same as
// their remote completion (a flush of the endpoint). Updates need none:
// they are complete at the origin once queued.
int AgentFlushRma(ManagedWindow& w, int target);
int AgentFlushRmaAll(ManagedWindow& w);
// Puts and gets this process started as RMA (rmashim_agent_rma_ops).
long long AgentRmaOps();

// Fence epochs, collective over `w`'s ranks before MPI's fence (MpiFence,
// wrap_active.cc): every update this process sent to remote targets'
// agents goes out, and this process returns once its own agent has applied
// every update the window's ranks sent it before their fences
// (agent_serve.cc counts them per window, the origins per target; the sums come
// from one MPI_Reduce_scatter_block). MPI's fence after it then tells every
// origin its updates are applied. Not for fences with MPI_MODE_NOPRECEDE, which
// every rank gives or none (MPI-3 11.5.5).
// Two synchronizations, also when no rank handed MPI anything: the
// collective's barrier alone would let a rank leave the fence before a
// target's agent has applied what the ending epoch sent it, and that rank's
// first access of the next epoch (a node-local origin's load, a get through
// MPI) could then miss the update. The wait for the agent must come between
// the two, and the counts it waits for take the first.
int AgentCompleteFence(ManagedWindow& w);
// The same at MPI_Win_complete of MPI's PSCW
// (ManagedWindow::agent_active_target): every update sent to a target of the
// start goes out, and each target on another node is told how many
// (PostMatching::SendCount), zero included; node-local targets, whose
// updates were direct, are told nothing.
int AgentCompletePscw(ManagedWindow& w);
// This process's agent's side of an epoch's end on `w`: `arriving` more
// updates were sent to it (the origins' counts); AwaitAgentArrivals
// returns once the agent has applied every update
// counted so far, TestAgentArrivals says whether it has.
// A lost link makes them MPI_ERR_OTHER instead of a wait that could never
// end: an origin's count that says its link here was lost
// (AddAgentArrivals; nothing is added), or a link from a rank of `w` to
// this agent that ended without the origin's goodbye (the others; they
// wake when it happens). From then on every epoch end of `w` reports it:
// a lost link is never opened again (agent_requests.cc: LoseLink).
[[nodiscard]] int AddAgentArrivals(ManagedWindow& w,
                                   const UpdateCount& arriving);
[[nodiscard]] int AwaitAgentArrivals(ManagedWindow& w);
[[nodiscard]] int TestAgentArrivals(ManagedWindow& w, bool* applied);

// Tests: fails a link as a network failure would. `agent_end` false: this
// process's link to world rank `world_rank`'s agent breaks (that agent
// learns of it at once, this origin at its next request or wait on it);
// true: this process's agent ends its link from `world_rank` as lost (that
// origin learns of it at once). MPI_ERR_OTHER where the link was lost
// already or no agent runs.
int AgentFailLink(int world_rank, bool agent_end);
// Tests: sends `frames` (length-prefixed requests) to world rank
// `world_rank`'s agent as if from `claimed_origin`, with the job's token
// XORed with `token_xor`, after what is queued for it.
int AgentSendForged(int world_rank, int claimed_origin, uint64_t token_xor,
                    std::span<const std::byte> frames);
// Tests: what a hold keeps from serving. kThreadAndStandIns: this
// process's agent thread serves nothing (it waits after each event until
// released), and no blocking call stands in for it (AgentStandIn), so only
// an epoch end that serves what arrived (ServeArrived) applies remote
// updates; release it before anything that needs the thread: a lock
// request, a flush, parking, MPI_Finalize. kThread: the thread alone, so
// only the waits that stand in serve. A hold returns once the thread sits
// at it, between passes. MPI_ERR_OTHER where no agent runs.
enum class AgentHold { kNone, kThreadAndStandIns, kThread };
int AgentHoldThread(AgentHold hold);

// A thread that waits in a blocking MPI call stands in for the agent's
// thread for the length of the call (intercept/wrap_blocking.cc and
// wrap_request.cc: MPI_Barrier, MPI_Recv, MPI_Probe, the MPI_Wait
// family; also the shim's own waits: an origin's for an agent's reply or
// an RMA flush, agent_requests.h, and an epoch end's for arrivals,
// agent_epoch_ends.cc): the call becomes its nonblocking form, tested in
// a loop that serves what arrived for this process's agent between tests,
// as MPICH's progress in any blocking call serves its own RMA. Meanwhile the
// agent's thread leaves the transport unarmed (agent.cc: SleepWhileStoodIn), so
// a remote request to a target in MPI costs a poll, not a sleeping
// thread's wake-up on a core the waiting rank keeps busy. Inactive (the
// call goes to MPI as it is) where no agent runs, and while a test holds
// the agent's thread (AgentHoldThread).
//
// Where the host runs more ranks than this process has processing units
// (spin_wait.h: host_oversubscribed) the call becomes the same loop even
// without an agent, and the loop gives the core away after
// kSpinBeforeYieldNs of trying: MPICH's blocking calls poll without ever
// yielding, so a rank waiting in MPI_Barrier for a descheduled peer would
// keep that peer off the core until the kernel's time slice ends.
class AgentStandIn {
 public:
  AgentStandIn();
  ~AgentStandIn();
  AgentStandIn(const AgentStandIn&) = delete;
  AgentStandIn& operator=(const AgentStandIn&) = delete;

  // Whether the blocking call is to be its test in a loop (WaitServing):
  // an agent to serve, or a core to give away.
  bool active() const { return active_ || yields_; }
  // Whether this thread serves for the agent (an agent runs and no test
  // holds its thread).
  bool serves() const { return active_; }
  // Ends the standing in before the scope does, for a thread that goes on
  // to sleep in the shim: the agent's thread watches the transport again
  // at once (woken if need be), not after agent.cc's kStandInLingerNs.
  void HandBack();
  // Runs `test` (an MPI test call: it returns an MPI error code and says
  // through its bool* whether what it tests is done) until it is done or
  // fails, serving what arrived between tries.
  template <typename Test>
  int WaitServing(Test test) {
    const uint64_t started = yields_ ? NowNs() : 0;
    for (;;) {
      bool done = false;
      const int rc = test(&done);
      if (rc != MPI_SUCCESS || done) return rc;
      if (active_) Serve();
      if (yields_ && NowNs() - started >= kSpinBeforeYieldNs) YieldCore();
    }
  }

 private:
  // Serves what arrived, unless the agent's thread serves now.
  void Serve();
  static void YieldCore();
  void Leave(bool wake);
  bool active_ = false;  // serving for the agent
  bool yields_ = false;  // the host oversubscribed
  uint64_t started_ns_ = 0;
};

// Whether MPI's blocking calls the shim wraps become their tests in a loop
// (AgentStandIn): an agent runs, or the host is oversubscribed.
bool BlockingCallsTestInstead();

// Locks for remote targets on windows whose locks are the agents'
// (ManagedWindow::locks_via_agent, agent_locks.h). AgentLock returns once
// the lock on remote `target` is held; AgentUnlock releases it after the
// caller completed its operations, and returns once it is released (so no
// release arrives after the window is freed); it completes the caller's
// updates to `target` too (on the release's own stream where the target's
// agent serves the lock, else by an AgentFlush first). AgentLockAll takes the
// lock_all share of every node, in node order, this node's by calling
// `lock_own_node`; AgentUnlockAll releases the other nodes', completing
// the updates sent to their lock agents' own ranks (the caller flushed the
// others' first: AgentFlushAllButLockAgents).
int AgentLock(ManagedWindow& w, int target, AgentLockKind lock);
int AgentUnlock(ManagedWindow& w, int target, AgentLockKind lock);
int AgentLockAll(ManagedWindow& w, const std::function<void()>& lock_own_node);
int AgentUnlockAll(ManagedWindow& w);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_AGENT_H_
