// How an origin opens its link to an agent (shim/agent/agent_link.h:
// ConnectAgent), against listeners of this test's own on loopback: it
// tries again while nothing listens yet (a link that cannot be opened is
// lost for good, so a transient refusal must not end it), takes a late
// yes, ends a connection it gives up after its hello with the farewell
// frame, takes only an answer that says yes, and gives up after its
// patience.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "shim/agent/agent_link.h"

namespace rmashim {
namespace {

constexpr uint32_t kLoopback = 0x0100007f;  // 127.0.0.1, network order
constexpr char kFarewell[] = "farewell";
const auto kFarewellBytes =
    std::as_bytes(std::span(kFarewell, sizeof kFarewell));

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
// `answer` after `delay` (0: closes without one); the hello it read.
AgentHello AnswerOne(int listener, char answer,
                     std::chrono::milliseconds delay = {}) {
  AgentHello hello;
  const int fd = accept(listener, nullptr, nullptr);
  if (fd < 0) return hello;
  if (ReadAll(fd, &hello, sizeof hello) && answer != 0) {
    std::this_thread::sleep_for(delay);
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
  const int fd = ConnectAgent(peer, {.token = 42, .origin = 1, .target = 2},
                              kFarewellBytes);
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
  constexpr std::chrono::milliseconds kPatience{1000};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ConnectAgent(peer, {.token = 1, .origin = 0, .target = 0},
                         kFarewellBytes, kPatience),
            -1);
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            kPatience + std::chrono::seconds(2));
  agent.join();
}

TEST(AgentConnectTest, AHelloTheListenerClosesOnIsNoLink) {
  ExpectRefusedWhenAnswered(0);
}

TEST(AgentConnectTest, TakesOnlyAYes) { ExpectRefusedWhenAnswered(2); }

TEST(AgentConnectTest, TakesALateYes) {
  const int listener = Listen(0);
  ASSERT_GE(listener, 0);
  std::thread agent([&] {
    AnswerOne(listener, 1, std::chrono::milliseconds(500));
    close(listener);
  });
  AgentEndpoint peer;
  peer.port = PortOf(listener);
  peer.addresses[peer.count++] = kLoopback;
  const int fd = ConnectAgent(peer, {.token = 1, .origin = 0, .target = 0},
                              kFarewellBytes, std::chrono::milliseconds(2000));
  EXPECT_GE(fd, 0);
  if (fd >= 0) close(fd);
  agent.join();
}

// An agent too slow to answer: the origin gives the connection up after
// its answer wait (here its whole patience) and says farewell on it, a
// frame the agent reads after the hello when it gets to it.
TEST(AgentConnectTest, SaysFarewellOnAConnectionItGivesUp) {
  const int listener = Listen(0);
  ASSERT_GE(listener, 0);
  AgentEndpoint peer;
  peer.port = PortOf(listener);
  peer.addresses[peer.count++] = kLoopback;
  std::thread origin([&] {
    EXPECT_EQ(ConnectAgent(peer, {.token = 1, .origin = 0, .target = 0},
                           kFarewellBytes, std::chrono::milliseconds(300)),
              -1);
  });
  origin.join();  // given up, unanswered: the listener never accepted
  const int fd = accept(listener, nullptr, nullptr);
  ASSERT_GE(fd, 0);
  AgentHello hello;
  ASSERT_TRUE(ReadAll(fd, &hello, sizeof hello));
  // A late agent's yes, to a socket its origin has closed (which resets
  // the connection): what the origin sent before stays readable.
  const char yes = 1;
  (void)send(fd, &yes, 1, MSG_NOSIGNAL);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<std::byte> frame;
  ASSERT_TRUE(ReadFrame(fd, &frame));
  ASSERT_EQ(frame.size(), sizeof kFarewell);
  EXPECT_EQ(std::memcmp(frame.data(), kFarewell, sizeof kFarewell), 0);
  close(fd);
  close(listener);
}

}  // namespace
}  // namespace rmashim
