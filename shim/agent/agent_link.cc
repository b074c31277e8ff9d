// TCP links between origins and agents (agent_link.h).
#include "shim/agent/agent_link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace rmashim {
namespace {

constexpr int kConnectTimeoutMs = 5000;
constexpr uint32_t kMaxFrame = 1u << 30;

// Connects `fd` to `address:port` within the timeout.
bool ConnectWithin(int fd, uint32_t address, uint16_t port) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = address;
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = poll(&p, 1, kConnectTimeoutMs) == 1 ? 0 : -1;
    int error = 0;
    socklen_t len = sizeof error;
    if (rc == 0 && (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 ||
                    error != 0)) {
      rc = -1;
    }
  }
  fcntl(fd, F_SETFL, flags);
  return rc == 0;
}

}  // namespace

bool AgentListener::Open() {
  fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof any;
  if (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0 ||
      listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&any), &len) != 0) {
    close(fd);
    fd = -1;
    return false;
  }
  endpoint.port = ntohs(any.sin_port);
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET ||
          !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK) ||
          endpoint.count >= AgentEndpoint::kMaxAddresses - 1) {
        continue;
      }
      endpoint.addresses[endpoint.count++] =
          reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
    }
    freeifaddrs(list);
  }
  endpoint.addresses[endpoint.count++] = htonl(INADDR_LOOPBACK);
  return true;
}

void SetLinkOptions(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  constexpr int kIdleS = 60, kProbeIntervalS = 10, kProbes = 6;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kIdleS, sizeof kIdleS);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kProbeIntervalS,
             sizeof kProbeIntervalS);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kProbes, sizeof kProbes);
}

AgentListener::~AgentListener() {
  if (fd >= 0) close(fd);
}

bool HelloAccepted(const AgentHello& hello, uint64_t token, int self,
                   size_t world_size) {
  return hello.token == token && hello.origin >= 0 &&
         static_cast<size_t>(hello.origin) < world_size && hello.target == self;
}

namespace {

// The agent's one-byte yes to a hello, within `ms`: an agent that refused
// it closes the connection, and some other program that took it may say
// nothing at all.
bool AcceptedWithin(int fd, int ms) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  int ready;
  do {
    ready = poll(&p, 1, ms);
  } while (ready < 0 && errno == EINTR);
  char yes = 0;
  return ready == 1 && recv(fd, &yes, 1, 0) == 1 && yes == 1;
}

// One attempt at one address, its answer awaited `answer_ms`; the
// connected socket or -1. A connection given up after its whole hello went
// out gets `farewell` first (ConnectAgent says why).
int ConnectOnce(uint32_t address, uint16_t port, const AgentHello& hello,
                std::span<const std::byte> farewell, int answer_ms) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  SetLinkOptions(fd);  // before the hello: its answer may never come
  if (ConnectWithin(fd, address, port) && WriteAll(fd, &hello, sizeof hello)) {
    if (AcceptedWithin(fd, answer_ms)) {
      // A blocked read wakes every kReadWakeUs to let the caller's on_wait
      // run (ReadAll): the origin lets MPI progress while a grant waits.
      const timeval wake{0, kReadWakeUs};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wake, sizeof wake);
      return fd;
    }
    // Into an empty send buffer: never blocks.
    (void)WriteFrame(fd, farewell.data(), farewell.size());
  }
  close(fd);
  return -1;
}

}  // namespace

int ConnectAgent(const AgentEndpoint& peer, const AgentHello& hello,
                 std::span<const std::byte> farewell,
                 std::chrono::milliseconds patience) {
  using Clock = std::chrono::steady_clock;
  patience = std::max(patience, std::chrono::milliseconds(0));
  const Clock::time_point give_up = Clock::now() + patience;
  const auto answer_ms = static_cast<int>(
      std::min(std::chrono::milliseconds(kConnectTimeoutMs), patience).count());
  for (auto pause = std::chrono::milliseconds(10);;
       pause = std::min(2 * pause, std::chrono::milliseconds(1000))) {
    for (int i = 0; i < peer.count; ++i) {
      if (const int fd = ConnectOnce(peer.addresses[i], peer.port, hello,
                                     farewell, answer_ms);
          fd >= 0) {
        return fd;
      }
      if (Clock::now() >= give_up) return -1;
    }
    if (Clock::now() + pause > give_up) return -1;
    std::this_thread::sleep_for(pause);
  }
}

