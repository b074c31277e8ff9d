// A window managed by the shim: the application's MPI window laid over
// node-shared memory, plus what the fast path needs to reach node-local
// targets directly ("nested windows", mpi3-shared-memory-for-pgas).
#ifndef RMASHIM_SHIM_WINDOWS_WINDOW_H_
#define RMASHIM_SHIM_WINDOWS_WINDOW_H_

#include <mpi.h>

#include <sys/types.h>

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "shim/profile/profile.h"
#include "shim/sync/mpi_pscw.h"
#include "shim/sync/shm_lock.h"
#include "shim/sync/word_atomics.h"
#include "shim/windows/deferred_atomics.h"
#include "shim/windows/epoch_state.h"
#include "shim/windows/node_segments.h"
#include "shim/windows/ptracer.h"
#include "shim/windows/shared_user_memory.h"
#include "shim/windows/verdict.h"

namespace rmashim {

// Reader-writer locks that keep accumulates element-wise atomic (MPI-3
// 11.7.1) while letting large ones run as plain loops. Every accumulate
// takes the stripe of each target page (16 KiB) it touches: shared when
// it updates elements with CPU atomics (small updates of word-sized
// types), exclusive when it uses plain loads and stores (large updates,
// and types too wide for CPU atomics: long double, complex, MINLOC/MAXLOC
// pairs). So a plain update never overlaps any other update of the same
// element, and atomic updates only overlap each other.
inline constexpr int kStripes = 256;
// One stripe per 16 KiB: a 1 MiB plain update takes 64 stripe locks, not
// 256 (4 KiB stripes cost get_accumulate 5-7% at 1 MiB in
// bench/rma_accumulate, 16 KiB 0-4%, 64 KiB no better than 16).
inline constexpr int kStripePageShift = 14;
inline constexpr MPI_Aint kStripePage = MPI_Aint{1} << kStripePageShift;

// The start of every rank's shared segment. Then come, on windows whose
// ranks all share one node (there window rank = node index): one
// UnstripedSlot per rank (word_atomics.h; allocate and shared flavors only),
// one PSCW post counter per rank (how often that rank has posted to this
// one), then padding to a page boundary, then the window's memory. So a
// node-local segment's header grows with the node's rank count, never with
// the communicator's.
struct alignas(64) SegmentHeader {
  LockWords lock_words;
  // PSCW: origins that have completed an access epoch on this target.
  alignas(64) std::atomic<uint64_t> completes{0};
  // The node barrier's flags (active_target.cc: NodeBarrier): in round k
  // of a barrier, the node rank 2^k below this one adds 1 to entry k.
  // Counters of barriers so far, so nothing is ever reset.
  static constexpr int kBarrierRounds = 16;  // nodes of up to 65536 ranks
  alignas(64) std::atomic<uint32_t> barrier_arrivals[kBarrierRounds] = {};
  // Word atomics without stripes (word_atomics.h): the mode word, and how
  // many slots follow the header (0: the protocol is off for this target).
  alignas(64) std::atomic<uint64_t> word_mode{kWordModeUnstriped};
  uint32_t unstriped_slot_count = 0;
  // Set while this rank holds exclusive locks announced, not in the `all`
  // shards (shm_lock.h); written by this rank only, read by lock_all. On
  // the same line, set while it holds a lock_all by the bias; read by
  // exclusive lockers that revoke the bias.
  alignas(64) AnnounceWord exclusive_announced{0};
  VisibleWord lock_all_visible{0};
  // The window's lock_all bias: window rank 0's is used (shm_lock.h).
  LockAllBias lock_all_bias;
  alignas(64) StripeWord stripes[kStripes];

