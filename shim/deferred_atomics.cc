// Applying a batch of queued word accumulates (deferred_atomics.h): prefetch
// every line for writing, then the updates of each target under one
// announcement of the unstriped protocol (word_atomics.h), or its stripes.
#include "shim/deferred_atomics.h"

#include "shim/accumulate.h"
#include "shim/window.h"
#include "shim/word_atomics.h"

namespace rmashim {

void DeferredAtomics::Apply(const Entry& e) {
  const Target& t = *e.target;
  SegmentHeader& h = *t.header;
  const auto* value = reinterpret_cast<const std::byte*>(&e.value);
  if (!RunUnstriped(h.word_mode, h.unstriped_slots()[slot_], [&] {
        e.op->atomic(t.base + e.offset, value, nullptr, 1);
      })) {
    ApplyRun(*e.op, /*exclusive=*/false, t, e.offset, value, nullptr, 1);
  }
}

void DeferredAtomics::ApplyQueued() {
  const int n = count();
  state_ &= kArmed;                       // emptied; still armed if it was
  if (n == 1) return Apply(entries_[0]);  // accumulate + flush
  for (int i = 0; i < n; ++i) {
    __builtin_prefetch(entries_[i].target->base + entries_[i].offset, 1, 3);
  }
  // Targets in order of first use; each target's updates in program order.
  bool done[kCapacity] = {};
  for (int first = 0; first < n; ++first) {
    if (done[first]) continue;
    const Target& t = *entries_[first].target;
    auto each_of_target = [&](auto apply) {
      for (int i = first; i < n; ++i) {
        if (entries_[i].target != &t) continue;
        apply(entries_[i]);
        done[i] = true;
      }
    };
    SegmentHeader& h = *t.header;
    const bool unstriped =
        RunUnstriped(h.word_mode, h.unstriped_slots()[slot_], [&] {
          each_of_target([&](const Entry& e) {
            e.op->atomic(t.base + e.offset,
                         reinterpret_cast<const std::byte*>(&e.value), nullptr,
                         1);
          });
        });
    if (!unstriped) {
      each_of_target([&](const Entry& e) {
        ApplyRun(*e.op, /*exclusive=*/false, t, e.offset,
                 reinterpret_cast<const std::byte*>(&e.value), nullptr, 1);
      });
    }
  }
}

}  // namespace rmashim
