// What the error suites (shim_error_bad_call_test.cc,
// shim_error_handler_test.cc) share: the size and contents of their windows,
// one managed and one native window made once per program, and the check
// that a failed call left this rank's managed window as it was.
#ifndef RMASHIM_TESTS_SHIM_ERROR_UTIL_H_
#define RMASHIM_TESTS_SHIM_ERROR_UTIL_H_

#include <gtest/gtest.h>

#include "tests/mpi_test_util.h"

namespace rmashim_test::error {

inline constexpr int kInts = 8;  // window size of every rank, in ints
inline constexpr int kGetSentinel = -7;

// What window int `i` of rank `owner` holds between tests.
inline int WindowValue(int owner, int i) { return owner * 1000 + i; }

// One managed and one native window for every test of the error suites but
// the node-window one: window creation is collective and slow on
// oversubscribed nodes. Both return errors (MPI_ERRORS_RETURN); tests leave
// them without an epoch and with WindowValue contents.
class SharedWindows : public testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;
  AllocWindow* managed = nullptr;
  AllocWindow* native = nullptr;
};

extern SharedWindows* const g_windows;

// Checks this rank's managed window still holds WindowValue and restores it
// so one failing test does not blame the next. Collective.
void ExpectWindowUntouchedAndRestore(const char* what);

}  // namespace rmashim_test::error

#endif  // RMASHIM_TESTS_SHIM_ERROR_UTIL_H_
