// Freed node segments kept for the next window of the same size.
// Creating a segment (a tmpfs file whose pages are reserved and zeroed,
// then opened and mapped by every node peer) and tearing it down again
// (munmap, and the kernel freeing the pages) were most of what a small
// managed window's MPI_Win_allocate + MPI_Win_free cost; taking a freed
// segment of the same size back costs a memset.
//
// Per process, in two parts: this process's own segments (their descriptor
// stays open, so a node peer that no longer has one mapped can map it again
// through /proc/<pid>/fd) and node peers' segments still mapped here (found
// again by what their owner announces: pid, device, inode, size and a
// serial number the owner never reuses). The cache decides nothing about
// whether a window is managed: that stays the agreement in window
// creation, computed from the same announcements on every rank; the cache
// only changes where a rank's segment, and its mappings of its peers'
// segments, come from.
//
// Both parts are bounded (Limits): the least recently freed go first. An
// own segment that leaves the cache is marked dropped at its first word
// before it is unmapped, so peers that still map it let go of it first
// when their part is over its bounds.
#ifndef RMASHIM_SHIM_WINDOWS_SEGMENT_CACHE_H_
#define RMASHIM_SHIM_WINDOWS_SEGMENT_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>

namespace rmashim {

// A segment this process created: an unnamed tmpfs file, mapped here.
struct OwnSegment {
  int fd = -1;  // open while it may come back to the cache
  std::byte* addr = nullptr;
  size_t bytes = 0;
  long dev = 0;
  long ino = 0;
  long serial = 0;  // unique among this process's segments
};

// A node peer's segment as mapped here, and how its owner names it.
struct PeerSegment {
  long pid = 0;
  long dev = 0;
  long ino = 0;
  long serial = 0;
  size_t bytes = 0;
  std::byte* addr = nullptr;
};

class SegmentCache {
 public:
  struct Limits {
    size_t own_bytes = 0;  // own segments cached (0: cache nothing)
    int own_entries = 0;
    size_t peer_bytes = 0;  // peers' segments still mapped
    int peer_entries = 0;
    int held_fds = 0;  // live own segments that keep their descriptor
  };
  explicit SegmentCache(const Limits& limits) : limits_(limits) {}
  ~SegmentCache() { Flush(); }
  SegmentCache(const SegmentCache&) = delete;
  SegmentCache& operator=(const SegmentCache&) = delete;

  // A freed own segment of exactly `bytes` (the most recently freed), now
  // in use again with its descriptor open; false if there is none. Its
  // contents are what the last window left there.
  bool TakeOwn(size_t bytes, OwnSegment* out);
  // For a new own segment of `bytes`: whether it keeps its descriptor open
  // while in use, so that it can come back here when freed (then PutOwn it;
  // else the caller closes the descriptor once its peers have mapped it and
  // unmaps the segment when done).
  bool HoldDescriptor(size_t bytes);
  // A live own segment that kept its descriptor goes away without coming
  // back (the caller closes and unmaps it).
  void ReleaseDescriptor();
  // An own segment that was in use with its descriptor open is free again.
  void PutOwn(const OwnSegment& segment);

  // This process's mapping of the named peer segment, if it kept one (now
  // in use again); nullptr if not.
  std::byte* TakePeer(const PeerSegment& name);
  // A peer's segment this process no longer uses; stays mapped here.
  void PutPeer(const PeerSegment& segment);

  // Lets go of every cached segment (descriptors closed, unmapped); true if
  // there was any.
  bool Flush();
  // Bytes of segments cached (own and peers').
  size_t cached_bytes() const;

  // What an own segment's first word holds once it has left the cache.
  static constexpr uint64_t kDroppedMark = 0xd20bbed5e6c0ffffull;

 private:
  void TrimOwn();  // with mutex_ held
  void TrimPeers();

  const Limits limits_;
  mutable std::mutex mutex_;
  std::list<OwnSegment> own_;  // most recently freed first
  std::list<PeerSegment> peers_;
  size_t own_bytes_ = 0;
  size_t peer_bytes_ = 0;
  int held_fds_ = 0;  // live own segments with their descriptor open
};

// The process's cache. Its limits come from RMASHIM_SEGMENT_CACHE_MIB
// (per part, in MiB; 0 turns caching off) or, by default, 1/16 of
// /dev/shm's size shared by this node's ranks (at most 1 GiB) per part.
SegmentCache& segment_cache();

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOWS_SEGMENT_CACHE_H_