  UnstripedSlot* unstriped_slots() {
    return reinterpret_cast<UnstripedSlot*>(this + 1);
  }
  std::atomic<uint32_t>* post_counters() {
    return reinterpret_cast<std::atomic<uint32_t>*>(unstriped_slots() +
                                                    unstriped_slot_count);
  }
};
static_assert(sizeof(SegmentHeader) % alignof(UnstripedSlot) == 0);

// Header bytes before the window memory, with `slots` unstriped slots and
// `post_counters` counters: keeps the memory page-aligned.
inline MPI_Aint HeaderBytes(int slots, int post_counters) {
  constexpr MPI_Aint kPage = 4096;
  const MPI_Aint bytes = sizeof(SegmentHeader) + sizeof(UnstripedSlot) * slots +
                         sizeof(uint32_t) * post_counters;
  return (bytes + kPage - 1) / kPage * kPage;
}

// The node-sized arrays after each rank's header. Only windows whose ranks
// all share one node run PSCW (post counters) and unstriped word atomics
// (slots) in shared memory, so only they have any, one per node rank; a
// window spanning nodes has none, however large its communicator. Not
// MPI_Win_create windows' slots: their node-local peers are reached through
// cross-memory attach, which the unstriped protocol does not cover.
struct HeaderArrays {
  int unstriped_slots = 0;
  int post_counters = 0;
};
inline HeaderArrays HeaderArraysFor(bool single_node, bool create_flavor,
                                    int node_size) {
  if (!single_node) return {};
  return {create_flavor ? 0 : node_size, node_size};
}

// One rank of the window's communicator as seen from this process.
struct Target {
  // Node-local targets: the window memory, mapped here; or, when `pid` is
  // set, its address in that process (reached with process_vm_readv/writev).
  std::byte* base = nullptr;
  SegmentHeader* header = nullptr;  // sync state; null off-node
  MPI_Aint size = 0;                // bytes
  // `size` when loads and stores through `base` reach the target's memory
  // (node-local, mapped here); -1 otherwise. One bounds check answers both
  // questions on the fast paths (access.h: DirectWord).
  MPI_Aint direct_size = -1;
  // This process's unstriped slot in `header` (word_atomics.h); null when
  // it has none (ManagedWindow::unstriped_slot() < 0) or off-node.
  UnstripedSlot* own_slot = nullptr;
  pid_t pid = 0;
  int disp_unit = 1;
  bool node_local() const { return header != nullptr; }
};
// 48 bytes: the fast paths index the target array with two instructions.
static_assert(sizeof(Target) == 48);

// Which MPI call created the window.
enum class Flavor : uint8_t {
  kAllocate,  // MPI_Win_allocate: memory is ours, in node-shared segments
  kShared,    // MPI_Win_allocate_shared: the application's shared memory
  kCreate,    // MPI_Win_create: user memory of other processes, via CMA
};

class ManagedWindow {
 public:
  // Collective over `comm`, like MPI_Win_allocate. On success `*out` owns
  // every MPI object it created. MPI_ERR_NO_MEM (on every rank) when the
  // ranks did not all vote kManage or some rank could not get node-shared
  // memory (`*agreed` says which): the caller falls back to MPI.
  static int Allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                      MPI_Comm comm, void* baseptr, ManagedWindow** out,
                      Vote vote = Vote::kManage, Vote* agreed = nullptr);
  // Collective: takes over `app_win`, just created by the application's
  // MPI_Win_allocate_shared or MPI_Win_create over `base`. Sets `*out` to
  // nullptr (and leaves `app_win` alone) on every rank when the window
  // cannot be managed: MPI_ERR_NO_MEM as Allocate, or MPI_SUCCESS when the
  // kernel refuses cross-memory attach. `memory`: MPI_Win_create memory
  // made node-shared before MPI saw it (shared_user_memory.h), which the
  // window unshares when it goes (at once when it is not managed).
  static int Adopt(Flavor flavor, MPI_Win app_win, void* base, MPI_Aint size,
                   int disp_unit, MPI_Comm comm, ManagedWindow** out,
                   Vote vote = Vote::kManage, Vote* agreed = nullptr,
                   const UserMemoryId& memory = {});
  ~ManagedWindow();  // frees the MPI objects (collective, like MPI_Win_free)

  ManagedWindow(const ManagedWindow&) = delete;
  ManagedWindow& operator=(const ManagedWindow&) = delete;

