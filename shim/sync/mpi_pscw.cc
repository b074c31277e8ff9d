// Posts matched to starts with point-to-point messages (mpi_pscw.h).
#include "shim/sync/mpi_pscw.h"

#include <algorithm>
#include <atomic>
#include <cstddef>

#include "shim/process/runtime.h"

namespace rmashim {

namespace {
MPI_Comm g_post_comm = MPI_COMM_NULL;
long g_tag_ub = 0;
std::atomic<long> g_next_tag{0};

// Waits for every request; the first failed one's error, not
// MPI_ERR_IN_STATUS, so the caller raises its class on the window.
int WaitEvery(std::vector<MPI_Request>& requests) {
  std::vector<MPI_Status> statuses(requests.size());
  const int rc = PMPI_Waitall(static_cast<int>(requests.size()),
                              requests.data(), statuses.data());
  if (rc != MPI_ERR_IN_STATUS) return rc;
  for (const MPI_Status& status : statuses) {
    if (status.MPI_ERROR != MPI_SUCCESS) return status.MPI_ERROR;
  }
  return rc;
}
}  // namespace

void OpenPostMatching() {
  if (g_post_comm != MPI_COMM_NULL) return;
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &g_post_comm) != MPI_SUCCESS) {
    g_post_comm = MPI_COMM_NULL;
    return;
  }
  PMPI_Comm_set_errhandler(g_post_comm, MPI_ERRORS_RETURN);
  int* tag_ub = nullptr;
  int flag = 0;
  PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  g_tag_ub = flag ? *tag_ub : 32767;  // MPI's least
}

// Posts that no start received (a program's erroneous PSCW calls, a window
// freed between post and start) still wait in MPI's queue, and MPICH 4.3
// and later refuse to free a communicator with unmatched messages (an
// error at MPI_Finalize). So they are received first, once every process
// has stopped posting (the barrier; MPI_Finalize is collective).
void ClosePostMatching() {
  if (g_post_comm == MPI_COMM_NULL) return;
  PMPI_Barrier(g_post_comm);
  for (;;) {
    int waiting = 0;
    MPI_Status status;
    if (PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, g_post_comm, &waiting,
                    &status) != MPI_SUCCESS ||
        !waiting) {
      break;
    }
    uint64_t count = 0;  // a post (empty) or an agent window's count
    PMPI_Recv(&count, sizeof count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG,
              g_post_comm, MPI_STATUS_IGNORE);
  }
  PMPI_Comm_free(&g_post_comm);
}

long ProposePostTag() {
  const long next = g_next_tag.load(std::memory_order_relaxed);
  if (g_post_comm == MPI_COMM_NULL || g_runtime.thread_multiple() ||
      next + 1 > g_tag_ub) {
    return -1;
  }
  return next;
}

long TakePostTag(const long* proposals, int count) {
  long tag = 0;
  for (int i = 0; i < count; ++i) {
    if (proposals[i] < 0) return -1;
    tag = std::max(tag, proposals[i]);
  }
  long next = g_next_tag.load(std::memory_order_relaxed);
  // Two tags: posts, and agent windows' counts (mpi_pscw.h).
  while (next <= tag + 1 && !g_next_tag.compare_exchange_weak(
                                next, tag + 2, std::memory_order_relaxed)) {
  }
  return tag;
}

PostMatching::~PostMatching() {
  if (sends_.empty() && count_sends_.empty()) return;
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (finalized) return;
  FinishPosts();
  FinishCounts();
}

int PostMatching::Post(const std::vector<int>& origins) {
  for (int origin : origins) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int rc =
        PMPI_Isend(nullptr, 0, MPI_BYTE, origin, tag_, g_post_comm, &request);
    if (rc != MPI_SUCCESS) return rc;
    sends_.push_back(request);
  }
  return MPI_SUCCESS;
}

int PostMatching::AwaitPosts(const std::vector<int>& targets) {
  if (targets.size() == 1) {
    return PMPI_Recv(nullptr, 0, MPI_BYTE, targets[0], tag_, g_post_comm,
                     MPI_STATUS_IGNORE);
  }
  std::vector<MPI_Request> receives(targets.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const int rc = PMPI_Irecv(nullptr, 0, MPI_BYTE, targets[i], tag_,
                              g_post_comm, &receives[i]);
    if (rc != MPI_SUCCESS) {
      // The posts already asked for are taken all the same (cancelling one
      // that matched would lose it, and the next start would wait for it).
      receives.resize(i);
      WaitEvery(receives);
      return rc;
    }
  }
  return WaitEvery(receives);
}

int PostMatching::FinishPosts() {
  if (sends_.empty()) return MPI_SUCCESS;
  const int rc = WaitEvery(sends_);
  sends_.clear();
  return rc;
}

int PostMatching::SendCount(int target, const UpdateCount& count) {
  UpdateCount& buffer = counts_out_.emplace_back(count);
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = PMPI_Isend(&buffer, sizeof buffer, MPI_BYTE, target, tag_ + 1,
                            g_post_comm, &request);
  if (rc == MPI_SUCCESS) count_sends_.push_back(request);
  return rc;
}

int PostMatching::FinishCounts() {
  const int rc = count_sends_.empty() ? MPI_SUCCESS : WaitEvery(count_sends_);
  count_sends_.clear();
  counts_out_.clear();
  return rc;
}

int PostMatching::ReceiveCountFrom(int origin) {
  UpdateCount count;
  const int rc = PMPI_Recv(&count, sizeof count, MPI_BYTE, origin, tag_ + 1,
                           g_post_comm, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS) {
    received_.updates += count.updates;
    received_.lost_links += count.lost_links;
  }
  return rc;
}

int PostMatching::ReceiveCounts(const std::vector<int>& origins,
                                UpdateCount* total) {
  for (; counts_in_ < origins.size(); ++counts_in_) {
    if (const int rc = ReceiveCountFrom(origins[counts_in_])) return rc;
  }
  *total = received_;
  counts_in_ = 0;
  received_ = {};
  return MPI_SUCCESS;
}

int PostMatching::ReceiveSomeCounts(const std::vector<int>& origins, bool* all,
                                    UpdateCount* total) {
  *all = false;
  for (; counts_in_ < origins.size(); ++counts_in_) {
    int arrived = 0;
    if (const int rc = PMPI_Iprobe(origins[counts_in_], tag_ + 1, g_post_comm,
                                   &arrived, MPI_STATUS_IGNORE)) {
      return rc;
    }
    if (!arrived) return MPI_SUCCESS;
    if (const int rc = ReceiveCountFrom(origins[counts_in_])) return rc;
  }
  *all = true;
  return ReceiveCounts(origins, total);  // nothing left to receive
}

}  // namespace rmashim
