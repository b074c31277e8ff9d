// Wait/test on requests that may include kCompletedRequest (node-local
// request-based RMA the shim completed when it was issued). Real requests go
// to MPI unchanged; the blocking waits on them serve this process's agent
// while they wait, where one runs (shim/agent/stand_in_wait.h). Besides
// MPI-4.0's calls, the newer ones a program built against a newer MPICH may
// call (newer_request_calls.h).
#include <mpi.h>

#include <algorithm>
#include <vector>

#include "shim/agent/stand_in_wait.h"
#include "shim/base/newer_request_calls.h"
#include "shim/windows/passthrough.h"

using rmashim::kCompletedRequest;

namespace {

void SetEmptyStatus(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  status->count_lo = 0;
  status->count_hi_and_cancelled = 0;
}

bool AnyCompleted(int count, const MPI_Request* requests) {
  return requests != nullptr && count > 0 &&
         std::find(requests, requests + count, kCompletedRequest) !=
             requests + count;
}

// Turns our completed requests into MPI_REQUEST_NULL, which MPI treats as
// complete with an empty status.
void Retire(int count, MPI_Request* requests) {
  std::replace(requests, requests + count, kCompletedRequest, MPI_REQUEST_NULL);
}

// Waitany/Testany: report the first of our completed requests.
int FirstCompleted(int count, MPI_Request* requests, int* index,
                   MPI_Status* status) {
  const int i = static_cast<int>(
      std::find(requests, requests + count, kCompletedRequest) - requests);
  requests[i] = MPI_REQUEST_NULL;
  *index = i;
  SetEmptyStatus(status);
  return MPI_SUCCESS;
}

// Waitsome, Testsome and Request_get_status_some on `given`, which holds
// some of our completed requests: MPI's `test_some` on `real` (`given`
// itself, or a copy, with ours as MPI_REQUEST_NULL) reports the real
// requests complete by now; ours are appended after them, every one
// complete. An error of MPI's other than MPI_ERR_IN_STATUS (whose
// statuses say which failed) is returned as it is.
template <typename TestSome>
int SomeCompleted(int incount, const std::vector<int>& ours, MPI_Request* real,
                  int* outcount, int indices[], MPI_Status statuses[],
                  TestSome test_some) {
  const int rc = test_some(incount, real, outcount, indices, statuses);
  int rc_class = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &rc_class);
  if (rc != MPI_SUCCESS && rc_class != MPI_ERR_IN_STATUS) return rc;
  int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
  for (const int i : ours) {
    indices[n] = i;
    if (statuses != MPI_STATUSES_IGNORE) SetEmptyStatus(&statuses[n]);
    ++n;
  }
  *outcount = n;
  return rc;
}

// Where our completed requests are in `requests`.
std::vector<int> OursIn(int count, const MPI_Request* requests) {
  std::vector<int> ours;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == kCompletedRequest) ours.push_back(i);
  }
  return ours;
}

}  // namespace

extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (request == nullptr || *request != kCompletedRequest) {
    return rmashim::WaitStandingIn(request, status);
  }
  *request = MPI_REQUEST_NULL;
  SetEmptyStatus(status);
  return MPI_SUCCESS;
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (request == nullptr || *request != kCompletedRequest) {
    return PMPI_Test(request, flag, status);
  }
  *request = MPI_REQUEST_NULL;
  *flag = 1;
  SetEmptyStatus(status);
  return MPI_SUCCESS;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (AnyCompleted(count, requests)) Retire(count, requests);
  return rmashim::WaitAllStandingIn(count, requests, statuses);
}

int MPI_Testall(int count, MPI_Request requests[], int* flag,
                MPI_Status statuses[]) {
  if (!AnyCompleted(count, requests)) {
    return PMPI_Testall(count, requests, flag, statuses);
  }
  // Unless all complete, MPI_Testall must leave every request as it was.
  std::vector<MPI_Request> copy(requests, requests + count);
  Retire(count, copy.data());
  const int rc = PMPI_Testall(count, copy.data(), flag, statuses);
  if (*flag) std::copy(copy.begin(), copy.end(), requests);
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index,
                MPI_Status* status) {
  if (!AnyCompleted(count, requests)) {
    return rmashim::WaitAnyStandingIn(count, requests, index, status);
  }
  return FirstCompleted(count, requests, index, status);
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                MPI_Status* status) {
  if (!AnyCompleted(count, requests)) {
    return PMPI_Testany(count, requests, index, flag, status);
  }
  *flag = 1;
  return FirstCompleted(count, requests, index, status);
}

