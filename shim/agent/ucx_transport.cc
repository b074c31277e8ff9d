// The agents' transport on UCX (agent_transport.h; agent.h has why): a
// context and one worker of the shim's own per process, apart from
// MPICH's, so that the transport UCX picks for each peer (shared memory
// between the processes of a host, verbs on InfiniBand and RoCE, TCP) and
// its settings (UCX_TLS, UCX_NET_DEVICES) are the ones MPI runs on.
//
// Messages are UCX active messages, small ones eager and large ones by
// UCX's rendezvous protocol (one zero-copy transfer: cross-memory attach on
// one host, RDMA where the network has it), whose data comes after its
// handler ran (Take):
//  - kRequestAm: a batch of an origin's requests, header RequestBatch;
//  - kAnswerAm: an agent's answer, header AnswerHeader;
//  - kLostAm: one end tells the other that it lost their link.
// Every header carries the job's token and its sender's world rank, and a
// batch or an answer its sequence number on its link: what comes early (a
// message behind a rendezvous still under way) waits aside until its
// turn, so the order holds, and what claims another job, no rank of this
// one, or a turn already taken is dropped.
//
// Threads. The worker is UCS_THREAD_MODE_MULTI: origin threads send and
// wait for answers on it (under AgentState::origin_mutex) while the
// agent's thread, or a waiter serving in its place, takes requests in and
// answers them (under serve_mutex). Handlers run in whichever thread
// progresses the worker, and touch only what mutex_ guards (never held
// across a UCX call); so a request one thread takes in wakes the agent's
// thread through arrived_fd_, and an answer the agent's thread takes in
// wakes the origin that waits for it through answer_fd_.
//
// Endpoints are created at the first message to a peer, from the worker
// addresses exchanged at Open (memory: the world's addresses, a few
// hundred bytes each), with UCX's peer error handling for peers on other
// hosts (EndpointTo says why not on this one, where a gone peer is found
// by its pid): a peer that fails loses both of its links with this
// process. Nothing here grows per peer but those endpoints and the
// addresses: no descriptor, no thread.
#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "shim/agent/agent_transport.h"
#include "shim/base/spin_wait.h"

namespace rmashim {
namespace {

enum AmId : unsigned { kRequestAm = 0x52, kAnswerAm = 0x53, kLostAm = 0x54 };

struct RequestBatch {
  uint64_t token = 0;
  int32_t origin = -1;  // world rank
  uint32_t seq = 0;     // on the link from origin to this agent
};

struct AnswerHeader {
  uint64_t token = 0;
  int32_t agent = -1;  // world rank
  uint32_t seq = 0;    // on the link from this origin to that agent
  int32_t status = 0;
  int32_t pad = 0;
};

// kLostAm: which of the two links between sender and receiver is lost.
struct LostHeader {
  uint64_t token = 0;
  int32_t sender = -1;
  int32_t link = 0;  // kSendersLink: sender -> receiver's agent; else back
};
constexpr int32_t kSendersLink = 0, kReceiversLink = 1;

// More early arrivals than this on one link: not this job's traffic.
constexpr size_t kMaxEarly = 4096;

// A message in flight: its header and bytes live until UCX is done.
struct InFlight {
  union {
    RequestBatch request;
    AnswerHeader answer;
    LostHeader lost;
  } header{};
  size_t header_bytes = 0;
  std::vector<std::byte> data;
  class UcxTransport* transport = nullptr;
  int peer = -1;
  bool to_agent = false;  // a request: its failure loses the link there
};

struct Rendezvous;

class UcxTransport final : public AgentTransport {
 public:
  UcxTransport(int world_rank, int world_size, uint64_t token)
      : self_(world_rank), token_(token), peers_(world_size) {
    for (int r = 0; r < world_size; ++r) {
      peers_[r].owner = this;
      peers_[r].rank = r;
    }
  }
  ~UcxTransport() override { Destroy(); }

  bool Init();
  bool ExchangeAddresses();
  void Close() override;

  bool Send(int agent, std::vector<std::byte>&& frames) override;
  bool Receive(int agent, AgentAnswer* answer, const WaitCalls& calls,
               uint64_t spin_ns) override;
  bool Reaches(int agent) override {
    return Valid(agent) && !peers_[agent].to_lost.load() &&
           EndpointTo(agent) != nullptr;
  }
  bool LinkToLost(int agent) const override {
    return peers_[agent].to_lost.load();
  }
  void LoseLinkTo(int agent) override;
  void BreakLinkTo(int agent) override;

  int wait_fd() const override { return agent_epoll_; }
  bool PrepareToSleep() override;
  bool HasArrivals() const override {
    return arrivals_.load(std::memory_order_relaxed);
  }
  void Progress() override;
  bool TakeArrived(ArrivedBatch* batch) override;
  bool TakeLostLink(int* origin) override;
  bool Answer(int origin, int status,
              std::span<const std::byte> bytes) override;
  void LoseLinkFrom(int origin) override;
  long long rejected() const override { return rejected_.load(); }
  bool SendForged(int agent, int claimed_origin, uint64_t token_xor,
                  std::span<const std::byte> frames) override;

