// The window flavors besides MPI_Win_allocate: MPI_Win_allocate_shared
// (managed: locks, atomics and puts on the fast path; shared_query maps
// peers), MPI_Win_create on malloc'd memory (managed on one node: put/get
// through cross-memory attach, accumulates through MPI) and
// MPI_Win_create_dynamic (left to MPI, attach/detach work).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::ScopedComm;
using rmashim_test::ScopedInfo;
using rmashim_test::Size;

// ---- MPI_Win_allocate_shared.

// Cells of node rank r's segment (int64): 0 lock-protected counter,
// 1 fetch_and_op counter, 2 CAS word, 3 accumulated sum, then one put slot
// per node rank, then r spare cells so segment sizes differ.
constexpr int kCounter = 0, kFop = 1, kCas = 2, kSum = 3, kSlots = 4;
int SharedCells(int node_size, int node_rank) {
  return kSlots + node_size + node_rank;
}

class SharedWindowTest : public testing::TestWithParam<bool> {};

// Every node rank updates every node rank's segment through MPI calls
// (exclusive locks with get/put, fetch_and_op, compare_and_swap,
// accumulate, puts) and through direct stores into the segments
// MPI_Win_shared_query maps; all of it adds up.
TEST_P(SharedWindowTest, ManagedLocksAtomicsPutsAndSharedQuery) {
  const bool noncontig = GetParam();
  ScopedComm node(rmashim_test::SplitNodeComm());
  const int me = Rank(node.get()), n = Size(node.get());
  ScopedInfo info({{"alloc_shared_noncontig", noncontig ? "true" : "false"}});
  int64_t* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate_shared(SharedCells(n, me) * sizeof(int64_t),
                                    sizeof(int64_t), info.get(), node.get(),
                                    &base, &win),
            MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(win));
  std::fill(base, base + SharedCells(n, me), 0);

  // shared_query: every peer's segment, its size and unit.
  std::vector<int64_t*> peer(n);
  for (int r = 0; r < n; ++r) {
    MPI_Aint size = -1;
    int unit = -1;
    ASSERT_EQ(MPI_Win_shared_query(win, r, &size, &unit, &peer[r]),
              MPI_SUCCESS);
    EXPECT_EQ(size, SharedCells(n, r) * MPI_Aint{sizeof(int64_t)}) << r;
    EXPECT_EQ(unit, static_cast<int>(sizeof(int64_t))) << r;
    ASSERT_NE(peer[r], nullptr) << r;
  }
  EXPECT_EQ(peer[me], base);
  if (!noncontig && n > 1) {
    // Contiguous by default: segments follow each other in rank order.
    EXPECT_EQ(peer[1], peer[0] + SharedCells(n, 0));
  }
  MPI_Barrier(node.get());

  constexpr int kRounds = 8;
  std::vector<int64_t> tickets;
  for (int round = 0; round < kRounds; ++round) {
    const int t = (me + round) % n;
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win), MPI_SUCCESS);
    int64_t v = -1;
    MPI_Get(&v, 1, MPI_INT64_T, t, kCounter, 1, MPI_INT64_T, win);
    MPI_Win_flush(t, win);
    ++v;
    MPI_Put(&v, 1, MPI_INT64_T, t, kCounter, 1, MPI_INT64_T, win);
    ASSERT_EQ(MPI_Win_unlock(t, win), MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
  for (int round = 0; round < kRounds; ++round) {
    const int64_t one = 1;
    int64_t old = -1;
    EXPECT_EQ(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, kFop, MPI_SUM, win),
              MPI_SUCCESS);
    MPI_Win_flush(0, win);
    tickets.push_back(old);
  }
  for (int t = 0; t < n; ++t) {
    // Election: exactly one rank swaps 0 for its rank+1.
    const int64_t mine = me + 1, zero = 0;
    int64_t old = -1;
    EXPECT_EQ(
        MPI_Compare_and_swap(&mine, &zero, &old, MPI_INT64_T, t, kCas, win),
        MPI_SUCCESS);
    const int64_t add = me + 1, stamp = 1000 * me + t;
    EXPECT_EQ(MPI_Accumulate(&add, 1, MPI_INT64_T, t, kSum, 1, MPI_INT64_T,
                             MPI_SUM, win),
              MPI_SUCCESS);
    EXPECT_EQ(
        MPI_Put(&stamp, 1, MPI_INT64_T, t, kSlots + me, 1, MPI_INT64_T, win),
        MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
  MPI_Barrier(node.get());

  EXPECT_EQ(base[kCounter], int64_t{kRounds});
  EXPECT_EQ(base[kSum], int64_t{n} * (n + 1) / 2);
  EXPECT_GE(base[kCas], 1);
  EXPECT_LE(base[kCas], n);
  for (int o = 0; o < n; ++o) {
    EXPECT_EQ(base[kSlots + o], 1000 * o + me) << "put from " << o;
  }
  std::vector<int64_t> all(kRounds * n);
  MPI_Allgather(tickets.data(), kRounds, MPI_INT64_T, all.data(), kRounds,
                MPI_INT64_T, node.get());
  std::sort(all.begin(), all.end());
  for (int i = 0; i < kRounds * n; ++i) ASSERT_EQ(all[i], i);
  if (me == 0) {
    EXPECT_EQ(base[kFop], int64_t{kRounds} * n);
  }

  // Direct stores through the mapped segments, ordered by win_sync and a
  // barrier (the unified model's shared-memory idiom).
  ASSERT_EQ(MPI_Win_lock_all(MPI_MODE_NOCHECK, win), MPI_SUCCESS);
  for (int t = 0; t < n; ++t) peer[t][kSlots + me] = -(100 * me + t);
  MPI_Win_sync(win);
  MPI_Barrier(node.get());
  MPI_Win_sync(win);
  for (int o = 0; o < n; ++o) {
    EXPECT_EQ(base[kSlots + o], -(100 * o + me)) << "store from " << o;
  }
  // And an MPI get sees a direct store.
  int64_t got = 0;
  const int next = (me + 1) % n;
  MPI_Get(&got, 1, MPI_INT64_T, next, kSlots + me, 1, MPI_INT64_T, win);
  MPI_Win_flush(next, win);
  EXPECT_EQ(got, -(100 * me + next));
  ASSERT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
  MPI_Barrier(node.get());
  MPI_Win_free(&win);
}

INSTANTIATE_TEST_SUITE_P(Layouts, SharedWindowTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Noncontig" : "Contiguous";
                         });

