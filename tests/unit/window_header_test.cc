// Segment headers are sized by the node, never by the communicator
// (shim/windows/window.h): what a rank's node-shared header costs at 2 ranks,
// at a 64-rank node, and on a node of a 65,536-rank window spanning nodes.
#include <gtest/gtest.h>

#include "shim/windows/window.h"

namespace rmashim {
namespace {

constexpr MPI_Aint kPage = 4096;

MPI_Aint Bytes(const HeaderArrays& a) {
  return HeaderBytes(a.unstriped_slots, a.post_counters);
}

TEST(WindowHeader, SingleNodeWindowsHaveOneSlotAndCounterPerNodeRank) {
  const HeaderArrays a = HeaderArraysFor(true, false, 64);
  EXPECT_EQ(a.unstriped_slots, 64);
  EXPECT_EQ(a.post_counters, 64);
  const MPI_Aint exact = sizeof(SegmentHeader) + 64 * sizeof(UnstripedSlot) +
                         64 * sizeof(uint32_t);
  EXPECT_EQ(Bytes(a), (exact + kPage - 1) / kPage * kPage);
  EXPECT_LE(Bytes(a), 3 * kPage);  // about 6.6 KiB at 64 ranks
  EXPECT_EQ(Bytes(HeaderArraysFor(true, false, 2)), kPage);
}

TEST(WindowHeader, WindowsSpanningNodesHaveNoNodeArrays) {
  // One node of 64 ranks in a 65,536-rank window: the header alone, a
  // page, the same as at 2 ranks (the communicator's size is no input).
  const HeaderArrays a = HeaderArraysFor(false, false, 64);
  EXPECT_EQ(a.unstriped_slots, 0);
  EXPECT_EQ(a.post_counters, 0);
  EXPECT_EQ(Bytes(a), kPage);
  EXPECT_GE(static_cast<MPI_Aint>(sizeof(SegmentHeader)), kPage / 2);
}

TEST(WindowHeader, CreateWindowsHaveNoUnstripedSlots) {
  const HeaderArrays a = HeaderArraysFor(true, true, 16);
  EXPECT_EQ(a.unstriped_slots, 0);
  EXPECT_EQ(a.post_counters, 16);
}

TEST(WindowHeader, SlotsAndCountersFollowTheHeaderWithoutOverlap) {
  alignas(64) static std::byte storage[3 * 4096];
  auto* h = new (storage) SegmentHeader;
  h->unstriped_slot_count = 5;
  auto* slots = reinterpret_cast<std::byte*>(h->unstriped_slots());
  auto* counters = reinterpret_cast<std::byte*>(h->post_counters());
  EXPECT_EQ(slots, storage + sizeof(SegmentHeader));
  EXPECT_EQ(counters, slots + 5 * sizeof(UnstripedSlot));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(slots) % alignof(UnstripedSlot), 0u);
}

}  // namespace
}  // namespace rmashim
