// Running the error tests' cases (rma_error_cases.h): each on the managed
// window and, where native MPICH survives it, on the native one, with the
// window and the buffers patterned so that any write shows.
#include "tests/mpi/rma_error_cases.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tests/mpi_test_util.h"

namespace rmashim_rma_errors {
namespace {

using rmashim_test::AllocWindow;
using rmashim_test::ErrorClass;
using rmashim_test::IsManaged;
using rmashim_test::NativeSafeBytes;
using rmashim_test::OptOutInfo;
using rmashim_test::PatternByte;
using rmashim_test::Rank;
using rmashim_test::Size;

// The outcome of a case on one window.
struct Outcome {
  int error_class = -1;
  std::vector<std::byte> window;  // this rank's window afterwards
  Buffers buffers;
};

void Fill(Buffers& b, int rank) {
  for (size_t i = 0; i < sizeof b.origin; ++i) {
    // Small values keep every interpretation (bool, float...) harmless.
    b.origin[i] = std::byte{static_cast<unsigned char>(i % 2)};
    b.compare[i] = std::byte{0};
    b.result[i] = PatternByte(rank, i, 3);
  }
}

Outcome RunCase(const Case& c, MPI_Win win, std::byte* base) {
  const int rank = Rank(), size = Size();
  const int target = (rank + 1) % size;
  for (MPI_Aint i = 0; i < kWindowBytes; ++i) base[i] = PatternByte(rank, i);
  Outcome out;
  Fill(out.buffers, rank);
  MPI_Group self_group = MPI_GROUP_NULL;
  if (c.epoch == Epoch::kPscwSelf) {
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &rank, &self_group);
    MPI_Group_free(&world);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  switch (c.epoch) {
    case Epoch::kLockAll:
      EXPECT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
      break;
    case Epoch::kPscwSelf:
      EXPECT_EQ(MPI_Win_post(self_group, 0, win), MPI_SUCCESS);
      EXPECT_EQ(MPI_Win_start(self_group, 0, win), MPI_SUCCESS);
      break;
    case Epoch::kNone:
    case Epoch::kCustom:
      break;
  }
  out.error_class = ErrorClass(c.call(win, target, out.buffers));
  switch (c.epoch) {
    case Epoch::kLockAll:
      EXPECT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS) << c.name;
      break;
    case Epoch::kPscwSelf:
      EXPECT_EQ(MPI_Win_complete(win), MPI_SUCCESS) << c.name;
      EXPECT_EQ(MPI_Win_wait(win), MPI_SUCCESS) << c.name;
      MPI_Group_free(&self_group);
      break;
    case Epoch::kNone:
    case Epoch::kCustom:
      break;
  }
  MPI_Barrier(MPI_COMM_WORLD);  // every access to this window is over
  out.window.assign(base, base + kWindowBytes);
  return out;
}

}  // namespace

AllocWindow* RmaErrorsTest::managed_ = nullptr;
AllocWindow* RmaErrorsTest::native_ = nullptr;

void RmaErrorsTest::SetUpTestSuite() {
  OptOutInfo opt_out;
  managed_ = new AllocWindow(kWindowBytes, 1);
  native_ = new AllocWindow(NativeSafeBytes(kWindowBytes), 1, opt_out.get());
  for (AllocWindow* w : {managed_, native_}) {
    if (w->rc() == MPI_SUCCESS) {
      MPI_Win_set_errhandler(w->win(), MPI_ERRORS_RETURN);
    }
  }
}

void RmaErrorsTest::TearDownTestSuite() {
  delete managed_;
  delete native_;
}

void RmaErrorsTest::Check(const std::vector<Case>& cases) {
  const int rank = Rank();
  const AllocWindow& managed = *managed_;
  const AllocWindow& native = *native_;
  ASSERT_EQ(managed.rc(), MPI_SUCCESS);
  ASSERT_EQ(native.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(managed.win()));
  Buffers pristine;
  Fill(pristine, rank);
  std::vector<std::byte> untouched(kWindowBytes);
  for (MPI_Aint i = 0; i < kWindowBytes; ++i)
    untouched[i] = PatternByte(rank, i);
  for (const Case& c : cases) {
    const Outcome shim = RunCase(c, managed.win(), managed.base());
    int want = c.standard_class;
    if (c.run_native) {
      const Outcome mpich = RunCase(c, native.win(), native.base());
      want = mpich.error_class;
      if (want == MPI_SUCCESS && shim.error_class == MPI_SUCCESS) {
        // Both accepted the call: same effect.
        EXPECT_EQ(shim.window, mpich.window) << c.name << ": window differs";
        EXPECT_EQ(std::memcmp(shim.buffers.result, mpich.buffers.result,
                              sizeof shim.buffers.result),
                  0)
            << c.name << ": result buffer differs";
      }
      if (want != c.standard_class) {
        // Recorded so a change in MPICH shows up here.
        std::printf("[ note     ] %s: native MPICH class %d, MPI names %d\n",
                    c.name.c_str(), want, c.standard_class);
      }
    }
    EXPECT_EQ(shim.error_class, want) << c.name;
    if (shim.error_class != MPI_SUCCESS) {
      // Nothing written: no target's window, no result buffer.
      EXPECT_EQ(shim.window, untouched) << c.name << ": window written";
      EXPECT_EQ(std::memcmp(shim.buffers.result, pristine.result,
                            sizeof pristine.result),
                0)
          << c.name << ": result buffer written";
    }
  }
}

}  // namespace rmashim_rma_errors
