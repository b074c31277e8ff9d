// What the request-based RMA suites (shim_request_completion_test.cc,
// shim_request_array_test.cc) share: the ways a batch of requests can be
// completed (every wait and test variant, MPI_Request_get_status,
// MPI_Request_free) and one function that completes a batch in any of them
// and checks that each request is reported once.
#ifndef RMASHIM_TESTS_SHIM_REQUEST_UTIL_H_
#define RMASHIM_TESTS_SHIM_REQUEST_UTIL_H_

#include <mpi.h>

#include <vector>

namespace rmashim_test::request {

// How long a request may take to complete before the test fails.
inline constexpr double kTimeoutSeconds = 5.0;
inline constexpr int kTag = 42;  // of the suites' point-to-point messages

// How a batch of requests is completed.
enum class Completion {
  kWait,
  kTest,
  kWaitall,
  kTestall,
  kWaitany,
  kTestany,
  kWaitsome,
  kTestsome,
  kGetStatusThenWait,
  kFree,  // MPI_Request_free; the epoch's flush completes the operations
};

// The variant's name, for messages and test names.
const char* Name(Completion c);

// Completes `requests` the way `how` says, filling `statuses` (one per
// request, in request order) and returning whether all completed in time.
// Every handle is MPI_REQUEST_NULL afterwards.
bool Complete(Completion how, std::vector<MPI_Request>& requests,
              std::vector<MPI_Status>& statuses);

}  // namespace rmashim_test::request

#endif  // RMASHIM_TESTS_SHIM_REQUEST_UTIL_H_
