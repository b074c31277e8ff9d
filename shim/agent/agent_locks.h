// Passive-target locks for remote origins, taken by an agent (agent.h) in
// the same lock words node-local lockers use (shm_lock.h), so that on a
// window spanning nodes every locker, local or remote, meets every other in
// one set of gates: node-local lockers never go through MPI's locks, and a
// remote origin's lock completes while the target computes without MPI.
//
// Which agent. A shared lock touches the target's word only: the target's
// own agent serves it, so a node's shared-lock traffic is spread over its
// processes. For exclusive locks and lock_all shares a remote origin asks
// the agent of the first window rank of the target's node
// (ManagedWindow::lock_agent_rank), so one agent holds all of that
// origin's shares of the node's `all` shards: like a node-local process
// (ExclusiveShare), an origin enters the shards once for all of its exclusive
// locks there and never queues behind a lock_all that waits for one of its own
// locks (shm_lock.h argues the absence of cycles for one process; the agent
// stands in for the origin).
//  - MPI_LOCK_SHARED on target t: class A of t's `lock` gate.
//  - MPI_LOCK_EXCLUSIVE on t: class B of every shard, in shard order (first
//    exclusive lock of that origin on the window only), then class B of t's
//    `lock` gate, as ExclusiveShare::Enter and EnterTarget do.
//  - MPI_Win_lock_all: class A of the agent's own process's shard, as a
//    node-local lock_all (AcquireAll). The origin asks the nodes' agents
//    one after the other, in node order, its own node's share in its place
//    (agent_origin.cc: AgentLockAll argues why). Windows spanning nodes have no
//    announced locks and no biased lock_all (window.cc: MapAllShards), so
//    nothing else is to be waited for.
//
// Never blocking. The agent also serves the very updates and releases
// that a lock it waits for needs to be freed, so it must not wait inside a
// gate: each request enters its gates with gate::PendingEntry (a ticket,
// polled), in arrival order, and is answered when it holds them all; the
// agent's loop polls while requests wait (agent.cc: Serve). Tickets keep
// the gates' fairness: a remote locker is served in its turn, not after
// every local one.
#ifndef RMASHIM_SHIM_AGENT_AGENT_LOCKS_H_
#define RMASHIM_SHIM_AGENT_AGENT_LOCKS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "shim/agent/agent_wire.h"
#include "shim/sync/shm_lock.h"

namespace rmashim {

class ManagedWindow;

// One lock or release from a remote origin: the link it came on (one per
// origin process), the window (by its id at this agent) and the target's
// window rank (this node's; this process's own rank for kAll).
struct AgentLockRequest {
  int link = -1;
  int window_id = -1;
  ManagedWindow* window = nullptr;
  int target = -1;
  AgentLockKind kind = AgentLockKind::kShared;
};

// The agent's locks for remote origins. Used under AgentState::serve_mutex,
// by the agent's thread or by a waiter that serves (agent_state.h:
// ServeArrived).
class AgentLocks {
 public:
  // A lock: true when it is held now (the caller answers), else it waits
  // until Progress grants it.
  [[nodiscard]] bool Request(const AgentLockRequest& r);
  // A release of a lock Request or Progress granted.
  void Release(const AgentLockRequest& r);
  // The origin on `link` is gone (its link ended): the locks it holds are
  // released, and those it waits for are released as soon as they are
  // granted (a ticket drawn in a gate must take its turn), never answered.
  void DropLink(int link);
  // Polls the waiting requests; returns the links of those granted now,
  // each to be answered.
  std::vector<int> Progress();
  bool waiting() const { return !waiting_.empty(); }
  size_t waiting_count() const { return waiting_.size(); }
  // How long the agent may sleep before it polls the waiting requests
  // again, from the last Progress, once it no longer polls awake
  // (shortest_next_wait_ns). Nobody tells the agent's thread of a
  // release, so a poll's interval is a delay added to the grant: it is at
  // most a sixteenth of the time the request has waited so far (little
  // added to a short wait; a holder that computes for seconds costs the
  // agent a poll a millisecond), between kNextInLinePollNs for a request
  // next in its gate (only holders to leave; counted from when it became
  // next, so time spent queued behind others does not slow its turn) and
  // kQueuedPollNs for one queued behind others, and kMaxPollNs.
  static constexpr uint64_t kNextInLinePollNs = 8'000, kQueuedPollNs = 64'000,
                            kMaxPollNs = 1'000'000;
  uint64_t poll_interval_cap_ns() const { return poll_cap_ns_; }
  // How long the request that became next in its gate latest has been
  // next, as of the last Progress; kNoneNext when none is next. The agent
  // polls without sleeping while it is short (agent.h: AgentLockSpinNs).
  static constexpr uint64_t kNoneNext = UINT64_MAX;
  uint64_t shortest_next_wait_ns() const { return shortest_next_ns_; }

 private:
  struct Waiter {
    AgentLockRequest request;
    std::vector<gate::PendingEntry> steps;  // gates to enter, in order
    size_t entered = 0;                     // steps held so far
    bool started = false;                   // steps[entered] has a ticket
    bool first_exclusive = false;           // steps include the shards
    uint64_t since_ns = 0;                  // NowNs at the request
    uint64_t next_since_ns = 0;  // first seen next at steps[entered]; 0: not
    bool dropped = false;        // its origin is gone: release when granted
  };
  // Enters as many steps as it can now; true when all are held.
  static bool Advance(Waiter& w);
  // Whether `r`'s window is still registered. The caller holds the
  // registry's mutex (served_windows.h).
  static bool WindowAlive(const AgentLockRequest& r);
  void Granted(const Waiter& w);

  std::deque<Waiter> waiting_;
  uint64_t poll_cap_ns_ = kMaxPollNs;
  uint64_t shortest_next_ns_ = kNoneNext;
  // Exclusive locks each origin (link) holds per window at this agent; the
  // shards are held while the count is above 0. A request that enters them
  // counts as soon as it is queued, so a second one does not enter again.
  std::map<std::pair<int, int>, int> exclusive_held_;
  // The locks each origin (link) holds, for DropLink.
  std::map<int, std::vector<AgentLockRequest>> held_;
  // The link number DropLink gives a gone origin's waiting requests next.
  int next_gone_link_ = -2;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_AGENT_LOCKS_H_
