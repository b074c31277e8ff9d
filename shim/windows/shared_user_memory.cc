// Remapping MPI_Win_create memory onto node-shareable files, remembering
// them, and mapping peers' (shared_user_memory.h).
#include "shim/windows/shared_user_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "shim/windows/node_segments.h"

namespace rmashim {
namespace {

uintptr_t PageSize() {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}
uintptr_t PageFloor(uintptr_t a) { return a & ~(PageSize() - 1); }
uintptr_t PageCeil(uintptr_t a) { return PageFloor(a + PageSize() - 1); }

// Threads of this process (/proc/self/stat's num_threads), -1 if unknown.
long CountThreads() {
  FILE* f = std::fopen("/proc/self/stat", "re");
  if (f == nullptr) return -1;
  char buffer[1024];
  const size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, f);
  std::fclose(f);
  buffer[n] = '\0';
  // After the command name, which may hold spaces and parentheses: field 3
  // (state) onwards; num_threads is field 20.
  const char* p = std::strrchr(buffer, ')');
  if (p == nullptr) return -1;
  long threads = -1;
  if (std::sscanf(p + 2,
                  "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
                  "%*d %*d %*d %ld",
                  &threads) != 1) {
    return -1;
  }
  return threads;
}

long g_threads_at_init = -1;

bool Enabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("RMASHIM_SHARE_CREATE_MEMORY");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return enabled;
}

// Copying pages and mapping over them is safe while no other thread of the
// program can store to them (top of shared_user_memory.h).
bool NoOtherThreadRuns() {
  const long now = CountThreads();
  return now > 0 && now == g_threads_at_init;
}

// One mapping of /proc/self/maps.
struct Vma {
  uintptr_t start, end;
  bool private_rw;  // "rw-p"
  uint64_t offset;
  unsigned long inode;
  bool anonymous;  // no file: heap or anonymous mmap (not the stack)
};

// The mappings that overlap [from, limit), in address order. A process
// with many windows has many mappings (its own remapped pages, its peers'
// segments): /proc/self/maps is written as it is read, so stopping at
// `limit` spares formatting the rest, and lines below `from` are skipped
// after reading their range alone.
std::vector<Vma> ReadMapsOver(uintptr_t from, uintptr_t limit) {
  std::vector<Vma> vmas;
  FILE* f = std::fopen("/proc/self/maps", "re");
  if (f == nullptr) return vmas;
  // Fewer, larger reads than stdio's default buffer of a few lines; one
  // buffer, as SharedRanges reads the maps under its mutex only.
  static char buffer[64 << 10];
  std::setvbuf(f, buffer, _IOFBF, sizeof(buffer));
  char line[512];
  bool line_start = true;  // a line longer than `line` comes in pieces
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    const bool piece = !line_start;
    line_start = std::strchr(line, '\n') != nullptr;
    if (piece) continue;
    char* dash = nullptr;
    const uintptr_t start = std::strtoull(line, &dash, 16);
    if (start >= limit) break;
    if (*dash == '-' && std::strtoull(dash + 1, nullptr, 16) <= from) continue;
    Vma v{};
    char perms[8] = {}, path[256] = {};
    unsigned major = 0, minor = 0;
    const int fields = std::sscanf(
        line, "%" SCNxPTR "-%" SCNxPTR " %7s %" SCNx64 " %x:%x %lu %255s",
        &v.start, &v.end, perms, &v.offset, &major, &minor, &v.inode, path);
    if (fields < 7) continue;
    v.private_rw = std::strcmp(perms, "rw-p") == 0;
    v.anonymous =
        v.inode == 0 && (path[0] == '\0' || std::strcmp(path, "[heap]") == 0);
    vmas.push_back(v);
  }
  std::fclose(f);
  return vmas;
}

// A file this process mapped over its own pages [lo, hi), at offset 0 at
// lo, and the live windows over it.
struct SharedRange {
  uintptr_t lo, hi;
  int fd;
  long dev, ino;
  int windows;
};

// Freed windows' files remembered beyond this many are forgotten, oldest
// first (their pages stay as they are; a new window over them copies).
constexpr size_t kRememberedIdle = 64;
// Live windows' files at most: one descriptor each.
constexpr size_t kMaxRanges = 1024;
// Bytes copied and mapped over at a time.
constexpr uintptr_t kChunk = uintptr_t{64} << 20;

