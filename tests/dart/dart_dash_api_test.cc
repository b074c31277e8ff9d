// The parts of DART that DASH's library needs beyond the core interface:
// allocators, custom types and user reductions, dart_lock_initialized,
// dart_config, and registration that is collective only to register
// (dart_team_memderegister is local, as in DART-MPI).
#include <dart/dart.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "tests/dart/dart_test_util.h"

namespace {

using dart_testing::AllGptrs;
using dart_testing::At;
using dart_testing::MyId;
using dart_testing::Size;

TEST(DartAllocator, AllocFreeAndRemoteAccess) {
  dart_allocator_t a = nullptr;
  ASSERT_EQ(DART_OK, dart_allocator_new(1000, DART_TEAM_ALL, &a));  // -> 1024
  // Not collective: every unit allocates a different number of blocks.
  std::vector<dart_gptr_t> mine;
  for (int i = 0; i <= MyId(); ++i) {
    dart_gptr_t g;
    ASSERT_EQ(DART_OK, dart_allocator_alloc(4, DART_TYPE_INT, &g, a));
    EXPECT_EQ(MyId(), g.unitid);
    mine.push_back(g);
  }
  // Blocks do not overlap.
  for (size_t i = 1; i < mine.size(); ++i) {
    EXPECT_GE(mine[i].addr_or_offs.offset,
              mine[i - 1].addr_or_offs.offset + 16);
  }
  // The first block of every unit is written by its right neighbour.
  const std::vector<dart_gptr_t> firsts = AllGptrs(mine[0]);
  const int right = (MyId() + 1) % Size();
  const int values[4] = {MyId(), MyId() + 1, MyId() + 2, MyId() + 3};
  ASSERT_EQ(DART_OK, dart_put_blocking(firsts[right], values, 4, DART_TYPE_INT,
                                       DART_TYPE_INT));
  dart_barrier(DART_TEAM_ALL);
  int* local = nullptr;
  ASSERT_EQ(DART_OK,
            dart_gptr_getaddr(mine[0], reinterpret_cast<void**>(&local)));
  const int left = (MyId() + Size() - 1) % Size();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(left + i, local[i]);
  dart_barrier(DART_TEAM_ALL);
  // Exhaustion, then reuse after free (neighbours merge).
  dart_gptr_t big;
  EXPECT_EQ(DART_ERR_NOMEM,
            dart_allocator_alloc(2048, DART_TYPE_BYTE, &big, a));
  for (dart_gptr_t& g : mine) {
    ASSERT_EQ(DART_OK, dart_allocator_free(&g, a));
    EXPECT_TRUE(DART_GPTR_ISNULL(g));
  }
  ASSERT_EQ(DART_OK, dart_allocator_alloc(1024, DART_TYPE_BYTE, &big, a));
  dart_gptr_t none;
  EXPECT_EQ(DART_ERR_NOMEM, dart_allocator_alloc(1, DART_TYPE_BYTE, &none, a));
  ASSERT_EQ(DART_OK, dart_allocator_free(&big, a));
  dart_gptr_t foreign = firsts[right];
  if (right != MyId()) {
    EXPECT_EQ(DART_ERR_INVAL, dart_allocator_free(&foreign, a));
  }
  ASSERT_EQ(DART_OK, dart_allocator_destroy(&a));
  EXPECT_EQ(nullptr, a);
}

struct Pair {
  int32_t count;
  double sum;
};

// A non-commutative-safe reduction: element-wise add, scaled by userdata.
void AddPairs(const void* in, void* inout, size_t len, void* userdata) {
  const auto* a = static_cast<const Pair*>(in);
  auto* b = static_cast<Pair*>(inout);
  const int scale = *static_cast<int*>(userdata);
  for (size_t i = 0; i < len; ++i) {
    b[i].count += a[i].count * scale;
    b[i].sum += a[i].sum * scale;
  }
}

TEST(DartCustom, TypesMoveAsBytesAndReduceWithUserOps) {
  dart_datatype_t pair;
  ASSERT_EQ(DART_OK, dart_type_create_custom(sizeof(Pair), &pair));
  // One-sided: custom elements to the right neighbour's team memory.
  dart_gptr_t g;
  ASSERT_EQ(DART_OK, dart_team_memalloc_aligned(DART_TEAM_ALL, 3, pair, &g));
  const int right = (MyId() + 1) % Size();
  const Pair out[3] = {{MyId(), 0.5}, {MyId() + 1, 1.5}, {MyId() + 2, 2.5}};
  ASSERT_EQ(DART_OK, dart_put_blocking(At(g, right), out, 3, pair, pair));
  dart_barrier(DART_TEAM_ALL);
  Pair in[3];
  ASSERT_EQ(DART_OK, dart_get_blocking(in, At(g, MyId()), 3, pair, pair));
  const int left = (MyId() + Size() - 1) % Size();
  EXPECT_EQ(left + 2, in[2].count);
  EXPECT_EQ(2.5, in[2].sum);
  // A strided type over the custom type: every other element.
  dart_datatype_t every_other;
  ASSERT_EQ(DART_OK, dart_type_create_strided(pair, 2, 1, &every_other));
  Pair two[2] = {};
  ASSERT_EQ(DART_OK,
            dart_get_blocking(two, At(g, MyId()), 2, every_other, pair));
  EXPECT_EQ(left, two[0].count);
  EXPECT_EQ(left + 2, two[1].count);
  dart_barrier(DART_TEAM_ALL);
  // Collectives take it as bytes.
  Pair b = {MyId() == 0 ? 42 : -1, 4.25};
  ASSERT_EQ(DART_OK,
            dart_bcast(&b, 1, pair, DART_TEAM_UNIT_ID(0), DART_TEAM_ALL));
  EXPECT_EQ(42, b.count);
  // A user reduction with user data.
  int scale = 1;
  dart_operation_t op = DART_OP_UNDEFINED;
  ASSERT_EQ(DART_OK, dart_op_create(&AddPairs, &scale, true, pair, true, &op));
  EXPECT_GE(op, static_cast<dart_operation_t>(DART_OP_LAST));
  const Pair mine[2] = {{1, 0.25 * MyId()}, {MyId(), 1.0}};
  Pair total[2];
  ASSERT_EQ(DART_OK, dart_allreduce(mine, total, 2, pair, op, DART_TEAM_ALL));
  EXPECT_EQ(Size(), total[0].count);
  EXPECT_EQ(0.25 * Size() * (Size() - 1) / 2, total[0].sum);
  EXPECT_EQ(Size() * (Size() - 1) / 2, total[1].count);
  Pair at_root[2] = {};
  ASSERT_EQ(DART_OK, dart_reduce(mine, at_root, 2, pair, op,
                                 DART_TEAM_UNIT_ID(Size() - 1), DART_TEAM_ALL));
  if (MyId() == Size() - 1) {
    EXPECT_EQ(Size(), at_root[0].count);
  }
  ASSERT_EQ(DART_OK, dart_op_destroy(&op));
  EXPECT_EQ(static_cast<dart_operation_t>(DART_OP_UNDEFINED), op);
  EXPECT_EQ(DART_ERR_INVAL, dart_op_destroy(&op));
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
  ASSERT_EQ(DART_OK, dart_type_destroy(&every_other));
  ASSERT_EQ(DART_OK, dart_type_destroy(&pair));
}

TEST(DartLocks, Initialized) {
  dart_lock_t lock = DART_LOCK_NULL;
  EXPECT_FALSE(dart_lock_initialized(lock));
  ASSERT_EQ(DART_OK, dart_team_lock_init(DART_TEAM_ALL, &lock));
  EXPECT_TRUE(dart_lock_initialized(lock));
  dart_lock_t copy = lock;
  ASSERT_EQ(DART_OK, dart_team_lock_destroy(&lock));
  EXPECT_FALSE(dart_lock_initialized(copy));
}

TEST(DartConfig, Static) {
  dart_config_t* a = nullptr;
  dart_config_t* b = nullptr;
  dart_config(&a);
  dart_config(&b);
  ASSERT_NE(nullptr, a);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a->log_enabled == 0 || a->log_enabled == 1);
}

