// The agents' transport: ordered, reliable messages between an origin
// process and a target process's agent, and the agents' answers back. One
// small interface, so that a second engine (libfabric, for Slingshot or
// EFA) can stand beside the one built on UCX (ucx_transport.cc), which
// agent.h argues for. Internal to the agent's files.
//
// What it promises the agent (agent.h, "Protocol"):
//  - a batch of requests that an origin sends one agent arrives whole and
//    in the order it was sent with respect to that origin's other batches
//    to that agent; the agent's answers to one origin arrive in the order
//    they were given;
//  - every batch names its sender, and carries the job's token: a batch
//    with another token, or from no rank of the job, is dropped and
//    counted (rejected()), never handed to the agent;
//  - a link (one origin process to one agent) that fails is lost for
//    good: every later send on it fails, an answer awaited on it fails,
//    and the agent is told (TakeLostLink), because what it still carried
//    may never arrive. A peer process that dies loses both directions.
#ifndef RMASHIM_SHIM_AGENT_AGENT_TRANSPORT_H_
#define RMASHIM_SHIM_AGENT_AGENT_TRANSPORT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace rmashim {

// A batch of requests that arrived at this process's agent from `origin`
// (a world rank): frames, each a 4-byte length and that many bytes.
struct ArrivedBatch {
  int origin = -1;
  std::vector<std::byte> frames;
};

// An answer from an agent: MPI_SUCCESS, or the MPI error the agent gives a
// request it would not apply, and its bytes.
struct AgentAnswer {
  int status = 0;
  std::vector<std::byte> bytes;
};

class AgentTransport {
 public:
  virtual ~AgentTransport() = default;

  // Collective over MPI_COMM_WORLD (its addresses are exchanged over it):
  // the transport of this process, or nullptr on every rank when one rank
  // cannot open it. `token` is the job's, the same on every rank.
  static std::unique_ptr<AgentTransport> Open(int world_rank, int world_size,
                                              uint64_t token);
  // Collective over MPI_COMM_WORLD, once no rank sends any more: closes
  // every link without reporting any as lost.
  virtual void Close() = 0;

  // Origin side; the caller holds AgentState::origin_mutex.
  //
  // Sends `frames` (length-prefixed) to world rank `agent`'s agent; false
  // when the link is lost. Complete at the origin on return: the bytes are
  // the transport's.
  virtual bool Send(int agent, std::vector<std::byte>&& frames) = 0;
  // What a wait of the origin's (Receive, FlushRma) calls meanwhile, when
  // given: `periodic` about every kWaitCallbackNs; `arrived` after it took
  // in requests for this process's agent, which the waiting thread may then
  // serve (agent.h: AgentStandIn).
  static constexpr uint64_t kWaitCallbackNs = 50'000;
  struct WaitCalls {
    void (*periodic)() = nullptr;
    void (*arrived)() = nullptr;
  };
  // The oldest answer from `agent`'s agent not yet taken, waited for
  // (polling for `spin_ns`, then asleep between looks); false when the link
  // is lost before it came.
  virtual bool Receive(int agent, AgentAnswer* answer, const WaitCalls& calls,
                       uint64_t spin_ns) = 0;
  // Whether `agent`'s agent can be reached: its endpoint made now, if not
  // yet (false where UCX has no transport to it, or the link is lost).
  virtual bool Reaches(int agent) = 0;
  // Whether the link to `agent`'s agent is lost.
  virtual bool LinkToLost(int agent) const = 0;
  // Loses the link to `agent`'s agent now (an answer that makes no
  // sense); the agent learns of it as of a failed link.
  virtual void LoseLinkTo(int agent) = 0;
  // Tests: breaks the link to `agent`'s agent as a network failure would:
  // the agent learns of it at once, this origin at its next send or wait
  // for an answer on it (what was queued until then is lost with it).
  virtual void BreakLinkTo(int agent) = 0;

  // One-sided RMA, origin side (under AgentState::origin_mutex, but for
  // Register): put and get of contiguous bytes straight into a peer's
  // registered memory, without its agent where the network does RMA in
  // hardware (agent_rma.cc has why). No atomics: every update of window
  // memory stays the CPU's (agent.h).
  //
  // This process's memory registered for its peers' puts and gets, and the
  // key they need for it (packed), until destroyed.
  class Registration {
   public:
    virtual ~Registration() = default;
    virtual std::span<const std::byte> key() const = 0;
  };
  virtual std::unique_ptr<Registration> Register(void* base, size_t bytes) = 0;
  // A peer's packed key made usable here; nullptr where it cannot be.
  class RemoteKey {
   public:
    virtual ~RemoteKey() = default;
  };
  virtual std::unique_ptr<RemoteKey> Unpack(int peer,
                                            std::span<const std::byte> key) = 0;
  // Starts a put of `bytes` from `from` to `remote` in `peer`'s memory, or a
  // get into `to`; complete at the next FlushRma(peer). False when the link
  // to `peer` is lost. With `not_now`, a put only where it completes at the
  // origin at once (`from` free again on return); *not_now says when it
  // could not, and nothing was started.
  virtual bool Put(int peer, RemoteKey& key, uint64_t remote, const void* from,
                   size_t bytes, bool* not_now) = 0;
  virtual bool Get(int peer, RemoteKey& key, uint64_t remote, void* to,
                   size_t bytes) = 0;
  // Returns once every put and get started to `peer` is complete there
  // (waiting as Receive does); false (the link then lost) when one failed.
  virtual bool FlushRma(int peer, const WaitCalls& calls, uint64_t spin_ns) = 0;

  // Agent side; the caller holds AgentState::serve_mutex.
  //
  // A descriptor that becomes readable when something may have arrived,
  // once PrepareToSleep said true. The agent sleeps on it at most
  // kMaxSleepNs at a time: a peer on this host is found gone by looking.
  static constexpr long kMaxSleepNs = 1'000'000'000;
  virtual int wait_fd() const = 0;
  // Whether the agent may sleep on wait_fd now: false when something
  // arrived that Progress has not taken in yet.
  virtual bool PrepareToSleep() = 0;
  // Whether requests or lost links were taken in that TakeArrived and
  // TakeLostLink have not given out yet (any thread; a hint, without a
  // lock).
  virtual bool HasArrivals() const = 0;
  // Takes in what has arrived, without waiting (any thread).
  virtual void Progress() = 0;
  // The next batch taken in, in each origin's order; false when none.
  virtual bool TakeArrived(ArrivedBatch* batch) = 0;
  // A link from an origin that was lost since the last call; false when
  // none. Each is told once.
  virtual bool TakeLostLink(int* origin) = 0;
  // Answers `origin`'s oldest request that waits for one; false when the
  // link is lost.
  virtual bool Answer(int origin, int status,
                      std::span<const std::byte> bytes) = 0;
  // Loses the link from `origin`, as a network failure would: the origin's
  // requests after it are dropped and its awaited answers fail.
  virtual void LoseLinkFrom(int origin) = 0;

  // Batches dropped before the agent saw them (another job's token, no
  // rank of this job, a malformed message).
  virtual long long rejected() const = 0;

  // Tests: sends `frames` to `agent`'s agent as if from `claimed_origin`
  // with the job's token XORed with `token_xor`; false when it could not be
  // sent.
  virtual bool SendForged(int agent, int claimed_origin, uint64_t token_xor,
                          std::span<const std::byte> frames) = 0;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_AGENT_TRANSPORT_H_
