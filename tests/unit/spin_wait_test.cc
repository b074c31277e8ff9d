// Waiting (shim/base/spin_wait.h): the relax cost is measured, the node's
// oversubscription decides whether a waiter yields early, MPI progress
// runs while a wait lasts, and a queue waiter looks again at once when it
// is next. No timing is asserted beyond "a long wait lasts longer than the
// progress interval".
#include "shim/base/spin_wait.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

namespace rmashim {
namespace {

std::atomic<int> g_progress_calls{0};
void CountProgress() { g_progress_calls.fetch_add(1); }

// The processing units this thread may run on.
long UsableUnits() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
  return std::min<long>(sysconf(_SC_NPROCESSORS_ONLN), CPU_COUNT(&allowed));
}

// Unsets MPI_LOCALNRANKS for a test and puts back what the launcher set.
class LocalRanksUnset {
 public:
  LocalRanksUnset() {
    const char* launched = std::getenv("MPI_LOCALNRANKS");
    if (launched != nullptr) saved_ = launched;
    unsetenv("MPI_LOCALNRANKS");
  }
  ~LocalRanksUnset() {
    if (saved_) {
      setenv("MPI_LOCALNRANKS", saved_->c_str(), 1);
    } else {
      unsetenv("MPI_LOCALNRANKS");
    }
  }
  LocalRanksUnset(const LocalRanksUnset&) = delete;
  LocalRanksUnset& operator=(const LocalRanksUnset&) = delete;

 private:
  std::optional<std::string> saved_;
};

TEST(SpinWait, RelaxCostIsMeasured) {
  const SpinSettings& s = spin_settings();
  EXPECT_GE(s.relax_per_us, 1u);
  EXPECT_LE(s.relax_per_us, 100000u);
}

TEST(SpinWait, OversubscribedOnlyWithMoreRanksThanUnits) {
  const long units = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GE(units, 1);
  CalibrateSpin(static_cast<int>(units));
  EXPECT_FALSE(spin_settings().oversubscribed);
  CalibrateSpin(static_cast<int>(units) + 1);
  EXPECT_TRUE(spin_settings().oversubscribed);
  CalibrateSpin(1);
  EXPECT_FALSE(spin_settings().oversubscribed);
}

// A core per thread means two units per rank of the host: MPI's node's ranks,
// or more where the launcher started more on the host (MPI_LOCALNRANKS, as
// under the simulated splits), against the units this thread may run on.
TEST(SpinWait, CorePerThreadCountsTheHostsRanksAndTheUsableUnits) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const long units = UsableUnits();
  ASSERT_GE(units, 1);
  {
    const LocalRanksUnset unset;
    CalibrateSpin(1);
    EXPECT_EQ(spin_settings().core_per_thread, units >= 2);
    CalibrateSpin(static_cast<int>(units));
    EXPECT_FALSE(spin_settings().core_per_thread);
    setenv("MPI_LOCALNRANKS", std::to_string(units).c_str(), 1);
    CalibrateSpin(1);  // one rank in MPI's node, `units` on the host
    EXPECT_FALSE(spin_settings().core_per_thread);
    setenv("MPI_LOCALNRANKS", "1", 1);
    CalibrateSpin(1);
    EXPECT_EQ(spin_settings().core_per_thread, units >= 2);
  }
  // Pinned to one unit: no second one for another thread.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  CalibrateSpin(1);
  EXPECT_FALSE(spin_settings().core_per_thread);
  ASSERT_EQ(sched_setaffinity(0, sizeof allowed, &allowed), 0);
  CalibrateSpin(1);
  EXPECT_EQ(spin_settings().core_per_thread, units >= 2);
}

// The host is oversubscribed when the launcher started more ranks on it
// than this process may run on units (MPI's blocking waits then yield:
// shim/agent/agent.h, AgentStandIn), whatever MPI's node holds.
TEST(SpinWait, HostOversubscribedCountsTheLaunchersRanks) {
  const long units = UsableUnits();
  ASSERT_GE(units, 1);
  {
    const LocalRanksUnset unset;
    CalibrateSpin(static_cast<int>(units));
    EXPECT_FALSE(spin_settings().host_oversubscribed);
    CalibrateSpin(static_cast<int>(units) + 1);
    EXPECT_TRUE(spin_settings().host_oversubscribed);
    setenv("MPI_LOCALNRANKS", std::to_string(units + 1).c_str(), 1);
    CalibrateSpin(1);  // one rank in MPI's node, more than `units` on the host
    EXPECT_TRUE(spin_settings().host_oversubscribed);
    EXPECT_FALSE(spin_settings().oversubscribed);
    setenv("MPI_LOCALNRANKS", std::to_string(units).c_str(), 1);
    CalibrateSpin(1);
    EXPECT_FALSE(spin_settings().host_oversubscribed);
  }
  CalibrateSpin(1);
}

// A waiter whose condition stays unmet for several progress intervals
// drives MPI progress, and not on every round.
TEST(SpinWait, ProgressRunsWhileWaiting) {
  SetSpinProgress(&CountProgress);
  g_progress_calls = 0;
  Backoff backoff;
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::nanoseconds(6 * kProgressIntervalNs);
  long rounds = 0;
  while (std::chrono::steady_clock::now() < end) {
    backoff.Wait();
    ++rounds;
  }
  SetSpinProgress(nullptr);
  EXPECT_TRUE(backoff.waited());
  EXPECT_GE(g_progress_calls.load(), 1);
  EXPECT_LT(g_progress_calls.load(), rounds);
}

// The condition a queue waiter polls, met by another thread: WaitTurn with
// any distance returns and the waiter sees it (the loop terminates).
TEST(SpinWait, QueueWaiterSeesItsTurn) {
  std::atomic<uint32_t> serving{0};
  std::thread server([&] {
    for (uint32_t t = 1; t <= 64; ++t) {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      serving.store(t, std::memory_order_release);
    }
  });
  const uint32_t ticket = 64;
  Backoff backoff;
  uint32_t now;
  while ((now = serving.load(std::memory_order_acquire)) != ticket) {
    backoff.WaitTurn(ticket - now);
  }
  server.join();
  EXPECT_EQ(ticket, serving.load());
}

}  // namespace
}  // namespace rmashim
