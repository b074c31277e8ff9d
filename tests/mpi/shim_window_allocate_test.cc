// Managed MPI_Win_allocate windows under the preloaded shim: attributes
// against native MPICH's, zero-size segments, displacements scaled by each
// target's disp_unit, a communicator whose ranks run opposite to the
// world's, group and name queries, many windows freed out of order.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi/shim_window_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::window {
namespace {

TEST(ShimWindowTest, AttributesDescribeTheAllocation) {
  const int rank = Rank();
  // Sizes and units differ per rank so a mixed-up rank shows.
  constexpr int kUnits[] = {1, 4, 8};
  const int disp_unit = kUnits[rank % 3];
  const MPI_Aint bytes = 64 * (rank + 1);
  AllocWindow managed(bytes, disp_unit);
  OptOutInfo opt_out;
  AllocWindow native(bytes, disp_unit, opt_out.get());
  ASSERT_EQ(managed.rc(), MPI_SUCCESS);
  ASSERT_EQ(native.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(managed.win()));
  EXPECT_FALSE(IsManaged(native.win()));
  const WinAttrs m = GetAttrs(managed.win()), n = GetAttrs(native.win());
  ASSERT_TRUE(m.ok);
  ASSERT_TRUE(n.ok);
  EXPECT_EQ(m.flavor, MPI_WIN_FLAVOR_ALLOCATE);
  EXPECT_EQ(m.base, managed.base<void>());
  EXPECT_EQ(m.size, bytes);
  EXPECT_EQ(m.disp_unit, disp_unit);
  EXPECT_EQ(m.model, MPI_WIN_UNIFIED);
  // The native window reports the same things about itself.
  EXPECT_EQ(n.flavor, m.flavor);
  EXPECT_EQ(n.base, native.base<void>());
  EXPECT_EQ(n.size, m.size);
  EXPECT_EQ(n.disp_unit, m.disp_unit);
  EXPECT_EQ(n.model, m.model);
}

TEST(ShimWindowTest, ZeroSizeSegmentsOnSomeRanks) {
  const int rank = Rank(), size = Size();
  auto has_memory = [](int r) { return r % 2 == 0; };
  const MPI_Aint bytes = has_memory(rank) ? size * sizeof(int) : 0;
  AllocWindow w(bytes, sizeof(int));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  const WinAttrs a = GetAttrs(w.win());
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.size, bytes);
  int* mem = w.base<int>();
  if (has_memory(rank)) {
    for (int i = 0; i < size; ++i) mem[i] = -1;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, w.win());
  for (int t = 0; t < size; ++t) {
    const int value = rank * 10 + t;
    // Zero-count accesses are legal even where there is no memory.
    EXPECT_EQ(MPI_Put(&value, has_memory(t) ? 1 : 0, MPI_INT, t, rank,
                      has_memory(t) ? 1 : 0, MPI_INT, w.win()),
              MPI_SUCCESS);
  }
  MPI_Win_unlock_all(w.win());
  MPI_Barrier(MPI_COMM_WORLD);
  if (has_memory(rank)) {
    for (int origin = 0; origin < size; ++origin) {
      EXPECT_EQ(mem[origin], origin * 10 + rank) << "from " << origin;
    }
  }
  // Node-local peers without memory report size 0 through shared_query.
  const std::vector<bool> local = NodeLocalRanks();
  for (int r = 0; r < size; ++r) {
    if (!local[r]) continue;
    MPI_Aint qsize = -1;
    int qunit = 0;
    void* qbase = nullptr;
    ASSERT_EQ(MPI_Win_shared_query(w.win(), r, &qsize, &qunit, &qbase),
              MPI_SUCCESS);
    EXPECT_EQ(qsize, has_memory(r) ? MPI_Aint(size * sizeof(int)) : 0)
        << "rank " << r;
  }
}

// MPI_WIN_BASE must be the address MPI_Win_allocate returned, also for an
// empty segment (native MPICH returns NULL for both).
TEST(ShimWindowTest, ZeroSizeSegmentBaseAttributeIsTheBaseptr) {
  const MPI_Aint bytes = Rank() % 2 == 0 ? 64 : 0;
  AllocWindow w(bytes, 1);
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  const WinAttrs a = GetAttrs(w.win());
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.base, w.base<void>()) << "size " << bytes;
  EXPECT_EQ(a.size, bytes);
}