  MPI_Win app_win() const { return app_win_; }
  Flavor flavor() const { return flavor_; }
  int rank() const { return rank_; }
  int comm_size() const { return comm_size_; }
  const Target& target(int rank) const { return targets_[rank]; }
  Reach reach(int rank) const {
    return rank == rank_                 ? Reach::kSelf
           : targets_[rank].node_local() ? Reach::kNode
                                         : Reach::kRemote;
  }
  // The profile record (profile.h); nullptr when profiling is off.
  WindowProfile* profile() const { return profile_; }
  // Whether the window is plain: profiling off, one MPI thread, every rank
  // on this node. Fixed once the window is created and its profile set.
  bool plain() const { return plain_ranks_ != 0; }
  // A window rank of a plain window: one unsigned compare for both (the
  // bound is comm_size() when plain, else 0), for the fast paths.
  bool PlainRank(int rank) const {
    return static_cast<unsigned>(rank) < static_cast<unsigned>(plain_ranks_);
  }
  // A window rank of a plain window where this process has an unstriped
  // slot in every target (so every Target::own_slot is set): the word
  // lane's one compare (word_lane.h).
  bool LaneRank(int rank) const {
    return static_cast<unsigned>(rank) < static_cast<unsigned>(lane_ranks_);
  }
  // comm_size() when profiling is off, else 0: put's and get's inline
  // path admits targets below it (one compare for the rank and the
  // profile; profiled windows take the path that counts).
  int unprofiled_ranks() const { return unprofiled_ranks_; }
  void SetProfile(WindowProfile* p) {
    profile_ = p;
    unprofiled_ranks_ = p != nullptr ? 0 : comm_size_;
    if (p != nullptr) plain_ranks_ = lane_ranks_ = 0;
  }

  // Every rank on this node: locks, fence and PSCW are the shim's own, in
  // shared memory (a window spanning nodes uses MPI's fence and PSCW).
  bool locks_in_shm() const { return single_node_; }
  // Passive-target locks in the gates of shm_lock.h: on a single-node
  // window, and where every rank runs the agent and one thread calls MPI
  // (remote origins' locks then taken by an agent, agent_locks.h); else
  // MPI's own locks, which exclude remote origins too.
  bool lock_gates() const { return single_node_ || locks_via_agent_; }
  bool locks_via_agent() const { return locks_via_agent_; }
  // The window rank whose agent takes locks on `rank` for remote origins
  // (the first of `rank`'s node), and those of the other nodes, once each.
  int lock_agent_rank(int rank) const { return lock_agent_ranks_[rank]; }
  const std::vector<int>& remote_lock_agents() const {
    return remote_lock_agents_;
  }
  // Windows whose locks are the agents' hold the application's window in an
  // MPI lock_all(MPI_MODE_NOCHECK) epoch from their first passive epoch (so
  // operations passed to MPI have one) until MPI's fence or PSCW needs the
  // window out of it (wrap_active.cc). MPI raises what fails.
  Verdict OpenMpiPassiveEpoch();
  Verdict CloseMpiPassiveEpoch();

  // Operations the shim passes through to MPI go to the application's
  // window. On a single-node window the shim serves every epoch itself and
  // keeps that window in an MPI lock_all(MPI_MODE_NOCHECK) epoch for its
  // whole life, so passed-through operations have an MPI epoch; they are
  // flushed at the next synchronization. (A separate internal window would
  // cost MPICH a second context id per window.)
  // Whether the shim holds that lock_all epoch (single-node windows).
  bool holds_mpi_epoch() const { return holds_mpi_epoch_; }
  // Node-local ranks of the window, and the lowest window rank among them
  // (whose header holds the node's fence barrier words).
  bool has_node_peers() const { return node_size_ > 1; }
  int node_size() const { return node_size_; }
  // This process's index among the window's node-local ranks, and the
  // window rank of the node-local rank with index `i`.
  int node_index() const { return node_index_[rank_]; }
  int node_rank(int i) const { return node_ranks_[i]; }
  // Counts one more node barrier passed on this window and returns how
  // many this process has passed (NodeBarrier, active_target.cc).
  uint32_t PassNodeBarrier() { return ++node_barriers_; }
  int first_node_rank() const { return first_node_rank_; }

