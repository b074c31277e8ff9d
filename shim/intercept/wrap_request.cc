// Wait/test on requests that may include kCompletedRequest (node-local
// request-based RMA the shim completed when it was issued). Real requests go
// to MPI unchanged.
#include <mpi.h>

#include <algorithm>
#include <vector>

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

// Waitsome/Testsome: report all of ours as completed.
int AllCompleted(int count, MPI_Request* requests, int* outcount, int* indices,
                 MPI_Status* statuses) {
  int n = 0;
  for (int i = 0; i < count; ++i) {
    if (requests[i] != kCompletedRequest) continue;
    requests[i] = MPI_REQUEST_NULL;
    indices[n] = i;
    if (statuses != MPI_STATUSES_IGNORE) SetEmptyStatus(&statuses[n]);
    ++n;
  }
  *outcount = n;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (request == nullptr || *request != kCompletedRequest) {
    return PMPI_Wait(request, status);
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
  return PMPI_Waitall(count, requests, statuses);
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
    return PMPI_Waitany(count, requests, index, status);
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

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]) {
  if (!AnyCompleted(incount, requests)) {
    return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  }
  return AllCompleted(incount, requests, outcount, indices, statuses);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]) {
  if (!AnyCompleted(incount, requests)) {
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  }
  return AllCompleted(incount, requests, outcount, indices, statuses);
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

int MPI_Cancel(MPI_Request* request) {
  if (request == nullptr || *request != kCompletedRequest) {
    return PMPI_Cancel(request);
  }
  return MPI_SUCCESS;  // already complete: nothing to cancel
}

}  // extern "C"
