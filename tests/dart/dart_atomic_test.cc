// DART atomics: contended counters (fetch-and-op, accumulate, compare-and-
// swap) on team memory and dart_memalloc memory, element-wise accumulate of
// arrays, every operation against a serial reference; with the core's
// agent, who applied the remote ones.
#include <dart/dart.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/dart/dart_test_util.h"

namespace {

using dart_testing::AllGptrs;
using dart_testing::At;
using dart_testing::MyId;
using dart_testing::Rounds;
using dart_testing::Size;

// A counter on unit `owner`: team memory or dart_memalloc memory.
class Counter {
 public:
  Counter(bool heap, int owner) : heap_(heap) {
    if (heap_) {
      EXPECT_EQ(DART_OK, dart_memalloc(4, DART_TYPE_LONG, &mine_));
      gptr_ = AllGptrs(mine_)[owner];
    } else {
      EXPECT_EQ(DART_OK, dart_team_memalloc_aligned(DART_TEAM_ALL, 4,
                                                    DART_TYPE_LONG, &mine_));
      gptr_ = At(mine_, owner);
    }
    int64_t* p = nullptr;
    dart_gptr_getaddr(heap_ ? mine_ : At(mine_, MyId()),
                      reinterpret_cast<void**>(&p));
    for (int i = 0; i < 4; ++i) p[i] = 0;
    dart_barrier(DART_TEAM_ALL);
  }
  ~Counter() {
    dart_barrier(DART_TEAM_ALL);
    EXPECT_EQ(DART_OK, heap_ ? dart_memfree(mine_) : dart_team_memfree(mine_));
  }
  dart_gptr_t at(int element) const {
    return At(gptr_, gptr_.unitid, 8 * element);
  }
  int64_t Read(int element) const {
    int64_t v = -1;
    EXPECT_EQ(DART_OK, dart_get_blocking(&v, at(element), 1, DART_TYPE_LONG,
                                         DART_TYPE_LONG));
    return v;
  }

 private:
  bool heap_;
  dart_gptr_t mine_, gptr_;
};

class DartAtomic : public testing::TestWithParam<bool> {
 protected:
  const int kIncrements = Rounds(500, 40);
};

TEST_P(DartAtomic, FetchAndAddCountsEveryIncrement) {
  Counter c(GetParam(), Size() - 1);
  std::vector<int64_t> seen;
  const int64_t one = 1;
  for (int i = 0; i < kIncrements; ++i) {
    int64_t old = -1;
    ASSERT_EQ(DART_OK, dart_fetch_and_op(c.at(0), &one, &old, DART_TYPE_LONG,
                                         DART_OP_SUM));
    seen.push_back(old);
  }
  // Each unit's fetched values strictly increase.
  for (size_t i = 1; i < seen.size(); ++i) ASSERT_LT(seen[i - 1], seen[i]);
  dart_barrier(DART_TEAM_ALL);
  EXPECT_EQ(int64_t{kIncrements} * Size(), c.Read(0));
  // Every old value was handed out exactly once across all units.
  std::vector<int64_t> all(seen.size() * Size());
  dart_allgather(seen.data(), all.data(), seen.size(), DART_TYPE_LONG,
                 DART_TEAM_ALL);
  std::vector<int> hits(all.size(), 0);
  for (int64_t v : all) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, static_cast<int64_t>(all.size()));
    ++hits[v];
  }
  for (int h : hits) EXPECT_EQ(1, h);
}

TEST_P(DartAtomic, AccumulateCountsEveryIncrement) {
  Counter c(GetParam(), 0);
  const int64_t values[2] = {1, 3};
  for (int i = 0; i < kIncrements; ++i) {
    ASSERT_EQ(DART_OK,
              dart_accumulate(c.at(1), values, 2, DART_TYPE_LONG, DART_OP_SUM));
  }
  ASSERT_EQ(DART_OK, dart_flush(c.at(1)));
  ASSERT_EQ(DART_OK, dart_accumulate_blocking_local(
                         c.at(3), values, 1, DART_TYPE_LONG, DART_OP_SUM));
  ASSERT_EQ(DART_OK, dart_flush_all(c.at(3)));
  dart_barrier(DART_TEAM_ALL);
  EXPECT_EQ(int64_t{kIncrements} * Size(), c.Read(1));
  EXPECT_EQ(int64_t{kIncrements} * Size() * 3, c.Read(2));
  EXPECT_EQ(Size(), c.Read(3));
}

