// DART groups (local, always sorted by global unit id) and teams
// (collective): membership, ordering, id agreement, unit translation,
// nesting, cloning, destruction and id reuse, and communication on teams.
#include <dart/dart.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "tests/dart/dart_test_util.h"

namespace {

using dart_testing::MyId;
using dart_testing::Size;
using dart_testing::TeamMyId;
using dart_testing::TeamSize;

std::vector<int> Members(dart_group_t g) {
  size_t n = 0;
  EXPECT_EQ(DART_OK, dart_group_size(g, &n));
  std::vector<dart_global_unit_t> units(n);
  EXPECT_EQ(DART_OK, dart_group_getmembers(g, units.data()));
  std::vector<int> ids;
  for (auto u : units) ids.push_back(u.id);
  return ids;
}

dart_group_t GroupOf(const std::vector<int>& ids) {
  dart_group_t g;
  EXPECT_EQ(DART_OK, dart_group_create(&g));
  for (int id : ids) {
    EXPECT_EQ(DART_OK, dart_group_addmember(g, DART_GLOBAL_UNIT_ID(id)));
  }
  return g;
}

// Units 0..Size()-1 added in many random orders, with duplicates, stay
// sorted and unique; so do unions of random halves.
TEST(DartGroup, StaysSortedInAnyOrder) {
  std::mt19937 rng(42);
  std::vector<int> all(Size());
  std::iota(all.begin(), all.end(), 0);
  for (int round = 0; round < 50; ++round) {
    std::vector<int> order = all;
    order.insert(order.end(), all.begin(), all.end());  // duplicates
    std::shuffle(order.begin(), order.end(), rng);
    dart_group_t g = GroupOf(order);
    EXPECT_EQ(all, Members(g));
    // Split the shuffled units into two halves and unite them both ways.
    std::vector<int> a(order.begin(), order.begin() + order.size() / 2);
    std::vector<int> b(order.begin() + order.size() / 2, order.end());
    dart_group_t ga = GroupOf(a), gb = GroupOf(b), u1, u2;
    ASSERT_EQ(DART_OK, dart_group_union(ga, gb, &u1));
    ASSERT_EQ(DART_OK, dart_group_union(gb, ga, &u2));
    EXPECT_EQ(all, Members(u1));
    EXPECT_EQ(all, Members(u2));
    std::vector<int> members_a = Members(ga);
    EXPECT_TRUE(std::is_sorted(members_a.begin(), members_a.end()));
    for (dart_group_t* x : {&g, &ga, &gb, &u1, &u2}) {
      ASSERT_EQ(DART_OK, dart_group_destroy(x));
      EXPECT_EQ(DART_GROUP_NULL, *x);
    }
  }
}

TEST(DartGroup, SetOperations) {
  const int n = Size();
  std::vector<int> evens, odds, low;
  for (int u = 0; u < n; ++u) (u % 2 ? odds : evens).push_back(u);
  for (int u = 0; u < (n + 1) / 2; ++u) low.push_back(u);
  dart_group_t ge = GroupOf(evens), go = GroupOf(odds), gl = GroupOf(low);
  dart_group_t inter, uni, clone;
  ASSERT_EQ(DART_OK, dart_group_intersect(ge, gl, &inter));
  std::vector<int> expected;
  std::set_intersection(evens.begin(), evens.end(), low.begin(), low.end(),
                        std::back_inserter(expected));
  EXPECT_EQ(expected, Members(inter));
  ASSERT_EQ(DART_OK, dart_group_union(ge, go, &uni));
  EXPECT_EQ(static_cast<size_t>(n), Members(uni).size());
  ASSERT_EQ(DART_OK, dart_group_clone(uni, &clone));
  ASSERT_EQ(DART_OK, dart_group_delmember(clone, DART_GLOBAL_UNIT_ID(0)));
  ASSERT_EQ(DART_OK, dart_group_delmember(clone, DART_GLOBAL_UNIT_ID(0)));
  EXPECT_EQ(static_cast<size_t>(n - 1), Members(clone).size());
  EXPECT_EQ(static_cast<size_t>(n), Members(uni).size());  // clone is a copy
  int32_t is = -1;
  ASSERT_EQ(DART_OK, dart_group_ismember(clone, DART_GLOBAL_UNIT_ID(0), &is));
  EXPECT_EQ(0, is);
  ASSERT_EQ(DART_OK, dart_group_ismember(clone, DART_GLOBAL_UNIT_ID(1), &is));
  EXPECT_EQ(1, is);
  EXPECT_EQ(DART_ERR_INVAL,
            dart_group_addmember(clone, DART_GLOBAL_UNIT_ID(n)));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_group_addmember(clone, DART_GLOBAL_UNIT_ID(-1)));
  for (dart_group_t* x : {&ge, &go, &gl, &inter, &uni, &clone}) {
    ASSERT_EQ(DART_OK, dart_group_destroy(x));
  }
}

