// DART start-up and shut-down, queries, locality, and error returns: calls
// before dart_init and after dart_exit return DART_ERR_NOTINIT, bad
// arguments DART_ERR_INVAL (never a crash). Own main(): it checks the
// uninitialized state around the GoogleTest run.
#include <dart/dart.h>
// DASH's include paths name the same headers.
#include <dash/dart/if/dart.h>
#include <dash/dart/if/dart_communication.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/dart/dart_test_util.h"

namespace {

using dart_testing::At;
using dart_testing::MyId;
using dart_testing::NodeLocalUnits;
using dart_testing::Size;

// Every call here must return DART_ERR_NOTINIT without DART running.
int CountNotInitFailures() {
  int failures = 0;
  auto expect = [&](dart_ret_t rc, const char* what) {
    if (rc != DART_ERR_NOTINIT) {
      std::fprintf(stderr, "%s returned %d, not DART_ERR_NOTINIT\n", what,
                   static_cast<int>(rc));
      ++failures;
    }
  };
  dart_global_unit_t me;
  size_t size;
  dart_group_t group;
  dart_team_t team = DART_TEAM_ALL;
  dart_gptr_t gptr = DART_GPTR_NULL;
  dart_lock_t lock;
  int value = 0;
  dart_datatype_t type;
  dart_handle_t handle = DART_HANDLE_NULL;
  dart_unit_locality_t* loc;
  void* addr;
  if (dart_initialized()) {
    std::fprintf(stderr, "dart_initialized() is true\n");
    ++failures;
  }
  expect(dart_myid(&me), "dart_myid");
  expect(dart_size(&size), "dart_size");
  expect(dart_exit(), "dart_exit");
  expect(dart_group_create(&group), "dart_group_create");
  expect(dart_team_myid(DART_TEAM_ALL, nullptr), "dart_team_myid");
  expect(dart_team_create(DART_TEAM_ALL, nullptr, &team), "dart_team_create");
  expect(dart_barrier(DART_TEAM_ALL), "dart_barrier");
  expect(
      dart_bcast(&value, 1, DART_TYPE_INT, DART_TEAM_UNIT_ID(0), DART_TEAM_ALL),
      "dart_bcast");
  expect(dart_memalloc(1, DART_TYPE_INT, &gptr), "dart_memalloc");
  expect(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_INT, &gptr),
         "dart_team_memalloc_aligned");
  expect(dart_put_blocking(gptr, &value, 1, DART_TYPE_INT, DART_TYPE_INT),
         "dart_put_blocking");
  expect(dart_get(&value, gptr, 1, DART_TYPE_INT, DART_TYPE_INT), "dart_get");
  expect(dart_flush(gptr), "dart_flush");
  expect(dart_wait(&handle), "dart_wait");
  expect(dart_fetch_and_op(gptr, &value, &value, DART_TYPE_INT, DART_OP_SUM),
         "dart_fetch_and_op");
  expect(dart_team_lock_init(DART_TEAM_ALL, &lock), "dart_team_lock_init");
  expect(dart_type_create_strided(DART_TYPE_INT, 2, 1, &type),
         "dart_type_create_strided");
  expect(dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(0), &loc),
         "dart_unit_locality");
  expect(dart_gptr_getaddr(gptr, &addr), "dart_gptr_getaddr");
  expect(dart_gptr_setaddr(&gptr, &value), "dart_gptr_setaddr");
  expect(dart_gptr_incaddr(&gptr, 8), "dart_gptr_incaddr");
  expect(dart_gptr_setunit(&gptr, DART_TEAM_UNIT_ID(0)), "dart_gptr_setunit");
  expect(dart_send(&value, 1, DART_TYPE_INT, 0, DART_GLOBAL_UNIT_ID(0)),
         "dart_send");
  return failures;
}

int g_before_init_failures = -1;

TEST(DartInit, CallsBeforeInitReturnNotInit) {
  EXPECT_EQ(0, g_before_init_failures);
}

TEST(DartInit, InitializedAndSecondInitRejected) {
  EXPECT_TRUE(dart_initialized());
  int argc = 0;
  char** argv = nullptr;
  EXPECT_EQ(DART_ERR_INVAL, dart_init(&argc, &argv));
  EXPECT_TRUE(dart_initialized());
}

TEST(DartInit, IdsMatchMpi) {
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(rank, MyId());
  EXPECT_EQ(size, Size());
  dart_team_unit_t team_me;
  ASSERT_EQ(DART_OK, dart_team_myid(DART_TEAM_ALL, &team_me));
  EXPECT_EQ(rank, team_me.id);
  size_t team_size = 0;
  ASSERT_EQ(DART_OK, dart_team_size(DART_TEAM_ALL, &team_size));
  EXPECT_EQ(static_cast<size_t>(size), team_size);
}

