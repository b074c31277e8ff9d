// Node-shared memory for managed windows. Every rank creates its own
// segment, an unnamed (O_TMPFILE) file on /dev/shm's tmpfs, reserves its
// pages (so an exhausted /dev/shm is detected at creation, not by a SIGBUS
// later), and its node peers map it through /proc/<pid>/fd. No segment ever
// has a name, so nothing of ours is left in /dev/shm after the program ends,
// however it ends, even if a rank dies inside window creation. (Named
// POSIX segments, unlinked once every peer had mapped them, left names
// behind when a rank died between shm_open and the unlink: the others wait
// in a collective there and are killed by the launcher.)
#ifndef RMASHIM_SHIM_NODE_SEGMENTS_H_
#define RMASHIM_SHIM_NODE_SEGMENTS_H_

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace rmashim {

// What a rank says about managing a window. The ranks of the window's
// communicator agree in NodeSegments::Create: the window is managed only if
// every rank says kManage, else every rank learns the highest vote (so no
// rank manages a window that others leave to MPI).
enum class Vote : long {
  kManage = 0,
  kNoMemory = 1,  // a rank could not get or map node-shared memory
  kOptOut = 2,    // info rmashim_managed=false on a rank
  kDecline = 3,   // the shim cannot manage it on a rank (e.g. table full)
};

class NodeSegments {
 public:
  NodeSegments() = default;
  ~NodeSegments();
  NodeSegments(const NodeSegments&) = delete;
  NodeSegments& operator=(const NodeSegments&) = delete;

  // Collective over `comm`, whose ranks on this node are those with a
  // `node_index` (NodeIndexOf in runtime.h): this rank's segment has `bytes`
  // (rounded up to whole pages), unless `vote` is not kManage. Returns the
  // same on every rank of `comm`: kManage when every segment exists and is
  // mapped; else the highest vote, kNoMemory at least if any rank could not
  // get its memory (/dev/shm exhausted) or map a node peer's (/proc/<pid>/fd
  // refused, or peers in different PID namespaces). Costs no collective
  // beyond the one exchange of segment ids (and one allreduce when all
  // voted kManage).
  Vote Create(MPI_Comm comm, const std::vector<int>& node_index, size_t bytes,
              Vote vote = Vote::kManage);

  // The segment of the node peer with node index `r`, mapped here.
  std::byte* segment(int r) const { return maps_[r].addr; }

 private:
  struct Mapping {
    std::byte* addr = nullptr;
    size_t bytes = 0;
  };
  std::vector<Mapping> maps_;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_NODE_SEGMENTS_H_