TEST(DartGroup, SplitIntoNearlyEqualConsecutiveParts) {
  std::vector<int> ids = {9, 2, 7, 4, 0, 5, 3, 1, 8, 6, 10};  // 11 units
  // Groups are local: units beyond the run's size are fine for splitting
  // only if they exist, so clamp to what dart_group_addmember accepts.
  ids.erase(std::remove_if(ids.begin(), ids.end(),
                           [](int id) { return id >= Size(); }),
            ids.end());
  dart_group_t g = GroupOf(ids);
  std::sort(ids.begin(), ids.end());
  for (size_t parts = 1; parts <= ids.size() + 2; ++parts) {
    std::vector<dart_group_t> out(parts);
    size_t nout = 0;
    ASSERT_EQ(DART_OK, dart_group_split(g, parts, &nout, out.data()));
    EXPECT_EQ(std::min(parts, ids.size()), nout);
    std::vector<int> joined;
    size_t smallest = ids.size(), largest = 0;
    for (size_t i = 0; i < nout; ++i) {
      std::vector<int> m = Members(out[i]);
      smallest = std::min(smallest, m.size());
      largest = std::max(largest, m.size());
      joined.insert(joined.end(), m.begin(), m.end());
      ASSERT_EQ(DART_OK, dart_group_destroy(&out[i]));
    }
    EXPECT_EQ(ids, joined);  // consecutive, ascending, complete
    EXPECT_LE(largest - smallest, 1u);
  }
  size_t nout = 0;
  dart_group_t one;
  EXPECT_EQ(DART_ERR_INVAL, dart_group_split(g, 0, &nout, &one));
  ASSERT_EQ(DART_OK, dart_group_destroy(&g));
}

// A team of the even units and one of the odd units, formed at once.
TEST(DartTeam, EvenAndOddTeams) {
  const int n = Size(), me = MyId();
  std::vector<int> evens, odds;
  for (int u = 0; u < n; ++u) (u % 2 ? odds : evens).push_back(u);
  // Each unit passes its own half (the other half's units pass theirs).
  std::vector<int> mine = me % 2 ? odds : evens;
  std::vector<int> reversed(mine.rbegin(), mine.rend());
  dart_group_t g = GroupOf(reversed);
  dart_team_t team = DART_TEAM_NULL;
  ASSERT_EQ(DART_OK, dart_team_create(DART_TEAM_ALL, g, &team));
  ASSERT_NE(DART_TEAM_NULL, team);
  ASSERT_NE(DART_TEAM_ALL, team);
  EXPECT_EQ(static_cast<int>(mine.size()), TeamSize(team));
  // Team unit ids follow ascending global ids.
  EXPECT_EQ(me / 2, TeamMyId(team));
  for (int i = 0; i < TeamSize(team); ++i) {
    dart_global_unit_t global;
    ASSERT_EQ(DART_OK, dart_team_unit_l2g(team, DART_TEAM_UNIT_ID(i), &global));
    EXPECT_EQ(mine[i], global.id);
    dart_team_unit_t local;
    ASSERT_EQ(DART_OK, dart_team_unit_g2l(team, global, &local));
    EXPECT_EQ(i, local.id);
  }
  dart_team_unit_t outside;
  const int other = me % 2 ? 0 : 1;
  if (other < n) {
    ASSERT_EQ(DART_OK,
              dart_team_unit_g2l(team, DART_GLOBAL_UNIT_ID(other), &outside));
    EXPECT_EQ(DART_UNDEFINED_UNIT_ID, outside.id);
  }
  // Every member got the same team id.
  std::vector<dart_team_t> ids(TeamSize(team));
  ASSERT_EQ(DART_OK, dart_allgather(&team, ids.data(), sizeof(team),
                                    DART_TYPE_BYTE, team));
  for (dart_team_t id : ids) EXPECT_EQ(team, id);
  // The team's group is the sorted member list.
  dart_group_t tg;
  ASSERT_EQ(DART_OK, dart_team_get_group(team, &tg));
  EXPECT_EQ(mine, Members(tg));
  // Locality is reported team-relative.
  dart_unit_locality_t* loc = nullptr;
  ASSERT_EQ(DART_OK, dart_unit_locality(team, DART_TEAM_UNIT_ID(0), &loc));
  EXPECT_EQ(0, loc->unit.id);
  EXPECT_EQ(team, loc->team);
  // A sum over the team counts only its members.
  int one = me, sum = 0;
  ASSERT_EQ(DART_OK,
            dart_allreduce(&one, &sum, 1, DART_TYPE_INT, DART_OP_SUM, team));
  EXPECT_EQ(std::accumulate(mine.begin(), mine.end(), 0), sum);
  ASSERT_EQ(DART_OK, dart_group_destroy(&tg));
  ASSERT_EQ(DART_OK, dart_group_destroy(&g));
  ASSERT_EQ(DART_OK, dart_team_destroy(&team));
  EXPECT_EQ(DART_TEAM_NULL, team);
  EXPECT_EQ(DART_ERR_INVAL, dart_team_myid(ids[0], nullptr));
}