class SharedRanges {
 public:
  UserMemoryId Share(uintptr_t base, size_t size) {
    const uintptr_t lo = PageFloor(base), hi = PageCeil(base + size);
    std::lock_guard<std::mutex> lock(mutex_);
    // A file a live window uses is still mapped where it was put: MPI keeps
    // a window's memory valid until the window is freed.
    for (SharedRange& r : ranges_) {
      if (r.windows > 0 && r.lo <= lo && hi <= r.hi) return Reuse(r, base);
    }
    // Idle files that overlap the range are checked against the mappings,
    // the rest when a later window needs them.
    uintptr_t from = lo, limit = hi;
    for (const SharedRange& r : ranges_) {
      if (r.windows == 0 && r.lo < hi && lo < r.hi) {
        from = std::min(from, r.lo);
        limit = std::max(limit, r.hi);
      }
    }
    const std::vector<Vma> vmas = ReadMapsOver(from, limit);
    ForgetUnmapped(vmas, from, limit);
    for (SharedRange& r : ranges_) {
      if (r.lo <= lo && hi <= r.hi) return Reuse(r, base);
    }
    if (ranges_.size() >= kMaxRanges || !Remappable(vmas, lo, hi)) return {};
    SharedRange r{lo, hi, -1, 0, 0, 1};
    if (!Remap(&r)) return {};
    // Files this one replaced in part or whole: their descriptors go (what
    // remains mapped of them is no longer offered to peers).
    for (auto it = ranges_.begin(); it != ranges_.end();) {
      if (it->lo < hi && lo < it->hi) {
        close(it->fd);
        it = ranges_.erase(it);
      } else {
        ++it;
      }
    }
    ranges_.push_back(r);
    ForgetIdleBeyond(kRememberedIdle);
    return {r.fd, r.dev, r.ino, static_cast<long>(base - r.lo)};
  }

  void Unshare(const UserMemoryId& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (SharedRange& r : ranges_) {
      if (r.fd == id.fd && r.ino == id.ino && r.windows > 0) {
        --r.windows;
        return;
      }
    }
  }

 private:
  static UserMemoryId Reuse(SharedRange& r, uintptr_t base) {
    ++r.windows;
    return {r.fd, r.dev, r.ino, static_cast<long>(base - r.lo)};
  }

  const SharedRange* Find(uintptr_t a) const {
    for (const SharedRange& r : ranges_) {
      if (r.lo <= a && a < r.hi) return &r;
    }
    return nullptr;
  }

  // Whether every page of [lo, hi) is mapped by the range's file where it
  // was put (the program may have unmapped or replaced it since).
  static bool StillMapped(const std::vector<Vma>& vmas, const SharedRange& r) {
    uintptr_t at = r.lo;
    for (const Vma& v : vmas) {
      if (v.end <= at || v.start > at) continue;
      if (v.inode != static_cast<unsigned long>(r.ino) ||
          v.offset != at - r.lo) {
        return false;
      }
      at = std::min(v.end, r.hi);
      if (at == r.hi) return true;
    }
    return false;
  }

