// The agent on a window spanning nodes (shim/agent/agent.h), measured: latency
// of the accumulate family, and of puts and gets of 8 bytes, 64 KiB and 1 MiB,
// plus flush under lock_all, and of an exclusive lock + accumulate + unlock,
// from rank 0 to a node-local and to a remote target, while the target waits in
// MPI (a barrier) and while it computes without calling MPI; and the CPU time a
// process spends per second while the program sleeps without calling MPI (the
// agent's idle cost), and while it sleeps and a remote origin keeps its agent
// busy (its cost when busy). Run it on a split layout
// (MPIR_CVAR_ODD_EVEN_CLIQUES=1, 4 ranks: rank 2 is node-local to rank 0, rank
// 1 remote), natively, under the shim, and under the shim with RMASHIM_AGENT=0;
// scripts/bench_agent.sh does all three and prints one table.
//   agent [--iters N] [--compute-ms M] [--label L]
// Prints "AGENT|label|case|target|state|value|unit" lines.
#include <mpi.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/agent_options.h"

namespace {

using agent_bench::Compute;
using agent_bench::Now;
using agent_bench::Options;

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void Emit(const Options& o, const char* what, const char* target,
          const char* state, double value, const char* unit) {
  std::printf("AGENT|%s|%s|%s|%s|%.3f|%s\n", o.label.c_str(), what, target,
              state, value, unit);
  std::fflush(stdout);
}

enum class Op {
  kFetchAndOp,
  kAccumulate,
  kCompareSwap,
  kLockAccUnlock,
  kLockAllAccUnlockAll,  // MPI_MODE_NOCHECK: no MPI lock protocol
  kPut,
  kGet,
  kPutLarge,
  kGetLarge,
  kPutBulk,
  kGetBulk,
};

// Where the large puts and gets land in the window, and their size.
constexpr MPI_Aint kLargeAt = 64;
constexpr int kLargeBytes = 64 * 1024;
constexpr int kBulkBytes = 1 << 20;
// Bulk ones time fewer iterations (each moves 16 times as much).
constexpr int kBulkIterDivisor = 16;
const char* Name(Op op) {
  switch (op) {
    case Op::kFetchAndOp:
      return "fetch_and_op+flush";
    case Op::kAccumulate:
      return "accumulate+flush";
    case Op::kCompareSwap:
      return "compare_and_swap+flush";
    case Op::kLockAccUnlock:
      return "lock+accumulate+unlock";
    case Op::kLockAllAccUnlockAll:
      return "lock_all(nocheck)+accumulate+unlock_all";
    case Op::kPut:
      return "put 8 B+flush";
    case Op::kGet:
      return "get 8 B+flush";
    case Op::kPutLarge:
      return "put 64 KiB+flush";
    case Op::kGetLarge:
      return "get 64 KiB+flush";
    case Op::kPutBulk:
      return "put 1 MiB+flush";
    case Op::kGetBulk:
      return "get 1 MiB+flush";
  }
  return "?";
}

void RunOp(Op op, int target, MPI_Win win) {
  int64_t one = 1, old = 0, compare = 0;
  static std::vector<char> large(kBulkBytes, 1);
  switch (op) {
    case Op::kFetchAndOp:
      MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, 0, MPI_SUM, win);
      MPI_Win_flush(target, win);
      break;
    case Op::kAccumulate:
      MPI_Accumulate(&one, 1, MPI_INT64_T, target, 8, 1, MPI_INT64_T, MPI_SUM,
                     win);
      MPI_Win_flush(target, win);
      break;
    case Op::kCompareSwap:
      MPI_Compare_and_swap(&one, &compare, &old, MPI_INT64_T, target, 16, win);
      MPI_Win_flush(target, win);
      break;
    case Op::kLockAccUnlock:
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
      MPI_Accumulate(&one, 1, MPI_INT64_T, target, 24, 1, MPI_INT64_T, MPI_SUM,
                     win);
      MPI_Win_unlock(target, win);
      break;
    case Op::kLockAllAccUnlockAll:
      MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
      MPI_Accumulate(&one, 1, MPI_INT64_T, target, 32, 1, MPI_INT64_T, MPI_SUM,
                     win);
      MPI_Win_unlock_all(win);
      break;
    case Op::kPut:
      MPI_Put(&one, 1, MPI_INT64_T, target, 56, 1, MPI_INT64_T, win);
      MPI_Win_flush(target, win);
      break;
    case Op::kGet:
      MPI_Get(&old, 1, MPI_INT64_T, target, 56, 1, MPI_INT64_T, win);
      MPI_Win_flush(target, win);
      break;
    case Op::kPutLarge:
    case Op::kGetLarge:
    case Op::kPutBulk:
    case Op::kGetBulk: {
      const int bytes =
          op == Op::kPutLarge || op == Op::kGetLarge ? kLargeBytes : kBulkBytes;
      if (op == Op::kPutLarge || op == Op::kPutBulk) {
        MPI_Put(large.data(), bytes, MPI_BYTE, target, kLargeAt, bytes,
                MPI_BYTE, win);
      } else {
        MPI_Get(large.data(), bytes, MPI_BYTE, target, kLargeAt, bytes,
                MPI_BYTE, win);
      }
      MPI_Win_flush(target, win);
      break;
    }
  }
}

