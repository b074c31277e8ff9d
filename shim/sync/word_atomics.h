// Word-sized atomic accumulates without stripe locks.
//
// The stripes (window.h) keep a plain-loop update (a bulk accumulate) from
// overlapping a CPU-atomic update of the same element. Taking a stripe costs
// an atomic updater two read-modify-writes on a cache line that every origin
// of the target shares, twice the cost of the update itself. Yet most
// programs that issue word atomics (counters, GUPS, mutexes) never issue a
// bulk accumulate to the same target.
//
// So each target's header holds a mode word, and every node rank that may
// update the target a slot of its own (one cache line, written by that rank
// only). An atomic updater, while the mode word is zero (no bulk update in
// progress or in memory), announces itself in its slot with a plain store,
// reads the mode word and does the CPU atomic: no stripe, no shared write.
// A bulk updater first turns the mode word away from zero, then makes every
// process that announced before that visible with one membarrier system
// call (MEMBARRIER_CMD_GLOBAL_EXPEDITED: an asymmetric fence, so atomic
// updaters need no fence of their own), waits for the announced ones to
// finish, and only then takes its stripes. From then on atomic updaters take
// stripes as before, until one of them has found the word idle (no bulk
// updater) kRevertAfter times in a row and turns it back to zero, so a
// program that mixes bulk and atomic updates pays the system call about
// once per kRevertAfter atomic updates, and one that never mixes them never.
//
// Processes that could not register for the asymmetric fence never take the
// unstriped path; a bulk updater whose fence fails updates element by
// element with CPU atomics instead of the plain loop (BulkEntry::safe()).
// Under MPI_THREAD_MULTIPLE a slot would need a counter per thread, so such
// processes keep the stripes too (the caller passes no slot).
#ifndef RMASHIM_SHIM_SYNC_WORD_ATOMICS_H_
#define RMASHIM_SHIM_SYNC_WORD_ATOMICS_H_

#include <atomic>
#include <cstdint>

namespace rmashim {

// One node rank's announcement slot in a target's header.
struct alignas(64) UnstripedSlot {
  std::atomic<uint64_t> seq{0};  // odd while that rank updates unstriped
  uint32_t idle_streak = 0;      // that rank's count towards a revert
};

// The mode word: bits 0-1 the state, the rest how many bulk updaters are in.
inline constexpr uint64_t kWordModeUnstriped = 0;  // atomics may skip stripes
inline constexpr uint64_t kWordModeDraining = 1;   // a bulk updater waits
inline constexpr uint64_t kWordModeStriped = 2;    // everyone takes stripes
inline constexpr uint64_t kWordModeStateMask = 3;
inline constexpr uint64_t kWordModeBulkUnit = 4;
inline constexpr uint32_t kRevertAfter = 256;

// Whether this process may use the unstriped path: it registered for the
// asymmetric fence (once per process; false where the kernel or a seccomp
// policy refuses).
bool UnstripedAtomicsRegistered();

// Runs `update` (a CPU-atomic update of the target) without stripes when
// the target's `mode` word allows it, announced in this rank's `slot` of the
// target's header. False: the caller must
// take the stripe path (and run `update` there).
//
// The sequence this process writes comes from one counter of its own, not
// from the slot (the slot stays write-only on this path, so the update does
// not wait for a load from the target's header): a bulk updater only needs
// the value in a slot to change once the update it saw has finished, and a
// process with slots runs one MPI thread, so its updates never overlap
// (thread-local all the same: tests run several "ranks" as threads).
inline thread_local uint64_t t_unstriped_seq
    __attribute__((tls_model("initial-exec"))) = 0;  // even between updates

// The announced attempt alone, for inlined fast paths whose miss takes a
// path that calls RunUnstriped: false (the mode word is not zero) after
// withdrawing the announcement, with nothing else done.
template <typename Update>
[[nodiscard]] [[gnu::always_inline]] inline bool TryUnstriped(
    std::atomic<uint64_t>& mode, UnstripedSlot& slot, Update&& update,
    uint64_t* seen = nullptr) {
  const uint64_t seq = t_unstriped_seq;
  t_unstriped_seq = seq + 2;
  slot.seq.store(seq + 1, std::memory_order_relaxed);
  // Only the compiler must keep the store before the load: a bulk updater's
  // membarrier orders them on the CPU (see the top of this file).
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const uint64_t m = mode.load(std::memory_order_acquire);
  if (m == kWordModeUnstriped) [[likely]] {
    update();
    slot.seq.store(seq + 2, std::memory_order_release);
    return true;
  }
  slot.seq.store(seq + 2, std::memory_order_release);
  if (seen != nullptr) *seen = m;
  return false;
}

// After an attempt found the mode word at `m` (not zero): counts towards
// turning a striped word back (see the top of this file).
inline void NoteStripedMode(std::atomic<uint64_t>& mode, UnstripedSlot& slot,
                            uint64_t m) {
  if (m != kWordModeStriped) {  // a bulk updater is in or on its way
    slot.idle_streak = 0;
  } else if (++slot.idle_streak >= kRevertAfter) {
    slot.idle_streak = 0;
    uint64_t expected = kWordModeStriped;
    mode.compare_exchange_strong(expected, kWordModeUnstriped,
                                 std::memory_order_acq_rel,
                                 std::memory_order_relaxed);
  }
}

template <typename Update>
[[gnu::always_inline]] inline bool RunUnstriped(std::atomic<uint64_t>& mode,
                                                UnstripedSlot& slot,
                                                Update&& update) {
  uint64_t m;
  if (TryUnstriped(mode, slot, update, &m)) [[likely]]
    return true;
  NoteStripedMode(mode, slot, m);
  return false;
}

// A bulk (plain-loop) updater's entry for the scope of its update, taken
// before its stripes: afterwards no unstriped atomic update of the target is
// in flight or can start. Inactive (free) when the target has no slots.
class BulkEntry {
 public:
  BulkEntry(std::atomic<uint64_t>& mode, const UnstripedSlot* slots,
            uint32_t slot_count);
  ~BulkEntry() {
    if (active_) mode_.fetch_sub(kWordModeBulkUnit, std::memory_order_release);
  }
  BulkEntry(const BulkEntry&) = delete;
  BulkEntry& operator=(const BulkEntry&) = delete;

  // False when the asymmetric fence failed: unstriped updaters may still be
  // running, so the caller must update element by element with CPU atomics.
  bool safe() const { return safe_; }

 private:
  std::atomic<uint64_t>& mode_;
  bool active_ = false;
  bool safe_ = true;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_SYNC_WORD_ATOMICS_H_