  std::unique_ptr<Registration> Register(void* base, size_t bytes) override;
  std::unique_ptr<RemoteKey> Unpack(int peer,
                                    std::span<const std::byte> key) override;
  bool Put(int peer, RemoteKey& key, uint64_t remote, const void* from,
           size_t bytes, bool* not_now) override;
  bool Get(int peer, RemoteKey& key, uint64_t remote, void* to,
           size_t bytes) override;
  bool FlushRma(int peer, const WaitCalls& calls, uint64_t spin_ns) override;

 private:
  struct Peer {
    UcxTransport* owner = nullptr;  // for OnPeerError
    int rank = -1;
    bool same_host = false;
    pid_t pid = 0;
    ucp_ep_h ep = nullptr;  // under ep_mutex_
    bool ep_failed = false;
    std::atomic<bool> to_lost{false};    // this origin -> its agent
    std::atomic<bool> broken{false};     // lost at its next use
    std::atomic<bool> from_lost{false};  // it -> this agent
    uint32_t send_seq = 0;               // under origin_mutex
    uint32_t answer_seq = 0;             // under serve_mutex
    // Under mutex_:
    uint32_t next_request = 0;
    std::map<uint32_t, std::vector<std::byte>> early_requests;
    uint32_t next_answer = 0;
    std::map<uint32_t, AgentAnswer> early_answers;
    std::deque<AgentAnswer> answers;
  };

  static ucs_status_t OnRequest(void* arg, const void* header,
                                size_t header_bytes, void* data, size_t bytes,
                                const ucp_am_recv_param_t* param);
  static ucs_status_t OnAnswer(void* arg, const void* header,
                               size_t header_bytes, void* data, size_t bytes,
                               const ucp_am_recv_param_t* param);
  static ucs_status_t OnLost(void* arg, const void* header, size_t header_bytes,
                             void* data, size_t bytes,
                             const ucp_am_recv_param_t* param);
  static void OnSent(void* request, ucs_status_t status, void* user_data);
  static void OnRendezvousDone(void* request, ucs_status_t status,
                               size_t length, void* user_data);
  void FinishRendezvous(std::unique_ptr<Rendezvous> r, ucs_status_t status);
  void Take(bool answer, int peer, uint32_t seq, int status, void* data,
            size_t bytes, const ucp_am_recv_param_t* param);
  void DeliverRequest(int origin, uint32_t seq, std::vector<std::byte> bytes);
  void DeliverAnswer(int agent, uint32_t seq, AgentAnswer answer);
  static void OnPeerError(void* arg, ucp_ep_h ep, ucs_status_t status);

  bool SetHandler(unsigned id, ucp_am_recv_callback_t cb);
  // The endpoint for an RMA operation to `peer`; null when lost.
  ucp_ep_h RmaEndpoint(int peer);
  bool Started(int peer, ucs_status_ptr_t request);
  bool TakeAnswer(Peer& p, AgentAnswer* answer, bool* lost, bool will_sleep);
  ucp_ep_h EndpointTo(int peer);
  bool SendMessage(std::unique_ptr<InFlight> m, unsigned id);
  void SendLost(int peer, int32_t link);
  bool Valid(int rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < peers_.size() &&
           rank != self_;
  }
  void Reject() { rejected_.fetch_add(1, std::memory_order_relaxed); }
  // Under mutex_: the link from `origin` is lost; its agent is told once.
  void LoseFromLocked(int origin);
  void WakeAgentLocked();
  void WakeReceiverLocked();
  void NoteArrivalsLocked() {
    arrivals_.store(!arrived_.empty() || !lost_from_.empty(),
                    std::memory_order_relaxed);
  }
  static void Signal(int fd);
  static void Drain(int fd);
  void Destroy();
  // Peers on this host (reached without UCX's failure handling) whose
  // process is gone lose both links, checked at most every
  // kLivenessCheckNs; what it found.
  static constexpr uint64_t kLivenessCheckNs = 100'000'000;
  void CheckHostPeersAlive();

  const int self_;
  const uint64_t token_;
  std::vector<Peer> peers_;
  std::vector<std::vector<std::byte>> addresses_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int worker_fd_ = -1;
  int arrived_fd_ = -1;   // eventfd: wakes the agent's thread
  int answer_fd_ = -1;    // eventfd: wakes an origin awaiting an answer
  int agent_epoll_ = -1;  // worker_fd_ and arrived_fd_
  std::atomic<long long> in_flight_{0};
  std::atomic<long long> rejected_{0};
  std::atomic<bool> closing_{false};
  std::atomic<uint64_t> liveness_checked_ns_{0};

