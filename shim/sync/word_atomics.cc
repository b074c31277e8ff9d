// The slow side of word_atomics.h: registering for the asymmetric fence and
// a bulk updater's turn of the mode word.
#include "shim/sync/word_atomics.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim/sync/shm_lock.h"

namespace rmashim {
namespace {

long Membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

bool Register() {
  const long supported = Membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0 || (supported & MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) {
    return false;
  }
  return Membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
}

// Waits until no slot shows an update that began before now.
void AwaitAnnounced(const UnstripedSlot* slots, uint32_t slot_count) {
  for (uint32_t i = 0; i < slot_count; ++i) {
    const uint64_t seq = slots[i].seq.load(std::memory_order_acquire);
    if (seq % 2 == 0) continue;
    Backoff backoff;
    while (slots[i].seq.load(std::memory_order_acquire) == seq) backoff.Wait();
  }
}

}  // namespace

bool UnstripedAtomicsRegistered() {
  static const bool registered = Register();
  return registered;
}

BulkEntry::BulkEntry(std::atomic<uint64_t>& mode, const UnstripedSlot* slots,
                     uint32_t slot_count)
    : mode_(mode) {
  if (slot_count == 0) return;
  active_ = true;
  uint64_t m = mode.fetch_add(kWordModeBulkUnit, std::memory_order_acq_rel) +
               kWordModeBulkUnit;
  Backoff backoff;
  while (true) {
    const uint64_t state = m & kWordModeStateMask;
    if (state == kWordModeStriped) return;
    if (state == kWordModeUnstriped &&
        mode.compare_exchange_weak(m, m + kWordModeDraining,
                                   std::memory_order_acq_rel,
                                   std::memory_order_relaxed)) {
      // This updater turns the word: every unstriped updater that read it
      // as zero has announced itself by the time the fence returns.
      safe_ = Membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0;
      AwaitAnnounced(slots, slot_count);
      mode.fetch_add(kWordModeStriped - kWordModeDraining,
                     std::memory_order_acq_rel);
      return;
    }
    if (state == kWordModeDraining) {
      backoff.Wait();
      m = mode.load(std::memory_order_acquire);
    }
    // kWordModeUnstriped with a failed exchange: `m` was reloaded.
  }
}

}  // namespace rmashim