// Each origin writes single bytes at displacements k; at a target with
// disp_unit d they must land at byte k * d and nowhere else. Targets differ
// in disp_unit (1, 4, 8 by rank, rotated between two windows so that with
// two ranks, too, every unit is some target's).
TEST(ShimWindowTest, DisplacementsScaleByEachTargetsDispUnit) {
  const int rank = Rank(), size = Size();
  constexpr int kUnits[] = {1, 4, 8};
  constexpr int kPerOrigin = 3;
  constexpr std::byte kUntouched{0xee};
  for (int shift : {0, 2}) {
    auto unit = [&](int r) { return kUnits[(r + shift) % 3]; };
    const MPI_Aint bytes = MPI_Aint(size) * kPerOrigin * unit(rank);
    AllocWindow w(bytes, unit(rank));
    ASSERT_EQ(w.rc(), MPI_SUCCESS);
    EXPECT_TRUE(IsManaged(w.win()));
    std::byte* mem = w.base();
    std::memset(mem, 0xee, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, w.win());
    for (int t = 0; t < size; ++t) {
      for (int j = 0; j < kPerOrigin; ++j) {
        const int k = rank * kPerOrigin + j;
        const std::byte value = PatternByte(rank, k, unit(t));
        EXPECT_EQ(MPI_Put(&value, 1, MPI_BYTE, t, k, 1, MPI_BYTE, w.win()),
                  MPI_SUCCESS);
      }
    }
    MPI_Win_unlock_all(w.win());
    MPI_Barrier(MPI_COMM_WORLD);
    const int d = unit(rank);
    int wrong = 0;
    MPI_Aint first_wrong = -1;
    for (MPI_Aint b = 0; b < bytes; ++b) {
      const int k = static_cast<int>(b / d);
      const std::byte expected =
          b % d == 0 ? PatternByte(k / kPerOrigin, k, d) : kUntouched;
      if (mem[b] != expected && wrong++ == 0) first_wrong = b;
    }
    EXPECT_EQ(wrong, 0) << "disp_unit " << d << ", first wrong byte "
                        << first_wrong;
  }
}

// A managed window over a communicator whose ranks run opposite to the
// world's: window ranks, not world ranks, must address targets, map node
// peers and index lock words.
TEST(ShimWindowTest, ReversedCommunicator) {
  MPI_Comm reversed_comm;
  MPI_Comm_split(MPI_COMM_WORLD, 0, Size() - Rank(), &reversed_comm);
  ScopedComm reversed(reversed_comm);
  const int rank = Rank(reversed.get()), size = Size(reversed.get());
  ASSERT_EQ(rank, Size() - 1 - Rank());
  // One slot per origin plus a counter.
  AllocWindow w((size + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL,
                reversed.get());
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int* mem = w.base<int>();
  mem[size] = 0;
  ExpectAllToAllPutGet(w.win(), mem, reversed.get());
  // Exclusive-lock increments of the counter at window rank 0.
  for (int i = 0; i < 3; ++i) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win());
    int counter = -1;
    MPI_Get(&counter, 1, MPI_INT, 0, size, 1, MPI_INT, w.win());
    MPI_Win_flush(0, w.win());
    ++counter;
    MPI_Put(&counter, 1, MPI_INT, 0, size, 1, MPI_INT, w.win());
    MPI_Win_unlock(0, w.win());
  }
  MPI_Barrier(reversed.get());
  if (rank == 0) {
    EXPECT_EQ(mem[size], 3 * size);
  }
  // shared_query maps node peers by window rank.
  const std::vector<bool> local = NodeLocalRanks(reversed.get());
  MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win());
  for (int r = 0; r < size; ++r) {
    MPI_Aint qsize = -1;
    int qunit = 0;
    int* peer = nullptr;
    EXPECT_EQ(MPI_Win_shared_query(w.win(), r, &qsize, &qunit, &peer),
              MPI_SUCCESS);
    if (!local[r]) {
      EXPECT_EQ(peer, nullptr) << "off-node window rank " << r;
      continue;
    }
    if (peer == nullptr) {
      ADD_FAILURE() << "no memory for node-local window rank " << r;
      continue;
    }
    for (int o = 0; o < size; ++o) {
      EXPECT_EQ(peer[o], o * 17 + r) << "window rank " << r << " slot " << o;
    }
  }
  MPI_Win_unlock_all(w.win());
  MPI_Barrier(reversed.get());
}

