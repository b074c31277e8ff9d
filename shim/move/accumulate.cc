// The accumulate family's full paths on a managed window (accumulate.h):
// checks, admission and route, apply.
#include "shim/move/accumulate.h"

#include <algorithm>
#include <span>
#include <vector>

#include "shim/agent/agent.h"
#include "shim/atomics/striped_apply.h"
#include "shim/base/direct_stores.h"
#include "shim/move/access.h"
#include "shim/move/admission.h"
#include "shim/move/cross_memory.h"
#include "shim/move/word_lane.h"
#include "shim/process/runtime.h"
#include "shim/sync/shm_lock.h"
#include "shim/types/datatype.h"
#include "shim/types/element_ops.h"
#include "shim/types/flatten.h"

namespace rmashim {
namespace {

// Where a flattened buffer's elements already lie packed (one run, elements
// as far apart as their size: a derived type laid out contiguously), so no
// pack or unpack copy is needed; nullptr otherwise. `buf` may be MPI_BOTTOM
// with an absolute run offset.
std::byte* PackedInPlace(const void* buf, const FlatType& flat,
                         int element_size) {
  if (flat.runs.size() != 1 || flat.element_extent != element_size)
    return nullptr;
  return reinterpret_cast<std::byte*>(reinterpret_cast<uintptr_t>(buf) +
                                      flat.runs[0].offset);
}

// The verdict on a type Flatten could not flatten.
Verdict NotFlattened(FlattenResult r) {
  return r.unhandled ? Verdict::PassThrough(Fallback::kDatatype)
                     : Verdict::Error(r.rc);
}

// Elements of `count` x `type` packed contiguously: the user's buffer when
// the type is predefined or lays them out that way, else a packed copy in
// `storage`. Served, or why not.
Verdict PackElements(const void* buf, int count, MPI_Datatype type,
                     MPI_Datatype element, MPI_Aint elements,
                     std::vector<std::byte>& storage,
                     const std::byte** packed) {
  if (IsBuiltinType(type)) {
    if (type != element || count != elements) {
      return Verdict::Error(MPI_ERR_TYPE);
    }
    *packed = static_cast<const std::byte*>(buf);
    return Verdict::Served();
  }
  FlatType flat;
  if (const FlattenResult r = Flatten(type, count, &flat); !r.flattened()) {
    return NotFlattened(r);
  }
  if (flat.elements != 0 &&
      (flat.element != element || flat.elements != elements)) {
    return Verdict::Error(MPI_ERR_TYPE);
  }
  int element_size = 0;  // packed elements are Type_size apart (pairs too)
  PMPI_Type_size(element, &element_size);
  if (const std::byte* in_place = PackedInPlace(buf, flat, element_size)) {
    *packed = in_place;
    return Verdict::Served();
  }
  storage.resize(static_cast<size_t>(flat.elements) * element_size);
  if (int rc = PackBytes(buf, count, type, storage.data(),
                         static_cast<MPI_Aint>(storage.size()))) {
    return Verdict::Error(rc);
  }
  *packed = storage.data();
  return Verdict::Served();
}

// `runs` of `elements` elements of `element` combined with `op` (`e`), from
// displacement `disp` of admitted window rank `target`, along `route`
// (routing.h): the target's agent, cross-memory attach of a node peer's
// MPI_Win_create memory, or memory this process maps (ApplyRun: CPU
// atomics, or plain stores under an exclusive lock); `origin` packed
// (ignored for MPI_NO_OP), the old values packed into `result` when it is
// not null.
int ApplyUpdate(ManagedWindow& w, const Route& route, int target, MPI_Aint disp,
                MPI_Datatype element, MPI_Op op, const ElementOp& e,
                std::span<const ElementRun> runs, size_t elements,
                const std::byte* origin, std::byte* result) {
  if (op == MPI_NO_OP) origin = nullptr;
  const Target& t = w.target(target);
  const MPI_Aint base = disp * t.disp_unit;
  switch (route.path) {
    case Path::kAgent:
      return AgentUpdate(w, target, disp, element, op, runs, elements, e.size,
                         origin, result);
    case Path::kCrossMemory:
      return CrossMemoryApply(e, origin != nullptr, route.exclusive, t, base,
                              runs, origin, result);
    default:
      break;
  }
  MPI_Aint done = 0;
  for (const ElementRun& run : runs) {
    const MPI_Aint offset = base + run.offset;
    // MPI_NO_OP reads no origin; hand the target itself in its place.
    const std::byte* src = origin ? origin + done * e.size : t.base + offset;
    ApplyRun(e, route.exclusive, t, offset, src,
             result ? result + done * e.size : nullptr, run.count,
             w.unstriped_slot());
    done += run.count;
  }
  return MPI_SUCCESS;
}

// An accumulate-family call whose arguments passed their checks
// (CheckUpdate): the target's layout, its elements, the element op.
struct CheckedUpdate {
  Layout target_layout;
  FlatType flat;
  const ElementOp* e = nullptr;
};

// The target's elements: a predefined type's, or a derived type's runs.
Verdict FlattenTarget(const AccumulateCall& c, FlatType* flat) {
  if (IsBuiltinType(c.target_type)) {
    flat->element = c.target_type;
    flat->elements = c.target_count;
    if (c.target_count > 0) flat->runs.push_back({0, c.target_count});
    return Verdict::Served();
  }
  if (const FlattenResult r = Flatten(c.target_type, c.target_count, flat);
      !r.flattened()) {
    return NotFlattened(r);
  }
  return Verdict::Served();
}

// The family's argument checks, in MPICH's order: the target's layout, the
// origin's and the result's with their buffers, the op, then whether the
// op is defined for the target's elements (MPICH would abort at the
// target) and predefined origin and result types match them.
Verdict CheckUpdate(const AccumulateCall& c, CheckedUpdate* u) {
  const bool fetching = c.fetching;
  if (const int rc =
          DescribeLayout(c.target_count, c.target_type, &u->target_layout)) {
    return Verdict::Error(rc);
  }
  Layout origin_layout, result_layout;
  if (c.op != MPI_NO_OP) {
    int rc = DescribeLayout(c.origin_count, c.origin_type, &origin_layout);
    if (rc == MPI_SUCCESS)
      rc = CheckBuffer(c.origin, c.origin_type, origin_layout);
    if (rc != MPI_SUCCESS) return Verdict::Error(rc);
  }
  if (fetching) {
    int rc = DescribeLayout(c.result_count, c.result_type, &result_layout);
    if (rc == MPI_SUCCESS)
      rc = CheckBuffer(c.result, c.result_type, result_layout);
    if (rc != MPI_SUCCESS) return Verdict::Error(rc);
  }
  if (c.op == MPI_NO_OP && !fetching) {
    return Verdict::Error(MPI_ERR_OP);  // MPI_Accumulate does not take it
  }
  if (const Verdict v = FlattenTarget(c, &u->flat); !v.ok()) return v;
  const FlatType& flat = u->flat;
  if (flat.elements != 0) {
    if (const int rc = FindElementOp(flat.element, c.op, &u->e)) {
      return Verdict::Error(rc);
    }
  }
  auto mismatched = [&](int count, MPI_Datatype type) {
    return IsBuiltinType(type) && flat.elements != 0 &&
           (type != flat.element || count != flat.elements);
  };
  if ((c.op != MPI_NO_OP && mismatched(c.origin_count, c.origin_type)) ||
      (fetching && mismatched(c.result_count, c.result_type))) {
    return Verdict::Error(MPI_ERR_TYPE);
  }
  return Verdict::Served();
}

// The origin's elements packed and the place the old values go, for a
// checked call with elements: the user's buffers where they already hold
// them packed, else copies.
struct UpdateBuffers {
  std::vector<std::byte> origin_storage, result_storage;
  const std::byte* origin = nullptr;
  std::byte* result = nullptr;
};

Verdict PrepareBuffers(const AccumulateCall& c, const CheckedUpdate& u,
                       UpdateBuffers* b) {
  const FlatType& flat = u.flat;
  if (c.op != MPI_NO_OP) {
    if (const Verdict v =
            PackElements(c.origin, c.origin_count, c.origin_type, flat.element,
                         flat.elements, b->origin_storage, &b->origin);
        !v.ok()) {
      return v;
    }
  }
  if (!c.fetching) return Verdict::Served();
  b->result = static_cast<std::byte*>(c.result);
  if (IsBuiltinType(c.result_type)) return Verdict::Served();  // checked
  FlatType result_flat;
  if (Flatten(c.result_type, c.result_count, &result_flat).flattened() &&
      result_flat.element == flat.element &&
      result_flat.elements == flat.elements &&
      (b->result = PackedInPlace(c.result, result_flat, u.e->size))) {
    return Verdict::Served();  // fetched values go straight to the user
  }
  b->result_storage.resize(flat.elements * u.e->size);
  b->result = b->result_storage.data();
  return Verdict::Served();
}

// A checked call with elements applied along `route`, its old values
// unpacked into a derived result type.
Verdict ApplyChecked(ManagedWindow& w, const AccumulateCall& c,
                     const CheckedUpdate& u, const UpdateBuffers& b,
                     const Route& route) {
  int rc = ApplyUpdate(w, route, c.target, c.disp, u.flat.element, c.op, *u.e,
                       u.flat.runs, static_cast<size_t>(u.flat.elements),
                       b.origin, c.fetching ? b.result : nullptr);
  if (rc == MPI_SUCCESS && !b.result_storage.empty()) {
    rc = UnpackBytes(b.result_storage.data(),
                     static_cast<MPI_Aint>(b.result_storage.size()), c.result,
                     c.result_count, c.result_type);
  }
  return Verdict::Error(rc);
}

}  // namespace

Verdict AccumulateFullPath(ManagedWindow& w, const AccumulateCall& c) {
  CheckedUpdate u;
  if (const Verdict v = CheckUpdate(c, &u); !v.ok()) return v;
  const Admission a =
      Admit(w, Access::kUpdate, c.form, c.target, c.disp, u.target_layout);
  if (a.ends) return *a.ends;
  if (u.flat.elements == 0) return Verdict::Served();
  UpdateBuffers b;
  if (const Verdict v = PrepareBuffers(c, u, &b); !v.ok()) return v;
  return ApplyChecked(w, c, u, b, a.route);
}

Verdict FetchAndOpFullPath(ManagedWindow& w, const void* origin, void* result,
                           MPI_Datatype type, int target, MPI_Aint disp,
                           MPI_Op op) {
  Layout layout;
  int rc = DescribeLayout(1, type, &layout);
  if (rc == MPI_SUCCESS && op != MPI_NO_OP) {
    rc = CheckBuffer(origin, type, layout);
  }
  if (rc == MPI_SUCCESS) rc = CheckBuffer(result, type, layout);
  if (rc != MPI_SUCCESS) return Verdict::Error(rc);
  if (!IsBuiltinType(type)) {  // pair types: user buffers are not packed
    return AccumulateFullPath(
        w, {true, origin, 1, type, result, 1, type, target, disp, 1, type, op});
  }
  const ElementOp* e = nullptr;
  if ((rc = FindElementOp(type, op, &e))) return Verdict::Error(rc);
  const Admission a =
      Admit(w, Access::kUpdate, Form::kPlain, target, disp, layout);
  if (a.ends) return *a.ends;
  static constexpr ElementRun kOneElement{0, 1};
  return Verdict::Error(ApplyUpdate(
      w, a.route, target, disp, type, op, *e, {&kOneElement, 1}, 1,
      static_cast<const std::byte*>(origin), static_cast<std::byte*>(result)));
}

Verdict CompareAndSwapFullPath(ManagedWindow& w, const void* origin,
                               const void* compare, void* result,
                               MPI_Datatype type, int target, MPI_Aint disp) {
  const CompareSwapOp* cas = nullptr;
  Layout layout;
  int rc = DescribeLayout(1, type, &layout);
  for (const void* buffer :
       {origin, compare, static_cast<const void*>(result)}) {
    if (rc == MPI_SUCCESS) rc = CheckBuffer(buffer, type, layout);
  }
  if (rc == MPI_SUCCESS) rc = FindCompareSwap(type, &cas);
  if (rc != MPI_SUCCESS) return Verdict::Error(rc);
  const Admission a =
      Admit(w, Access::kUpdate, Form::kPlain, target, disp, layout);
  if (a.ends) return *a.ends;
  const Target& t = w.target(target);
  const auto* o = static_cast<const std::byte*>(origin);
  const auto* cmp = static_cast<const std::byte*>(compare);
  auto* res = static_cast<std::byte*>(result);
  const MPI_Aint offset = disp * t.disp_unit;
  const bool exclusive = a.route.exclusive;
  switch (a.route.path) {
    case Path::kAgent:
      return Verdict::Error(
          AgentCompareSwap(w, target, disp, type, cas->size, o, cmp, res));
    case Path::kCrossMemory:
      return Verdict::Error(
          CrossMemoryCompareSwap(*cas, exclusive, t, offset, o, cmp, res));
    default:
      ApplyCompareSwap(*cas, exclusive, t, offset, o, cmp, res,
                       w.unstriped_slot());
      return Verdict::Served();
  }
}

Verdict MoveAsUpdates(ManagedWindow& w, const AccumulateCall& c,
                      const Route& route) {
  CheckedUpdate u;
  UpdateBuffers b;
  if (const Verdict v = CheckUpdate(c, &u); !v.ok()) {
    return Verdict::PassThrough(Fallback::kDatatype);
  }
  if (u.flat.elements == 0) return Verdict::Served();
  if (const Verdict v = PrepareBuffers(c, u, &b); !v.ok()) {
    return Verdict::PassThrough(Fallback::kDatatype);
  }
  return ApplyChecked(w, c, u, b, route);
}

}  // namespace rmashim