// A lock-free increment with compare-and-swap retries loses nothing.
TEST_P(DartAtomic, CompareAndSwapIncrements) {
  Counter c(GetParam(), Size() / 2);
  int64_t failures = 0;
  for (int i = 0; i < kIncrements / 2; ++i) {
    int64_t seen = 0;
    ASSERT_EQ(DART_OK, dart_fetch_and_op(c.at(0), nullptr, &seen,
                                         DART_TYPE_LONG, DART_OP_NO_OP));
    while (true) {
      const int64_t want = seen + 1;
      int64_t old = 0;
      ASSERT_EQ(DART_OK, dart_compare_and_swap(c.at(0), &want, &seen, &old,
                                               DART_TYPE_LONG));
      if (old == seen) break;
      seen = old;
      ++failures;
    }
  }
  dart_barrier(DART_TEAM_ALL);
  EXPECT_EQ(int64_t{kIncrements / 2} * Size(), c.Read(0));
}

// With the core's agent (RMASHIM_AGENT=1 on a layout spanning nodes) every
// atomic on a remote unit's team memory is applied by that unit's agent
// and none goes to MPI: the agents' applied counts add up to the remote
// calls issued. Without it no agent runs and the counts stay.
TEST(DartAtomicAgent, RemoteUnitsAgentsApplyEveryRemoteAtomic) {
  const std::vector<bool> local = dart_testing::NodeLocalUnits();
  const bool spans = !dart_testing::AllNodeLocal();
  const bool expected = dart_testing::AgentExpected();
  bool running = false;
  const int64_t before = dart_testing::AgentAppliedEverywhere(&running);
  EXPECT_EQ(expected, running);
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(DART_TEAM_ALL, 4, DART_TYPE_LONG, &g));
  int64_t* mine = nullptr;
  dart_gptr_getaddr(At(g, MyId()), reinterpret_cast<void**>(&mine));
  for (int i = 0; i < 4; ++i) mine[i] = 0;
  dart_barrier(DART_TEAM_ALL);
  const int rounds = 10;
  int64_t remote_calls = 0;
  const int64_t one = 1;
  for (int64_t round = 0; round < rounds; ++round) {
    for (int u = 0; u < Size(); ++u) {
      int64_t old = -1;
      ASSERT_EQ(DART_OK, dart_fetch_and_op(At(g, u), &one, &old, DART_TYPE_LONG,
                                           DART_OP_SUM));
      ASSERT_EQ(DART_OK, dart_accumulate(At(g, u, 8), &one, 1, DART_TYPE_LONG,
                                         DART_OP_SUM));
      // Element 2 of every unit counts rounds: the first unit to swap it
      // from `round` to `round + 1` wins, the others see it done.
      const int64_t next = round + 1;
      int64_t seen = -1;
      ASSERT_EQ(DART_OK, dart_compare_and_swap(At(g, u, 16), &next, &round,
                                               &seen, DART_TYPE_LONG));
      ASSERT_TRUE(seen == round || seen == next) << seen;
      if (!local[u]) remote_calls += 3;
    }
    ASSERT_EQ(DART_OK, dart_flush_all(g));
    dart_barrier(DART_TEAM_ALL);
  }
  EXPECT_EQ(int64_t{rounds} * Size(), mine[0]);
  EXPECT_EQ(int64_t{rounds} * Size(), mine[1]);
  EXPECT_EQ(int64_t{rounds}, mine[2]);
  const int64_t applied_total = dart_testing::AgentAppliedEverywhere() - before;
  int64_t remote_total = 0;
  MPI_Allreduce(&remote_calls, &remote_total, 1, MPI_INT64_T, MPI_SUM,
                MPI_COMM_WORLD);
  EXPECT_EQ(expected ? remote_total : 0, applied_total);
  EXPECT_EQ(spans, remote_total > 0);
  dart_barrier(DART_TEAM_ALL);
  EXPECT_EQ(DART_OK, dart_team_memfree(g));
}

INSTANTIATE_TEST_SUITE_P(TeamAndHeap, DartAtomic, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Memalloc" : "TeamMemory";
                         });

