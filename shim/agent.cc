// The agent thread and its origin-side messages (agent.h has the design).
#include "shim/agent.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "shim/accumulate.h"
#include "shim/agent_link.h"
#include "shim/runtime.h"
#include "shim/shared_user_memory.h"
#include "shim/window.h"

namespace rmashim {
namespace {

enum class RequestKind : uint32_t {
  kUpdate,       // accumulate family: runs, then origin elements
  kCompareSwap,  // one element: origin, then compare
  kFlush,        // answered once everything before it is applied
};

// The fixed part of every request; runs (ElementRun) and data follow.
struct RequestHeader {
  RequestKind kind = RequestKind::kFlush;
  int32_t window = -1;  // the target's agent id for the window
  int64_t disp = 0;     // in the target's displacement units
  MPI_Datatype element = MPI_DATATYPE_NULL;  // predefined: same everywhere
  MPI_Op op = MPI_OP_NULL;  // predefined; MPI_NO_OP: no origin data
  int64_t elements = 0;
  int64_t element_size = 0;
  int64_t runs = 0;
  int32_t fetching = 0;  // 1: reply with the old values
  int32_t pad = 0;
};
static_assert(sizeof(MPI_Datatype) == sizeof(int32_t) &&
              sizeof(MPI_Op) == sizeof(int32_t));

long EnvLong(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atol(v) : 0;
}

// The agent's state. One per process.
struct AgentState {
  std::thread thread;
  std::atomic<bool> running{false};
  std::atomic<long long> applied{0};

  // Target side: where it listens, and an eventfd that wakes its thread
  // (to park or to stop).
  AgentListener listener;
  int wake_fd = -1;
  bool stopping = false;  // under park_mutex
  // Every process's endpoint (by world rank) and the job's token.
  std::vector<AgentEndpoint> endpoints;
  uint64_t token = 0;
  int world_rank = 0;

  // Registered windows, by id; null: a free id.
  std::mutex windows_mutex;
  std::vector<ManagedWindow*> windows;

  // Parking (AgentParked): a request count, and whether the thread sits
  // parked at the top of its loop.
  std::mutex park_mutex;
  std::condition_variable park_cv;
  int park_requests = 0;
  bool parked = false;

