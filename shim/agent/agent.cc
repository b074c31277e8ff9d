// The agent thread: its loop, how it sleeps, and its start and stop
// (agent.h has the design; agent_serve.cc serves the requests that
// agent_origin.cc sends it).
#include "shim/agent/agent.h"

#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
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

// Sleeps until something may have arrived or a wake-up comes, at most
// `ns` (-1: no limit; epoll_pwait2 where the kernel has it, else
// milliseconds); at once when the transport has something already.
void SleepUntilEvent(AgentState& s, int epoll, long ns) {
  if (!s.transport->PrepareToSleep()) return;
  epoll_event ready[2];
  int n;
  static bool fine_grained = true;
  if (ns >= 0 && fine_grained) {
    const timespec timeout{ns / 1'000'000'000, ns % 1'000'000'000};
    n = epoll_pwait2(epoll, ready, 2, &timeout, nullptr);
    if (n < 0 && errno == ENOSYS) fine_grained = false;
  }
  if (ns < 0 || !fine_grained) {
    n = epoll_wait(epoll, ready, 2, ns < 0 ? -1 : std::max(1L, ns / 1'000'000));
  }
  for (int i = 0; i < n; ++i) {
    if (ready[i].data.fd != s.wake_fd) continue;
    uint64_t count;
    [[maybe_unused]] ssize_t r = read(s.wake_fd, &count, sizeof count);
  }
}

// While a thread stands in for the agent's (AgentStandIn), and for
// kStandInLingerNs after the last short one left, the agent's thread
// sleeps on its wake-up alone and leaves the transport unarmed: an arrival
// then costs neither the sender a signal nor this thread a wake-up, and
// the stand-in serves it. False, without sleeping, when no thread stands
// in and none did lately.
//
// A short stand-in (under kStandInLingerNs: one fetch's or flush's wait,
// one epoch's end) that returns to the application does not wake it: a
// rank that issues one such operation after another stands in for most of
// the time, and a wake-up at each return would cost a context switch per
// operation on the core the rank keeps busy. So the thread sleeps at most
// kStandInLingerNs at a time while stand-ins come and go, and a request
// that arrives just after the last one left waits at most that long for
// it. A stand-in that stayed longer (a rank waiting in MPI_Barrier), or
// that stops serving to sleep in the shim (HandBack), wakes it when it
// leaves, so that it watches the transport again at once; while such a
// stand-in stays, the thread sleeps without a time limit (`open`), and
// one that leaves wakes it too. `ns`: the most the caller sleeps (-1: no
// limit).
constexpr uint64_t kStandInLingerNs = 1'000'000;

// What the thread saw at its last look.
struct StandInsSeen {
  bool deferred = false;
  uint64_t left_ns = 0;
};

bool SleepWhileStoodIn(AgentState& s, long ns, StandInsSeen& seen) {
  const uint64_t left = s.stand_in_left_ns.load();
  const bool present = s.stand_ins.load() > 0;
  if (!present && NowNs() - left >= kStandInLingerNs) {
    seen.deferred = false;
    return false;
  }
  // The same stand-ins for a whole sleep: a long one.
  bool open = present && seen.deferred && left == seen.left_ns;
  seen = {.deferred = true, .left_ns = left};
  s.thread_deferring.store(open ? kDeferringOpen : kDeferringTimed);
  // Looked at again after saying how it sleeps: a stand-in that left
  // meanwhile either sees that and wakes it, or left before this look.
  if (s.stand_ins.load() == 0) {
    if (NowNs() - s.stand_in_left_ns.load() >= kStandInLingerNs) {
      s.thread_deferring.store(kNotDeferring);
      seen.deferred = false;
      return false;
    }
    open = false;
  }
  long limit = ns < 0 ? AgentTransport::kMaxSleepNs : ns;
  if (!open) limit = std::min(limit, static_cast<long>(kStandInLingerNs));
  const timespec timeout{limit / 1'000'000'000, limit % 1'000'000'000};
  pollfd wake{s.wake_fd, POLLIN, 0};
  if (ppoll(&wake, 1, &timeout, nullptr) > 0) {
    uint64_t count;
    [[maybe_unused]] ssize_t r = read(s.wake_fd, &count, sizeof count);
  }
  s.thread_deferring.store(kNotDeferring);
  return true;
}

