// MPI's blocking calls in which a target rank commonly waits while remote
// origins access its windows (a barrier at the end of its work, a receive,
// a probe): where this process's agent runs, each becomes its nonblocking
// form tested in a loop that serves the agent's requests meanwhile
// (shim/agent/agent.h: AgentStandIn; stand_in_wait.h), and where the host
// runs more ranks than cores, a loop that gives the core away; MPI's call
// as it is elsewhere. The blocking collectives that move data
// (MPI_Allreduce, MPI_Bcast, ...) stay MPI's: their nonblocking forms run
// other algorithms in MPICH, and the agent's thread serves while a rank
// waits in them.
#include <mpi.h>

#include "shim/agent/agent.h"
#include "shim/agent/stand_in_wait.h"

extern "C" {

int MPI_Barrier(MPI_Comm comm) { return rmashim::BarrierStandingIn(comm); }

int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Status* status) {
  if (!rmashim::BlockingCallsTestInstead()) {
    return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
  }
  MPI_Request request;
  const int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, &request);
  if (rc != MPI_SUCCESS) return rc;
  return rmashim::WaitStandingIn(&request, status);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  rmashim::AgentStandIn stand_in;
  if (!stand_in.active()) return PMPI_Probe(source, tag, comm, status);
  return stand_in.WaitServing([&](bool* done) {
    int flag = 0;
    const int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
    *done = flag != 0;
    return rc;
  });
}

}  // extern "C"
