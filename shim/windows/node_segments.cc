// Creating, announcing, mapping and giving back the node segments of one
// managed window (node_segments.h), through the segment cache.
#include "shim/windows/node_segments.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

namespace rmashim {
namespace {

size_t RoundToPages(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page + (bytes == 0 ? page : 0);
}

std::byte* MapShared(int fd, size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

// Serial numbers of this process's segments: never reused, so a peer's
// cached mapping is never mistaken for a newer segment of ours.
long NextSerial() {
  static std::atomic<long> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// A new segment: an unnamed file on /dev/shm's tmpfs (O_TMPFILE), its
// pages reserved and mapped; the descriptor stays open until every peer
// has opened it. Having no name, nothing can be left in /dev/shm however a
// process dies, even inside window creation; the memory is charged to
// /dev/shm's tmpfs like shm_open's.
bool CreateOwn(size_t bytes, OwnSegment* out) {
  const int fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::byte* addr = nullptr;
  struct stat st;
  if (posix_fallocate(fd, 0, static_cast<off_t>(bytes)) == 0 &&
      fstat(fd, &st) == 0) {
    addr = MapShared(fd, bytes);
  }
  if (addr == nullptr) {
    close(fd);
    return false;
  }
  *out = {fd,
          addr,
          bytes,
          static_cast<long>(st.st_dev),
          static_cast<long>(st.st_ino),
          NextSerial()};
  return true;
}

// A node peer's segment, mapped here; null if it cannot be opened or is not
// the file the peer described.
std::byte* MapPeer(const SegmentId& id) {
  const int fd = OpenPeerFile(id.pid, id.fd, id.dev, id.ino, id.bytes);
  if (fd < 0) return nullptr;
  std::byte* addr = MapShared(fd, static_cast<size_t>(id.bytes));
  close(fd);
  return addr;
}

}  // namespace

int OpenPeerFile(long pid, long fd, long dev, long ino, long min_bytes) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%ld/fd/%ld", pid, fd);
  const int opened = open(path, O_RDWR | O_CLOEXEC);
  if (opened < 0) return -1;
  struct stat st;
  if (fstat(opened, &st) == 0 && static_cast<long>(st.st_dev) == dev &&
      static_cast<long>(st.st_ino) == ino &&
      st.st_size >= static_cast<off_t>(min_bytes)) {
    return opened;
  }
  close(opened);
  return -1;
}

SegmentId NodeSegments::Prepare(size_t bytes, Vote vote) {
  SegmentCache& cache = segment_cache();
  bytes = RoundToPages(bytes);
  if (vote == Vote::kManage && own_.addr == nullptr) {
    if (cache.TakeOwn(bytes, &own_)) {
      // A freed window's: its lock words, counters and data are stale.
      std::memset(own_.addr, 0, own_.bytes);
      own_held_ = true;
    } else if (CreateOwn(bytes, &own_)) {
      own_held_ = cache.HoldDescriptor(bytes);
    }
  }
  const bool have = own_.addr != nullptr;
  return {static_cast<long>(getpid()),
          have ? static_cast<long>(own_.fd) : -1L,
          own_.dev,
          own_.ino,
          static_cast<long>(bytes),
          own_.serial,
          static_cast<long>(vote),
          static_cast<long>(cache.cached_bytes())};
}

Vote NodeSegments::Agree(const std::vector<SegmentId>& ids) {
  long agreed = 0;
  for (const SegmentId& id : ids) {
    agreed = std::max(agreed, id.vote);
    if (id.fd < 0)
      agreed = std::max(agreed, static_cast<long>(Vote::kNoMemory));
  }
  return static_cast<Vote>(agreed);
}

bool NodeSegments::ShouldRetry(const std::vector<SegmentId>& ids) {
  bool failed = false;
  long cached = 0;
  for (const SegmentId& id : ids) {
    if (id.vote != static_cast<long>(Vote::kManage)) return false;
    failed = failed || id.fd < 0;
    cached += id.cached_bytes;
  }
  return failed && cached > 0;
}

bool NodeSegments::Map(const std::vector<SegmentId>& ids,
                       const std::vector<int>& node_index, int rank) {
  SegmentCache& cache = segment_cache();
  maps_.resize(std::count_if(node_index.begin(), node_index.end(),
                             [](int i) { return i != MPI_UNDEFINED; }));
  bool ok = true;
  for (size_t r = 0; r < ids.size(); ++r) {
    if (node_index[r] == MPI_UNDEFINED) continue;
    Mapping& m = maps_[node_index[r]];
    const SegmentId& id = ids[r];
    m.bytes = static_cast<size_t>(id.bytes);
    if (static_cast<int>(r) == rank) {
      m.addr = own_.addr;
      own_index_ = node_index[r];
      continue;
    }
    m.name = {id.pid, id.dev, id.ino, id.serial, m.bytes, nullptr};
    m.addr = cache.TakePeer(m.name);
    if (m.addr == nullptr) m.addr = MapPeer(id);
    ok = ok && m.addr != nullptr;
  }
  return ok;
}

void NodeSegments::Mapped() {
  // The mappings keep the memory; the descriptor only serves peers that
  // map the segment later, from the cache.
  if (!own_held_ && own_.fd >= 0) {
    close(own_.fd);
    own_.fd = -1;
  }
}

void NodeSegments::Drop() {
  for (int i = 0; i < static_cast<int>(maps_.size()); ++i) {
    if (i != own_index_ && maps_[i].addr != nullptr) {
      munmap(maps_[i].addr, maps_[i].bytes);
    }
  }
  maps_.clear();
  own_index_ = -1;
  if (own_.addr != nullptr) {
    munmap(own_.addr, own_.bytes);
    if (own_.fd >= 0) close(own_.fd);
    if (own_held_) segment_cache().ReleaseDescriptor();
  }
  own_ = OwnSegment();
  own_held_ = false;
}

NodeSegments::~NodeSegments() {
  SegmentCache& cache = segment_cache();
  for (int i = 0; i < static_cast<int>(maps_.size()); ++i) {
    if (i == own_index_ || maps_[i].addr == nullptr) continue;
    PeerSegment segment = maps_[i].name;
    segment.addr = maps_[i].addr;
    cache.PutPeer(segment);
  }
  if (own_.addr == nullptr) return;
  if (own_held_) {
    cache.PutOwn(own_);
  } else {
    munmap(own_.addr, own_.bytes);
    if (own_.fd >= 0) close(own_.fd);
  }
}

}  // namespace rmashim