// With ours among them, Waitsome need not wait: ours are complete, so it
// is Testsome.
int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]) {
  if (!AnyCompleted(incount, requests)) {
    return rmashim::WaitSomeStandingIn(incount, requests, outcount, indices,
                                       statuses);
  }
  const std::vector<int> ours = OursIn(incount, requests);
  Retire(incount, requests);
  return SomeCompleted(incount, ours, requests, outcount, indices, statuses,
                       PMPI_Testsome);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]) {
  if (!AnyCompleted(incount, requests)) {
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  }
  const std::vector<int> ours = OursIn(incount, requests);
  Retire(incount, requests);
  return SomeCompleted(incount, ours, requests, outcount, indices, statuses,
                       PMPI_Testsome);
}

int MPI_Request_free(MPI_Request* request) {
  if (request == nullptr || *request != kCompletedRequest) {
    return PMPI_Request_free(request);
  }
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (request != kCompletedRequest) {
    return PMPI_Request_get_status(request, flag, status);
  }
  *flag = 1;
  SetEmptyStatus(status);
  return MPI_SUCCESS;
}

// MPI-4.1's: like Request_get_status, they leave every request as it was.
int MPI_Request_get_status_all(int count, const MPI_Request requests[],
                               int* flag, MPI_Status statuses[]) {
  if (&PMPI_Request_get_status_all == nullptr) return MPI_ERR_OTHER;
  if (!AnyCompleted(count, requests)) {
    return PMPI_Request_get_status_all(count, requests, flag, statuses);
  }
  // MPI gives a null request an empty status, as ours get.
  std::vector<MPI_Request> real(requests, requests + count);
  Retire(count, real.data());
  return PMPI_Request_get_status_all(count, real.data(), flag, statuses);
}

int MPI_Request_get_status_any(int count, const MPI_Request requests[],
                               int* index, int* flag, MPI_Status* status) {
  if (&PMPI_Request_get_status_any == nullptr) return MPI_ERR_OTHER;
  if (!AnyCompleted(count, requests)) {
    return PMPI_Request_get_status_any(count, requests, index, flag, status);
  }
  *index = static_cast<int>(
      std::find(requests, requests + count, kCompletedRequest) - requests);
  *flag = 1;
  SetEmptyStatus(status);
  return MPI_SUCCESS;
}

int MPI_Request_get_status_some(int incount, const MPI_Request requests[],
                                int* outcount, int indices[],
                                MPI_Status statuses[]) {
  if (&PMPI_Request_get_status_some == nullptr) return MPI_ERR_OTHER;
  if (!AnyCompleted(incount, requests)) {
    return PMPI_Request_get_status_some(incount, requests, outcount, indices,
                                        statuses);
  }
  std::vector<MPI_Request> real(requests, requests + incount);
  Retire(incount, real.data());
  return SomeCompleted(
      incount, OursIn(incount, requests), real.data(), outcount, indices,
      statuses, [](int n, MPI_Request* r, int* out, int* idx, MPI_Status* st) {
        return PMPI_Request_get_status_some(n, r, out, idx, st);
      });
}

// MPICH 4.3's.
int MPIX_Request_is_complete(MPI_Request request) {
  if (request == kCompletedRequest) return 1;
  return &PMPIX_Request_is_complete != nullptr
             ? PMPIX_Request_is_complete(request)
             : 0;
}

int MPI_Cancel(MPI_Request* request) {
  if (request == nullptr || *request != kCompletedRequest) {
    return PMPI_Cancel(request);
  }
  return MPI_SUCCESS;  // already complete: nothing to cancel
}

}  // extern "C"
