// dart_put / dart_get in all their forms, flushes and handles. Mapped
// targets (this unit and node-local peers) are a memcpy (the core's
// CopyTyped for strided/indexed types); registered memory of node-local
// peers goes through the core's cross-memory attach; remote units through
// MPI RMA in the segment's lock_all epoch.
#include <atomic>
#include <climits>
#include <cstring>

#include "shim/agent/agent.h"
#include "shim/dart/state.h"
#include "shim/move/cross_memory.h"
#include "shim/types/datatype.h"

namespace rmashim::dart {
namespace {

enum class Dir { kPut, kGet };
enum class Mode { kNonBlocking, kBlocking, kHandle };

// Makes this unit's stores to mapped memory visible before it returns
// (the shared-memory counterpart of MPI_Win_flush).
inline void MemoryFence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

// One side of a transfer: `count` instances of `mpi`.
struct Side {
  TypeInfo type;
  MPI_Count count = 0;
  Layout layout;
};

dart_ret_t DescribeSide(dart_datatype_t t, size_t nelem, Side* side) {
  if (!g_dart.types.Describe(t, &side->type)) return DART_ERR_INVAL;
  const TypeInfo& info = side->type;
  if (nelem % info.elements != 0) return DART_ERR_INVAL;
  side->count = static_cast<MPI_Count>(nelem / info.elements);
  if (info.basic) {
    side->layout.bytes = static_cast<MPI_Aint>(nelem * info.base_size);
    side->layout.lo = 0;
    side->layout.hi = side->layout.bytes;
    side->layout.dense = true;
    return DART_OK;
  }
  if (side->count > INT_MAX) return DART_ERR_INVAL;
  return DescribeLayout(static_cast<int>(side->count), info.mpi,
                        &side->layout) == MPI_SUCCESS
             ? DART_OK
             : DART_ERR_INVAL;
}

// One MPI put or get (request-based for handles); the int-count forms when
// the counts fit, they are MPICH's shorter path.
int PutGet(Dir dir, void* local, MPI_Count lcount, MPI_Datatype ltype,
           MPI_Count rcount, MPI_Datatype rtype, const Where& w,
           MPI_Request* req) {
  if (lcount <= INT_MAX && rcount <= INT_MAX) {
    const int lc = static_cast<int>(lcount), rc = static_cast<int>(rcount);
    if (dir == Dir::kPut) {
      return req ? PMPI_Rput(local, lc, ltype, w.rank, w.disp, rc, rtype, w.win,
                             req)
                 : PMPI_Put(local, lc, ltype, w.rank, w.disp, rc, rtype, w.win);
    }
    return req ? PMPI_Rget(local, lc, ltype, w.rank, w.disp, rc, rtype, w.win,
                           req)
               : PMPI_Get(local, lc, ltype, w.rank, w.disp, rc, rtype, w.win);
  }
  if (dir == Dir::kPut) {
    return req ? PMPI_Rput_c(local, lcount, ltype, w.rank, w.disp, rcount,
                             rtype, w.win, req)
               : PMPI_Put_c(local, lcount, ltype, w.rank, w.disp, rcount, rtype,
                            w.win);
  }
  return req ? PMPI_Rget_c(local, lcount, ltype, w.rank, w.disp, rcount, rtype,
                           w.win, req)
             : PMPI_Get_c(local, lcount, ltype, w.rank, w.disp, rcount, rtype,
                          w.win);
}

dart_ret_t IssueMpi(Dir dir, void* local, MPI_Count lcount, MPI_Datatype ltype,
                    MPI_Count rcount, MPI_Datatype rtype, const Where& w,
                    Mode mode, dart_handle_t* handle) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Request* req = mode == Mode::kHandle ? &request : nullptr;
  if (PutGet(dir, local, lcount, ltype, rcount, rtype, w, req) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  *w.pending = 1;
  if (mode == Mode::kBlocking) return FromMpi(PMPI_Win_flush(w.rank, w.win));
  if (mode == Mode::kHandle) {
    dart_handle_t h = g_dart.handles.Take();
    h->request = request;
    h->win = w.win;
    h->target = w.rank;
    *handle = h;
  }
  return DART_OK;
}

// Any types: checks, then a copy, cross-memory transfer or MPI call.
dart_ret_t TransferTyped(Dir dir, const dart_gptr_t& g, void* local,
                         size_t nelem, dart_datatype_t local_type,
                         dart_datatype_t remote_type, Mode mode,
                         dart_handle_t* handle) {
  Side l, r;
  if (dart_ret_t rc = DescribeSide(local_type, nelem, &l)) return rc;
  if (dart_ret_t rc = DescribeSide(remote_type, nelem, &r)) return rc;
  if (l.type.base != r.type.base) return DART_ERR_INVAL;  // no conversion
  Where w;
  if (dart_ret_t rc = Resolve(g, r.layout.lo, r.layout.hi, &w)) return rc;
  if (nelem == 0) return DART_OK;
  if (w.path == Path::kCrossMemory) {
    const Verdict v = CrossMemoryTransfer(
        dir == Dir::kPut, w.pid, w.addr,
        {w.addr, static_cast<int>(r.count), r.type.mpi, r.layout},
        {local, static_cast<int>(l.count), l.type.mpi, l.layout});
    if (!v.passes_through()) return FromMpi(v.rc());
    // A layout cross-memory attach cannot express: MPI moves it.
  } else if (w.path == Path::kMapped) {
    if (!(l.layout.dense && r.layout.dense) &&
        (l.count > INT_MAX || r.count > INT_MAX || l.layout.bytes > INT_MAX)) {
      return DART_ERR_INVAL;
    }
    const int rc =
        dir == Dir::kPut
            ? CopyTyped(local, static_cast<int>(l.count), l.type.mpi, l.layout,
                        w.addr, static_cast<int>(r.count), r.type.mpi, r.layout)
            : CopyTyped(w.addr, static_cast<int>(r.count), r.type.mpi, r.layout,
                        local, static_cast<int>(l.count), l.type.mpi, l.layout);
    if (mode == Mode::kBlocking && dir == Dir::kGet) PokeProgress();
    if (mode == Mode::kBlocking) MemoryFence();
    return FromMpi(rc);
  }
  return IssueMpi(dir, local, l.count, l.type.mpi, r.count, r.type.mpi, w, mode,
                  handle);
}

// The common case, basic types on both sides, is checked and copied here
// without building layouts.
inline dart_ret_t Transfer(Dir dir, const dart_gptr_t& g, void* local,
                           size_t nelem, dart_datatype_t local_type,
                           dart_datatype_t remote_type, Mode mode,
                           dart_handle_t* handle) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (mode == Mode::kHandle) {
    if (handle == nullptr) return DART_ERR_INVAL;
    *handle = DART_HANDLE_NULL;
  }
  if (local == nullptr && nelem != 0) return DART_ERR_INVAL;
  if (local_type == remote_type && IsBasic(local_type)) {
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(nelem),
                               BasicSize(local_type), &bytes) ||
        bytes > static_cast<uint64_t>(LONG_MAX / 2)) {
      return DART_ERR_INVAL;
    }
    Where w;
    if (dart_ret_t rc = Resolve(g, 0, static_cast<MPI_Aint>(bytes), &w)) {
      return rc;
    }
    if (w.path == Path::kMapped) {
      if (dir == Dir::kPut) {
        std::memcpy(w.addr, local, bytes);
      } else {
        std::memcpy(local, w.addr, bytes);
        if (mode == Mode::kBlocking) PokeProgress();
      }
      if (mode == Mode::kBlocking) MemoryFence();
      return DART_OK;
    }
    if (w.path == Path::kMpi) {
      if (nelem == 0) return DART_OK;
      const MPI_Datatype type = BasicMpi(local_type);
      const auto count = static_cast<MPI_Count>(nelem);
      return IssueMpi(dir, local, count, type, count, type, w, mode, handle);
    }
  }
  return TransferTyped(dir, g, local, nelem, local_type, remote_type, mode,
                       handle);
}