  std::mutex ep_mutex_;
  std::mutex mutex_;
  std::deque<ArrivedBatch> arrived_;   // under mutex_
  std::deque<int> lost_from_;          // under mutex_
  std::atomic<bool> arrivals_{false};  // either of the two is not empty
  bool agent_sleeping_ = false;        // under mutex_
  int receiver_waiting_ = -1;          // under mutex_: the agent awaited
};

void UcxTransport::Signal(int fd) {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(fd, &one, sizeof one);
}

void UcxTransport::Drain(int fd) {
  uint64_t count;
  [[maybe_unused]] ssize_t n = read(fd, &count, sizeof count);
}

void UcxTransport::WakeAgentLocked() {
  arrivals_.store(true, std::memory_order_relaxed);
  if (agent_sleeping_) {
    agent_sleeping_ = false;
    Signal(arrived_fd_);
  }
}

void UcxTransport::WakeReceiverLocked() {
  if (receiver_waiting_ >= 0) Signal(answer_fd_);
}

bool UcxTransport::SetHandler(unsigned id, ucp_am_recv_callback_t cb) {
  ucp_am_handler_param_t p{};
  p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                 UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                 UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  p.id = id;
  p.flags = UCP_AM_FLAG_WHOLE_MSG;
  p.cb = cb;
  p.arg = this;
  return ucp_worker_set_am_recv_handler(worker_, &p) == UCS_OK;
}

bool UcxTransport::Init() {
  ucp_config_t* config = nullptr;
  // RMASHIM_UCX_* settings apply to this context alone, over the UCX_* ones
  // that MPI's context reads too.
  if (ucp_config_read("RMASHIM", nullptr, &config) != UCS_OK) return false;
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
  // RMA for remote puts and gets (agent_rma.cc); no UCP_FEATURE_AMO32/64:
  // the shim never asks UCX for an atomic, so no NIC updates window memory
  // that CPU atomics update too.
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP | UCP_FEATURE_RMA;
  params.name = "rmashim-agent";
  // The worker's lock a mutex, not UCX's default spinlock: origins and the
  // agent's thread share the worker, and on cores that ranks keep busy a
  // spinning waiter kept the preempted holder off its core (bench/agent at
  // 2 ranks on the odd-even split: lock_all + 64 accumulates to every rank
  // + unlock_all 2.3-2.9 ms with the spinlock, 0.16-0.17 ms with a mutex).
  if (std::getenv("RMASHIM_UCX_USE_MT_MUTEX") == nullptr) {
    (void)ucp_config_modify(config, "USE_MT_MUTEX", "y");
  }
  const ucs_status_t st = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  if (st != UCS_OK) return false;
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_MULTI;
  if (ucp_worker_create(context_, &wp, &worker_) != UCS_OK) return false;
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE;
  if (ucp_worker_query(worker_, &attr) != UCS_OK ||
      attr.thread_mode != UCS_THREAD_MODE_MULTI) {
    return false;
  }
  if (!SetHandler(kRequestAm, OnRequest) || !SetHandler(kAnswerAm, OnAnswer) ||
      !SetHandler(kLostAm, OnLost) ||
      ucp_worker_get_efd(worker_, &worker_fd_) != UCS_OK) {
    return false;
  }
  arrived_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  answer_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  agent_epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (arrived_fd_ < 0 || answer_fd_ < 0 || agent_epoll_ < 0) return false;
  for (const int fd : {worker_fd_, arrived_fd_}) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    if (epoll_ctl(agent_epoll_, EPOLL_CTL_ADD, fd, &e) != 0) return false;
  }
  return true;
}

// What identifies this host: its name and its kernel's boot, so that
// network namespaces with names of their own (tests/twohost) count apart.
uint64_t HostKey() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string key(name);
  if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    char boot[64] = {};
    if (std::fgets(boot, sizeof boot, f) != nullptr) key += boot;
    std::fclose(f);
  }
  return std::hash<std::string>{}(key);
}

// What each process publishes at Open, before its worker's address.
struct Published {
  uint64_t length = 0;  // of the address
  uint64_t host = 0;    // HostKey
  int64_t pid = 0;
};

// Every process's worker address, host and pid, by world rank: the longest
// address's length agreed first, then one allgather.
bool UcxTransport::ExchangeAddresses() {
  ucp_address_t* address = nullptr;
  size_t length = 0;
  int ok = worker_ != nullptr &&
           ucp_worker_get_address(worker_, &address, &length) == UCS_OK;
  PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) {
    if (address != nullptr) ucp_worker_release_address(worker_, address);
    return false;
  }
  uint64_t longest = length;
  PMPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_UINT64_T, MPI_MAX,
                 MPI_COMM_WORLD);
  const size_t slot = sizeof(Published) + longest;
  std::vector<std::byte> mine(slot), all(slot * peers_.size());
  const Published me{.length = length, .host = HostKey(), .pid = getpid()};
  std::memcpy(mine.data(), &me, sizeof me);
  std::memcpy(mine.data() + sizeof me, address, length);
  ucp_worker_release_address(worker_, address);
  PMPI_Allgather(mine.data(), static_cast<int>(slot), MPI_BYTE, all.data(),
                 static_cast<int>(slot), MPI_BYTE, MPI_COMM_WORLD);
  addresses_.resize(peers_.size());
  for (size_t r = 0; r < peers_.size(); ++r) {
    Published peer;
    std::memcpy(&peer, all.data() + r * slot, sizeof peer);
    const std::byte* at = all.data() + r * slot + sizeof peer;
    addresses_[r].assign(at, at + peer.length);
    peers_[r].same_host = peer.host == me.host;
    peers_[r].pid = static_cast<pid_t>(peer.pid);
  }
  return true;
}

