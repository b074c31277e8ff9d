// Locality domains (dart_domain_*, dart_team_locality_*,
// dart_group_locality_split) and the unit records DASH reads: the tree
// GLOBAL > NODE > MODULE > NUMA > CORE every unit builds alike.
#include <dart/dart.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "tests/dart/dart_test_util.h"

namespace {

using dart_testing::MyId;
using dart_testing::NodeLocalUnits;
using dart_testing::Size;

dart_domain_locality_t* Root(dart_team_t team = DART_TEAM_ALL) {
  dart_domain_locality_t* root = nullptr;
  EXPECT_EQ(DART_OK, dart_domain_team_locality(team, ".", &root));
  return root;
}

std::vector<int> Units(const dart_domain_locality_t* d) {
  std::vector<int> units;
  for (int i = 0; i < d->num_units; ++i) units.push_back(d->unit_ids[i].id);
  return units;
}

// Parent links, relative indices and unit lists agree throughout.
void ExpectConsistent(const dart_domain_locality_t* d) {
  std::vector<int> below;
  for (int i = 0; i < d->num_domains; ++i) {
    const dart_domain_locality_t* c = d->children[i];
    EXPECT_EQ(d, c->parent) << c->domain_tag;
    EXPECT_EQ(i, c->relative_index) << c->domain_tag;
    ExpectConsistent(c);
    for (int u : Units(c)) below.push_back(u);
  }
  if (d->num_domains > 0) {
    std::sort(below.begin(), below.end());
    EXPECT_EQ(below, Units(d)) << d->domain_tag;
  }
}

bool SameTree(const dart_domain_locality_t* a,
              const dart_domain_locality_t* b) {
  if (std::strcmp(a->domain_tag, b->domain_tag) != 0 || a->scope != b->scope ||
      a->level != b->level || a->num_domains != b->num_domains ||
      Units(a) != Units(b) || a->num_cores != b->num_cores ||
      a->num_nodes != b->num_nodes || a->team != b->team) {
    return false;
  }
  for (int i = 0; i < a->num_domains; ++i) {
    if (!SameTree(a->children[i], b->children[i])) return false;
  }
  return true;
}

dart_unit_locality_t* Mine() {
  dart_unit_locality_t* ul = nullptr;
  EXPECT_EQ(DART_OK,
            dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(MyId()), &ul));
  return ul;
}

TEST(DartLocality, TreeLevelsAndUnits) {
  dart_domain_locality_t* root = Root();
  ASSERT_NE(nullptr, root);
  EXPECT_STREQ(".", root->domain_tag);
  EXPECT_EQ(DART_LOCALITY_SCOPE_GLOBAL, root->scope);
  EXPECT_EQ(0, root->level);
  EXPECT_EQ(Size(), root->num_units);
  // As many node domains as MPI sees nodes (simulated splits included).
  std::vector<bool> local = NodeLocalUnits();
  const int mine_on_node =
      static_cast<int>(std::count(local.begin(), local.end(), true));
  EXPECT_EQ(root->num_nodes, root->num_domains);
  EXPECT_EQ(mine_on_node == Size() ? 1 : 2, root->num_nodes);
  ExpectConsistent(root);
  // The unit's own domain is a core four levels down.
  dart_unit_locality_t* ul = Mine();
  ASSERT_NE(nullptr, ul);
  EXPECT_EQ(MyId(), ul->unit.id);
  dart_domain_locality_t* core = nullptr;
  ASSERT_EQ(DART_OK,
            dart_domain_team_locality(DART_TEAM_ALL, ul->domain_tag, &core));
  EXPECT_EQ(DART_LOCALITY_SCOPE_CORE, core->scope);
  EXPECT_EQ(4, core->level);
  const std::vector<int> core_units = Units(core);
  EXPECT_TRUE(std::count(core_units.begin(), core_units.end(), MyId()));
  const dart_locality_scope_t chain[] = {
      DART_LOCALITY_SCOPE_NUMA, DART_LOCALITY_SCOPE_MODULE,
      DART_LOCALITY_SCOPE_NODE, DART_LOCALITY_SCOPE_GLOBAL};
  const dart_domain_locality_t* d = core;
  for (dart_locality_scope_t s : chain) {
    d = d->parent;
    ASSERT_NE(nullptr, d);
    EXPECT_EQ(s, d->scope);
  }
  EXPECT_EQ(root, d);
  // The node domain holds exactly the units MPI puts on this node.
  const dart_domain_locality_t* node = core->parent->parent->parent;
  EXPECT_EQ(mine_on_node, node->num_units);
  // hwinfo as DASH reads it: -1 or positive, scopes innermost first.
  EXPECT_GT(ul->hwinfo.num_cores, 0);
  EXPECT_GT(ul->hwinfo.min_threads, 0);
  EXPECT_GE(ul->hwinfo.cpu_id, 0);
  EXPECT_GE(ul->hwinfo.numa_id, 0);
  EXPECT_EQ(4, ul->hwinfo.num_scopes);
  EXPECT_EQ(DART_LOCALITY_SCOPE_CORE, ul->hwinfo.scopes[0].scope);
  EXPECT_EQ(DART_LOCALITY_SCOPE_NODE, ul->hwinfo.scopes[3].scope);
  EXPECT_NE(0, ul->hwinfo.system_memory_bytes);
}

