// Creating and freeing managed windows: the one exchange in which the ranks
// announce their node segments and agree whether the shim manages the
// window, the targets each process reaches directly, and the MPI window
// handed to the application.
#include "shim/windows/window.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

#include "shim/process/runtime.h"
#include "shim/windows/segment_cache.h"
#include "shim/windows/served_windows.h"

namespace rmashim {

// What every rank tells the others when a window is created, in the one
// exchange creation does: its segment and its vote (NodeSegments), and its
// part of the window.
struct ManagedWindow::Announcement {
  SegmentId segment;
  long size;  // bytes of window memory
  long disp_unit;
  long address;         // of its window memory, in its own address space
  UserMemoryId memory;  // MPI_Win_create memory shared with node peers
  long post_tag;        // ProposePostTag (mpi_pscw.h)
};

namespace {

// What can still go wrong after the exchange, or-ed over the ranks.
constexpr int kMapFailed = 1;      // a node peer's segment could not be mapped
constexpr int kAttachRefused = 2;  // cross-memory attach refused (create)

}  // namespace

int ManagedWindow::JoinComm(MPI_Comm comm) {
  PMPI_Comm_rank(comm, &rank_);
  const int rc = PMPI_Comm_group(comm, &group_);
  node_index_ = NodeIndexOf(comm);
  node_size_ = 0;
  first_node_rank_ = -1;
  node_ranks_.clear();
  for (int r = 0; r < static_cast<int>(node_index_.size()); ++r) {
    if (node_index_[r] == MPI_UNDEFINED) continue;
    node_ranks_.push_back(r);  // NodeIndexOf numbers them in rank order
    if (node_size_++ == 0) first_node_rank_ = r;
  }
  single_node_ = node_size_ == static_cast<int>(node_index_.size());
  return rc;
}

// A fresh sync header at the start of this rank's segment (which may hold
// a freed window's; NodeSegments zeroes those anyway).
void ManagedWindow::InitHeader(std::byte* segment) {
  auto* header = new (segment) SegmentHeader;
  header->unstriped_slot_count = static_cast<uint32_t>(unstriped_slot_count());
  for (int r = 0; r < unstriped_slot_count(); ++r) {
    new (header->unstriped_slots() + r) UnstripedSlot;
  }
  for (int r = 0; r < post_counters(); ++r) {
    new (header->post_counters() + r) std::atomic<uint32_t>(0);
  }
}

// Each node-local rank's segment: the sync header, then (allocate flavor)
// `memory_bytes` of window memory. One segment per rank, so each is
// page-aligned and first-touched by its owner. The ranks announce their
// segments and parts of the window to each other in one allgather, which
// is also where they agree whether the window is managed (`vote`,
// `*agreed`, the same on every rank); then each maps its node peers'
// segments, and whether every rank could (and, create flavor, may attach
// to its peers' memory) is or-ed over the ranks in `*agreement`, started
// here and finished by Agreed (so the allocate flavor overlaps it with
// creating the MPI window). `*base`: this rank's window memory (allocate
// flavor: set here).
void ManagedWindow::Share(MPI_Comm comm, MPI_Aint memory_bytes, MPI_Aint size,
                          int disp_unit, Vote vote, std::byte** base,
                          Vote* agreed, Agreement* agreement) {
  constexpr int kAnnouncementLongs = sizeof(Announcement) / sizeof(long);
  static_assert(sizeof(Announcement) == kAnnouncementLongs * sizeof(long));
  const int comm_size = static_cast<int>(node_index_.size());
  const MPI_Aint header_bytes = this->header_bytes();
  std::vector<Announcement> all(comm_size);
  std::vector<SegmentId> ids(comm_size);
  for (int attempt = 0;; ++attempt) {
    Announcement mine{segments_.Prepare(header_bytes + memory_bytes, vote),
                      size,
                      disp_unit,
                      0,
                      own_memory_,
                      ProposePostTag()};
    if (std::byte* segment = segments_.own()) {
      // Before the exchange: no peer uses the header before the agreement
      // below, which completes on no rank before every rank has started it.
      InitHeader(segment);
      if (flavor_ == Flavor::kAllocate) *base = segment + header_bytes;
    }
    mine.address = reinterpret_cast<long>(*base);
    PMPI_Allgather(&mine, kAnnouncementLongs, MPI_LONG, all.data(),
                   kAnnouncementLongs, MPI_LONG, comm);
    for (int r = 0; r < comm_size; ++r) ids[r] = all[r].segment;
    *agreed = NodeSegments::Agree(ids);
    // /dev/shm exhausted on some rank while segment caches hold memory:
    // every rank sees the same announcements, so all drop theirs and,
    // once no rank maps any of them any more, try once more together.
    if (attempt > 0 || !NodeSegments::ShouldRetry(ids)) break;
    segment_cache().Flush();
    PMPI_Barrier(comm);
  }
  std::vector<long> post_tags(comm_size);
  for (int r = 0; r < comm_size; ++r) post_tags[r] = all[r].post_tag;
  pscw_.mpi_posts.SetTag(TakePostTag(post_tags.data(), comm_size));
  if (*agreed != Vote::kManage) {
    segments_.Drop();
    return;
  }
  agreement->failed = segments_.Map(ids, node_index_, rank_) ? 0 : kMapFailed;
  if (agreement->failed == 0) {
    SetTargets(all.data(), header_bytes);
    if (flavor_ == Flavor::kCreate && !CanAttach()) {
      agreement->failed = kAttachRefused;
    }
  }
  PMPI_Iallreduce(&agreement->failed, &agreement->all_failed, 1, MPI_INT,
                  MPI_BOR, comm, &agreement->request);
}

// Completes Share's agreement: the failures or-ed over the ranks
// (kAttachRefused; kMapFailed turns `*agreed` into kNoMemory, and the
// caller frees what it made since and leaves the window to MPI).
int ManagedWindow::Agreed(Agreement* agreement, Vote* agreed) {
  PMPI_Wait(&agreement->request, MPI_STATUS_IGNORE);
  if (agreement->all_failed & kMapFailed) {
    *agreed = Vote::kNoMemory;
  } else {
    segments_.Mapped();  // every peer has mapped this rank's segment
  }
  return agreement->all_failed;
}

void ManagedWindow::SetTargets(const Announcement* all, MPI_Aint header_bytes) {
  const int comm_size = static_cast<int>(node_index_.size());
  targets_.resize(comm_size);
  comm_size_ = comm_size;
  unprofiled_ranks_ = profile_ != nullptr ? 0 : comm_size;
  locks_.resize(comm_size);
  pscw_.posts_consumed.resize(comm_size);
  for (int r = 0; r < comm_size; ++r) {
    Target& t = targets_[r];
    t.size = all[r].size;
    t.disp_unit = static_cast<int>(all[r].disp_unit);
    if (node_index_[r] == MPI_UNDEFINED) continue;
    std::byte* segment = segments_.segment(node_index_[r]);
    t.header = reinterpret_cast<SegmentHeader*>(segment);
    switch (flavor_) {
      case Flavor::kAllocate:
        t.base = segment + header_bytes;
        break;
      case Flavor::kShared: {
        MPI_Aint seg_size = 0;
        int seg_unit = 0;
        void* mapped = nullptr;
        PMPI_Win_shared_query(app_win_, r, &seg_size, &seg_unit, &mapped);
        t.base = static_cast<std::byte*>(mapped);
        break;
      }
      case Flavor::kCreate:
        t.base = reinterpret_cast<std::byte*>(all[r].address);
        if (r != rank_) t.pid = static_cast<pid_t>(all[r].segment.pid);
        if (r != rank_ && all[r].memory.fd >= 0 && t.size > 0) {
          // Shared by its owner: mapped here, reached as allocate memory is;
          // else through cross-memory attach.
          std::byte* mapped = peer_memory_.emplace_back().Map(
              t.pid, all[r].memory, static_cast<size_t>(t.size));
          if (mapped != nullptr) {
            t.base = mapped;
            t.pid = 0;
          }
        }
        break;
    }
    if (t.pid == 0) t.direct_size = t.size;
  }
  target_locks_.resize(comm_size);
  for (int r = 0; r < comm_size; ++r) {
    SegmentHeader* header = targets_[r].header;
    target_locks_[r] = header != nullptr ? &header->lock_words : nullptr;
  }
  MapAllShards();
}

// The `all` shards (shm_lock.h) of windows with locks in shared memory:
// one per kRanksPerAllShard node ranks, in the headers of the node's
// first ranks (window ranks 0, 1, ... on a single-node window).
// RMASHIM_TEST_RANKS_PER_ALL_SHARD (the same on every rank) sets another
// shard size, so tests on a few ranks can exercise several shards.
void ManagedWindow::MapAllShards() {
  if (!lock_gates()) return;
  static const int per_shard = [] {
    const char* env = std::getenv("RMASHIM_TEST_RANKS_PER_ALL_SHARD");
    const int n = env != nullptr ? std::atoi(env) : 0;
    return n > 0 ? n : kRanksPerAllShard;
  }();
  // Node rank i's window rank: i itself on a single-node window.
  const auto header = [&](int i) {
    return targets_[single_node_ ? i : node_ranks_[i]].header;
  };
  const int ranks = single_node_ ? comm_size_ : node_size_;
  lock_index_ = single_node_ ? rank_ : node_index_[rank_];
  const int shards = (ranks + per_shard - 1) / per_shard;
  all_shards_.resize(shards);
  for (int i = 0; i < shards; ++i) all_shards_[i] = &header(i)->lock_words;
  announced_.resize(ranks);
  visible_.resize(ranks);
  for (int i = 0; i < ranks; ++i) {
    announced_[i] = &header(i)->exclusive_announced;
    visible_[i] = &header(i)->lock_all_visible;
  }
  all_view_ = {all_shards_.data(), shards,         announced_.data(), ranks,
               LockAllBiasOf(),    visible_.data()};
}

// Whether this process may read every node-local peer's memory with
// process_vm_readv (Yama or container policies may refuse). Local: Share
// agrees on it.
bool ManagedWindow::CanAttach() const {
  for (const Target& t : targets_) {
    if (t.pid == 0 || t.size == 0) continue;
    char byte;
    iovec local{&byte, 1}, remote{t.base, 1};
    if (process_vm_readv(t.pid, &local, 1, &remote, 1, 0) != 1) return false;
  }
  return true;
}

// Headers need no barrier before use: each rank initialized its own before
// the exchange in Share, whose agreement completes on no rank before every
// rank has started it.
void ManagedWindow::Finish(MPI_Comm comm) {
  exclusive_share_.set_threaded(g_runtime.thread_multiple());
  const bool plain =
      single_node_ && !g_runtime.thread_multiple() && profile_ == nullptr;
  plain_ranks_ = plain ? comm_size_ : 0;
  if (single_node_) {
    exclusive_share_.set_announcement(
        &targets_[rank_].header->exclusive_announced,
        all_shards_.size() == 1 ? &all_shards_[0]->all : nullptr,
        all_view_.bias);
  }
  if (unstriped_slot_count() > 0 && !g_runtime.thread_multiple() &&
      UnstripedAtomicsRegistered()) {
    unstriped_slot_ = node_index_[rank_];
    deferred_.set_slot(unstriped_slot_);
    for (Target& t : targets_) {
      if (t.node_local())
        t.own_slot = &t.header->unstriped_slots()[unstriped_slot_];
    }
  }
  // On a single-node window every target is node-local, so each got its
  // own_slot above.
  lane_ranks_ = plain && unstriped_slot_ >= 0 ? comm_size_ : 0;
  if (!single_node_) {
    // For FlushEndpoint (mpi_flush.h), in MPI's fence and PSCW epochs.
    MPI_Group world;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    std::vector<int> ranks(comm_size_);
    for (int r = 0; r < comm_size_; ++r) ranks[r] = r;
    world_ranks_.resize(comm_size_);
    PMPI_Group_translate_ranks(group_, comm_size_, ranks.data(), world,
                               world_ranks_.data());
    PMPI_Group_free(&world);
    for (int& r : world_ranks_) r = r == MPI_UNDEFINED ? -1 : r;
    // Ranks from another MPI_COMM_WORLD: MPICH matches posts itself.
    if (std::count(world_ranks_.begin(), world_ranks_.end(), -1) != 0) {
      pscw_.mpi_posts.SetTag(-1);
    }
    JoinAgent(comm);
    return;
  }
  PMPI_Win_lock_all(MPI_MODE_NOCHECK, app_win_);
  holds_mpi_epoch_ = true;
}

int ManagedWindow::Allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                            MPI_Comm comm, void* baseptr, ManagedWindow** out,
                            Vote vote, Vote* agreed) {
  Vote agreed_here = Vote::kManage;
  if (agreed == nullptr) agreed = &agreed_here;
  std::unique_ptr<ManagedWindow> w(new ManagedWindow);
  w->flavor_ = Flavor::kAllocate;
  // Every rank takes part in the agreement, whatever failed here.
  if (w->JoinComm(comm) != MPI_SUCCESS) vote = Vote::kDecline;
  std::byte* my_base = nullptr;
  Agreement agreement;
  w->Share(comm, size, size, disp_unit, vote, &my_base, agreed, &agreement);
  if (*agreed != Vote::kManage) return MPI_ERR_NO_MEM;
  // The application's window: a real MPI window over the shared memory, so
  // remote ranks reach it through MPI and unwrapped calls work on it. Its
  // memory is shared, as MPI_Win_get_info's alloc_shm says for MPICH's own
  // MPI_Win_allocate windows.
  MPI_Info app_info;
  if (info == MPI_INFO_NULL) {
    PMPI_Info_create(&app_info);
  } else {
    PMPI_Info_dup(info, &app_info);
  }
  PMPI_Info_set(app_info, "alloc_shm", "true");
  const int rc =
      PMPI_Win_create(my_base, size, disp_unit, app_info, comm, &w->app_win_);
  PMPI_Info_free(&app_info);
  w->Agreed(&agreement, agreed);
  if (*agreed != Vote::kManage) {  // on every rank: MPI's window after all
    if (w->app_win_ != MPI_WIN_NULL) PMPI_Win_free(&w->app_win_);
    w->segments_.Drop();
    return MPI_ERR_NO_MEM;
  }
  if (rc != MPI_SUCCESS) return rc;
  w->Finish(comm);
  // What MPI reports as MPI_WIN_BASE (MPICH says NULL for size 0).
  void* reported_base = my_base;
  int flag = 0;
  PMPI_Win_get_attr(w->app_win_, MPI_WIN_BASE, &reported_base, &flag);
  *static_cast<void**>(baseptr) = reported_base;
  *out = w.release();
  return MPI_SUCCESS;
}