bool WriteAll(int fd, const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t bytes, void (*on_wait)()) {
  auto* p = static_cast<char*>(data);
  bool timed_out = false;  // once: from then on wait in ppoll
  while (bytes > 0) {
    if (timed_out && on_wait != nullptr) {
      pollfd readable{.fd = fd, .events = POLLIN, .revents = 0};
      const timespec wake{0, kReadWakeUs * 1000};
      const int ready = ppoll(&readable, 1, &wake, nullptr);
      if (ready < 0 && errno != EINTR) return false;
      if (ready == 0) on_wait();
      if (ready <= 0) continue;  // nothing yet, or EINTR
    }
    const ssize_t n = recv(fd, p, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {  // SO_RCVTIMEO
      timed_out = true;
      if (on_wait != nullptr) on_wait();
      continue;
    }
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// One sendmsg for the length and the bytes, so a small frame leaves in one
// segment (TCP_NODELAY would send the length alone first); the rest, if
// the kernel took only part, by WriteAll.
bool WriteFrame(int fd, const void* data, size_t bytes) {
  if (bytes >= kMaxFrame) return false;
  const auto length = static_cast<uint32_t>(bytes);
  iovec parts[2] = {{const_cast<uint32_t*>(&length), sizeof length},
                    {const_cast<void*>(data), bytes}};
  msghdr m{};
  m.msg_iov = parts;
  m.msg_iovlen = bytes > 0 ? 2 : 1;
  ssize_t sent;
  do {
    sent = sendmsg(fd, &m, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return false;
  const size_t total = sizeof length + bytes;
  if (static_cast<size_t>(sent) == total) return true;
  if (static_cast<size_t>(sent) < sizeof length) {
    return WriteAll(fd, reinterpret_cast<const char*>(&length) + sent,
                    sizeof length - sent) &&
           WriteAll(fd, data, bytes);
  }
  return WriteAll(fd, static_cast<const char*>(data) + (sent - sizeof length),
                  total - sent);
}

bool ReadFrame(int fd, std::vector<std::byte>* frame, void (*on_wait)()) {
  uint32_t length = 0;
  if (!ReadAll(fd, &length, sizeof length, on_wait) || length >= kMaxFrame) {
    return false;
  }
  frame->resize(length);
  return ReadAll(fd, frame->data(), length, on_wait);
}

bool FrameReader::Receive(int fd) {
  constexpr size_t kChunk = size_t{64} * 1024;  // the origins' queue size
  static thread_local std::vector<std::byte> scratch(kChunk);
  ssize_t n;
  do {
    n = recv(fd, scratch.data(), scratch.size(), MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n == 0) return false;
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
  buffer_.erase(buffer_.begin(),
                buffer_.begin() + static_cast<ptrdiff_t>(start_));
  start_ = 0;
  buffer_.insert(buffer_.end(), scratch.begin(), scratch.begin() + n);
  return true;
}

bool FrameReader::Next(std::span<const std::byte>* frame) {
  uint32_t length = 0;
  const size_t left = buffer_.size() - start_;
  if (left < sizeof length) {
    if (left == 0 && buffer_.capacity() > 4096) {
      std::vector<std::byte>().swap(buffer_);  // nothing held between bursts
      start_ = 0;
    }
    return false;
  }
  std::memcpy(&length, buffer_.data() + start_, sizeof length);
  if (length >= kMaxFrame) {
    bad_ = true;
    return false;
  }
  if (left - sizeof length < length) return false;
  *frame = {buffer_.data() + start_ + sizeof length, length};
  start_ += sizeof length + length;
  return true;
}

}  // namespace rmashim