  // Origin side: one exchange with an agent at a time, so replies match
  // their requests when several application threads call MPI; the
  // connection to each process's agent, opened at first use (-1: none).
  std::mutex origin_mutex;
  std::vector<int> links;
  // Updates that wait for no reply, by world rank, queued as frames until
  // the next exchange with that agent that waits (a fetching operation, a
  // flush) or until kQueueBytes: MPI completes them only at the origin's
  // next synchronization, and one send then carries the whole burst.
  std::vector<std::vector<std::byte>> queued;
};

constexpr size_t kQueueBytes = 64 * 1024;

AgentState& State() {
  static AgentState* state = new AgentState;  // outlives static destructors
  return *state;
}

void Wake(const AgentState& s) {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(s.wake_fd, &one, sizeof one);
}

[[noreturn]] void Malformed(const char* what, const RequestHeader& h) {
  std::fprintf(stderr,
               "rmashim: agent: malformed request (%s: kind %u, window %d)\n",
               what, static_cast<unsigned>(h.kind), h.window);
  std::abort();  // the agent's thread makes no MPI call, MPI_Abort included
}

// Applies one update or compare-and-swap to this process's memory of the
// window it names, as a node-local origin would (never exclusive: other
// origins may be updating the same elements through the stripes).
void Apply(AgentState& s, const RequestHeader& h, const std::byte* body,
           size_t body_bytes, int link) {
  std::vector<std::byte> result;
  {
    std::lock_guard<std::mutex> guard(s.windows_mutex);
    if (h.window < 0 || static_cast<size_t>(h.window) >= s.windows.size() ||
        s.windows[h.window] == nullptr) {
      Malformed("unknown window", h);
    }
    const ManagedWindow& w = *s.windows[h.window];
    const Target& t = w.target(w.rank());
    const MPI_Aint base = h.disp * t.disp_unit;
    const auto size = static_cast<size_t>(h.element_size);
    if (h.kind == RequestKind::kCompareSwap) {
      const CompareSwapOp* cas = nullptr;
      if (body_bytes != 2 * size ||
          FindCompareSwap(h.element, &cas) != MPI_SUCCESS ||
          base < 0 || base + static_cast<MPI_Aint>(size) > t.size) {
        Malformed("compare-and-swap", h);
      }
      result.resize(size);
      ApplyCompareSwap(*cas, /*exclusive=*/false, t, base, body, body + size,
                       result.data());
    } else {
      const ElementOp* e = nullptr;
      const size_t run_bytes = static_cast<size_t>(h.runs) * sizeof(ElementRun);
      const size_t data_bytes =
          h.op == MPI_NO_OP ? 0 : static_cast<size_t>(h.elements) * size;
      if (FindElementOp(h.element, h.op, &e) != MPI_SUCCESS ||
          body_bytes != run_bytes + data_bytes || e->size != size) {
        Malformed("update", h);
      }
      std::vector<ElementRun> runs(h.runs);
      std::memcpy(runs.data(), body, run_bytes);
      const std::byte* origin_data = data_bytes ? body + run_bytes : nullptr;
      if (h.fetching) result.resize(static_cast<size_t>(h.elements) * size);
      MPI_Aint done = 0;
      for (const ElementRun& run : runs) {
        const MPI_Aint offset = base + run.offset;
        if (offset < 0 || run.count < 0 ||
            offset + run.count * e->extent > t.size ||
            done + run.count > h.elements) {
          Malformed("range", h);
        }
        const std::byte* src =
            origin_data ? origin_data + done * e->size : t.base + offset;
        ApplyRun(*e, /*exclusive=*/false, t, offset, src,
                 h.fetching ? result.data() + done * e->size : nullptr,
                 static_cast<size_t>(run.count));
        done += run.count;
      }
    }
  }
  // The updates are visible before the origin learns they are done.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  s.applied.fetch_add(1, std::memory_order_relaxed);
  if (h.kind == RequestKind::kCompareSwap || h.fetching) {
    WriteFrame(link, result.data(), result.size());
  }
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

// A new connection: the hello must carry this job's token.
void Accept(AgentState& s, int epoll) {
  const int fd = accept4(s.listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  AgentHello hello;
  const char yes = 1;
  if (!ReadAll(fd, &hello, sizeof hello) || hello.token != s.token ||
      !WriteAll(fd, &yes, 1)) {
    close(fd);
    return;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.fd = fd;
  epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &e);
}

// One request from the origin on `link`; false when the link closed.
bool ServeRequest(AgentState& s, int link, std::vector<std::byte>& frame) {
  if (!ReadFrame(link, &frame)) return false;
  RequestHeader h;
  if (frame.size() < sizeof h) Malformed("short", h);
  std::memcpy(&h, frame.data(), sizeof h);
  switch (h.kind) {
    case RequestKind::kFlush:
      std::atomic_thread_fence(std::memory_order_seq_cst);
      return WriteFrame(link, nullptr, 0);
    case RequestKind::kUpdate:
    case RequestKind::kCompareSwap:
      Apply(s, h, frame.data() + sizeof h, frame.size() - sizeof h, link);
      return true;
    default:
      Malformed("kind", h);
  }
}

// The agent's loop: blocked in epoll_wait until a request, a new
// connection or a wake-up comes, so an idle agent costs nothing.
void Serve(AgentState& s) {
  const int epoll = epoll_create1(EPOLL_CLOEXEC);
  for (int fd : {s.listener.fd, s.wake_fd}) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &e);
  }
  std::vector<std::byte> frame;
  epoll_event ready[64];
  while (ParkIfAsked(s)) {
    const int n = epoll_wait(epoll, ready, 64, -1);
    for (int i = 0; i < n; ++i) {
      const int fd = ready[i].data.fd;
      if (fd == s.wake_fd) {
        uint64_t count;
        [[maybe_unused]] ssize_t r = read(s.wake_fd, &count, sizeof count);
      } else if (fd == s.listener.fd) {
        Accept(s, epoll);
      } else if (!ServeRequest(s, fd, frame)) {
        epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
        close(fd);
      }
    }
  }
  close(epoll);
}

// The link to `world_rank`'s agent, opened at first use; -1 when it
// cannot be reached. The caller holds s.origin_mutex.
int LinkTo(AgentState& s, int world_rank) {
  int& fd = s.links[world_rank];
  if (fd < 0) {
    fd = ConnectAgent(s.endpoints[world_rank], {s.token, s.world_rank});
    if (fd < 0) {
      std::fprintf(stderr, "rmashim: agent: cannot reach world rank %d's agent\n",
                   world_rank);
    }
  }
  return fd;
}

// One request to the agent of `world_rank`, and its reply into `reply`
// (`reply_bytes`) when `reply_bytes` >= 0. The caller holds
// s.origin_mutex. A lost link is an error of the call (MPI_ERR_OTHER),
// never a silent loss.
int Exchange(AgentState& s, int world_rank, const std::vector<std::byte>& msg,
             void* reply, int reply_bytes) {
  std::vector<std::byte>& queue = s.queued[world_rank];
  const auto length = static_cast<uint32_t>(msg.size());
  const size_t at = queue.size();
  queue.resize(at + sizeof length + msg.size());
  std::memcpy(queue.data() + at, &length, sizeof length);
  std::memcpy(queue.data() + at + sizeof length, msg.data(), msg.size());
  if (reply_bytes < 0 && queue.size() < kQueueBytes) return MPI_SUCCESS;
  const int fd = LinkTo(s, world_rank);
  const bool sent = fd >= 0 && WriteAll(fd, queue.data(), queue.size());
  queue.clear();
  if (!sent) return MPI_ERR_OTHER;
  if (reply_bytes < 0) return MPI_SUCCESS;
  std::vector<std::byte> frame;
  if (!ReadFrame(fd, &frame) ||
      frame.size() != static_cast<size_t>(reply_bytes)) {
    return MPI_ERR_OTHER;
  }
  if (reply_bytes > 0) std::memcpy(reply, frame.data(), frame.size());
  return MPI_SUCCESS;
}

std::vector<std::byte> Message(const RequestHeader& h, size_t body_bytes) {
  std::vector<std::byte> msg(sizeof h + body_bytes);
  std::memcpy(msg.data(), &h, sizeof h);
  return msg;
}

void NotePending(ManagedWindow& w, int target) {
  StateGuard guard(w.state_mutex);
  w.agent_pending[target] = 1;
  w.any_agent_pending = true;
}

}  // namespace

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
  AgentState& s = State();
  if (s.running) return;
  int size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &s.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  s.wake_fd = eventfd(0, EFD_CLOEXEC);
  int ok = s.wake_fd >= 0 && s.listener.Open();
  PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) {  // everywhere: windows then agree not to use agents
    if (s.world_rank == 0) {
      std::fprintf(stderr, "rmashim: agent: not started (no TCP listener)\n");
    }
    return;
  }
  if (s.world_rank == 0) {
    std::random_device random;
    s.token = (uint64_t{random()} << 32) ^ random() ^
              static_cast<uint64_t>(getpid());
  }
  PMPI_Bcast(&s.token, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  s.endpoints.resize(size);
  PMPI_Allgather(&s.listener.endpoint, sizeof(AgentEndpoint), MPI_BYTE,
                 s.endpoints.data(), sizeof(AgentEndpoint), MPI_BYTE,
                 MPI_COMM_WORLD);
  s.links.assign(size, -1);
  s.queued.assign(size, {});
  s.running = true;
  s.thread = std::thread([&s] { Serve(s); });
  NoteShimThreadStarted();
}

