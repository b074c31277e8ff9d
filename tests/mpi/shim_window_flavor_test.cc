// The window flavors under the preloaded shim: the rmashim_managed=false
// opt-out, MPI_Win_create, MPI_Win_allocate_shared and
// MPI_Win_create_dynamic (passed through) all move data, and
// MPI_Win_shared_query on managed windows maps node-local peers only, whose
// memory loads and stores reach.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "tests/mpi/shim_window_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::window {
namespace {

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

}  // namespace
}  // namespace rmashim_test::window
