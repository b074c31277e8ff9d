#include "shim/dart/heap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <random>

namespace rmashim::dart {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kHeaderBytes =
    (sizeof(SegmentHeader) + kPage - 1) / kPage * kPage;

// Maps `bytes` of shared-memory object `name` (created when `create`),
// at `fixed` if given. nullptr on failure.
std::byte* MapObject(const std::string& name, size_t bytes, bool create,
                     std::byte* fixed) {
  const int fd =
      shm_open(name.c_str(), create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
  if (fd < 0) return nullptr;
  if (create && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    shm_unlink(name.c_str());
    return nullptr;
  }
  void* p = mmap(fixed, bytes, PROT_READ | PROT_WRITE,
                 MAP_SHARED | (fixed ? MAP_FIXED : 0), fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    if (create) shm_unlink(name.c_str());
    return nullptr;
  }
  return static_cast<std::byte*>(p);
}

}  // namespace

std::string Heap::Name(int unit, int chunk) const {
  char buf[96];
  if (chunk < 0) {
    std::snprintf(buf, sizeof(buf), "%s.%d.h", prefix_.c_str(), unit);
  } else {
    std::snprintf(buf, sizeof(buf), "%s.%d.%d", prefix_.c_str(), unit, chunk);
  }
  return buf;
}

dart_ret_t Heap::Init(MPI_Comm world, const std::vector<uint8_t>& node_local,
                      bool spans_nodes) {
  world_ = world;
  PMPI_Comm_rank(world, &me_);
  const int size = static_cast<int>(node_local.size());
  // One name prefix per job, chosen by unit 0.
  char prefix[64] = {};
  if (me_ == 0) {
    std::random_device rd;
    std::snprintf(prefix, sizeof(prefix), "/dart-%d-%08x%08x",
                  static_cast<int>(getpid()), rd(), rd());
  }
  PMPI_Bcast(prefix, sizeof(prefix), MPI_CHAR, 0, world);
  prefix_ = prefix;

  int ok = 1;
  void* reserved = mmap(nullptr, kReserve, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) {
    ok = 0;
  } else {
    base_ = static_cast<std::byte*>(reserved);
    std::byte* h = MapObject(Name(me_, -1), kHeaderBytes, true, nullptr);
    if (h == nullptr) {
      ok = 0;
    } else {
      header_ = new (h) SegmentHeader;
    }
  }
  node_local_ = node_local;
  peers_.resize(size);
  pending_.assign(size, 0);
  remote_base_.assign(size, 0);
  if (spans_nodes) {
    if (PMPI_Win_create_dynamic(MPI_INFO_NULL, world, &win_) != MPI_SUCCESS) {
      ok = 0;
      win_ = MPI_WIN_NULL;
    } else {
      PMPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
      PMPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
    }
  }
  MPI_Aint mine = 0;
  if (base_ != nullptr) PMPI_Get_address(base_, &mine);
  PMPI_Allgather(&mine, 1, MPI_AINT, remote_base_.data(), 1, MPI_AINT, world);
  int all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, world);
  return all_ok ? DART_OK : DART_ERR_NOMEM;
}

void Heap::Finalize() {
  if (win_ != MPI_WIN_NULL) {
    PMPI_Win_unlock_all(win_);
    for (int k = 0; k < kChunks; ++k) {
      if (created_[k]) PMPI_Win_detach(win_, base_ + Start(k));
    }
    PMPI_Win_free(&win_);
  }
  for (size_t u = 0; u < peers_.size(); ++u) {
    if (static_cast<int>(u) == me_) continue;
    for (int k = 0; k < kChunks; ++k) {
      if (peers_[u].chunks[k]) munmap(peers_[u].chunks[k], Size(k));
    }
    if (peers_[u].header) munmap(peers_[u].header, kHeaderBytes);
  }
  peers_.clear();
  for (int k = 0; k < kChunks; ++k) {
    if (created_[k]) shm_unlink(Name(me_, k).c_str());
    created_[k] = false;
  }
  if (header_ != nullptr) {
    munmap(header_, kHeaderBytes);
    shm_unlink(Name(me_, -1).c_str());
    header_ = nullptr;
  }
  if (base_ != nullptr) munmap(base_, kReserve);  // also the chunks in it
  base_ = nullptr;
  free_.clear();
  used_.clear();
}

dart_ret_t Heap::CreateChunk(int k) {
  std::byte* at = base_ + Start(k);
  if (MapObject(Name(me_, k), Size(k), true, at) != at) return DART_ERR_NOMEM;
  if (win_ != MPI_WIN_NULL &&
      PMPI_Win_attach(win_, at, static_cast<MPI_Aint>(Size(k))) !=
          MPI_SUCCESS) {
    munmap(at, Size(k));
    mmap(at, Size(k), PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    shm_unlink(Name(me_, k).c_str());
    return DART_ERR_OTHER;
  }
  created_[k] = true;
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
    while (k < kChunks && (created_[k] || Size(k) < n)) ++k;
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

std::byte* Heap::MapChunk(int unit, int k) {
  std::byte*& chunk = peers_[unit].chunks[k];
  if (chunk == nullptr)
    chunk = MapObject(Name(unit, k), Size(k), false, nullptr);
  return chunk;
}

SegmentHeader* Heap::MapHeader(int unit) {
  SegmentHeader*& header = peers_[unit].header;
  if (header == nullptr) {
    header = reinterpret_cast<SegmentHeader*>(
        MapObject(Name(unit, -1), kHeaderBytes, false, nullptr));
  }
  return header;
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
    if (!created_[k]) return DART_ERR_INVAL;
    *addr = base_ + offset;
    return DART_OK;
  }
  if (!node_local_[unit]) {
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
  SegmentHeader* header = unit == me_ ? header_ : MapHeader(unit);
  if (header == nullptr) return DART_ERR_OTHER;
  target->base = addr - (offset - Start(k));
  target->header = header;
  target->pid = 0;
  target->size = static_cast<MPI_Aint>(Size(k));
  target->disp_unit = 1;
  *chunk_offset = static_cast<MPI_Aint>(offset - Start(k));
  return DART_OK;
}

}  // namespace rmashim::dart