ucp_ep_h UcxTransport::EndpointTo(int peer) {
  std::lock_guard<std::mutex> guard(ep_mutex_);
  Peer& p = peers_[peer];
  if (p.ep != nullptr || p.ep_failed) return p.ep_failed ? nullptr : p.ep;
  // UCX 1.13's shared-memory transports have no peer failure handling:
  // asked for it, UCX would take TCP over loopback to a peer on this host.
  // So a peer here is reached without it, and its death is found by its
  // pid (PeerGone).
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                  UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.address = reinterpret_cast<const ucp_address_t*>(addresses_[peer].data());
  ep.err_mode =
      p.same_host ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = OnPeerError;
  ep.err_handler.arg = &p;
  if (ucp_ep_create(worker_, &ep, &p.ep) != UCS_OK) {
    p.ep = nullptr;
    p.ep_failed = true;
    std::fprintf(stderr,
                 "rmashim: agent: world rank %d cannot reach world rank %d "
                 "over UCX\n",
                 self_, peer);
    return nullptr;
  }
  return p.ep;
}

void UcxTransport::OnPeerError(void* arg, ucp_ep_h /*ep*/,
                               ucs_status_t /*status*/) {
  Peer& p = *static_cast<Peer*>(arg);
  UcxTransport* t = p.owner;
  if (t->closing_.load()) return;
  const int peer = p.rank;
  std::lock_guard<std::mutex> guard(t->mutex_);
  if (!p.to_lost.exchange(true)) {
    std::fprintf(stderr,
                 "rmashim: agent: link to world rank %d's agent lost (from "
                 "world rank %d)\n",
                 peer, t->self_);
  }
  t->LoseFromLocked(peer);
  t->WakeReceiverLocked();
}

void UcxTransport::CheckHostPeersAlive() {
  const uint64_t now = NowNs();
  uint64_t last = liveness_checked_ns_.load();
  if (now - last < kLivenessCheckNs ||
      !liveness_checked_ns_.compare_exchange_strong(last, now)) {
    return;
  }
  for (Peer& p : peers_) {
    if (!p.same_host || p.rank == self_ || p.pid <= 0 ||
        (p.to_lost.load() && p.from_lost.load())) {
      continue;
    }
    {
      std::lock_guard<std::mutex> guard(ep_mutex_);
      if (p.ep == nullptr) continue;  // never reached: nothing to lose
    }
    if (kill(p.pid, 0) == 0 || errno != ESRCH) continue;
    std::lock_guard<std::mutex> guard(mutex_);
    if (!p.to_lost.exchange(true)) {
      std::fprintf(stderr,
                   "rmashim: agent: world rank %d (pid %d) is gone (from "
                   "world rank %d)\n",
                   p.rank, static_cast<int>(p.pid), self_);
    }
    LoseFromLocked(p.rank);
    WakeReceiverLocked();
  }
}

void UcxTransport::LoseFromLocked(int origin) {
  Peer& p = peers_[origin];
  if (p.from_lost.exchange(true)) return;
  p.early_requests.clear();
  lost_from_.push_back(origin);
  WakeAgentLocked();
}

void UcxTransport::OnSent(void* request, ucs_status_t status, void* user_data) {
  std::unique_ptr<InFlight> m(static_cast<InFlight*>(user_data));
  UcxTransport* t = m->transport;
  if (status != UCS_OK && !t->closing_.load()) {
    std::lock_guard<std::mutex> guard(t->mutex_);
    Peer& p = t->peers_[m->peer];
    if (m->to_agent) p.to_lost.store(true);
    t->WakeReceiverLocked();
  }
  t->in_flight_.fetch_sub(1);
  if (request != nullptr) ucp_request_free(request);
}

bool UcxTransport::SendMessage(std::unique_ptr<InFlight> m, unsigned id) {
  const ucp_ep_h ep = EndpointTo(m->peer);
  if (ep == nullptr) return false;
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK |
                   UCP_OP_ATTR_FIELD_USER_DATA;
  p.cb.send = OnSent;
  p.user_data = m.get();
  in_flight_.fetch_add(1);
  const ucs_status_ptr_t r = ucp_am_send_nbx(
      ep, id, &m->header, m->header_bytes, m->data.data(), m->data.size(), &p);
  if (r == nullptr) {  // done at once: no callback
    in_flight_.fetch_sub(1);
    return true;
  }
  if (UCS_PTR_IS_ERR(r)) {
    in_flight_.fetch_sub(1);
    return false;
  }
  (void)m.release();  // OnSent's now
  return true;
}

void UcxTransport::SendLost(int peer, int32_t link) {
  auto m = std::make_unique<InFlight>();
  m->header.lost = {.token = token_, .sender = self_, .link = link};
  m->header_bytes = sizeof(LostHeader);
  m->transport = this;
  m->peer = peer;
  (void)SendMessage(std::move(m), kLostAm);
}

bool UcxTransport::Send(int agent, std::vector<std::byte>&& frames) {
  Peer& p = peers_[agent];
  if (p.broken.load()) LoseLinkTo(agent);
  if (p.to_lost.load()) return false;
  auto m = std::make_unique<InFlight>();
  m->header.request = {.token = token_, .origin = self_, .seq = p.send_seq};
  m->header_bytes = sizeof(RequestBatch);
  m->data = std::move(frames);
  m->transport = this;
  m->peer = agent;
  m->to_agent = true;
  if (!SendMessage(std::move(m), kRequestAm)) {
    p.to_lost.store(true);
    return false;
  }
  ++p.send_seq;
  return true;
}

