// Starting and stopping the shim with MPI (lifecycle.h).
#include "shim/intercept/lifecycle.h"

#include <mpi.h>

#include "shim/agent/agent.h"
#include "shim/process/runtime.h"
#include "shim/sync/mpi_flush.h"
#include "shim/sync/mpi_pscw.h"
#include "shim/types/datatype.h"
#include "shim/windows/segment_cache.h"
#include "shim/windows/shared_user_memory.h"

namespace rmashim {

void StartShim(int thread_level) {
  Runtime& r = runtime();
  r.Start(thread_level);
  NoteThreadsAtInit();
  // Every rank decides alike (the node table is the same everywhere and
  // RMASHIM_DISABLE must be), so the collective creations match.
  if (!r.enabled() || !r.spans_nodes()) return;
  OpenEndpointFlush();
  OpenPostMatching();
  // The agent (agent.h) where every rank wants one: StartAgent is
  // collective, and the environment it was wanted by may differ by host.
  int wanted = AgentWanted();
  PMPI_Allreduce(MPI_IN_PLACE, &wanted, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (wanted) StartAgent();
}

void StopShim() {
  StopAgent();  // collective: before anything else MPI still needs
  runtime().Stop();
  CloseEndpointFlush();
  ClosePostMatching();
  StopDatatypeSupport();
  segment_cache().Flush();  // freed windows' segments
}

}  // namespace rmashim
