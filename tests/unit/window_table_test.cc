#include "shim/process/window_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace rmashim {
namespace {

ManagedWindow* Fake(int i) {
  return reinterpret_cast<ManagedWindow*>(
      static_cast<uintptr_t>(0x1000 + i * 8));
}

TEST(WindowTableTest, FindsWhatWasInsertedAndForgetsErased) {
  auto table = std::make_unique<WindowTable>();
  const MPI_Win a = static_cast<MPI_Win>(0xa0000000),
                b = static_cast<MPI_Win>(0xa0000001);
  EXPECT_EQ(table->Find(a), nullptr);
  ASSERT_TRUE(table->Insert(a, Fake(1)));
  ASSERT_TRUE(table->Insert(b, Fake(2)));
  EXPECT_EQ(table->Find(a), Fake(1));
  EXPECT_EQ(table->Find(b), Fake(2));
  EXPECT_EQ(table->Erase(a), Fake(1));
  EXPECT_EQ(table->Find(a), nullptr);
  EXPECT_EQ(table->Find(b), Fake(2));
  EXPECT_EQ(table->Erase(a), nullptr);
}

TEST(WindowTableTest, SurvivesChurnAndCollisions) {
  auto table = std::make_unique<WindowTable>();
  // Many handles, inserted and erased in waves: erased slots must not break
  // probe chains of handles that are still live.
  for (int wave = 0; wave < 50; ++wave) {
    std::vector<MPI_Win> live;
    for (int i = 0; i < 1000; ++i) {
      const MPI_Win h =
          static_cast<MPI_Win>(0xa0000000u + wave * 7919u + i * 4096u);
      ASSERT_TRUE(table->Insert(h, Fake(i)));
      live.push_back(h);
    }
    for (int i = 0; i < 1000; i += 2) ASSERT_EQ(table->Erase(live[i]), Fake(i));
    for (int i = 1; i < 1000; i += 2) ASSERT_EQ(table->Find(live[i]), Fake(i));
    for (int i = 1; i < 1000; i += 2) ASSERT_EQ(table->Erase(live[i]), Fake(i));
  }
}

// FindHome (the inline fast paths' lookup) finds a window in its home
// slot only; a displaced window (the test hook, or a collision) is found by
// Find, kept across erasures of others, and erased.
TEST(WindowTableTest, FindHomeSeesTheHomeSlotOnly) {
  auto table = std::make_unique<WindowTable>();
  const MPI_Win home = static_cast<MPI_Win>(0xa0000000u);
  ASSERT_TRUE(table->Insert(home, Fake(1)));
  EXPECT_EQ(table->FindHome(home), Fake(1));
  table->SetDisplaced(true);
  const MPI_Win away = static_cast<MPI_Win>(0xa0000001u);
  const MPI_Win other = static_cast<MPI_Win>(0xa0000002u);
  ASSERT_TRUE(table->Insert(away, Fake(2)));
  ASSERT_TRUE(table->Insert(other, Fake(3)));
  EXPECT_EQ(table->FindHome(away), nullptr);
  EXPECT_EQ(table->Find(away), Fake(2));
  EXPECT_EQ(table->Erase(other), Fake(3));
  EXPECT_EQ(table->Find(away), Fake(2));
  EXPECT_EQ(table->FindHome(home), Fake(1)) << "inserted before the hook";
  EXPECT_EQ(table->Erase(away), Fake(2));
  EXPECT_EQ(table->Find(away), nullptr);
  EXPECT_EQ(table->FindHome(away), nullptr);
}

TEST(WindowTableTest, RefusesWhenFull) {
  auto table = std::make_unique<WindowTable>();
  for (int i = 0; i < WindowTable::kCapacity; ++i) {
    ASSERT_TRUE(table->Insert(static_cast<MPI_Win>(0xa0000000u + i), Fake(i)));
  }
  EXPECT_FALSE(table->Insert(static_cast<MPI_Win>(0xb0000000u), Fake(0)));
  EXPECT_EQ(table->Find(static_cast<MPI_Win>(0xa0000000u + 17)), Fake(17));
}

}  // namespace
}  // namespace rmashim
