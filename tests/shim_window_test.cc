// Window creation, attributes and queries under the preloaded shim, for
// managed MPI_Win_allocate windows and for the flavors it leaves to MPI.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::IsManaged;
using rmashim_test::NodeLocalRanks;
using rmashim_test::OptOutInfo;
using rmashim_test::PatternByte;
using rmashim_test::Rank;
using rmashim_test::ScopedComm;
using rmashim_test::ScopedInfo;
using rmashim_test::Size;

struct WinAttrs {
  bool ok = false;  // every attribute was present
  void* base = nullptr;
  MPI_Aint size = -1;
  int disp_unit = -1;
  int flavor = -1;
  int model = -1;
};

WinAttrs GetAttrs(MPI_Win win) {
  WinAttrs a;
  int f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0;
  void* base = nullptr;
  MPI_Aint* size = nullptr;
  int *disp_unit = nullptr, *flavor = nullptr, *model = nullptr;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &f1);
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &f2);
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &disp_unit, &f3);
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &f4);
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &f5);
  a.ok = f1 && f2 && f3 && f4 && f5;
  if (!a.ok) return a;
  a.base = base;
  a.size = *size;
  a.disp_unit = *disp_unit;
  a.flavor = *flavor;
  a.model = *model;
  return a;
}

// Every rank of `comm` puts a value into slot `rank` of every target, then
// reads every target's first `size` ints back. For a window of at least
// `size` ints at disp_unit sizeof(int), or a dynamic window (disp_unit 1)
// whose memory starts at address `dynamic_base[t]` on target t.
void ExpectAllToAllPutGet(MPI_Win win, int* local,
                          MPI_Comm comm = MPI_COMM_WORLD,
                          const std::vector<MPI_Aint>& dynamic_base = {}) {
  const int rank = Rank(comm), size = Size(comm);
  const int salt = 17;
  auto disp = [&](int t, int slot) -> MPI_Aint {
    return dynamic_base.empty() ? slot : dynamic_base[t] + slot * sizeof(int);
  };
  for (int i = 0; i < size; ++i) local[i] = -1;
  MPI_Barrier(comm);
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < size; ++t) {
    const int value = rank * salt + t;
    EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, t, disp(t, rank), 1, MPI_INT, win),
              MPI_SUCCESS);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(comm);
  for (int origin = 0; origin < size; ++origin) {
    EXPECT_EQ(local[origin], origin * salt + rank) << "from " << origin;
  }
  std::vector<int> got(size * size, -2);
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < size; ++t) {
    EXPECT_EQ(MPI_Get(&got[t * size], size, MPI_INT, t, disp(t, 0), size,
                      MPI_INT, win),
              MPI_SUCCESS);
  }
  MPI_Win_unlock_all(win);
  for (int t = 0; t < size; ++t) {
    for (int origin = 0; origin < size; ++origin) {
      EXPECT_EQ(got[t * size + origin], origin * salt + t)
          << "target " << t << " slot " << origin;
    }
  }
  MPI_Barrier(comm);
}

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

TEST(ShimWindowTest, InfoOptOutGivesAWorkingNativeWindow) {
  const int size = Size();
  struct Case {
    const char* value;
    bool managed;
  };
  // (rmashim_managed=true is the default, which every other test uses.)
  for (const Case& c : {Case{"false", false}, Case{"0", false}}) {
    ScopedInfo info({{"rmashim_managed", c.value}});
    AllocWindow w(rmashim_test::NativeSafeBytes(size * sizeof(int)),
                  sizeof(int), info.get());
    ASSERT_EQ(w.rc(), MPI_SUCCESS);
    EXPECT_EQ(IsManaged(w.win()), c.managed) << "rmashim_managed=" << c.value;
    const WinAttrs a = GetAttrs(w.win());
    ASSERT_TRUE(a.ok);
    EXPECT_EQ(a.flavor, MPI_WIN_FLAVOR_ALLOCATE);
    EXPECT_EQ(a.base, w.base<void>());
    ExpectAllToAllPutGet(w.win(), w.base<int>());
  }
}

