// Connections to the agent before they are origins' links (agent.cc's loop):
// accepted, their hellos read as they come, and closed when a hello is
// refused or never comes whole. The agent never waits for a hello: a
// connection that sends nothing (a port scanner, an origin gone or given up
// before its hello) must hold up no origin's requests, and one that lingers
// must not keep its descriptor for good. Internal to the agent's files.
#ifndef RMASHIM_SHIM_AGENT_AGENT_CONNECTIONS_H_
#define RMASHIM_SHIM_AGENT_AGENT_CONNECTIONS_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "shim/agent/agent_link.h"
#include "shim/agent/agent_state.h"

namespace rmashim {

class PendingHellos {
 public:
  // How long a connection may take to say its hello whole. Longer than an
  // origin waits for the answer (agent_link.cc: ConnectAgent), so no origin
  // that still waits loses its connection here.
  static constexpr uint64_t kHelloWaitNs = 10'000'000'000;

  PendingHellos() = default;
  PendingHellos(const PendingHellos&) = delete;
  PendingHellos& operator=(const PendingHellos&) = delete;
  ~PendingHellos();  // closes those still pending

  // Accepts a connection waiting on the listener and adds it to `epoll`.
  // Out of descriptors, it closes the pending connections that have waited
  // a second, or pauses a millisecond (the listener would otherwise stay
  // readable and the loop spin).
  void Accept(const AgentState& s, int epoll);
  bool Has(int fd) const { return pending_.contains(fd); }
  // Reads what came of `fd`'s hello, without waiting. True once it is whole
  // and accepted (HelloAccepted): the origin has been told yes, `fd` is the
  // caller's link from world rank *origin, no longer pending. A refused
  // hello or a close before it ends the connection here (no origin's link:
  // nothing lost).
  bool Read(const AgentState& s, int epoll, int fd, int* origin);
  // Closes the connections accepted more than kHelloWaitNs ago.
  void CloseStale(int epoll);
  // Whether any is pending (the loop then wakes now and then to close
  // stale ones).
  bool empty() const { return pending_.empty(); }

 private:
  struct Pending {
    AgentHello hello;
    size_t bytes = 0;  // of `hello`, received so far
    uint64_t accepted_ns = 0;
  };
  // Closes those accepted before `before_ns`; how many.
  size_t CloseAcceptedBefore(int epoll, uint64_t before_ns);

  std::unordered_map<int, Pending> pending_;  // by descriptor
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_AGENT_CONNECTIONS_H_
