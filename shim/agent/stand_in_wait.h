// MPI's blocking waits, as their tests in a loop where this process's agent
// runs, so that the waiting thread serves remote origins' requests
// meanwhile (agent.h: AgentStandIn), or, on a host with more ranks than
// cores, a loop that gives the core away between tests; MPI's blocking
// call as it is elsewhere. Used by the wrappers of the blocking calls
// (shim/intercept/wrap_blocking.cc, wrap_request.cc) and by libdart's
// barrier (shim/dart/collectives.cc).
#ifndef RMASHIM_SHIM_AGENT_STAND_IN_WAIT_H_
#define RMASHIM_SHIM_AGENT_STAND_IN_WAIT_H_

#include <mpi.h>

#include "shim/agent/agent.h"

namespace rmashim {

// `blocking` (MPI's blocking call) where no stand-in is wanted, else
// `test` (its test: an MPI error code, and through its int* whether it is
// done) in AgentStandIn's loop.
template <typename Blocking, typename Test>
int BlockingOrTested(Blocking blocking, Test test) {
  AgentStandIn stand_in;
  if (!stand_in.active()) return blocking();
  return stand_in.WaitServing([&](bool* done) {
    int flag = 0;
    const int rc = test(&flag);
    *done = flag != 0;
    return rc;
  });
}

inline int WaitStandingIn(MPI_Request* request, MPI_Status* status) {
  return BlockingOrTested(
      [&] { return PMPI_Wait(request, status); },
      [&](int* flag) { return PMPI_Test(request, flag, status); });
}

inline int WaitAllStandingIn(int count, MPI_Request requests[],
                             MPI_Status statuses[]) {
  return BlockingOrTested(
      [&] { return PMPI_Waitall(count, requests, statuses); },
      [&](int* flag) { return PMPI_Testall(count, requests, flag, statuses); });
}

inline int WaitAnyStandingIn(int count, MPI_Request requests[], int* index,
                             MPI_Status* status) {
  return BlockingOrTested(
      [&] { return PMPI_Waitany(count, requests, index, status); },
      [&](int* flag) {
        return PMPI_Testany(count, requests, index, flag, status);
      });
}

inline int BarrierStandingIn(MPI_Comm comm) {
  if (!BlockingCallsTestInstead()) return PMPI_Barrier(comm);
  MPI_Request request;
  const int rc = PMPI_Ibarrier(comm, &request);
  if (rc != MPI_SUCCESS) return rc;
  return WaitStandingIn(&request, MPI_STATUS_IGNORE);
}

// Done once some request completed, or none was active (MPI_UNDEFINED).
inline int WaitSomeStandingIn(int incount, MPI_Request requests[],
                              int* outcount, int indices[],
                              MPI_Status statuses[]) {
  return BlockingOrTested(
      [&] {
        return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
      },
      [&](int* flag) {
        const int rc =
            PMPI_Testsome(incount, requests, outcount, indices, statuses);
        *flag = *outcount != 0;
        return rc;
      });
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_STAND_IN_WAIT_H_