int Flavor(MPI_Win win) {
  int* flavor = nullptr;
  int flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  return flag ? *flavor : -1;
}

// The other flavors work with and without the opt-out info. Whether the
// shim takes them over by default is its choice (MPI_Win_create needs
// cross-memory attach, which the kernel may refuse); the opt-out always
// leaves them to MPI.
TEST(ShimWindowTest, WinCreateWorks) {
  const int size = Size();
  OptOutInfo opt_out;
  for (MPI_Info info : {MPI_INFO_NULL, opt_out.get()}) {
    std::vector<int> mem(size);
    MPI_Win win;
    ASSERT_EQ(MPI_Win_create(mem.data(), size * sizeof(int), sizeof(int), info,
                             MPI_COMM_WORLD, &win),
              MPI_SUCCESS);
    if (info != MPI_INFO_NULL) {
      EXPECT_FALSE(IsManaged(win));
    }
    EXPECT_EQ(Flavor(win), MPI_WIN_FLAVOR_CREATE);
    const WinAttrs a = GetAttrs(win);
    EXPECT_EQ(a.base, mem.data());
    EXPECT_EQ(a.size, MPI_Aint(size * sizeof(int)));
    ExpectAllToAllPutGet(win, mem.data());
    MPI_Win_free(&win);
  }
}

TEST(ShimWindowTest, WinAllocateSharedWorks) {
  ScopedComm node(rmashim_test::SplitNodeComm());
  const int node_rank = Rank(node.get()), node_size = Size(node.get());
  OptOutInfo opt_out;
  for (MPI_Info info : {MPI_INFO_NULL, opt_out.get()}) {
    int* mem = nullptr;
    MPI_Win win;
    ASSERT_EQ(MPI_Win_allocate_shared(node_size * sizeof(int), sizeof(int),
                                      info, node.get(), &mem, &win),
              MPI_SUCCESS);
    if (info != MPI_INFO_NULL) {
      EXPECT_FALSE(IsManaged(win));
    }
    EXPECT_EQ(Flavor(win), MPI_WIN_FLAVOR_SHARED);
    ExpectAllToAllPutGet(win, mem, node.get());
    // shared_query maps every node peer's memory, holding what the
    // all-to-all left there.
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    for (int t = 0; t < node_size; ++t) {
      MPI_Aint qsize = 0;
      int qunit = 0;
      int* peer = nullptr;
      EXPECT_EQ(MPI_Win_shared_query(win, t, &qsize, &qunit, &peer),
                MPI_SUCCESS);
      EXPECT_EQ(qsize, MPI_Aint(node_size * sizeof(int)));
      EXPECT_EQ(qunit, int(sizeof(int)));
      if (peer == nullptr) {
        ADD_FAILURE() << "no memory for node rank " << t;
        continue;
      }
      EXPECT_EQ(peer[node_rank], node_rank * 17 + t) << "node rank " << t;
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(node.get());
    MPI_Win_free(&win);
  }
}

TEST(ShimWindowTest, WinCreateDynamicPassesThrough) {
  const int size = Size();
  MPI_Win win;
  ASSERT_EQ(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win),
            MPI_SUCCESS);
  EXPECT_FALSE(IsManaged(win));
  EXPECT_EQ(Flavor(win), MPI_WIN_FLAVOR_DYNAMIC);
  std::vector<int> mem(size);
  ASSERT_EQ(MPI_Win_attach(win, mem.data(), size * sizeof(int)), MPI_SUCCESS);
  MPI_Aint mine = 0;
  MPI_Get_address(mem.data(), &mine);
  std::vector<MPI_Aint> bases(size);
  MPI_Allgather(&mine, 1, MPI_AINT, bases.data(), 1, MPI_AINT, MPI_COMM_WORLD);
  ExpectAllToAllPutGet(win, mem.data(), MPI_COMM_WORLD, bases);
  MPI_Win_detach(win, mem.data());
  MPI_Win_free(&win);
}

