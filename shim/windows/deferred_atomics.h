// Word accumulates without a result, applied at the next synchronization.
//
// An MPI_Accumulate completes at the target only at the next flush or unlock
// (MPI-3 11.5.4), so the shim may apply it then. It pays to: a locked
// instruction is a full barrier, so when every call applies its own atomic,
// the next call's loads (window lookup, checks) wait for this one's cache
// miss, and random-access updates (GUPS, histograms) run one miss at a
// time. Queued, a batch is applied back to back after prefetching every
// line for writing, so the misses overlap as in a plain loop of atomics.
//
// Only the calls after the first since the last synchronization are queued
// (a single accumulate + flush gains nothing from a queue), and only
// word-sized updates that the unstriped protocol (word_atomics.h) covers, in
// passive-target epochs; every call that could observe or reorder them applies
// the queue first: flush, flush_local, unlock, unlock_all, MPI_Win_sync,
// MPI_Win_free, and every accumulate-family call on the window that is not
// queued itself (accumulate_ordering: updates from one origin to one location
// stay in program order). One thread owns the queue: processes under
// MPI_THREAD_MULTIPLE have no unstriped slot, so they never queue.
// The queue is a window's state (window.h); striped_apply.h's ApplyQueued
// applies it.
#ifndef RMASHIM_SHIM_WINDOWS_DEFERRED_ATOMICS_H_
#define RMASHIM_SHIM_WINDOWS_DEFERRED_ATOMICS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "shim/types/element_ops.h"

namespace rmashim {

struct Target;

class DeferredAtomics {
 public:
  static constexpr int kCapacity = 64;

  struct Entry {
    const ElementOp* op;
    const Target* target;
    ptrdiff_t offset;
    uint64_t value;
  };

  bool empty() const { return count() == 0; }
  // Empty and not armed: nothing for a synchronization to do (one test).
  bool idle() const { return state_ == 0; }

  // The first accumulate after a synchronization is applied at once (an
  // accumulate + flush pays no queueing); Arm() notes it, and only the
  // accumulates after it, a burst, are queued. Disarm() at every
  // synchronization.
  // Never armed without a slot (MPI_THREAD_MULTIPLE: threads then only
  // read the flag, never write it).
  bool armed() const { return (state_ & kArmed) != 0; }
  void Arm() {
    if (slot_ >= 0) state_ |= kArmed;
  }
  void Disarm() {
    if (armed()) state_ &= ~kArmed;
  }

  // Queues `op` (a word type's, with an atomic flavour) on the element at
  // byte `offset` of node-local target `t`, with the origin value at
  // `origin`. `t` must outlive the queue (the window's targets do). True
  // when the queue is full: the caller applies it (ApplyQueued).
  [[nodiscard]] bool Add(const ElementOp& op, const Target& t, ptrdiff_t offset,
                         const void* origin) {
    Entry& e = entries_[count()];
    e.op = &op;
    e.target = &t;
    e.offset = offset;
    if (op.size == sizeof(e.value)) {
      std::memcpy(&e.value, origin, sizeof(e.value));  // one load
    } else {
      std::memcpy(&e.value, origin, op.size);
    }
    return ++state_, count() == kCapacity;
  }

  // The queued updates, in program order.
  std::span<const Entry> queued() const {
    return {entries_, static_cast<size_t>(count())};
  }
  // Empties the queue (still armed if it was); queued() stays readable
  // until the next Add.
  void Clear() { state_ &= kArmed; }

  // The calling process's slot in every target's header (word_atomics.h).
  void set_slot(int slot) { slot_ = slot; }
  int slot() const { return slot_; }

 private:
  // The queue's length in the low bits, kArmed above: idle() is one test.
  static constexpr uint64_t kArmed = uint64_t{1} << 32;
  int count() const { return static_cast<int>(state_ & 0xffffffff); }

  Entry entries_[kCapacity];
  uint64_t state_ = 0;
  int slot_ = -1;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOWS_DEFERRED_ATOMICS_H_
