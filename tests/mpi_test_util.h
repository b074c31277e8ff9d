// Small helpers shared by the MPI test suites.
#ifndef RMASHIM_TESTS_MPI_TEST_UTIL_H_
#define RMASHIM_TESTS_MPI_TEST_UTIL_H_

#include <dlfcn.h>
#include <mpi.h>
#include <sched.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace rmashim_test {

inline int Rank(MPI_Comm comm = MPI_COMM_WORLD) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

inline int Size(MPI_Comm comm = MPI_COMM_WORLD) {
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}

// Whether librmashim.so is preloaded and manages `win`.
inline bool IsManaged(MPI_Win win) {
  using Fn = int (*)(MPI_Win, int*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_win_is_managed"));
  int flag = 0;
  return fn != nullptr && fn(win, &flag) == MPI_SUCCESS && flag != 0;
}

// Whether this process reaches `rank`'s memory of `win` with loads and
// stores (rmashim_win_target_mapped): false without the shim.
inline bool IsMapped(MPI_Win win, int rank) {
  using Fn = int (*)(MPI_Win, int, int*);
  auto fn =
      reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_win_target_mapped"));
  int flag = 0;
  return fn != nullptr && fn(win, rank, &flag) == MPI_SUCCESS && flag != 0;
}

// Data-movement calls this process handed to MPI on `win` since it was
// created (rmashim_win_passed_to_mpi); -1 without the shim.
inline long long PassedToMpi(MPI_Win win) {
  using Fn = int (*)(MPI_Win, long long*);
  auto fn =
      reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_win_passed_to_mpi"));
  long long count = -1;
  if (fn != nullptr) fn(win, &count);
  return count;
}

// Whether this process runs the shim's agent (shim/agent/agent.h: on a job that
// spans nodes, remote origins' accumulates to this process's windows are
// applied by it, and node-local ones served in passive epochs).
// rmashim_agent_stats: whether it runs, and the remote operations it has
// applied (zeros where the shim is not loaded).
struct AgentStats {
  int running = 0;
  long long applied = 0;
};
inline AgentStats ReadAgentStats() {
  using Fn = int (*)(int*, long long*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_agent_stats"));
  AgentStats s;
  if (fn != nullptr) fn(&s.running, &s.applied);
  return s;
}
inline bool AgentRunning() { return ReadAgentStats().running != 0; }
// Locks this process's agent granted remote origins (rmashim_agent_lock_stats).
inline long long AgentLocksGranted() {
  using Fn = int (*)(long long*);
  auto fn =
      reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_agent_lock_stats"));
  long long granted = 0;
  if (fn != nullptr) fn(&granted);
  return granted;
}
// Remote lock requests this process's agent has queued
// (rmashim_agent_locks_waiting); -1 where the shim is not loaded.
inline long long AgentLocksWaiting() {
  using Fn = int (*)(long long*);
  auto fn =
      reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_agent_locks_waiting"));
  long long waiting = -1;
  if (fn != nullptr) fn(&waiting);
  return waiting;
}
// Requests this process's agent refused or dropped unseen
// (rmashim_agent_rejected); -1 where the shim is not loaded.
inline long long AgentRejected() {
  using Fn = int (*)(long long*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_agent_rejected"));
  long long rejected = -1;
  if (fn != nullptr) fn(&rejected);
  return rejected;
}
// Remote puts and gets this process started as RMA of the agents'
// transport (rmashim_agent_rma_ops); -1 where the shim is not loaded.
inline long long AgentRmaOps() {
  using Fn = int (*)(long long*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_agent_rma_ops"));
  long long ops = -1;
  if (fn != nullptr) fn(&ops);
  return ops;
}
// The times this process gave its core away in MPI's own waits
// (rmashim_mpi_progress_yields); -1 where the shim is not loaded.
inline long long MpiProgressYields() {
  using Fn = int (*)(long long*);
  auto fn =
      reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_mpi_progress_yields"));
  long long yields = -1;
  if (fn != nullptr) fn(&yields);
  return yields;
}
// The id `rank`'s agent knows `win` by (rmashim_win_agent_id); -1 where
// none.
inline int AgentWindowId(MPI_Win win, int rank) {
  using Fn = int (*)(MPI_Win, int, int*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_win_agent_id"));
  int id = -1;
  if (fn != nullptr) fn(win, rank, &id);
  return id;
}
// Sends forged requests to an agent (rmashim_agent_send_forged).
inline int SendForgedToAgent(int world_rank, int claimed_origin,
                             unsigned long long token_xor, const void* frames,
                             size_t bytes) {
  using Fn = int (*)(int, int, unsigned long long, const void*, size_t);
  auto fn =
      reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_agent_send_forged"));
  return fn != nullptr
             ? fn(world_rank, claimed_origin, token_xor, frames, bytes)
             : MPI_ERR_OTHER;
}
// Fails an agent link as a network failure would (rmashim_agent_fail_link);
// MPI_ERR_OTHER where the shim is not loaded.
inline int FailAgentLink(int world_rank, bool agent_end) {
  using Fn = int (*)(int, int);
  auto fn =
      reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_agent_fail_link"));
  return fn != nullptr ? fn(world_rank, agent_end ? 1 : 0) : MPI_ERR_OTHER;
}

// Holds this process's agent thread off its work, and the blocking calls
// from serving in its place, or releases them (rmashim_agent_hold);
// MPI_ERR_OTHER where the shim is not loaded.
inline int HoldAgentHow(int how) {
  using Fn = int (*)(int);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_agent_hold"));
  return fn != nullptr ? fn(how) : MPI_ERR_OTHER;
}
inline int HoldAgent(bool held) { return HoldAgentHow(held ? 1 : 0); }
// Holds the agent's thread alone: the calls that wait serve in its place.
inline int HoldAgentThreadOnly() { return HoldAgentHow(2); }

// Why the shim does not serve `win` ("" when it manages it): for suites
// that run under the preloaded shim, which would otherwise test native
// MPICH without noticing (a failed preload, or a window silently left to
// MPI). Use EXPECT_MANAGED / ASSERT_MANAGED where a window is created.
inline std::string WhyNotManaged(MPI_Win win) {
  using Fn = int (*)(MPI_Win, int*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_win_is_managed"));
  if (fn == nullptr) return "librmashim.so is not loaded (LD_PRELOAD)";
  int flag = 0;
  const int rc = fn(win, &flag);
  if (rc != MPI_SUCCESS) {
    return "rmashim_win_is_managed failed with " + std::to_string(rc);
  }
  return flag ? "" : "the shim left the window to MPI";
}

// In a GoogleTest suite run under the shim: the shim manages `win`.
#define EXPECT_MANAGED(win) \
  EXPECT_EQ(::rmashim_test::WhyNotManaged(win), "") << "window " #win
#define ASSERT_MANAGED(win) \
  ASSERT_EQ(::rmashim_test::WhyNotManaged(win), "") << "window " #win

// For every rank of `comm`, whether it shares this rank's node (honours
// MPICH's simulated cliques). Collective over `comm`.
inline std::vector<bool> NodeLocalRanks(MPI_Comm comm = MPI_COMM_WORLD) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Group comm_group, node_group;
  MPI_Comm_group(comm, &comm_group);
  MPI_Comm_group(node, &node_group);
  const int n = Size(comm);
  std::vector<int> ranks(n), translated(n);
  for (int r = 0; r < n; ++r) ranks[r] = r;
  MPI_Group_translate_ranks(comm_group, n, ranks.data(), node_group,
                            translated.data());
  MPI_Group_free(&comm_group);
  MPI_Group_free(&node_group);
  MPI_Comm_free(&node);
  std::vector<bool> local(n);
  for (int r = 0; r < n; ++r) local[r] = translated[r] != MPI_UNDEFINED;
  return local;
}

// Whether world rank `other` shares this rank's node. Collective.
inline bool SameNode(int other) { return NodeLocalRanks()[other]; }

inline int ErrorClass(int code) {
  int cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  return cls;
}

// A communicator freed at scope exit.
class ScopedComm {
 public:
  explicit ScopedComm(MPI_Comm comm) : comm_(comm) {}
  ~ScopedComm() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  ScopedComm(const ScopedComm&) = delete;
  ScopedComm& operator=(const ScopedComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_;
};

// MPI_COMM_WORLD's ranks on this rank's (possibly simulated) node.
inline MPI_Comm SplitNodeComm() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  return node;
}

// An info object freed at scope exit.
class ScopedInfo {
 public:
  ScopedInfo(
      std::initializer_list<std::pair<const char*, const char*>> kv = {}) {
    MPI_Info_create(&info_);
    for (const auto& [key, value] : kv) MPI_Info_set(info_, key, value);
  }
  ~ScopedInfo() { MPI_Info_free(&info_); }
  ScopedInfo(const ScopedInfo&) = delete;
  ScopedInfo& operator=(const ScopedInfo&) = delete;
  MPI_Info get() const { return info_; }

 private:
  MPI_Info info_ = MPI_INFO_NULL;
};

// Info that asks the shim to leave an MPI_Win_allocate window to MPI.
struct OptOutInfo : ScopedInfo {
  OptOutInfo() : ScopedInfo({{"rmashim_managed", "false"}}) {}
};

// MPICH 4.0.2's own MPI_Win_allocate hands out a 16-byte-aligned baseptr
// but puts data at the unaligned segment start when a node-local segment
// size is not a multiple of 16, so native (opt-out) windows in the tests are
// rounded up to keep that MPICH bug out of the picture.
inline MPI_Aint NativeSafeBytes(MPI_Aint bytes) {
  return (bytes + 15) / 16 * 16;
}

// An MPI_Win_allocate window, freed (collectively) at scope exit.
class AllocWindow {
 public:
  AllocWindow(MPI_Aint bytes, int disp_unit, MPI_Info info = MPI_INFO_NULL,
              MPI_Comm comm = MPI_COMM_WORLD) {
    rc_ = MPI_Win_allocate(bytes, disp_unit, info, comm, &base_, &win_);
  }
  ~AllocWindow() {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
  }
  AllocWindow(const AllocWindow&) = delete;
  AllocWindow& operator=(const AllocWindow&) = delete;

  int rc() const { return rc_; }
  MPI_Win win() const { return win_; }
  template <typename T = std::byte>
  T* base() const {
    return static_cast<T*>(base_);
  }

 private:
  int rc_ = MPI_SUCCESS;
  void* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
};

// A byte that depends on who wrote it and where, so misplaced data shows.
inline std::byte PatternByte(int writer, std::size_t index, int salt = 0) {
  return static_cast<std::byte>((writer * 131 + index * 7 + salt * 29 + 1) &
                                0xff);
}

// Polls `done` (which must not block) until it returns true or `seconds`
// pass, yielding the core between polls since ranks are oversubscribed.
// Returns whether `done` became true.
template <typename Pred>
bool PollUntil(Pred done, double seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    sched_yield();
  }
  return true;
}

// Ends the process, failing the run, if still alive after `seconds`: guards
// calls that may block inside MPI forever, so such a hang fails fast with a
// message naming `what` instead of waiting for mpirun's timeout (hydra then
// tears down the other ranks).
class HangWatchdog {
 public:
  HangWatchdog(double seconds, std::string what)
      : what_(std::move(what)), thread_([this, seconds] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds),
                            [this] { return done_; })) {
            std::fprintf(stderr, "FAILED: %s did not finish in %g s (hang)\n",
                         what_.c_str(), seconds);
            std::fflush(stderr);
            std::_Exit(3);
          }
        }) {}
  ~HangWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  HangWatchdog(const HangWatchdog&) = delete;
  HangWatchdog& operator=(const HangWatchdog&) = delete;

 private:
  const std::string what_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

// Whether every rank of `comm` shares one (possibly simulated) node, i.e.
// the shim serves the window's synchronization in shared memory.
// Collective over `comm`.
inline bool AllOnOneNode(MPI_Comm comm) {
  const std::vector<bool> local = NodeLocalRanks(comm);
  for (bool l : local) {
    if (!l) return false;
  }
  return true;
}

// A test's size knob: the environment variable `name` (set per target in
// BUILD, e.g. fewer cycles when ranks outnumber cores), else `fallback`.
inline int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

}  // namespace rmashim_test

#endif  // RMASHIM_TESTS_MPI_TEST_UTIL_H_
