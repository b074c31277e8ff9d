// ServeTransfer (transfer.h): put and get past their inline path.
#include "shim/move/transfer.h"

#include <optional>

#include "shim/agent/agent.h"
#include "shim/base/copy.h"
#include "shim/base/direct_stores.h"
#include "shim/move/accumulate.h"
#include "shim/move/admission.h"
#include "shim/move/cross_memory.h"

namespace rmashim {
namespace {

// A put or get that Admit gave to a remote target's agent: one RMA
// operation into the target's memory where both layouts are dense and the
// window has RMA to the target (shim/agent/agent_rma.cc); otherwise
// element updates of MPI_REPLACE (put) or a fetching MPI_NO_OP (get)
// along the same route (MoveAsUpdates).
Verdict MoveThroughAgent(ManagedWindow& w, const Transfer& x, Form form,
                         const Layout& origin_layout,
                         const Layout& target_layout, const Route& route) {
  const bool put = x.dir == Direction::kPut;
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
  return MoveAsUpdates(w, c, route);
}

// The inline path's test (calls it leaves here: profiled windows, the
// request-based forms): one copy where it says yes.
bool TryFastTransfer(ManagedWindow& w, const Transfer& x, Form form) {
  MPI_Aint bytes = 0;
  std::byte* addr = nullptr;
  // Says yes only where Admit would.
  if (!FormAllowedInEpoch(w, form) ||
      !FastAddress(w, w.comm_size(), x.origin, x.origin_count, x.origin_type,
                   x.target, x.disp, x.target_count, x.target_type, &bytes,
                   &addr)) {
    return false;
  }
  const bool put = x.dir == Direction::kPut;
  CopyBytes(put ? static_cast<void*>(addr) : x.origin,
            put ? static_cast<const void*>(x.origin) : addr,
            static_cast<size_t>(bytes));
  NoteDirectStores();
  return true;
}

// The origin's and the target's layouts described and the origin's
// buffer checked, in MPICH's order.
int DescribeTransfer(const Transfer& x, Layout* origin, Layout* target) {
  if (!DescribeBuiltin(x.origin_count, x.origin_type, origin)) {
    if (const int rc = DescribeLayout(x.origin_count, x.origin_type, origin)) {
      return rc;
    }
  }
  if (const int rc = CheckBuffer(x.origin, x.origin_type, *origin)) return rc;
  if (!DescribeBuiltin(x.target_count, x.target_type, target)) {
    return DescribeLayout(x.target_count, x.target_type, target);
  }
  return MPI_SUCCESS;
}

// An admitted transfer to or from a node-local target along `route`.
Verdict CopyNodeLocal(ManagedWindow& w, const Transfer& x,
                      const Layout& origin_layout, const Layout& target_layout,
                      const Route& route) {
  const Target& t = w.target(x.target);
  std::byte* addr = t.base + x.disp * t.disp_unit;  // Admit checked the range
  if (route.path == Path::kCrossMemory) {
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

}  // namespace

Verdict ServeTransfer(ManagedWindow& w, const Transfer& x, Form form) {
  if (TryFastTransfer(w, x, form)) return Verdict::Served();
  Layout origin_layout, target_layout;
  if (const int rc = DescribeTransfer(x, &origin_layout, &target_layout)) {
    return Verdict::Error(rc);
  }
  const Admission a = Admit(w, Access::kCopy, form, x.target, x.disp,
                            target_layout, origin_layout.bytes);
  if (a.ends) return *a.ends;
  if (a.route.path == Path::kAgent) {
    return MoveThroughAgent(w, x, form, origin_layout, target_layout, a.route);
  }
  return CopyNodeLocal(w, x, origin_layout, target_layout, a.route);
}

}  // namespace rmashim