TEST(DartLocality, EveryUnitDescribed) {
  const std::vector<bool> local = NodeLocalUnits();
  dart_unit_locality_t* mine = nullptr;
  ASSERT_EQ(DART_OK, dart_unit_locality(DART_TEAM_ALL,
                                        DART_TEAM_UNIT_ID(MyId()), &mine));
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  EXPECT_EQ(0, std::strncmp(host, mine->hwinfo.host,
                            DART_LOCALITY_HOST_MAX_SIZE - 1));
  int node = -1, numa = -1;
  ASSERT_EQ(2, std::sscanf(mine->domain_tag, ".%d.%d", &node, &numa));
  for (int u = 0; u < Size(); ++u) {
    dart_unit_locality_t* loc = nullptr;
    ASSERT_EQ(DART_OK,
              dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(u), &loc));
    EXPECT_EQ(u, loc->unit.id);
    EXPECT_EQ(DART_TEAM_ALL, loc->team);
    EXPECT_GT(loc->hwinfo.num_cores, 0);
    EXPECT_GE(loc->hwinfo.num_numa, 1);
    EXPECT_GE(loc->hwinfo.core_id, 0);
    // num_cores is the unit's share of its NUMA domain's cores (as in
    // DART-MPI), so the core index is bounded by the node's processors.
    EXPECT_LT(loc->hwinfo.core_id, sysconf(_SC_NPROCESSORS_ONLN));
    EXPECT_LE(loc->hwinfo.num_cores, sysconf(_SC_NPROCESSORS_ONLN));
    EXPECT_GE(loc->hwinfo.numa_id, 0);
    EXPECT_GE(loc->hwinfo.cpu_id, 0);
    EXPECT_GE(loc->hwinfo.min_threads, 1);
    int unit_node = -1, unit_numa = -1;
    ASSERT_EQ(2,
              std::sscanf(loc->domain_tag, ".%d.%d", &unit_node, &unit_numa));
    // DART's node index agrees with MPI's view of shared memory (also in
    // the simulated two-node layouts).
    EXPECT_EQ(local[u], unit_node == node) << "unit " << u;
  }
  dart_unit_locality_t* bad = nullptr;
  EXPECT_EQ(DART_ERR_INVAL,
            dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(Size()), &bad));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_unit_locality(DART_TEAM_ALL, DART_TEAM_UNIT_ID(0), nullptr));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_unit_locality(1234, DART_TEAM_UNIT_ID(0), &bad));
}