  // Idle files inside [from, limit) (what `vmas` cover) no longer mapped
  // where they were put.
  void ForgetUnmapped(const std::vector<Vma>& vmas, uintptr_t from,
                      uintptr_t limit) {
    for (auto it = ranges_.begin(); it != ranges_.end();) {
      if (it->windows == 0 && from <= it->lo && it->hi <= limit &&
          !StillMapped(vmas, *it)) {
        close(it->fd);
        it = ranges_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void ForgetIdleBeyond(size_t keep) {
    size_t idle = 0;
    for (const SharedRange& r : ranges_) idle += r.windows == 0;
    for (auto it = ranges_.begin(); it != ranges_.end() && idle > keep;) {
      if (it->windows == 0) {
        close(it->fd);
        it = ranges_.erase(it);
        --idle;
      } else {
        ++it;
      }
    }
  }

  // Every page of [lo, hi) is private anonymous read-write memory, or a
  // file of ours that no live window uses; and no live window's file
  // overlaps the range.
  bool Remappable(const std::vector<Vma>& vmas, uintptr_t lo,
                  uintptr_t hi) const {
    for (const SharedRange& r : ranges_) {
      if (r.windows > 0 && r.lo < hi && lo < r.hi) return false;
    }
    uintptr_t at = lo;
    for (const Vma& v : vmas) {
      if (v.end <= at || v.start > at) continue;
      const SharedRange* ours = Find(at);
      const bool idle_ours = ours != nullptr && ours->windows == 0 &&
                             v.inode == static_cast<unsigned long>(ours->ino);
      if (!(v.private_rw && v.anonymous) && !idle_ours) return false;
      at = std::min(v.end, hi);
      if (at == hi) return true;
    }
    return false;  // a hole in [lo, hi)
  }

  // Copies [r.lo, r.hi) into a new file and maps it over, chunk by chunk.
  static bool Remap(SharedRange* r) {
    const size_t bytes = r->hi - r->lo;
    const int fd = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    struct stat st;
    if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 || fstat(fd, &st) != 0) {
      close(fd);
      return false;
    }
    for (uintptr_t off = 0; off < bytes; off += kChunk) {
      const size_t n = std::min<size_t>(kChunk, bytes - off);
      auto* at = reinterpret_cast<void*>(r->lo + off);
      // Pages reserved chunk by chunk (a full /dev/shm is found here, not
      // by a SIGBUS later), as the program's private pages of the chunk
      // before are given back: at most one chunk is held twice.
      if (posix_fallocate(fd, static_cast<off_t>(off), static_cast<off_t>(n)) !=
              0 ||
          !CopyAndMapOver(fd, off, at, n)) {
        close(fd);  // what was mapped over keeps its file, and its contents
        return false;
      }
    }
    r->fd = fd;
    r->dev = static_cast<long>(st.st_dev);
    r->ino = static_cast<long>(st.st_ino);
    return true;
  }

  // Whole pages, so also bytes of the program's beside the window, which
  // AddressSanitizer would take for an overflow of the window's block: a
  // word loop it does not instrument (and GCC does not turn into memcpy).
  [[gnu::no_sanitize_address,
    gnu::optimize("no-tree-loop-distribute-patterns")]] static void
  CopyPages(void* to, const void* from, size_t n) {
    auto* d = static_cast<uint64_t*>(to);
    const auto* s = static_cast<const uint64_t*>(from);
    for (size_t i = 0; i < n / sizeof(uint64_t); ++i) d[i] = s[i];
  }

  static bool CopyAndMapOver(int fd, uintptr_t off, void* at, size_t n) {
    void* staging = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                         static_cast<off_t>(off));
    if (staging == MAP_FAILED) return false;
    CopyPages(staging, at, n);
    munmap(staging, n);
    void* mapped = mmap(at, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                        fd, static_cast<off_t>(off));
    if (mapped == at) return true;
    // MAP_FIXED may have dropped the old pages before failing: put the
    // contents back in private memory (best effort: a system out of
    // mappings may refuse this too).
    if (mmap(at, n, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == at) {
      staging =
          mmap(nullptr, n, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(off));
      if (staging != MAP_FAILED) {
        std::memcpy(at, staging, n);
        munmap(staging, n);
      }
    }
    return false;
  }

  std::mutex mutex_;
  std::vector<SharedRange> ranges_;
};

SharedRanges& shared_ranges() {
  static SharedRanges* ranges = new SharedRanges;  // used up to exit
  return *ranges;
}

}  // namespace

void NoteThreadsAtInit() { g_threads_at_init = CountThreads(); }

void NoteShimThreadStarted() {
  if (g_threads_at_init > 0) ++g_threads_at_init;
}

UserMemoryId ShareUserMemory(void* base, size_t size) {
  if (base == nullptr || size == 0 || !Enabled() || !NoOtherThreadRuns()) {
    return {};
  }
  return shared_ranges().Share(reinterpret_cast<uintptr_t>(base), size);
}

void UnshareUserMemory(const UserMemoryId& id) {
  if (id.fd >= 0) shared_ranges().Unshare(id);
}

PeerUserMemory::~PeerUserMemory() {
  if (addr_ != nullptr) munmap(addr_, bytes_);
}

PeerUserMemory::PeerUserMemory(PeerUserMemory&& other) noexcept
    : addr_(other.addr_), bytes_(other.bytes_) {
  other.addr_ = nullptr;
  other.bytes_ = 0;
}

std::byte* PeerUserMemory::Map(pid_t pid, const UserMemoryId& id,
                               size_t bytes) {
  if (id.fd < 0 || bytes == 0 || addr_ != nullptr) return nullptr;
  const uintptr_t lo = PageFloor(static_cast<uintptr_t>(id.offset));
  const uintptr_t hi = PageCeil(static_cast<uintptr_t>(id.offset) + bytes);
  const int fd =
      OpenPeerFile(pid, id.fd, id.dev, id.ino, static_cast<long>(hi));
  if (fd < 0) return nullptr;
  void* p = mmap(nullptr, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                 static_cast<off_t>(lo));
  close(fd);
  if (p == MAP_FAILED) return nullptr;
  addr_ = p;
  bytes_ = hi - lo;
  return static_cast<std::byte*>(p) + (id.offset - lo);
}

}  // namespace rmashim
