// What the passive-target wrappers share: wrap_sync.cc's locks and
// wrap_flush.cc's flushes and MPI_Win_sync.
#ifndef RMASHIM_SHIM_INTERCEPT_PASSIVE_TARGET_H_
#define RMASHIM_SHIM_INTERCEPT_PASSIVE_TARGET_H_

#include <mpi.h>

#include <atomic>

#include "shim/base/direct_stores.h"
#include "shim/process/runtime.h"
#include "shim/windows/window.h"

namespace rmashim {

// A full fence, whatever this thread stored (unlock without a lock word to
// release, MPI_Win_sync: the application's own stores count there too).
inline void FenceAll() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  t_unfenced_stores = false;
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_INTERCEPT_PASSIVE_TARGET_H_