  // Node-local targets' lock words, from a dense array (one scaled load on
  // the lock paths, where Target's would take three instructions more).
  LockWords& lock_words(int rank) { return *target_locks_[rank]; }
  // The `all` gate's shards (shm_lock.h), and the one this rank's
  // lock_all enters.
  const AllShards& all_shards() const { return all_view_; }
  LockWords& own_all_shard() {
    return *all_shards_[lock_index_ % all_shards_.size()];
  }
  // This rank's lock_all visibility word (biased lock_all, shm_lock.h).
  VisibleWord& own_lock_all_visible() { return *visible_[lock_index_]; }
  SegmentHeader& header(int rank) { return *targets_[rank].header; }
  // PSCW post counters in each header: one per rank on single-node windows,
  // none on windows spanning nodes (their PSCW is MPI's).
  int post_counters() const { return header_arrays().post_counters; }
  // Unstriped slots in each header (word_atomics.h): one per rank on
  // single-node windows whose memory every rank maps (not MPI_Win_create).
  int unstriped_slot_count() const { return header_arrays().unstriped_slots; }
  HeaderArrays header_arrays() const {
    return HeaderArraysFor(single_node_, flavor_ == Flavor::kCreate,
                           node_size_);
  }
  MPI_Aint header_bytes() const {
    return HeaderBytes(unstriped_slot_count(), post_counters());
  }
  // This process's slot in every target's header, or -1 when it must take
  // the stripes (no slots, MPI_THREAD_MULTIPLE, no asymmetric fence).
  int unstriped_slot() const { return unstriped_slot_; }
  // Window ranks of a group that is a subset of the window's group.
  std::vector<int> ToWindowRanks(MPI_Group group) const;
  // A window rank's rank in MPI_COMM_WORLD (windows spanning nodes only;
  // -1 elsewhere, or for a process outside MPI_COMM_WORLD).
  int world_rank(int rank) const {
    return rank < static_cast<int>(world_ranks_.size()) ? world_ranks_[rank]
                                                        : -1;
  }

  // ---- This process's epochs on the window, as origin ----
  // The current access epoch (read without the state mutex: EpochWord).
  AccessEpoch epoch() const { return epoch_; }
  // A new access epoch may start from no epoch, or right after a fence that
  // did not say MPI_MODE_NOSUCCEED (MPICH accepts that too).
  bool may_start_epoch() const {
    const AccessEpoch e = epoch_;  // one read (IsPassive)
    return e == AccessEpoch::kNone || e == AccessEpoch::kFence;
  }
  // Changes the epoch between the kinds that give every target (fence,
  // lock_all) and the others, keeping every TargetLockState::direct true
  // exactly while it gives every target: the fast paths then test one byte.
  // (Lock and PSCW epochs set and clear their targets' bytes themselves.)
  void SetEpoch(AccessEpoch e) {
    const bool every = GivesEveryTarget(e);
    if (GivesEveryTarget(epoch_) != every) {
      for (TargetLockState& s : locks_) s.direct = every;
    }
    epoch_ = e;
  }
  // This process's state towards window rank `rank` (epoch_state.h), and
  // all of them.
  TargetLockState& lock_state(int rank) { return locks_[rank]; }
  const TargetLockState& lock_state(int rank) const { return locks_[rank]; }
  std::span<TargetLockState> lock_states() { return locks_; }

  // Lock epochs: this process now holds a lock on the target whose
  // lock_state() is `state` (MPI_Win_lock succeeded), or released it. The
  // inline paths take `state` before the lock word's atomic, which the
  // compiler cannot move loads across, so it is not looked up again. The
  // whole state is written in one store, so the inline unlock's one 8-byte
  // load of it is forwarded from that store (a lock epoch has no PSCW
  // fields set). The epoch ends with the last lock, and with it what was
  // passed to MPI (the unlocks completed it).
  void NoteLocked(TargetLockState& state, LockMode mode, bool nocheck) {
    state = {.direct = true, .mode = mode, .nocheck = nocheck};
    epoch_ = AccessEpoch::kLock;
    ++locks_held_;
  }
  void NoteUnlocked(TargetLockState& state) {
    state = {};
    if (--locks_held_ == 0) [[likely]] {  // most epochs lock one target
      epoch_ = AccessEpoch::kNone;
      any_mpi_ops_pending_ = false;
    }
  }
  // This process's exclusive locks (shm_lock.h).
  ExclusiveShare& exclusive_share() { return exclusive_share_; }
  // The current lock_all: taken with MPI_MODE_NOCHECK, held by the bias
  // (shm_lock.h).
  bool lock_all_nocheck() const { return lock_all_nocheck_; }
  void set_lock_all_nocheck(bool nocheck) { lock_all_nocheck_ = nocheck; }
  bool lock_all_biased() const { return lock_all_biased_; }
  void set_lock_all_biased(bool biased) { lock_all_biased_ = biased; }

