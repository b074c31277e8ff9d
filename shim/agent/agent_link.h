// The agents' own links (agent.h has why they are not MPI's): TCP streams
// between an origin process and a target process's agent, one per pair, so
// that a pair's requests arrive in the order they were sent. Each agent
// listens on every IPv4 address of its host (an ephemeral port); the
// endpoints are exchanged over MPI once, at MPI_Init. A connection opens
// with a handshake (the job's token, the origin's world rank and the one
// whose agent it means), so an origin that reached some other process's
// port is refused rather than served (HelloAccepted). Frames are a 4-byte
// length and that many bytes.
#ifndef RMASHIM_SHIM_AGENT_AGENT_LINK_H_
#define RMASHIM_SHIM_AGENT_AGENT_LINK_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rmashim {

// Where a process's agent listens: its port and the host's IPv4 addresses
// (network byte order), loopback last.
struct AgentEndpoint {
  static constexpr int kMaxAddresses = 8;
  uint16_t port = 0;
  uint16_t count = 0;
  uint32_t addresses[kMaxAddresses] = {};
};

// What an origin sends first on a new connection.
struct AgentHello {
  uint64_t token = 0;
  int32_t origin = -1;  // world rank
  int32_t target = -1;  // the world rank whose agent it means to reach
};

// Whether the agent of world rank `self`, in a job of `world_size` ranks
// whose token is `token`, takes a connection that said `hello`: this job's
// token, one of its ranks as the origin, and this agent meant. The last
// matters: an address that every host has (loopback, a container bridge's
// 172.17.0.1) can lead an origin to an agent of the same job on its own
// host that listens on the same port number; refused, the origin tries
// the endpoint's next address.
bool HelloAccepted(const AgentHello& hello, uint64_t token, int self,
                   size_t world_size);

// A listening socket on every address of this host; fd -1 on failure.
struct AgentListener {
  int fd = -1;
  AgentEndpoint endpoint;
  bool Open();
  ~AgentListener();
};

// Options of every link, at both ends, from before its hello: no Nagle
// delay (each frame is a request or an answer someone waits for); and
// keep-alive probes, so that a peer host that goes silent (it crashed, the
// network is cut: no reset comes) while the link is idle, a wait for an
// answer included, ends the link as failed after two minutes (a lost link,
// agent.h) instead of never. Data left unacknowledged is the kernel's
// retransmission limit's (about 15 minutes by default). No limit on
// unacknowledged data beside it: Linux applies one to zero-window probes
// too, so a peer stopped in a debugger for longer would lose its links.
void SetLinkOptions(int fd);

// Connects to the agent at `peer` and says hello; the connected socket or
// -1 (every address refused, or the agent there is not the one meant).
// Until `patience` has passed (and the attempt under way then) it tries
// every address again, after a pause that doubles from 10 ms to 1 s:
// nothing was ever sent on a link not yet opened, so a later attempt
// overtakes nothing, and a failure here loses the link for good (agent.h),
// which a transient one must not (a listener's full queue when thousands of
// origins connect at once: the kernel drops their first SYNs). Each
// attempt waits at most 5 s to connect and 5 s for the answer, so a
// program that takes the connection at one address and says nothing (an
// address every host has, leading to this host) delays the next address
// only that long. A connection given up after its hello went out whole
// gets `farewell` (the goodbye frame an origin ends its links with,
// agent_state.h), so an agent that takes it late ends it as closed, not as
// a lost link that may have carried updates (agent_serve.h: EndLink).
inline constexpr std::chrono::milliseconds kConnectPatience{60'000};
int ConnectAgent(const AgentEndpoint& peer, const AgentHello& hello,
                 std::span<const std::byte> farewell,
                 std::chrono::milliseconds patience = kConnectPatience);

// Blocking whole reads and writes (retrying short ones and EINTR); false
// when the peer closed or an error occurred. A read given `on_wait` on a
// connection ConnectAgent opened calls it while nothing comes: after the
// socket's receive timeout first, then every kReadWakeUs (plus the
// thread's timer slack). The timeout (SO_RCVTIMEO, asked for kReadWakeUs)
// counts in scheduler ticks, 4-8 ms on Debian's kernel; what follows it
// waits in ppoll, as fine as asked, but a ppoll before every read made an
// answer's wake-up slower (lock + accumulate + unlock across the two-host
// tier 48-54 us against 34-37), so the first wait is a plain read.
inline constexpr long kReadWakeUs = 50;
bool WriteAll(int fd, const void* data, size_t bytes);
bool ReadAll(int fd, void* data, size_t bytes, void (*on_wait)() = nullptr);
// One frame: its length, then its bytes.
bool WriteFrame(int fd, const void* data, size_t bytes);
bool ReadFrame(int fd, std::vector<std::byte>* frame,
               void (*on_wait)() = nullptr);

// The agent's side of a link (agent_serve.cc): what one recv brings, cut into
// frames. An origin's burst of queued updates arrives in one or a few
// segments; one recv per wake-up takes all of it, where reading frame by
// frame cost two recv calls and an epoll_wait per frame. Bytes of a frame
// whose rest has not come yet wait in the reader (and only those: the
// readers of a thousand links hold nothing between bursts).
class FrameReader {
 public:
  // What `fd` has now (one recv without waiting); false when the peer
  // closed or the read failed.
  bool Receive(int fd);
  // The next whole frame received, valid until the next call; false when
  // no whole frame is left, or when a length is out of bounds (bad()).
  bool Next(std::span<const std::byte>* frame);
  bool bad() const { return bad_; }

 private:
  std::vector<std::byte> buffer_;
  size_t start_ = 0;  // the first byte not yet handed out
  bool bad_ = false;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_AGENT_LINK_H_
