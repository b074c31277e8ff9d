// Waiting for another process in shared memory: lock gates, barriers,
// PSCW counters, accumulate stripes. How long a waiter spins between two
// looks at the word it waits on, when it lets MPI progress, when it gives
// its core away.
//
// The argument. A waiter that looks too seldom adds its own delay to every
// handover: with a fixed number of relax instructions per round the delay
// depends on the CPU, since a relax (x86 `pause`) costs a few cycles on AMD
// Zen and about 140 on Intel cores since Skylake; 512 of them are 1-2 us
// on AMD and about 25 us on Intel, ten times the cost of moving a cache
// line between cores. So the waits are in time, not in instructions: the
// cost of a relax is measured once per process (CalibrateSpin), and a
// waiter's rounds grow from one relax to at most kMaxRoundNs. A waiter that
// knows its place in a queue (a ticket `ahead` lockers behind the one being
// served) waits in proportion to it, kHandoverNs per locker ahead, so a
// queue of n waiters does not reread the shared word n times per handover,
// and re-reads at full speed once it is next.
//
// A waiter that looks too often steals the line from the holder: every
// look is a load of the word the holder will write; the rounds above bound
// the loads per handover to a few per waiter.
//
// Yielding the core (sched_yield) helps only where another process wants
// it: when the node runs more ranks than it has processing units (the
// runtime tells CalibrateSpin; tests that run threads as ranks also count
// as oversubscribed), a waiter yields after kSpinBeforeYieldNs; otherwise it
// spins, and yields only after kSpinAloneNs, in case the holder was
// descheduled by something else. MPI progress (the hook SetSpinProgress
// installs) runs every kProgressIntervalNs of waiting: a waiting process is
// inside an MPI call, and operations other processes handed to MPI may need
// it to progress (emulated RMA on windows spanning nodes, MPI's own
// shared-memory path for what the shim passes through), but an MPI probe
// per round would cost more than the round.
#ifndef RMASHIM_SHIM_BASE_SPIN_WAIT_H_
#define RMASHIM_SHIM_BASE_SPIN_WAIT_H_

#include <cstdint>

namespace rmashim {

// Nanoseconds of the monotonic clock (std::chrono::steady_clock, i.e.
// CLOCK_MONOTONIC on Linux: one clock for every process of the machine, so
// times may be compared across processes through shared memory).
uint64_t NowNs();

// One spin-wait hint to the CPU: pause on x86, yield on Arm, nothing where
// there is no such instruction.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

inline constexpr uint32_t kMaxRoundNs = 500;       // between two looks
inline constexpr uint32_t kHandoverNs = 150;       // per locker ahead
inline constexpr uint32_t kMaxTurnRoundNs = 4000;  // queue waits, at most
inline constexpr uint32_t kProgressIntervalNs = 50000;
inline constexpr uint32_t kSpinBeforeYieldNs = 2000;  // oversubscribed
inline constexpr uint32_t kSpinAloneNs = 1000000;     // a core per rank

// What waiting needs to know of this process and its node.
struct SpinSettings {
  uint32_t relax_per_us = 0;   // CpuRelax() calls per microsecond, measured
  bool oversubscribed = true;  // more ranks than processing units on the node
  // At least two processing units per rank of the host: a second thread
  // per rank (the agent, shim/agent/agent.h) may spin without taking a
  // rank's core. Counted against the ranks the launcher started on the
  // host (hydra's MPI_LOCALNRANKS) where more than MPI's node has: the
  // simulated splits (MPIR_CVAR_ODD_EVEN_CLIQUES) make a node part of a
  // host, whose units every part shares. And only the units this process
  // may run on (its affinity): a rank pinned to one core has no second.
  // A CPU quota (a cgroup's) is not seen.
  bool core_per_thread = false;
  // More ranks on the host (the launcher's count, as above) than processing
  // units this process may run on: MPI's own blocking waits, which spin
  // without ever yielding, then keep a descheduled peer off the core they
  // wait for (shim/agent/stand_in_wait.h yields in them instead).
  bool host_oversubscribed = false;
};

// The settings, measured on first use (the relax cost only; oversubscribed
// until CalibrateSpin says otherwise).
const SpinSettings& spin_settings();
// Called once MPI says how many ranks share this node: compares them with
// the node's processing units (and, for core_per_thread, with the host's
// ranks from the environment and this process's affinity).
void CalibrateSpin(int node_ranks);

// Called every kProgressIntervalNs of waiting; set once at startup
// (nullptr: none).
void SetSpinProgress(void (*progress)());
// Runs that hook once (for polling calls such as MPI_Win_test); never on
// a thread that forbade it.
void DriveProgress();
// For the shim's own threads (the agent's: shim/agent/agent.h), which must
// make no MPI call: MPI may be single-threaded, and its progress is then
// the application's thread's alone. The waits of this thread never drive
// MPI's progress from now on.
void ForbidProgressOnThisThread();

// After each poll of MPI's progress engine that the shim sees (UCX's
// worker progress, which MPICH's ch4:ucx calls in every wait:
// shim/base/ucx_progress.cc), with whether the poll progressed
// anything. Where the host runs more ranks than this process has
// processing units (host_oversubscribed), a thread whose polls have found
// nothing for kSpinBeforeYieldNs gives its core away, and again at every
// idle poll after that: MPICH's waits (inside its collectives, window
// creation and free, fences, flushes) poll without ever yielding, so a
// waiting rank would keep the descheduled peer it waits for off the core
// until the kernel's time slice ends, and every step of a collective would
// cost a time slice. Elsewhere nothing: spinning is the fastest wait when
// every rank has its core.
void NoteMpiProgressPoll(bool progressed);
// The cores this process gave away in those polls so far.
uint64_t MpiProgressYields();

// Runs it once every kServedCallsPerProgress calls: for calls the shim
// serves without entering MPI on windows spanning nodes. A remote origin's
// put or get that MPI carries may need this process to enter MPI (emulated
// RMA over UCX), and a program that polls node-local memory through the
// shim (a spin lock of compare-and-swap and flush) would otherwise never
// enter it, where every such call enters MPI natively.
inline constexpr uint32_t kServedCallsPerProgress = 64;
void DriveProgressNowAndThen();

// One wait: call Wait (or WaitTurn) each time the condition is found
// unmet, then look again.
class Backoff {
 public:
  // Something will change at an unknown time.
  void Wait() { Round(NextRoundNs()); }
  // A queue: `ahead` waiters are served before this one.
  void WaitTurn(uint32_t ahead) {
    if (ahead == 0) return Wait();
    const uint64_t ns = uint64_t{ahead} * kHandoverNs;
    Round(ns < kMaxTurnRoundNs ? static_cast<uint32_t>(ns) : kMaxTurnRoundNs);
  }
  bool waited() const { return rounds_ != 0; }

 private:
  uint32_t NextRoundNs() {
    const uint32_t ns = round_ns_;
    if (round_ns_ < kMaxRoundNs) round_ns_ = round_ns_ * 2 + 8;
    return ns;
  }
  void Round(uint32_t ns);

  uint32_t round_ns_ = 0;  // grows: 0, 8, 24, 56, ... up to kMaxRoundNs
  uint32_t rounds_ = 0;
  uint64_t started_ns_ = 0;        // steady clock, set on the first round
  uint64_t last_progress_ns_ = 0;  // since started_ns_
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_BASE_SPIN_WAIT_H_
