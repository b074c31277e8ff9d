// The accumulate family applied directly to node-local target memory:
// element-wise atomic as MPI requires, lock-free CPU atomics where the
// element fits a machine word, striped spin locks in the target's segment
// header otherwise, and plain loops when the origin holds an exclusive lock.
#ifndef RMASHIM_SHIM_MOVE_ACCUMULATE_H_
#define RMASHIM_SHIM_MOVE_ACCUMULATE_H_

#include <mpi.h>

#include "shim/atomics/striped_apply.h"
#include "shim/base/direct_stores.h"
#include "shim/move/access.h"
#include "shim/move/routing.h"
#include "shim/move/word_lane.h"
#include "shim/sync/word_atomics.h"
#include "shim/types/element_ops.h"
#include "shim/windows/verdict.h"
#include "shim/windows/window.h"

namespace rmashim {

struct AccumulateCall {
  bool fetching = false;  // Get_accumulate: old values go to `result`
  const void* origin = nullptr;
  int origin_count = 0;
  MPI_Datatype origin_type = MPI_DATATYPE_NULL;
  void* result = nullptr;
  int result_count = 0;
  MPI_Datatype result_type = MPI_DATATYPE_NULL;
  int target = 0;
  MPI_Aint disp = 0;
  int target_count = 0;
  MPI_Datatype target_type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  Form form = Form::kPlain;  // kRequest: MPI_Raccumulate, MPI_Rget_accumulate
};

// The calls of MPI_Accumulate and MPI_Get_accumulate (and their request
// forms), their arguments in the MPI call's order.
inline AccumulateCall AccumulateOf(const void* origin, int origin_count,
                                   MPI_Datatype origin_type, int target,
                                   MPI_Aint disp, int target_count,
                                   MPI_Datatype target_type, MPI_Op op,
                                   Form form = Form::kPlain) {
  return {.origin = origin,
          .origin_count = origin_count,
          .origin_type = origin_type,
          .target = target,
          .disp = disp,
          .target_count = target_count,
          .target_type = target_type,
          .op = op,
          .form = form};
}
inline AccumulateCall GetAccumulateOf(const void* origin, int origin_count,
                                      MPI_Datatype origin_type, void* result,
                                      int result_count,
                                      MPI_Datatype result_type, int target,
                                      MPI_Aint disp, int target_count,
                                      MPI_Datatype target_type, MPI_Op op,
                                      Form form = Form::kPlain) {
  AccumulateCall c = AccumulateOf(origin, origin_count, origin_type, target,
                                  disp, target_count, target_type, op, form);
  c.fetching = true;
  c.result = result;
  c.result_count = result_count;
  c.result_type = result_type;
  return c;
}

// The family's fast path, inlined into each wrapper: `count` elements of
// builtin `type` on every side, packed in the user's buffers (`origin`
// unused with MPI_NO_OP), to a target of a single-node window mapped here,
// in an epoch that gives access. Applies them as ApplyRun would (the same
// kernels; word atomics unstriped where word_atomics.h allows) and returns
// true; false sends the call through the full checks, which find any
// error. MPI_Accumulate must not pass MPI_NO_OP (it is an error there).
[[nodiscard]] [[gnu::always_inline]] inline bool TryFastRun(
    ManagedWindow& w, MPI_Datatype type, int count, MPI_Op op, int target,
    MPI_Aint disp, const void* origin, void* result) {
  const ElementOp* e = BuiltinElementOp(type, op);
  std::byte* addr;
  if (e == nullptr || e->extent != e->size || count <= 0 || !w.locks_in_shm() ||
      (op != MPI_NO_OP && origin == nullptr) ||
      !DirectWord(w, target, disp, MPI_Aint{count} * e->size, &addr)) {
    return false;
  }
  const auto* src =
      op == MPI_NO_OP ? addr : static_cast<const std::byte*>(origin);
  auto* res = static_cast<std::byte*>(result);
  const auto n = static_cast<size_t>(count);
  const Target& t = w.target(target);
  if (w.epoch() == AccessEpoch::kLock &&
      w.lock_state(target).mode == LockMode::kExclusive) {
    e->plain(addr, src, res, n);  // nobody else may touch the target
    NoteDirectStores();
    return true;
  }
  const int slot = w.unstriped_slot();
  if (slot >= 0 && n < kBulkElements && e->atomic != nullptr &&
      IsAligned(addr, e->align) &&
      RunUnstriped(
          t.header->word_mode, t.header->unstriped_slots()[slot],
          [&] [[gnu::always_inline]] { e->atomic(addr, src, res, n); })) {
    return true;
  }
  ApplyRun(*e, /*exclusive=*/false, t, addr - t.base, src, res, n);
  return true;
}

// Queues an MPI_Accumulate of one word (deferred_atomics.h): a builtin type
// with a CPU-atomic flavour,
// aligned, to a node-local target in a passive-target epoch, by a process
// with an unstriped slot. True when queued; false sends the call down the
// other paths, which apply the queue first (ApplyDeferred).
[[nodiscard]] [[gnu::always_inline]] inline bool TryDeferAccumulate(
    ManagedWindow& w, MPI_Datatype type, MPI_Op op, int target, MPI_Aint disp,
    const void* origin) {
  if (w.unstriped_slot() < 0 || origin == nullptr || !IsPassive(w.epoch())) {
    return false;
  }
  const ElementOp* e = BuiltinElementOp(type, op);
  std::byte* addr;
  if (e == nullptr || e->atomic == nullptr || e->size > 8 ||
      e->extent != e->size || !DirectWord(w, target, disp, e->size, &addr) ||
      !IsAligned(addr, e->align)) {
    return false;
  }
  const Target& t = w.target(target);
  if (w.deferred().Add(*e, t, addr - t.base, origin)) ApplyQueued(w.deferred());
  return true;
}

// Applies the queued accumulates before anything that could observe or
// reorder them (every synchronization, every other accumulate-family call).
inline void ApplyDeferred(ManagedWindow& w) {
  if (!w.deferred().empty()) ApplyQueued(w.deferred());
}

// ... at a synchronization, which also ends the current burst.
inline void CompleteDeferred(ManagedWindow& w) {
  ApplyDeferred(w);
  w.deferred().Disarm();
}

// MPI_Compare_and_swap's fast path, as TryFastRun.
[[nodiscard]] [[gnu::always_inline]] inline bool TryFastCompareSwap(
    ManagedWindow& w, MPI_Datatype type, int target, MPI_Aint disp,
    const void* origin, const void* compare, void* result) {
  const CompareSwapOp* cas = BuiltinCompareSwap(type);
  std::byte* addr;
  if (cas == nullptr || origin == nullptr || compare == nullptr ||
      result == nullptr || !w.locks_in_shm() ||
      !DirectWord(w, target, disp, cas->size, &addr)) {
    return false;
  }
  const auto* o = static_cast<const std::byte*>(origin);
  const auto* c = static_cast<const std::byte*>(compare);
  auto* r = static_cast<std::byte*>(result);
  const Target& t = w.target(target);
  const bool exclusive = w.epoch() == AccessEpoch::kLock &&
                         w.lock_state(target).mode == LockMode::kExclusive;
  const int slot = w.unstriped_slot();
  if (!exclusive && slot >= 0 && IsAligned(addr, cas->align) &&
      RunUnstriped(
          t.header->word_mode, t.header->unstriped_slots()[slot],
          [&] [[gnu::always_inline]] { cas->atomic(addr, o, c, r); })) {
    return true;
  }
  ApplyCompareSwap(*cas, exclusive, t, addr - t.base, o, c, r);
  return true;
}

// The full paths of the accumulate family on a managed window: the checks
// in MPICH's order, the admission and its route (admission.h, routing.h),
// the update there (here, through cross-memory attach, or through the
// target's agent), or MPI's with the reason (verdict.h). Accumulate and
// Get_accumulate (call.fetching), and their request forms. Out of line, so
// what serves before them stays short.
[[gnu::noinline]] Verdict AccumulateFullPath(ManagedWindow& w,
                                             const AccumulateCall& call);

[[gnu::noinline]] Verdict FetchAndOpFullPath(ManagedWindow& w,
                                             const void* origin, void* result,
                                             MPI_Datatype type, int target,
                                             MPI_Aint disp, MPI_Op op);

[[gnu::noinline]] Verdict CompareAndSwapFullPath(
    ManagedWindow& w, const void* origin, const void* compare, void* result,
    MPI_Datatype type, int target, MPI_Aint disp);

// MPI_Accumulate of one element of the same type on both sides in a
// passive epoch: the first since the last synchronization arms the queue
// (deferred_atomics.h) and is applied at once, the burst after it is
// queued where TryDeferAccumulate takes it. True when queued.
[[gnu::always_inline]] inline bool QueueAccumulate(ManagedWindow& w,
                                                   MPI_Datatype type, MPI_Op op,
                                                   int target, MPI_Aint disp,
                                                   const void* origin) {
  if (!w.deferred().armed()) {
    w.deferred().Arm();
    return false;
  }
  return TryDeferAccumulate(w, type, op, target, disp, origin);
}

// The accumulate family on a managed window past the inline lanes (or
// without one), inlined into the wrappers' out-of-line paths with their
// own arguments: what is queued applied once, then the fast run tried
// once (the word lane where the inline one did not look, then TryFastRun
// or TryFastCompareSwap). True when served; false: the full path (above)
// takes the call, and tries nothing of this again. TryRunAtOnce's callers
// have checked that the origin and result sides have `count` x `type`
// too, and that the epoch allows the call's form.
[[gnu::always_inline]] inline bool TryRunAtOnce(
    ManagedWindow& w, MPI_Datatype type, int count, MPI_Op op, int target,
    MPI_Aint disp, const void* origin, void* result) {
  ApplyDeferred(w);
  return TryFastRun(w, type, count, op, target, disp, origin, result);
}

[[gnu::always_inline]] inline bool TryFetchAndOpAtOnce(
    ManagedWindow& w, const void* origin, void* result, MPI_Datatype type,
    int target, MPI_Aint disp, MPI_Op op) {
  ApplyDeferred(w);
  return TryWordFetchAndOp(w, type, op, target, disp, origin, result) ||
         (result != nullptr &&
          TryFastRun(w, type, 1, op, target, disp, origin, result));
}

[[gnu::always_inline]] inline bool TryCompareAndSwapAtOnce(
    ManagedWindow& w, const void* origin, const void* compare, void* result,
    MPI_Datatype type, int target, MPI_Aint disp) {
  ApplyDeferred(w);
  return TryWordCompareAndSwap(w, type, target, disp, origin, compare,
                               result) ||
         TryFastCompareSwap(w, type, target, disp, origin, compare, result);
}

// A put (MPI_REPLACE) or get (fetching MPI_NO_OP) admitted along `route`
// to a remote target's agent, moved as element updates, which the agent
// applies element by element (agent.h), where its layout is not one RMA
// operation: the family's checks and packing without a second admission.
// Layouts an accumulate may not have and a put may (MPI_CHAR, MPI_PACKED,
// a target type that is not one predefined type throughout) go to MPI
// (Fallback::kDatatype), decided before anything is applied.
Verdict MoveAsUpdates(ManagedWindow& w, const AccumulateCall& call,
                      const Route& route);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_MOVE_ACCUMULATE_H_
