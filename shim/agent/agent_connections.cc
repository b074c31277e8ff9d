// Connections to the agent before they are origins' links
// (agent_connections.h).
#include "shim/agent/agent_connections.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "shim/base/spin_wait.h"

namespace rmashim {

namespace {

constexpr uint64_t kOldHelloNs = 1'000'000'000;

void Close(int epoll, int fd) {
  epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
  close(fd);
}

}  // namespace

PendingHellos::~PendingHellos() {
  for (const auto& [fd, pending] : pending_) close(fd);
}

void PendingHellos::Accept(const AgentState& s, int epoll) {
  const int fd = accept4(s.listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) {
    // Out of descriptors: those that have waited a second for their hello
    // go (not younger ones, whose origins still send theirs: closed each
    // time the listener's event came first, no link would ever open); with
    // none to close, a pause, rather than spin on a listener that stays
    // readable.
    const uint64_t now = NowNs();
    if ((errno == EMFILE || errno == ENFILE) &&
        (now < kOldHelloNs ||
         CloseAcceptedBefore(epoll, now - kOldHelloNs) == 0)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return;
  }
  SetLinkOptions(fd);  // before the hello, which may never come
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.fd = fd;
  epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &e);
  pending_[fd] = Pending{.hello = {}, .bytes = 0, .accepted_ns = NowNs()};
}

bool PendingHellos::Read(const AgentState& s, int epoll, int fd, int* origin) {
  Pending& p = pending_.at(fd);
  auto* into = reinterpret_cast<char*>(&p.hello);
  ssize_t n;
  do {
    n = recv(fd, into + p.bytes, sizeof p.hello - p.bytes, MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
  if (n > 0) p.bytes += static_cast<size_t>(n);
  if (n > 0 && p.bytes < sizeof p.hello) return false;  // more to come
  const char yes = 1;
  const bool accepted =
      n > 0 &&
      HelloAccepted(p.hello, s.token, s.world_rank, s.endpoints.size()) &&
      WriteAll(fd, &yes, 1);
  if (accepted) {
    *origin = p.hello.origin;
  } else {
    Close(epoll, fd);
  }
  pending_.erase(fd);
  return accepted;
}

void PendingHellos::CloseStale(int epoll) {
  const uint64_t now = NowNs();
  if (now > kHelloWaitNs) CloseAcceptedBefore(epoll, now - kHelloWaitNs);
}

size_t PendingHellos::CloseAcceptedBefore(int epoll, uint64_t before_ns) {
  size_t closed = 0;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.accepted_ns < before_ns) {
      Close(epoll, it->first);
      it = pending_.erase(it);
      ++closed;
    } else {
      ++it;
    }
  }
  return closed;
}

}  // namespace rmashim
