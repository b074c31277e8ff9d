// What the agent does with one origin's link (agent_serve.cc), for its
// loop (agent.cc) and for a waiter that serves in its place
// (agent_state.h: ServeArrived): serve the requests that arrived, grant the
// lock requests that got their turn, end the link. agent.h has the protocol.
// Internal to the agent's files.
#ifndef RMASHIM_SHIM_AGENT_AGENT_SERVE_H_
#define RMASHIM_SHIM_AGENT_AGENT_SERVE_H_

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "shim/agent/agent_link.h"
#include "shim/agent/agent_state.h"

namespace rmashim {

// Where a link from an origin stands after its requests were served.
enum class LinkEnd {
  kOpen,
  kGoodbye,  // the origin said it closes the link (StopAgent)
  kLost,     // closed or failed without a goodbye
};

// An origin's link, from its hello on (agent_connections.h before it).
struct OriginLink {
  int world_rank = -1;
  FrameReader reader;
};

// The origins' links the agent serves, by descriptor, and the epoll set
// they are in. Owned by the agent's loop (agent.cc: Serve) and used under
// AgentState::serve_mutex, by that loop or by a waiting epoch end that
// serves what arrived (ServeArrived).
struct ServedLinks {
  int epoll = -1;
  std::unordered_map<int, OriginLink> origins;
  std::vector<std::byte> frame;  // the request being served
};

// Answers every waiting lock request granted since the last call
// (AgentLocks::Progress).
void GrantWaitingLocks(AgentState& s);

// Serves the requests that arrived on `link` (one recv, FrameReader), in
// order: updates and compare-and-swaps applied, flushes, locks and
// releases answered.
LinkEnd ServeReceived(AgentState& s, int link, FrameReader& reader,
                      std::vector<std::byte>& frame);

// Ends the link `fd` from an origin: its lock requests are dropped and the
// locks it holds released (agent_locks.h: DropLink), so that no lock stays
// held by an origin that can no longer release it, and no grant goes to a
// later link given the same descriptor. A link lost (no goodbye) may have
// carried updates that never arrived: epoch ends on windows with that
// origin report it from now on (AwaitAgentArrivals), and are woken.
void EndLink(AgentState& s, int epoll, int fd, const OriginLink& origin,
             LinkEnd end);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_AGENT_SERVE_H_
