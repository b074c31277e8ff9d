// What the synchronization suites (shim_sync_lock_test.cc,
// shim_sync_fence_pscw_test.cc, shim_sync_mixed_test.cc) share: how long a
// wait may take before a broken lock or epoch fails the test, and two managed
// world windows created once per program.
#ifndef RMASHIM_TESTS_SHIM_SYNC_UTIL_H_
#define RMASHIM_TESTS_SHIM_SYNC_UTIL_H_

#include "tests/mpi_test_util.h"

namespace rmashim_test::sync {

// Long enough for any correct run on an oversubscribed node, short enough
// that a broken lock fails the test well before mpirun's timeout.
inline constexpr double kTimeoutSeconds = 5.0;

// Two managed world windows shared by the tests that fit in them (window
// creation is collective and slow on oversubscribed nodes): ints at
// disp_unit 4 and int64s at disp_unit 8. Each test writes what it reads and
// leaves no epoch open.
AllocWindow& SharedIntWindow();
AllocWindow& SharedInt64Window();

}  // namespace rmashim_test::sync

#endif  // RMASHIM_TESTS_SHIM_SYNC_UTIL_H_
