// Checks shared by every data-movement call on a managed window, in the
// order MPICH makes them, so bad input gets the error class native MPICH
// gives.
#ifndef RMASHIM_SHIM_MOVE_ACCESS_H_
#define RMASHIM_SHIM_MOVE_ACCESS_H_

#include <mpi.h>

#include "shim/epochs/active_target.h"
#include "shim/types/datatype.h"
#include "shim/windows/window.h"

namespace rmashim {

// MPI_ERR_RANK for a rank outside the window's group (MPI_PROC_NULL is
// valid), MPI_ERR_DISP for a negative displacement.
inline int CheckTargetArgs(const ManagedWindow& w, int target, MPI_Aint disp) {
  if (target < MPI_PROC_NULL || target >= w.comm_size()) return MPI_ERR_RANK;
  if (disp < 0) return MPI_ERR_DISP;
  return MPI_SUCCESS;
}

// A call's form: MPI_Put, MPI_Accumulate, ... or their request-based
// MPI_Rput, MPI_Raccumulate, ...
enum class Form : uint8_t { kPlain, kRequest };

// Whether the current epoch allows a call of `form`: request-based
// operations are only valid in passive-target epochs (MPI-3 11.3.5). (One
// to MPI_PROC_NULL is a no-op that succeeds and returns a completed request
// in any epoch, as in MPICH: Admit decides that first.)
inline bool FormAllowedInEpoch(const ManagedWindow& w, Form form) {
  return form == Form::kPlain || IsPassive(w.epoch());
}

// Whether this process's current epoch lets it access `target` directly.
enum class EpochAccess { kDirect, kPassThrough, kNoEpoch };
inline EpochAccess CheckEpoch(ManagedWindow& w, int target) {
  switch (w.epoch()) {
    case AccessEpoch::kFence:
    case AccessEpoch::kLockAll:
      return EpochAccess::kDirect;
    case AccessEpoch::kLock:
      return w.lock_state(target).mode != LockMode::kNone
                 ? EpochAccess::kDirect
                 : EpochAccess::kNoEpoch;
    case AccessEpoch::kPscw:
      // MPI's PSCW (a window spanning nodes): the node-local targets of the
      // start, whose posts MPI has matched (wrap_active.cc), are direct;
      // MPI judges the others.
      if (!w.locks_in_shm()) {
        return w.lock_state(target).in_access_group ? EpochAccess::kDirect
                                                    : EpochAccess::kPassThrough;
      }
      if (!w.lock_state(target).in_access_group) return EpochAccess::kNoEpoch;
      AwaitPost(w, target);
      return EpochAccess::kDirect;
    case AccessEpoch::kNone:
      break;
  }
  return EpochAccess::kNoEpoch;
}

// The fast paths' whole check (wrap_rma.cc, accumulate.cc): `bytes` of a
// predefined type at `disp` of `target` may be accessed directly, with no
// error to report, through this process's own mapping. Sets `*addr`. False
// sends the call through the full checks (which then find the error or the
// route), so this only has to be right when it says yes: the target is a
// window rank (not MPI_PROC_NULL), the epoch gives access without waiting
// (in PSCW: a target of the current start whose post has been matched, as
// CheckEpoch would find after AwaitPost), the target's memory is mapped
// here and the bytes lie inside it.
// `ranks`: the targets to admit, 0..ranks-1 (comm_size(), or a fast path's
// bound that is 0 on windows it does not serve).
inline bool DirectWordBelow(const ManagedWindow& w, int ranks, int target,
                            MPI_Aint disp, MPI_Aint bytes, std::byte** addr) {
  if (static_cast<unsigned>(target) >= static_cast<unsigned>(ranks) ||
      disp < 0) {
    return false;
  }
  // TargetLockState::direct says it for every kind of epoch.
  if (!w.lock_state(target).direct) return false;
  const Target& t = w.target(target);
  MPI_Aint offset;  // direct_size -1 (not mapped here) fails the last test
  if (__builtin_mul_overflow(disp, static_cast<MPI_Aint>(t.disp_unit),
                             &offset) ||
      offset > t.direct_size - bytes) {
    return false;
  }
  *addr = t.base + offset;
  return true;
}

inline bool DirectWord(const ManagedWindow& w, int target, MPI_Aint disp,
                       MPI_Aint bytes, std::byte** addr) {
  return DirectWordBelow(w, w.comm_size(), target, disp, bytes, addr);
}

// Whether `layout` placed at `disp` fits inside the target's window; false
// means MPI_ERR_RMA_RANGE. Sets `*offset` to the byte offset of `disp`.
inline bool FitsInTarget(const Target& t, MPI_Aint disp, const Layout& layout,
                         MPI_Aint* offset) {
  if (__builtin_mul_overflow(disp, static_cast<MPI_Aint>(t.disp_unit),
                             offset)) {
    return false;
  }
  return layout.bytes == 0 ||
         (*offset + layout.lo >= 0 && *offset + layout.hi <= t.size);
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_MOVE_ACCESS_H_