// The window and pending flags of gptr's segment (no range check), and the
// core's window when the segment's atomics may go to agents (else null).
dart_ret_t FindSegmentWin(const dart_gptr_t& g, bool need_unit, MPI_Win* win,
                          std::vector<uint8_t>** pending,
                          ManagedWindow** agent_window) {
  *agent_window = nullptr;
  if (g.segid == DART_SEGMENT_LOCAL) {
    if (g.teamid != DART_TEAM_ALL) return DART_ERR_INVAL;
    if (need_unit && (g.unitid < 0 || g.unitid >= g_dart.size)) {
      return DART_ERR_INVAL;
    }
    *win = g_dart.heap.win();
    *pending = &g_dart.heap.pending();
    return DART_OK;
  }
  const Team* team = FindTeam(g.teamid);
  Segment* s = team ? team->FindSegment(g.segid) : nullptr;
  if (s == nullptr) return DART_ERR_NOTFOUND;
  if (need_unit && (g.unitid < 0 || g.unitid >= team->size)) {
    return DART_ERR_INVAL;
  }
  *win = s->rma_win;
  *pending = &s->pending;
  if (s->agent_atomics) *agent_window = s->window.get();
  return DART_OK;
}

dart_ret_t Flush(const dart_gptr_t& g, bool all, bool local_only) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  MPI_Win win;
  std::vector<uint8_t>* pending;
  ManagedWindow* agent_window;
  if (dart_ret_t rc = FindSegmentWin(g, !all, &win, &pending, &agent_window)) {
    return rc;
  }
  MemoryFence();
  // Atomics sent to agents and waiting for no answer are complete here
  // already (copied); remotely once their agents answer a flush.
  if (agent_window != nullptr && !local_only) {
    const int agent_rc = all ? AgentFlushAll(*agent_window)
                             : AgentFlush(*agent_window, g.unitid);
    if (agent_rc != MPI_SUCCESS) return FromMpi(agent_rc);
  }
  int rc = MPI_SUCCESS;
  if (all) {
    bool any = false;
    for (uint8_t p : *pending) any |= p != 0;
    if (!any) {
      PokeProgress();  // a poll through directly reached memory
      return DART_OK;
    }
    rc = FlushPendingUnits(
        win, *pending, local_only ? Completion::kLocal : Completion::kRemote);
    g_dart.handles.Reap(win, /*all_complete=*/rc == MPI_SUCCESS);
  } else {
    uint8_t& p = (*pending)[g.unitid];
    if (!p) {
      PokeProgress();
      return DART_OK;
    }
    rc = local_only ? PMPI_Win_flush_local(g.unitid, win)
                    : PMPI_Win_flush(g.unitid, win);
    if (!local_only) p = 0;
    g_dart.handles.Reap(win, /*all_complete=*/false);
  }
  return FromMpi(rc);
}