// The cores a unit may use (hwinfo.num_cores), as DART-MPI gives them: its
// NUMA domain's cores shared by the team's units there, at least one, never
// the whole node for each of several units. DASH starts that many OpenMP
// threads per unit (dash::util::UnitLocality::num_domain_threads).
void ExpectCoreShare(dart_team_t team) {
  dart_team_unit_t me;
  ASSERT_EQ(DART_OK, dart_team_myid(team, &me));
  dart_unit_locality_t* ul = nullptr;
  ASSERT_EQ(DART_OK, dart_unit_locality(team, me, &ul));
  dart_domain_locality_t* core = nullptr;
  ASSERT_EQ(DART_OK, dart_domain_team_locality(team, ul->domain_tag, &core));
  const dart_domain_locality_t* numa = core->parent;
  ASSERT_EQ(DART_LOCALITY_SCOPE_NUMA, numa->scope);
  EXPECT_EQ(std::max(1, numa->num_cores / numa->num_units),
            ul->hwinfo.num_cores);
  // Summed over the team's units on this node: no more than the node's
  // cores (or one each when there are more units than cores).
  const dart_domain_locality_t* node = numa->parent->parent;
  int sum = 0;
  for (int i = 0; i < node->num_units; ++i) {
    dart_team_unit_t lu;
    ASSERT_EQ(DART_OK, dart_team_unit_g2l(team, node->unit_ids[i], &lu));
    dart_unit_locality_t* other = nullptr;
    ASSERT_EQ(DART_OK, dart_unit_locality(team, lu, &other));
    EXPECT_GE(other->hwinfo.num_cores, 1);
    sum += other->hwinfo.num_cores;
  }
  EXPECT_LE(sum, std::max(node->num_cores, node->num_units));
}

TEST(DartLocality, UnitCoresAreItsShare) {
  ExpectCoreShare(DART_TEAM_ALL);
  // Alone in a team, a unit has its NUMA domain's cores to itself.
  dart_group_t all;
  ASSERT_EQ(DART_OK, dart_team_get_group(DART_TEAM_ALL, &all));
  std::vector<dart_group_t> parts(Size());
  size_t nout = 0;
  ASSERT_EQ(DART_OK, dart_group_split(all, parts.size(), &nout, parts.data()));
  ASSERT_EQ(parts.size(), nout);
  for (dart_group_t& part : parts) {
    dart_team_t team = DART_TEAM_NULL;
    ASSERT_EQ(DART_OK, dart_team_create(DART_TEAM_ALL, part, &team));
    if (team != DART_TEAM_NULL) {
      ExpectCoreShare(team);
      dart_domain_locality_t* root = Root(team);
      ASSERT_NE(nullptr, root);
      dart_unit_locality_t* ul = nullptr;
      ASSERT_EQ(DART_OK, dart_unit_locality(team, DART_TEAM_UNIT_ID(0), &ul));
      dart_domain_locality_t* core = nullptr;
      ASSERT_EQ(DART_OK,
                dart_domain_team_locality(team, ul->domain_tag, &core));
      EXPECT_EQ(1, core->parent->num_units);
      EXPECT_EQ(std::max(1, core->parent->num_cores), ul->hwinfo.num_cores);
      ASSERT_EQ(DART_OK, dart_team_destroy(&team));
    }
    dart_group_destroy(&part);
  }
  dart_group_destroy(&all);
}

