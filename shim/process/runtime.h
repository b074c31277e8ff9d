// Process-wide shim state: on/off switch, this rank's place in the machine,
// and the table of managed windows.
#ifndef RMASHIM_SHIM_PROCESS_RUNTIME_H_
#define RMASHIM_SHIM_PROCESS_RUNTIME_H_

#include <mpi.h>

#include <mutex>
#include <vector>

#include "shim/process/window_table.h"

namespace rmashim {

// Where this rank runs, from hwloc (-1 when unknown).
struct Locality {
  int node_id = 0;    // world rank of the first rank on this node
  int node_rank = 0;  // rank among MPI_COMM_WORLD's ranks on this node
  int node_size = 1;
  int numa_domain = -1;
  int core = -1;
};

class Runtime {
 public:
  // Called right after PMPI_Init(_thread) with the thread level MPI
  // provides (lifecycle.h's StartShim, which then starts what depends on
  // it). Reads RMASHIM_DISABLE.
  void Start(int thread_level);
  void Stop();  // right before PMPI_Finalize (StopShim)

  bool enabled() const { return enabled_; }
  // MPI_THREAD_MULTIPLE: window bookkeeping is then serialized per window.
  bool thread_multiple() const { return thread_multiple_; }
  const Locality& locality() const { return locality_; }
  // Whether MPI_COMM_WORLD's ranks are on more than one node (the same on
  // every rank).
  bool spans_nodes() const { return spans_nodes_; }
  WindowTable& windows() { return windows_; }

 private:
  bool enabled_ = false;
  bool thread_multiple_ = false;
  bool spans_nodes_ = false;
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
// The same, or nullptr when the window is not in its home slot (fast paths
// whose miss takes a full path that calls FindManaged).
inline ManagedWindow* FindManagedHome(MPI_Win win) {
  return g_runtime.windows().FindHome(win);
}

// Learns the node of every MPI_COMM_WORLD rank (collective over
// MPI_COMM_WORLD; later calls do nothing). MPI_Init's wrapper and dart_init
// call it. With it, window creation needs no node communicator, so a
// managed window costs MPICH one context id, as a native one does.
void StartNodeTable();

// For each rank of `comm`, its index among the ranks of `comm` on this
// rank's node (in rank order), or MPI_UNDEFINED when it is on another node.
// Local: no communication.
std::vector<int> NodeIndexOf(MPI_Comm comm);

// Holds a window's state mutex for a scope, only under MPI_THREAD_MULTIPLE:
// single-threaded programs pay one predictable branch.
class StateGuard {
 public:
  explicit StateGuard(std::mutex& m)
      : mutex_(g_runtime.thread_multiple() ? &m : nullptr) {
    if (mutex_ != nullptr) mutex_->lock();
  }
  ~StateGuard() {
    if (mutex_ != nullptr) mutex_->unlock();
  }
  StateGuard(const StateGuard&) = delete;
  StateGuard& operator=(const StateGuard&) = delete;

 private:
  std::mutex* mutex_;
};

// Returns `code`, after handing a failure to the window's error handler as
// MPI would (MPI_ERRORS_RETURN returns it, the default aborts).
int RaiseOnWindow(MPI_Win win, int code);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_PROCESS_RUNTIME_H_
