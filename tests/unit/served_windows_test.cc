// The agent's window registry (shim/windows/served_windows.h): ids name a
// slot and its generation, so a request that names a freed window finds
// nothing, also once its slot serves a later window; and ids are only given
// while the registry is open.
#include "shim/windows/served_windows.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

namespace rmashim {
namespace {

ManagedWindow* Fake(int i) {
  return reinterpret_cast<ManagedWindow*>(
      static_cast<uintptr_t>(0x1000 + i * 8));
}

// Find's caller holds the mutex, as the agent's thread does.
ManagedWindow* Find(ServedWindows& registry, int id) {
  std::lock_guard<std::mutex> guard(registry.mutex());
  return registry.Find(id);
}

TEST(ServedWindowsTest, GivesNoIdWhileClosed) {
  auto registry = std::make_unique<ServedWindows>();
  EXPECT_EQ(registry->Register(Fake(1)), -1);
  registry->Open();
  const int id = registry->Register(Fake(1));
  ASSERT_GE(id, 0);
  EXPECT_EQ(Find(*registry, id), Fake(1));
  registry->Close();
  EXPECT_EQ(registry->Register(Fake(2)), -1);
  EXPECT_EQ(Find(*registry, -1), nullptr);
}

// Reachability is the transport's (the callback StartAgent gives), and
// nothing is reachable while closed or without one.
TEST(ServedWindowsTest, ReachesAsTheTransportSaysWhileOpen) {
  auto registry = std::make_unique<ServedWindows>();
  EXPECT_FALSE(registry->Reaches(1));
  registry->Open();
  EXPECT_FALSE(registry->Reaches(1));
  registry->Close();
  registry->Open([](int world_rank) { return world_rank % 2 == 1; });
  EXPECT_TRUE(registry->Reaches(1));
  EXPECT_FALSE(registry->Reaches(2));
  registry->Close();
  EXPECT_FALSE(registry->Reaches(1));
}

TEST(ServedWindowsTest, FreedWindowsIdNamesNothingAfterItsSlotIsReused) {
  auto registry = std::make_unique<ServedWindows>();
  registry->Open();
  const int kept = registry->Register(Fake(1));
  const int freed = registry->Register(Fake(2));
  ASSERT_GE(kept, 0);
  ASSERT_GE(freed, 0);
  ASSERT_NE(kept, freed);
  registry->Unregister(freed);
  EXPECT_EQ(Find(*registry, freed), nullptr);
  // The next window takes the freed slot, under a new id.
  const int reused = registry->Register(Fake(3));
  ASSERT_GE(reused, 0);
  EXPECT_NE(reused, freed);
  EXPECT_EQ(Find(*registry, reused), Fake(3));
  EXPECT_EQ(Find(*registry, freed), nullptr);  // a late update is dropped
  EXPECT_EQ(Find(*registry, kept), Fake(1));
}

TEST(ServedWindowsTest, StaleIdUnregistersNothing) {
  auto registry = std::make_unique<ServedWindows>();
  registry->Open();
  const int freed = registry->Register(Fake(1));
  registry->Unregister(freed);
  const int live = registry->Register(Fake(2));
  constexpr int kSlotMask = (1 << 14) - 1;  // served_windows.h
  ASSERT_EQ(live & kSlotMask, freed & kSlotMask) << "not the same slot";
  registry->Unregister(freed);  // again, stale
  EXPECT_EQ(Find(*registry, live), Fake(2));
}

TEST(ServedWindowsTest, OneSlotsIdsStayDistinctOverManyGenerations) {
  auto registry = std::make_unique<ServedWindows>();
  registry->Open();
  // Every id one slot gives before its generation wraps is new, and only
  // the live one finds a window.
  constexpr int kGenerations = (1 << 17) - 1;
  std::vector<int> ids;
  ids.reserve(kGenerations);
  for (int g = 0; g < kGenerations; ++g) {
    const int id = registry->Register(Fake(g));
    ASSERT_GE(id, 0);
    ids.push_back(id);
    registry->Unregister(id);
  }
  std::set<int> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), ids.size());
  // The generation that wraps to 0 is new too; none of the freed ids
  // finds its window.
  const int live = registry->Register(Fake(7));
  EXPECT_FALSE(distinct.contains(live));
  EXPECT_EQ(Find(*registry, live), Fake(7));
  for (const int id : ids) ASSERT_EQ(Find(*registry, id), nullptr) << id;
  // Only then does an id come again.
  registry->Unregister(live);
  EXPECT_EQ(registry->Register(Fake(8)), ids.front());
}

TEST(ServedWindowsTest, FullRegistryGivesNoId) {
  auto registry = std::make_unique<ServedWindows>();
  registry->Open();
  std::vector<int> ids;
  for (int i = 0; i < (1 << 14); ++i) {
    const int id = registry->Register(Fake(i));
    ASSERT_GE(id, 0) << "window " << i;
    ids.push_back(id);
  }
  EXPECT_EQ(registry->Register(Fake(-1)), -1);
  registry->Unregister(ids[100]);
  const int id = registry->Register(Fake(-2));
  ASSERT_GE(id, 0);
  EXPECT_EQ(Find(*registry, id), Fake(-2));
  EXPECT_EQ(Find(*registry, ids[101]), Fake(101));
}

}  // namespace
}  // namespace rmashim
