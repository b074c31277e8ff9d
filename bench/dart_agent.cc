// DART's atomics and locks on a team spanning nodes, with the core's agent
// (RMASHIM_AGENT=1: node-local units by CPU atomics, remote units through
// their agents, shim/dart/atomics.cc and locks.cc) and without it (MPI's
// atomics for every unit): latency from unit 0 to a node-local and to a
// remote unit of dart_fetch_and_op, dart_accumulate + dart_flush,
// dart_compare_and_swap, and a team lock's acquire + release whose queue
// tail is on that unit; the target waits in MPI (a barrier) or computes
// without calling MPI. Run it on the odd-even split with 4 units (unit 2
// shares unit 0's node, unit 1 does not); scripts/bench_dart_agent.sh runs
// it with and without the agent and prints one table.
//   dart_agent [--iters N] [--compute-ms M] [--label L]
// Prints "DARTAGENT|label|case|target|state|value|unit" lines; the counters
// are checked at the end ("WRONG" in the case name when not).
#include <dart/dart.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/agent_options.h"

namespace {

using agent_bench::Compute;
using agent_bench::Now;
using agent_bench::Options;

enum class Op { kFetchAndOp, kAccumulate, kCompareSwap, kLock };

const char* Name(Op op) {
  switch (op) {
    case Op::kFetchAndOp:
      return "dart_fetch_and_op";
    case Op::kAccumulate:
      return "dart_accumulate+dart_flush";
    case Op::kCompareSwap:
      return "dart_compare_and_swap";
    case Op::kLock:
      return "dart_lock_acquire+release (tail there)";
  }
  return "?";
}

dart_gptr_t At(dart_gptr_t g, int unit, int64_t bytes) {
  dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(unit));
  dart_gptr_incaddr(&g, bytes);
  return g;
}

// Words of every unit's counters: 0 fetch_and_op, 1 accumulate, 2 the
// compare_and_swap word (swapped between 0 and 1), 3 under the lock.
struct Shared {
  dart_gptr_t words;
  std::vector<dart_lock_t> locks;  // locks[u]'s queue tail is on unit u
};

void RunOp(Op op, int target, Shared& s, int64_t* swaps) {
  const int64_t one = 1;
  int64_t old = 0;
  switch (op) {
    case Op::kFetchAndOp:
      dart_fetch_and_op(At(s.words, target, 0), &one, &old, DART_TYPE_LONG,
                        DART_OP_SUM);
      break;
    case Op::kAccumulate:
      dart_accumulate(At(s.words, target, 8), &one, 1, DART_TYPE_LONG,
                      DART_OP_SUM);
      dart_flush(At(s.words, target, 8));
      break;
    case Op::kCompareSwap: {
      const int64_t want = 1 - *swaps % 2, expect = *swaps % 2;
      dart_compare_and_swap(At(s.words, target, 16), &want, &expect, &old,
                            DART_TYPE_LONG);
      *swaps += old == expect;
      break;
    }
    case Op::kLock:
      dart_lock_acquire(s.locks[target]);
      dart_lock_release(s.locks[target]);
      break;
  }
}

// Unit 0 times `iters` of `op` to `target`; the target waits in a barrier,
// or computes for compute_ms (then 20 operations are timed: the whole of
// them is what a computing target costs). Returns the operations issued.
int Measure(const Options& o, Op op, int target, const char* target_name,
            bool computing, Shared& s, int64_t* swaps) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const int warm = computing ? 0 : 10;
  const int iters = computing ? 20 : o.iters;
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    for (int i = 0; i < warm; ++i) RunOp(op, target, s, swaps);
    const double t0 = Now();
    for (int i = 0; i < iters; ++i) RunOp(op, target, s, swaps);
    const double t = Now() - t0;
    std::printf("DARTAGENT|%s|%s|%s|%s|%.3f|us\n", o.label.c_str(), Name(op),
                target_name, computing ? "target computing" : "target in MPI",
                t / iters * 1e6);
    std::fflush(stdout);
  } else if (me == target && computing) {
    Compute(o.compute_ms);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return warm + iters;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Options o = agent_bench::Parse(argc, argv, "dart_agent");
  if (dart_init(&argc, &argv) != DART_OK) MPI_Abort(MPI_COMM_WORLD, 1);
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Which units share unit 0's node.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int leader = me;
  MPI_Bcast(&leader, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  std::vector<int> leaders(size);
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT,
                MPI_COMM_WORLD);
  int local = -1, remote = -1;
  for (int u = size - 1; u > 0; --u) {
    (leaders[u] == leaders[0] ? local : remote) = u;
  }

  Shared s;
  dart_team_memalloc_aligned(DART_TEAM_ALL, 4, DART_TYPE_LONG, &s.words);
  int64_t* mine = nullptr;
  dart_gptr_getaddr(At(s.words, me, 0), reinterpret_cast<void**>(&mine));
  for (int i = 0; i < 4; ++i) mine[i] = 0;
  s.locks.resize(size);
  for (int u = 0; u < size; ++u)
    dart_team_lock_init(DART_TEAM_ALL, &s.locks[u]);
  dart_barrier(DART_TEAM_ALL);

  // Operations unit 0 issued to each unit, by kind, to check the counters.
  std::vector<int64_t> fetched(size, 0), added(size, 0), swaps(size, 0);
  for (const bool computing : {false, true}) {
    for (const auto& [target, name] :
         {std::pair{local, "node-local"}, std::pair{remote, "remote"}}) {
      if (target < 0 || (computing && target == local)) continue;
      fetched[target] += Measure(o, Op::kFetchAndOp, target, name, computing, s,
                                 &swaps[target]);
      added[target] += Measure(o, Op::kAccumulate, target, name, computing, s,
                               &swaps[target]);
      Measure(o, Op::kCompareSwap, target, name, computing, s, &swaps[target]);
      Measure(o, Op::kLock, target, name, computing, s, &swaps[target]);
    }
  }
  dart_barrier(DART_TEAM_ALL);
  MPI_Bcast(fetched.data(), size, MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Bcast(added.data(), size, MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Bcast(swaps.data(), size, MPI_INT64_T, 0, MPI_COMM_WORLD);
  int wrong = mine[0] != fetched[me] || mine[1] != added[me] ||
              mine[2] != swaps[me] % 2;
  int any_wrong = 0;
  MPI_Reduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  if (me == 0) {
    std::printf("DARTAGENT|%s|counters%s|every unit|-|%d|checked\n",
                o.label.c_str(), any_wrong ? " WRONG" : " right", size);
  }
  for (dart_lock_t& l : s.locks) dart_team_lock_destroy(&l);
  dart_team_memfree(s.words);
  dart_exit();
  MPI_Finalize();
  return any_wrong;
}