// Takes the oldest answer from `p`'s agent, or says the link is lost;
// false while neither. A caller about to sleep (`will_sleep`) is then
// marked as waiting for `p`, so an answer taken in by another thread wakes
// it (answer_fd_); one still spinning is not: it progresses the worker
// itself, and a wake-up would cost the thread that takes the answer in a
// system call per answer.
bool UcxTransport::TakeAnswer(Peer& p, AgentAnswer* answer, bool* lost,
                              bool will_sleep) {
  std::lock_guard<std::mutex> guard(mutex_);
  *lost = false;
  if (!p.answers.empty()) {
    *answer = std::move(p.answers.front());
    p.answers.pop_front();
  } else if (p.to_lost.load()) {
    *lost = true;
  } else {
    if (will_sleep) receiver_waiting_ = p.rank;
    return false;
  }
  receiver_waiting_ = -1;
  return true;
}

bool UcxTransport::Receive(int agent, AgentAnswer* answer,
                           const WaitCalls& calls, uint64_t spin_ns) {
  Peer& p = peers_[agent];
  if (p.broken.load()) LoseLinkTo(agent);
  bool lost = false;
  const uint64_t spin_until = NowNs() + spin_ns;
  uint64_t next_callback = NowNs() + kWaitCallbackNs;
  for (;;) {
    ucp_worker_progress(worker_);
    if (TakeAnswer(p, answer, &lost, /*will_sleep=*/false)) return !lost;
    if (calls.arrived != nullptr && HasArrivals()) calls.arrived();
    if (calls.periodic != nullptr && NowNs() >= next_callback) {
      calls.periodic();
      next_callback = NowNs() + kWaitCallbackNs;
    }
    if (NowNs() < spin_until) {
      CpuRelax();
      continue;
    }
    if (ucp_worker_arm(worker_) == UCS_ERR_BUSY) continue;
    if (TakeAnswer(p, answer, &lost, /*will_sleep=*/true)) return !lost;
    // Bounded: a wait with `periodic` must call it on time, and a link lost on
    // another thread wakes it through answer_fd_ too.
    pollfd fds[2] = {{worker_fd_, POLLIN, 0}, {answer_fd_, POLLIN, 0}};
    const timespec wake{
        0, static_cast<long>(calls.periodic != nullptr ? kWaitCallbackNs
                                                       : 100'000'000)};
    ppoll(fds, 2, &wake, nullptr);
    if (fds[1].revents & POLLIN) Drain(answer_fd_);
    CheckHostPeersAlive();
  }
}

void UcxTransport::LoseLinkTo(int agent) {
  if (!Valid(agent) || peers_[agent].to_lost.exchange(true)) return;
  std::fprintf(stderr,
               "rmashim: agent: link to world rank %d's agent lost (from "
               "world rank %d)\n",
               agent, self_);
  if (!peers_[agent].broken.load()) SendLost(agent, kSendersLink);
}

void UcxTransport::BreakLinkTo(int agent) {
  if (!Valid(agent) || peers_[agent].broken.exchange(true)) return;
  SendLost(agent, kSendersLink);
}

bool UcxTransport::PrepareToSleep() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!arrived_.empty() || !lost_from_.empty()) return false;
    agent_sleeping_ = true;
  }
  Drain(arrived_fd_);
  if (ucp_worker_arm(worker_) == UCS_ERR_BUSY) {
    std::lock_guard<std::mutex> guard(mutex_);
    agent_sleeping_ = false;
    return false;
  }
  // What a handler queued between the check and the drain signalled anew
  // or is still queued: look once more.
  std::lock_guard<std::mutex> guard(mutex_);
  if (!arrived_.empty() || !lost_from_.empty()) {
    agent_sleeping_ = false;
    return false;
  }
  return true;
}

// agent_sleeping_ stays set until a handler wakes the agent: a wake-up
// too many is drained at the next PrepareToSleep, one too few would leave a
// request waiting.
void UcxTransport::Progress() {
  while (ucp_worker_progress(worker_) != 0) {
  }
  CheckHostPeersAlive();
}

bool UcxTransport::TakeArrived(ArrivedBatch* batch) {
  std::lock_guard<std::mutex> guard(mutex_);
  bool taken = false;
  while (!taken && !arrived_.empty()) {
    *batch = std::move(arrived_.front());
    arrived_.pop_front();
    // A link lost after its batch was queued: nothing after the loss is
    // applied, and what came before it may stand alone.
    taken = !peers_[batch->origin].from_lost.load();
  }
  NoteArrivalsLocked();
  return taken;
}

bool UcxTransport::TakeLostLink(int* origin) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (lost_from_.empty()) return false;
  *origin = lost_from_.front();
  lost_from_.pop_front();
  NoteArrivalsLocked();
  return true;
}

bool UcxTransport::Answer(int origin, int status,
                          std::span<const std::byte> bytes) {
  Peer& p = peers_[origin];
  if (p.from_lost.load()) return false;
  auto m = std::make_unique<InFlight>();
  m->header.answer = {
      .token = token_, .agent = self_, .seq = p.answer_seq++, .status = status};
  m->header_bytes = sizeof(AnswerHeader);
  m->data.assign(bytes.begin(), bytes.end());
  m->transport = this;
  m->peer = origin;
  return SendMessage(std::move(m), kAnswerAm);
}

void UcxTransport::LoseLinkFrom(int origin) {
  if (!Valid(origin)) return;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (peers_[origin].from_lost.load()) return;
    LoseFromLocked(origin);
  }
  SendLost(origin, kReceiversLink);
}

