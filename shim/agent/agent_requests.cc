// The origin's side of its links to agents (agent_requests.h): queueing
// and sending requests, awaiting answers, and losing a link for good when
// it fails.
#include "shim/agent/agent_requests.h"

#include <cstring>

#include "shim/agent/agent.h"

namespace rmashim {

void Enqueue(AgentState& s, int world_rank, const std::vector<std::byte>& msg) {
  std::vector<std::byte>& queue = s.queued[world_rank];
  const auto length = static_cast<uint32_t>(msg.size());
  const size_t at = queue.size();
  queue.resize(at + sizeof length + msg.size());
  std::memcpy(queue.data() + at, &length, sizeof length);
  std::memcpy(queue.data() + at + sizeof length, msg.data(), msg.size());
}

bool SendQueued(AgentState& s, int world_rank) {
  std::vector<std::byte>& queue = s.queued[world_rank];
  const bool sent = s.transport->Send(world_rank, std::move(queue));
  queue.clear();
  return sent;
}

namespace {

void ServeWhileWaiting() { ServeArrived(TheAgent()); }

}  // namespace

bool ReceiveStandingIn(AgentState& s, int world_rank, AgentAnswer* answer,
                       void (*periodic)(), uint64_t spin_ns) {
  const AgentStandIn stand_in;
  const AgentTransport::WaitCalls calls{
      .periodic = periodic,
      .arrived = stand_in.serves() ? ServeWhileWaiting : nullptr};
  return s.transport->Receive(world_rank, answer, calls, spin_ns);
}

bool FlushRmaStandingIn(AgentState& s, int world_rank) {
  const AgentStandIn stand_in;
  const AgentTransport::WaitCalls calls{
      .arrived = stand_in.serves() ? ServeWhileWaiting : nullptr};
  return s.transport->FlushRma(world_rank, calls, AgentAnswerSpinNs());
}

namespace {

// The answer to the oldest unanswered request to `world_rank`'s agent,
// `reply_bytes` of it into `reply`; the agent's error where it refused the
// request, MPI_ERR_OTHER when the link is lost (or lost now: an answer of
// another size than asked means the two ends disagree). `periodic` as for
// AgentTransport::WaitCalls.
int AwaitReply(AgentState& s, int world_rank, void* reply, int reply_bytes,
               void (*periodic)() = nullptr,
               uint64_t spin_ns = AgentAnswerSpinNs()) {
  AgentAnswer answer;
  if (!ReceiveStandingIn(s, world_rank, &answer, periodic, spin_ns)) {
    return MPI_ERR_OTHER;
  }
  if (answer.status != MPI_SUCCESS) return answer.status;
  if (answer.bytes.size() != static_cast<size_t>(reply_bytes)) {
    s.transport->LoseLinkTo(world_rank);
    return MPI_ERR_OTHER;
  }
  if (reply_bytes > 0) std::memcpy(reply, answer.bytes.data(), reply_bytes);
  return MPI_SUCCESS;
}

}  // namespace

int AwaitEach(AgentState& s, const std::vector<int>& world_ranks) {
  int rc = MPI_SUCCESS;
  for (const int world_rank : world_ranks) {
    const int got = AwaitReply(s, world_rank, nullptr, 0);
    if (rc == MPI_SUCCESS) rc = got;
  }
  return rc;
}

int AwaitGrant(AgentState& s, int world_rank) {
  return AwaitReply(s, world_rank, nullptr, 0, DriveProgress,
                    AgentGrantSpinNs());
}

int Exchange(AgentState& s, int world_rank, const std::vector<std::byte>& msg,
             void* reply, int reply_bytes) {
  if (s.transport->LinkToLost(world_rank)) return MPI_ERR_OTHER;
  Enqueue(s, world_rank, msg);
  if (reply_bytes < 0 && s.queued[world_rank].size() < kQueueBytes) {
    return MPI_SUCCESS;
  }
  if (!SendQueued(s, world_rank)) return MPI_ERR_OTHER;
  return reply_bytes < 0 ? MPI_SUCCESS
                         : AwaitReply(s, world_rank, reply, reply_bytes);
}

std::vector<std::byte> Message(const RequestHeader& h, size_t body_bytes) {
  std::vector<std::byte> msg(sizeof h + body_bytes);
  std::memcpy(msg.data(), &h, sizeof h);
  return msg;
}

int AgentFailLink(int world_rank, bool agent_end) {
  if (agent_end) return FailLinkFrom(world_rank);
  AgentState& s = TheAgent();
  if (!s.running || world_rank < 0 || world_rank >= s.world_size ||
      world_rank == s.world_rank) {
    return MPI_ERR_OTHER;
  }
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  if (s.transport->LinkToLost(world_rank)) return MPI_ERR_OTHER;
  s.transport->BreakLinkTo(world_rank);
  return MPI_SUCCESS;
}

int AgentSendForged(int world_rank, int claimed_origin, uint64_t token_xor,
                    std::span<const std::byte> frames) {
  AgentState& s = TheAgent();
  if (!s.running || world_rank < 0 || world_rank >= s.world_size) {
    return MPI_ERR_OTHER;
  }
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  // What is queued for that agent goes first, in its turn.
  if (!s.queued[world_rank].empty() && !SendQueued(s, world_rank)) {
    return MPI_ERR_OTHER;
  }
  return s.transport->SendForged(world_rank, claimed_origin, token_xor, frames)
             ? MPI_SUCCESS
             : MPI_ERR_OTHER;
}

}  // namespace rmashim
