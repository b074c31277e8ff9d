// RouteCall (shim/move/routing.h) over every combination of its inputs,
// without MPI: each route held against the rules MPI's semantics give
// (who else may update the target, what this process may reach, what must
// complete first), stated here independently of routing.cc's order.
#include "shim/move/routing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rmashim {
namespace {

std::string Describe(const RouteFacts& f) {
  std::string s = f.access == Access::kCopy ? "copy" : "update";
  auto flag = [&](bool on, const char* name) {
    if (on) s += std::string(" ") + name;
  };
  flag(f.single_node, "single_node");
  flag(f.agent_served, "agent_served");
  flag(f.agent_counts_epoch, "agent_counts_epoch");
  flag(f.passive, "passive");
  flag(f.mpi_judges_target, "mpi_judges_target");
  flag(f.holds_exclusive, "holds_exclusive");
  flag(f.mpi_has_updates, "mpi_has_updates");
  flag(f.node_local, "node_local");
  flag(f.cross_memory, "cross_memory");
  return s + " bytes=" + std::to_string(f.bytes);
}

// Every combination a window can present: a single-node window has only
// node-local targets, cross-memory targets are node-local, an exclusive
// lock is a passive epoch and MPI judges targets only in MPI's PSCW on a
// window spanning nodes (not passive).
std::vector<RouteFacts> EveryCombination() {
  std::vector<RouteFacts> all;
  const MPI_Aint sizes[] = {0, 8, kAgentCopyBytes, kAgentCopyBytes + 1};
  for (int bits = 0; bits < (1 << 10); ++bits) {
    auto bit = [&](int i) { return ((bits >> i) & 1) != 0; };
    RouteFacts f;
    f.access = bit(0) ? Access::kUpdate : Access::kCopy;
    f.single_node = bit(1);
    f.agent_served = bit(2);
    f.agent_counts_epoch = bit(3);
    f.passive = bit(4);
    f.mpi_judges_target = bit(5);
    f.holds_exclusive = bit(6);
    f.mpi_has_updates = bit(7);
    f.node_local = bit(8);
    f.cross_memory = bit(9);
    if (f.single_node && (!f.node_local || f.mpi_judges_target)) continue;
    if (f.cross_memory && !f.node_local) continue;
    if (f.holds_exclusive && !f.passive) continue;
    if (f.mpi_judges_target && f.passive) continue;
    for (MPI_Aint bytes : sizes) {
      f.bytes = bytes;
      all.push_back(f);
    }
  }
  return all;
}

// Whether the shim may apply an update to the target at all: every other
// origin's update to it then takes the stripes too (a single-node window;
// the agents serving remote origins in a passive epoch, or in an active
// one they count while no update of this epoch went to MPI), or no other
// origin may touch it (an exclusive lock, node-local memory).
bool ShimMayUpdate(const RouteFacts& f) {
  if (f.mpi_judges_target) return false;
  if (f.single_node) return true;
  if (f.holds_exclusive && f.node_local) return true;
  return f.agent_served &&
         (f.passive || (f.agent_counts_epoch && !f.mpi_has_updates));
}

// Whether the shim may copy to or from the target: node-local memory in
// every epoch it serves; a remote one through its agent in passive
// epochs, up to the agent's largest copy.
bool ShimMayCopy(const RouteFacts& f) {
  if (f.mpi_judges_target) return false;
  return f.node_local ||
         (f.agent_served && f.passive && f.bytes <= kAgentCopyBytes);
}

Path ReachOf(const RouteFacts& f) {
  if (!f.node_local) return Path::kAgent;
  return f.cross_memory ? Path::kCrossMemory : Path::kInPlace;
}

TEST(RoutingTest, EveryCombinationTakesTheWayMpiSemanticsAllow) {
  const std::vector<RouteFacts> all = EveryCombination();
  int to_shim = 0, to_mpi = 0, no_ops = 0;
  for (const RouteFacts& f : all) {
    SCOPED_TRACE(Describe(f));
    const Route r = RouteCall(f);
    if (f.access == Access::kCopy && f.bytes == 0) {
      EXPECT_EQ(r.path, Path::kNoOp);
      ++no_ops;
      continue;
    }
    EXPECT_NE(r.path, Path::kNoOp);
    const bool allowed =
        f.access == Access::kCopy ? ShimMayCopy(f) : ShimMayUpdate(f);
    // A remote target is the shim's only through its agent.
    const bool reachable = f.node_local || f.agent_served;
    if (!allowed || !reachable) {
      EXPECT_EQ(r.path, Path::kMpi);
      EXPECT_EQ(r.why, Fallback::kMultiNodeWindow);
      ++to_mpi;
      continue;
    }
    ++to_shim;
    EXPECT_EQ(r.path, ReachOf(f));
    EXPECT_EQ(r.exclusive, f.node_local && f.holds_exclusive);
    // This process's MPI updates to the target complete first where MPI
    // may hold some: on a window spanning nodes, in a passive epoch (an
    // active one never lets the shim update after MPI did).
    const bool after = f.access == Access::kUpdate && !f.single_node &&
                       (f.passive || f.holds_exclusive);
    EXPECT_EQ(r.after_mpi_completes, after);
  }
  // The enumeration is what it claims: both outcomes seen many times.
  EXPECT_EQ(all.size(), 1152u);
  EXPECT_GT(to_shim, 300);
  EXPECT_GT(to_mpi, 300);
  EXPECT_EQ(no_ops, 144);
}

// A few routes spelled out, as a reader checks them.
TEST(RoutingTest, NamedCases) {
  RouteFacts local_update{.access = Access::kUpdate,
                          .single_node = true,
                          .passive = true,
                          .node_local = true,
                          .bytes = 8};
  EXPECT_EQ(RouteCall(local_update).path, Path::kInPlace);
  EXPECT_FALSE(RouteCall(local_update).after_mpi_completes);

  RouteFacts remote_no_agent{
      .access = Access::kUpdate, .passive = true, .bytes = 8};
  EXPECT_EQ(RouteCall(remote_no_agent).path, Path::kMpi);

  RouteFacts remote_agent = remote_no_agent;
  remote_agent.agent_served = true;
  EXPECT_EQ(RouteCall(remote_agent).path, Path::kAgent);
  EXPECT_TRUE(RouteCall(remote_agent).after_mpi_completes);

  RouteFacts fence_counted{.access = Access::kUpdate,
                           .agent_served = true,
                           .agent_counts_epoch = true,
                           .node_local = true,
                           .cross_memory = true,
                           .bytes = 8};
  EXPECT_EQ(RouteCall(fence_counted).path, Path::kCrossMemory);
  fence_counted.mpi_has_updates = true;  // the rest follow MPI's
  EXPECT_EQ(RouteCall(fence_counted).path, Path::kMpi);

  RouteFacts big_get{.access = Access::kCopy,
                     .agent_served = true,
                     .passive = true,
                     .bytes = kAgentCopyBytes + 1};
  EXPECT_EQ(RouteCall(big_get).path, Path::kMpi);
  big_get.bytes = kAgentCopyBytes;
  EXPECT_EQ(RouteCall(big_get).path, Path::kAgent);
  EXPECT_FALSE(RouteCall(big_get).after_mpi_completes);
}

}  // namespace
}  // namespace rmashim