bool UcxTransport::SendForged(int agent, int claimed_origin, uint64_t token_xor,
                              std::span<const std::byte> frames) {
  if (!Valid(agent)) return false;
  auto m = std::make_unique<InFlight>();
  // As this process's next batch where it claims to be this process with
  // the right token, so the forgery is taken in its turn; else (refused
  // before its turn is looked at) the sequence number a first batch has.
  const bool in_turn = claimed_origin == self_ && token_xor == 0;
  const uint32_t seq = in_turn ? peers_[agent].send_seq++ : 0;
  m->header.request = {
      .token = token_ ^ token_xor, .origin = claimed_origin, .seq = seq};
  m->header_bytes = sizeof(RequestBatch);
  m->data.assign(frames.begin(), frames.end());
  m->transport = this;
  m->peer = agent;
  return SendMessage(std::move(m), kRequestAm);
}

void UcxTransport::DeliverRequest(int origin, uint32_t seq,
                                  std::vector<std::byte> bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  Peer& p = peers_[origin];
  if (p.from_lost.load()) return;  // dropped: the link is gone
  if (seq != p.next_request) {
    if (static_cast<int32_t>(seq - p.next_request) < 0 ||
        p.early_requests.size() >= kMaxEarly ||
        p.early_requests.contains(seq)) {
      Reject();
    } else {
      p.early_requests.emplace(seq, std::move(bytes));
    }
    return;
  }
  arrived_.push_back({origin, std::move(bytes)});
  ++p.next_request;
  for (auto it = p.early_requests.find(p.next_request);
       it != p.early_requests.end();
       it = p.early_requests.find(p.next_request)) {
    arrived_.push_back({origin, std::move(it->second)});
    p.early_requests.erase(it);
    ++p.next_request;
  }
  WakeAgentLocked();
}

void UcxTransport::DeliverAnswer(int agent, uint32_t seq, AgentAnswer answer) {
  std::lock_guard<std::mutex> guard(mutex_);
  Peer& p = peers_[agent];
  if (seq != p.next_answer) {
    if (static_cast<int32_t>(seq - p.next_answer) < 0 ||
        p.early_answers.size() >= kMaxEarly) {
      Reject();
    } else {
      p.early_answers.emplace(seq, std::move(answer));
    }
    return;
  }
  p.answers.push_back(std::move(answer));
  ++p.next_answer;
  for (auto it = p.early_answers.find(p.next_answer);
       it != p.early_answers.end(); it = p.early_answers.find(p.next_answer)) {
    p.answers.push_back(std::move(it->second));
    p.early_answers.erase(it);
    ++p.next_answer;
  }
  WakeReceiverLocked();
}

// A message whose data comes by UCX's rendezvous protocol (large ones,
// where UCX moves the bytes with one zero-copy transfer): received into its
// own buffer, then delivered in its turn; what comes after it on its link
// waits in the early arrivals meanwhile.
struct Rendezvous {
  class UcxTransport* transport = nullptr;
  bool answer = false;
  int peer = -1;
  uint32_t seq = 0;
  int status = 0;  // an answer's
  std::vector<std::byte> data;
};

void UcxTransport::OnRendezvousDone(void* request, ucs_status_t status,
                                    size_t /*length*/, void* user_data) {
  std::unique_ptr<Rendezvous> r(static_cast<Rendezvous*>(user_data));
  UcxTransport* t = r->transport;
  t->FinishRendezvous(std::move(r), status);
  if (request != nullptr) ucp_request_free(request);
}

void UcxTransport::FinishRendezvous(std::unique_ptr<Rendezvous> r,
                                    ucs_status_t status) {
  if (status != UCS_OK) {  // the link cannot be trusted from here on
    std::lock_guard<std::mutex> guard(mutex_);
    if (r->answer) {
      peers_[r->peer].to_lost.store(true);
      WakeReceiverLocked();
    } else {
      LoseFromLocked(r->peer);
    }
    return;
  }
  if (r->answer) {
    DeliverAnswer(r->peer, r->seq, {r->status, std::move(r->data)});
  } else {
    DeliverRequest(r->peer, r->seq, std::move(r->data));
  }
}

// Delivers what a handler got: eager data at once (copied: it lives only
// for the call), rendezvous data once received.
void UcxTransport::Take(bool answer, int peer, uint32_t seq, int status,
                        void* data, size_t bytes,
                        const ucp_am_recv_param_t* param) {
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    const auto* at = static_cast<const std::byte*>(data);
    std::vector<std::byte> copy(at, at + bytes);
    if (answer) {
      DeliverAnswer(peer, seq, {status, std::move(copy)});
    } else {
      DeliverRequest(peer, seq, std::move(copy));
    }
    return;
  }
  auto r = std::make_unique<Rendezvous>();
  *r = {.transport = this,
        .answer = answer,
        .peer = peer,
        .seq = seq,
        .status = status,
        .data = std::vector<std::byte>(bytes)};
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                   UCP_OP_ATTR_FIELD_DATATYPE;
  p.cb.recv_am = OnRendezvousDone;
  p.datatype = ucp_dt_make_contig(1);
  p.user_data = r.get();
  void* buffer = r->data.data();
  const ucs_status_ptr_t request =
      ucp_am_recv_data_nbx(worker_, data, buffer, bytes, &p);
  if (request == nullptr) return FinishRendezvous(std::move(r), UCS_OK);
  if (UCS_PTR_IS_ERR(request)) {
    return FinishRendezvous(std::move(r), UCS_PTR_STATUS(request));
  }
  (void)r.release();  // OnRendezvousDone's now
}

