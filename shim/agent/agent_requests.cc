// The origin's side of its links to agents (agent_requests.h): opening
// them, queueing and sending requests, awaiting answers, and losing a link
// for good when it fails.
#include "shim/agent/agent_requests.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <span>

#include "shim/agent/agent.h"
#include "shim/base/spin_wait.h"

namespace rmashim {

namespace {

// The link to `world_rank`'s agent fails for good: a frame may have been
// cut, and what it still carried may never arrive, so no new stream is
// opened in its place (one could overtake the old). Every later request
// to that agent fails at once (Exchange), updates that wait for no answer
// included, and the ends of fence and PSCW epochs fail here and tell it
// that updates may be lost (UpdateCount) instead of letting it wait.
// The caller holds s.origin_mutex.
void LoseLink(AgentState& s, int world_rank) {
  int& fd = s.links[world_rank];
  if (fd == kLinkLost) return;
  std::fprintf(stderr,
               "rmashim: agent: link to world rank %d's agent lost (from "
               "world rank %d)\n",
               world_rank, s.world_rank);
  if (fd >= 0) close(fd);
  fd = kLinkLost;
  s.queued[world_rank].clear();
}

// The link to `world_rank`'s agent, opened at first use; -1 when it
// cannot be reached (then lost: LoseLink). The caller holds
// s.origin_mutex.
int LinkTo(AgentState& s, int world_rank) {
  int& fd = s.links[world_rank];
  if (fd == kLinkLost) return -1;
  if (fd < 0) {
    const RequestHeader goodbye{.kind = RequestKind::kGoodbye};
    fd = ConnectAgent(s.endpoints[world_rank],
                      {s.token, s.world_rank, world_rank},
                      std::as_bytes(std::span(&goodbye, 1)));
    if (fd < 0) {
      std::fprintf(stderr,
                   "rmashim: agent: cannot reach world rank %d's agent\n",
                   world_rank);
      LoseLink(s, world_rank);
      return -1;
    }
  }
  return fd;
}

}  // namespace

void Enqueue(AgentState& s, int world_rank, const std::vector<std::byte>& msg) {
  std::vector<std::byte>& queue = s.queued[world_rank];
  const auto length = static_cast<uint32_t>(msg.size());
  const size_t at = queue.size();
  queue.resize(at + sizeof length + msg.size());
  std::memcpy(queue.data() + at, &length, sizeof length);
  std::memcpy(queue.data() + at + sizeof length, msg.data(), msg.size());
}

int SendQueued(AgentState& s, int world_rank) {
  std::vector<std::byte>& queue = s.queued[world_rank];
  const int fd = LinkTo(s, world_rank);
  if (fd < 0) {
    queue.clear();
    return -1;
  }
  if (!WriteAll(fd, queue.data(), queue.size())) {
    LoseLink(s, world_rank);
    return -1;
  }
  queue.clear();
  return fd;
}

namespace {

// Polls `fd` for AgentSpinNs before the caller blocks on it: most answers
// come within one round trip, and a thread woken from sleep adds its wake-up
// to each (a few microseconds more per round trip). True when readable.
bool AwaitReadable(int fd) {
  const uint64_t spin = AgentSpinNs();
  if (spin == 0) return false;
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  const uint64_t until = NowNs() + spin;
  do {
    if (poll(&p, 1, 0) > 0) return true;
    CpuRelax();
  } while (NowNs() < until);
  return false;
}

// The answer to the oldest unanswered request to `world_rank`'s agent,
// `reply_bytes` of it into `reply`; MPI_ERR_OTHER when the link is lost.
// `on_wait` as for ReadFrame.
int AwaitReply(AgentState& s, int world_rank, void* reply, int reply_bytes,
               void (*on_wait)() = nullptr) {
  const int fd = s.links[world_rank];
  if (fd < 0) return MPI_ERR_OTHER;
  AwaitReadable(fd);
  std::vector<std::byte> frame;
  if (!ReadFrame(fd, &frame, on_wait) ||
      frame.size() != static_cast<size_t>(reply_bytes)) {
    LoseLink(s, world_rank);
    return MPI_ERR_OTHER;
  }
  if (reply_bytes > 0) std::memcpy(reply, frame.data(), frame.size());
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
  return AwaitReply(s, world_rank, nullptr, 0, DriveProgress);
}

int Exchange(AgentState& s, int world_rank, const std::vector<std::byte>& msg,
             void* reply, int reply_bytes) {
  if (s.links[world_rank] == kLinkLost) return MPI_ERR_OTHER;
  Enqueue(s, world_rank, msg);
  if (reply_bytes < 0 && s.queued[world_rank].size() < kQueueBytes) {
    return MPI_SUCCESS;
  }
  if (SendQueued(s, world_rank) < 0) return MPI_ERR_OTHER;
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
  if (!s.running || world_rank < 0 ||
      static_cast<size_t>(world_rank) >= s.links.size()) {
    return MPI_ERR_OTHER;
  }
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  const int fd = LinkTo(s, world_rank);
  if (fd < 0) return MPI_ERR_OTHER;
  shutdown(fd, SHUT_RDWR);
  return MPI_SUCCESS;
}

}  // namespace rmashim