TEST(DartLocality, UnknownTagIsNotFound) {
  dart_domain_locality_t* d = reinterpret_cast<dart_domain_locality_t*>(1);
  EXPECT_EQ(DART_ERR_NOTFOUND,
            dart_domain_team_locality(DART_TEAM_ALL, ".9.9.9", &d));
  EXPECT_EQ(nullptr, d);
  EXPECT_EQ(DART_ERR_INVAL, dart_domain_team_locality(DART_TEAM_NULL, ".", &d));
}

TEST(DartLocality, CloneFindAssignDestroy) {
  dart_domain_locality_t* root = Root();
  dart_domain_locality_t* copy = nullptr;
  ASSERT_EQ(DART_OK, dart_domain_clone(root, &copy));
  EXPECT_TRUE(SameTree(root, copy));
  EXPECT_NE(root->children, copy->children);
  ExpectConsistent(copy);
  // Every domain of the copy is found by its tag.
  std::vector<const dart_domain_locality_t*> todo = {copy};
  while (!todo.empty()) {
    const dart_domain_locality_t* d = todo.back();
    todo.pop_back();
    dart_domain_locality_t* found = nullptr;
    ASSERT_EQ(DART_OK, dart_domain_find(copy, d->domain_tag, &found));
    EXPECT_EQ(d, found);
    for (int i = 0; i < d->num_domains; ++i) todo.push_back(d->children[i]);
  }
  // assign: a deep copy into an existing domain.
  dart_domain_locality_t* other = nullptr;
  ASSERT_EQ(DART_OK, dart_domain_create(&other));
  ASSERT_EQ(DART_OK, dart_domain_assign(other, copy));
  EXPECT_TRUE(SameTree(copy, other));
  EXPECT_EQ(DART_OK, dart_domain_destroy(other));
  EXPECT_EQ(DART_OK, dart_domain_destroy(copy));
  // The team's tree is untouched.
  EXPECT_EQ(Size(), Root()->num_units);
}

TEST(DartLocality, ExcludeAndSelect) {
  dart_domain_locality_t* copy = nullptr;
  ASSERT_EQ(DART_OK, dart_domain_clone(Root(), &copy));
  const char* tag = Mine()->domain_tag;
  dart_domain_locality_t* core = nullptr;
  ASSERT_EQ(DART_OK, dart_domain_find(copy, tag, &core));
  const int core_units = core->num_units;
  ASSERT_EQ(DART_OK, dart_domain_exclude(copy, 1, &tag));
  dart_domain_locality_t* gone = reinterpret_cast<dart_domain_locality_t*>(1);
  EXPECT_EQ(DART_ERR_NOTFOUND, dart_domain_find(copy, tag, &gone));
  EXPECT_EQ(nullptr, gone);
  EXPECT_EQ(Size() - core_units, copy->num_units);
  ExpectConsistent(copy);
  dart_domain_destroy(copy);
  // select keeps the path to the core and nothing beside it.
  ASSERT_EQ(DART_OK, dart_domain_clone(Root(), &copy));
  ASSERT_EQ(DART_OK, dart_domain_select(copy, 1, &tag));
  EXPECT_EQ(core_units, copy->num_units);
  EXPECT_EQ(1, copy->num_domains);
  ASSERT_EQ(DART_OK, dart_domain_find(copy, tag, &core));
  EXPECT_EQ(copy, core->parent->parent->parent->parent);
  ExpectConsistent(copy);
  dart_domain_destroy(copy);
}