TEST(ShimWindowTest, SharedQueryMapsNodeLocalPeersOnly) {
  const int rank = Rank(), size = Size();
  auto bytes_of = [](int r) { return MPI_Aint(16 * (r + 1)); };
  auto unit_of = [](int r) { return r % 2 == 0 ? 4 : 8; };
  AllocWindow w(bytes_of(rank), unit_of(rank));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(w.win()));
  // Load/store access to shared memory: Win_sync inside a passive epoch
  // orders it around the barrier (MPI-3 11.7, "separate and unified").
  MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win());
  for (MPI_Aint i = 0; i < bytes_of(rank); ++i) {
    w.base()[i] = PatternByte(rank, i);
  }
  MPI_Win_sync(w.win());
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(w.win());
  const std::vector<bool> local = NodeLocalRanks();
  for (int r = 0; r < size; ++r) {
    MPI_Aint qsize = -1;
    int qunit = 0;
    std::byte* peer = nullptr;
    EXPECT_EQ(MPI_Win_shared_query(w.win(), r, &qsize, &qunit, &peer),
              MPI_SUCCESS);
    if (!local[r]) {
      EXPECT_EQ(qsize, 0) << "off-node rank " << r;
      EXPECT_EQ(peer, nullptr) << "off-node rank " << r;
      continue;
    }
    EXPECT_EQ(qsize, bytes_of(r)) << "rank " << r;
    EXPECT_EQ(qunit, unit_of(r)) << "rank " << r;
    if (peer == nullptr) {
      ADD_FAILURE() << "no memory for node-local rank " << r;
      continue;
    }
    if (r == rank) {
      EXPECT_EQ(peer, w.base());
    }
    int mismatches = 0;
    for (MPI_Aint i = 0; i < bytes_of(r); ++i) {
      mismatches += peer[i] != PatternByte(r, i);
    }
    EXPECT_EQ(mismatches, 0) << "rank " << r;
  }
  // MPI_PROC_NULL: the first node-local rank with memory (all have some).
  int first_local = 0;
  while (!local[first_local]) ++first_local;
  MPI_Aint qsize = -1;
  int qunit = 0;
  std::byte* first = nullptr;
  EXPECT_EQ(
      MPI_Win_shared_query(w.win(), MPI_PROC_NULL, &qsize, &qunit, &first),
      MPI_SUCCESS);
  EXPECT_EQ(qsize, bytes_of(first_local));
  if (first != nullptr) {
    EXPECT_EQ(first[0], PatternByte(first_local, 0));
  } else {
    ADD_FAILURE() << "MPI_PROC_NULL query gave no memory";
  }
  MPI_Win_unlock_all(w.win());
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(ShimWindowTest, SharedQueryWritesReachTheOwner) {
  const int rank = Rank(), size = Size();
  AllocWindow w(size * sizeof(int), sizeof(int));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(w.win()));
  int* mine = w.base<int>();
  const std::vector<bool> local = NodeLocalRanks();
  MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win());
  for (int i = 0; i < size; ++i) mine[i] = -1;
  MPI_Win_sync(w.win());
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(w.win());
  // Store straight into every node-local peer's slot for this rank.
  for (int r = 0; r < size; ++r) {
    if (!local[r]) continue;
    MPI_Aint qsize = 0;
    int qunit = 0;
    int* peer = nullptr;
    EXPECT_EQ(MPI_Win_shared_query(w.win(), r, &qsize, &qunit, &peer),
              MPI_SUCCESS);
    if (peer == nullptr) {
      ADD_FAILURE() << "no memory for node-local rank " << r;
      continue;
    }
    peer[rank] = rank * 31 + r;
  }
  MPI_Win_sync(w.win());
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(w.win());
  for (int origin = 0; origin < size; ++origin) {
    EXPECT_EQ(mine[origin], local[origin] ? origin * 31 + rank : -1)
        << "origin " << origin;
  }
  MPI_Win_unlock_all(w.win());
  MPI_Barrier(MPI_COMM_WORLD);
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
