// The origin's side of its links to agents, for the origin's calls
// (agent_origin.cc) and the ends of fence and PSCW epochs
// (agent_epoch_ends.cc); agent.h has the protocol. A link fails for good
// (agent_requests.cc: LoseLink): every request on it fails from then on.
// Every function here expects the caller to hold s.origin_mutex. Internal
// to the agent's files.
#ifndef RMASHIM_SHIM_AGENT_AGENT_REQUESTS_H_
#define RMASHIM_SHIM_AGENT_AGENT_REQUESTS_H_

#include <cstddef>
#include <vector>

#include "shim/agent/agent_state.h"

namespace rmashim {

// Appends one request to those queued for the agent of `world_rank`.
void Enqueue(AgentState& s, int world_rank, const std::vector<std::byte>& msg);

// Sends what is queued for `world_rank`'s agent; false when the link is
// lost.
bool SendQueued(AgentState& s, int world_rank);

// The transport's waits for an answer from `world_rank`'s agent
// (AgentTransport::Receive) and for its puts and gets there to complete
// (FlushRma), with the waiting thread standing in for this process's
// agent meanwhile (agent.h: AgentStandIn): it serves what arrives for it,
// and the agent's thread leaves the transport unarmed, so an answer costs
// the sender no signal and this process no second thread's wake-up.
bool ReceiveStandingIn(AgentState& s, int world_rank, AgentAnswer* answer,
                       void (*periodic)(), uint64_t spin_ns);
bool FlushRmaStandingIn(AgentState& s, int world_rank);

// The empty answers to one request sent to each agent of `world_ranks`;
// the first error.
int AwaitEach(AgentState& s, const std::vector<int>& world_ranks);

// Waits for an answer that may take long (a lock's grant) from
// `world_rank`'s agent, letting MPI progress meanwhile
// (AgentTransport::Receive's on_wait): the holders this lock waits for may
// be completing operations they handed to MPI at this process, which over
// emulated RMA need this process to enter MPI, as a node-local waiter's
// spin does (spin_wait.h).
int AwaitGrant(AgentState& s, int world_rank);

// One request to the agent of `world_rank`, and its reply into `reply`
// (`reply_bytes`) when `reply_bytes` >= 0; otherwise it stays queued until
// kQueueBytes gather or a request that waits goes out. A lost link is an
// error of the call (MPI_ERR_OTHER), never a silent loss.
int Exchange(AgentState& s, int world_rank, const std::vector<std::byte>& msg,
             void* reply, int reply_bytes);

// A request: `h`, then `body_bytes` for the caller to fill.
std::vector<std::byte> Message(const RequestHeader& h, size_t body_bytes);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_AGENT_REQUESTS_H_
