// The agent thread: its loop, how it sleeps, and its start and stop
// (agent.h has the design; agent_serve.cc serves the requests that
// agent_origin.cc sends it).
#include "shim/agent/agent.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <thread>
#include <unordered_map>

#include "shim/agent/agent_connections.h"
#include "shim/agent/agent_serve.h"
#include "shim/agent/agent_state.h"
#include "shim/base/spin_wait.h"
#include "shim/process/runtime.h"
#include "shim/windows/served_windows.h"
#include "shim/windows/window.h"

namespace rmashim {
namespace {

long EnvLong(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atol(v) : 0;
}

// A setting in microseconds, as nanoseconds (0 or below: 0); nullopt when
// unset.
std::optional<uint64_t> EnvMicrosecondsAsNs(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  const long long us = std::strtoll(v, nullptr, 10);
  return us > 0 ? static_cast<uint64_t>(us) * 1000 : uint64_t{0};
}

// The agent's state. One per process.

void Wake(const AgentState& s) {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(s.wake_fd, &one, sizeof one);
}

// Parks while AgentParked asks it to; false once StopAgent asked it to
// stop.
bool ParkIfAsked(AgentState& s) {
  std::unique_lock<std::mutex> lock(s.park_mutex);
  if (s.stopping) return false;
  if (s.park_requests == 0) return true;
  s.parked = true;
  s.park_cv.notify_all();
  s.park_cv.wait(lock, [&] { return s.park_requests == 0; });
  s.parked = false;
  return !s.stopping;
}

// What came on `fd` when it is an origin's link: served, and the link
// ended (closed here) when it closed. The caller holds s.serve_mutex.
// Whether `fd` was a link.
bool ServeReady(AgentState& s, ServedLinks& links, int fd) {
  const auto origin = links.origins.find(fd);
  if (origin == links.origins.end()) return false;
  const LinkEnd end = ServeReceived(s, fd, origin->second.reader, links.frame);
  if (end != LinkEnd::kOpen) {
    EndLink(s, links.epoll, fd, origin->second, end);
    links.origins.erase(origin);
  }
  return true;
}

// Waits for an event at most `ns` (epoll_pwait2, where the kernel has it;
// else a millisecond).
int WaitFor(int epoll, epoll_event* ready, int max, long ns) {
  static bool fine_grained = true;
  if (fine_grained) {
    const timespec timeout{0, ns};
    const int n = epoll_pwait2(epoll, ready, max, &timeout, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    fine_grained = false;
  }
  return epoll_wait(epoll, ready, max, 1);
}

// Looks for an event without sleeping for at most 2 us, then returns (so
// that the caller polls its waiting locks and the park and stop paths stay
// near).
int PollAwake(int epoll, epoll_event* ready, int max) {
  constexpr uint64_t kPassNs = 2'000;
  const uint64_t until = NowNs() + kPassNs;
  int n;
  while ((n = epoll_wait(epoll, ready, max, 0)) == 0 && NowNs() < until) {
    CpuRelax();
  }
  return n;
}

// A test's request (AgentFailLink): ends the link from the origin it names
// as lost, as a network failure would, and answers whether there was one.
void FailLinkIfAsked(AgentState& s, int epoll,
                     std::unordered_map<int, OriginLink>& origins) {
  const int world_rank = s.fail_link_from.load();
  if (world_rank < 0) return;
  bool found = false;
  for (auto it = origins.begin(); it != origins.end(); ++it) {
    if (it->second.world_rank != world_rank) continue;
    EndLink(s, epoll, it->first, it->second, LinkEnd::kLost);
    origins.erase(it);
    found = true;
    break;
  }
  s.fail_link_from.store(found ? kFailLinkDone : kFailLinkNone);
  s.fail_link_from.notify_all();
}

// Whether lock requests wait after a pass, the poll interval they allow
// (AgentLocks::poll_interval_cap_ns) and how long the latest to become next
// in its gate has been next (AgentLocks::shortest_next_wait_ns).
struct LockPolls {
  bool waiting = false;
  uint64_t cap_ns = AgentLocks::kMaxPollNs;
  uint64_t next_waited_ns = AgentLocks::kNoneNext;
};

// One pass's work, under s.serve_mutex: the `n` events in `ready` (new
// connections, hellos, origins' requests), then a test's link failure,
// stale hellos and the waiting locks' polls.
LockPolls ServeEvents(AgentState& s, ServedLinks& links, PendingHellos& hellos,
                      const epoll_event* ready, int n) {
  s.thread_wants_serve.store(true);
  std::lock_guard<std::mutex> serving(s.serve_mutex);
  s.thread_wants_serve.store(false);
  for (int i = 0; i < n; ++i) {
    const int fd = ready[i].data.fd;
    if (fd == s.wake_fd) {
      uint64_t count;
      [[maybe_unused]] ssize_t r = read(s.wake_fd, &count, sizeof count);
    } else if (fd == s.listener.fd) {
      hellos.Accept(s, links.epoll);
    } else if (hellos.Has(fd)) {
      if (int origin = -1; hellos.Read(s, links.epoll, fd, &origin)) {
        links.origins[fd].world_rank = origin;
      }
    } else {
      // Served already when a waiter took these frames first: then
      // nothing is read, or the link is gone.
      ServeReady(s, links, fd);
    }
  }
  // After the events: a link it ends may have been among them.
  FailLinkIfAsked(s, links.epoll, links.origins);
  if (!hellos.empty()) hellos.CloseStale(links.epoll);
  if (s.locks.waiting()) GrantWaitingLocks(s);
  s.locks_waiting.store(static_cast<long long>(s.locks.waiting_count()),
                        std::memory_order_relaxed);
  return {.waiting = s.locks.waiting(),
          .cap_ns = s.locks.poll_interval_cap_ns(),
          .next_waited_ns = s.locks.shortest_next_wait_ns()};
}

// The agent's loop: blocked in epoll_wait until a request, a new
// connection or a wake-up comes, so an idle agent costs nothing.
void Serve(AgentState& s) {
  // The polls below sleep microseconds; the kernel lets a thread's timed
  // sleeps run late by its timer slack (50 us unless set: prctl(2)), which
  // would make every poll of a waiting lock at least that long, a handover
  // to a remote locker with it. A microsecond of slack keeps the poll
  // intervals what they say; an idle agent sleeps without a timeout.
  constexpr unsigned long kTimerSlackNs = 1'000;
  prctl(PR_SET_TIMERSLACK, kTimerSlackNs, 0, 0, 0);
  const int epoll = epoll_create1(EPOLL_CLOEXEC);
  for (int fd : {s.listener.fd, s.wake_fd}) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &e);
  }
  ServedLinks links;  // origins' links, closed when the loop ends
  links.epoll = epoll;
  {
    std::lock_guard<std::mutex> serving(s.serve_mutex);
    s.served_links = &links;
  }
  PendingHellos hellos;  // connections not yet links
  epoll_event ready[64];
  // While lock requests wait, the loop polls them between events: first
  // after kFirstPollNs, then at intervals that double up to the cap the
  // waiting requests allow (AgentLocks::poll_interval_cap_ns), back to the
  // first after every event. Read under serve_mutex at the end of each
  // pass: a waiter that serves (ServeArrived) may queue requests meanwhile,
  // and then wakes this thread. For the first AgentLockSpinNs of a
  // request's turn (next in its gate: only holders to leave) the loop polls
  // awake instead: a release then costs no thread's wake-up.
  constexpr uint64_t kFirstPollNs = 2'000;
  uint64_t poll_ns = kFirstPollNs;
  bool locks_waiting = false;
  bool poll_awake = false;
  uint64_t poll_cap_ns = AgentLocks::kMaxPollNs;
  while (ParkIfAsked(s)) {
    // While hellos are pending, at least once a second (CloseStale).
    const int n =
        poll_awake ? PollAwake(epoll, ready, 64)
        : locks_waiting
            ? WaitFor(epoll, ready, 64, static_cast<long>(poll_ns))
            : epoll_wait(epoll, ready, 64, hellos.empty() ? -1 : 1000);
    if (locks_waiting) {
      poll_ns = n > 0 ? kFirstPollNs : std::min(2 * poll_ns, poll_cap_ns);
    }
    while (s.thread_held.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    const LockPolls polls = ServeEvents(s, links, hellos, ready, n);
    // Requests that begin to wait are polled first after kFirstPollNs.
    if (!locks_waiting && polls.waiting) poll_ns = kFirstPollNs;
    locks_waiting = polls.waiting;
    poll_cap_ns = polls.cap_ns;
    poll_awake = locks_waiting && polls.next_waited_ns < AgentLockSpinNs();
    // The next request of a burst comes soon: look for it a while before
    // sleeping (AgentSpinNs), without taking the park or stop path.
    const uint64_t spin = AgentSpinNs();
    if (spin > 0 && n > 0 && !locks_waiting) {
      const uint64_t until = NowNs() + spin;
      while (NowNs() < until && epoll_wait(epoll, ready, 64, 0) == 0) {
        CpuRelax();
      }
    }
  }
  std::lock_guard<std::mutex> serving(s.serve_mutex);
  s.served_links = nullptr;
  for (const auto& [link, origin] : links.origins) close(link);
  close(epoll);
}

}  // namespace

bool ServeArrived(AgentState& s) {
  if (s.thread_wants_serve.load()) return false;
  std::unique_lock<std::mutex> serving(s.serve_mutex, std::try_to_lock);
  if (!serving.owns_lock() || s.served_links == nullptr) return false;
  ServedLinks& links = *s.served_links;
  epoll_event ready[64];
  const int n = epoll_wait(links.epoll, ready, 64, 0);
  bool served = false;
  for (int i = 0; i < n; ++i) {
    served = ServeReady(s, links, ready[i].data.fd) || served;
  }
  // Requests it queued or a release it applied: grants those now in, and
  // wakes the thread for its polls of the rest.
  if (served && s.locks.waiting()) {
    GrantWaitingLocks(s);
    Wake(s);
  }
  return served;
}

uint64_t AgentLockSpinNs() {
  constexpr uint64_t kDefaultNs = 1'000'000;
  static const std::optional<uint64_t> configured =
      EnvMicrosecondsAsNs("RMASHIM_AGENT_LOCK_SPIN_US");
  if (configured) return *configured;
  return spin_settings().core_per_thread ? kDefaultNs : 0;
}

uint64_t AgentSpinNs() {
  static const uint64_t configured =
      EnvMicrosecondsAsNs("RMASHIM_AGENT_SPIN_US").value_or(0);
  return spin_settings().core_per_thread ? configured : 0;
}

AgentState& TheAgent() {
  static AgentState* state = new AgentState;
  return *state;
}

bool AgentWanted() {
  const char* agent = std::getenv("RMASHIM_AGENT");
  if (agent == nullptr || *agent == '\0') return false;  // off unless asked
  if (std::strcmp(agent, "auto") != 0) return std::strcmp(agent, "0") != 0;
  const long local = EnvLong("MPI_LOCALNRANKS"), size = EnvLong("PMI_SIZE");
  if (local > 0 && size > local) return true;
  if (EnvLong("SLURM_NNODES") > 1) return true;
  return EnvLong("MPIR_CVAR_ODD_EVEN_CLIQUES") > 0 ||
         EnvLong("MPIR_CVAR_NUM_CLIQUES") > 1;
}

void StartAgent() {
  AgentState& s = TheAgent();
  if (s.running) return;
  int size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &s.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  s.wake_fd = eventfd(0, EFD_CLOEXEC);
  // A process may start the agent again after StopAgent (libdart: a
  // program that owns MPI calls dart_init and dart_exit several times); the
  // listener stays open in between, at the same endpoint.
  int ok = s.wake_fd >= 0 && (s.listener.fd >= 0 || s.listener.Open());
  PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) {  // everywhere: windows then agree not to use agents
    if (s.world_rank == 0) {
      std::fprintf(stderr, "rmashim: agent: not started (no TCP listener)\n");
    }
    return;
  }
  if (s.world_rank == 0) {
    std::random_device random;
    s.token =
        (uint64_t{random()} << 32) ^ random() ^ static_cast<uint64_t>(getpid());
  }
  PMPI_Bcast(&s.token, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  s.endpoints.resize(size);
  PMPI_Allgather(&s.listener.endpoint, sizeof(AgentEndpoint), MPI_BYTE,
                 s.endpoints.data(), sizeof(AgentEndpoint), MPI_BYTE,
                 MPI_COMM_WORLD);
  s.links.assign(size, -1);
  s.queued.assign(size, {});
  s.inbound_lost = std::make_unique<std::atomic<bool>[]>(size);
  s.inbound_losses.store(0);
  s.locks = AgentLocks();
  {
    std::lock_guard<std::mutex> lock(s.park_mutex);
    s.stopping = false;
  }
  s.running = true;
  served_windows().Open();
  s.thread = std::thread([&s] { Serve(s); });
  // Counted once: a restarted agent replaces the thread StopAgent joined.
  static const bool noted = (NoteShimThreadStarted(), true);
  (void)noted;
}

void StopAgent() {
  AgentState& s = TheAgent();
  if (!s.running) return;
  // After this barrier no process sends another request.
  PMPI_Barrier(MPI_COMM_WORLD);
  {
    std::lock_guard<std::mutex> lock(s.park_mutex);
    s.stopping = true;
  }
  Wake(s);
  s.thread.join();
  served_windows().Close();
  s.running = false;
  // Each link ends with a goodbye: the agents still serving take its end
  // for an orderly one, not a lost link.
  const RequestHeader goodbye{.kind = RequestKind::kGoodbye};
  for (int& fd : s.links) {
    if (fd >= 0) {
      (void)WriteFrame(fd, &goodbye, sizeof goodbye);
      close(fd);
    }
    fd = -1;
  }
  close(s.wake_fd);
  s.wake_fd = -1;
}

bool AgentRunning() { return TheAgent().running; }

int FailLinkFrom(int world_rank) {
  AgentState& s = TheAgent();
  if (!s.running || world_rank < 0 ||
      static_cast<size_t>(world_rank) >= s.endpoints.size()) {
    return MPI_ERR_OTHER;
  }
  s.fail_link_from.store(world_rank);
  Wake(s);
  for (int v = world_rank; v >= 0; v = s.fail_link_from.load()) {
    s.fail_link_from.wait(v);
  }
  const bool done = s.fail_link_from.load() == kFailLinkDone;
  s.fail_link_from.store(kFailLinkIdle);
  return done ? MPI_SUCCESS : MPI_ERR_OTHER;
}

int AgentHoldThread(bool held) {
  AgentState& s = TheAgent();
  if (!s.running) return MPI_ERR_OTHER;
  s.thread_held.store(held);
  return MPI_SUCCESS;
}

long long AgentApplied() { return TheAgent().applied.load(); }

long long AgentLocksGranted() { return TheAgent().locks_granted.load(); }

long long AgentLocksWaiting() { return TheAgent().locks_waiting.load(); }

int AgentPort() {
  const AgentState& s = TheAgent();
  return s.running ? s.listener.endpoint.port : 0;
}

AgentParked::AgentParked() {
  AgentState& s = TheAgent();
  if (!s.running || std::this_thread::get_id() == s.thread.get_id()) return;
  std::unique_lock<std::mutex> lock(s.park_mutex);
  ++s.park_requests;
  parked_ = true;
  Wake(s);  // out of epoll_wait, to the top of its loop
  s.park_cv.wait(lock, [&] { return s.parked; });
}

AgentParked::~AgentParked() {
  if (!parked_) return;
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> lock(s.park_mutex);
  if (--s.park_requests == 0) s.park_cv.notify_all();
}

}  // namespace rmashim