void StopAgent() {
  AgentState& s = State();
  if (!s.running) return;
  // After this barrier no process sends another request.
  PMPI_Barrier(MPI_COMM_WORLD);
  {
    std::lock_guard<std::mutex> lock(s.park_mutex);
    s.stopping = true;
  }
  Wake(s);
  s.thread.join();
  s.running = false;
  for (int& fd : s.links) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  close(s.wake_fd);
}

bool AgentRunning() { return State().running; }

long long AgentApplied() { return State().applied.load(); }

int RegisterAgentWindow(ManagedWindow* w) {
  AgentState& s = State();
  if (!s.running) return -1;
  std::lock_guard<std::mutex> guard(s.windows_mutex);
  auto free_id = std::find(s.windows.begin(), s.windows.end(), nullptr);
  if (free_id != s.windows.end()) {
    *free_id = w;
    return static_cast<int>(free_id - s.windows.begin());
  }
  s.windows.push_back(w);
  return static_cast<int>(s.windows.size() - 1);
}

void UnregisterAgentWindow(int id) {
  if (id < 0) return;
  AgentState& s = State();
  std::lock_guard<std::mutex> guard(s.windows_mutex);
  s.windows[id] = nullptr;
}

AgentParked::AgentParked() {
  AgentState& s = State();
  if (!s.running || std::this_thread::get_id() == s.thread.get_id()) return;
  std::unique_lock<std::mutex> lock(s.park_mutex);
  ++s.park_requests;
  parked_ = true;
  Wake(s);  // out of epoll_wait, to the top of its loop
  s.park_cv.wait(lock, [&] { return s.parked; });
}