// Bad arguments to every area return DART_ERR_INVAL (or NOTFOUND for
// unknown segments) and change nothing.
TEST(DartErrors, BadArgumentsAreRejected) {
  EXPECT_EQ(DART_ERR_INVAL, dart_myid(nullptr));
  EXPECT_EQ(DART_ERR_INVAL, dart_size(nullptr));
  EXPECT_EQ(DART_ERR_INVAL, dart_team_myid(4242, nullptr));
  dart_team_unit_t tu;
  EXPECT_EQ(DART_ERR_INVAL, dart_team_myid(-5, &tu));
  EXPECT_EQ(DART_ERR_INVAL, dart_barrier(777));
  dart_team_t all = DART_TEAM_ALL;
  EXPECT_EQ(DART_ERR_INVAL, dart_team_destroy(&all));
  EXPECT_EQ(DART_ERR_INVAL, dart_group_destroy(nullptr));
  dart_group_t garbage = reinterpret_cast<dart_group_t>(0x1234);
  size_t n = 0;
  EXPECT_EQ(DART_ERR_INVAL, dart_group_size(garbage, &n));
  EXPECT_EQ(DART_ERR_INVAL, dart_group_destroy(&garbage));

  int value = 1;
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(DART_TEAM_ALL, 4, DART_TYPE_INT, &g));
  // Out of range, bad unit, bad type, NULL buffer, unknown segment.
  EXPECT_EQ(DART_ERR_INVAL, dart_put_blocking(At(g, 0, 16), &value, 1,
                                              DART_TYPE_INT, DART_TYPE_INT));
  EXPECT_EQ(DART_ERR_INVAL, dart_put_blocking(At(g, 0, 12), &value, 2,
                                              DART_TYPE_INT, DART_TYPE_INT));
  EXPECT_EQ(DART_ERR_INVAL, dart_get_blocking(&value, At(g, 0, -4), 1,
                                              DART_TYPE_INT, DART_TYPE_INT));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_put(At(g, Size()), &value, 1, DART_TYPE_INT, DART_TYPE_INT));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_put(g, &value, 1, DART_TYPE_INT, DART_TYPE_DOUBLE));
  EXPECT_EQ(DART_ERR_INVAL, dart_put(g, &value, 1, 999, DART_TYPE_INT));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_put(g, nullptr, 1, DART_TYPE_INT, DART_TYPE_INT));
  EXPECT_EQ(DART_ERR_INVAL, dart_put_handle(g, &value, 1, DART_TYPE_INT,
                                            DART_TYPE_INT, nullptr));
  dart_gptr_t unknown = g;
  unknown.segid = 999;
  EXPECT_EQ(DART_ERR_NOTFOUND,
            dart_put(unknown, &value, 1, DART_TYPE_INT, DART_TYPE_INT));
  EXPECT_EQ(DART_ERR_NOTFOUND, dart_flush(unknown));
  dart_handle_t fake = reinterpret_cast<dart_handle_t>(&value);
  EXPECT_EQ(DART_ERR_INVAL, dart_wait(&fake));
  EXPECT_EQ(DART_ERR_INVAL, dart_handle_free(&fake));
  // Atomics: compare-and-swap is for integers; bitwise ops not for floats.
  double d = 0, r = 0;
  dart_gptr_t dg;
  ASSERT_EQ(DART_OK, dart_team_memalloc_aligned(DART_TEAM_ALL, 1,
                                                DART_TYPE_DOUBLE, &dg));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_compare_and_swap(dg, &d, &d, &r, DART_TYPE_DOUBLE));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_fetch_and_op(dg, &d, &r, DART_TYPE_DOUBLE, DART_OP_BAND));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_accumulate(dg, &d, 1, DART_TYPE_DOUBLE, DART_OP_NO_OP));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_accumulate(dg, &d, 1, DART_TYPE_DOUBLE, DART_OP_UNDEFINED));
  EXPECT_EQ(DART_ERR_INVAL, dart_fetch_and_op(At(dg, 0, 8), &d, &r,
                                              DART_TYPE_DOUBLE, DART_OP_SUM));
  // Types.
  dart_datatype_t t;
  EXPECT_EQ(DART_ERR_INVAL, dart_type_create_strided(DART_TYPE_INT, 1, 2, &t));
  EXPECT_EQ(DART_ERR_INVAL, dart_type_create_strided(12345, 4, 2, &t));
  EXPECT_EQ(DART_ERR_INVAL, dart_type_create_strided(DART_TYPE_INT, 4, 0, &t));
  dart_datatype_t basic = DART_TYPE_INT;
  EXPECT_EQ(DART_ERR_INVAL, dart_type_destroy(&basic));
  // A strided type needs a multiple of its block length.
  ASSERT_EQ(DART_OK, dart_type_create_strided(DART_TYPE_INT, 4, 2, &t));
  EXPECT_EQ(DART_ERR_INVAL, dart_put(g, &value, 1, DART_TYPE_INT, t));
  ASSERT_EQ(DART_OK, dart_type_destroy(&t));
  EXPECT_EQ(DART_ERR_INVAL, dart_type_destroy(&t));
  // Memory.
  EXPECT_EQ(DART_ERR_INVAL, dart_memalloc(1, DART_TYPE_UNDEFINED, &g));
  EXPECT_EQ(DART_ERR_INVAL, dart_memalloc(1, DART_TYPE_INT, nullptr));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_memalloc(SIZE_MAX / 2, DART_TYPE_INT, &unknown));
  EXPECT_EQ(DART_ERR_INVAL, dart_team_memfree(unknown));
  EXPECT_EQ(DART_OK, dart_memfree(DART_GPTR_NULL));
  // Collectives and messages.
  EXPECT_EQ(DART_ERR_INVAL,
            dart_bcast(&value, 1, DART_TYPE_INT, DART_TEAM_UNIT_ID(Size()),
                       DART_TEAM_ALL));
  EXPECT_EQ(DART_ERR_INVAL, dart_allreduce(&value, &value, 1, DART_TYPE_INT,
                                           DART_OP_REPLACE, DART_TEAM_ALL));
  EXPECT_EQ(DART_ERR_INVAL,
            dart_send(&value, 1, DART_TYPE_INT, -1, DART_GLOBAL_UNIT_ID(0)));
  EXPECT_EQ(DART_ERR_INVAL, dart_recv(&value, 1, DART_TYPE_INT, 0,
                                      DART_GLOBAL_UNIT_ID(Size())));
  // Locks.
  EXPECT_EQ(DART_ERR_INVAL, dart_lock_acquire(nullptr));
  int32_t acquired = 0;
  EXPECT_EQ(DART_ERR_INVAL, dart_lock_try_acquire(nullptr, &acquired));
  dart_barrier(DART_TEAM_ALL);
  EXPECT_EQ(DART_OK, dart_team_memfree(dg));
  EXPECT_EQ(DART_OK, dart_team_memfree(g));
}

}  // namespace

int main(int argc, char** argv) {
  g_before_init_failures = CountNotInitFailures();
  dart_thread_support_level_t level = DART_THREAD_MULTIPLE;
  if (dart_init_thread(&argc, &argv, &level) != DART_OK) return 1;
  if (level != DART_THREAD_MULTIPLE) return 1;  // MPICH provides MULTIPLE
  if (MyId() != 0) {
    unsetenv("XML_OUTPUT_FILE");
    unsetenv("TEST_PREMATURE_EXIT_FILE");
    unsetenv("GTEST_OUTPUT");
  }
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (dart_exit() != DART_OK) return 1;
  // DART started MPI, so it finalized it; everything is uninitialized again.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    std::fprintf(stderr, "dart_exit did not finalize MPI\n");
    return 1;
  }
  if (CountNotInitFailures() != 0) return 1;
  return worst;
}
