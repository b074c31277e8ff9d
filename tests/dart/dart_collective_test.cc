// DART collectives and two-sided messages against serial references, on
// DART_TEAM_ALL and on a sub-team.
#include <dart/dart.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "tests/dart/dart_test_util.h"

namespace {

using dart_testing::MyId;
using dart_testing::Size;
using dart_testing::TeamMyId;
using dart_testing::TeamSize;

// The value team unit `u` contributes at index `i`.
int Value(int u, int i) { return 100 * u + i * 7 - 3; }

class DartCollective : public testing::TestWithParam<bool> {
 protected:
  // DART_TEAM_ALL, or the team of the even units (odd units skip).
  void SetUp() override {
    team_ = DART_TEAM_ALL;
    if (!GetParam()) return;
    ASSERT_EQ(DART_OK, dart_group_create(&group_));
    for (int u = 0; u < Size(); u += 2) {
      ASSERT_EQ(DART_OK, dart_group_addmember(group_, DART_GLOBAL_UNIT_ID(u)));
    }
    ASSERT_EQ(DART_OK, dart_team_create(DART_TEAM_ALL,
                                        MyId() % 2 ? nullptr : group_, &team_));
    if (team_ == DART_TEAM_NULL) GTEST_SKIP() << "not in the sub-team";
  }
  void TearDown() override {
    if (team_ != DART_TEAM_ALL && team_ != DART_TEAM_NULL) {
      EXPECT_EQ(DART_OK, dart_team_destroy(&team_));
    }
    if (group_ != DART_GROUP_NULL) dart_group_destroy(&group_);
  }
  int me() const { return TeamMyId(team_); }
  int n() const { return TeamSize(team_); }