// Completes one handle (remotely too unless `local_only`) and returns it to
// the pool.
dart_ret_t Complete(dart_handle_t* handle, bool local_only) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (handle == nullptr) return DART_ERR_INVAL;
  dart_handle_t h = *handle;
  if (h == DART_HANDLE_NULL) return DART_OK;
  if (!g_dart.handles.Valid(h)) return DART_ERR_INVAL;
  int rc = PMPI_Wait(&h->request, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS && !local_only) rc = PMPI_Win_flush(h->target, h->win);
  g_dart.handles.Give(h);
  *handle = DART_HANDLE_NULL;
  return FromMpi(rc);
}

dart_ret_t TestOne(dart_handle_t* handle, bool local_only, int32_t* done) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (handle == nullptr || done == nullptr) return DART_ERR_INVAL;
  dart_handle_t h = *handle;
  *done = 1;
  if (h == DART_HANDLE_NULL) return DART_OK;
  if (!g_dart.handles.Valid(h)) return DART_ERR_INVAL;
  int flag = 0;
  if (PMPI_Test(&h->request, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  if (!flag) {
    *done = 0;
    return DART_OK;
  }
  return Complete(handle, local_only);  // the request is now null: no wait
}

dart_ret_t CompleteAll(dart_handle_t handles[], size_t n, bool local_only) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (handles == nullptr && n > 0) return DART_ERR_INVAL;
  dart_ret_t result = DART_OK;
  for (size_t i = 0; i < n; ++i) {
    if (dart_ret_t rc = Complete(&handles[i], local_only)) result = rc;
  }
  return result;
}

dart_ret_t TestAll(dart_handle_t handles[], size_t n, bool local_only,
                   int32_t* done) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if ((handles == nullptr && n > 0) || done == nullptr) return DART_ERR_INVAL;
  *done = 1;
  for (size_t i = 0; i < n; ++i) {
    int32_t one = 0;
    if (dart_ret_t rc = TestOne(&handles[i], local_only, &one)) return rc;
    if (!one) *done = 0;
  }
  return DART_OK;
}

}  // namespace
}  // namespace rmashim::dart

using namespace rmashim;
using namespace rmashim::dart;

