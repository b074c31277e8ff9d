#include "shim/accumulate.h"

#include <algorithm>
#include <vector>

#include "shim/access.h"
#include "shim/agent.h"
#include "shim/cross_memory.h"
#include "shim/datatype.h"
#include "shim/direct_stores.h"
#include "shim/element_ops.h"
#include "shim/flatten.h"
#include "shim/runtime.h"
#include "shim/shm_lock.h"
#include "shim/word_lane.h"

namespace rmashim {
namespace {

// Holds the stripe of the page containing a target offset (see kStripes).
class StripeGuard {
 public:
  StripeGuard(SegmentHeader& header, MPI_Aint offset, bool exclusive)
      : word_(header.stripes[(offset >> kStripePageShift) % kStripes]),
        exclusive_(exclusive) {
    exclusive ? AcquireStripeExclusive(word_) : AcquireStripeShared(word_);
  }
  ~StripeGuard() {
    exclusive_ ? ReleaseStripeExclusive(word_) : ReleaseStripeShared(word_);
  }
  StripeGuard(const StripeGuard&) = delete;
  StripeGuard& operator=(const StripeGuard&) = delete;

 private:
  StripeWord& word_;
  bool exclusive_;
};

}  // namespace

void ApplyRun(const ElementOp& e, bool exclusive, const Target& t,
              MPI_Aint offset, const std::byte* origin, std::byte* result,
              size_t n, int slot) {
  std::byte* const target = t.base + offset;
  if (exclusive) {
    e.plain(target, origin, result, n);
    NoteDirectStores();
    return;
  }
  SegmentHeader& h = *t.header;
  const bool aligned = e.atomic != nullptr && IsAligned(target, e.align);
  bool atomic = aligned && n < kBulkElements;
  if (atomic && slot >= 0 &&
      RunUnstriped(h.word_mode, h.unstriped_slots()[slot],
                   [&] { e.atomic(target, origin, result, n); })) {
    return;
  }
  // A plain loop over elements that unstriped atomics may update waits for
  // them first (word_atomics.h).
  const BulkEntry bulk(h.word_mode, h.unstriped_slots(),
                       aligned && !atomic ? h.unstriped_slot_count : 0);
  if (!bulk.safe()) atomic = true;
  if (!atomic) NoteDirectStores();
  if (n == 1) {  // one element, one stripe: no page arithmetic
    StripeGuard guard(*t.header, offset, /*exclusive=*/!atomic);
    (atomic ? e.atomic : e.plain)(t.base + offset, origin, result, 1);
    return;
  }
  for (size_t done = 0; done < n;) {
    // Elements whose first byte lies on this page.
    const MPI_Aint page_end = (offset | (kStripePage - 1)) + 1;
    const size_t chunk = std::min<size_t>(
        n - done,
        static_cast<size_t>((page_end - offset + e.extent - 1) / e.extent));
    StripeGuard guard(*t.header, offset, /*exclusive=*/!atomic);
    (atomic ? e.atomic : e.plain)(t.base + offset, origin + done * e.size,
                                  result ? result + done * e.size : nullptr,
                                  chunk);
    done += chunk;
    offset += chunk * e.extent;
  }
}

namespace {

// Argument, epoch and range checks shared by the family, for every window
// (MPI would corrupt memory out of range); then kPassThrough for targets the
// shim does not serve directly.
bool HoldsExclusive(const ManagedWindow& w, int target) {
  return w.epoch == AccessEpoch::kLock &&
         w.locks[target].mode == LockMode::kExclusive;
}

// Operations this process passed to MPI for `target` earlier in the epoch
// complete before a direct accumulate to it: MPI orders accumulates from one
// origin to the same location (accumulate_ordering, MPI-3 11.7.2).
int CompletePassedThrough(ManagedWindow& w, int target) {
  StateGuard guard(w.state_mutex);
  if (!w.locks[target].mpi_ops_pending) return MPI_SUCCESS;
  w.locks[target].mpi_ops_pending = false;
  return PMPI_Win_flush(target, w.app_win());
}

Route Admit(ManagedWindow& w, int target, MPI_Aint disp,
            const Layout& target_layout, int* rc) {
  if ((*rc = CheckTargetArgs(w, target, disp))) return Route::kDone;
  if (target == MPI_PROC_NULL) return Route::kDone;
  switch (CheckEpoch(w, target)) {
    case EpochAccess::kDirect:
      break;
    case EpochAccess::kPassThrough:
      return Route::kPassThrough;
    case EpochAccess::kNoEpoch:
      *rc = MPI_ERR_RMA_SYNC;
      return Route::kDone;
  }
  MPI_Aint offset;
  if (!FitsInTarget(w.target(target), disp, target_layout, &offset)) {
    *rc = MPI_ERR_RMA_RANGE;
    return Route::kDone;
  }
  // On a single-node window every origin honours the stripes, also on
  // MPI_Win_create memory of another process, which is updated through
  // cross-memory attach under them.
  if (w.locks_in_shm()) return Route::kDone;
  // A window spanning nodes: remote origins' accumulates are applied by MPI,
  // which cannot be atomic with our CPU atomics, so the family goes to MPI,
  // except where no other origin can touch the target during this epoch.
  // That is so while this process holds MPI's exclusive lock on it (with or
  // without MPI_MODE_NOCHECK): no other process holds a lock on the target
  // meanwhile (MPI-3 11.5.3), an active-target epoch on the window at the
  // same time is erroneous (11.5), and so are the target's own local stores
  // conflicting with the epoch (11.7). Updates of node-local memory are then
  // atomic by exclusion, as under an exclusive lock on a single-node window
  // (plain loops, no stripes).
  if (HoldsExclusive(w, target) && w.target(target).node_local()) {
    *rc = CompletePassedThrough(w, target);
    return Route::kDone;
  }
  // With the agent (agent.h) every origin's accumulate reaches the target
  // through the stripes: node-local origins' directly, remote ones' through
  // the target's agent. In passive epochs only: fence and PSCW stay MPI's
  // on these windows, and an MPI epoch of either kind on the window while
  // another origin holds a passive one on the same target is erroneous.
  // (Served in fence epochs too, the accumulates made each fence wait for a
  // round trip to every remote agent that had updates, which on a full
  // node was many times slower than MPI's own path: the fence row of
  // bench/results/agent_oddeven.md.)
  if (w.agent_served() && IsPassive(w.epoch)) {
    *rc = CompletePassedThrough(w, target);
    return Route::kDone;
  }
  return Route::kPassThrough;
}

// Where a flattened buffer's elements already lie packed (one run, elements
// as far apart as their size: a derived type laid out contiguously), so no
// pack or unpack copy is needed; nullptr otherwise. `buf` may be MPI_BOTTOM
// with an absolute run offset.
std::byte* PackedInPlace(const void* buf, const FlatType& flat,
                         int element_size) {
  if (flat.runs.size() != 1 || flat.element_extent != element_size)
    return nullptr;
  return reinterpret_cast<std::byte*>(reinterpret_cast<uintptr_t>(buf) +
                                      flat.runs[0].offset);
}

// Elements of `count` x `type` packed contiguously: the user's buffer when
// the type is predefined or lays them out that way, else a packed copy in
// `storage`.
int PackElements(const void* buf, int count, MPI_Datatype type,
                 MPI_Datatype element, MPI_Aint elements,
                 std::vector<std::byte>& storage, const std::byte** packed) {
  if (IsBuiltinType(type)) {
    if (type != element || count != elements) return MPI_ERR_TYPE;
    *packed = static_cast<const std::byte*>(buf);
    return MPI_SUCCESS;
  }
  FlatType flat;
  if (int rc = Flatten(type, count, &flat)) return rc;
  if (flat.elements != 0 &&
      (flat.element != element || flat.elements != elements)) {
    return MPI_ERR_TYPE;
  }
  int element_size = 0;  // packed elements are Type_size apart (pairs too)
  PMPI_Type_size(element, &element_size);
  if (const std::byte* in_place = PackedInPlace(buf, flat, element_size)) {
    *packed = in_place;
    return MPI_SUCCESS;
  }
  storage.resize(static_cast<size_t>(flat.elements) * element_size);
  if (int rc = PackBytes(buf, count, type, storage.data(),
                         static_cast<MPI_Aint>(storage.size()))) {
    return rc;
  }
  *packed = storage.data();
  return MPI_SUCCESS;
}

}  // namespace

Route AccumulateDirect(ManagedWindow& w, const AccumulateCall& c, int* rc) {
  const bool fetching = c.fetching;
  const bool same_origin =
      c.op == MPI_NO_OP
          ? fetching
          : c.origin_type == c.target_type && c.origin_count == c.target_count;
  const bool same_result =
      !fetching || (c.result != nullptr && c.result_type == c.target_type &&
                    c.result_count == c.target_count);
  if (same_origin && same_result &&
      TryFastRun(w, c.target_type, c.target_count, c.op, c.target, c.disp,
                 c.origin, fetching ? c.result : nullptr)) {
    *rc = MPI_SUCCESS;
    return Route::kDone;
  }
  Layout target_layout, origin_layout, result_layout;
  if ((*rc = DescribeLayout(c.target_count, c.target_type, &target_layout))) {
    return Route::kDone;
  }
  if (c.op != MPI_NO_OP &&
      ((*rc = DescribeLayout(c.origin_count, c.origin_type, &origin_layout)) ||
       (*rc = CheckBuffer(c.origin, c.origin_type, origin_layout)))) {
    return Route::kDone;
  }
  if (fetching &&
      ((*rc = DescribeLayout(c.result_count, c.result_type, &result_layout)) ||
       (*rc = CheckBuffer(c.result, c.result_type, result_layout)))) {
    return Route::kDone;
  }
  if (c.op == MPI_NO_OP && !fetching) {
    *rc = MPI_ERR_OP;  // MPI_Accumulate does not take MPI_NO_OP
    return Route::kDone;
  }
  FlatType flat;
  if (IsBuiltinType(c.target_type)) {
    flat.element = c.target_type;
    flat.elements = c.target_count;
    if (c.target_count > 0) flat.runs.push_back({0, c.target_count});
  } else if ((*rc = Flatten(c.target_type, c.target_count, &flat))) {
    if (*rc != kNotFlattened) return Route::kDone;
    *rc = MPI_SUCCESS;
    return Route::kPassThrough;
  }
  // The op must be defined for the type (MPICH would abort at the target),
  // and predefined origin/result types must match it.
  const ElementOp* e = nullptr;
  if (flat.elements != 0 && (*rc = FindElementOp(flat.element, c.op, &e))) {
    return Route::kDone;
  }
  auto mismatched = [&](int count, MPI_Datatype type) {
    return IsBuiltinType(type) && flat.elements != 0 &&
           (type != flat.element || count != flat.elements);
  };
  if ((c.op != MPI_NO_OP && mismatched(c.origin_count, c.origin_type)) ||
      (fetching && mismatched(c.result_count, c.result_type))) {
    *rc = MPI_ERR_TYPE;
    return Route::kDone;
  }
  if (Admit(w, c.target, c.disp, target_layout, rc) == Route::kPassThrough) {
    return Route::kPassThrough;
  }
  if (*rc != MPI_SUCCESS || c.target == MPI_PROC_NULL) return Route::kDone;
  if (flat.elements == 0) return Route::kDone;

  const Target& t = w.target(c.target);
  const MPI_Aint base = c.disp * t.disp_unit;
  std::vector<std::byte> origin_storage;
  const std::byte* origin = nullptr;
  if (c.op != MPI_NO_OP &&
      (*rc = PackElements(c.origin, c.origin_count, c.origin_type, flat.element,
                          flat.elements, origin_storage, &origin))) {
    if (*rc != kNotFlattened) return Route::kDone;
    *rc = MPI_SUCCESS;
    return Route::kPassThrough;
  }
  std::vector<std::byte> result_storage;
  std::byte* result = static_cast<std::byte*>(c.result);
  FlatType result_flat;
  if (fetching && !IsBuiltinType(c.result_type) &&
      Flatten(c.result_type, c.result_count, &result_flat) == MPI_SUCCESS &&
      result_flat.element == flat.element &&
      result_flat.elements == flat.elements &&
      (result = PackedInPlace(c.result, result_flat, e->size)) != nullptr) {
    // Fetched values go straight to the user's buffer.
  } else if (fetching && !IsBuiltinType(c.result_type)) {
    result_storage.resize(flat.elements * e->size);
    result = result_storage.data();
  } else if (fetching && (c.result_type != flat.element ||
                          c.result_count != flat.elements)) {
    *rc = MPI_ERR_TYPE;
    return Route::kDone;
  }

  const bool exclusive = HoldsExclusive(w, c.target);
  if (!t.node_local()) {  // admitted: its agent applies it (agent.h)
    *rc = AgentUpdate(w, c.target, c.disp, flat.element, c.op, flat.runs,
                      static_cast<size_t>(flat.elements), e->size, origin,
                      fetching ? result : nullptr);
  } else if (t.pid != 0) {  // MPI_Win_create memory of another process
    *rc = CrossMemoryApply(*e, c.op != MPI_NO_OP, exclusive, t, base, flat.runs,
                           origin, fetching ? result : nullptr);
  } else {
    MPI_Aint done = 0;
    for (const ElementRun& run : flat.runs) {
      const MPI_Aint offset = base + run.offset;
      // MPI_NO_OP reads no origin; hand the target itself in its place.
      const std::byte* src = origin ? origin + done * e->size : t.base + offset;
      ApplyRun(*e, exclusive, t, offset, src,
               fetching ? result + done * e->size : nullptr, run.count,
               w.unstriped_slot());
      done += run.count;
    }
  }
  if (*rc == MPI_SUCCESS && fetching && !result_storage.empty()) {
    *rc = UnpackBytes(result_storage.data(),
                      static_cast<MPI_Aint>(result_storage.size()), c.result,
                      c.result_count, c.result_type);
  }
  return Route::kDone;
}

Route FetchAndOpDirect(ManagedWindow& w, const void* origin, void* result,
                       MPI_Datatype type, int target, MPI_Aint disp, MPI_Op op,
                       int* rc) {
  if (result != nullptr &&
      TryFastRun(w, type, 1, op, target, disp, origin, result)) {
    *rc = MPI_SUCCESS;
    return Route::kDone;
  }
  Layout layout;
  if ((*rc = DescribeLayout(1, type, &layout)) ||
      (op != MPI_NO_OP && (*rc = CheckBuffer(origin, type, layout))) ||
      (*rc = CheckBuffer(result, type, layout))) {
    return Route::kDone;
  }
  if (!IsBuiltinType(type)) {  // pair types: user buffers are not packed
    return AccumulateDirect(
        w, {true, origin, 1, type, result, 1, type, target, disp, 1, type, op},
        rc);
  }
  const ElementOp* e = nullptr;
  if ((*rc = FindElementOp(type, op, &e))) return Route::kDone;
  if (Admit(w, target, disp, layout, rc) == Route::kPassThrough) {
    return Route::kPassThrough;
  }
  if (*rc != MPI_SUCCESS || target == MPI_PROC_NULL) return Route::kDone;
  const Target& t = w.target(target);
  const MPI_Aint offset = disp * t.disp_unit;
  if (!t.node_local()) {  // admitted: its agent applies it (agent.h)
    *rc = AgentUpdate(
        w, target, disp, type, op, {{0, 1}}, 1, e->size,
        op == MPI_NO_OP ? nullptr : static_cast<const std::byte*>(origin),
        static_cast<std::byte*>(result));
    return Route::kDone;
  }
  if (t.pid != 0) {  // MPI_Win_create memory of another process
    *rc = CrossMemoryApply(
        *e, op != MPI_NO_OP, HoldsExclusive(w, target), t, offset, {{0, 1}},
        op == MPI_NO_OP ? nullptr : static_cast<const std::byte*>(origin),
        static_cast<std::byte*>(result));
    return Route::kDone;
  }
  const std::byte* src =
      op == MPI_NO_OP ? t.base + offset : static_cast<const std::byte*>(origin);
  ApplyRun(*e, HoldsExclusive(w, target), t, offset, src,
           static_cast<std::byte*>(result), 1, w.unstriped_slot());
  return Route::kDone;
}

Route CompareAndSwapDirect(ManagedWindow& w, const void* origin,
                           const void* compare, void* result, MPI_Datatype type,
                           int target, MPI_Aint disp, int* rc) {
  if (TryFastCompareSwap(w, type, target, disp, origin, compare, result)) {
    *rc = MPI_SUCCESS;
    return Route::kDone;
  }
  const CompareSwapOp* cas = nullptr;
  Layout layout;
  if ((*rc = DescribeLayout(1, type, &layout)) ||
      (*rc = CheckBuffer(origin, type, layout)) ||
      (*rc = CheckBuffer(compare, type, layout)) ||
      (*rc = CheckBuffer(result, type, layout))) {
    return Route::kDone;
  }
  if ((*rc = FindCompareSwap(type, &cas))) return Route::kDone;
  if (Admit(w, target, disp, layout, rc) == Route::kPassThrough) {
    return Route::kPassThrough;
  }
  if (*rc != MPI_SUCCESS || target == MPI_PROC_NULL) return Route::kDone;
  const Target& t = w.target(target);
  const auto* o = static_cast<const std::byte*>(origin);
  const auto* cmp = static_cast<const std::byte*>(compare);
  auto* res = static_cast<std::byte*>(result);
  if (!t.node_local()) {  // admitted: its agent applies it (agent.h)
    *rc = AgentCompareSwap(w, target, disp, type, cas->size, o, cmp, res);
  } else if (t.pid != 0) {  // MPI_Win_create memory of another process
    *rc = CrossMemoryCompareSwap(*cas, HoldsExclusive(w, target), t,
                                 disp * t.disp_unit, o, cmp, res);
  } else {
    ApplyCompareSwap(*cas, HoldsExclusive(w, target), t, disp * t.disp_unit, o,
                     cmp, res, w.unstriped_slot());
  }
  return Route::kDone;
}

void ApplyCompareSwap(const CompareSwapOp& cas, bool exclusive, const Target& t,
                      MPI_Aint offset, const std::byte* origin,
                      const std::byte* compare, std::byte* result, int slot) {
  std::byte* addr = t.base + offset;
  if (exclusive) {
    cas.plain(addr, origin, compare, result);
    NoteDirectStores();
    return;
  }
  const bool atomic = IsAligned(addr, cas.align);
  if (atomic && slot >= 0 &&
      RunUnstriped(t.header->word_mode, t.header->unstriped_slots()[slot],
                   [&] { cas.atomic(addr, origin, compare, result); })) {
    return;
  }
  if (!atomic) NoteDirectStores();
  StripeGuard guard(*t.header, offset, /*exclusive=*/!atomic);
  (atomic ? cas.atomic : cas.plain)(addr, origin, compare, result);
}

void WordLaneStriped(const ManagedWindow& w, int target, uint64_t* word,
                     MPI_Datatype type, MPI_Op op, const void* origin,
                     const void* compare, void* result) {
  const Target& t = w.target(target);
  auto* addr = reinterpret_cast<std::byte*>(word);
  const MPI_Aint offset = addr - t.base;
  const auto* o = static_cast<const std::byte*>(origin);
  auto* r = static_cast<std::byte*>(result);
  if (compare != nullptr) {
    ApplyCompareSwap(*BuiltinCompareSwap(type), /*exclusive=*/false, t, offset,
                     o, static_cast<const std::byte*>(compare), r);
  } else {
    ApplyRun(*BuiltinElementOp(type, op), /*exclusive=*/false, t, offset,
             op == MPI_NO_OP ? addr : o, r, 1);
  }
}

void WordLaneStripedAfterAttempt(const ManagedWindow& w, int target,
                                 uint64_t* word, MPI_Datatype type, MPI_Op op,
                                 const void* origin, const void* compare,
                                 void* result) {
  const Target& t = w.target(target);
  std::atomic<uint64_t>& mode = t.header->word_mode;
  NoteStripedMode(mode, *t.own_slot, mode.load(std::memory_order_acquire));
  WordLaneStriped(w, target, word, type, op, origin, compare, result);
}

}  // namespace rmashim