// Deregistration is local: units deregister at different times, with no
// partner; only registration is collective.
TEST(DartRegister, DeregisterIsLocal) {
  std::vector<int32_t> memory(16, MyId());
  dart_gptr_t g;
  ASSERT_EQ(DART_OK, dart_team_memregister(DART_TEAM_ALL, memory.size(),
                                           DART_TYPE_INT, memory.data(), &g));
  const int right = (MyId() + 1) % Size();
  int32_t got = -1;
  ASSERT_EQ(DART_OK, dart_get_blocking(&got, At(g, right, 4), 1, DART_TYPE_INT,
                                       DART_TYPE_INT));
  EXPECT_EQ(right, got);
  dart_barrier(DART_TEAM_ALL);
  // Unit 0 deregisters alone and registers nothing else; the others keep
  // using their segments among themselves meanwhile.
  if (MyId() == 0) {
    ASSERT_EQ(DART_OK, dart_team_memderegister(g));
  }
  if (MyId() != 0 && Size() > 2) {
    const int peer = MyId() == Size() - 1 ? 1 : MyId() + 1;
    ASSERT_EQ(DART_OK, dart_get_blocking(&got, At(g, peer), 1, DART_TYPE_INT,
                                         DART_TYPE_INT));
    EXPECT_EQ(peer, got);
  }
  // A second registration (collective) while some units still hold the
  // first: every unit agrees on a fresh segment id.
  std::vector<int32_t> second(4, 100 + MyId());
  dart_gptr_t g2;
  ASSERT_EQ(DART_OK,
            dart_team_memregister_aligned(DART_TEAM_ALL, second.size(),
                                          DART_TYPE_INT, second.data(), &g2));
  const std::vector<dart_gptr_t> ids = AllGptrs(g2);
  for (const dart_gptr_t& x : ids) EXPECT_EQ(g2.segid, x.segid);
  EXPECT_NE(g.segid, g2.segid);
  ASSERT_EQ(DART_OK, dart_get_blocking(&got, At(g2, right), 1, DART_TYPE_INT,
                                       DART_TYPE_INT));
  EXPECT_EQ(100 + right, got);
  if (MyId() != 0) {
    usleep(1000 * MyId());  // out of step on purpose
    ASSERT_EQ(DART_OK, dart_team_memderegister(g));
  }
  EXPECT_EQ(DART_ERR_INVAL, dart_team_memderegister(g));  // already gone
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_team_memderegister(g2));
  // Memory stays the caller's.
  EXPECT_EQ(MyId(), memory[0]);
}