int ManagedWindow::Adopt(Flavor flavor, MPI_Win app_win, void* base,
                         MPI_Aint size, int disp_unit, MPI_Comm comm,
                         ManagedWindow** out, Vote vote, Vote* agreed,
                         const UserMemoryId& memory) {
  *out = nullptr;
  Vote agreed_here = Vote::kManage;
  if (agreed == nullptr) agreed = &agreed_here;
  std::unique_ptr<ManagedWindow> w(new ManagedWindow);
  w->flavor_ = flavor;
  w->app_win_ = app_win;
  w->own_memory_ = memory;
  // Every rank takes part in the agreement, whatever failed here.
  if (w->JoinComm(comm) != MPI_SUCCESS) vote = Vote::kDecline;
  // Before the exchange, so every peer allows attaching before any rank
  // tries (CanAttach); given back with `w` if the window is not managed.
  if (flavor == Flavor::kCreate && w->has_node_peers() &&
      vote == Vote::kManage) {
    w->cross_memory_grant_.Hold();
  }
  auto* my_base = static_cast<std::byte*>(base);
  Agreement agreement;
  w->Share(comm, 0, size, disp_unit, vote, &my_base, agreed, &agreement);
  const int failed =
      *agreed == Vote::kManage ? w->Agreed(&agreement, agreed) : 0;
  if (*agreed != Vote::kManage) w->segments_.Drop();
  if (*agreed != Vote::kManage || failed != 0) {
    w->app_win_ = MPI_WIN_NULL;  // still the application's
    return *agreed != Vote::kManage ? MPI_ERR_NO_MEM : MPI_SUCCESS;
  }
  w->Finish(comm);
  *out = w.release();
  return MPI_SUCCESS;
}