// Looks for arrivals without sleeping for at most `ns`, then returns (so
// that the caller polls its waiting locks and the park and stop paths stay
// near).
void PollAwake(AgentState& s, uint64_t ns) {
  const uint64_t until = NowNs() + ns;
  do {
    s.transport->Progress();
    if (!s.transport->PrepareToSleep()) return;
    CpuRelax();
  } while (NowNs() < until);
}

// A test's request (AgentFailLink): ends the link from the origin it names
// as lost, as a network failure would, and answers whether there was one.
void FailLinkIfAsked(AgentState& s) {
  const int world_rank = s.fail_link_from.load();
  if (world_rank < 0) return;
  const bool found = world_rank != s.world_rank && world_rank < s.world_size &&
                     !s.inbound_lost[world_rank].load();
  if (found) s.transport->LoseLinkFrom(world_rank);
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
  bool served = false;  // requests came in this pass
};

// One pass's work, under s.serve_mutex: what arrived (origins' requests,
// lost links), a test's link failure and the waiting locks' polls.
LockPolls ServeEvents(AgentState& s) {
  s.thread_wants_serve.store(true);
  std::lock_guard<std::mutex> serving(s.serve_mutex);
  s.thread_wants_serve.store(false);
  s.transport->Progress();
  FailLinkIfAsked(s);
  const bool served = ServeTaken(s);
  if (s.locks.waiting()) GrantWaitingLocks(s);
  s.locks_waiting.store(static_cast<long long>(s.locks.waiting_count()),
                        std::memory_order_relaxed);
  return {.waiting = s.locks.waiting(),
          .cap_ns = s.locks.poll_interval_cap_ns(),
          .next_waited_ns = s.locks.shortest_next_wait_ns(),
          .served = served};
}

// Tests (AgentHoldThread): sits here, between passes, while held, and
// says so. Held again just as it was released: it looks once more after
// saying it left (a hold that still saw it here returned at once), so no
// pass starts under a hold.
void HoldWhileAsked(AgentState& s) {
  while (s.thread_held.load()) {
    s.thread_holding.store(true);
    s.thread_holding.notify_all();
    while (s.thread_held.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    s.thread_holding.store(false);
  }
}

// The agent's loop: asleep on the transport's descriptor until a request
// or a wake-up comes, so an idle agent costs nothing.
void Serve(AgentState& s) {
  ForbidProgressOnThisThread();  // the agent makes no MPI call
  // The polls below sleep microseconds; the kernel lets a thread's timed
  // sleeps run late by its timer slack (50 us unless set: prctl(2)), which
  // would make every poll of a waiting lock at least that long, a handover
  // to a remote locker with it. A microsecond of slack keeps the poll
  // intervals what they say; an idle agent sleeps without a timeout.
  constexpr unsigned long kTimerSlackNs = 1'000;
  prctl(PR_SET_TIMERSLACK, kTimerSlackNs, 0, 0, 0);
  const int epoll = epoll_create1(EPOLL_CLOEXEC);
  for (int fd : {s.transport->wait_fd(), s.wake_fd}) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &e);
  }
  {
    std::lock_guard<std::mutex> serving(s.serve_mutex);
    s.serving = true;
  }
  // While lock requests wait, the loop polls them between events: first
  // after kFirstPollNs, then at intervals that double up to the cap the
  // waiting requests allow (AgentLocks::poll_interval_cap_ns), back to the
  // first after every pass that served requests. Read under serve_mutex at
  // the end of each pass: a waiter that serves (ServeArrived) may queue
  // requests meanwhile, and then wakes this thread. For the first
  // AgentLockSpinNs of a request's turn (next in its gate: only holders to
  // leave) the loop polls awake instead: a release then costs no thread's
  // wake-up.
  constexpr uint64_t kFirstPollNs = 2'000;
  uint64_t poll_ns = kFirstPollNs;
  LockPolls polls;
  StandInsSeen seen;
  while (ParkIfAsked(s)) {
    const bool poll_awake =
        polls.waiting && polls.next_waited_ns < AgentLockSpinNs();
    if (poll_awake) {
      constexpr uint64_t kPassNs = 2'000;
      PollAwake(s, kPassNs);
    } else {
      const long sleep_ns = polls.waiting ? static_cast<long>(poll_ns)
                                          : AgentTransport::kMaxSleepNs;
      if (!SleepWhileStoodIn(s, sleep_ns, seen)) {
        SleepUntilEvent(s, epoll, sleep_ns);
      }
    }
    HoldWhileAsked(s);
    const bool was_waiting = polls.waiting;
    polls = ServeEvents(s);
    // Requests that begin to wait are polled first after kFirstPollNs.
    poll_ns = polls.served || !was_waiting
                  ? kFirstPollNs
                  : std::min(2 * poll_ns, polls.cap_ns);
    // The next request of a burst comes soon: look for it a while before
    // sleeping (AgentSpinNs), without taking the park or stop path.
    const uint64_t spin = AgentSpinNs();
    if (spin > 0 && polls.served && !polls.waiting) PollAwake(s, spin);
  }
  std::lock_guard<std::mutex> serving(s.serve_mutex);
  s.serving = false;
  close(epoll);
}

}  // namespace

