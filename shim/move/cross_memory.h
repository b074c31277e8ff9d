// Put/get to node-local targets of MPI_Win_create windows: their memory lives
// in another process, reached with Linux cross-memory attach
// (process_vm_readv/writev), a single kernel-assisted copy.
#ifndef RMASHIM_SHIM_MOVE_CROSS_MEMORY_H_
#define RMASHIM_SHIM_MOVE_CROSS_MEMORY_H_

#include <mpi.h>
#include <sys/types.h>

#include <sys/uio.h>

#include <cstddef>
#include <span>
#include <vector>

#include "shim/types/datatype.h"
#include "shim/types/element_ops.h"
#include "shim/types/flatten.h"
#include "shim/windows/verdict.h"
#include "shim/windows/window.h"

namespace rmashim {

struct TypedBuffer {
  void* addr;
  int count;
  MPI_Datatype type;
  const Layout& layout;
};

// Copies `local` to (`to_remote`) or from the memory at `remote` in process
// `pid`, laid out as `remote_side`: served, an error (MPI_ERR_OTHER if the
// kernel refuses), or MPI's when the remote layout cannot be expressed as
// plain byte ranges (Fallback::kDatatype).
Verdict CrossMemoryTransfer(bool to_remote, pid_t pid, std::byte* remote,
                            const TypedBuffer& remote_side,
                            const TypedBuffer& local);

// The accumulate family on MPI_Win_create memory of another node-local
// process: its elements are read, updated with the plain kernel and written
// back while this process holds the stripes of every page they lie on
// (stripes.h), which every origin of a single-node window honours; with
// `exclusive_lock` (the origin holds an exclusive lock on the target) no
// stripe is taken, as in ApplyRun. `runs` are element runs at byte `base` of
// the target window; `origin` and `result` are packed (result may be null;
// with `writes` false, MPI_NO_OP, nothing is written back). Returns an MPI
// error code (MPI_ERR_OTHER if the kernel refuses).
int CrossMemoryApply(const ElementOp& e, bool writes, bool exclusive_lock,
                     const Target& t, MPI_Aint base,
                     std::span<const ElementRun> runs, const std::byte* origin,
                     std::byte* result);
int CrossMemoryCompareSwap(const CompareSwapOp& cas, bool exclusive_lock,
                           const Target& t, MPI_Aint offset,
                           const std::byte* origin, const std::byte* compare,
                           std::byte* result);

// Moves `bytes` between one contiguous local buffer and the byte ranges
// `remote` of process `pid`, in order. False if the kernel refused.
bool CrossMemoryMove(bool to_remote, pid_t pid, std::byte* local, size_t bytes,
                     std::vector<iovec>& remote);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_MOVE_CROSS_MEMORY_H_