ucs_status_t UcxTransport::OnRequest(void* arg, const void* header,
                                     size_t header_bytes, void* data,
                                     size_t bytes,
                                     const ucp_am_recv_param_t* param) {
  auto* t = static_cast<UcxTransport*>(arg);
  RequestBatch h;
  if (header_bytes != sizeof h) {
    t->Reject();
    return UCS_OK;
  }
  std::memcpy(&h, header, sizeof h);
  if (h.token != t->token_ || !t->Valid(h.origin)) {
    t->Reject();
    return UCS_OK;  // a rendezvous's data dropped unread
  }
  t->Take(/*answer=*/false, h.origin, h.seq, 0, data, bytes, param);
  return UCS_OK;
}

ucs_status_t UcxTransport::OnAnswer(void* arg, const void* header,
                                    size_t header_bytes, void* data,
                                    size_t bytes,
                                    const ucp_am_recv_param_t* param) {
  auto* t = static_cast<UcxTransport*>(arg);
  AnswerHeader h;
  if (header_bytes != sizeof h) {
    t->Reject();
    return UCS_OK;
  }
  std::memcpy(&h, header, sizeof h);
  if (h.token != t->token_ || !t->Valid(h.agent)) {
    t->Reject();
    return UCS_OK;
  }
  t->Take(/*answer=*/true, h.agent, h.seq, h.status, data, bytes, param);
  return UCS_OK;
}

ucs_status_t UcxTransport::OnLost(void* arg, const void* header,
                                  size_t header_bytes, void* /*data*/,
                                  size_t /*bytes*/,
                                  const ucp_am_recv_param_t* /*param*/) {
  auto* t = static_cast<UcxTransport*>(arg);
  LostHeader h;
  if (header_bytes != sizeof h) {
    t->Reject();
    return UCS_OK;
  }
  std::memcpy(&h, header, sizeof h);
  if (h.token != t->token_ || !t->Valid(h.sender)) {
    t->Reject();
    return UCS_OK;
  }
  std::lock_guard<std::mutex> guard(t->mutex_);
  if (h.link == kSendersLink) {
    t->LoseFromLocked(h.sender);
  } else if (!t->peers_[h.sender].to_lost.exchange(true)) {
    t->WakeReceiverLocked();
  }
  return UCS_OK;
}

// Waits, progressing, until `request` (from a _nbx call) is done.
void AwaitRequest(ucp_worker_h worker, void* request) {
  if (request == nullptr || UCS_PTR_IS_ERR(request)) return;
  while (ucp_request_check_status(request) == UCS_INPROGRESS) {
    ucp_worker_progress(worker);
  }
  ucp_request_free(request);
}

void UcxTransport::Close() {
  // What is still in flight goes out first (a second at most: a peer that
  // takes nothing in is gone).
  const uint64_t until = NowNs() + 1'000'000'000;
  while (in_flight_.load() > 0 && NowNs() < until) {
    ucp_worker_progress(worker_);
  }
  closing_.store(true);
  // No rank closes an endpoint before every rank stopped reporting lost
  // links: a closed endpoint looks failed to its peer.
  PMPI_Barrier(MPI_COMM_WORLD);
  for (Peer& p : peers_) {
    if (p.ep == nullptr) continue;
    ucp_request_param_t rp{};
    rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
    AwaitRequest(worker_, ucp_ep_close_nbx(p.ep, &rp));
    p.ep = nullptr;
  }
  Destroy();
}

void UcxTransport::Destroy() {
  for (const int fd : {agent_epoll_, arrived_fd_, answer_fd_}) {
    if (fd >= 0) close(fd);
  }
  agent_epoll_ = arrived_fd_ = answer_fd_ = -1;
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  worker_ = nullptr;
  if (context_ != nullptr) ucp_cleanup(context_);
  context_ = nullptr;
}

}  // namespace

namespace {

class UcxRegistration final : public AgentTransport::Registration {
 public:
  UcxRegistration(ucp_context_h context, ucp_mem_h memory, void* packed,
                  size_t bytes)
      : context_(context), memory_(memory), packed_(packed), bytes_(bytes) {}
  ~UcxRegistration() override {
    ucp_rkey_buffer_release(packed_);
    ucp_mem_unmap(context_, memory_);
  }
  UcxRegistration(const UcxRegistration&) = delete;
  UcxRegistration& operator=(const UcxRegistration&) = delete;
  std::span<const std::byte> key() const override {
    return {static_cast<const std::byte*>(packed_), bytes_};
  }

 private:
  ucp_context_h context_;
  ucp_mem_h memory_;
  void* packed_;
  size_t bytes_;
};

class UcxRemoteKey final : public AgentTransport::RemoteKey {
 public:
  explicit UcxRemoteKey(ucp_rkey_h key) : key_(key) {}
  ~UcxRemoteKey() override { ucp_rkey_destroy(key_); }
  UcxRemoteKey(const UcxRemoteKey&) = delete;
  UcxRemoteKey& operator=(const UcxRemoteKey&) = delete;
  ucp_rkey_h get() const { return key_; }

 private:
  ucp_rkey_h key_;
};

}  // namespace

