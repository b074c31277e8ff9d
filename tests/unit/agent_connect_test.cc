// How an origin opens its link to an agent (shim/agent/agent_link.h:
// ConnectAgent), against listeners of this test's own on loopback: it
// tries again while nothing listens yet (a link that cannot be opened is
// lost for good, so a transient refusal must not end it), and takes only
// an answer that says yes, giving up after its patience.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "shim/agent/agent_link.h"

namespace rmashim {
namespace {

constexpr uint32_t kLoopback = 0x0100007f;  // 127.0.0.1, network order

// A listener on loopback: at `port`, or an ephemeral one (0).
int Listen(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(port);
  at.sin_addr.s_addr = kLoopback;
  if (bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 ||
      listen(fd, 8) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

uint16_t PortOf(int fd) {
  sockaddr_in at{};
  socklen_t len = sizeof at;
  getsockname(fd, reinterpret_cast<sockaddr*>(&at), &len);
  return ntohs(at.sin_port);
}

// Accepts one connection on `listener`, reads its hello and answers
// `answer` (0: closes without one); the hello it read.
AgentHello AnswerOne(int listener, char answer) {
  AgentHello hello;
  const int fd = accept(listener, nullptr, nullptr);
  if (fd < 0) return hello;
  if (ReadAll(fd, &hello, sizeof hello) && answer != 0) {
    WriteAll(fd, &answer, 1);
    char drop;
    (void)recv(fd, &drop, 1, 0);  // until the origin closes
  }
  close(fd);
  return hello;
}

TEST(AgentConnectTest, TriesAgainUntilTheAgentListens) {
  // A port nothing listens on yet: connections are refused until the
  // thread below listens there.
  int probe = Listen(0);
  ASSERT_GE(probe, 0);
  const uint16_t port = PortOf(probe);
  close(probe);
  AgentHello seen;
  std::thread agent([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const int listener = Listen(port);
    ASSERT_GE(listener, 0);
    seen = AnswerOne(listener, 1);
    close(listener);
  });
  AgentEndpoint peer;
  peer.port = port;
  peer.addresses[peer.count++] = kLoopback;
  const auto start = std::chrono::steady_clock::now();
  const int fd = ConnectAgent(peer, {.token = 42, .origin = 1, .target = 2});
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(fd, 0) << "refused connections ended the attempt";
  EXPECT_GE(waited, std::chrono::milliseconds(300));
  if (fd >= 0) close(fd);
  agent.join();
  EXPECT_EQ(seen.token, 42u);
  EXPECT_EQ(seen.origin, 1);
  EXPECT_EQ(seen.target, 2);
}

// A listener that answers one hello with `answer` (0: closes without one),
// then listens no more: ConnectAgent must fail, within its patience.
void ExpectRefusedWhenAnswered(char answer) {
  const int listener = Listen(0);
  ASSERT_GE(listener, 0);
  std::thread agent([&] {
    AnswerOne(listener, answer);
    close(listener);
  });
  AgentEndpoint peer;
  peer.port = PortOf(listener);
  peer.addresses[peer.count++] = kLoopback;
  constexpr std::chrono::seconds kPatience{1};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(
      ConnectAgent(peer, {.token = 1, .origin = 0, .target = 0}, kPatience),
      -1);
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            kPatience + std::chrono::seconds(2));
  agent.join();
}

TEST(AgentConnectTest, AHelloTheListenerClosesOnIsNoLink) {
  ExpectRefusedWhenAnswered(0);
}

TEST(AgentConnectTest, TakesOnlyAYes) { ExpectRefusedWhenAnswered(2); }

}  // namespace
}  // namespace rmashim