// A shared window where the last node rank contributes no memory:
// shared_query reports size 0 for it and MPI_PROC_NULL finds the first
// segment with memory.
TEST(SharedWindowTest, ZeroSizeSegment) {
  ScopedComm node(rmashim_test::SplitNodeComm());
  const int me = Rank(node.get()), n = Size(node.get());
  const bool empty = n > 1 && me == n - 1;
  int* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate_shared(empty ? 0 : 4 * sizeof(int), sizeof(int),
                                    MPI_INFO_NULL, node.get(), &base, &win),
            MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(win));
  if (!empty) std::fill(base, base + 4, -1);
  MPI_Barrier(node.get());
  MPI_Aint size = -1;
  int unit = -1;
  int* first = nullptr;
  ASSERT_EQ(MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &first),
            MPI_SUCCESS);
  EXPECT_EQ(size, MPI_Aint{4 * sizeof(int)});
  if (n > 1) {
    int* ignored = nullptr;
    ASSERT_EQ(MPI_Win_shared_query(win, n - 1, &size, &unit, &ignored),
              MPI_SUCCESS);
    EXPECT_EQ(size, 0);
  }
  // Everyone puts into node rank 0's segment.
  ASSERT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
  const int v = 10 + me;
  if (me < 4) {
    EXPECT_EQ(MPI_Put(&v, 1, MPI_INT, 0, me, 1, MPI_INT, win), MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
  MPI_Barrier(node.get());
  for (int i = 0; i < std::min(n, 4); ++i) EXPECT_EQ(first[i], 10 + i);
  MPI_Win_free(&win);
}

// ---- MPI_Win_create on malloc'd memory.

// Region of an origin in a target's window (ints): kRegion cells.
constexpr int kRegion = 16;

TEST(CreateWindowTest, PutGetDerivedTypesAndAccumulatesEveryRankToEveryRank) {
  const int rank = Rank(), size = Size();
  // One region per origin plus one shared accumulate cell; heap memory.
  const int cells = kRegion * size + 2;
  std::vector<int> memory(cells, -1);
  memory[cells - 2] = memory[cells - 1] = 0;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_create(memory.data(), cells * sizeof(int), sizeof(int),
                           MPI_INFO_NULL, MPI_COMM_WORLD, &win),
            MPI_SUCCESS);
  EXPECT_MANAGED(win);  // adopted on windows spanning nodes too
  MPI_Datatype every_other, three_blocks;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);         // cells 0,2,4,6
  const int blocks[] = {2, 1, 3}, displs[] = {9, 12, 13};  // 9,10,12,13,14,15
  MPI_Type_indexed(3, blocks, displs, MPI_INT, &three_blocks);
  MPI_Type_commit(&every_other);
  MPI_Type_commit(&three_blocks);
  MPI_Barrier(MPI_COMM_WORLD);

  // Lock_all epoch: contiguous origins into the `every_other` and
  // `three_blocks` cells of this origin's region at every target, and an
  // accumulate and a fetch_and_op on the shared cells (those go to MPI).
  const int picked[] = {9, 10, 12, 13, 14, 15};
  auto value = [](int origin, int target, int i) {
    return origin * 10000 + target * 100 + i;
  };
  // Origin and result buffers belong to MPI until unlock_all completes the
  // operations, so they live outside the loop, one set per target.
  std::vector<std::array<int, 4>> four(size);
  std::vector<std::array<int, 6>> six(size);
  std::vector<int> old(size, -1);
  const int one = rank + 1;
  ASSERT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
  for (int k = 0; k < size; ++k) {
    const int t = (rank + k) % size;
    const int region = rank * kRegion;
    for (int i = 0; i < 4; ++i) four[t][i] = value(rank, t, 2 * i);
    EXPECT_EQ(
        MPI_Put(four[t].data(), 4, MPI_INT, t, region, 1, every_other, win),
        MPI_SUCCESS);
    for (int i = 0; i < 6; ++i) six[t][i] = value(rank, t, picked[i]);
    EXPECT_EQ(
        MPI_Put(six[t].data(), 6, MPI_INT, t, region, 1, three_blocks, win),
        MPI_SUCCESS);
    EXPECT_EQ(MPI_Accumulate(&one, 1, MPI_INT, t, cells - 2, 1, MPI_INT,
                             MPI_SUM, win),
              MPI_SUCCESS);
    EXPECT_EQ(
        MPI_Fetch_and_op(&one, &old[t], MPI_INT, t, cells - 1, MPI_SUM, win),
        MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
  // Fetched values are a permutation of partial sums: each is below the total.
  for (int t = 0; t < size; ++t) {
    EXPECT_GE(old[t], 0);
    EXPECT_LT(old[t], size * (size + 1) / 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int o = 0; o < size; ++o) {
    const int* region = memory.data() + o * kRegion;
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(region[2 * i], value(o, rank, 2 * i)) << "from " << o;
    }
    for (int c : picked) {
      EXPECT_EQ(region[c], value(o, rank, c)) << "from " << o << " cell " << c;
    }
    for (int c : {1, 3, 5, 7, 8, 11}) {
      EXPECT_EQ(region[c], -1) << "from " << o << " cell " << c;
    }
  }
  EXPECT_EQ(memory[cells - 2], size * (size + 1) / 2);
  EXPECT_EQ(memory[cells - 1], size * (size + 1) / 2);

  // Gets back from every target, through derived types on both sides, in
  // a fence epoch and then under exclusive locks.
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 0) MPI_Win_fence(0, win);
    for (int k = 0; k < size; ++k) {
      const int t = (rank + k) % size;
      if (pass == 1) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
      std::vector<int> dst(kRegion, -7);
      EXPECT_EQ(MPI_Get(dst.data(), 1, three_blocks, t, rank * kRegion, 1,
                        three_blocks, win),
                MPI_SUCCESS);
      int four[4] = {-7, -7, -7, -7};
      EXPECT_EQ(
          MPI_Get(four, 4, MPI_INT, t, rank * kRegion, 1, every_other, win),
          MPI_SUCCESS);
      if (pass == 1) MPI_Win_unlock(t, win);
      if (pass == 0) MPI_Win_fence(0, win);
      for (int c : picked) {
        EXPECT_EQ(dst[c], value(rank, t, c)) << "pass " << pass;
      }
      EXPECT_EQ(dst[11], -7);
      for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(four[i], value(rank, t, 2 * i)) << "pass " << pass;
      }
    }
    if (pass == 0) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Type_free(&every_other);
  MPI_Type_free(&three_blocks);
  MPI_Win_free(&win);
}

