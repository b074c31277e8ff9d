// PSCW on windows whose synchronization is MPI's (windows spanning nodes):
// MPI's access and exposure epochs, with posts matched to starts by the
// shim.
//
// Why. MPICH 4.0.2 (ch4, mpidig_win.h and win_post_proc in
// mpidig_rma_callbacks.c) counts the posts an origin has received in one
// number per window, whoever sent them, and its MPI_Win_start waits until
// that number equals the size of the start's group, then sets it to zero.
// So a post for a later epoch, from a rank outside the start's group, counts
// towards it. The start then returns before its own targets have posted
// (tests/diff/pscw_early_post.c reads stale values natively), or, where the
// count passes the group's size, never returns: in tests/diff/pscw_ring.c
// the ranks that finish the ring post to every rank for the all-to-all
// phase while a slower rank still waits in the ring's start (natively now
// and then on 2+2 ranks of the two-host tier, and more often under the
// shim before it matched posts itself: its direct copies let the others
// run ahead).
//
// So here each MPI_Win_post sends every origin of its group a zero-byte
// message, and each MPI_Win_start receives one from every target of its
// group before it returns. Messages from one process on one communicator
// and tag are received in the order sent (MPI-4.1 3.5), so a post for a
// later epoch waits in MPI's queues for the start it belongs to. They
// travel on one duplicate of MPI_COMM_WORLD (one MPICH context id for the
// job, made at MPI_Init when it spans nodes, like the endpoint flush
// window of mpi_flush.h), with a tag per window: at creation the window's
// ranks take the largest of their next free tags (ProposePostTag,
// TakePostTag in the creation's exchange), so two windows that share a pair
// of processes never share a tag. (A communicator per window would use one
// of MPICH's 2048 context ids per window on top of the window's own.)
// MPI's own post and start are called with MPI_MODE_NOCHECK: MPICH then
// sends and counts no posts.
// A window whose accumulates the agents apply (shim/agent/agent.h) also
// sends, at each MPI_Win_complete, every target of the start on another
// node the number of updates it sent that target's agent, and each
// MPI_Win_wait or test receives one from every origin of its post on
// another node before it returns (the window's second tag: a process may
// post to and start towards the same peer at once). MPI_Win_complete and
// MPI_Win_wait stay MPI's. Their count has the same shape (completes per
// window) but cannot be misled: an origin completes towards a target only in an
// access epoch that the target's post for its current exposure epoch let start,
// so every complete a target receives belongs to that epoch. The program's own
// MPI_MODE_NOCHECK (both sides, MPI-4.1 12.5) skips the messages as it skips
// MPICH's.
#ifndef RMASHIM_SHIM_SYNC_MPI_PSCW_H_
#define RMASHIM_SHIM_SYNC_MPI_PSCW_H_

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace rmashim {

// Process-wide, collective over MPI_COMM_WORLD: the communicator post
// messages travel on, opened when the job spans nodes (and the shim is on).
void OpenPostMatching();
void ClosePostMatching();

// This process's proposal for a new window's tag: its next free one, or -1
// where it cannot match posts (no communicator, MPI_THREAD_MULTIPLE, whose
// concurrent window creations could agree on one tag twice, or no tags
// left).
long ProposePostTag();
// The window's tag from every rank's proposal: -1 if any rank has none,
// else the largest, then taken here (proposals start above it).
long TakePostTag(const long* proposals, int count);

// What an origin tells a target at the end of a fence or PSCW epoch on an
// agent window (agent.h): the updates it sent the target's agent, and
// whether its link to that agent was lost (then some may never arrive,
// and the target reports MPI_ERR_OTHER instead of waiting for them).
// Summed over origins as two MPI_UINT64_T.
struct UpdateCount {
  uint64_t updates = 0;
  uint64_t lost_links = 0;
};
static_assert(sizeof(UpdateCount) == 2 * sizeof(uint64_t));

// One window's post matching. Ranks are MPI_COMM_WORLD's.
class PostMatching {
 public:
  PostMatching() = default;
  PostMatching(const PostMatching&) = delete;
  PostMatching& operator=(const PostMatching&) = delete;
  ~PostMatching();

  // `tag` from TakePostTag; -1 leaves the matching to MPICH.
  void SetTag(long tag) { tag_ = static_cast<int>(tag); }
  bool is_open() const { return tag_ >= 0; }
  // Whether a post or start with `assert` goes through the matching (the
  // program's MPI_MODE_NOCHECK skips it, on both sides).
  bool matches(int assert) const {
    return is_open() && (assert& MPI_MODE_NOCHECK) == 0;
  }

  // Tells each process in `origins` that this process has posted.
  int Post(const std::vector<int>& origins);
  // Returns once each process in `targets` has posted to this process (one
  // post each, the oldest not yet matched).
  int AwaitPosts(const std::vector<int>& targets);
  // Completes this process's post messages, at the end of its exposure
  // epoch (every origin has received them by then: it completed).
  int FinishPosts();

  // Agent windows. At MPI_Win_complete: tells `target` how many updates
  // this process sent its agent in the access epoch; FinishCounts completes
  // those messages (small: sent at once). At MPI_Win_wait: the sum of the
  // counts of every process in `origins` (one each), waiting for them;
  // ReceiveSomeCounts, for MPI_Win_test, takes those that have arrived and
  // says whether all have (`*total` is then their sum).
  int SendCount(int target, const UpdateCount& count);
  int FinishCounts();
  int ReceiveCounts(const std::vector<int>& origins, UpdateCount* total);
  int ReceiveSomeCounts(const std::vector<int>& origins, bool* all,
                        UpdateCount* total);

 private:
  // Receives `origin`'s next count into received_.
  int ReceiveCountFrom(int origin);

  int tag_ = -1;  // posts; counts on tag_ + 1
  std::vector<MPI_Request> sends_;
  std::vector<MPI_Request> count_sends_;
  std::deque<UpdateCount> counts_out_;  // their buffers (stable addresses)
  size_t counts_in_ = 0;  // of the current wait's origins, received so far
  UpdateCount received_;  // ... and their sum
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_SYNC_MPI_PSCW_H_