// Whether the agents' transport reaches the agent of every rank of the
// window on another node (endpoints are made here, where they would be at
// the first request otherwise).
bool ManagedWindow::ReachesRemoteAgents() const {
  for (int r = 0; r < comm_size_; ++r) {
    if (node_index_[r] != MPI_UNDEFINED) continue;
    if (world_ranks_[r] < 0 || !served_windows().Reaches(world_ranks_[r])) {
      return false;
    }
  }
  return true;
}

// Windows spanning nodes: registers with this process's agent and learns
// every rank's id (collective over `comm`). The window is agent-served when
// every rank has an agent and a rank in MPI_COMM_WORLD (agents are found
// by world rank) and every rank's transport reaches the agents of its
// window peers on other nodes; otherwise no rank sends its agents
// anything, and where an agent runs on every rank the window's first rank
// says so (once per process).
void ManagedWindow::JoinAgent(MPI_Comm comm) {
  own_agent_id_ = served_windows().Register(this);
  // Per rank: its agent's id for the window (-1 where it reaches not every
  // remote peer's agent), its node's first rank, and whether it calls MPI
  // from several threads (one exchange, so every rank decides the same).
  const bool reaches = own_agent_id_ >= 0 && ReachesRemoteAgents();
  const int mine[4] = {reaches ? own_agent_id_ : -1, first_node_rank_,
                       g_runtime.thread_multiple() ? 1 : 0,
                       own_agent_id_ >= 0 ? 1 : 0};
  std::vector<int> all(size_t{4} * comm_size_);
  PMPI_Allgather(mine, 4, MPI_INT, all.data(), 4, MPI_INT, comm);
  std::vector<int> ids(comm_size_);
  bool threaded = false;
  bool agents_everywhere = true;
  for (int r = 0; r < comm_size_; ++r) {
    agents_everywhere = agents_everywhere && all[4 * size_t(r) + 3] != 0;
  }
  for (int r = 0; r < comm_size_; ++r) {
    ids[r] = all[4 * size_t(r)];
    threaded = threaded || all[4 * size_t(r) + 2] != 0;
    if (ids[r] < 0 || world_ranks_[r] < 0) {
      static std::atomic<bool> warned{false};
      if (agents_everywhere && rank_ == 0 && !warned.exchange(true)) {
        std::fprintf(stderr,
                     "rmashim: agent: a window's rank %d cannot reach every "
                     "remote peer's agent over UCX: the window is MPI's for "
                     "what needs the agents\n",
                     r);
      }
      served_windows().Unregister(own_agent_id_);
      own_agent_id_ = -1;
      return;
    }
  }
  agent_ids_ = std::move(ids);
  agent_pending_.assign(comm_size_, 0);
  agent_fence_.sent.assign(comm_size_, {});
  // Locks through the agents (agent_locks.h) need one thread calling MPI
  // on every rank: an origin waits for a grant on the link its other
  // requests use.
  if (!threaded) {
    lock_agent_ranks_.resize(comm_size_);
    for (int r = 0; r < comm_size_; ++r) {
      lock_agent_ranks_[r] = all[4 * size_t(r) + 1];
      if (lock_agent_ranks_[r] == r && r != first_node_rank_) {
        remote_lock_agents_.push_back(r);
      }
    }
    locks_via_agent_ = true;
    MapAllShards();
  }
  // This process's agent may serve the window from the moment another
  // rank's creation returns: a rank that left the exchange above may send
  // a lock at once, while this one still sets the window up. So no rank
  // returns before every rank's set-up is done.
  PMPI_Barrier(comm);
}