  // Operations handed to MPI and not yet completed (passthrough.h): `rank`
  // now has some of kind `pending` (the marks only add up until completed).
  void NoteMpiPending(int rank, MpiPending pending) {
    MpiPending& mark = locks_[rank].mpi_pending;
    mark = mark | pending;
    any_mpi_ops_pending_ = true;
  }
  // Whether any target may have some (false: none has).
  bool mpi_ops_pending() const { return any_mpi_ops_pending_; }
  // MPI completed `rank`'s, or every target's.
  void MpiPendingDone(int rank) {
    locks_[rank].mpi_pending = MpiPending::kNothing;
  }
  void AllMpiPendingDone() {
    for (TargetLockState& s : locks_) s.mpi_pending = MpiPending::kNothing;
    any_mpi_ops_pending_ = false;
  }
  // Data-movement calls handed to MPI (PassThrough), for
  // rmashim_win_passed_to_mpi.
  void CountPassedToMpi() {
    passed_to_mpi_.fetch_add(1, std::memory_order_relaxed);
  }
  long long passed_to_mpi() const { return passed_to_mpi_.load(); }

  // Serializes this process's bookkeeping on the window when several threads
  // may call MPI (never held while spinning on a shared-memory lock).
  std::mutex& state_mutex() { return state_mutex_; }
  // PSCW state of this process (epoch_state.h).
  PscwState& pscw() { return pscw_; }
  const PscwState& pscw() const { return pscw_; }
  // Word accumulates queued until the next synchronization
  // (deferred_atomics.h); only with an unstriped slot.
  DeferredAtomics& deferred() { return deferred_; }
  const DeferredAtomics& deferred() const { return deferred_; }

  // Windows spanning nodes whose every rank runs the agent (agent.h):
  // remote targets' accumulates go to their agents, node-local ones are
  // served in shared memory, in passive epochs.
  bool agent_served() const { return !agent_ids_.empty(); }
  // `rank`'s id for this window at its agent.
  int agent_id(int rank) const { return agent_ids_[rank]; }
  // Targets with updates sent to their agents since their last flush
  // (agent_origin.cc): `rank` was sent one; whether it was; it was
  // flushed; whether any target may have some; every target was flushed.
  void NoteAgentUpdate(int rank) {
    agent_pending_[rank] = 1;
    any_agent_pending_ = true;
  }
  bool agent_pending(int rank) const { return agent_pending_[rank] != 0; }
  void AgentPendingDone(int rank) { agent_pending_[rank] = 0; }
  bool any_agent_pending() const { return any_agent_pending_; }
  void AllAgentPendingDone() { any_agent_pending_ = false; }
  // Counts for completing fence epochs through the agents (epoch_state.h).
  AgentFenceCounts& agent_fence() { return agent_fence_; }
  // Fence and MPI's PSCW epochs on this window have their accumulates
  // applied by the agents: an agent window whose posts the shim matches
  // (mpi_pscw.h: its messages carry PSCW's counts; none under
  // MPI_THREAD_MULTIPLE, where fences of two windows could make their
  // count communicators at once).
  bool agent_active_target() const {
    return agent_served() && pscw_.mpi_posts.is_open();
  }
  // The current epoch is one of those: updates sent to agents now are
  // counted where sent and where applied (AgentFenceCounts).
  bool agent_counts_epoch() const {
    const AccessEpoch e = epoch();
    return (e == AccessEpoch::kFence || e == AccessEpoch::kPscw) &&
           agent_active_target();
  }
  MPI_Group group() const { return group_; }

 private:
  ManagedWindow() = default;
  // Steps every flavor shares.
  int JoinComm(MPI_Comm comm);
  // What each rank announces in Share's exchange, and what the ranks still
  // agree on after it (window.cc).
  struct Announcement;
  struct Agreement {
    int failed = 0;
    int all_failed = 0;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  void InitHeader(std::byte* segment);
  void Share(MPI_Comm comm, MPI_Aint memory_bytes, MPI_Aint size, int disp_unit,
             Vote vote, std::byte** base, Vote* agreed, Agreement* agreement);
  int Agreed(Agreement* agreement, Vote* agreed);
  void SetTargets(const Announcement* all, MPI_Aint header_bytes);
  void MapAllShards();
  // The window's lock_all bias: in window rank 0's header (single-node
  // windows; windows spanning nodes have none).
  LockAllBias* LockAllBiasOf() {
    return single_node_ ? &targets_[0].header->lock_all_bias : nullptr;
  }
  bool CanAttach() const;
  void Finish(MPI_Comm comm);
  void JoinAgent(MPI_Comm comm);
  bool ReachesRemoteAgents() const;