bool ServeArrived(AgentState& s) {
  if (s.thread_wants_serve.load()) return false;
  std::unique_lock<std::mutex> serving(s.serve_mutex, std::try_to_lock);
  if (!serving.owns_lock() || !s.serving || s.parked_scopes.load() > 0) {
    return false;
  }
  s.transport->Progress();
  const bool served = ServeTaken(s);
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

uint64_t AgentAnswerSpinNs() {
  static const std::optional<uint64_t> configured =
      EnvMicrosecondsAsNs("RMASHIM_AGENT_ANSWER_SPIN_US");
  if (configured) return *configured;
  return spin_settings().oversubscribed ? 0 : uint64_t{kSpinAloneNs};
}

uint64_t AgentGrantSpinNs() {
  constexpr uint64_t kGrantSpinNs = 20'000;
  return std::min(AgentAnswerSpinNs(), kGrantSpinNs);
}

AgentState& TheAgent() {
  static AgentState* state = new AgentState;
  return *state;
}

bool AgentWanted() {
  const char* agent = std::getenv("RMASHIM_AGENT");
  const bool automatic =
      agent == nullptr || *agent == '\0' || std::strcmp(agent, "auto") == 0;
  if (!automatic) return std::strcmp(agent, "0") != 0;
  const long local = EnvLong("MPI_LOCALNRANKS"), size = EnvLong("PMI_SIZE");
  if (local > 0 && size > local) return true;
  if (EnvLong("SLURM_NNODES") > 1) return true;
  return EnvLong("MPIR_CVAR_ODD_EVEN_CLIQUES") > 0 ||
         EnvLong("MPIR_CVAR_NUM_CLIQUES") > 1;
}

void StartAgent() {
  AgentState& s = TheAgent();
  if (s.running) return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &s.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &s.world_size);
  if (s.world_rank == 0) {
    std::random_device random;
    s.token =
        (uint64_t{random()} << 32) ^ random() ^ static_cast<uint64_t>(getpid());
  }
  PMPI_Bcast(&s.token, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  // A process may start the agent again after StopAgent (libdart: a
  // program that owns MPI calls dart_init and dart_exit several times):
  // a new transport each time.
  s.transport = AgentTransport::Open(s.world_rank, s.world_size, s.token);
  s.wake_fd = eventfd(0, EFD_CLOEXEC);
  int ok = s.transport != nullptr && s.wake_fd >= 0;
  PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) {  // everywhere: windows then agree not to use agents
    if (s.world_rank == 0) {
      std::fprintf(stderr, "rmashim: agent: not started (no UCX transport)\n");
    }
    if (s.transport != nullptr) s.transport->Close();
    s.transport.reset();
    if (s.wake_fd >= 0) close(s.wake_fd);
    s.wake_fd = -1;
    return;
  }
  const auto size = static_cast<size_t>(s.world_size);
  s.queued.assign(size, {});
  s.rejected_unanswered.assign(size, 0);
  s.inbound_lost = std::make_unique<std::atomic<bool>[]>(size);
  s.inbound_losses.store(0);
  s.locks = AgentLocks();
  {
    std::lock_guard<std::mutex> lock(s.park_mutex);
    s.stopping = false;
  }
  s.running = true;
  served_windows().Open([](int world_rank) {
    const AgentState& agent = TheAgent();
    return agent.transport != nullptr && agent.transport->Reaches(world_rank);
  });
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
  CloseAllRma();         // windows not freed: before their context goes
  s.transport->Close();  // collective: no link ends as lost
  s.transport.reset();
  close(s.wake_fd);
  s.wake_fd = -1;
}

