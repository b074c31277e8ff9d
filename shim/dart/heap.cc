#include "shim/dart/heap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <new>

namespace rmashim::dart {
namespace {

constexpr size_t kPage = 4096;

template <typename T>
constexpr size_t PageRound() {
  return (sizeof(T) + kPage - 1) / kPage * kPage;
}

// A new anonymous shared-memory file of `bytes`; -1 on failure.
int NewMemoryFile(const char* name, size_t bytes) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::byte* MapFd(int fd, size_t bytes, std::byte* fixed) {
  void* p = mmap(fixed, bytes, PROT_READ | PROT_WRITE,
                 MAP_SHARED | (fixed ? MAP_FIXED : 0), fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

}  // namespace

std::byte* Heap::MapPeerFd(int unit, int fd, size_t bytes) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/fd/%d",
                static_cast<int>(pids_[unit]), fd);
  const int local = open(path, O_RDWR | O_CLOEXEC);
  if (local < 0) return nullptr;
  std::byte* p = MapFd(local, bytes, nullptr);
  close(local);
  return p;
}

dart_ret_t Heap::Init(MPI_Comm world, const std::vector<uint8_t>& node_local,
                      bool spans_nodes) {
  PMPI_Comm_rank(world, &me_);
  const int size = static_cast<int>(node_local.size());
  chunk_fds_.fill(-1);
  int ok = 1;
  void* reserved = mmap(nullptr, kReserve, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) {
    ok = 0;
  } else {
    base_ = static_cast<std::byte*>(reserved);
    header_fd_ = NewMemoryFile("dart-heap-header", PageRound<Header>());
    std::byte* h = header_fd_ < 0
                       ? nullptr
                       : MapFd(header_fd_, PageRound<Header>(), nullptr);
    if (h == nullptr) {
      ok = 0;
    } else {
      header_ = new (h) Header;
      for (auto& fd : header_->chunk_fd) fd.store(0, std::memory_order_relaxed);
    }
  }
  // Who I am to the others: process id and header descriptor.
  const int mine[2] = {static_cast<int>(getpid()), header_fd_};
  std::vector<int> all(size_t{2} * size);
  PMPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, world);
  pids_.resize(size);
  header_fds_.resize(size);
  for (size_t u = 0; u < static_cast<size_t>(size); ++u) {
    pids_[u] = all[2 * u];
    header_fds_[u] = all[2 * u + 1];
  }
  peers_.resize(size);
  pending_.assign(size, 0);
  remote_base_.assign(size, 0);
  // Node-local peers are mapped if every unit can open its peers' memory
  // files (ptrace policy may refuse); otherwise they go through MPI too.
  int can_map = ok;
  for (int u = 0; u < size && can_map; ++u) {
    if (u != me_ && node_local[u] && MapHeader(u) == nullptr) can_map = 0;
  }
  int all_map = 0;
  PMPI_Allreduce(&can_map, &all_map, 1, MPI_INT, MPI_MIN, world);
  if (!all_map && me_ == 0) {
    std::fprintf(stderr,
                 "dart: cannot open node-local peers' memory through "
                 "/proc/<pid>/fd; dart_memalloc memory of node-local units "
                 "goes through MPI\n");
  }
  mapped_.assign(size, 0);
  for (int u = 0; u < size; ++u) {
    mapped_[u] = u == me_ || (all_map && node_local[u]);
  }
  if (spans_nodes || !all_map) {
    if (PMPI_Win_create_dynamic(MPI_INFO_NULL, world, &win_) != MPI_SUCCESS) {
      ok = 0;
      win_ = MPI_WIN_NULL;
    } else {
      PMPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
      PMPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
    }
  }
  MPI_Aint base = 0;
  if (base_ != nullptr) PMPI_Get_address(base_, &base);
  PMPI_Allgather(&base, 1, MPI_AINT, remote_base_.data(), 1, MPI_AINT, world);
  int all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, world);
  return all_ok ? DART_OK : DART_ERR_NOMEM;
}

