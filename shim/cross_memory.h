// Put/get to node-local targets of MPI_Win_create windows: their memory lives
// in another process, reached with Linux cross-memory attach
// (process_vm_readv/writev), a single kernel-assisted copy.
#ifndef RMASHIM_SHIM_CROSS_MEMORY_H_
#define RMASHIM_SHIM_CROSS_MEMORY_H_

#include <mpi.h>
#include <sys/types.h>

#include <cstddef>

#include "shim/datatype.h"

namespace rmashim {

struct TypedBuffer {
  void* addr;
  int count;
  MPI_Datatype type;
  const Layout& layout;
};

// Copies `local` to (`to_remote`) or from the memory at `remote` in process
// `pid`, laid out as `remote_side`. Returns false when the remote layout
// cannot be expressed as plain byte ranges (the caller passes the call to
// MPI); otherwise sets *rc.
bool CrossMemoryTransfer(bool to_remote, pid_t pid, std::byte* remote,
                         const TypedBuffer& remote_side,
                         const TypedBuffer& local, int* rc);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_CROSS_MEMORY_H_