TEST(ShimWindowTest, GroupAndNameQueries) {
  const int rank = Rank();
  // A managed window over a sub-communicator, so the group is not the
  // world's by accident.
  MPI_Comm half_comm;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half_comm);
  ScopedComm half(half_comm);
  AllocWindow w(sizeof(int), sizeof(int), MPI_INFO_NULL, half.get());
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));

  MPI_Group win_group, comm_group;
  ASSERT_EQ(MPI_Win_get_group(w.win(), &win_group), MPI_SUCCESS);
  MPI_Comm_group(half.get(), &comm_group);
  int cmp = MPI_UNEQUAL;
  MPI_Group_compare(win_group, comm_group, &cmp);
  EXPECT_EQ(cmp, MPI_IDENT);
  int group_size = 0, group_rank = -1;
  MPI_Group_size(win_group, &group_size);
  MPI_Group_rank(win_group, &group_rank);
  EXPECT_EQ(group_size, Size(half.get()));
  EXPECT_EQ(group_rank, Rank(half.get()));
  MPI_Group_free(&win_group);
  MPI_Group_free(&comm_group);

  const std::string name = "rmashim window of rank " + std::to_string(rank);
  ASSERT_EQ(MPI_Win_set_name(w.win(), name.c_str()), MPI_SUCCESS);
  char got[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  ASSERT_EQ(MPI_Win_get_name(w.win(), got, &len), MPI_SUCCESS);
  EXPECT_EQ(std::string(got, len), name);
}

// Allocates, uses and frees many managed windows in an order unrelated to
// creation, so table slots are erased and reused while others are live.
TEST(ShimWindowTest, ManyWindowsFreedOutOfOrder) {
  const int rank = Rank(), size = Size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  constexpr int kFirst = 8, kSecond = 2;
  std::vector<std::unique_ptr<AllocWindow>> wins;
  auto ints_of = [](int i) { return 2 + i % 5; };
  auto create = [&](int i) {
    wins.push_back(
        std::make_unique<AllocWindow>(ints_of(i) * sizeof(int), sizeof(int)));
    AllocWindow& w = *wins.back();
    ASSERT_EQ(w.rc(), MPI_SUCCESS);
    EXPECT_TRUE(IsManaged(w.win())) << "window " << i;
    for (int j = 0; j < ints_of(i); ++j) w.base<int>()[j] = -1;
  };
  // Window i: slot 0 is written by the left neighbour, the rest locally.
  auto fill_and_check = [&](const std::vector<int>& live) {
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i : live) {
      AllocWindow& w = *wins[i];
      for (int j = 1; j < ints_of(i); ++j) w.base<int>()[j] = i * 1000 + j;
      const int value = i * 100 + rank;
      MPI_Win_lock(MPI_LOCK_SHARED, next, 0, w.win());
      EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, next, 0, 1, MPI_INT, w.win()),
                MPI_SUCCESS);
      MPI_Win_unlock(next, w.win());
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i : live) {
      const int* mem = wins[i]->base<int>();
      EXPECT_EQ(mem[0], i * 100 + prev) << "window " << i;
      for (int j = 1; j < ints_of(i); ++j) {
        EXPECT_EQ(mem[j], i * 1000 + j) << "window " << i << " int " << j;
      }
    }
  };
  std::vector<int> live;
  for (int i = 0; i < kFirst; ++i) {
    create(i);
    live.push_back(i);
  }
  fill_and_check(live);
  // Free every third window, newest first.
  std::vector<int> kept;
  for (int i = kFirst - 1; i >= 0; --i) {
    if (i % 3 == 1) {
      wins[i].reset();
    }
  }
  for (int i = 0; i < kFirst; ++i) {
    if (i % 3 != 1) kept.push_back(i);
  }
  for (int i = kFirst; i < kFirst + kSecond; ++i) {
    create(i);
    kept.push_back(i);
  }
  fill_and_check(kept);
  // Free the rest from the middle outwards.
  for (int lo = kFirst / 2, hi = kFirst / 2 + 1;
       lo >= 0 || hi < kFirst + kSecond; --lo, ++hi) {
    if (lo >= 0) wins[lo].reset();
    if (hi < kFirst + kSecond) wins[hi].reset();
  }
  for (const auto& w : wins) EXPECT_EQ(w, nullptr);
}

}  // namespace
}  // namespace rmashim_test::window