TEST(DartLocality, ScopeDomainsAndTags) {
  dart_domain_locality_t* root = Root();
  for (dart_locality_scope_t scope :
       {DART_LOCALITY_SCOPE_NODE, DART_LOCALITY_SCOPE_NUMA,
        DART_LOCALITY_SCOPE_CORE}) {
    int n = 0, ntags = 0;
    dart_domain_locality_t** domains = nullptr;
    char** tags = nullptr;
    ASSERT_EQ(DART_OK, dart_domain_scope_domains(root, scope, &n, &domains));
    ASSERT_EQ(DART_OK, dart_domain_scope_tags(root, scope, &ntags, &tags));
    ASSERT_EQ(n, ntags);
    int units = 0;
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(scope, domains[i]->scope);
      EXPECT_STREQ(domains[i]->domain_tag, tags[i]);
      units += domains[i]->num_units;
      std::free(tags[i]);
    }
    EXPECT_EQ(Size(), units);  // the domains of a scope partition the units
    std::free(domains);
    std::free(tags);
  }
  int n = 0;
  dart_domain_locality_t** domains = nullptr;
  EXPECT_EQ(
      DART_ERR_NOTFOUND,
      dart_domain_scope_domains(root, DART_LOCALITY_SCOPE_CACHE, &n, &domains));
}

TEST(DartLocality, SplitScopeCoversEveryUnitOnce) {
  dart_domain_locality_t* root = Root();
  int ncores = 0;
  dart_domain_locality_t** cores = nullptr;
  ASSERT_EQ(DART_OK, dart_domain_scope_domains(root, DART_LOCALITY_SCOPE_CORE,
                                               &ncores, &cores));
  std::free(cores);
  const int parts = std::min(ncores, 2);
  std::vector<dart_domain_locality_t> split(parts);
  ASSERT_EQ(DART_OK, dart_domain_split_scope(root, DART_LOCALITY_SCOPE_CORE,
                                             parts, split.data()));
  std::vector<int> all;
  for (dart_domain_locality_t& part : split) {
    EXPECT_GT(part.num_units, 0);
    for (int u : Units(&part)) all.push_back(u);
    ExpectConsistent(&part);
    // Free the part's contents (the structs are ours).
    for (int i = 0; i < part.num_domains; ++i) {
      dart_domain_destroy(part.children[i]);
    }
    std::free(part.children);
    std::free(part.unit_ids);
  }
  std::sort(all.begin(), all.end());
  std::vector<int> expected(Size());
  for (int u = 0; u < Size(); ++u) expected[u] = u;
  EXPECT_EQ(expected, all);
}

TEST(DartLocality, GroupMovesDomainsUnderOneGroup) {
  dart_domain_locality_t* copy = nullptr;
  ASSERT_EQ(DART_OK, dart_domain_clone(Root(), &copy));
  int n = 0;
  char** tags = nullptr;
  ASSERT_EQ(DART_OK,
            dart_domain_scope_tags(copy, DART_LOCALITY_SCOPE_CORE, &n, &tags));
  // Group the first core of every node's first NUMA domain with the last
  // core found: their lowest common ancestor gets a GROUP child.
  std::vector<const char*> grouped = {tags[0]};
  if (n > 1) grouped.push_back(tags[n - 1]);
  int grouped_units = 0;
  for (const char* t : grouped) {
    dart_domain_locality_t* d = nullptr;
    ASSERT_EQ(DART_OK, dart_domain_find(copy, t, &d));
    grouped_units += d->num_units;
  }
  char group_tag[DART_LOCALITY_DOMAIN_TAG_MAX_SIZE];
  ASSERT_EQ(DART_OK, dart_domain_group(copy, static_cast<int>(grouped.size()),
                                       grouped.data(), group_tag));
  dart_domain_locality_t* group = nullptr;
  ASSERT_EQ(DART_OK, dart_domain_find(copy, group_tag, &group));
  EXPECT_EQ(DART_LOCALITY_SCOPE_GROUP, group->scope);
  EXPECT_EQ(grouped_units, group->num_units);
  EXPECT_EQ(Size(), copy->num_units);  // grouping moves, never loses units
  for (const char* t : grouped) {
    dart_domain_locality_t* d = nullptr;
    ASSERT_EQ(DART_OK, dart_domain_find(group, t, &d));
  }
  ExpectConsistent(copy);
  for (int i = 0; i < n; ++i) std::free(tags[i]);
  std::free(tags);
  dart_domain_destroy(copy);
}

