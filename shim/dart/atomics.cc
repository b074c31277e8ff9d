// dart_accumulate, dart_fetch_and_op, dart_compare_and_swap. When every
// unit that can reach the memory shares this node, they run on the mapped
// target with the core's element-wise protocol (ApplyRun /
// ApplyCompareSwap: CPU atomics under the page stripes, the same code the
// MPI wrappers use). On team memory spanning nodes whose every unit runs
// the core's agent (shim/agent/agent.h), node-local units still take that path
// and remote units' agents apply the others with the same protocol, so the
// two stay atomic together. Otherwise they all go through MPI, which must
// apply remote units' updates and could not be atomic with CPU atomics.
#include <climits>

#include "shim/agent/agent.h"
#include "shim/dart/state.h"
#include "shim/move/accumulate.h"
#include "shim/types/element_ops.h"

namespace rmashim::dart {
namespace {

// The core Target and byte offset of a mapped atomic access.
dart_ret_t AtomicTarget(const dart_gptr_t& g, const Where& w, uint64_t bytes,
                        Target* t, MPI_Aint* offset) {
  if (w.segment == nullptr) {
    return g_dart.heap.AtomicTarget(g.unitid, g.addr_or_offs.offset, bytes, t,
                                    offset);
  }
  *t = w.segment->window->target(g.unitid);
  *offset = static_cast<MPI_Aint>(g.addr_or_offs.offset);
  return DART_OK;
}

// Who applies an atomic access.
enum class Applier : uint8_t {
  kCpu,    // this unit, on memory mapped here
  kAgent,  // the target's agent
  kMpi,
};

Applier ApplierOf(const Where& w) {
  if (w.path == Path::kMapped && (w.direct_atomics || w.agent_atomics)) {
    return Applier::kCpu;
  }
  return w.agent_atomics && w.path == Path::kMpi ? Applier::kAgent
                                                 : Applier::kMpi;
}

// Before a node-local atomic served in memory: on a team whose remote
// atomics go to agents (Where::agent_atomics) it enters no MPI call, so MPI
// makes progress now and then (state.h).
void PokeProgressWhereAgentsServe(const Where& w) {
  if (w.agent_atomics) PokeProgressNowAndThen();
}

struct Checked {
  const ElementOp* op = nullptr;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op mpi_op = MPI_OP_NULL;
  uint64_t bytes = 0;
  Where where;
  Applier applier = Applier::kMpi;
};

// `nelem` elements to the target's agent: `origin` packed (nullptr for
// MPI_NO_OP), the old values into `result` when not null. An update that
// waits for no answer is complete here on return (its elements are copied)
// and at the target after the next flush (onesided.cc).
dart_ret_t SendToAgent(const Checked& c, size_t nelem, const void* origin,
                       void* result) {
  const Where& w = c.where;
  return FromMpi(AgentUpdateContiguous(
      *w.segment->window, w.rank, w.disp, c.type, c.mpi_op, nelem, c.op->size,
      static_cast<const std::byte*>(origin), static_cast<std::byte*>(result)));
}

dart_ret_t Check(const dart_gptr_t& g, size_t nelem, dart_datatype_t dtype,
                 dart_operation_t op, Checked* c) {
  if (!IsBasic(dtype)) return DART_ERR_INVAL;
  c->type = BasicMpi(dtype);
  c->mpi_op = MpiOp(op);
  if (c->mpi_op == MPI_OP_NULL ||
      FindElementOp(c->type, c->mpi_op, &c->op) != MPI_SUCCESS) {
    return DART_ERR_INVAL;
  }
  if (__builtin_mul_overflow(static_cast<uint64_t>(nelem), BasicSize(dtype),
                             &c->bytes) ||
      c->bytes > static_cast<uint64_t>(LONG_MAX / 2)) {
    return DART_ERR_INVAL;
  }
  if (dart_ret_t rc =
          Resolve(g, 0, static_cast<MPI_Aint>(c->bytes), &c->where)) {
    return rc;
  }
  c->applier = ApplierOf(c->where);
  return DART_OK;
}

dart_ret_t Accumulate(const dart_gptr_t& g, const void* values, size_t nelem,
                      dart_datatype_t dtype, dart_operation_t op,
                      bool local_complete) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if ((values == nullptr && nelem > 0) || op == DART_OP_NO_OP) {
    return DART_ERR_INVAL;
  }
  Checked c;
  if (dart_ret_t rc = Check(g, nelem, dtype, op, &c)) return rc;
  if (nelem == 0) return DART_OK;
  const Where& w = c.where;
  if (c.applier == Applier::kCpu) {
    PokeProgressWhereAgentsServe(w);
    Target t;
    MPI_Aint offset = 0;
    if (dart_ret_t rc = AtomicTarget(g, w, c.bytes, &t, &offset)) return rc;
    ApplyRun(*c.op, /*exclusive=*/false, t, offset,
             static_cast<const std::byte*>(values), nullptr, nelem);
    return DART_OK;
  }
  if (c.applier == Applier::kAgent) {
    return SendToAgent(c, nelem, values, nullptr);
  }
  const MPI_Count n = static_cast<MPI_Count>(nelem);
  if (PMPI_Accumulate_c(values, n, c.type, w.rank, w.disp, n, c.type, c.mpi_op,
                        w.win) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  *w.pending = 1;
  return local_complete ? FromMpi(PMPI_Win_flush_local(w.rank, w.win))
                        : DART_OK;
}

}  // namespace
}  // namespace rmashim::dart

