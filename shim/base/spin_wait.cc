// Waiting in shared memory (spin_wait.h): measuring a relax, the rounds,
// progress and yielding.
#include "shim/base/spin_wait.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>

namespace rmashim {
namespace {

std::atomic<void (*)()> g_spin_progress{nullptr};
std::atomic<uint64_t> g_progress_yields{0};

// Relaxes per microsecond: the fastest of a few timed batches (an
// interrupted batch only looks slower).
uint32_t MeasureRelaxPerUs() {
  constexpr int kBatch = 1024;
  uint64_t best_ns = ~uint64_t{0};
  for (int attempt = 0; attempt < 4; ++attempt) {
    const uint64_t t0 = NowNs();
    for (int i = 0; i < kBatch; ++i) CpuRelax();
    const uint64_t ns = NowNs() - t0;
    if (ns < best_ns) best_ns = ns;
  }
  if (best_ns == 0) best_ns = 1;
  const uint64_t per_us = uint64_t{kBatch} * 1000 / best_ns;
  return per_us < 1        ? 1
         : per_us > 100000 ? 100000
                           : static_cast<uint32_t>(per_us);
}

SpinSettings& Settings() {
  static SpinSettings settings{MeasureRelaxPerUs(), true};
  return settings;
}

}  // namespace

uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

const SpinSettings& spin_settings() { return Settings(); }

void CalibrateSpin(int node_ranks) {
  const long units = sysconf(_SC_NPROCESSORS_ONLN);
  Settings().oversubscribed = units < 1 || node_ranks > units;
  const char* launched = std::getenv("MPI_LOCALNRANKS");
  const long host_ranks =
      std::max<long>(node_ranks, launched != nullptr ? std::atol(launched) : 0);
  // The agent's thread runs where this process may: a rank pinned to its
  // core has no second one, whatever the node has.
  long usable = units;
  if (cpu_set_t allowed; sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    usable = std::min<long>(usable, CPU_COUNT(&allowed));
  }
  Settings().core_per_thread = usable >= 2L * host_ranks;
  Settings().host_oversubscribed = usable < 1 || host_ranks > usable;
}

void SetSpinProgress(void (*progress)()) { g_spin_progress.store(progress); }

namespace {
thread_local bool t_progress_forbidden = false;
}  // namespace

void ForbidProgressOnThisThread() { t_progress_forbidden = true; }

void DriveProgress() {
  if (t_progress_forbidden) return;
  if (void (*progress)() = g_spin_progress.load(std::memory_order_relaxed)) {
    progress();
  }
}

void DriveProgressNowAndThen() {
  // Per thread: no shared line written on the served paths.
  thread_local uint32_t served = 0;
  if (++served % kServedCallsPerProgress == 0) DriveProgress();
}

void NoteMpiProgressPoll(bool progressed) {
  if (!spin_settings().host_oversubscribed) return;
  // Per thread: when this thread's current run of idle polls began, and
  // its last idle poll. A run ends at a poll that progressed, or where the
  // previous idle poll was long ago (another wait, or this thread just
  // came back from giving its core away): no stale run makes a new wait
  // yield at its first poll.
  thread_local uint64_t idle_since = 0;
  thread_local uint64_t last_idle = 0;
  if (progressed) {
    idle_since = 0;
    return;
  }
  const uint64_t now = NowNs();
  if (idle_since == 0 || now - last_idle > kSpinBeforeYieldNs) idle_since = now;
  last_idle = now;
  if (now - idle_since >= kSpinBeforeYieldNs) {
    g_progress_yields.fetch_add(1, std::memory_order_relaxed);
    sched_yield();
  }
}

uint64_t MpiProgressYields() {
  return g_progress_yields.load(std::memory_order_relaxed);
}

void Backoff::Round(uint32_t ns) {
  const SpinSettings& s = spin_settings();
  uint64_t relaxes = (uint64_t{ns} * s.relax_per_us + 999) / 1000;
  if (relaxes == 0) relaxes = 1;
  for (uint64_t i = 0; i < relaxes; ++i) CpuRelax();
  // The first rounds are short: no clock (a read costs about as much).
  if (++rounds_ < 4) return;
  const uint64_t now = NowNs();
  if (started_ns_ == 0) {
    started_ns_ = now;
    return;
  }
  const uint64_t waited = now - started_ns_;
  if (waited - last_progress_ns_ >= kProgressIntervalNs) {
    last_progress_ns_ = waited;
    DriveProgress();
  }
  if (waited >= (s.oversubscribed ? kSpinBeforeYieldNs : kSpinAloneNs)) {
    sched_yield();
  }
}

}  // namespace rmashim
