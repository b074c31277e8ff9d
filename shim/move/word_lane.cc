// The word lane's way through the stripes (word_lane.h): where a target's
// mode word asks for them, the lane's update is applied as the other
// lanes' would be (ApplyRun, ApplyCompareSwap).
#include "shim/move/word_lane.h"

#include "shim/atomics/striped_apply.h"
#include "shim/types/element_ops.h"

namespace rmashim {

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
