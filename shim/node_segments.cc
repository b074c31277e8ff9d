#include "shim/node_segments.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
  long vote;  // Vote
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

Vote NodeSegments::Create(MPI_Comm comm, const std::vector<int>& node_index,
                          size_t bytes, Vote vote) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  SegmentId mine{static_cast<long>(getpid()), -1, 0, 0,
                 static_cast<long>(RoundToPages(bytes)),
                 static_cast<long>(vote)};
  // On failure mine.fd stays -1.
  std::byte* own = vote == Vote::kManage ? CreateOwn(&mine) : nullptr;
  // One exchange tells every rank who voted what, who failed, and where the
  // others' segments are.
  std::vector<SegmentId> ids(node_index.size());
  PMPI_Allgather(&mine, kIdLongs, MPI_LONG, ids.data(), kIdLongs, MPI_LONG,
                 comm);
  long agreed = 0;  // the same on every rank: computed from the same ids
  for (const SegmentId& id : ids) {
    agreed = std::max(agreed, id.vote);
    if (id.fd < 0) agreed = std::max(agreed, static_cast<long>(Vote::kNoMemory));
  }
  bool ok = agreed == 0;
  if (ok) {
    maps_.resize(std::count_if(node_index.begin(), node_index.end(),
                               [](int i) { return i != MPI_UNDEFINED; }));
    for (size_t r = 0; r < ids.size(); ++r) {
      if (node_index[r] == MPI_UNDEFINED) continue;
      Mapping& m = maps_[node_index[r]];
      m.bytes = static_cast<size_t>(ids[r].bytes);
      m.addr = static_cast<int>(r) == rank ? own : MapPeer(ids[r]);
      ok = ok && m.addr != nullptr;
    }
    // Everyone has mapped every segment (or given up): the descriptors are
    // no longer needed (the mappings keep the memory).
    int all_ok = 0, my_ok = ok;
    PMPI_Allreduce(&my_ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (all_ok == 0) agreed = static_cast<long>(Vote::kNoMemory);
  }
  if (mine.fd >= 0) close(static_cast<int>(mine.fd));
  if (maps_.empty() && own != nullptr) {  // failed before mapping anything
    munmap(own, static_cast<size_t>(mine.bytes));
  }
  return static_cast<Vote>(agreed);
}

NodeSegments::~NodeSegments() {
  for (const Mapping& m : maps_) {
    if (m.addr != nullptr) munmap(m.addr, m.bytes);
  }
}

}  // namespace rmashim