Verdict ManagedWindow::OpenMpiPassiveEpoch() {
  if (holds_mpi_epoch_) return Verdict::Served();
  const int rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, app_win_);
  holds_mpi_epoch_ = rc == MPI_SUCCESS;
  return Verdict::Raised(rc);
}

Verdict ManagedWindow::CloseMpiPassiveEpoch() {
  if (!holds_mpi_epoch_ || single_node_) return Verdict::Served();
  holds_mpi_epoch_ = false;
  return Verdict::Raised(PMPI_Win_unlock_all(app_win_));
}

ManagedWindow::~ManagedWindow() {
  if (holds_mpi_epoch_) PMPI_Win_unlock_all(app_win_);
  if (app_win_ != MPI_WIN_NULL) PMPI_Win_free(&app_win_);
  // Only now: no rank returns from MPI_Win_free before every rank has
  // called it (MPI-3 11.2.5), so every origin has ended its epochs, and
  // with them had its updates to this process applied (agent.h); before
  // it, a rank still in an epoch could send this process's agent more.
  served_windows().Unregister(own_agent_id_);
  UnshareUserMemory(own_memory_);
  if (agent_fence_.comm != MPI_COMM_NULL) PMPI_Comm_free(&agent_fence_.comm);
  if (group_ != MPI_GROUP_NULL) PMPI_Group_free(&group_);
}

std::vector<int> ManagedWindow::ToWindowRanks(MPI_Group group) const {
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = i;
  PMPI_Group_translate_ranks(group, n, in.data(), group_, out.data());
  return out;
}

int CountServed(const ManagedWindow& w, OpKind kind, int target, int count,
                MPI_Datatype type) {
  CountOp(w.profile(), kind, w.reach(target), target, count, type);
  return MPI_SUCCESS;
}

}  // namespace rmashim
