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

// The one place that chooses how an admitted update of window rank `target`
// reaches its memory: `agent()` for a remote target, whose agent applies it
// (agent.h); `cross(exclusive)` for MPI_Win_create memory of another process
// on this node (cross_memory.h); `in_place(exclusive)` for memory this
// process maps (ApplyRun, ApplyCompareSwap: CPU atomics, or plain stores
// where it must exclude the others). `exclusive`: this process holds an
// exclusive lock on the target, so no stripe is taken.
template <typename Agent, typename Cross, typename InPlace>
int ApplyByReach(ManagedWindow& w, int target, Agent&& agent, Cross&& cross,
                 InPlace&& in_place) {
  const Target& t = w.target(target);
  if (!t.node_local()) return agent();
  const bool exclusive = HoldsExclusive(w, target);
  return t.pid != 0 ? cross(exclusive) : in_place(exclusive);
}

// `runs` of `elements` elements of `element` combined with `op` (`e`), from
// displacement `disp` of admitted window rank `target`; `origin` packed
// (ignored for MPI_NO_OP), the old values packed into `result` when it is
// not null.
int ApplyUpdate(ManagedWindow& w, int target, MPI_Aint disp,
                MPI_Datatype element, MPI_Op op, const ElementOp& e,
                std::span<const ElementRun> runs, size_t elements,
                const std::byte* origin, std::byte* result) {
  if (op == MPI_NO_OP) origin = nullptr;
  const Target& t = w.target(target);
  const MPI_Aint base = disp * t.disp_unit;
  return ApplyByReach(
      w, target,
      [&] {
        return AgentUpdate(w, target, disp, element, op, runs, elements, e.size,
                           origin, result);
      },
      [&](bool exclusive) {
        return CrossMemoryApply(e, origin != nullptr, exclusive, t, base, runs,
                                origin, result);
      },
      [&](bool exclusive) {
        MPI_Aint done = 0;
        for (const ElementRun& run : runs) {
          const MPI_Aint offset = base + run.offset;
          // MPI_NO_OP reads no origin; hand the target itself in its place.
          const std::byte* src =
              origin ? origin + done * e.size : t.base + offset;
          ApplyRun(e, exclusive, t, offset, src,
                   result ? result + done * e.size : nullptr, run.count,
                   w.unstriped_slot());
          done += run.count;
        }
        return MPI_SUCCESS;
      });
}

}  // namespace