AgentParked::~AgentParked() {
  if (!parked_) return;
  AgentState& s = State();
  std::lock_guard<std::mutex> lock(s.park_mutex);
  if (--s.park_requests == 0) s.park_cv.notify_all();
}

int AgentUpdate(ManagedWindow& w, int target, MPI_Aint disp,
                MPI_Datatype element, MPI_Op op,
                const std::vector<ElementRun>& runs, size_t elements,
                size_t element_size, const std::byte* origin,
                std::byte* result) {
  const RequestHeader h{.kind = RequestKind::kUpdate,
                        .window = w.agent_id(target),
                        .disp = disp,
                        .element = element,
                        .op = op,
                        .elements = static_cast<int64_t>(elements),
                        .element_size = static_cast<int64_t>(element_size),
                        .runs = static_cast<int64_t>(runs.size()),
                        .fetching = result != nullptr};
  const size_t run_bytes = runs.size() * sizeof(ElementRun);
  const size_t data_bytes = origin != nullptr ? elements * element_size : 0;
  std::vector<std::byte> msg = Message(h, run_bytes + data_bytes);
  std::memcpy(msg.data() + sizeof h, runs.data(), run_bytes);
  if (data_bytes) std::memcpy(msg.data() + sizeof h + run_bytes, origin, data_bytes);
  const int reply_bytes =
      result != nullptr ? static_cast<int>(elements * element_size) : -1;
  AgentState& s = State();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  const int rc = Exchange(s, w.world_rank(target), msg, result, reply_bytes);
  if (rc == MPI_SUCCESS && result == nullptr) NotePending(w, target);
  return rc;
}

int AgentCompareSwap(ManagedWindow& w, int target, MPI_Aint disp,
                     MPI_Datatype type, size_t size, const std::byte* origin,
                     const std::byte* compare, std::byte* result) {
  const RequestHeader h{.kind = RequestKind::kCompareSwap,
                        .window = w.agent_id(target),
                        .disp = disp,
                        .element = type,
                        .op = MPI_REPLACE,
                        .elements = 1,
                        .element_size = static_cast<int64_t>(size),
                        .runs = 0,
                        .fetching = 1};
  std::vector<std::byte> msg = Message(h, 2 * size);
  std::memcpy(msg.data() + sizeof h, origin, size);
  std::memcpy(msg.data() + sizeof h + size, compare, size);
  AgentState& s = State();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  return Exchange(s, w.world_rank(target), msg, result,
                  static_cast<int>(size));
}

// Another thread's flush of the same target waits on origin_mutex until
// this one's answer came: it may have cleared that thread's mark.
int AgentFlush(ManagedWindow& w, int target) {
  AgentState& s = State();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  {
    StateGuard state_guard(w.state_mutex);
    if (!w.agent_served() || !w.agent_pending[target]) return MPI_SUCCESS;
    w.agent_pending[target] = 0;
  }
  const RequestHeader h{.kind = RequestKind::kFlush};
  return Exchange(s, w.world_rank(target), Message(h, 0), nullptr, 0);
}

int AgentFlushAll(ManagedWindow& w) {
  if (!w.any_agent_pending) return MPI_SUCCESS;
  for (int target = 0; target < w.comm_size(); ++target) {
    if (const int rc = AgentFlush(w, target)) return rc;
  }
  w.any_agent_pending = false;
  return MPI_SUCCESS;
}

}  // namespace rmashim
