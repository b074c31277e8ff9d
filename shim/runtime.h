// Process-wide shim state: on/off switch, this rank's place in the machine,
// and the table of managed windows.
#ifndef RMASHIM_SHIM_RUNTIME_H_
#define RMASHIM_SHIM_RUNTIME_H_

#include <mpi.h>

#include "shim/window_table.h"

namespace rmashim {

// Where this rank runs, from hwloc (-1 when unknown).
struct Locality {
  int node_id = 0;      // world rank of the first rank on this node
  int node_rank = 0;    // rank among MPI_COMM_WORLD's ranks on this node
  int node_size = 1;
  int numa_domain = -1;
  int core = -1;
};

class Runtime {
 public:
  // Called right after PMPI_Init(_thread). Reads RMASHIM_DISABLE.
  void Start();
  void Stop();  // right before PMPI_Finalize

  bool enabled() const { return enabled_; }
  const Locality& locality() const { return locality_; }
  WindowTable& windows() { return windows_; }

 private:
  bool enabled_ = false;
  Locality locality_;
  WindowTable windows_;
};

extern Runtime g_runtime;
inline Runtime& runtime() { return g_runtime; }

// The managed window behind an application handle; nullptr means "not ours,
// pass through to MPI".
inline ManagedWindow* FindManaged(MPI_Win win) {
  return g_runtime.windows().Find(win);
}

// Returns `code`, after handing a failure to the window's error handler as
// MPI would (MPI_ERRORS_RETURN returns it, the default aborts).
int RaiseOnWindow(MPI_Win win, int code);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_RUNTIME_H_