void Heap::Finalize() {
  if (win_ != MPI_WIN_NULL) {
    PMPI_Win_unlock_all(win_);
    for (int k = 0; k < kChunks; ++k) {
      if (chunk_fds_[k] >= 0) PMPI_Win_detach(win_, base_ + Start(k));
    }
    PMPI_Win_free(&win_);
  }
  for (size_t u = 0; u < peers_.size(); ++u) {
    if (static_cast<int>(u) == me_) continue;
    for (int k = 0; k < kChunks; ++k) {
      if (peers_[u].chunks[k]) munmap(peers_[u].chunks[k], Size(k));
    }
    if (peers_[u].header) munmap(peers_[u].header, PageRound<Header>());
  }
  peers_.clear();
  for (int& fd : chunk_fds_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  if (header_ != nullptr) munmap(header_, PageRound<Header>());
  header_ = nullptr;
  if (header_fd_ >= 0) close(header_fd_);
  header_fd_ = -1;
  if (base_ != nullptr) munmap(base_, kReserve);  // also the chunks in it
  base_ = nullptr;
  free_.clear();
  used_.clear();
}

dart_ret_t Heap::CreateChunk(int k) {
  std::byte* at = base_ + Start(k);
  const int fd = NewMemoryFile("dart-heap-chunk", Size(k));
  if (fd < 0) return DART_ERR_NOMEM;
  if (MapFd(fd, Size(k), at) != at) {
    close(fd);
    return DART_ERR_NOMEM;
  }
  if (win_ != MPI_WIN_NULL &&
      PMPI_Win_attach(win_, at, static_cast<MPI_Aint>(Size(k))) !=
          MPI_SUCCESS) {
    // Back to a reservation; on failure the pages stay mapped, unused.
    (void)mmap(at, Size(k), PROT_NONE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    close(fd);
    return DART_ERR_OTHER;
  }
  chunk_fds_[k] = fd;
  // Published before any gptr into the chunk can reach a peer.
  header_->chunk_fd[k].store(fd, std::memory_order_release);
  free_[Start(k)] = Size(k);
  return DART_OK;
}

dart_ret_t Heap::Allocate(uint64_t bytes, uint64_t* offset) {
  if (bytes > Size(kChunks - 1)) return DART_ERR_NOMEM;
  const uint64_t n =
      (std::max<uint64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  while (true) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < n) continue;
      const uint64_t at = it->first, left = it->second - n;
      free_.erase(it);
      if (left > 0) free_[at + n] = left;
      used_[at] = n;
      *offset = at;
      return DART_OK;
    }
    // No room: the smallest chunk not yet created that fits.
    int k = 0;
    while (k < kChunks && (chunk_fds_[k] >= 0 || Size(k) < n)) ++k;
    if (k == kChunks) return DART_ERR_NOMEM;
    if (dart_ret_t rc = CreateChunk(k)) return rc;
  }
}

dart_ret_t Heap::Free(uint64_t offset) {
  auto used = used_.find(offset);
  if (used == used_.end()) return DART_ERR_INVAL;
  uint64_t at = offset, n = used->second;
  used_.erase(used);
  const int k = ChunkOf(at);
  // Coalesce with free neighbours in the same chunk.
  auto next = free_.lower_bound(at);
  if (next != free_.end() && next->first == at + n &&
      ChunkOf(next->first) == k) {
    n += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at && ChunkOf(prev->first) == k) {
      at = prev->first;
      n += prev->second;
      free_.erase(prev);
    }
  }
  free_[at] = n;
  return DART_OK;
}

Heap::Header* Heap::MapHeader(int unit) {
  Header*& header = peers_[unit].header;
  if (header == nullptr && header_fds_[unit] >= 0) {
    header = reinterpret_cast<Header*>(
        MapPeerFd(unit, header_fds_[unit], PageRound<Header>()));
  }
  return header;
}

std::byte* Heap::MapChunk(int unit, int k) {
  std::byte*& chunk = peers_[unit].chunks[k];
  if (chunk != nullptr) return chunk;
  Header* header = MapHeader(unit);
  if (header == nullptr) return nullptr;
  const int fd = header->chunk_fd[k].load(std::memory_order_acquire);
  if (fd > 0) chunk = MapPeerFd(unit, fd, Size(k));
  return chunk;
}

dart_ret_t Heap::Locate(int unit, uint64_t offset, uint64_t bytes,
                        std::byte** addr) {
  uint64_t last = 0;
  if (offset >= kReserve || __builtin_add_overflow(offset, bytes, &last)) {
    return DART_ERR_INVAL;
  }
  const int k = ChunkOf(offset);
  if (bytes > 0 && ChunkOf(last - 1) != k) return DART_ERR_INVAL;
  if (unit == me_) {
    if (chunk_fds_[k] < 0) return DART_ERR_INVAL;
    *addr = base_ + offset;
    return DART_OK;
  }
  if (!mapped_[unit]) {
    *addr = nullptr;
    return DART_OK;
  }
  std::byte* chunk = MapChunk(unit, k);
  if (chunk == nullptr) return DART_ERR_INVAL;
  *addr = chunk + (offset - Start(k));
  return DART_OK;
}

dart_ret_t Heap::AtomicTarget(int unit, uint64_t offset, uint64_t bytes,
                              Target* target, MPI_Aint* chunk_offset) {
  std::byte* addr = nullptr;
  if (dart_ret_t rc = Locate(unit, offset, bytes, &addr)) return rc;
  if (addr == nullptr) return DART_ERR_INVAL;
  const int k = ChunkOf(offset);
  Header* header = unit == me_ ? header_ : MapHeader(unit);
  if (header == nullptr) return DART_ERR_OTHER;
  target->base = addr - (offset - Start(k));
  target->header = &header->segment;
  target->pid = 0;
  target->size = static_cast<MPI_Aint>(Size(k));
  target->disp_unit = 1;
  *chunk_offset = static_cast<MPI_Aint>(offset - Start(k));
  return DART_OK;
}

}  // namespace rmashim::dart