// Non-members pass a NULL group and get DART_TEAM_NULL; the members'
// team is nested further; ids stay distinct among a unit's teams.
TEST(DartTeam, NestedTeamsAndNonMembers) {
  const int n = Size(), me = MyId();
  std::vector<int> first;
  for (int u = 0; u < n - 1; ++u) first.push_back(u);  // all but the last
  dart_group_t g = me < n - 1 ? GroupOf(first) : DART_GROUP_NULL;
  dart_team_t outer = DART_TEAM_NULL;
  ASSERT_EQ(DART_OK, dart_team_create(DART_TEAM_ALL, g, &outer));
  if (me == n - 1) {
    EXPECT_EQ(DART_TEAM_NULL, outer);
    return;
  }
  ASSERT_NE(DART_TEAM_NULL, outer);
  dart_group_t g0 = GroupOf({0});
  dart_team_t inner = DART_TEAM_NULL;
  ASSERT_EQ(DART_OK, dart_team_create(outer, me == 0 ? g0 : nullptr, &inner));
  if (me == 0) {
    ASSERT_NE(DART_TEAM_NULL, inner);
    EXPECT_NE(outer, inner);
    EXPECT_EQ(1, TeamSize(inner));
    int value = 7;
    ASSERT_EQ(DART_OK, dart_bcast(&value, 1, DART_TYPE_INT,
                                  DART_TEAM_UNIT_ID(0), inner));
    ASSERT_EQ(DART_OK, dart_team_destroy(&inner));
  } else {
    EXPECT_EQ(DART_TEAM_NULL, inner);
  }
  dart_team_t clone = DART_TEAM_NULL;
  ASSERT_EQ(DART_OK, dart_team_clone(outer, &clone));
  EXPECT_NE(outer, clone);
  EXPECT_EQ(TeamSize(outer), TeamSize(clone));
  EXPECT_EQ(TeamMyId(outer), TeamMyId(clone));
  ASSERT_EQ(DART_OK, dart_team_destroy(&clone));
  ASSERT_EQ(DART_OK, dart_team_destroy(&outer));
  ASSERT_EQ(DART_OK, dart_group_destroy(&g0));
  ASSERT_EQ(DART_OK, dart_group_destroy(&g));
}

// Creating and destroying many teams reuses ids (no exhaustion), and a
// group with a unit outside the parent team is rejected by all units.
TEST(DartTeam, IdsAreReusedAndBadGroupsRejected) {
  dart_group_t all;
  ASSERT_EQ(DART_OK, dart_team_get_group(DART_TEAM_ALL, &all));
  dart_team_t first = DART_TEAM_NULL;
  for (int i = 0; i < 20; ++i) {
    dart_team_t t = DART_TEAM_NULL;
    ASSERT_EQ(DART_OK, dart_team_create(DART_TEAM_ALL, all, &t));
    if (i == 0) first = t;
    EXPECT_EQ(first, t);
    ASSERT_EQ(DART_OK, dart_team_destroy(&t));
  }
  // A team without the last unit; then a group naming it, on that team.
  std::vector<int> most;
  for (int u = 0; u < Size() - 1; ++u) most.push_back(u);
  dart_group_t gm = MyId() < Size() - 1 ? GroupOf(most) : DART_GROUP_NULL;
  dart_team_t part = DART_TEAM_NULL;
  ASSERT_EQ(DART_OK, dart_team_create(DART_TEAM_ALL, gm, &part));
  if (part != DART_TEAM_NULL) {
    dart_team_t bad = 5;
    EXPECT_EQ(DART_ERR_INVAL, dart_team_create(part, all, &bad));
    ASSERT_EQ(DART_OK, dart_team_destroy(&part));
  }
  if (gm != DART_GROUP_NULL) {
    ASSERT_EQ(DART_OK, dart_group_destroy(&gm));
  }
  ASSERT_EQ(DART_OK, dart_group_destroy(&all));
}

// Memory allocated on a sub-team: members put to each other.
TEST(DartTeam, SubTeamSegments) {
  const int me = MyId();
  std::vector<int> mine;
  for (int u = me % 2; u < Size(); u += 2) mine.push_back(u);
  dart_group_t g = GroupOf(mine);
  dart_team_t team;
  ASSERT_EQ(DART_OK, dart_team_create(DART_TEAM_ALL, g, &team));
  const int tn = TeamSize(team), tme = TeamMyId(team);
  dart_gptr_t seg;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(team, tn, DART_TYPE_LONG, &seg));
  EXPECT_EQ(team, seg.teamid);
  for (int to = 0; to < tn; ++to) {
    const long value = 1000L * me + to;
    ASSERT_EQ(DART_OK,
              dart_put_blocking(dart_testing::At(seg, to, 8 * tme), &value, 1,
                                DART_TYPE_LONG, DART_TYPE_LONG));
  }
  dart_barrier(team);
  long* local = nullptr;
  ASSERT_EQ(DART_OK, dart_gptr_getaddr(dart_testing::At(seg, tme),
                                       reinterpret_cast<void**>(&local)));
  for (int from = 0; from < tn; ++from) {
    EXPECT_EQ(1000L * mine[from] + tme, local[from]);
  }
  dart_barrier(team);
  // Destroying the team frees its remaining segments too.
  ASSERT_EQ(DART_OK, dart_team_destroy(&team));
  ASSERT_EQ(DART_OK, dart_group_destroy(&g));
}

}  // namespace
