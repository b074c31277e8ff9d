// Put and get on managed windows: node-local targets are served by direct
// copies into the mapped segment; everything else goes to MPI on the window
// (the application's window: ManagedWindow keeps an MPI epoch open on it).
#include <mpi.h>

#include <cstring>
#include <optional>

#include "shim/agent/agent.h"
#include "shim/base/copy.h"
#include "shim/base/direct_stores.h"
#include "shim/intercept/finish_call.h"
#include "shim/move/access.h"
#include "shim/move/accumulate.h"
#include "shim/move/admission.h"
#include "shim/move/cross_memory.h"
#include "shim/process/runtime.h"
#include "shim/profile/profile.h"
#include "shim/types/datatype.h"
#include "shim/windows/passthrough.h"
#include "shim/windows/window.h"

namespace rmashim {
namespace {

enum class Direction { kPut, kGet };

struct Transfer {
  Direction dir;
  void* origin;
  int origin_count;
  MPI_Datatype origin_type;
  int target;
  MPI_Aint disp;
  int target_count;
  MPI_Datatype target_type;
};

// The common case in a few instructions, inlined into MPI_Put and MPI_Get:
// one predefined type on both sides, equal counts, a node-local target
// mapped here in an epoch that gives access. Sets the target address and
// `*bytes`; false sends the call through MoveDirect's full checks
// (everything else, and every error).
// `ranks`: the targets it may serve (DirectWordBelow).
[[gnu::always_inline]] inline bool FastAddress(
    const ManagedWindow& w, int ranks, const void* origin, int count,
    MPI_Datatype origin_type, int target, MPI_Aint disp, int target_count,
    MPI_Datatype target_type, MPI_Aint* bytes, std::byte** addr) {
  if (origin_type != target_type || count != target_count ||
      !IsBuiltinType(origin_type) || origin == nullptr) {
    return false;
  }
  // Negative and zero counts, and zero-size types, end up <= 0.
  *bytes = static_cast<MPI_Aint>(count) * BuiltinTypeSize(origin_type);
  return *bytes > 0 && DirectWordBelow(w, ranks, target, disp, *bytes, addr);
}

// A put or get to a remote target that Admit gave to its agent: one RMA
// operation into the target's memory where both layouts are dense and the
// window has RMA to the target (shim/agent/agent_rma.cc); otherwise the
// accumulate family's path with MPI_REPLACE (put) or a fetching MPI_NO_OP
// (get), which the agent applies element by element (agent.h). Layouts an
// accumulate may not have and a put may (MPI_CHAR, MPI_PACKED, a target
// type that is not one predefined type throughout) are refused there with
// MPI_ERR_TYPE or MPI_ERR_OP: the put's own checks have passed by then, so
// MPI moves those.
Verdict MoveThroughAgent(ManagedWindow& w, const Transfer& x, Form form,
                         const Layout& origin_layout,
                         const Layout& target_layout) {
  const bool put = x.dir == Direction::kPut;
  // Dense on both sides: one RMA operation where the window has RMA to the
  // target (agent_rma.cc).
  if (origin_layout.dense && target_layout.dense) {
    const MPI_Aint offset =
        x.disp * w.target(x.target).disp_unit + target_layout.lo;
    if (const std::optional<int> rc = AgentRmaMove(
            w, put, x.target, offset,
            static_cast<std::byte*>(x.origin) + origin_layout.lo,
            static_cast<size_t>(target_layout.bytes), form == Form::kRequest)) {
      return Verdict::Error(*rc);
    }
  }
  const AccumulateCall c =
      put ? AccumulateOf(x.origin, x.origin_count, x.origin_type, x.target,
                         x.disp, x.target_count, x.target_type, MPI_REPLACE,
                         form)
          : GetAccumulateOf(nullptr, 0, MPI_DATATYPE_NULL, x.origin,
                            x.origin_count, x.origin_type, x.target, x.disp,
                            x.target_count, x.target_type, MPI_NO_OP, form);
  const Verdict v = AccumulateDirect(w, c);
  int error_class = MPI_SUCCESS;
  if (!v.passes_through() && !v.ok()) PMPI_Error_class(v.rc(), &error_class);
  if (error_class == MPI_ERR_TYPE || error_class == MPI_ERR_OP) {
    return Verdict::PassThrough(Fallback::kDatatype);
  }
  return v;
}

// The full path of a put or get on a managed window: the inline path's
// test first (calls the inline path leaves here: profiled windows, the
// request-based forms); else every check, then one copy to or from a
// node-local target (through cross-memory attach for MPI_Win_create memory
// of another process), or MPI's with the reason: a target on another node,
// MPI's PSCW on a window spanning nodes, a cross-memory layout that is not
// plain byte ranges.
Verdict MoveDirect(ManagedWindow& w, const Transfer& x, Form form) {
  MPI_Aint bytes = 0;
  std::byte* addr = nullptr;
  // Says yes only where Admit would.
  if (FormAllowedInEpoch(w, form) &&
      FastAddress(w, w.comm_size(), x.origin, x.origin_count, x.origin_type,
                  x.target, x.disp, x.target_count, x.target_type, &bytes,
                  &addr)) {
    const bool put = x.dir == Direction::kPut;
    CopyBytes(put ? static_cast<void*>(addr) : x.origin,
              put ? static_cast<const void*>(x.origin) : addr,
              static_cast<size_t>(bytes));
    NoteDirectStores();
    return Verdict::Served();
  }
  Layout origin_layout, target_layout;
  if (!DescribeBuiltin(x.origin_count, x.origin_type, &origin_layout)) {
    if (const int rc =
            DescribeLayout(x.origin_count, x.origin_type, &origin_layout)) {
      return Verdict::Error(rc);
    }
  }
  if (const int rc = CheckBuffer(x.origin, x.origin_type, origin_layout)) {
    return Verdict::Error(rc);
  }
  if (!DescribeBuiltin(x.target_count, x.target_type, &target_layout)) {
    if (const int rc =
            DescribeLayout(x.target_count, x.target_type, &target_layout)) {
      return Verdict::Error(rc);
    }
  }
  if (const auto ends = Admit(w, Access::kCopy, form, x.target, x.disp,
                              target_layout, origin_layout.bytes)) {
    return *ends;
  }
  const Target& t = w.target(x.target);
  if (!t.node_local()) {
    return MoveThroughAgent(w, x, form, origin_layout, target_layout);
  }
  const MPI_Aint offset = x.disp * t.disp_unit;  // Admit checked the range
  addr = t.base + offset;
  if (t.pid != 0) {  // MPI_Win_create memory in another process
    const Verdict v = CrossMemoryTransfer(
        x.dir == Direction::kPut, t.pid, addr,
        {addr, x.target_count, x.target_type, target_layout},
        {x.origin, x.origin_count, x.origin_type, origin_layout});
    if (!v.passes_through()) NoteDirectStores();  // cross-memory writes too
    return v;
  }
  const int rc =
      x.dir == Direction::kPut
          ? CopyTyped(x.origin, x.origin_count, x.origin_type, origin_layout,
                      addr, x.target_count, x.target_type, target_layout)
          : CopyTyped(addr, x.target_count, x.target_type, target_layout,
                      x.origin, x.origin_count, x.origin_type, origin_layout);
  NoteDirectStores();
  return Verdict::Error(rc);
}

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
  return FinishCall(*w, x.target, MoveDirect(*w, x, form),
                    {kind, x.origin_count, x.origin_type}, request, mpi);
}

// MPI_Put and MPI_Get when the inline path did not serve them: the same
// arguments, so the wrappers end in a jump here.
template <Direction kDir>
[[gnu::noinline]] int PutGetAnyTypes(void* origin, int count, MPI_Datatype type,
                                     int target, MPI_Aint disp,
                                     int target_count, MPI_Datatype target_type,
                                     MPI_Win win) {
  return PutOrGet(
      win, {kDir, origin, count, type, target, disp, target_count, target_type},
      nullptr);
}

// ... with the same count and type on both sides: six arguments, all in
// registers, so the inline path past that test keeps fewer alive.
template <Direction kDir>
[[gnu::noinline]] int PutGetSameTypes(void* origin, int count,
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
    return PutGetAnyTypes<kDir>(origin, count, type, target, disp, target_count,
                                target_type, win);
  }
  // From here on the target's count and type are the origin's:
  // PutGetSameTypes takes six arguments.
  const ManagedWindow* w = FindManagedHome(win);
  MPI_Aint bytes = 0;
  std::byte* addr = nullptr;
  // Profiled windows take the full path (which counts what it serves), so
  // nothing here needs the arguments once the address is known.
  if (w == nullptr ||
      !FastAddress(*w, w->unprofiled_ranks(), origin, count, type, target, disp,
                   count, type, &bytes, &addr)) [[unlikely]] {
    return PutGetSameTypes<kDir>(origin, count, type, target, disp, win);
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