  WindowProfile* profile_ = nullptr;  // SetProfile
  // This process's state as origin, beside the profile pointer: the fast
  // paths read them with the members below.
  uint32_t node_barriers_ = 0;  // passed on this window (PassNodeBarrier)
  std::mutex state_mutex_;
  EpochWord epoch_;  // read without state_mutex_: see EpochWord
  int locks_held_ = 0;
  ExclusiveShare exclusive_share_;
  bool lock_all_nocheck_ = false;
  bool lock_all_biased_ = false;
  bool any_mpi_ops_pending_ = false;
  std::vector<TargetLockState> locks_;  // indexed by target rank
  PscwState pscw_;
  DeferredAtomics deferred_;
  std::atomic<long long> passed_to_mpi_{0};
  std::vector<uint8_t> agent_pending_;  // per target rank
  bool any_agent_pending_ = false;
  AgentFenceCounts agent_fence_;

  Flavor flavor_ = Flavor::kAllocate;

  MPI_Win app_win_ = MPI_WIN_NULL;
  bool single_node_ = false;
  int plain_ranks_ = 0;           // comm_size_ when plain (Finish, SetProfile)
  int lane_ranks_ = 0;            // ... and with unstriped slots
  int unprofiled_ranks_ = 0;      // comm_size_ unless profiled (SetTargets)
  bool holds_mpi_epoch_ = false;  // lock_all(MPI_MODE_NOCHECK) on app_win_
  NodeSegments segments_;
  std::vector<int> node_index_;   // per window rank: NodeIndexOf
  std::vector<int> node_ranks_;   // per node index: the window rank
  std::vector<int> world_ranks_;  // per window rank, when spanning nodes
  int own_agent_id_ = -1;         // this process's, served_windows.h
  std::vector<int> agent_ids_;    // per window rank, when agent_served()
  bool locks_via_agent_ = false;
  std::vector<int> lock_agent_ranks_;  // per window rank, locks_via_agent_
  std::vector<int> remote_lock_agents_;
  int lock_index_ = 0;  // into the arrays below: window or node rank
  MPI_Group group_ = MPI_GROUP_NULL;
  int rank_ = 0;
  int node_size_ = 1;
  int first_node_rank_ = 0;
  int unstriped_slot_ = -1;
  int comm_size_ = 0;  // targets_.size(), kept for the fast paths
  std::vector<Target> targets_;
  std::vector<LockWords*> target_locks_;  // per rank; null off-node
  std::vector<LockWords*> all_shards_;    // when locks_in_shm()
  std::vector<AnnounceWord*> announced_;  // ... every node rank's
  std::vector<VisibleWord*> visible_;     // ... and their lock_all bias words
  AllShards all_view_;  // both, as the lock functions take them
  // MPI_Win_create windows with node-local peers: they attach to this
  // process's memory (ptracer.h).
  CrossMemoryGrant cross_memory_grant_;
  // MPI_Win_create windows: this rank's memory as shared with its node
  // peers (fd -1: not shared), and the peers' shared memory mapped here.
  UserMemoryId own_memory_;
  std::vector<PeerUserMemory> peer_memory_;
};

// Counts an operation a fast path served in `w`'s profile; out of line, so
// the fast paths pay one test of `w.profile()` when profiling is off. Returns
// MPI_SUCCESS, so a fast path ends in a jump to it (no stack frame).
[[gnu::cold, gnu::noinline]] int CountServed(const ManagedWindow& w,
                                             OpKind kind, int target, int count,
                                             MPI_Datatype type);

// The profile record of any window, managed (`w`) or not.
inline WindowProfile* ProfileOf(MPI_Win win, const ManagedWindow* w) {
  return w != nullptr ? w->profile() : UnmanagedProfile(win);
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOWS_WINDOW_H_
