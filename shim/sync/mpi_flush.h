// Completing RMA operations handed to MPI: one target at a time, never
// with MPI_Win_flush_all or MPI_Win_flush_local_all.
//
// Why. MPICH 4.0.2's ch4:ucx completes flush_all, flush_local_all, fence
// and complete with one UCX worker flush (ucp_worker_flush_nb, in
// MPIDI_NM_rma_win_cmpl_hook), and flush(rank) / flush_local(rank) /
// unlock(rank) with an endpoint flush of that target (ucp_ep_flush, in
// MPIDI_NM_rma_target_cmpl_hook). Where UCX has no transport that can write
// the target's memory itself (TCP, or ranks of one host that MPICH puts on
// different nodes, as the simulated splits do), it emulates a put with
// active messages, fragment by fragment, copying each from the origin
// buffer as it is sent; fragments that do not fit the transport's queue
// wait in the endpoint's pending queue. UCX 1.13's worker flush counts only
// fragments already sent (flush_ops_count) and asks the interfaces, which
// know nothing of pending queues: when every sent fragment has been
// acknowledged and the rest still wait, it reports completion. The data
// then lands at the target after the flush returned and after the barrier
// that followed it, or, for local completion, is copied from the origin
// buffer after the program reused it (a freed buffer crashes UCX). An
// endpoint flush queues behind the pending fragments and waits for them.
// //tests/stress:lost_put_test loses blocks this way natively, in most runs
// at 8 ranks on the odd-even split.
//
// So, in passive epochs, the shim and libdart flush the targets they handed
// operations to one at a time (FlushEachTarget). In MPI's fence and PSCW
// epochs, where MPI_Win_flush is erroneous, FlushEndpoint flushes the UCX
// endpoint through a window of the shim's own. MPI_Win_unlock_all and
// MPI_Win_complete's remote completion stay MPI's: after the worker flush
// they send each target an unlock or complete message, which UCX queues on
// the same endpoint behind the fragments, and the target acts on it only
// after applying them (unlock_all also waits for every target's answer).
#ifndef RMASHIM_SHIM_SYNC_MPI_FLUSH_H_
#define RMASHIM_SHIM_SYNC_MPI_FLUSH_H_

#include <mpi.h>

namespace rmashim {

// What a flush guarantees: remote completion (MPI_Win_flush) or only that
// origin buffers may be reused (MPI_Win_flush_local).
enum class Completion { kRemote, kLocal };

// Flushes `win` at every target in [0, size) for which `pending(target)` is
// true, in the passive epoch the caller holds; stops at the first error,
// which MPI has already raised on the window's handler, and returns it.
// `flushed(target)` runs after each target's successful flush.
template <typename Pending, typename Flushed>
int FlushEachTarget(MPI_Win win, int size, Completion completion,
                    Pending&& pending, Flushed&& flushed) {
  for (int target = 0; target < size; ++target) {
    if (!pending(target)) continue;
    const int rc = completion == Completion::kRemote
                       ? PMPI_Win_flush(target, win)
                       : PMPI_Win_flush_local(target, win);
    if (rc != MPI_SUCCESS) return rc;
    flushed(target);
  }
  return MPI_SUCCESS;
}

// The endpoint flush window: a window over one word per process of
// MPI_COMM_WORLD, kept in an MPI_Win_lock_all(MPI_MODE_NOCHECK) epoch from
// MPI_Init to MPI_Finalize, opened only when the job spans nodes (one
// MPICH context id). Collective over MPI_COMM_WORLD.
int OpenEndpointFlush();
void CloseEndpointFlush();

// Completes every RMA operation this process issued to `world_rank`
// through MPI, on any window, in any epoch: a one-byte get from that rank
// on the endpoint flush window, then MPI_Win_flush of it there. MPICH's
// flush of a target flushes the UCX endpoint to that process, which every
// window shares (one per process pair on MPICH's default single VCI), and
// an endpoint flush completes everything issued on the endpoint before it.
// MPI_SUCCESS without doing anything when the window is not open (a job on
// one node: nothing goes through UCX's emulation there).
int FlushEndpoint(int world_rank);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_SYNC_MPI_FLUSH_H_