// Rank 0 times `iters` of `op` to `target`; the target waits in a barrier,
// or computes for compute_ms (then only the ops that fit, at most `iters`,
// are timed: the whole of them is what a computing target costs).
void Measure(const Options& o, Op op, int target, const char* target_name,
             bool computing, MPI_Win win) {
  const int rank = [] {
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }();
  const bool bulk = op == Op::kPutBulk || op == Op::kGetBulk;
  const int iters = computing ? 20
                    : bulk    ? std::max(1, o.iters / kBulkIterDivisor)
                              : o.iters;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const bool epoch =
        op != Op::kLockAccUnlock && op != Op::kLockAllAccUnlockAll;
    if (epoch) MPI_Win_lock_all(0, win);
    if (!computing) {
      for (int i = 0; i < 10; ++i) RunOp(op, target, win);  // warm up
    }
    const double t0 = Now();
    for (int i = 0; i < iters; ++i) RunOp(op, target, win);
    const double t = Now() - t0;
    if (epoch) MPI_Win_unlock_all(win);
    Emit(o, Name(op), target_name,
         computing ? "target computing" : "target in MPI", t / iters * 1e6,
         "us");
  } else if (rank == target && computing) {
    Compute(o.compute_ms);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Epochs in which every rank adds `per_target` times to a word of every
// rank, node-local and remote targets alike: fence epochs (with the agent,
// the node-local ones in shared memory, the remote ones through the agents,
// applied before the fence returns), lock_all epochs (likewise, completed
// at unlock_all) or PSCW epochs of every rank (likewise, applied before
// the wait returns). Rank 0 reports the time per epoch (the accumulates and
// the epoch's end); the word's sums are checked.
enum class Sweep { kFence, kLockAll, kPscw };

void MeasureEveryRank(const Options& o, int size, MPI_Win win, Sweep sweep,
                      int per_target, int64_t* words) {
  const int64_t one = 1;
  const int warm = 10;
  // Unused by other rows; each row leaves its word 0.
  const int word = sweep == Sweep::kLockAll ? 6 : 5;
  if (sweep == Sweep::kFence) MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  double t0 = 0;
  for (int i = 0; i < warm + o.iters; ++i) {
    if (i == warm) t0 = Now();
    if (sweep == Sweep::kLockAll) MPI_Win_lock_all(0, win);
    if (sweep == Sweep::kPscw) {
      MPI_Win_post(world, 0, win);
      MPI_Win_start(world, 0, win);
    }
    for (int t = 0; t < size; ++t) {
      for (int k = 0; k < per_target; ++k) {
        MPI_Accumulate(&one, 1, MPI_INT64_T, t, 8 * word, 1, MPI_INT64_T,
                       MPI_SUM, win);
      }
    }
    if (sweep == Sweep::kFence) MPI_Win_fence(0, win);
    if (sweep == Sweep::kLockAll) MPI_Win_unlock_all(win);
    if (sweep == Sweep::kPscw) {
      MPI_Win_complete(win);
      MPI_Win_wait(win);
    }
  }
  const double t = Now() - t0;
  MPI_Group_free(&world);
  if (sweep == Sweep::kFence) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t want = int64_t{size} * per_target * (warm + o.iters);
  int wrong = words[word] != want, any_wrong = 0;
  words[word] = 0;  // for the next row (every rank is past the barrier)
  MPI_Reduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  const std::string adds = per_target == 1
                               ? "accumulate"
                               : std::to_string(per_target) + " accumulates";
  const std::string epoch =
      sweep == Sweep::kFence ? "fence+" + adds + " to every rank"
      : sweep == Sweep::kPscw
          ? "PSCW of every rank+" + adds + " to each"
          : "lock_all+" + adds + " to every rank+unlock_all";
  const std::string what = epoch + (any_wrong ? " (WRONG SUM)" : "");
  Emit(o, what.c_str(), "every rank", "all ranks in MPI", t / o.iters * 1e6,
       "us");
}

// A remote origin's exclusive lock on rank 0 handed over from rank 0, which
// holds it 100 us without calling MPI and then unlocks: each round rank 0
// times its hold from a barrier to its unlock, the origin its lock from the
// same barrier to the grant; the difference is the time the grant took
// after the release (the barrier's exits differ by a few microseconds).
// With the agent, the target's agent polls the waiting request's ticket
// (shim/agent/agent.cc: Serve), awake where the host has spare units
// (shim/agent/agent.h: AgentLockSpinNs); natively, rank 0's unlock lets
// MPICH grant it.
void MeasureHandover(const Options& o, int origin, MPI_Win win) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  constexpr double kHoldS = 100e-6;
  const int rounds = std::max(20, o.iters / 20);
  double after_release = 0;
  for (int i = 0; i < rounds + 5; ++i) {  // the first five warm up
    double span = 0;
    if (rank == 0) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = Now();
    if (rank == 0) {
      while (Now() - t0 < kHoldS) {
      }
      span = Now() - t0;
      MPI_Win_unlock(0, win);
    } else if (rank == origin) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
      span = Now() - t0;
      MPI_Win_unlock(0, win);
    }
    double spans[2] = {0, 0};  // the hold, the origin's wait
    double mine[2] = {rank == 0 ? span : 0, rank == origin ? span : 0};
    MPI_Reduce(mine, spans, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (i >= 5) after_release += spans[1] - spans[0];
  }
  if (rank == 0) {
    Emit(o, "exclusive lock handed over after a 100 us hold", "remote origin",
         "holder outside MPI", after_release / rounds * 1e6,
         "us after the release");
  }
}

