// The agent's state, shared by its thread (agent.cc,
// agent_serve.cc) and the origin side (agent_origin.cc, agent_requests.cc,
// agent_epoch_ends.cc); agent.h has the design. Internal
// to the agent's files.
#ifndef RMASHIM_SHIM_AGENT_AGENT_STATE_H_
#define RMASHIM_SHIM_AGENT_AGENT_STATE_H_

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "shim/agent/agent_locks.h"
#include "shim/agent/agent_transport.h"
#include "shim/agent/agent_wire.h"

namespace rmashim {

class ManagedWindow;

// AgentState::thread_deferring: not, for a time (a short stand-in may
// leave without waking it), or without a time limit (the last to leave
// wakes it).
inline constexpr int kNotDeferring = 0, kDeferringTimed = 1, kDeferringOpen = 2;

// AgentState::fail_link_from when no request is pending, and its answers.
inline constexpr int kFailLinkIdle = -1, kFailLinkDone = -2, kFailLinkNone = -3;

struct AgentState {
  std::thread thread;
  std::atomic<bool> running{false};
  std::atomic<long long> applied{0};
  std::atomic<long long> locks_granted{0};
  std::atomic<long long> locks_waiting{0};  // requests queued, as of the
                                            // thread's last pass

  // The messages between origins and agents (agent_transport.h), while the
  // agent runs; an eventfd that wakes its thread (to park or to stop).
  std::unique_ptr<AgentTransport> transport;
  int wake_fd = -1;
  bool stopping = false;  // under park_mutex
  uint64_t token = 0;     // the job's
  int world_rank = 0;
  int world_size = 0;

  // What the thread serves: the requests that arrived (agent_serve.h),
  // and the locks it holds and waits for for remote origins. Under
  // serve_mutex: the thread holds it while it serves (not while it waits
  // for events), and so does an epoch end that serves what arrived while it
  // waits (ServeArrived). `serving` says the thread's loop runs.
  std::mutex serve_mutex;
  bool serving = false;
  // Requests the agent would not apply (agent_serve.cc: Reject), and the
  // first one's reason, told once.
  std::atomic<long long> rejected{0};
  // By origin (world rank): a request that waits for no answer was
  // refused since that origin's last flush, which then fails.
  std::vector<uint8_t> rejected_unanswered;
  // Set while the thread waits for serve_mutex: a waiter then leaves the
  // serving to it (std::mutex is not fair, and a waiter that takes it again
  // and again could keep the thread from accepting connections and
  // granting locks for the whole of its wait).
  std::atomic<bool> thread_wants_serve{false};
  // Tests (AgentHoldThread): the thread serves nothing while set, and no
  // blocking call stands in for it while stand_ins_held is set too;
  // `thread_holding` says the thread sits at its hold (out of every pass
  // and every sleep), which a hold waits for.
  std::atomic<bool> thread_held{false};
  std::atomic<bool> stand_ins_held{false};
  std::atomic<bool> thread_holding{false};
  // Threads that wait in an MPI call and serve in the agent's place
  // meanwhile (AgentStandIn), when one last left (NowNs), and whether the
  // agent's thread sleeps on its wake-up alone because of them (agent.cc:
  // SleepWhileStoodIn), and how.
  std::atomic<int> stand_ins{0};
  std::atomic<uint64_t> stand_in_left_ns{0};
  std::atomic<int> thread_deferring{kNotDeferring};
  AgentLocks locks;

  // Links from origins (by world rank) that closed without a goodbye, and
  // how many: the updates they carried may be lost, so epoch ends on
  // windows with those origins report MPI_ERR_OTHER (AwaitAgentArrivals).
  // Written by the thread; sized at StartAgent.
  std::unique_ptr<std::atomic<bool>[]> inbound_lost;
  std::atomic<int> inbound_losses{0};
  // Bumped, waking waiters, when a window's applied count becomes what its
  // epoch end expects (AgentFenceCounts: counts rise by one, and a waiter
  // that raises `expected` either finds `applied` there already or sleeps
  // until it gets there, so "becomes" is enough) and
  // when a link is lost: epoch ends sleep on it (every window's: a wake for
  // another window only makes a waiter look again).
  std::atomic<uint32_t> arrivals_wake{0};
  // A test's request to end the link from one origin (AgentFailLink): its
  // world rank, then kFailLinkDone or kFailLinkNone once served.
  std::atomic<int> fail_link_from{kFailLinkIdle};

  // Parking (AgentParked): a request count, and whether the thread sits
  // parked at the top of its loop.

  std::mutex park_mutex;
  std::condition_variable park_cv;
  int park_requests = 0;
  bool parked = false;
  // Parked scopes open, read by ServeArrived under serve_mutex: a waiter
  // on another thread serves nothing while one is open.
  std::atomic<int> parked_scopes{0};

  // Origin side: one exchange with an agent at a time, so replies match
  // their requests when several application threads call MPI.
  std::mutex origin_mutex;
  // Updates that wait for no reply, by world rank, queued as frames until
  // the next exchange with that agent that waits (a fetching operation, a
  // flush) or until kQueueBytes: MPI completes them only at the origin's
  // next synchronization, and one send then carries the whole burst.
  std::vector<std::vector<std::byte>> queued;
};

inline constexpr size_t kQueueBytes = size_t{64} * 1024;

// The process's one agent state (never destroyed: it outlives static
// destructors).
AgentState& TheAgent();

// The agent's work done by a thread that waits for it (AwaitAgentArrivals;
// agent.cc): serves the requests that have arrived from origins, as the
// agent's thread would, unless that thread is serving now; false then, and
// when no link was ready. The waiter then need not wait for the agent's
// thread to be scheduled: on cores that the ranks keep busy, a sleeping
// thread's wake-up can take longer than the whole exchange. Never while
// the agent is parked (AgentParked: it waits for a waiter's pass under way
// to end, and later ones serve nothing until it is released).
// What the waiter serves may be any origin's request, so the MPI call that
// waits may answer a fetch of another window (up to 16 MiB, a blocking
// send) or grant a lock, as MPICH's progress in any MPI call serves every
// window.
bool ServeArrived(AgentState& s);

// agent_rma.cc, the caller holding origin_mutex: completes the RMA
// started to the window ranks in [first, last) of `w` since their last
// flush; MPI_ERR_OTHER where one failed.
int FlushRmaLocked(AgentState& s, const ManagedWindow& w, int first, int last);
// StopAgent, before the transport closes: every window's registration
// and keys released.
void CloseAllRma();

// AgentFailLink's agent end (agent.cc): the agent's thread ends its link
// from `world_rank` as lost; MPI_ERR_OTHER when there was none.
int FailLinkFrom(int world_rank);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_AGENT_STATE_H_
