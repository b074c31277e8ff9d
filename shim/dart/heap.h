// dart_memalloc memory: each unit's part of the global address space that
// needs no collective call. It is one reserved range of virtual addresses
// per unit, backed on demand by shared-memory chunks of doubling size
// (1 MiB, 2 MiB, 4 MiB, ...), so it grows without a fixed pool. A gptr's
// offset is relative to the range, so every unit can compute where a byte
// lives:
//  - node-local peers map the owner's chunk the first time they touch it.
//    Chunks are anonymous memory files (memfd): nothing is named in
//    /dev/shm, so nothing is left behind however the job ends; a peer opens
//    the owner's descriptor through /proc/<pid>/fd/<fd>, whose number the
//    owner publishes in a small shared header (mapped the same way);
//  - remote units (and node-local ones when /proc access is refused) reach
//    it through an MPI dynamic window: the owner attaches every chunk, the
//    target displacement is the owner's base address (exchanged once at
//    dart_init) plus the offset.
#ifndef RMASHIM_SHIM_DART_HEAP_H_
#define RMASHIM_SHIM_DART_HEAP_H_

#include <dart/dart_types.h>
#include <mpi.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "shim/windows/window.h"

namespace rmashim::dart {

class Heap {
 public:
  static constexpr int kChunks = 18;             // 256 GiB per unit
  static constexpr uint64_t kChunk0 = 1u << 20;  // first chunk: 1 MiB
  static constexpr uint64_t kAlign = 64;         // allocation granularity

  // Chunk k covers offsets [Start(k), Start(k + 1)).
  static constexpr uint64_t Start(int k) {
    return kChunk0 * ((uint64_t{1} << k) - 1);
  }
  static constexpr uint64_t Size(int k) { return kChunk0 << k; }
  static int ChunkOf(uint64_t offset) {
    return 63 - __builtin_clzll(offset / kChunk0 + 1);
  }
  static constexpr uint64_t kReserve = kChunk0 * ((uint64_t{1} << kChunks) - 1);

  Heap() = default;
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  // Collective over `world` (all units). `node_local[u]`: whether unit u
  // shares this unit's node; `spans_nodes`: whether any unit does not.
  dart_ret_t Init(MPI_Comm world, const std::vector<uint8_t>& node_local,
                  bool spans_nodes);
  // Collective (dart_exit): unmaps and frees everything.
  void Finalize();

  dart_ret_t Allocate(uint64_t bytes, uint64_t* offset);
  dart_ret_t Free(uint64_t offset);

  // Where unit `unit`'s bytes [offset, offset + bytes) are: a mapped
  // address (this unit or a node-local peer), or null when MPI must reach
  // them. DART_ERR_INVAL when the range is outside one chunk, or the chunk
  // does not exist (mapped units only; remote chunks cannot be checked
  // without asking the owner).
  dart_ret_t Locate(int unit, uint64_t offset, uint64_t bytes,
                    std::byte** addr);
  // The chunk holding `offset` of mapped `unit` as a core Target (base =
  // chunk start, header = the unit's stripe header), for atomics.
  dart_ret_t AtomicTarget(int unit, uint64_t offset, uint64_t bytes,
                          Target* target, MPI_Aint* chunk_offset);

  std::byte* local_base() const { return base_; }
  bool Contains(const void* addr) const {
    auto* p = static_cast<const std::byte*>(addr);
    return p >= base_ && p < base_ + kReserve;
  }
  // MPI access (MPI_WIN_NULL when every unit maps every other's heap).
  MPI_Win win() const { return win_; }
  MPI_Aint RemoteDisp(int unit, uint64_t offset) const {
    return remote_base_[unit] + static_cast<MPI_Aint>(offset);
  }
  // Atomics use CPU atomics only when no unit reaches the heap through MPI
  // (MPI's accumulates could not be atomic with them).
  bool direct_atomics() const { return win_ == MPI_WIN_NULL; }
  std::vector<uint8_t>& pending() { return pending_; }

 private:
  // The shared start of every unit's heap: the accumulate stripes, then
  // the descriptor number of each chunk in the owner (0: not created).
  struct Header {
    SegmentHeader segment;
    std::atomic<int32_t> chunk_fd[kChunks];
  };
  struct Peer {
    std::array<std::byte*, kChunks> chunks{};
    Header* header = nullptr;
  };
  dart_ret_t CreateChunk(int k);
  std::byte* MapChunk(int unit, int k);
  Header* MapHeader(int unit);
  std::byte* MapPeerFd(int unit, int fd, size_t bytes);

  int me_ = 0;
  std::byte* base_ = nullptr;
  int header_fd_ = -1;
  Header* header_ = nullptr;
  std::array<int, kChunks> chunk_fds_{};         // -1: not created
  std::map<uint64_t, uint64_t> free_;            // offset -> bytes
  std::unordered_map<uint64_t, uint64_t> used_;  // offset -> bytes
  std::vector<uint8_t> mapped_;  // by unit: reached through shared memory
  std::vector<pid_t> pids_;
  std::vector<int> header_fds_;
  std::vector<Peer> peers_;
  MPI_Win win_ = MPI_WIN_NULL;
  std::vector<MPI_Aint> remote_base_;
  std::vector<uint8_t> pending_;  // MPI operations to flush, by unit
};

}  // namespace rmashim::dart

#endif  // RMASHIM_SHIM_DART_HEAP_H_
