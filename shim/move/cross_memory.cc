// Moving RMA data to and from MPI_Win_create memory of node-local peers with
// cross-memory attach (process_vm_readv/writev), in calls the kernel moves
// whole, under the accumulate stripes where updates need them.
#include "shim/move/cross_memory.h"

#include <limits.h>
#include <sys/uio.h>

#include <algorithm>
#include <vector>

#include "shim/atomics/stripes.h"
#include "shim/base/direct_stores.h"
#include "shim/types/flatten.h"

namespace rmashim {
namespace {

// The remote side as byte ranges in type-map order; false if its layout is
// not a single predefined type without gaps inside elements.
bool RemoteRanges(std::byte* remote, const TypedBuffer& side,
                  std::vector<iovec>* out) {
  if (side.layout.dense) {
    out->push_back(
        {remote + side.layout.lo, static_cast<size_t>(side.layout.bytes)});
    return true;
  }
  FlatType flat;
  if (!Flatten(side.type, side.count, &flat).flattened()) return false;
  if (flat.elements == 0) return true;  // nothing to move
  int element_size = 0;
  PMPI_Type_size(flat.element, &element_size);
  if (element_size != flat.element_extent) return false;  // pair padding
  for (const ElementRun& run : flat.runs) {
    out->push_back(
        {remote + run.offset, static_cast<size_t>(run.count * element_size)});
  }
  return true;
}

}  // namespace

// Bytes per system call: the kernel moves at most MAX_RW_COUNT (just under
// 2 GiB) per process_vm_readv/writev and reports a partial transfer beyond.
constexpr size_t kMaxCallBytes = size_t{1} << 30;

// At most IOV_MAX ranges and kMaxCallBytes per system call; ranges larger
// than that are split.
bool CrossMemoryMove(bool to_remote, pid_t pid, std::byte* local, size_t bytes,
                     std::vector<iovec>& ranges) {
  size_t done = 0;
  size_t index = 0, used = 0;  // next range, and how much of it has moved
  std::vector<iovec> batch;
  batch.reserve(std::min<size_t>(IOV_MAX, ranges.size()));
  while (index < ranges.size()) {
    batch.clear();
    size_t chunk = 0;
    while (index < ranges.size() && batch.size() < IOV_MAX &&
           chunk < kMaxCallBytes) {
      const size_t left = ranges[index].iov_len - used;
      const size_t take = std::min(left, kMaxCallBytes - chunk);
      batch.push_back(
          {static_cast<std::byte*>(ranges[index].iov_base) + used, take});
      chunk += take;
      used += take;
      if (used == ranges[index].iov_len) {
        ++index;
        used = 0;
      }
    }
    iovec here{local + done, chunk};
    const ssize_t moved =
        to_remote
            ? process_vm_writev(pid, &here, 1, batch.data(), batch.size(), 0)
            : process_vm_readv(pid, &here, 1, batch.data(), batch.size(), 0);
    if (to_remote) NoteDirectStores();
    if (moved != static_cast<ssize_t>(chunk)) return false;
    done += chunk;
  }
  return done == bytes;
}

Verdict CrossMemoryTransfer(bool to_remote, pid_t pid, std::byte* remote,
                            const TypedBuffer& remote_side,
                            const TypedBuffer& local) {
  std::vector<iovec> ranges;
  if (!RemoteRanges(remote, remote_side, &ranges)) {
    return Verdict::PassThrough(Fallback::kDatatype);
  }
  const MPI_Aint bytes = local.layout.bytes;
  if (bytes == 0) return Verdict::Served();
  if (local.layout.dense) {
    return Verdict::Error(
        CrossMemoryMove(to_remote, pid,
                        static_cast<std::byte*>(local.addr) + local.layout.lo,
                        bytes, ranges)
            ? MPI_SUCCESS
            : MPI_ERR_OTHER);
  }
  // A derived local type is packed into (or unpacked from) a staging buffer.
  std::vector<std::byte> staging(bytes);
  if (to_remote) {
    if (const int rc = PackBytes(local.addr, local.count, local.type,
                                 staging.data(), bytes)) {
      return Verdict::Error(rc);
    }
    return Verdict::Error(
        CrossMemoryMove(true, pid, staging.data(), bytes, ranges)
            ? MPI_SUCCESS
            : MPI_ERR_OTHER);
  }
  if (!CrossMemoryMove(false, pid, staging.data(), bytes, ranges)) {
    return Verdict::Error(MPI_ERR_OTHER);
  }
  return Verdict::Error(
      UnpackBytes(staging.data(), bytes, local.addr, local.count, local.type));
}

int CrossMemoryApply(const ElementOp& e, bool writes, bool exclusive_lock,
                     const Target& t, MPI_Aint base,
                     std::span<const ElementRun> runs, const std::byte* origin,
                     std::byte* result) {
  std::vector<iovec> ranges;
  ranges.reserve(runs.size());
  size_t bytes = 0;
  StripeSet stripes(*t.header);
  for (const ElementRun& run : runs) {
    const MPI_Aint offset = base + run.offset;
    const MPI_Aint len = run.count * e.extent;
    ranges.push_back({t.base + offset, static_cast<size_t>(len)});
    bytes += static_cast<size_t>(len);
    if (!exclusive_lock) stripes.Cover(offset, len);
  }
  std::vector<std::byte> staging(bytes);
  stripes.Acquire();
  if (!CrossMemoryMove(false, t.pid, staging.data(), bytes, ranges)) {
    return MPI_ERR_OTHER;
  }
  size_t at = 0, done = 0;
  for (const ElementRun& run : runs) {
    // MPI_NO_OP reads no origin; the staged target stands in for it.
    const std::byte* src =
        origin ? origin + done * e.size : staging.data() + at;
    e.plain(staging.data() + at, src, result ? result + done * e.size : nullptr,
            static_cast<size_t>(run.count));
    at += static_cast<size_t>(run.count * e.extent);
    done += static_cast<size_t>(run.count);
  }
  if (writes && !CrossMemoryMove(true, t.pid, staging.data(), bytes, ranges)) {
    return MPI_ERR_OTHER;
  }
  return MPI_SUCCESS;
}

int CrossMemoryCompareSwap(const CompareSwapOp& cas, bool exclusive_lock,
                           const Target& t, MPI_Aint offset,
                           const std::byte* origin, const std::byte* compare,
                           std::byte* result) {
  std::vector<iovec> range{{t.base + offset, cas.size}};
  std::byte value[16];
  StripeSet stripes(*t.header);
  if (!exclusive_lock) stripes.Cover(offset, cas.size);
  stripes.Acquire();
  if (!CrossMemoryMove(false, t.pid, value, cas.size, range)) {
    return MPI_ERR_OTHER;
  }
  cas.plain(value, origin, compare, result);
  return CrossMemoryMove(true, t.pid, value, cas.size, range) ? MPI_SUCCESS
                                                              : MPI_ERR_OTHER;
}

}  // namespace rmashim