// Every operation on every basic type it applies to, against a serial
// reference computed here.
TEST(DartAtomicOps, AllOperationsMatchReference) {
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(DART_TEAM_ALL, 16, DART_TYPE_INT, &g));
  int32_t* mine = nullptr;
  dart_gptr_getaddr(At(g, MyId()), reinterpret_cast<void**>(&mine));
  const int32_t start = 0x0f0f;
  for (int i = 0; i < 16; ++i) mine[i] = start;
  dart_barrier(DART_TEAM_ALL);
  // Unit u applies op k with value (u + 1) * 3 + k to element k of unit 0.
  const dart_operation_t ops[] = {
      DART_OP_MIN, DART_OP_MAX,  DART_OP_SUM,  DART_OP_PROD, DART_OP_BAND,
      DART_OP_BOR, DART_OP_BXOR, DART_OP_LAND, DART_OP_LOR,  DART_OP_LXOR};
  const int nops = sizeof(ops) / sizeof(ops[0]);
  for (int k = 0; k < nops; ++k) {
    const int32_t v = (MyId() + 1) * 3 + k;
    ASSERT_EQ(DART_OK,
              dart_accumulate(At(g, 0, 4 * k), &v, 1, DART_TYPE_INT, ops[k]));
  }
  ASSERT_EQ(DART_OK, dart_flush_all(g));
  dart_barrier(DART_TEAM_ALL);
  if (MyId() == 0) {
    for (int k = 0; k < nops; ++k) {
      int32_t ref = start;
      for (int u = 0; u < Size(); ++u) {
        const int32_t v = (u + 1) * 3 + k;
        switch (ops[k]) {
          case DART_OP_MIN:
            ref = std::min(ref, v);
            break;
          case DART_OP_MAX:
            ref = std::max(ref, v);
            break;
          case DART_OP_SUM:
            ref += v;
            break;
          case DART_OP_PROD:
            ref *= v;
            break;
          case DART_OP_BAND:
            ref &= v;
            break;
          case DART_OP_BOR:
            ref |= v;
            break;
          case DART_OP_BXOR:
            ref ^= v;
            break;
          case DART_OP_LAND:
            ref = ref && v;
            break;
          case DART_OP_LOR:
            ref = ref || v;
            break;
          case DART_OP_LXOR:
            ref = !ref != !v;
            break;
          default:
            break;
        }
      }
      EXPECT_EQ(ref, mine[k]) << "op " << ops[k];
    }
  }
  dart_barrier(DART_TEAM_ALL);
  // REPLACE and NO_OP through fetch-and-op, double accumulate.
  if (MyId() == Size() - 1) {
    const int32_t v = 77;
    int32_t old = 0, now = 0;
    ASSERT_EQ(DART_OK, dart_fetch_and_op(At(g, 0, 60), &v, &old, DART_TYPE_INT,
                                         DART_OP_REPLACE));
    EXPECT_EQ(start, old);
    ASSERT_EQ(DART_OK, dart_fetch_and_op(At(g, 0, 60), nullptr, &now,
                                         DART_TYPE_INT, DART_OP_NO_OP));
    EXPECT_EQ(77, now);
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
  dart_gptr_t d;
  ASSERT_EQ(DART_OK, dart_team_memalloc_aligned(DART_TEAM_ALL, 64,
                                                DART_TYPE_DOUBLE, &d));
  double* dm = nullptr;
  dart_gptr_getaddr(At(d, MyId()), reinterpret_cast<void**>(&dm));
  for (int i = 0; i < 64; ++i) dm[i] = 0.5;
  dart_barrier(DART_TEAM_ALL);
  std::vector<double> add(64);
  for (int i = 0; i < 64; ++i) add[i] = i * 0.25;
  for (int to = 0; to < Size(); ++to) {
    ASSERT_EQ(DART_OK, dart_accumulate(At(d, to), add.data(), 64,
                                       DART_TYPE_DOUBLE, DART_OP_SUM));
  }
  ASSERT_EQ(DART_OK, dart_flush_all(d));
  dart_barrier(DART_TEAM_ALL);
  for (int i = 0; i < 64; ++i) EXPECT_DOUBLE_EQ(0.5 + Size() * i * 0.25, dm[i]);
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_team_memfree(d));
}

}  // namespace
