#include "shim/node_segments.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace rmashim {
namespace {

// How node peers find a rank's segment: its open descriptor, reached
// through /proc/<pid>/fd/<fd>, and what it must turn out to be there (pids
// can mean another process to a peer in another PID namespace).
struct SegmentId {
  long pid;
  long fd;
  long dev;
  long ino;
  long bytes;
};
constexpr int kIdLongs = sizeof(SegmentId) / sizeof(long);

size_t RoundToPages(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page + (bytes == 0 ? page : 0);
}

std::byte* MapShared(int fd, size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

// This rank's segment: an unnamed file on /dev/shm's tmpfs (O_TMPFILE), its
// pages reserved and mapped; the descriptor stays open (id->fd) until every
// peer has opened it. Having no name, nothing can be left in /dev/shm
// however a process dies, even inside window creation; the memory is
// charged to /dev/shm's tmpfs like shm_open's.
std::byte* CreateOwn(SegmentId* id) {
  const int fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return nullptr;
  std::byte* addr = nullptr;
  struct stat st;
  if (posix_fallocate(fd, 0, static_cast<off_t>(id->bytes)) == 0 &&
      fstat(fd, &st) == 0) {
    addr = MapShared(fd, static_cast<size_t>(id->bytes));
  }
  if (addr == nullptr) {
    close(fd);
    return nullptr;
  }
  id->fd = fd;
  id->dev = static_cast<long>(st.st_dev);
  id->ino = static_cast<long>(st.st_ino);
  return addr;
}

// A node peer's segment, mapped here; null if it cannot be opened or is not
// the file the peer described.
std::byte* MapPeer(const SegmentId& id) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%ld/fd/%ld", id.pid, id.fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  std::byte* addr = nullptr;
  if (fstat(fd, &st) == 0 && static_cast<long>(st.st_dev) == id.dev &&
      static_cast<long>(st.st_ino) == id.ino &&
      st.st_size == static_cast<off_t>(id.bytes)) {
    addr = MapShared(fd, static_cast<size_t>(id.bytes));
  }
  close(fd);
  return addr;
}

}  // namespace

bool NodeSegments::Create(MPI_Comm node_comm, size_t bytes) {
  int node_rank = 0, node_size = 0;
  PMPI_Comm_rank(node_comm, &node_rank);
  PMPI_Comm_size(node_comm, &node_size);
  SegmentId mine{static_cast<long>(getpid()), -1, 0, 0,
                 static_cast<long>(RoundToPages(bytes))};
  std::byte* own = CreateOwn(&mine);
  int ok = own != nullptr, all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node_comm);
  if (!all_ok) {
    if (own != nullptr) {
      munmap(own, static_cast<size_t>(mine.bytes));
      close(static_cast<int>(mine.fd));
    }
    return false;
  }
  std::vector<SegmentId> ids(node_size);
  PMPI_Allgather(&mine, kIdLongs, MPI_LONG, ids.data(), kIdLongs, MPI_LONG,
                 node_comm);
  maps_.resize(node_size);
  for (int r = 0; r < node_size; ++r) {
    maps_[r].bytes = static_cast<size_t>(ids[r].bytes);
    maps_[r].addr = r == node_rank ? own : MapPeer(ids[r]);
    ok = ok && maps_[r].addr != nullptr;
  }
  // Everyone has mapped every segment: the descriptors are no longer needed
  // (the mappings keep the memory).
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node_comm);
  close(static_cast<int>(mine.fd));
  return all_ok != 0;
}

NodeSegments::~NodeSegments() {
  for (const Mapping& m : maps_) {
    if (m.addr != nullptr) munmap(m.addr, m.bytes);
  }
}

}  // namespace rmashim
