#include "shim/cross_memory.h"

#include <limits.h>
#include <sys/uio.h>

#include <algorithm>
#include <vector>

#include "shim/flatten.h"

namespace rmashim {
namespace {

// The remote side as byte ranges in type-map order; false if its layout is
// not a single predefined type without gaps inside elements.
bool RemoteRanges(std::byte* remote, const TypedBuffer& side,
                  std::vector<iovec>* out) {
  if (side.layout.dense) {
    out->push_back({remote + side.layout.lo, static_cast<size_t>(side.layout.bytes)});
    return true;
  }
  FlatType flat;
  if (Flatten(side.type, side.count, &flat) != MPI_SUCCESS) return false;
  if (flat.elements == 0) return true;  // nothing to move
  int element_size = 0;
  PMPI_Type_size(flat.element, &element_size);
  if (element_size != flat.element_extent) return false;  // pair padding
  for (const ElementRun& run : flat.runs) {
    out->push_back({remote + run.offset,
                    static_cast<size_t>(run.count * element_size)});
  }
  return true;
}

// Moves `bytes` between one local buffer and the remote ranges, IOV_MAX
// ranges per system call.
bool Move(bool to_remote, pid_t pid, std::byte* local, size_t bytes,
          std::vector<iovec>& ranges) {
  size_t done = 0;
  for (size_t first = 0; first < ranges.size(); first += IOV_MAX) {
    const size_t n = std::min<size_t>(IOV_MAX, ranges.size() - first);
    size_t chunk = 0;
    for (size_t i = first; i < first + n; ++i) chunk += ranges[i].iov_len;
    iovec here{local + done, chunk};
    const ssize_t moved =
        to_remote ? process_vm_writev(pid, &here, 1, &ranges[first], n, 0)
                  : process_vm_readv(pid, &here, 1, &ranges[first], n, 0);
    if (moved != static_cast<ssize_t>(chunk)) return false;
    done += chunk;
  }
  return done == bytes;
}

}  // namespace

bool CrossMemoryTransfer(bool to_remote, pid_t pid, std::byte* remote,
                         const TypedBuffer& remote_side,
                         const TypedBuffer& local, int* rc) {
  std::vector<iovec> ranges;
  if (!RemoteRanges(remote, remote_side, &ranges)) return false;
  const MPI_Aint bytes = local.layout.bytes;
  *rc = MPI_SUCCESS;
  if (bytes == 0) return true;
  if (local.layout.dense) {
    if (!Move(to_remote, pid, static_cast<std::byte*>(local.addr) + local.layout.lo,
              bytes, ranges)) {
      *rc = MPI_ERR_OTHER;
    }
    return true;
  }
  // A derived local type is packed into (or unpacked from) a staging buffer.
  std::vector<std::byte> staging(bytes);
  if (to_remote) {
    *rc = PackBytes(local.addr, local.count, local.type, staging.data(), bytes);
    if (*rc == MPI_SUCCESS && !Move(true, pid, staging.data(), bytes, ranges)) {
      *rc = MPI_ERR_OTHER;
    }
  } else if (!Move(false, pid, staging.data(), bytes, ranges)) {
    *rc = MPI_ERR_OTHER;
  } else {
    *rc = UnpackBytes(staging.data(), bytes, local.addr, local.count,
                      local.type);
  }
  return true;
}

}  // namespace rmashim
