// The shim relaxes Yama's ptrace protection (prctl PR_SET_PTRACER) only
// while an MPI_Win_create window with node-local peers exists, and resets
// it when the last one is freed. This program defines prctl itself (linked
// -rdynamic, so the preloaded shim's calls land here): every
// PR_SET_PTRACER call is recorded, then passed on to the C library.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/prctl.h>

#include <cstdarg>
#include <memory>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

int g_ptracer_calls = 0;
unsigned long g_ptracer = 0;  // the last value set (0: none)

}  // namespace

extern "C" int prctl(int option, ...) {
  va_list ap;
  va_start(ap, option);
  unsigned long a[4];
  for (unsigned long& v : a) v = va_arg(ap, unsigned long);
  va_end(ap);
  if (option == PR_SET_PTRACER) {
    ++g_ptracer_calls;
    g_ptracer = a[0];
  }
  using Fn = int (*)(int, ...);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "prctl"));
  return real(option, a[0], a[1], a[2], a[3]);
}

namespace {

using rmashim_test::IsManaged;
using rmashim_test::NodeLocalRanks;
using rmashim_test::Rank;
using rmashim_test::Size;

// Whether this rank has a node-local peer in MPI_COMM_WORLD.
bool HasNodePeer() {
  int n = 0;
  for (bool local : NodeLocalRanks()) n += local;
  return n > 1;
}

// An MPI_Win_create window over 16 ints, checked with a ring put.
struct CreateWindow {
  std::vector<int> mem = std::vector<int>(16, -1);
  MPI_Win win = MPI_WIN_NULL;
  CreateWindow() {
    MPI_Win_create(mem.data(), 16 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
  }
  ~CreateWindow() {
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
  }
  void ExpectRingPut() {
    const int me = Rank(), n = Size(), value = 100 + me;
    MPI_Win_fence(0, win);
    MPI_Put(&value, 1, MPI_INT, (me + 1) % n, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    EXPECT_EQ(mem[0], 100 + (me + n - 1) % n);
  }
};

TEST(ShimPtracerTest, NotSetByInitNorByAllocateWindows) {
  EXPECT_EQ(g_ptracer_calls, 0) << "PR_SET_PTRACER called at MPI_Init";
  void* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
            MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(win));
  MPI_Win_free(&win);
  EXPECT_EQ(g_ptracer_calls, 0) << "PR_SET_PTRACER for an allocate window";
}

TEST(ShimPtracerTest, SetWhileCreateWindowsLiveResetAfter) {
  const bool peers = HasNodePeer();
  auto first = std::make_unique<CreateWindow>();
  EXPECT_TRUE(IsManaged(first->win));
  EXPECT_EQ(g_ptracer, peers ? PR_SET_PTRACER_ANY : 0ul);
  auto second = std::make_unique<CreateWindow>();
  second->ExpectRingPut();
  first->ExpectRingPut();
  first.reset();
  EXPECT_EQ(g_ptracer, peers ? PR_SET_PTRACER_ANY : 0ul)
      << "reset while a create window still lives";
  second.reset();
  EXPECT_EQ(g_ptracer, 0ul) << "not reset after the last create window";
  // Set once and reset once (with node peers), never without them.
  EXPECT_EQ(g_ptracer_calls, peers ? 2 : 0);
}

}  // namespace
