// Applying element updates to node-local memory (striped_apply.h).
#include "shim/atomics/striped_apply.h"

#include <algorithm>
#include <span>

#include "shim/atomics/stripes.h"
#include "shim/base/direct_stores.h"
#include "shim/sync/word_atomics.h"

namespace rmashim {

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

namespace {

void ApplyQueuedOne(const DeferredAtomics::Entry& e, int slot) {
  const Target& t = *e.target;
  SegmentHeader& h = *t.header;
  const auto* value = reinterpret_cast<const std::byte*>(&e.value);
  if (!RunUnstriped(h.word_mode, h.unstriped_slots()[slot], [&] {
        e.op->atomic(t.base + e.offset, value, nullptr, 1);
      })) {
    ApplyRun(*e.op, /*exclusive=*/false, t, e.offset, value, nullptr, 1);
  }
}

}  // namespace

void ApplyQueued(DeferredAtomics& queue) {
  const std::span<const DeferredAtomics::Entry> entries = queue.queued();
  const int n = static_cast<int>(entries.size());
  const int slot = queue.slot();
  queue.Clear();  // the entries stay readable until the next Add
  if (n == 1) return ApplyQueuedOne(entries[0], slot);  // accumulate + flush
  for (int i = 0; i < n; ++i) {
    __builtin_prefetch(entries[i].target->base + entries[i].offset, 1, 3);
  }
  // Targets in order of first use; each target's updates in program order.
  bool done[DeferredAtomics::kCapacity] = {};
  for (int first = 0; first < n; ++first) {
    if (done[first]) continue;
    const Target& t = *entries[first].target;
    auto each_of_target = [&](auto apply) {
      for (int i = first; i < n; ++i) {
        if (entries[i].target != &t) continue;
        apply(entries[i]);
        done[i] = true;
      }
    };
    SegmentHeader& h = *t.header;
    const bool unstriped =
        RunUnstriped(h.word_mode, h.unstriped_slots()[slot], [&] {
          each_of_target([&](const DeferredAtomics::Entry& e) {
            e.op->atomic(t.base + e.offset,
                         reinterpret_cast<const std::byte*>(&e.value), nullptr,
                         1);
          });
        });
    if (!unstriped) {
      each_of_target([&](const DeferredAtomics::Entry& e) {
        ApplyRun(*e.op, /*exclusive=*/false, t, e.offset,
                 reinterpret_cast<const std::byte*>(&e.value), nullptr, 1);
      });
    }
  }
}

}  // namespace rmashim