bool AgentRunning() { return TheAgent().running; }

int FailLinkFrom(int world_rank) {
  AgentState& s = TheAgent();
  if (!s.running || world_rank < 0 || world_rank >= s.world_size) {
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

int AgentHoldThread(AgentHold hold) {
  AgentState& s = TheAgent();
  if (!s.running) return MPI_ERR_OTHER;
  s.stand_ins_held.store(hold == AgentHold::kThreadAndStandIns);
  s.thread_held.store(hold != AgentHold::kNone);
  if (hold == AgentHold::kNone) return MPI_SUCCESS;
  // Held only once out of its pass: a pass under way keeps serve_mutex (or
  // wants it), and a waiter that meant to serve in its place would find
  // it taken, then sleep, with nobody left to serve what arrived.
  Wake(s);
  while (!s.thread_holding.load()) s.thread_holding.wait(false);
  return MPI_SUCCESS;
}

long long AgentApplied() { return TheAgent().applied.load(); }

long long AgentLocksGranted() { return TheAgent().locks_granted.load(); }

long long AgentLocksWaiting() { return TheAgent().locks_waiting.load(); }

long long AgentRejected() {
  const AgentState& s = TheAgent();
  return s.rejected.load() +
         (s.transport != nullptr ? s.transport->rejected() : 0);
}

AgentParked::AgentParked() {
  AgentState& s = TheAgent();
  if (!s.running || std::this_thread::get_id() == s.thread.get_id()) return;
  std::unique_lock<std::mutex> lock(s.park_mutex);
  ++s.park_requests;
  parked_ = true;
  s.parked_scopes.fetch_add(1);
  Wake(s);  // out of epoll_wait, to the top of its loop
  s.park_cv.wait(lock, [&] { return s.parked; });
  lock.unlock();
  // A waiter's pass begun before the count rose ends before this returns.
  std::lock_guard<std::mutex> passes(s.serve_mutex);
}

AgentParked::~AgentParked() {
  if (!parked_) return;
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> lock(s.park_mutex);
  s.parked_scopes.fetch_sub(1);
  if (--s.park_requests == 0) s.park_cv.notify_all();
}

AgentStandIn::AgentStandIn() : yields_(spin_settings().host_oversubscribed) {
  AgentState& s = TheAgent();
  if (!s.running.load() || s.stand_ins_held.load()) return;
  active_ = true;
  started_ns_ = NowNs();
  s.stand_ins.fetch_add(1);
}

void AgentStandIn::YieldCore() { sched_yield(); }

bool BlockingCallsTestInstead() {
  return AgentRunning() || spin_settings().host_oversubscribed;
}

AgentStandIn::~AgentStandIn() {
  if (active_) Leave(NowNs() - started_ns_ >= kStandInLingerNs);
}

void AgentStandIn::HandBack() {
  if (active_) Leave(/*wake=*/true);
}

// The agent's thread lingers unarmed after a short stand-in, and is woken
// after a long one (`wake`) or where it sleeps without a time limit
// (SleepWhileStoodIn).
void AgentStandIn::Leave(bool wake) {
  active_ = false;
  AgentState& s = TheAgent();
  s.stand_in_left_ns.store(wake ? 0 : NowNs());
  if (s.stand_ins.fetch_sub(1) != 1) return;
  const int deferring = s.thread_deferring.load();
  if (deferring == kDeferringOpen || (wake && deferring != kNotDeferring)) {
    Wake(s);
  }
}

void AgentStandIn::Serve() { ServeArrived(TheAgent()); }

}  // namespace rmashim