// The lock holder's CPU while a remote origin's lock waits behind it: rank
// 0 holds an exclusive lock on itself and sleeps a second without calling
// MPI; the remote rank asks for the lock meanwhile. What rank 0's process
// spends is its agent's polls of the waiting request (Serve, agent.cc);
// natively nothing runs.
void MeasureWaitingLockCpu(const Options& o, int origin, MPI_Win win) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the ask
    const double cpu0 = CpuSeconds(), t0 = Now();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double busy = (CpuSeconds() - cpu0) / (Now() - t0) * 100;
    MPI_Win_unlock(0, win);
    Emit(o, "cpu of a lock holder sleeping 1 s, a remote lock waiting",
         "remote origin", "holder outside MPI", busy, "% of a core");
  } else if (rank == origin) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The agent's CPU while it serves: for half a second the remote rank sends
// rank 0 accumulates, `burst` of them then a flush, again and again (under
// lock_all), while rank 0 sleeps without calling MPI. Rank 0's process CPU
// in that time is its agent's work (its own thread sleeps): per accumulate
// served, and as a share of a core. Natively nothing serves a sleeping
// target (the first flush waits for it to call MPI), so nothing is served.
void MeasureServingCpu(const Options& o, int origin, MPI_Win win, int burst) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  constexpr double kSleepS = 0.5;
  const int64_t one = 1;
  double cpu = 0, span = 0;
  long long served = 0;  // accumulates flushed within the half second
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = Now();
  if (rank == 0) {
    const double cpu0 = CpuSeconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(kSleepS));
    cpu = CpuSeconds() - cpu0;
    span = Now() - t0;
  } else if (rank == origin) {
    MPI_Win_lock_all(0, win);
    while (Now() - t0 < kSleepS) {
      for (int i = 0; i < burst; ++i) {
        MPI_Accumulate(&one, 1, MPI_INT64_T, 0, kLargeAt, 1, MPI_INT64_T,
                       MPI_SUM, win);
      }
      MPI_Win_flush(0, win);
      if (Now() - t0 < kSleepS) served += burst;
    }
    MPI_Win_unlock_all(win);
  }
  long long total = 0;
  MPI_Reduce(&served, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const std::string what =
        "cpu of a sleeping target serving " + std::to_string(burst) +
        (burst == 1 ? " accumulate" : " accumulates") + "+flush";
    Emit(o, (what + ", per accumulate").c_str(), "remote origin",
         "target sleeping", total > 0 ? cpu / total * 1e6 : 0, "us");
    Emit(o, (what + ", share").c_str(), "remote origin", "target sleeping",
         cpu / span * 100, "% of a core");
    Emit(o, (what + ", served").c_str(), "remote origin", "target sleeping",
         static_cast<double>(total) / kSleepS, "accumulates/s");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Options o = agent_bench::Parse(argc, argv, "agent");
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Which ranks share rank 0's node.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int node_leader = rank;
  MPI_Bcast(&node_leader, 1, MPI_INT, 0, node);
  std::vector<int> leaders(size);
  MPI_Allgather(&node_leader, 1, MPI_INT, leaders.data(), 1, MPI_INT,
                MPI_COMM_WORLD);
  MPI_Comm_free(&node);
  int local = -1, remote = -1;
  for (int r = size - 1; r > 0; --r) {
    (leaders[r] == leaders[0] ? local : remote) = r;
  }
  void* base = nullptr;
  MPI_Win win;
  MPI_Win_allocate(kLargeAt + kBulkBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  std::memset(base, 0, kLargeAt + kBulkBytes);
  MPI_Barrier(MPI_COMM_WORLD);

  for (Op op :
       {Op::kFetchAndOp, Op::kAccumulate, Op::kCompareSwap, Op::kLockAccUnlock,
        Op::kLockAllAccUnlockAll, Op::kPut, Op::kGet, Op::kPutLarge,
        Op::kGetLarge, Op::kPutBulk, Op::kGetBulk}) {
    if (local > 0) Measure(o, op, local, "node-local", false, win);
    if (remote > 0) Measure(o, op, remote, "remote", false, win);
  }
  for (const int per_target : {1, 64}) {
    for (const Sweep sweep : {Sweep::kFence, Sweep::kLockAll, Sweep::kPscw}) {
      MeasureEveryRank(o, size, win, sweep, per_target,
                       static_cast<int64_t*>(base));
    }
  }
  if (remote > 0) {
    MeasureHandover(o, remote, win);
    MeasureWaitingLockCpu(o, remote, win);
    MeasureServingCpu(o, remote, win, 1);
    MeasureServingCpu(o, remote, win, 64);
    Measure(o, Op::kLockAccUnlock, remote, "remote", true, win);
    Measure(o, Op::kLockAllAccUnlockAll, remote, "remote", true, win);
    Measure(o, Op::kFetchAndOp, remote, "remote", true, win);
    Measure(o, Op::kGet, remote, "remote", true, win);
  }

  // Idle cost: every rank sleeps 2 s without calling MPI.
  MPI_Barrier(MPI_COMM_WORLD);
  const double cpu0 = CpuSeconds(), t0 = Now();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double idle = (CpuSeconds() - cpu0) / (Now() - t0) * 100;
  double max_idle = 0;
  MPI_Reduce(&idle, &max_idle, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    Emit(o, "cpu while sleeping", "-", "max over ranks", max_idle,
         "% of a core");
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