Verdict AccumulateDirect(ManagedWindow& w, const AccumulateCall& c) {
  const bool fetching = c.fetching;
  const bool same_origin =
      c.op == MPI_NO_OP
          ? fetching
          : c.origin_type == c.target_type && c.origin_count == c.target_count;
  const bool same_result =
      !fetching || (c.result != nullptr && c.result_type == c.target_type &&
                    c.result_count == c.target_count);
  // The lane says yes only where Admit would.
  if (same_origin && same_result && FormAllowedInEpoch(w, c.form) &&
      TryFastRun(w, c.target_type, c.target_count, c.op, c.target, c.disp,
                 c.origin, fetching ? c.result : nullptr)) {
    return Verdict::Served();
  }
  Layout target_layout, origin_layout, result_layout;
  if (const int rc =
          DescribeLayout(c.target_count, c.target_type, &target_layout)) {
    return Verdict::Error(rc);
  }
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
  FlatType flat;
  if (IsBuiltinType(c.target_type)) {
    flat.element = c.target_type;
    flat.elements = c.target_count;
    if (c.target_count > 0) flat.runs.push_back({0, c.target_count});
  } else if (const FlattenResult r =
                 Flatten(c.target_type, c.target_count, &flat);
             !r.flattened()) {
    return NotFlattened(r);
  }
  // The op must be defined for the type (MPICH would abort at the target),
  // and predefined origin/result types must match it.
  const ElementOp* e = nullptr;
  if (flat.elements != 0) {
    if (const int rc = FindElementOp(flat.element, c.op, &e)) {
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
  if (const auto ends =
          Admit(w, Access::kUpdate, c.form, c.target, c.disp, target_layout)) {
    return *ends;
  }
  if (flat.elements == 0) return Verdict::Served();

  std::vector<std::byte> origin_storage;
  const std::byte* origin = nullptr;
  if (c.op != MPI_NO_OP) {
    if (const Verdict v =
            PackElements(c.origin, c.origin_count, c.origin_type, flat.element,
                         flat.elements, origin_storage, &origin);
        !v.ok()) {
      return v;
    }
  }
  std::vector<std::byte> result_storage;
  std::byte* result = static_cast<std::byte*>(c.result);
  FlatType result_flat;
  if (fetching && !IsBuiltinType(c.result_type) &&
      Flatten(c.result_type, c.result_count, &result_flat).flattened() &&
      result_flat.element == flat.element &&
      result_flat.elements == flat.elements &&
      (result = PackedInPlace(c.result, result_flat, e->size)) != nullptr) {
    // Fetched values go straight to the user's buffer.
  } else if (fetching && !IsBuiltinType(c.result_type)) {
    result_storage.resize(flat.elements * e->size);
    result = result_storage.data();
  } else if (fetching && (c.result_type != flat.element ||
                          c.result_count != flat.elements)) {
    return Verdict::Error(MPI_ERR_TYPE);
  }

  int rc = ApplyUpdate(w, c.target, c.disp, flat.element, c.op, *e, flat.runs,
                       static_cast<size_t>(flat.elements), origin,
                       fetching ? result : nullptr);
  if (rc == MPI_SUCCESS && fetching && !result_storage.empty()) {
    rc = UnpackBytes(result_storage.data(),
                     static_cast<MPI_Aint>(result_storage.size()), c.result,
                     c.result_count, c.result_type);
  }
  return Verdict::Error(rc);
}

Verdict FetchAndOpDirect(ManagedWindow& w, const void* origin, void* result,
                         MPI_Datatype type, int target, MPI_Aint disp,
                         MPI_Op op) {
  if (result != nullptr &&
      TryFastRun(w, type, 1, op, target, disp, origin, result)) {
    return Verdict::Served();
  }
  Layout layout;
  int rc = DescribeLayout(1, type, &layout);
  if (rc == MPI_SUCCESS && op != MPI_NO_OP) {
    rc = CheckBuffer(origin, type, layout);
  }
  if (rc == MPI_SUCCESS) rc = CheckBuffer(result, type, layout);
  if (rc != MPI_SUCCESS) return Verdict::Error(rc);
  if (!IsBuiltinType(type)) {  // pair types: user buffers are not packed
    return AccumulateDirect(
        w, {true, origin, 1, type, result, 1, type, target, disp, 1, type, op});
  }
  const ElementOp* e = nullptr;
  if ((rc = FindElementOp(type, op, &e))) return Verdict::Error(rc);
  if (const auto ends =
          Admit(w, Access::kUpdate, Form::kPlain, target, disp, layout))
    return *ends;
  static constexpr ElementRun kOneElement{0, 1};
  return Verdict::Error(ApplyUpdate(
      w, target, disp, type, op, *e, {&kOneElement, 1}, 1,
      static_cast<const std::byte*>(origin), static_cast<std::byte*>(result)));
}

Verdict CompareAndSwapDirect(ManagedWindow& w, const void* origin,
                             const void* compare, void* result,
                             MPI_Datatype type, int target, MPI_Aint disp) {
  if (TryFastCompareSwap(w, type, target, disp, origin, compare, result)) {
    return Verdict::Served();
  }
  const CompareSwapOp* cas = nullptr;
  Layout layout;
  int rc = DescribeLayout(1, type, &layout);
  for (const void* buffer :
       {origin, compare, static_cast<const void*>(result)}) {
    if (rc == MPI_SUCCESS) rc = CheckBuffer(buffer, type, layout);
  }
  if (rc == MPI_SUCCESS) rc = FindCompareSwap(type, &cas);
  if (rc != MPI_SUCCESS) return Verdict::Error(rc);
  if (const auto ends =
          Admit(w, Access::kUpdate, Form::kPlain, target, disp, layout))
    return *ends;
  const Target& t = w.target(target);
  const auto* o = static_cast<const std::byte*>(origin);
  const auto* cmp = static_cast<const std::byte*>(compare);
  auto* res = static_cast<std::byte*>(result);
  const MPI_Aint offset = disp * t.disp_unit;
  return Verdict::Error(ApplyByReach(
      w, target,
      [&] {
        return AgentCompareSwap(w, target, disp, type, cas->size, o, cmp, res);
      },
      [&](bool exclusive) {
        return CrossMemoryCompareSwap(*cas, exclusive, t, offset, o, cmp, res);
      },
      [&](bool exclusive) {
        ApplyCompareSwap(*cas, exclusive, t, offset, o, cmp, res,
                         w.unstriped_slot());
        return MPI_SUCCESS;
      }));
}

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
