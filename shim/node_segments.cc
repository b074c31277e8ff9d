#include "shim/node_segments.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <random>

namespace rmashim {
namespace {

struct SegmentId {
  long pid;
  long nonce;  // pids repeat across PID namespaces sharing one /dev/shm
  long serial;
  long bytes;
};

void NameOf(const SegmentId& id, char* name, size_t size) {
  std::snprintf(name, size, "/rmashim.%ld.%lx.%ld", id.pid,
                static_cast<unsigned long>(id.nonce), id.serial);
}

long ProcessNonce() {
  static const long nonce = [] {
    std::random_device device;
    return static_cast<long>((uint64_t{device()} << 32) ^ device());
  }();
  return nonce;
}

size_t RoundToPages(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page + (bytes == 0 ? page : 0);
}

std::byte* MapShared(int fd, size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

// This rank's segment: created, its pages reserved and mapped.
std::byte* CreateOwn(const SegmentId& id) {
  char name[64];
  NameOf(id, name, sizeof(name));
  const int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return nullptr;
  std::byte* addr = nullptr;
  if (posix_fallocate(fd, 0, static_cast<off_t>(id.bytes)) == 0) {
    addr = MapShared(fd, static_cast<size_t>(id.bytes));
  }
  close(fd);
  if (addr == nullptr) shm_unlink(name);
  return addr;
}

}  // namespace

bool NodeSegments::Create(MPI_Comm node_comm, size_t bytes) {
  static std::atomic<long> serial{0};
  int node_rank = 0, node_size = 0;
  PMPI_Comm_rank(node_comm, &node_rank);
  PMPI_Comm_size(node_comm, &node_size);
  const SegmentId mine{static_cast<long>(getpid()), ProcessNonce(), serial++,
                       static_cast<long>(RoundToPages(bytes))};
  std::byte* own = CreateOwn(mine);
  int ok = own != nullptr, all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node_comm);
  char name[64];
  NameOf(mine, name, sizeof(name));
  if (!all_ok) {
    if (own != nullptr) {
      munmap(own, static_cast<size_t>(mine.bytes));
      shm_unlink(name);
    }
    return false;
  }
  std::vector<SegmentId> ids(node_size);
  PMPI_Allgather(&mine, 4, MPI_LONG, ids.data(), 4, MPI_LONG, node_comm);
  maps_.resize(node_size);
  for (int r = 0; r < node_size; ++r) {
    maps_[r].bytes = static_cast<size_t>(ids[r].bytes);
    if (r == node_rank) {
      maps_[r].addr = own;
      continue;
    }
    char peer[64];
    NameOf(ids[r], peer, sizeof(peer));
    const int fd = shm_open(peer, O_RDWR, 0);
    if (fd >= 0) {
      maps_[r].addr = MapShared(fd, maps_[r].bytes);
      close(fd);
    }
    ok = ok && maps_[r].addr != nullptr;
  }
  // Everyone has mapped every segment: the names are no longer needed.
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node_comm);
  shm_unlink(name);
  return all_ok != 0;
}

NodeSegments::~NodeSegments() {
  for (const Mapping& m : maps_) {
    if (m.addr != nullptr) munmap(m.addr, m.bytes);
  }
}

}  // namespace rmashim
