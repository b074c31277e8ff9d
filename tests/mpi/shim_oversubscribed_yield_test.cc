// MPICH's own waits (its collectives inside window creation and free, its
// barriers) poll UCX without ever yielding; on a host with more ranks than
// cores the shim gives the core away in those polls
// (shim/base/ucx_progress.cc) and nowhere else. Run on ranks that each
// have a core (the 2-rank suite on a machine of two or more) and on ranks
// pinned together to one processing unit (hydra's -bind-to), which makes
// any host oversubscribed.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>

#include <cstdint>
#include <cstdlib>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::IsManaged;
using rmashim_test::MpiProgressYields;
using rmashim_test::Rank;
using rmashim_test::Size;

// As the shim judges it (shim/base/spin_wait.cc: CalibrateSpin): more
// ranks on the host than processing units this process may run on.
bool HostOversubscribed() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return true;
  const char* launched = std::getenv("MPI_LOCALNRANKS");
  const long host_ranks = launched != nullptr ? std::atol(launched) : Size();
  return host_ranks > CPU_COUNT(&allowed);
}

TEST(OversubscribedYieldTest, MpichPollsBindToTheShim) {
  void* poll = dlsym(RTLD_DEFAULT, "ucp_worker_progress");
  void* shim_api = dlsym(RTLD_DEFAULT, "rmashim_mpi_progress_yields");
  ASSERT_NE(poll, nullptr);
  ASSERT_NE(shim_api, nullptr);
  Dl_info poll_in, shim_in;
  ASSERT_NE(dladdr(poll, &poll_in), 0);
  ASSERT_NE(dladdr(shim_api, &shim_in), 0);
  // The first definition in the lookup order MPICH's calls bind to is the
  // shim's, not libucp's.
  EXPECT_EQ(poll_in.dli_fbase, shim_in.dli_fbase) << poll_in.dli_fname;
}

TEST(OversubscribedYieldTest, WindowCyclesYieldOnlyWhereOversubscribed) {
  const int rank = Rank(), size = Size();
  const long long before = MpiProgressYields();
  ASSERT_GE(before, 0);
  for (int cycle = 0; cycle < 20; ++cycle) {
    AllocWindow w(2 * sizeof(int64_t), sizeof(int64_t));
    ASSERT_EQ(w.rc(), MPI_SUCCESS);
    ASSERT_TRUE(IsManaged(w.win()));
    int64_t* mem = w.base<int64_t>();
    mem[0] = -1;
    const int64_t mine = int64_t{cycle} * size + rank;
    MPI_Win_fence(0, w.win());
    MPI_Put(&mine, 1, MPI_INT64_T, (rank + 1) % size, 0, 1, MPI_INT64_T,
            w.win());
    MPI_Win_fence(0, w.win());
    EXPECT_EQ(mem[0], int64_t{cycle} * size + (rank + size - 1) % size);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const long long yields = MpiProgressYields() - before;
  if (HostOversubscribed()) {
    // Every rank waited in MPICH's collectives for peers that shared its
    // core.
    EXPECT_GT(yields, 0);
  } else {
    EXPECT_EQ(yields, 0);
  }
}

}  // namespace
