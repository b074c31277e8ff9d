// MPI_Put and MPI_Get (and their request forms): the inline path serves a
// predefined type to a node-local target with one copy; the rest makes one
// call into move/ (ServeTransfer, move/transfer.h) and FinishCall ends it,
// or MPI moves it on a window the shim does not manage.
#include <mpi.h>

#include <cstring>

#include "shim/base/copy.h"
#include "shim/base/direct_stores.h"
#include "shim/intercept/finish_call.h"
#include "shim/move/transfer.h"
#include "shim/process/runtime.h"
#include "shim/profile/profile.h"
#include "shim/windows/window.h"

namespace rmashim {
namespace {

// A served put or get of more than one word with profiling off: the copy
// alone. Out of line with three arguments, so the fast path inlined into
// MPI_Put and MPI_Get ends in a jump and keeps nothing else alive.
[[gnu::noinline]] int CopyUncounted(void* dst, const void* src,
                                    MPI_Aint bytes) {
  CopyBytes(dst, src, static_cast<size_t>(bytes));
  NoteDirectStores();
  return MPI_SUCCESS;
}

// MPI_Put, MPI_Get, and with `request` their request-based forms.
[[gnu::noinline]] int PutOrGet(MPI_Win win, const Transfer& x,
                               MPI_Request* request) {
  const OpKind kind = x.dir == Direction::kPut
                          ? (request ? OpKind::kRput : OpKind::kPut)
                          : (request ? OpKind::kRget : OpKind::kGet);
  ManagedWindow* w = FindManaged(win);
  if (w == nullptr) {
    CountUnmanagedOp(win, kind, x.target, x.origin_count, x.origin_type);
  }
  const auto mpi = [&](MPI_Win used) {
    if (x.dir == Direction::kPut) {
      return request
                 ? PMPI_Rput(x.origin, x.origin_count, x.origin_type, x.target,
                             x.disp, x.target_count, x.target_type, used,
                             request)
                 : PMPI_Put(x.origin, x.origin_count, x.origin_type, x.target,
                            x.disp, x.target_count, x.target_type, used);
    }
    return request
               ? PMPI_Rget(x.origin, x.origin_count, x.origin_type, x.target,
                           x.disp, x.target_count, x.target_type, used, request)
               : PMPI_Get(x.origin, x.origin_count, x.origin_type, x.target,
                          x.disp, x.target_count, x.target_type, used);
  };
  if (w == nullptr) return mpi(win);
  const Form form = request != nullptr ? Form::kRequest : Form::kPlain;
  return FinishCall(*w, x.target, ServeTransfer(*w, x, form),
                    {kind, x.origin_count, x.origin_type}, request, mpi);
}

// MPI_Put and MPI_Get when the inline path did not serve them: the same
// arguments, so the wrappers end in a jump here.
template <Direction kDir>
[[gnu::noinline]] int PutOrGetWithTypes(void* origin, int count,
                                        MPI_Datatype type, int target,
                                        MPI_Aint disp, int target_count,
                                        MPI_Datatype target_type, MPI_Win win) {
  return PutOrGet(
      win, {kDir, origin, count, type, target, disp, target_count, target_type},
      nullptr);
}

// ... with the same count and type on both sides: six arguments, all in
// registers, so the inline path past that test keeps fewer alive.
template <Direction kDir>
[[gnu::noinline]] int PutOrGetOneType(void* origin, int count,
                                      MPI_Datatype type, int target,
                                      MPI_Aint disp, MPI_Win win) {
  return PutOrGet(win, {kDir, origin, count, type, target, disp, count, type},
                  nullptr);
}

// MPI_Put's and MPI_Get's whole body, inlined into each: the fast path, or
// a jump to the rest.
template <Direction kDir>
[[gnu::always_inline]] inline int PutGet(void* origin, int count,
                                         MPI_Datatype type, int target,
                                         MPI_Aint disp, int target_count,
                                         MPI_Datatype target_type,
                                         MPI_Win win) {
  // Misses are marked unlikely so the served path falls straight through:
  // a taken branch on it costs about as much as a few instructions.
  if (type != target_type || count != target_count) [[unlikely]] {
    return PutOrGetWithTypes<kDir>(origin, count, type, target, disp,
                                   target_count, target_type, win);
  }
  // From here on the target's count and type are the origin's:
  // PutOrGetOneType takes six arguments.
  const ManagedWindow* w = FindManagedHome(win);
  MPI_Aint bytes = 0;
  std::byte* addr = nullptr;
  // Profiled windows take the full path (which counts what it serves), so
  // nothing here needs the arguments once the address is known.
  if (w == nullptr ||
      !FastAddress(*w, w->unprofiled_ranks(), origin, count, type, target, disp,
                   count, type, &bytes, &addr)) [[unlikely]] {
    return PutOrGetOneType<kDir>(origin, count, type, target, disp, win);
  }
  constexpr bool kPut = kDir == Direction::kPut;
  void* dst = kPut ? static_cast<void*>(addr) : origin;
  const void* src = kPut ? origin : addr;
  if (bytes != 8) [[unlikely]]
    return CopyUncounted(dst, src, bytes);
  std::memcpy(dst, src, 8);  // one word: one load and one store
  NoteDirectStores();
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace rmashim

using rmashim::Direction;
using rmashim::PutGet;
using rmashim::PutOrGet;

extern "C" {

int MPI_Put(const void* origin_addr, int origin_count,
            MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return PutGet<Direction::kPut>(const_cast<void*>(origin_addr), origin_count,
                                 origin_datatype, target_rank, target_disp,
                                 target_count, target_datatype, win);
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win) {
  return PutGet<Direction::kGet>(origin_addr, origin_count, origin_datatype,
                                 target_rank, target_disp, target_count,
                                 target_datatype, win);
}

int MPI_Rput(const void* origin_addr, int origin_count,
             MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return PutOrGet(win,
                  {Direction::kPut, const_cast<void*>(origin_addr),
                   origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype},
                  request);
}

int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return PutOrGet(win,
                  {Direction::kGet, origin_addr, origin_count, origin_datatype,
                   target_rank, target_disp, target_count, target_datatype},
                  request);
}

}  // extern "C"
