// The error tests' cases and fixture (shim_rma_errors_test.cc): a case is
// one call in one kind of epoch with the class MPI names for it;
// RmaErrorsTest::Check runs each on a managed window and, where native
// MPICH survives it, on a native (opt-out) one, and compares classes and
// what the call wrote (rma_error_cases.cc).
#ifndef RMASHIM_TESTS_MPI_RMA_ERROR_CASES_H_
#define RMASHIM_TESTS_MPI_RMA_ERROR_CASES_H_

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tests/mpi_test_util.h"

namespace rmashim_rma_errors {

constexpr MPI_Aint kWindowBytes = 64;

// The epoch a case's call is made in.
enum class Epoch {
  kLockAll,   // lock_all ... unlock_all
  kNone,      // no epoch at all
  kPscwSelf,  // post/start on {self}; the call may name other ranks
  kCustom,    // the call synchronizes itself
};

// Buffers a call may read or write, patterned so any write shows.
struct Buffers {
  alignas(16) std::byte origin[64];
  alignas(16) std::byte compare[64];
  alignas(16) std::byte result[64];
};

struct Case {
  std::string name;
  int standard_class;  // what MPI names for it
  bool run_native;     // native MPICH returns (rather than hang or crash)
  Epoch epoch;
  // Makes the call on `win` at window rank `target`; returns its code.
  std::function<int(MPI_Win win, int target, Buffers& b)> call;
};

// One managed and one native window for every case: creating windows
// costs more than the cases.
class RmaErrorsTest : public testing::Test {
 protected:
  // Creates both windows, errors returned.
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  // Runs `cases` on the managed window and, where native MPICH survives
  // them, on the native one; checks classes and that failures wrote
  // nothing.
  static void Check(const std::vector<Case>& cases);
  static rmashim_test::AllocWindow* managed_;
  static rmashim_test::AllocWindow* native_;
};

}  // namespace rmashim_rma_errors

#endif  // RMASHIM_TESTS_MPI_RMA_ERROR_CASES_H_