using namespace rmashim;
using namespace rmashim::dart;

extern "C" {

dart_ret_t dart_accumulate(dart_gptr_t gptr, const void* values, size_t nelem,
                           dart_datatype_t dtype, dart_operation_t op) {
  LockGuard guard;
  return Accumulate(gptr, values, nelem, dtype, op, false);
}

dart_ret_t dart_accumulate_blocking_local(dart_gptr_t gptr, const void* values,
                                          size_t nelem, dart_datatype_t dtype,
                                          dart_operation_t op) {
  LockGuard guard;
  return Accumulate(gptr, values, nelem, dtype, op, true);
}

dart_ret_t dart_fetch_and_op(dart_gptr_t gptr, const void* value, void* result,
                             dart_datatype_t dtype, dart_operation_t op) {
  LockGuard guard;
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (result == nullptr || (value == nullptr && op != DART_OP_NO_OP)) {
    return DART_ERR_INVAL;
  }
  Checked c;
  if (dart_ret_t rc = Check(gptr, 1, dtype, op, &c)) return rc;
  const Where& w = c.where;
  if (c.applier == Applier::kCpu) {
    PokeProgressWhereAgentsServe(w);
    Target t;
    MPI_Aint offset = 0;
    if (dart_ret_t rc = AtomicTarget(gptr, w, c.bytes, &t, &offset)) return rc;
    // MPI_NO_OP reads no origin: the target stands in for it.
    const std::byte* origin = op == DART_OP_NO_OP
                                  ? t.base + offset
                                  : static_cast<const std::byte*>(value);
    ApplyRun(*c.op, /*exclusive=*/false, t, offset, origin,
             static_cast<std::byte*>(result), 1);
    return DART_OK;
  }
  if (c.applier == Applier::kAgent) {
    return SendToAgent(c, 1, op == DART_OP_NO_OP ? nullptr : value, result);
  }
  const void* origin = value != nullptr ? value : result;
  if (PMPI_Fetch_and_op(origin, result, c.type, w.rank, w.disp, c.mpi_op,
                        w.win) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  return FromMpi(PMPI_Win_flush(w.rank, w.win));
}

dart_ret_t dart_compare_and_swap(dart_gptr_t gptr, const void* value,
                                 const void* compare, void* result,
                                 dart_datatype_t dtype) {
  LockGuard guard;
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (value == nullptr || compare == nullptr || result == nullptr ||
      !IsBasic(dtype)) {
    return DART_ERR_INVAL;
  }
  const MPI_Datatype type = BasicMpi(dtype);
  const CompareSwapOp* cas = nullptr;
  if (FindCompareSwap(type, &cas) != MPI_SUCCESS) return DART_ERR_INVAL;
  Where w;
  if (dart_ret_t rc = Resolve(gptr, 0, static_cast<MPI_Aint>(cas->size), &w)) {
    return rc;
  }
  const Applier applier = ApplierOf(w);
  if (applier == Applier::kCpu) {
    PokeProgressWhereAgentsServe(w);
    Target t;
    MPI_Aint offset = 0;
    if (dart_ret_t rc = AtomicTarget(gptr, w, cas->size, &t, &offset)) {
      return rc;
    }
    ApplyCompareSwap(*cas, /*exclusive=*/false, t, offset,
                     static_cast<const std::byte*>(value),
                     static_cast<const std::byte*>(compare),
                     static_cast<std::byte*>(result));
    return DART_OK;
  }
  if (applier == Applier::kAgent) {
    return FromMpi(AgentCompareSwap(*w.segment->window, w.rank, w.disp, type,
                                    cas->size,
                                    static_cast<const std::byte*>(value),
                                    static_cast<const std::byte*>(compare),
                                    static_cast<std::byte*>(result)));
  }
  if (PMPI_Compare_and_swap(value, compare, result, type, w.rank, w.disp,
                            w.win) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  return FromMpi(PMPI_Win_flush(w.rank, w.win));
}

}  // extern "C"
