// MPI_Win_lock_all on windows whose locks stay MPI's (windows spanning
// nodes without the agent's locks): MPI's shared locks taken one target at
// a time, in rank order, instead of MPICH's lock_all.
//
// Why. MPICH 4.0.2 (ch4, win_lock_advance in ch4r_rma_target_callbacks.c)
// queues lock requests at a target first come, first served: a shared
// request waits behind an exclusive one queued before it, even while the
// lock is held shared. And its lock_all sends a shared request to every
// target at once. Two lock_alls A and B, exclusive requests E1 at target 1
// and E2 at target 2: A is granted target 1, E1 queues there behind A, B's
// request reaches target 1 after E1 and waits; at target 2 the same with A
// and B swapped. A waits for B (through E2) and B for A (through E1), for
// ever. Each process holds one epoch, so the program is correct; natively
// it takes the right timing (seen on 4 ranks of the odd-even split,
// tests/diff/split_accumulate.c, in MPI_Win_lock and MPI_Win_lock_all on
// every rank).
//
// Taken in rank order, each target granted before the next is asked, a
// lock_all waiting at target t holds only targets below t, and it waits
// either for a holder that waits for no lock (an exclusive or shared
// epoch's owner, a lock_all that has all its targets) or, through a queued
// exclusive request, for the shared holders of t: lock_alls that hold t
// and so wait, if at all, at a target above t. Along any chain of waits
// the target rises, so the chain ends: no cycle. The price is one round
// trip per target in sequence instead of one in parallel, at lock_all and
// at unlock_all. A cycle needs two lock_alls and exclusive requests at two
// targets from other processes (one process, or two threads of one,
// besides the two lock_alls), so on fewer than three ranks MPICH's lock_all
// is kept.
#ifndef RMASHIM_SHIM_SYNC_MPI_LOCK_ALL_H_
#define RMASHIM_SHIM_SYNC_MPI_LOCK_ALL_H_

#include <mpi.h>

namespace rmashim {

// Whether MPI_Win_lock_all on a window of `size` ranks whose locks are
// MPI's takes the targets one by one (with MPI_MODE_NOCHECK, `nocheck`, it
// takes no lock).
inline bool LocksAllTargetsInOrder(int size, bool nocheck) {
  return size > 2 && !nocheck;
}

// MPI_Win_lock(MPI_LOCK_SHARED) on targets 0, 1, ..., size - 1 of `win`.
// On an error (raised by MPI on the window's handler) the targets already
// locked are unlocked and the error returned.
int LockEveryTargetShared(MPI_Win win, int size);

// MPI_Win_unlock on every target of `win`; the first error, after trying
// them all.
int UnlockEveryTarget(MPI_Win win, int size);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_SYNC_MPI_LOCK_ALL_H_