  dart_team_t team_ = DART_TEAM_NULL;
  dart_group_t group_ = DART_GROUP_NULL;
};

TEST_P(DartCollective, BcastFromEveryRoot) {
  for (int root = 0; root < n(); ++root) {
    std::vector<double> buf(10, -1);
    if (me() == root) {
      for (int i = 0; i < 10; ++i) buf[i] = Value(root, i) / 4.0;
    }
    ASSERT_EQ(DART_OK, dart_bcast(buf.data(), 10, DART_TYPE_DOUBLE,
                                  DART_TEAM_UNIT_ID(root), team_));
    for (int i = 0; i < 10; ++i) EXPECT_DOUBLE_EQ(Value(root, i) / 4.0, buf[i]);
  }
}

TEST_P(DartCollective, ScatterGatherAllgather) {
  const int k = 3, root = n() - 1;
  std::vector<int> all(k * n());
  for (int u = 0; u < n(); ++u) {
    for (int i = 0; i < k; ++i) all[u * k + i] = Value(u, i);
  }
  std::vector<int> part(k, 0);
  ASSERT_EQ(DART_OK,
            dart_scatter(me() == root ? all.data() : nullptr, part.data(), k,
                         DART_TYPE_INT, DART_TEAM_UNIT_ID(root), team_));
  for (int i = 0; i < k; ++i) EXPECT_EQ(Value(me(), i), part[i]);
  std::vector<int> gathered(k * n(), 0);
  ASSERT_EQ(DART_OK, dart_gather(part.data(), gathered.data(), k, DART_TYPE_INT,
                                 DART_TEAM_UNIT_ID(0), team_));
  if (me() == 0) {
    EXPECT_EQ(all, gathered);
  }
  std::vector<int> everyone(k * n(), 0);
  ASSERT_EQ(DART_OK, dart_allgather(part.data(), everyone.data(), k,
                                    DART_TYPE_INT, team_));
  EXPECT_EQ(all, everyone);
}

TEST_P(DartCollective, AllgathervWithDifferentCounts) {
  // Unit u sends u + 1 values; blocks are placed in reverse order with gaps.
  std::vector<size_t> counts(n()), displs(n());
  size_t end = 0;
  for (int u = n() - 1; u >= 0; --u) {
    counts[u] = u + 1;
    displs[u] = end + 1;
    end += counts[u] + 1;
  }
  std::vector<long> mine(counts[me()]);
  for (size_t i = 0; i < mine.size(); ++i)
    mine[i] = Value(me(), static_cast<int>(i));
  std::vector<long> got(end, -9);
  ASSERT_EQ(DART_OK,
            dart_allgatherv(mine.data(), mine.size(), DART_TYPE_LONG,
                            got.data(), counts.data(), displs.data(), team_));
  std::vector<long> expected(end, -9);
  for (int u = 0; u < n(); ++u) {
    for (size_t i = 0; i < counts[u]; ++i) {
      expected[displs[u] + i] = Value(u, static_cast<int>(i));
    }
  }
  EXPECT_EQ(expected, got);
}

TEST_P(DartCollective, ReductionsMatchReference) {
  const int k = 5;
  std::vector<int> in(k);
  for (int i = 0; i < k; ++i) in[i] = Value(me(), i) * (me() % 2 ? -1 : 1);
  std::vector<int> sum(k), max(k), min(k), ref_sum(k, 0), ref_max(k, INT32_MIN),
      ref_min(k, INT32_MAX);
  for (int u = 0; u < n(); ++u) {
    for (int i = 0; i < k; ++i) {
      const int v = Value(u, i) * (u % 2 ? -1 : 1);
      ref_sum[i] += v;
      ref_max[i] = std::max(ref_max[i], v);
      ref_min[i] = std::min(ref_min[i], v);
    }
  }
  ASSERT_EQ(DART_OK, dart_allreduce(in.data(), sum.data(), k, DART_TYPE_INT,
                                    DART_OP_SUM, team_));
  ASSERT_EQ(DART_OK, dart_allreduce(in.data(), max.data(), k, DART_TYPE_INT,
                                    DART_OP_MAX, team_));
  EXPECT_EQ(ref_sum, sum);
  EXPECT_EQ(ref_max, max);
  // In place (same send and receive buffer).
  std::vector<int> inplace = in;
  ASSERT_EQ(DART_OK, dart_allreduce(inplace.data(), inplace.data(), k,
                                    DART_TYPE_INT, DART_OP_MIN, team_));
  EXPECT_EQ(ref_min, inplace);
  const int root = n() / 2;
  std::vector<int> reduced(k, 0);
  ASSERT_EQ(DART_OK, dart_reduce(in.data(), reduced.data(), k, DART_TYPE_INT,
                                 DART_OP_SUM, DART_TEAM_UNIT_ID(root), team_));
  if (me() == root) {
    EXPECT_EQ(ref_sum, reduced);
  }
  double d = 1.5 + me(), dsum = 0;
  ASSERT_EQ(DART_OK,
            dart_allreduce(&d, &dsum, 1, DART_TYPE_DOUBLE, DART_OP_SUM, team_));
  EXPECT_DOUBLE_EQ(1.5 * n() + n() * (n() - 1) / 2.0, dsum);
}

// DASH's DART_OP_MINMAX: (min, max) pairs reduced in one call, every basic
// width represented by int and double; an odd count is not pairs.
TEST_P(DartCollective, MinMaxPairsMatchReference) {
  std::vector<double> pairs = {1.0 * Value(me(), 0), 1.0 * Value(me(), 0),
                               -0.5 * me(), 2.0 * me()};
  std::vector<double> ref = pairs;
  for (int u = 0; u < n(); ++u) {
    ref[0] = std::min(ref[0], 1.0 * Value(u, 0));
    ref[1] = std::max(ref[1], 1.0 * Value(u, 0));
    ref[2] = std::min(ref[2], -0.5 * u);
    ref[3] = std::max(ref[3], 2.0 * u);
  }
  std::vector<double> got(4, 0);
  ASSERT_EQ(DART_OK, dart_allreduce(pairs.data(), got.data(), 4,
                                    DART_TYPE_DOUBLE, DART_OP_MINMAX, team_));
  EXPECT_EQ(ref, got);
  int mine[2] = {me() * 3 - 4, me() * 3 - 4}, reduced[2] = {0, 0};
  ASSERT_EQ(DART_OK, dart_reduce(mine, reduced, 2, DART_TYPE_INT,
                                 DART_OP_MINMAX, DART_TEAM_UNIT_ID(0), team_));
  if (me() == 0) {
    EXPECT_EQ(-4, reduced[DART_OP_MINMAX_MIN]);
    EXPECT_EQ((n() - 1) * 3 - 4, reduced[DART_OP_MINMAX_MAX]);
  }
  EXPECT_EQ(DART_ERR_INVAL, dart_allreduce(mine, reduced, 1, DART_TYPE_INT,
                                           DART_OP_MINMAX, team_));
}

TEST_P(DartCollective, Alltoall) {
  const int k = 2;
  std::vector<short> out(k * n()), in(k * n(), -1);
  for (int to = 0; to < n(); ++to) {
    for (int i = 0; i < k; ++i)
      out[to * k + i] = static_cast<short>(me() * 10 + to + i);
  }
  ASSERT_EQ(DART_OK,
            dart_alltoall(out.data(), in.data(), k, DART_TYPE_SHORT, team_));
  for (int from = 0; from < n(); ++from) {
    for (int i = 0; i < k; ++i) {
      EXPECT_EQ(static_cast<short>(from * 10 + me() + i), in[from * k + i]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAndSubTeam, DartCollective, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "EvenUnits" : "TeamAll";
                         });

TEST(DartTwoSided, RingSendRecvAndSendrecv) {
  const int n = Size(), me = MyId();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  std::vector<unsigned> msg(100), got(100, 0);
  for (int i = 0; i < 100; ++i) msg[i] = me * 1000u + i;
  if (me % 2 == 0) {
    ASSERT_EQ(DART_OK, dart_send(msg.data(), 100, DART_TYPE_UINT, 5,
                                 DART_GLOBAL_UNIT_ID(right)));
    ASSERT_EQ(DART_OK, dart_recv(got.data(), 100, DART_TYPE_UINT, 5,
                                 DART_GLOBAL_UNIT_ID(left)));
  } else {
    ASSERT_EQ(DART_OK, dart_recv(got.data(), 100, DART_TYPE_UINT, 5,
                                 DART_GLOBAL_UNIT_ID(left)));
    ASSERT_EQ(DART_OK, dart_send(msg.data(), 100, DART_TYPE_UINT, 5,
                                 DART_GLOBAL_UNIT_ID(right)));
  }
  for (int i = 0; i < 100; ++i) EXPECT_EQ(left * 1000u + i, got[i]);
  long long out = me, in = -1;
  ASSERT_EQ(
      DART_OK,
      dart_sendrecv(&out, 1, DART_TYPE_LONGLONG, 9, DART_GLOBAL_UNIT_ID(left),
                    &in, 1, DART_TYPE_LONGLONG, 9, DART_GLOBAL_UNIT_ID(right)));
  EXPECT_EQ(right, in);
}

TEST(DartBarrier, OrdersPuts) {
  // Round r: unit r writes r into every unit's slot; after the barrier all
  // see it.
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_INT, &g));
  int* mine = nullptr;
  dart_gptr_getaddr(dart_testing::At(g, MyId()),
                    reinterpret_cast<void**>(&mine));
  for (int r = 0; r < Size(); ++r) {
    if (MyId() == r) {
      for (int u = 0; u < Size(); ++u) {
        ASSERT_EQ(DART_OK, dart_put_blocking(dart_testing::At(g, u), &r, 1,
                                             DART_TYPE_INT, DART_TYPE_INT));
      }
    }
    ASSERT_EQ(DART_OK, dart_barrier(DART_TEAM_ALL));
    EXPECT_EQ(r, *mine);
    ASSERT_EQ(DART_OK, dart_barrier(DART_TEAM_ALL));
  }
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
}

}  // namespace
