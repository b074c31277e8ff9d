// What the agent does with the requests that arrived (agent_serve.cc), for
// its loop (agent.cc) and for a waiter that serves in its place
// (agent_state.h: ServeArrived): every request checked before anything is
// applied, then served; the lock requests that got their turn granted; a
// lost link ended. agent.h has the protocol. Internal to the agent's files.
#ifndef RMASHIM_SHIM_AGENT_AGENT_SERVE_H_
#define RMASHIM_SHIM_AGENT_AGENT_SERVE_H_

#include "shim/agent/agent_state.h"

namespace rmashim {

// Answers every waiting lock request granted since the last call
// (AgentLocks::Progress).
void GrantWaitingLocks(AgentState& s);

// Serves the batches the transport has taken in (AgentTransport::
// TakeArrived), each origin's requests in the order sent: updates and
// compare-and-swaps applied, flushes, locks and releases answered; then
// ends the links it reports lost. Whether there was anything. The caller
// holds s.serve_mutex.
bool ServeTaken(AgentState& s);

// Ends the link from world rank `origin` as lost: its lock requests are
// dropped and the locks it holds released (agent_locks.h: DropLink), so
// that no lock stays held by an origin that can no longer release it. It
// may have carried updates that never arrived: epoch ends on windows with
// that origin report it from now on (AwaitAgentArrivals), and are woken.
void EndLink(AgentState& s, int origin);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_AGENT_SERVE_H_
