// The shared windows of shim_error_util.h, registered as a GoogleTest
// environment: made before the first test, freed after the last.
#include "tests/mpi/shim_error_util.h"

#include <mpi.h>

namespace rmashim_test::error {

void SharedWindows::SetUp() {
  managed = new AllocWindow(kInts * sizeof(int), sizeof(int));
  OptOutInfo opt_out;
  native = new AllocWindow(rmashim_test::NativeSafeBytes(kInts * sizeof(int)),
                           sizeof(int), opt_out.get());
  MPI_Win_set_errhandler(managed->win(), MPI_ERRORS_RETURN);
  MPI_Win_set_errhandler(native->win(), MPI_ERRORS_RETURN);
  int* mem = managed->base<int>();
  for (int i = 0; i < kInts; ++i) mem[i] = WindowValue(Rank(), i);
  MPI_Barrier(MPI_COMM_WORLD);
}

void SharedWindows::TearDown() {
  delete managed;
  delete native;
}

SharedWindows* const g_windows = static_cast<SharedWindows*>(
    testing::AddGlobalTestEnvironment(new SharedWindows));

void ExpectWindowUntouchedAndRestore(const char* what) {
  MPI_Barrier(MPI_COMM_WORLD);
  int* mem = g_windows->managed->base<int>();
  const int rank = Rank();
  for (int i = 0; i < kInts; ++i) {
    EXPECT_EQ(mem[i], WindowValue(rank, i)) << what << ": window int " << i;
    mem[i] = WindowValue(rank, i);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace rmashim_test::error