// The memory as it is, mapped for UCX's transports (nothing allocated):
// the window's node-shared segment or the application's own buffer.
std::unique_ptr<AgentTransport::Registration> UcxTransport::Register(
    void* base, size_t bytes) {
  ucp_mem_map_params_t params{};
  params.field_mask =
      UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = base;
  params.length = bytes;
  ucp_mem_h memory = nullptr;
  if (ucp_mem_map(context_, &params, &memory) != UCS_OK) return nullptr;
  void* packed = nullptr;
  size_t packed_bytes = 0;
  if (ucp_rkey_pack(context_, memory, &packed, &packed_bytes) != UCS_OK) {
    ucp_mem_unmap(context_, memory);
    return nullptr;
  }
  return std::make_unique<UcxRegistration>(context_, memory, packed,
                                           packed_bytes);
}

std::unique_ptr<AgentTransport::RemoteKey> UcxTransport::Unpack(
    int peer, std::span<const std::byte> key) {
  const ucp_ep_h ep = RmaEndpoint(peer);
  ucp_rkey_h rkey = nullptr;
  if (ep == nullptr || ucp_ep_rkey_unpack(ep, key.data(), &rkey) != UCS_OK) {
    return nullptr;
  }
  return std::make_unique<UcxRemoteKey>(rkey);
}

ucp_ep_h UcxTransport::RmaEndpoint(int peer) {
  if (!Valid(peer)) return nullptr;
  Peer& p = peers_[peer];
  if (p.broken.load()) LoseLinkTo(peer);
  return p.to_lost.load() ? nullptr : EndpointTo(peer);
}

// An operation's request is released at once: its completion is the
// peer's next flush (UCX completes a released request all the same).
bool UcxTransport::Started(int peer, ucs_status_ptr_t request) {
  if (request == nullptr) return true;
  if (UCS_PTR_IS_ERR(request)) {
    LoseLinkTo(peer);
    return false;
  }
  ucp_request_free(request);
  return true;
}

bool UcxTransport::Put(int peer, RemoteKey& key, uint64_t remote,
                       const void* from, size_t bytes, bool* not_now) {
  const ucp_ep_h ep = RmaEndpoint(peer);
  if (ep == nullptr) return false;
  ucp_request_param_t param{};
  if (not_now != nullptr) {
    param.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    const ucs_status_ptr_t done = ucp_put_nbx(
        ep, from, bytes, remote, static_cast<UcxRemoteKey&>(key).get(), &param);
    *not_now = UCS_PTR_STATUS(done) == UCS_ERR_NO_RESOURCE;
    return *not_now || Started(peer, done);
  }
  return Started(peer,
                 ucp_put_nbx(ep, from, bytes, remote,
                             static_cast<UcxRemoteKey&>(key).get(), &param));
}

bool UcxTransport::Get(int peer, RemoteKey& key, uint64_t remote, void* to,
                       size_t bytes) {
  const ucp_ep_h ep = RmaEndpoint(peer);
  if (ep == nullptr) return false;
  ucp_request_param_t param{};
  return Started(peer,
                 ucp_get_nbx(ep, to, bytes, remote,
                             static_cast<UcxRemoteKey&>(key).get(), &param));
}

// Polls the worker for `spin_ns` and then sleeps on it between polls, as
// Receive does: where the network emulates RMA (UCX over TCP) the target's
// agent or stand-in completes it.
bool UcxTransport::FlushRma(int peer, const WaitCalls& calls,
                            uint64_t spin_ns) {
  const ucp_ep_h ep = RmaEndpoint(peer);
  if (ep == nullptr) return false;
  ucp_request_param_t param{};
  const ucs_status_ptr_t request = ucp_ep_flush_nbx(ep, &param);
  if (request == nullptr) return true;
  if (UCS_PTR_IS_ERR(request)) {
    LoseLinkTo(peer);
    return false;
  }
  const uint64_t spin_until = NowNs() + spin_ns;
  ucs_status_t status;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) {
    if (peers_[peer].to_lost.load()) break;
    const bool progressed = ucp_worker_progress(worker_) != 0;
    if (calls.arrived != nullptr && HasArrivals()) calls.arrived();
    if (progressed || NowNs() < spin_until) continue;
    if (ucp_worker_arm(worker_) == UCS_ERR_BUSY) continue;
    pollfd fd{worker_fd_, POLLIN, 0};
    const timespec wake{0, static_cast<long>(kWaitCallbackNs)};
    ppoll(&fd, 1, &wake, nullptr);
    CheckHostPeersAlive();
  }
  ucp_request_free(request);
  if (status == UCS_OK) return true;
  LoseLinkTo(peer);
  return false;
}

std::unique_ptr<AgentTransport> AgentTransport::Open(int world_rank,
                                                     int world_size,
                                                     uint64_t token) {
  auto t = std::make_unique<UcxTransport>(world_rank, world_size, token);
  const bool initialized = t->Init();
  if (!initialized) t.reset();
  // ExchangeAddresses agrees on success everywhere; a rank without a
  // transport takes part with a null worker.
  if (t == nullptr) {
    UcxTransport none(world_rank, world_size, token);
    (void)none.ExchangeAddresses();
    return nullptr;
  }
  if (!t->ExchangeAddresses()) return nullptr;
  return t;
}

}  // namespace rmashim