// Every unit signals its right neighbour with a put it only completes
// locally, then polls its own memory for its left neighbour's signal
// (DASH's halo exchange). On nodes apart, a put may need MPI progress at its
// origin after local completion: DART must let MPI progress while a unit
// polls memory it reaches directly, else all units spin forever.
TEST(DartProgress, PollingOwnMemorySeesRemotePuts) {
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_INT, &g));
  int* mine = nullptr;
  dart_gptr_t own = At(g, MyId());
  ASSERT_EQ(DART_OK, dart_gptr_getaddr(own, reinterpret_cast<void**>(&mine)));
  for (int round = 1; round <= 20; ++round) {
    *mine = 0;
    dart_barrier(DART_TEAM_ALL);
    const int right = (MyId() + 1) % Size();
    dart_handle_t h;
    ASSERT_EQ(DART_OK, dart_put_handle(At(g, right), &round, 1, DART_TYPE_INT,
                                       DART_TYPE_INT, &h));
    ASSERT_EQ(DART_OK, dart_wait_local(&h));
    const double deadline = MPI_Wtime() + 20;
    int v = 0;
    while (v != round && MPI_Wtime() < deadline) {
      ASSERT_EQ(DART_OK,
                dart_get_blocking(&v, own, 1, DART_TYPE_INT, DART_TYPE_INT));
    }
    ASSERT_EQ(round, v) << "the left neighbour's put never arrived";
    dart_barrier(DART_TEAM_ALL);
  }
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
}

}  // namespace
