// Element updates applied to node-local target memory (window.h's Target),
// element-wise atomic as MPI requires: lock-free CPU atomics where the
// element fits a machine word, unstriped where word_atomics.h allows,
// striped spin locks in the target's segment header otherwise (stripes.h),
// plain loops when the origin holds an exclusive lock. The one way every
// updater applies an update: the accumulate family (accumulate.h), the
// agent for remote origins (agent.h), DART, and a window's queue of
// deferred accumulates (deferred_atomics.h).
#ifndef RMASHIM_SHIM_ATOMICS_STRIPED_APPLY_H_
#define RMASHIM_SHIM_ATOMICS_STRIPED_APPLY_H_

#include <mpi.h>

#include <cstddef>

#include "shim/types/element_ops.h"
#include "shim/windows/deferred_atomics.h"
#include "shim/windows/window.h"

namespace rmashim {

// Applies `e` (element_ops.h) to `n` elements at byte `offset` of node-local
// target `t`, page by page under the stripe protocol of window.h (kStripes).
// `origin` and `result` are packed. With `exclusive` (the caller holds an
// exclusive lock on the target) no stripe is taken. `slot`: the calling
// rank's unstriped slot in the target's header (word_atomics.h), -1 to
// always take stripes. Shared by the MPI wrappers and DART, so both agree
// on how an element is updated.
void ApplyRun(const ElementOp& e, bool exclusive, const Target& t,
              MPI_Aint offset, const std::byte* origin, std::byte* result,
              size_t n, int slot = -1);

// Compare-and-swap of one element at byte `offset` of node-local target
// `t` under the same stripe protocol as ApplyRun (a shared stripe around the
// CPU atomic, an exclusive one around the plain fallback for a misaligned
// element; none with `exclusive`). Shared by the MPI wrappers and DART.
void ApplyCompareSwap(const CompareSwapOp& cas, bool exclusive, const Target& t,
                      MPI_Aint offset, const std::byte* origin,
                      const std::byte* compare, std::byte* result,
                      int slot = -1);

// Updates of at least this many elements use plain loops under an
// exclusive stripe: one lock per page beats one locked instruction per
// element.
inline constexpr size_t kBulkElements = 16;

// Applies and empties `queue` (a window's deferred word accumulates):
// prefetches every line for writing, then the updates of each target, in
// program order, under one announcement of the unstriped protocol
// (word_atomics.h), or its stripes.
void ApplyQueued(DeferredAtomics& queue);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_ATOMICS_STRIPED_APPLY_H_