TEST(DartLocality, GroupLocalitySplitByNode) {
  dart_group_t all;
  ASSERT_EQ(DART_OK, dart_team_get_group(DART_TEAM_ALL, &all));
  dart_group_t parts[4];
  size_t nout = 0;
  ASSERT_EQ(DART_OK,
            dart_group_locality_split(all, Root(), DART_LOCALITY_SCOPE_NODE, 4,
                                      &nout, parts));
  EXPECT_EQ(static_cast<size_t>(Root()->num_nodes), nout);
  std::vector<bool> local = NodeLocalUnits();
  size_t total = 0;
  for (size_t i = 0; i < 4; ++i) {
    if (i >= nout) {
      EXPECT_EQ(DART_GROUP_NULL, parts[i]);
      continue;
    }
    size_t n = 0;
    dart_group_size(parts[i], &n);
    std::vector<dart_global_unit_t> members(n);
    dart_group_getmembers(parts[i], members.data());
    // A part is one node: all or none of its members share mine.
    const bool mine = local[members[0].id];
    for (dart_global_unit_t u : members) EXPECT_EQ(mine, local[u.id]);
    total += n;
    // Teams made from the parts (collective): DASH's Team::locality_split.
    dart_team_t team;
    ASSERT_EQ(DART_OK, dart_team_create(DART_TEAM_ALL, parts[i], &team));
    if (team != DART_TEAM_NULL) {
      EXPECT_TRUE(mine);
      dart_domain_locality_t* troot = Root(team);
      ASSERT_NE(nullptr, troot);
      EXPECT_EQ(static_cast<int>(n), troot->num_units);
      EXPECT_EQ(1, troot->num_domains);
      ASSERT_EQ(DART_OK, dart_team_destroy(&team));
    }
    dart_group_destroy(&parts[i]);
  }
  EXPECT_EQ(static_cast<size_t>(Size()), total);
  dart_group_destroy(&all);
}

TEST(DartLocality, FinalizeAndRebuild) {
  dart_team_t team;
  ASSERT_EQ(DART_OK, dart_team_clone(DART_TEAM_ALL, &team));
  ASSERT_EQ(DART_OK, dart_team_locality_init(team));
  dart_domain_locality_t* root = Root(team);
  ASSERT_NE(nullptr, root);
  EXPECT_EQ(team, root->team);
  dart_unit_locality_t* ul = nullptr;
  ASSERT_EQ(DART_OK, dart_unit_locality(team, DART_TEAM_UNIT_ID(0), &ul));
  EXPECT_EQ(team, ul->team);
  ASSERT_EQ(DART_OK, dart_team_locality_finalize(team));
  EXPECT_EQ(Size(), Root(team)->num_units);  // built again on demand
  // Unit records are rebuilt in place: earlier pointers stay valid.
  dart_unit_locality_t* again = nullptr;
  ASSERT_EQ(DART_OK, dart_unit_locality(team, DART_TEAM_UNIT_ID(0), &again));
  EXPECT_EQ(ul, again);
  EXPECT_EQ(team, again->team);
  ASSERT_EQ(DART_OK, dart_team_destroy(&team));
}

}  // namespace