// PSCW on a created window whose ranks expose memory at different offsets
// of their allocations with different displacement units.
TEST(CreateWindowTest, PscwWithPerRankDispUnits) {
  const int rank = Rank(), size = Size();
  const int unit = rank % 2 == 0 ? 4 : 8;  // bytes per displacement
  std::vector<int64_t> storage(4 + size, -1);
  // The window starts two cells into the heap block. (Not one: MPICH 4.0.2
  // rounds an MPI_Win_create base down to 16 bytes, in MPI_WIN_BASE and for
  // every access, and the shim adopts MPI_WIN_BASE.)
  int64_t* cells = storage.data() + 2;
  std::byte* base = reinterpret_cast<std::byte*>(cells);
  MPI_Win win;
  ASSERT_EQ(MPI_Win_create(base, size * sizeof(int64_t), unit, MPI_INFO_NULL,
                           MPI_COMM_WORLD, &win),
            MPI_SUCCESS);
  EXPECT_MANAGED(win);  // adopted on windows spanning nodes too
  MPI_Group everyone;
  MPI_Comm_group(MPI_COMM_WORLD, &everyone);
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(MPI_Win_post(everyone, 0, win), MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_start(everyone, 0, win), MPI_SUCCESS);
    for (int t = 0; t < size; ++t) {
      const int t_unit = t % 2 == 0 ? 4 : 8;
      const int64_t v = round * 1000 + rank * 10 + t;
      const MPI_Aint disp = rank * sizeof(int64_t) / t_unit;
      EXPECT_EQ(MPI_Put(&v, 1, MPI_INT64_T, t, disp, 1, MPI_INT64_T, win),
                MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Win_complete(win), MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_wait(win), MPI_SUCCESS);
    for (int o = 0; o < size; ++o) {
      EXPECT_EQ(cells[o], round * 1000 + o * 10 + rank)
          << "round " << round << " from " << o;
    }
    EXPECT_EQ(cells[-1], -1) << "written below the window";
    EXPECT_EQ(cells[size], -1) << "written past the window";
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Group_free(&everyone);
  MPI_Win_free(&win);
}

// ---- MPI_Win_create_dynamic.

// Dynamic windows are MPI's: attach, exchange addresses, put/get and
// accumulate with absolute displacements, detach, attach another region.
TEST(DynamicWindowTest, PassesThroughAndAttachDetachWork) {
  const int rank = Rank(), size = Size();
  MPI_Win win;
  ASSERT_EQ(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win),
            MPI_SUCCESS);
  EXPECT_FALSE(IsManaged(win));
  int* flavor = nullptr;
  int flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  ASSERT_TRUE(flag);
  EXPECT_EQ(*flavor, MPI_WIN_FLAVOR_DYNAMIC);
  for (int attach = 0; attach < 2; ++attach) {
    // A fresh heap region per attach: one slot per origin and a counter.
    std::vector<int64_t> region(size + 1, -1);
    region[size] = 0;
    ASSERT_EQ(
        MPI_Win_attach(win, region.data(), region.size() * sizeof(int64_t)),
        MPI_SUCCESS);
    MPI_Aint mine;
    MPI_Get_address(region.data(), &mine);
    std::vector<MPI_Aint> addr(size);
    MPI_Allgather(&mine, 1, MPI_AINT, addr.data(), 1, MPI_AINT, MPI_COMM_WORLD);
    ASSERT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    for (int t = 0; t < size; ++t) {
      const int64_t v = attach * 1000 + rank * 10 + t, one = 1;
      EXPECT_EQ(MPI_Put(&v, 1, MPI_INT64_T, t,
                        addr[t] + rank * MPI_Aint{sizeof(int64_t)}, 1,
                        MPI_INT64_T, win),
                MPI_SUCCESS);
      EXPECT_EQ(MPI_Accumulate(&one, 1, MPI_INT64_T, t,
                               addr[t] + size * MPI_Aint{sizeof(int64_t)}, 1,
                               MPI_INT64_T, MPI_SUM, win),
                MPI_SUCCESS);
    }
    MPI_Win_flush_all(win);
    std::vector<int64_t> back(size, -2);
    for (int t = 0; t < size; ++t) {
      EXPECT_EQ(MPI_Get(&back[t], 1, MPI_INT64_T, t,
                        addr[t] + rank * MPI_Aint{sizeof(int64_t)}, 1,
                        MPI_INT64_T, win),
                MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
    for (int t = 0; t < size; ++t) {
      EXPECT_EQ(back[t], attach * 1000 + rank * 10 + t);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int o = 0; o < size; ++o) {
      EXPECT_EQ(region[o], attach * 1000 + o * 10 + rank) << "from " << o;
    }
    EXPECT_EQ(region[size], size);
    ASSERT_EQ(MPI_Win_detach(win, region.data()), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);  // nobody targets a detached region
  }
  MPI_Win_free(&win);
}

}  // namespace
