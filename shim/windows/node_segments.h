// Node-shared memory for managed windows. Every rank creates its own
// segment, an unnamed (O_TMPFILE) file on /dev/shm's tmpfs, reserves its
// pages (so an exhausted /dev/shm is detected at creation, not by a SIGBUS
// later), and its node peers map it through /proc/<pid>/fd. No segment ever
// has a name, so nothing of ours is left in /dev/shm after the program ends,
// however it ends, even if a rank dies inside window creation. (Named
// POSIX segments, unlinked once every peer had mapped them, left names
// behind when a rank died between shm_open and the unlink: the others wait
// in a collective there and are killed by the launcher.) Freed segments go
// to the process's segment cache (segment_cache.h) and come back from it.
//
// The ranks announce their segments to each other in the one exchange that
// window creation does (ManagedWindow), which is also where they agree
// whether the window is managed; this class makes the announcement and
// reads everyone's.
#ifndef RMASHIM_SHIM_WINDOWS_NODE_SEGMENTS_H_
#define RMASHIM_SHIM_WINDOWS_NODE_SEGMENTS_H_

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "shim/windows/segment_cache.h"

namespace rmashim {

// What a rank says about managing a window. The ranks of the window's
// communicator agree (NodeSegments::Agree): the window is managed only if
// every rank says kManage, else every rank learns the highest vote (so no
// rank manages a window that others leave to MPI).
enum class Vote : long {
  kManage = 0,
  kNoMemory = 1,  // a rank could not get or map node-shared memory
  kOptOut = 2,    // info rmashim_managed=false on a rank
  kDecline = 3,   // the shim cannot manage it on a rank (e.g. table full)
};

// What a rank announces about its segment. Node peers find it through its
// open descriptor, /proc/<pid>/fd/<fd>, and check it is the file described
// (pids can mean another process to a peer in another PID namespace); or
// find their own mapping of it in the segment cache (same pid, device,
// inode, size and serial).
struct SegmentId {
  long pid;
  long fd;  // -1: no segment (vote not kManage, or creating it failed)
  long dev;
  long ino;
  long bytes;
  long serial;
  long vote;          // Vote
  long cached_bytes;  // in this rank's segment cache (Retry)
};

// Opens the file that process `pid` holds open as descriptor `fd`, through
// /proc/<pid>/fd, if it is the file described (device and inode: pids can
// mean another process to a peer in another PID namespace) and holds at
// least `min_bytes`; returns the descriptor, or -1.
int OpenPeerFile(long pid, long fd, long dev, long ino, long min_bytes);

class NodeSegments {
 public:
  NodeSegments() = default;
  // Gives the segments back to the segment cache (or unmaps them).
  ~NodeSegments();
  NodeSegments(const NodeSegments&) = delete;
  NodeSegments& operator=(const NodeSegments&) = delete;

  // Local: this rank's segment of `bytes` (rounded up to whole pages,
  // zeroed), unless `vote` is not kManage (or one exists already: a retry),
  // and what to announce about it.
  SegmentId Prepare(size_t bytes, Vote vote);

  // Local, and the same on every rank given every rank's announcement
  // (`ids`, by rank of the window's communicator): kManage when every rank
  // voted so and has its segment; else the highest vote, kNoMemory at
  // least when a rank could not create its segment.
  static Vote Agree(const std::vector<SegmentId>& ids);
  // Whether the ranks should drop their segment caches and announce again
  // (the same on every rank): a rank could not create its segment
  // (/dev/shm exhausted) while some rank's cache held memory.
  static bool ShouldRetry(const std::vector<SegmentId>& ids);

  // Local, after every rank voted kManage: maps the segment of each node
  // peer (`node_index`: NodeIndexOf in runtime.h; this rank is `rank`).
  // False if some could not be mapped (/proc/<pid>/fd refused, peers in
  // different PID namespaces, out of address space): the ranks must then
  // agree to leave the window to MPI (and Drop).
  bool Map(const std::vector<SegmentId>& ids,
           const std::vector<int>& node_index, int rank);
  // Once every node peer has mapped this rank's segment: closes its
  // descriptor unless the segment cache wants it kept.
  void Mapped();

  // Unmaps everything now, the cache bypassed (the window is left to MPI).
  void Drop();

  // This rank's segment (after Prepare; nullptr if it has none).
  std::byte* own() const { return own_.addr; }
  // The segment of the node peer with node index `r`, mapped here.
  std::byte* segment(int r) const { return maps_[r].addr; }

 private:
  struct Mapping {
    std::byte* addr = nullptr;
    size_t bytes = 0;
    PeerSegment name;  // peers' segments: how the cache finds it again
  };
  OwnSegment own_;
  bool own_held_ = false;  // own_.fd stays open for the segment cache
  int own_index_ = -1;     // this rank's node index in maps_
  std::vector<Mapping> maps_;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOWS_NODE_SEGMENTS_H_