extern "C" {

dart_ret_t dart_put(dart_gptr_t gptr, const void* src, size_t nelem,
                    dart_datatype_t src_type, dart_datatype_t dst_type) {
  LockGuard guard;
  return Transfer(Dir::kPut, gptr, const_cast<void*>(src), nelem, src_type,
                  dst_type, Mode::kNonBlocking, nullptr);
}

dart_ret_t dart_get(void* dest, dart_gptr_t gptr, size_t nelem,
                    dart_datatype_t src_type, dart_datatype_t dst_type) {
  LockGuard guard;
  return Transfer(Dir::kGet, gptr, dest, nelem, dst_type, src_type,
                  Mode::kNonBlocking, nullptr);
}

dart_ret_t dart_put_blocking(dart_gptr_t gptr, const void* src, size_t nelem,
                             dart_datatype_t src_type,
                             dart_datatype_t dst_type) {
  LockGuard guard;
  return Transfer(Dir::kPut, gptr, const_cast<void*>(src), nelem, src_type,
                  dst_type, Mode::kBlocking, nullptr);
}

dart_ret_t dart_get_blocking(void* dest, dart_gptr_t gptr, size_t nelem,
                             dart_datatype_t src_type,
                             dart_datatype_t dst_type) {
  LockGuard guard;
  return Transfer(Dir::kGet, gptr, dest, nelem, dst_type, src_type,
                  Mode::kBlocking, nullptr);
}

dart_ret_t dart_put_handle(dart_gptr_t gptr, const void* src, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_handle_t* handle) {
  LockGuard guard;
  return Transfer(Dir::kPut, gptr, const_cast<void*>(src), nelem, src_type,
                  dst_type, Mode::kHandle, handle);
}

dart_ret_t dart_get_handle(void* dest, dart_gptr_t gptr, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_handle_t* handle) {
  LockGuard guard;
  return Transfer(Dir::kGet, gptr, dest, nelem, dst_type, src_type,
                  Mode::kHandle, handle);
}

dart_ret_t dart_flush(dart_gptr_t gptr) {
  LockGuard guard;
  return Flush(gptr, false, false);
}
dart_ret_t dart_flush_all(dart_gptr_t gptr) {
  LockGuard guard;
  return Flush(gptr, true, false);
}
dart_ret_t dart_flush_local(dart_gptr_t gptr) {
  LockGuard guard;
  return Flush(gptr, false, true);
}
dart_ret_t dart_flush_local_all(dart_gptr_t gptr) {
  LockGuard guard;
  return Flush(gptr, true, true);
}

dart_ret_t dart_wait(dart_handle_t* handle) {
  LockGuard guard;
  return Complete(handle, false);
}
dart_ret_t dart_wait_local(dart_handle_t* handle) {
  LockGuard guard;
  return Complete(handle, true);
}
dart_ret_t dart_waitall(dart_handle_t handles[], size_t n) {
  LockGuard guard;
  return CompleteAll(handles, n, false);
}
dart_ret_t dart_waitall_local(dart_handle_t handles[], size_t n) {
  LockGuard guard;
  return CompleteAll(handles, n, true);
}
dart_ret_t dart_test(dart_handle_t* handle, int32_t* is_finished) {
  LockGuard guard;
  return TestOne(handle, false, is_finished);
}
dart_ret_t dart_test_local(dart_handle_t* handle, int32_t* is_finished) {
  LockGuard guard;
  return TestOne(handle, true, is_finished);
}
dart_ret_t dart_testall(dart_handle_t handles[], size_t n,
                        int32_t* is_finished) {
  LockGuard guard;
  return TestAll(handles, n, false, is_finished);
}
dart_ret_t dart_testall_local(dart_handle_t handles[], size_t n,
                              int32_t* is_finished) {
  LockGuard guard;
  return TestAll(handles, n, true, is_finished);
}

dart_ret_t dart_handle_free(dart_handle_t* handle) {
  LockGuard guard;
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (handle == nullptr) return DART_ERR_INVAL;
  dart_handle_t h = *handle;
  if (h == DART_HANDLE_NULL) return DART_OK;
  if (!g_dart.handles.Valid(h)) return DART_ERR_INVAL;
  // The operation completes at the segment's next flush.
  g_dart.handles.Release(h);
  *handle = DART_HANDLE_NULL;
  return DART_OK;
}

}  // extern "C"
